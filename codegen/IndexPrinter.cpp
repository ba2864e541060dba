//===- IndexPrinter.cpp - Index arithmetic of single-op kernels -----------===//
//
// This file implements the generated index arithmetic and per-element steps
// that the C++ and CUDA printers share for the kernels of gather_elements,
// gather_nd, scatter_elements, scatter_nd, hardmax and pad (IndexPrinter.h). The
// text uses `long long` so that it compiles unchanged under NVRTC, which
// has no <cstdint>.
//
//===----------------------------------------------------------------------===//

#include "codegen/IndexPrinter.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace kiln {
namespace codegen {
namespace {

/// `v` as a `long long` literal ("12LL").
std::string ll(int64_t v) { return std::to_string(v) + "LL"; }

} // namespace

std::string printCheckedIndex(const std::string &var, int64_t size,
                              const std::string &onBad,
                              const std::string &indent) {
  std::string n = ll(size);
  return indent + "if (" + var + " < 0)\n" + indent + "  " + var + " += " + n +
         ";\n" + indent + "if (" + var + " < 0 || " + var + " >= " + n + ")\n" +
         indent + "  " + onBad + "\n";
}

std::string printElementOffset(llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<int64_t> xShape, int64_t axis,
                               const std::string &flat,
                               const std::string &indexVar) {
  std::string s = "    long long kiln_r = " + flat + ", kiln_x = 0;\n";
  int64_t xStride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    std::string coord =
        d == axis ? indexVar : "(kiln_r % " + ll(shape[d]) + ")";
    s += "    kiln_x += " + coord + " * " + ll(xStride) + ";\n";
    if (d > 0)
      s += "    kiln_r /= " + ll(shape[d]) + ";\n";
    xStride *= xShape[d];
  }
  return s;
}

std::string printTupleOffset(const std::string &tuple,
                             llvm::ArrayRef<int64_t> dims,
                             llvm::ArrayRef<int64_t> strides,
                             const std::string &onBad,
                             const std::string &indent) {
  std::string s = indent + "long long kiln_off = 0;\n";
  int64_t m = static_cast<int64_t>(dims.size());
  for (int64_t j = 0; j < m; ++j) {
    s += indent + "{\n" + indent + "  long long kiln_idx = (long long)in1[(" +
         tuple + ") * " + ll(m) + " + " + ll(j) + "];\n";
    s += printCheckedIndex("kiln_idx", dims[j], onBad, indent + "  ");
    s += indent + "  kiln_off += kiln_idx * " + ll(strides[j]) + ";\n" +
         indent + "}\n";
  }
  return s;
}

std::string printScatterCombine(llvm::StringRef reduction, const std::string &a,
                                const std::string &b) {
  if (reduction == "add")
    return a + " + " + b;
  if (reduction == "mul")
    return a + " * " + b;
  if (reduction == "max")
    return "(" + a + " < " + b + " ? " + b + " : " + a + ")";
  if (reduction == "min")
    return "(" + b + " < " + a + " ? " + b + " : " + a + ")";
  return b;
}

bool isScatterReduction(llvm::StringRef reduction) {
  return llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction);
}

std::string printHardmaxStep(const std::string &indent) {
  return indent +
         "if (v > kiln_best || (v != v && kiln_best == kiln_best)) {\n" +
         indent + "  kiln_best = v;\n" + indent + "  kiln_arg = r;\n" + indent +
         "}\n";
}

/// The statement (at six spaces) mapping the coordinate `j` of an axis
/// cropped to `c` elements into it for pad `mode`.
static std::string printPadMapping(llvm::StringRef mode, int64_t c) {
  std::string outside = "j < 0 || j >= " + ll(c);
  if (mode == "constant")
    return "      kiln_inside = kiln_inside && !(" + outside + ");\n";
  if (mode == "edge")
    return "      j = j < 0 ? 0 : j >= " + ll(c) + " ? " + ll(c - 1) +
           " : j;\n";
  if (mode == "wrap")
    return "      j = ((j % " + ll(c) + ") + " + ll(c) + ") % " + ll(c) +
           ";\n";
  if (c == 1)
    return "      j = 0;\n";
  // reflect: a period of 2 (c - 1), the second half mirrored.
  std::string period = ll(2 * (c - 1));
  return "      if (" + outside + ") {\n        const long long m = ((j % " +
         period + ") + " + period + ") % " + period + ";\n        j = m < " +
         ll(c) + " ? m : " + period + " - m;\n      }\n";
}

std::optional<std::string> printPadRead(llvm::ArrayRef<int64_t> xShape,
                                        llvm::ArrayRef<int64_t> yShape,
                                        llvm::ArrayRef<int64_t> pads,
                                        llvm::StringRef mode,
                                        const std::string &flat) {
  int64_t r = static_cast<int64_t>(xShape.size());
  if (static_cast<int64_t>(yShape.size()) != r ||
      static_cast<int64_t>(pads.size()) != 2 * r)
    return std::nullopt;
  std::string s = "    long long kiln_r = " + flat + ", kiln_x = 0;\n";
  if (mode == "constant")
    s += "    bool kiln_inside = true;\n";
  int64_t stride = 1;
  for (int64_t d = r - 1; d >= 0; --d) {
    // The start lo and size c of x cropped by negative pads, the begin pad.
    int64_t begin = pads[d], end = pads[r + d];
    int64_t lo = std::max<int64_t>(-begin, 0);
    int64_t c = xShape[d] - lo - std::max<int64_t>(-end, 0);
    int64_t pb = std::max<int64_t>(begin, 0), pe = std::max<int64_t>(end, 0);
    if (c < 0 || c + pb + pe != yShape[d] ||
        (mode != "constant" && c == 0 && (pb || pe)))
      return std::nullopt;
    int64_t out = yShape[d];
    s += "    {\n      long long j = kiln_r % " + ll(out) + " - " + ll(pb) +
         "; // axis " + std::to_string(d) + "\n";
    s += "      kiln_r /= " + ll(out) + ";\n";
    if (pb != 0 || out != c)
      s += printPadMapping(mode, c);
    s += "      kiln_x += (j + " + ll(lo) + ") * " + ll(stride) + ";\n    }\n";
    stride *= xShape[d];
  }
  return s;
}

} // namespace codegen
} // namespace kiln
