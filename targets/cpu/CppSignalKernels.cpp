//===- CppSignalKernels.cpp - The C++ kernel of kiln.dft ------------------===//
//
// This file implements the CPU target's kernel of a top-level kiln.dft
// (ONNX DFT), so that it runs as generated code instead of the runtime's
// reference kernel (issue 20): forward or inverse, two-sided or one-sided
// (inverse with onesided: the real signal of a one-sided spectrum, extended
// by Hermitian symmetry), of a real ([..., 1]) or complex ([..., 2]) f32 or
// f64 operand, along any signal axis. As the reference
// (runtime/kernels/Dft.cpp) it evaluates the sums directly, O(length^2) per
// signal, in double complex arithmetic (GCC's __complex__ double, which
// std::complex<double> wraps, so products and the division by the length
// round the same way), each twiddle factor the cosine and sine of the same
// angle ((k * t) mod length turns), so the results are bit-identical. The
// twiddle factors are computed once per call, a table of `length` entries.
//
// Sizes are literals; signals longer than kMaxLength stay reference steps
// (the kernel keeps one signal and the table on the stack).
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "ir/KilnOps.h"
#include "targets/cpu/CppKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <string>

using namespace mlir;

namespace kiln {
namespace {

/// The longest signal the kernel takes (3 * 8 * 8192 bytes of stack).
constexpr int64_t kMaxLength = 8192;

/// `v` as a literal.
std::string lit(int64_t v) { return std::to_string(v); }

/// Statements (at six spaces) that fill `kiln_re`/`kiln_im` with signal
/// number (o, i) cut or zero-padded to the length, or for an inverse
/// one-sided transform, the one-sided spectrum extended by Hermitian
/// symmetry, as the reference's loop.
std::string printSignal(int64_t length, int64_t inLen, int64_t inner,
                        int64_t parts, bool irfft) {
  std::string s = "    for (int64_t t = 0; t < " + lit(length) + "; ++t) {\n";
  std::string at = "in0[((o * " + lit(inLen) + " + kiln_k) * " + lit(inner) +
                   " + i) * " + lit(parts) + "]";
  std::string imAt = parts == 2
                         ? "(double)in0[((o * " + lit(inLen) + " + kiln_k) * " +
                               lit(inner) + " + i) * 2 + 1]"
                         : "0.0";
  if (irfft)
    s += "      const int64_t kiln_k = t <= " + lit(length / 2) +
         " ? t : " + lit(length) + " - t;\n";
  else
    s += "      const int64_t kiln_k = t;\n";
  s += "      double re = 0.0, im = 0.0;\n";
  s += "      if (kiln_k < " + lit(inLen) + ") {\n";
  s += "        re = (double)" + at + ";\n";
  s += "        im = " + imAt + ";\n      }\n";
  s += "      kiln_re[t] = re;\n";
  if (irfft) // The conjugate past the middle.
    s += "      kiln_im[t] = t <= " + lit(length / 2) + " ? im : -im;\n";
  else
    s += "      kiln_im[t] = im;\n";
  return s + "    }\n";
}

std::optional<CppKernel> emitDft(DftOp op, StringRef name) {
  RankedTensorType xt = cppStaticFloatType(op.getX()), yt = cppStaticFloatType(op.getResult());
  if (!xt || !yt || xt.getElementType() != yt.getElementType() ||
      xt.getRank() < 2 || xt.getRank() != yt.getRank() ||
      yt.getNumElements() == 0)
    return std::nullopt;
  int64_t rank = xt.getRank(), axis = static_cast<int64_t>(op.getAxis()),
          length = static_cast<int64_t>(op.getLength());
  bool inverse = op.getInverse() != 0, onesided = op.getOnesided() != 0;
  int64_t parts = xt.getDimSize(rank - 1);
  if ((parts != 1 && parts != 2) || axis < 0 || axis >= rank - 1 ||
      length < 1 || length > kMaxLength)
    return std::nullopt; // The reference kernel's errors, or too long.
  bool irfft = inverse && onesided;
  int64_t inLen = xt.getDimSize(axis);
  int64_t outLen = onesided && !inverse ? length / 2 + 1 : length;
  int64_t outParts = irfft ? 1 : 2;
  SmallVector<int64_t> outShape(xt.getShape());
  outShape[axis] = outLen;
  outShape[rank - 1] = outParts;
  if (ArrayRef<int64_t>(outShape) != yt.getShape())
    return std::nullopt;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= xt.getDimSize(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d)
    inner *= xt.getDimSize(d);
  std::string y = yt.getElementType().isF32() ? "float" : "double";
  std::string what =
      std::string(inverse ? "inverse " : "") + "DFT of length " + lit(length) +
      " along axis " + lit(axis) + " of " + lit(outer * inner) +
      (parts == 2 ? " complex" : " real") + " signals" +
      (irfft      ? ", one-sided spectra to real signals"
       : onesided ? ", one-sided"
                  : "") +
      "; direct sums in double complex arithmetic, as the reference";
  std::string sign = inverse ? "1.0" : "-1.0";
  std::string params = cppKernelParam(op.getX(), "in0", true) + ", " +
                       cppKernelParam(op.getResult(), "out0", false);
  std::string body;
  body += "  // The twiddle factors: the angle of (k * t) mod n turns.\n";
  body += "  double kiln_cos[" + lit(length) + "], kiln_sin[" + lit(length) +
          "];\n";
  body += "  for (int64_t turn = 0; turn < " + lit(length) + "; ++turn) {\n";
  body += "    const double angle = " + sign +
          " * 2.0 * 3.14159265358979323846 * (double)turn / (double)" +
          lit(length) + ";\n";
  body += "    kiln_cos[turn] = std::cos(angle);\n";
  body += "    kiln_sin[turn] = std::sin(angle);\n  }\n";
  if (outer * inner > 1 && outer * inner * outLen * length >= 32768)
    body += "  #pragma omp parallel for\n";
  body += "  for (int64_t kiln_s = 0; kiln_s < " + lit(outer * inner) +
          "; ++kiln_s) {\n";
  body += "    const int64_t o = kiln_s / " + lit(inner) + ", i = kiln_s % " +
          lit(inner) + ";\n";
  body += "    double kiln_re[" + lit(length) + "], kiln_im[" + lit(length) +
          "];\n";
  body += printSignal(length, inLen, inner, parts, irfft);
  body += "    for (int64_t k = 0; k < " + lit(outLen) + "; ++k) {\n";
  body += "      __complex__ double sum = 0;\n";
  body += "      for (int64_t t = 0; t < " + lit(length) + "; ++t) {\n";
  body += "        const int64_t turn = k * t % " + lit(length) + ";\n";
  body += "        __complex__ double v, w;\n";
  body +=
      "        __real__ v = kiln_re[t];\n        __imag__ v = kiln_im[t];\n";
  body += "        __real__ w = kiln_cos[turn];\n"
          "        __imag__ w = kiln_sin[turn];\n";
  body += "        sum += v * w;\n      }\n";
  if (inverse)
    body += "      sum /= (double)" + lit(length) + ";\n";
  body += "      " + y + " *e = out0 + ((o * " + lit(outLen) + " + k) * " +
          lit(inner) + " + i) * " + lit(outParts) + ";\n";
  body += "      e[0] = (" + y + ")__real__ sum;\n";
  if (outParts == 2)
    body += "      e[1] = (" + y + ")__imag__ sum;\n";
  body += "    }\n  }\n  return 0;\n";
  return makeCppOpKernel(op, name, params, body, what);
}

} // namespace

std::optional<CppKernel> emitCppSignalKernel(Operation *op, StringRef name) {
  if (auto dft = dyn_cast<DftOp>(op))
    return emitDft(dft, name);
  return std::nullopt;
}

} // namespace kiln
