//===- KilnSignalOps.td - Signal-processing ops --------------*- tablegen -*-===//
//
// This file declares the kiln ops of signal processing: dft (ONNX DFT) and
// stft (ONNX STFT). The CPU target prints a kernel of dft
// (targets/cpu/CppSignalKernels.cpp); otherwise they run as reference steps
// of a compiled graph. See docs/op-semantics.md for the contract.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SIGNAL_OPS_TD
#define KILN_SIGNAL_OPS_TD

include "ir/KilnDialect.td"

def Kiln_DftOp : Kiln_Op<"dft", "dft"> {
  let summary = "discrete Fourier transform along one axis";
  let description = [{
    ONNX DFT: `x` is `[..., 1]` (real) or `[..., 2]` (real and imaginary
    parts) and `axis` one of its other dims (non-negative). The signal
    along `axis` is cut or zero-padded to `length` and transformed; the
    result is `[..., 2]` with `length` entries along `axis` (`length / 2 +
    1` with `onesided` forward). `inverse` computes the inverse transform
    (divided by `length`); `inverse` with `onesided` reads a one-sided
    spectrum and gives the real signal, `[..., 1]` with `length` entries
    along `axis` (NumPy's irfft).

    Example:

    ```mlir
    %0 = kiln.dft %x {axis = 1 : i64, inverse = 0 : i64, length = 10 : i64, onesided = 0 : i64} : (tensor<1x10x1xf32>) -> tensor<1x10x2xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, I64Attr:$axis, I64Attr:$length,
                   I64Attr:$inverse, I64Attr:$onesided);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_StftOp : Kiln_Op<"stft", "stft"> {
  let summary = "short-time Fourier transform of framed, windowed signals";
  let description = [{
    ONNX STFT: `signal` is `B x L x 1` (real) or `B x L x 2` (complex),
    `frame_step` (i64, one positive value) the hop between frames and
    `window` (the signal's dtype) has the frame length `F` (the tracer
    passes ones for a rectangular window). Frame `t` is
    `signal[:, t * frame_step : t * frame_step + F]` times the window; the
    result `B x T x K x 2`, `T = 1 + (L - F) / frame_step`, holds each
    frame's DFT (`K = F / 2 + 1` bins with `onesided`, else `F`).

    Example:

    ```mlir
    %0 = kiln.stft %signal, %step, %window {onesided = 1 : i64} : (tensor<1x128x1xf32>, tensor<i64>, tensor<16xf32>) -> tensor<1x15x9x2xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$signal, Kiln_I64Tensor:$frame_step,
                   Kiln_FloatTensor:$window, I64Attr:$onesided);
  let results = (outs Kiln_FloatTensor:$output);
}

#endif // KILN_SIGNAL_OPS_TD
