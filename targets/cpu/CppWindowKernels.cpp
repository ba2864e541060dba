//===- CppWindowKernels.cpp - C++ kernels of pad and pooling --------------===//
//
// This file implements the CPU target's kernels of single top-level ops
// that read a window or a mapped position of their input per output
// element, so that they run as generated code instead of the runtime's
// reference kernels (issue 20):
//
//  - kiln.pad with constant pads (the output's static shape comes from
//    them): constant, reflect, edge and wrap modes, negative pads cropping
//    first, each axis's coordinate mapped as the reference's
//    mapPadCoordinate (runtime/kernels/PadTile.cpp), as the CUDA kernel
//    (targets/cuda/CudaPadKernel.cpp); an attention mask padded to the
//    keys' length is one;
//  - kiln.max_pool and kiln.avg_pool (channels first) that oneDNN does not
//    take (kiln-lower-cpu gives it the f32 ones it can run): other element
//    types (a max of integers, from the type's lowest value), or an average
//    counting the pads where ceil_mode's last window reaches past them. One
//    walk per output element over its window, positions outside the input
//    skipped, in the reference's order (runtime/kernels/Pooling.cpp): a max
//    keeps the first NaN it meets; an average sums in double and divides by
//    the positions inside the input, or with count_include_pad by those
//    inside the explicitly padded input, so the results are bit-identical.
//
// Sizes, pads, strides and dilations are literals; the output shape is the
// op's static result type.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/IndexPrinter.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "targets/cpu/CppKernel.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <string>

using namespace mlir;

namespace kiln {
namespace {

/// `v` as a literal.
std::string lit(int64_t v) { return std::to_string(v); }

/// `a, b, ...` of `values` joined by `sep`.
std::string join(ArrayRef<int64_t> values, const char *sep) {
  std::string s;
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? sep : "") + lit(v);
  return s;
}

std::optional<CppKernel> emitPad(PadOp pad, StringRef name) {
  RankedTensorType xt = cppStaticType(pad.getX()),
                   yt = cppStaticType(pad.getResult()),
                   vt = cppStaticType(pad.getValue());
  std::optional<SmallVector<int64_t>> pads =
      passes::getConstantInts(pad.getPads());
  StringRef mode = pad.getMode();
  if (mode.empty())
    mode = "constant";
  if (!xt || !yt || !vt || !pads || yt.getNumElements() == 0 ||
      vt.getElementType() != xt.getElementType() ||
      !codegen::scalarTypeOf(xt.getElementType()) ||
      !llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
    return std::nullopt;
  // A crop below size 0 or a mode that cannot fill an empty axis is the
  // reference kernel's error.
  std::optional<std::string> read = codegen::printPadRead(
      xt.getShape(), yt.getShape(), *pads, mode, "kiln_i");
  if (!read)
    return std::nullopt;
  int64_t total = yt.getNumElements();
  std::string what = mode.str() + " pad by [" + join(*pads, ", ") +
                     "]: per output element, each axis's coordinate mapped "
                     "by the mode" +
                     (mode == "constant" ? ", the value outside x" : "");
  std::string body = "  (void)in1; // the pads, [" + join(*pads, ", ") + "]\n";
  if (mode != "constant" || vt.getNumElements() == 0)
    body += "  (void)in2;\n";
  if (total >= 32768)
    body += "  #pragma omp parallel for\n";
  body +=
      "  for (int64_t kiln_i = 0; kiln_i < " + lit(total) + "; ++kiln_i) {\n";
  body += *read;
  if (mode == "constant")
    body += "    out0[kiln_i] = kiln_inside ? in0[kiln_x] : " +
            std::string(vt.getNumElements() >= 1 ? "in2[0]" : "0") + ";\n";
  else
    body += "    out0[kiln_i] = in0[kiln_x];\n";
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(pad, name, cppKernelParams(pad), body, what);
}

/// The lowest value of the integer type `st` as a C++ expression (a max
/// pooling's start, the reference's numeric_limits<T>::lowest()).
std::string lowestInteger(codegen::ScalarType st) {
  using codegen::ScalarType;
  switch (st) {
  case ScalarType::I8:
    return "-128";
  case ScalarType::I16:
    return "-32768";
  case ScalarType::I32:
    return "(-2147483647 - 1)";
  case ScalarType::I64:
    return "(-9223372036854775807LL - 1)";
  default: // the unsigned types
    return "0";
  }
}

/// The geometry of a pooling: per spatial dim the input and output sizes,
/// window, stride, dilation and pads.
struct PoolGeometry {
  SmallVector<int64_t> in, out, kernel, strides, dilations, pads;
  int64_t nsp;
};

/// Statements (at four spaces) that set `double kiln_n`, the divisor of an
/// average with count_include_pad: the product over the dims of the
/// window's positions inside the explicitly padded input.
std::string paddedCount(const PoolGeometry &g) {
  std::string s = "    double kiln_n = 1;\n";
  for (int64_t d = 0; d < g.nsp; ++d) {
    std::string ds = lit(d);
    s += "    {\n      int64_t c = 0;\n";
    s += "      for (int64_t k = 0; k < " + lit(g.kernel[d]) + "; ++k) {\n";
    s += "        const int64_t p = o" + ds + " * " + lit(g.strides[d]) +
         " - " + lit(g.pads[d]) + " + k * " + lit(g.dilations[d]) + ";\n";
    s += "        c += p >= -" + lit(g.pads[d]) + " && p < " +
         lit(g.in[d] + g.pads[g.nsp + d]) + ";\n";
    s += "      }\n      kiln_n *= (double)c;\n    }\n";
  }
  return s;
}

std::optional<CppKernel> emitPool(Operation *op, StringRef name) {
  bool average = isa<AvgPoolOp>(op);
  RankedTensorType xt = cppStaticType(op->getOperand(0)),
                   yt = cppStaticType(op->getResult(0));
  auto kernel = op->getAttrOfType<DenseI64ArrayAttr>("kernel_shape");
  auto strides = op->getAttrOfType<DenseI64ArrayAttr>("strides");
  auto dilations = op->getAttrOfType<DenseI64ArrayAttr>("dilations");
  auto pads = op->getAttrOfType<DenseI64ArrayAttr>("pads");
  if (!xt || !yt || !kernel || !strides || !dilations || !pads ||
      op->getNumResults() != 1 || op->hasAttr("layout") ||
      xt.getRank() != yt.getRank() || yt.getNumElements() == 0)
    return std::nullopt;
  PoolGeometry g;
  g.nsp = xt.getRank() - 2;
  if (g.nsp < 1 || (int64_t)kernel.size() != g.nsp ||
      (int64_t)strides.size() != g.nsp || (int64_t)dilations.size() != g.nsp ||
      (int64_t)pads.size() != 2 * g.nsp ||
      xt.getShape().take_front(2) != yt.getShape().take_front(2))
    return std::nullopt;
  g.in.assign(xt.getShape().begin() + 2, xt.getShape().end());
  g.out.assign(yt.getShape().begin() + 2, yt.getShape().end());
  g.kernel.assign(kernel.asArrayRef().begin(), kernel.asArrayRef().end());
  g.strides.assign(strides.asArrayRef().begin(), strides.asArrayRef().end());
  g.dilations.assign(dilations.asArrayRef().begin(),
                     dilations.asArrayRef().end());
  g.pads.assign(pads.asArrayRef().begin(), pads.asArrayRef().end());
  for (int64_t d = 0; d < g.nsp; ++d)
    if (g.kernel[d] < 1 || g.strides[d] < 1 || g.dilations[d] < 1 ||
        g.pads[d] < 0 || g.pads[g.nsp + d] < 0)
      return std::nullopt; // the reference kernel's error
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  // Averages of f32, f64, f16 and bf16; a max of those or of integers.
  if (!st || *st == codegen::ScalarType::Bool || codegen::isFloat8Type(*st) ||
      llvm::is_contained({codegen::ScalarType::I4, codegen::ScalarType::U4,
                          codegen::ScalarType::I2, codegen::ScalarType::U2},
                         *st) ||
      (average && !codegen::isFloatType(*st)))
    return std::nullopt;
  bool isFloat = codegen::isFloatType(*st);
  bool includePad = false;
  if (auto attr = op->getAttrOfType<IntegerAttr>("count_include_pad"))
    includePad = average && attr.getInt() != 0;
  std::string storage = codegen::storageCType(*st);
  std::string compute = codegen::computeCType(*st);
  int64_t inPlane = 1;
  for (int64_t d = 0; d < g.nsp; ++d)
    inPlane *= g.in[d];
  int64_t total = yt.getNumElements();
  std::string what =
      std::string(average ? "avg_pool" : "max_pool") + " over [" +
      join(yt.getShape(), ", ") + "] (window " + join(g.kernel, "x") +
      ", strides " + join(g.strides, "x") + ", dilations " +
      join(g.dilations, "x") + ", pads " + join(g.pads, ",") + ")" +
      (average ? includePad ? ", pads counted" : ", pads not counted"
               : ", the first NaN wins");
  std::string body;
  if (total >= 4096)
    body += "  #pragma omp parallel for\n";
  body +=
      "  for (int64_t kiln_i = 0; kiln_i < " + lit(total) + "; ++kiln_i) {\n";
  body += "    int64_t kiln_r = kiln_i;\n";
  for (int64_t d = g.nsp - 1; d >= 0; --d)
    body += "    const int64_t o" + lit(d) + " = kiln_r % " + lit(g.out[d]) +
            ";\n    kiln_r /= " + lit(g.out[d]) + ";\n";
  body += "    const " + storage + " *kiln_x = in0 + kiln_r * " + lit(inPlane) +
          "; // the (n, c) plane\n";
  if (average) {
    body += "    double kiln_sum = 0;\n";
    body += includePad ? paddedCount(g) : "    double kiln_n = 0;\n";
  } else {
    body += "    " + compute +
            " kiln_m = " + (isFloat ? "-INFINITY" : lowestInteger(*st)) + ";\n";
  }
  // The window, the last dim fastest, as the reference's offsets.
  std::string indent = "    ", offset;
  for (int64_t d = 0; d < g.nsp; ++d) {
    std::string ds = lit(d);
    body += indent + "for (int64_t k" + ds + " = 0; k" + ds + " < " +
            lit(g.kernel[d]) + "; ++k" + ds + ") {\n";
    indent += "  ";
    body += indent + "const int64_t p" + ds + " = o" + ds + " * " +
            lit(g.strides[d]) + " - " + lit(g.pads[d]) + " + k" + ds + " * " +
            lit(g.dilations[d]) + ";\n";
    body += indent + "if (p" + ds + " < 0 || p" + ds + " >= " + lit(g.in[d]) +
            ")\n" + indent + "  continue;\n";
    int64_t stride = 1;
    for (int64_t e = d + 1; e < g.nsp; ++e)
      stride *= g.in[e];
    offset += (offset.empty() ? "p" : " + p") + ds +
              (stride == 1 ? "" : " * " + lit(stride));
  }
  if (average) {
    std::string load = *st == codegen::ScalarType::F64
                           ? "kiln_x[" + offset + "]"
                           : "(double)(float)kiln_x[" + offset + "]";
    body += indent + "kiln_sum += " + load + ";\n";
    if (!includePad)
      body += indent + "kiln_n += 1;\n";
  } else {
    body += indent + "const " + compute + " v = (" + compute + ")kiln_x[" +
            offset + "];\n";
    // Once the max is a NaN it stays (the reference stops at it).
    body += indent +
            (isFloat ? "if (kiln_m == kiln_m && (v != v || v > "
                       "kiln_m))\n"
                     : "if (v > kiln_m)\n") +
            indent + "  kiln_m = v;\n";
  }
  for (int64_t d = 0; d < g.nsp; ++d) {
    indent.resize(indent.size() - 2);
    body += indent + "}\n";
  }
  if (average)
    body += *st == codegen::ScalarType::F64
                ? "    out0[kiln_i] = kiln_sum / kiln_n;\n"
                : "    out0[kiln_i] = (" + storage +
                      ")(float)(kiln_sum / kiln_n); // an empty window: 0/0, "
                      "NaN\n";
  else
    body += "    out0[kiln_i] = (" + storage + ")kiln_m;\n";
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(op, name, cppKernelParams(op), body, what);
}

} // namespace

bool hasCppWindowKernel(Operation *op) {
  return isa<PadOp, MaxPoolOp, AvgPoolOp>(op);
}

std::optional<CppKernel> emitCppWindowKernel(Operation *op, StringRef name) {
  if (auto pad = dyn_cast<PadOp>(op))
    return emitPad(pad, name);
  if (isa<MaxPoolOp, AvgPoolOp>(op))
    return emitPool(op, name);
  return std::nullopt;
}

} // namespace kiln
