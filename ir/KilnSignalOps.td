//===- KilnSignalOps.td - Signal-processing ops --------------*- tablegen -*-===//
//
// This file declares the kiln ops of signal processing: dft (ONNX DFT). No
// code generator compiles it: it runs as a reference step of a compiled
// graph. See docs/op-semantics.md for the contract.
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

#endif // KILN_SIGNAL_OPS_TD
