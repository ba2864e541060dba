//===- IndexPrinter.cpp - Index arithmetic of single-op kernels -----------===//
//
// This file implements the generated index arithmetic and per-element steps
// that the C++ and CUDA printers share for the kernels of gather_elements,
// gather_nd, scatter_elements, scatter_nd and hardmax (IndexPrinter.h). The
// text uses `long long` so that it compiles unchanged under NVRTC, which
// has no <cstdint>.
//
//===----------------------------------------------------------------------===//

#include "codegen/IndexPrinter.h"

#include "llvm/ADT/STLExtras.h"

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

} // namespace codegen
} // namespace kiln
