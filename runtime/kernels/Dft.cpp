//===- Dft.cpp - The reference DFT kernel ---------------------------------===//
//
// This file implements the CPU reference kernel of kiln.dft (ONNX DFT): the
// discrete Fourier transform of each 1-D signal along `axis` of a real
// ([..., 1]) or complex ([..., 2]) operand, cut or zero-padded to `length`,
// forward or inverse (divided by `length`), two-sided or one-sided; inverse
// with onesided reads a one-sided spectrum, extends it by Hermitian
// symmetry and returns the real signal (NumPy's irfft). It evaluates the
// sums directly (O(length^2) per signal) in double; the result has the
// operand's dtype.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/SizeLimits.h"

#include <cmath>
#include <complex>
#include <vector>

namespace kiln {

namespace {

using Complex = std::complex<double>;

/// Transforms one signal of `length` complex values (already cut or padded).
std::vector<Complex> transform(const std::vector<Complex> &in, bool inverse) {
  const int64_t n = static_cast<int64_t>(in.size());
  std::vector<Complex> out(in.size());
  const double sign = inverse ? 1.0 : -1.0;
  const double pi = 3.14159265358979323846;
  for (int64_t k = 0; k < n; ++k) {
    Complex sum = 0;
    for (int64_t t = 0; t < n; ++t) {
      // (k * t) mod n keeps the angle small and exact.
      int64_t turn = static_cast<int64_t>(
          static_cast<unsigned __int128>(k) * static_cast<uint64_t>(t) %
          static_cast<uint64_t>(n));
      double angle = sign * 2.0 * pi * static_cast<double>(turn) / n;
      sum += in[t] * Complex(std::cos(angle), std::sin(angle));
    }
    out[k] = inverse ? sum / static_cast<double>(n) : sum;
  }
  return out;
}

Status dftKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 1, "dft: expected 1 operand, got ",
             ctx.numInputs());
  const Tensor &xIn = ctx.input(0);
  KILN_CHECK(xIn.device() == Device::CPU,
             "dft: the reference kernels run on the cpu");
  const int64_t rank = xIn.rank();
  const int64_t axis = ctx.attrs.getInt("axis", 1);
  const int64_t length = ctx.attrs.getInt("length", 1);
  const bool inverse = ctx.attrs.getInt("inverse", 0) != 0;
  const bool onesided = ctx.attrs.getInt("onesided", 0) != 0;
  KILN_CHECK(rank >= 2 && (xIn.dim(rank - 1) == 1 || xIn.dim(rank - 1) == 2),
             "dft: the operand must be [..., 1] or [..., 2], got ",
             xIn.typeString());
  KILN_CHECK(axis >= 0 && axis < rank - 1, "dft: axis ", axis,
             " is not a signal dim of ", xIn.typeString());
  KILN_CHECK(length >= 1 && length <= kMaxTensorElements,
             "dft: the length must be in [1, 2^40], got ", length);
  const bool irfft = inverse && onesided;
  const int64_t parts = xIn.dim(rank - 1);
  const int64_t inLen = xIn.dim(axis);
  const int64_t outLen = (onesided && !inverse) ? length / 2 + 1 : length;
  Shape outShape = xIn.shape();
  outShape[axis] = outLen;
  outShape[rank - 1] = irfft ? 1 : 2;
  // Signals are indexed by (outer, inner) around the axis.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= xIn.dim(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d)
    inner *= xIn.dim(d);
  Tensor x = xIn.to(DType::F64);
  Tensor out = Tensor::empty(DType::F64, outShape);
  const double *xp = x.data<double>();
  double *op = out.data<double>();
  const int64_t outParts = outShape[rank - 1];
  std::vector<Complex> signal(static_cast<size_t>(length));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t t) {
        const double *e = xp + ((o * inLen + t) * inner + i) * parts;
        return Complex(e[0], parts == 2 ? e[1] : 0.0);
      };
      for (int64_t t = 0; t < length; ++t) {
        if (irfft) {
          // Hermitian extension of the one-sided spectrum.
          int64_t k = t <= length / 2 ? t : length - t;
          Complex v = k < inLen ? at(k) : Complex(0);
          signal[t] = t <= length / 2 ? v : std::conj(v);
        } else {
          signal[t] = t < inLen ? at(t) : Complex(0);
        }
      }
      std::vector<Complex> spectrum = transform(signal, inverse);
      for (int64_t k = 0; k < outLen; ++k) {
        double *e = op + ((o * outLen + k) * inner + i) * outParts;
        e[0] = spectrum[k].real();
        if (outParts == 2)
          e[1] = spectrum[k].imag();
      }
    }
  }
  ctx.outputs.resize(1);
  ctx.outputs[0] = out.to(xIn.dtype());
  return Status::ok();
}

} // namespace

/// Registers kiln.dft for the floating-point dtypes.
void registerDftKernels(Dispatcher &d) {
  d.add("dft", Device::CPU, kFloatTypes, dftKernel);
}

} // namespace kiln
