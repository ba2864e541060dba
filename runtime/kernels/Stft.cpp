//===- Stft.cpp - The reference STFT kernel -------------------------------===//
//
// This file implements the CPU reference kernel of kiln.stft (ONNX STFT):
// the signal is cut into frames of the window's length, frame_step apart,
// each frame is multiplied by the window and transformed by a direct DFT
// (in f64, twiddles indexed modulo the frame length). The frame step is a
// run-time operand; a step below 1 or a window longer than the signal is an
// error.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/SizeLimits.h"

#include <cmath>
#include <vector>

namespace kiln {

namespace {

Status stftKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 3, "stft: expected 3 operands, got ",
             ctx.numInputs());
  const Tensor &sigIn = ctx.input(0), &stepIn = ctx.input(1),
               &winIn = ctx.input(2);
  KILN_CHECK(sigIn.rank() == 3 && (sigIn.dim(2) == 1 || sigIn.dim(2) == 2) &&
                 winIn.rank() == 1,
             "stft: signal ", sigIn.typeString(), " and window ",
             winIn.typeString(), " do not fit ([B, L, 1 or 2], [F])");
  KILN_CHECK(stepIn.numel() == 1, "stft: frame_step must hold one value, got ",
             stepIn.typeString());
  const int64_t step = stepIn.to(DType::I64).data<int64_t>()[0];
  const int64_t batch = sigIn.dim(0), length = sigIn.dim(1),
                parts = sigIn.dim(2), frame = winIn.dim(0);
  KILN_CHECK(step >= 1, "stft: frame_step must be positive, got ", step);
  KILN_CHECK(frame >= 1 && frame <= length, "stft: the frame length ", frame,
             " must be in [1, ", length, "] (the signal's length)");
  const bool onesided = ctx.attrs.getInt("onesided", 1) != 0;
  const int64_t frames = 1 + (length - frame) / step;
  const int64_t bins = onesided ? frame / 2 + 1 : frame;
  KILN_CHECK(saturatingMul(saturatingMul(batch, frames), bins * 2) <=
                 kMaxTensorElements,
             "stft: the result [", batch, ", ", frames, ", ", bins,
             ", 2] is over the size limit (frame_step ", step, ")");
  Tensor sig = sigIn.to(DType::F64), win = winIn.to(DType::F64);
  Tensor out = Tensor::empty(DType::F64, {batch, frames, bins, 2});
  const double *sp = sig.data<double>(), *wp = win.data<double>();
  double *op = out.data<double>();
  std::vector<double> cosT(frame), sinT(frame), re(frame), im(frame);
  const double twoPi = 2.0 * std::acos(-1.0);
  for (int64_t n = 0; n < frame; ++n) {
    cosT[n] = std::cos(twoPi * n / frame);
    sinT[n] = std::sin(twoPi * n / frame);
  }
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < frames; ++t) {
      const double *s = sp + (b * length + t * step) * parts;
      for (int64_t n = 0; n < frame; ++n) {
        re[n] = s[n * parts] * wp[n];
        im[n] = parts == 2 ? s[n * parts + 1] * wp[n] : 0.0;
      }
      double *o = op + (b * frames + t) * bins * 2;
      for (int64_t k = 0; k < bins; ++k) {
        double accRe = 0.0, accIm = 0.0;
        for (int64_t n = 0; n < frame; ++n) {
          int64_t idx = static_cast<int64_t>(static_cast<unsigned __int128>(k) *
                                             n % frame);
          // (re + i im) * (cos - i sin)
          accRe += re[n] * cosT[idx] + im[n] * sinT[idx];
          accIm += im[n] * cosT[idx] - re[n] * sinT[idx];
        }
        o[k * 2] = accRe;
        o[k * 2 + 1] = accIm;
      }
    }
  ctx.outputs.resize(1);
  ctx.outputs[0] = out.to(sigIn.dtype());
  return Status::ok();
}

} // namespace

/// Registers kiln.stft for the floating-point dtypes.
void registerStftKernels(Dispatcher &d) {
  d.add("stft", Device::CPU, kFloatTypes, stftKernel);
}

} // namespace kiln
