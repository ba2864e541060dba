//===- CudaResizeKernel.cpp - CUDA kernels for resize ---------------------===//
//
// This file implements the CUDA kernel of a top-level kiln.resize (ONNX
// Resize: nearest, linear and cubic, every coordinate transformation mode,
// antialias, exclude_outside, extrapolation) whose scales or sizes are
// constants, so that it runs on the device instead of on the host. The
// interpolation is separable: the reference kernel's own plan
// (runtime/kernels/ResizePlan.h), made here at compile time, gives for each
// axis that changes and each output position along it the input positions
// and weights; they are printed as tables next to the kernel (`__device__`
// arrays, read through the cache; the scales and sizes operands are
// parameters the kernel does not read). The kernel has one thread per output
// element, grid-stride; it evaluates the axes' sums nested, the first
// planned axis innermost, which is the reference's axis-by-axis
// interpolation of the same point (an extrapolated position of an axis
// gives extrapolation_value for that axis's sum), in f32 instead of double,
// and clamps the result to the dtype's finite range before rounding (the
// reference's saturating cast). A plan whose tables would exceed 2^16
// entries is not printed (the op runs on the host).
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "codegen/WrapperSupport.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "runtime/kernels/ResizePlan.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cstdio>
#include <string>

using namespace mlir;

namespace kiln {

namespace {

/// The most table entries (positions times taps, over every axis) a resize
/// kernel prints.
constexpr int64_t kMaxTableEntries = int64_t(1) << 16;

std::string floatLiteral(double v) {
  return codegen::printLiteral(codegen::ScalarType::F32, v, 0);
}

/// The float values of a constant operand, or nullopt.
std::optional<std::vector<double>> constantFloats(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!dense || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  std::vector<double> out;
  for (APFloat f : dense.getValues<APFloat>())
    out.push_back(f.convertToDouble());
  return out;
}

/// The nested sums of the axes [0, level) of `plan` for output coordinates
/// y<d>: statements that leave the value in kiln_v<level>.
void emitAxisSum(const resize::ResizePlan &plan, size_t level,
                 const std::string &name, ArrayRef<int64_t> inShape,
                 const std::string &compute, const std::string &indent,
                 std::string &s) {
  std::string v = "kiln_v" + std::to_string(level);
  if (level == 0) {
    // The input element: coordinates c<a> along planned axes, y<d> else.
    std::string offset;
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(inShape.size()) - 1; d >= 0; --d) {
      bool planned = llvm::any_of(
          plan.axes, [&](const resize::AxisPlan &a) { return a.axis == d; });
      std::string coord = (planned ? "c" : "y") + std::to_string(d);
      std::string term =
          stride == 1 ? coord : coord + " * " + std::to_string(stride) + "LL";
      offset = offset.empty() ? term : term + " + " + offset;
      stride *= inShape[d];
    }
    s += indent + "const " + compute + " " + v + " = (" + compute + ")in0[" +
         offset + "];\n";
    return;
  }
  const resize::AxisPlan &axis = plan.axes[level - 1];
  std::string a = std::to_string(axis.axis), l = std::to_string(level - 1);
  std::string n = std::to_string(axis.n);
  bool extrapolates = llvm::is_contained(axis.extrapolated, 1);
  s += indent + compute + " " + v + " = 0;\n";
  std::string inner = indent;
  if (extrapolates) {
    s += indent + "if (" + name + "_x" + l + "[y" + a + "])\n" + indent + "  " +
         v + " = " + floatLiteral(plan.params.extrapolationValue) + ";\n" +
         indent + "else\n";
    inner += "  ";
  }
  s += inner + "for (int k" + a + " = 0; k" + a + " < " + n + "; ++k" + a +
       ") {\n";
  std::string body = inner + "  ";
  s += body + "const int c" + a + " = " + name + "_i" + l + "[y" + a + " * " +
       n + " + k" + a + "];\n";
  emitAxisSum(plan, level - 1, name, inShape, compute, body, s);
  s += body + v + " += " + name + "_w" + l + "[y" + a + " * " + n + " + k" + a +
       "] * kiln_v" + l + ";\n";
  s += inner + "}\n";
}

} // namespace

std::optional<CudaKernel> emitCudaResizeKernel(Operation *op,
                                               llvm::StringRef name) {
  auto resizeOp = dyn_cast<ResizeOp>(op);
  if (!resizeOp)
    return std::nullopt;
  auto xt = dyn_cast<RankedTensorType>(resizeOp.getX().getType());
  auto yt = dyn_cast<RankedTensorType>(resizeOp.getResult().getType());
  if (!xt || !yt || !xt.hasStaticShape() || !yt.hasStaticShape() ||
      xt.getNumElements() == 0 || yt.getNumElements() == 0 ||
      xt.getNumElements() >= (int64_t(1) << 62) ||
      yt.getNumElements() >= (int64_t(1) << 62) || xt.getRank() > 8)
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  if (!st || !codegen::isFloatType(*st) || *st == codegen::ScalarType::F64)
    return std::nullopt;
  for (int64_t d : yt.getShape())
    if (d > kMaxTableEntries)
      return std::nullopt;
  std::optional<std::vector<double>> scales =
      constantFloats(resizeOp.getScales());
  std::optional<SmallVector<int64_t>> sizes =
      passes::getConstantInts(resizeOp.getSizes());
  if (!scales || !sizes)
    return std::nullopt;
  resize::ResizePlan plan;
  Shape in(xt.getShape().begin(), xt.getShape().end());
  if (!resize::planResize(wrapper::referenceAttributes(op), in, *scales,
                          std::vector<int64_t>(sizes->begin(), sizes->end()),
                          plan)
           .isOk() ||
      plan.outShape != Shape(yt.getShape().begin(), yt.getShape().end()))
    return std::nullopt;
  int64_t entries = 0;
  for (const resize::AxisPlan &axis : plan.axes)
    entries += static_cast<int64_t>(axis.idx.size());
  if (entries > kMaxTableEntries)
    return std::nullopt;

  std::string storage = codegen::storageCType(*st);
  std::string compute = codegen::computeCType(*st);
  int64_t total = yt.getNumElements();
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const void *, const void *, " +
          storage + " *__restrict__ out0");

  const resize::ResizeParams &p = plan.params;
  std::string s = "// " + k.name + ": resize (" + p.mode + ", " + p.coordMode +
                  (p.antialias ? ", antialias" : "") + ") of [";
  for (int64_t d = 0; d < xt.getRank(); ++d)
    s += (d ? ", " : "") + std::to_string(xt.getDimSize(d));
  s += "] to [";
  for (int64_t d = 0; d < yt.getRank(); ++d)
    s += (d ? ", " : "") + std::to_string(yt.getDimSize(d));
  s += "]\n// ONNX nodes:";
  for (const std::string &node : k.sourceNodes)
    s += " " + node;
  s += "\n// tables per resized axis: input positions (_i), weights (_w)";
  s += "\n";
  for (auto [l, axis] : llvm::enumerate(plan.axes)) {
    std::string suffix = std::to_string(l);
    s += "__device__ const int " + k.name + "_i" + suffix + "[" +
         std::to_string(axis.idx.size()) + "] = {";
    for (auto [j, i] : llvm::enumerate(axis.idx))
      s += (j ? (j % 16 ? ", " : ",\n  ") : "") + std::to_string(i);
    s += "};\n__device__ const float " + k.name + "_w" + suffix + "[" +
         std::to_string(axis.w.size()) + "] = {";
    for (auto [j, w] : llvm::enumerate(axis.w))
      s += (j ? (j % 8 ? ", " : ",\n  ") : "") + floatLiteral(w);
    s += "};\n";
    if (llvm::is_contained(axis.extrapolated, 1)) {
      s += "__device__ const unsigned char " + k.name + "_x" + suffix + "[" +
           std::to_string(axis.extrapolated.size()) + "] = {";
      for (auto [j, e] : llvm::enumerate(axis.extrapolated))
        s += (j ? ", " : "") + std::to_string(int(e));
      s += "};\n";
    }
  }
  s += "// mapping: one thread per output element, grid-stride; the axes' "
       "sums nested\n";
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += "    long long kiln_r = kiln_i;\n";
  for (int64_t d = yt.getRank() - 1; d >= 0; --d) {
    std::string size = std::to_string(yt.getDimSize(d)) + "LL";
    s += "    const long long y" + std::to_string(d) + " = kiln_r % " + size +
         ";\n";
    if (d > 0)
      s += "    kiln_r /= " + size + ";\n";
  }
  emitAxisSum(plan, plan.axes.size(), k.name, xt.getShape(), compute, "    ",
              s);
  // The reference's saturating cast: finite values clamp to the dtype's
  // range, NaN stays NaN (both comparisons are false).
  std::string hi = *st == codegen::ScalarType::F16    ? "65504.0f"
                   : *st == codegen::ScalarType::BF16 ? "3.38953139e38f"
                                                      : "3.40282347e38f";
  std::string v = "kiln_v" + std::to_string(plan.axes.size());
  s += "    out0[kiln_i] = " + storage + "(" + v + " > " + hi + " ? " + hi +
       " : (" + v + " < -" + hi + " ? -" + hi + " : " + v + "));\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
