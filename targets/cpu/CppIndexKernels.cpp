//===- CppIndexKernels.cpp - C++ kernels that index by position -----------===//
//
// This file implements the CPU target's kernels of the single top-level ops
// that read or write at run-time positions or by a run-time diagonal, so
// that they run as generated code instead of the runtime's reference
// kernels (issue 20: masks, classifiers' decisions, losses' scatters):
//
//  - kiln.trilu: per matrix row, the kept run of columns copied and the rest
//    zeroed (the reference's memset), the diagonal k read at run time;
//  - kiln.hardmax: one walk per line along the axis, 1 at the first maximum
//    (a NaN wins), 0 elsewhere;
//  - kiln.scatter_elements: x copied, then each update applied in the
//    reference's order, so that duplicate indices combine (none: the last
//    wins; add, mul, max, min) exactly as the reference kernel does;
//  - kiln.scatter_nd: x copied, then each tuple's slice of updates applied
//    in order, alike;
//  - kiln.gather_nd: each index tuple's slice copied (batch_dims as the
//    reference's).
//
// The index checks, offsets, scatter combinations and the hardmax step are
// codegen/IndexPrinter.h's, shared with the CUDA kernels
// (targets/cuda/CudaIndexKernels.cpp). An index outside [-size, size) makes
// the kernel return 1, which the wrapper reports as the run's error naming
// the node (CppOpKernels.cpp's convention); sizes are literals.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/IndexPrinter.h"
#include "ir/KilnOps.h"
#include "targets/cpu/CppKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln {
namespace {

/// What a kernel does at an index out of range: the wrapper reports it.
const char *const kBadIndex = "return 1; // an index out of range: a bad input";

/// `v` as a literal.
std::string lit(int64_t v) { return std::to_string(v); }

/// The product of `dims`.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// A static-shaped tensor type of at most 2^62 elements, or null.
RankedTensorType staticType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getNumElements() >= (int64_t(1) << 62))
    return nullptr;
  return t;
}

/// The element type of the static-shaped `t`, or nullopt.
std::optional<codegen::ScalarType> scalarOf(RankedTensorType t) {
  return t ? codegen::scalarTypeOf(t.getElementType()) : std::nullopt;
}

/// `axis` counted from the end when negative, or -1 when out of range.
int64_t normalizedAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

/// Row-major strides of `shape`.
std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The parameters `in0, in1, ..., out0` of `op`'s kernel.
std::string paramsOf(Operation *op) {
  std::string params;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    params += cppKernelParam(v, "in" + std::to_string(i), true) + ", ";
  return params + cppKernelParam(op->getResult(0), "out0", false);
}

/// The body of a kernel with nothing to compute (an empty tensor).
std::string emptyBody(Operation *op) {
  std::string s;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    s += "  (void)in" + std::to_string(i) + ";\n";
  return s + "  (void)out0; // an empty tensor\n  return 0;\n";
}

/// True for a scatter whose element type and reduction the kernel takes:
/// combining needs arithmetic (not bool, not the 8-bit floats).
bool scatterTypeOk(codegen::ScalarType st, StringRef reduction) {
  if (!codegen::isScatterReduction(reduction))
    return false;
  return reduction == "none" || (st != codegen::ScalarType::Bool &&
                                 !codegen::isFloat8Type(st));
}

/// The statement storing the update `update` into `target` for
/// `reduction`, as the reference's combine: computed in the computed type,
/// stored in the element type (`none` copies the element as it is).
std::string scatterStore(codegen::ScalarType st, StringRef reduction,
                         const std::string &target, const std::string &update,
                         const std::string &indent) {
  if (reduction == "none")
    return indent + target + " = " + update + ";\n";
  std::string compute = codegen::computeCType(st);
  return indent + target + " = (" + codegen::storageCType(st) + ")(" +
         codegen::printScatterCombine(reduction, "(" + compute + ")" + target,
                                      "(" + compute + ")" + update) +
         ");\n";
}

std::optional<CppKernel> emitTrilu(TriluOp trilu, StringRef name) {
  RankedTensorType xt = staticType(trilu.getX()), kt = staticType(trilu.getK());
  if (!xt || !kt || !scalarOf(xt) || xt.getRank() < 2 ||
      kt.getNumElements() != 1)
    return std::nullopt;
  int64_t rows = xt.getDimSize(xt.getRank() - 2),
          cols = xt.getDimSize(xt.getRank() - 1);
  bool upper = trilu.getUpper() != 0;
  std::string what = std::string(upper ? "upper" : "lower") +
                     " triangle of [" + lit(rows) + ", " + lit(cols) +
                     "] matrices, the diagonal k read at run time";
  if (xt.getNumElements() == 0)
    return makeCppOpKernel(trilu, name, paramsOf(trilu), emptyBody(trilu),
                           what);
  // Beyond +-(rows + cols) every row is kept or zeroed whole: clamping k
  // there keeps r + k from overflowing.
  std::string bound = lit(rows + cols), c = lit(cols);
  std::string body =
      "  const int64_t k = in1[0] < -" + bound + " ? -" + bound +
      " : in1[0] > " + bound + " ? " + bound + " : in1[0];\n" +
      "  for (int64_t row = 0; row < " + lit(xt.getNumElements() / cols) +
      "; ++row) {\n" + "    const int64_t r = row % " + lit(rows) + ";\n" +
      "    // Columns c with c - r " + (upper ? ">=" : "<=") +
      " k are kept: those " + (upper ? "from" : "before") + " split.\n" +
      "    int64_t split = r + k" + (upper ? "" : " + 1") + ";\n" +
      "    split = split < 0 ? 0 : split > " + c + " ? " + c + " : split;\n" +
      "    const auto *src = in0 + row * " + c + ";\n" +
      "    auto *dst = out0 + row * " + c + ";\n";
  std::string head = "sizeof(*dst) * split", tail = "sizeof(*dst) * (" + c +
                                                   " - split)";
  if (upper)
    body += "    std::memset(dst, 0, " + head + ");\n" +
            "    std::memcpy(dst + split, src + split, " + tail + ");\n";
  else
    body += "    std::memcpy(dst, src, " + head + ");\n" +
            "    std::memset(dst + split, 0, " + tail + ");\n";
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(trilu, name, paramsOf(trilu), body, what);
}

std::optional<CppKernel> emitHardmax(HardmaxOp hardmax, StringRef name) {
  RankedTensorType xt = staticType(hardmax.getX());
  std::optional<codegen::ScalarType> st = scalarOf(xt);
  if (!st || !codegen::isFloatType(*st) || codegen::isFloat8Type(*st) ||
      xt.getRank() < 1)
    return std::nullopt;
  int64_t axis = normalizedAxis(hardmax.getAxis(), xt.getRank());
  if (axis < 0)
    return std::nullopt;
  ArrayRef<int64_t> shape = xt.getShape();
  int64_t len = shape[axis], inner = product(shape.drop_front(axis + 1)),
          lines = product(shape.take_front(axis)) * inner;
  std::string what = "hardmax along axis " + lit(axis) + " of " + lit(len) +
                     ": 1 at each line's first maximum (a NaN wins)";
  if (xt.getNumElements() == 0)
    return makeCppOpKernel(hardmax, name, paramsOf(hardmax),
                           emptyBody(hardmax), what);
  std::string compute = codegen::computeCType(*st);
  std::string storage = codegen::storageCType(*st);
  std::string in = lit(inner), body;
  // Parallel once the walks cover a few pages, as the fused kernels.
  if (lines > 1 && xt.getNumElements() >= 32768)
    body += "  #pragma omp parallel for\n";
  body += "  for (int64_t kiln_i = 0; kiln_i < " + lit(lines) + "; ++kiln_i) {\n";
  body += "    const int64_t kiln_base = (kiln_i / " + in + ") * " +
          lit(len * inner) + " + kiln_i % " + in + ";\n";
  body += "    " + compute + " kiln_best = -INFINITY;\n";
  body += "    int64_t kiln_arg = 0;\n";
  body += "    for (int64_t r = 0; r < " + lit(len) + "; ++r) {\n";
  body += "      const " + compute + " v = (" + compute +
          ")in0[kiln_base + r * " + in + "];\n";
  body += codegen::printHardmaxStep("      ");
  body += "    }\n";
  body += "    for (int64_t r = 0; r < " + lit(len) + "; ++r)\n";
  body += "      out0[kiln_base + r * " + in + "] = " + storage +
          "(r == kiln_arg ? 1.0f : 0.0f);\n";
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(hardmax, name, paramsOf(hardmax), body, what);
}

std::optional<CppKernel> emitScatterElements(ScatterElementsOp scatter,
                                             StringRef name) {
  RankedTensorType xt = staticType(scatter.getX()),
                   it = staticType(scatter.getIndices()),
                   ut = staticType(scatter.getUpdates());
  std::optional<codegen::ScalarType> st = scalarOf(xt);
  StringRef reduction = scatter.getReduction();
  if (!st || !it || !ut || !scalarOf(it) || it.getShape() != ut.getShape() ||
      it.getRank() != xt.getRank() || xt.getRank() < 1 ||
      !scatterTypeOk(*st, reduction))
    return std::nullopt;
  int64_t axis = normalizedAxis(scatter.getAxis(), xt.getRank());
  if (axis < 0)
    return std::nullopt;
  for (int64_t d = 0; d < xt.getRank(); ++d)
    if (d != axis && it.getDimSize(d) > xt.getDimSize(d))
      return std::nullopt;
  int64_t total = xt.getNumElements(), count = it.getNumElements();
  std::string what = "scatter_elements of " + lit(count) +
                     " updates along axis " + lit(axis) + ", reduction " +
                     reduction.str() + ", applied in order";
  // An index is checked even where x is empty (the reference's error).
  if (total == 0 && count == 0)
    return makeCppOpKernel(scatter, name, paramsOf(scatter),
                           emptyBody(scatter), what);
  std::string body =
      "  std::memcpy(out0, in0, sizeof(*out0) * " + lit(total) + ");\n";
  if (count > 0) {
    body += "  for (long long kiln_u = 0; kiln_u < " + lit(count) +
            "; ++kiln_u) {\n";
    body += "    long long kiln_idx = (long long)in1[kiln_u];\n";
    body += codegen::printCheckedIndex("kiln_idx", xt.getDimSize(axis),
                                       kBadIndex, "    ");
    body += codegen::printElementOffset(it.getShape(), xt.getShape(), axis,
                                        "kiln_u", "kiln_idx");
    body += scatterStore(*st, reduction, "out0[kiln_x]", "in2[kiln_u]", "    ");
    body += "  }\n";
  } else {
    body += "  (void)in1;\n  (void)in2;\n";
  }
  body += "  return 0;\n";
  return makeCppOpKernel(scatter, name, paramsOf(scatter), body, what);
}

std::optional<CppKernel> emitScatterND(ScatterNDOp scatter, StringRef name) {
  RankedTensorType xt = staticType(scatter.getX()),
                   it = staticType(scatter.getIndices()),
                   ut = staticType(scatter.getUpdates());
  std::optional<codegen::ScalarType> st = scalarOf(xt);
  StringRef reduction = scatter.getReduction();
  if (!st || !it || !ut || !scalarOf(it) || it.getRank() < 1 ||
      xt.getRank() < 1 || !scatterTypeOk(*st, reduction))
    return std::nullopt;
  int64_t m = it.getDimSize(it.getRank() - 1);
  if (m > xt.getRank())
    return std::nullopt;
  ArrayRef<int64_t> xs = xt.getShape();
  // The updates: [indices' dims but the last..., x's dims after m...].
  SmallVector<int64_t> expected(it.getShape().drop_back());
  expected.append(xs.begin() + m, xs.end());
  if (ut.getShape() != ArrayRef<int64_t>(expected))
    return std::nullopt;
  int64_t tuples = product(it.getShape().drop_back()),
          slice = product(xs.drop_front(m)), total = xt.getNumElements();
  std::string what = "scatter_nd of " + lit(tuples) + " slices of " +
                     lit(slice) + ", reduction " + reduction.str() +
                     ", applied in order";
  if (total == 0 && tuples == 0)
    return makeCppOpKernel(scatter, name, paramsOf(scatter),
                           emptyBody(scatter), what);
  std::vector<int64_t> strides = rowMajorStrides(xs);
  std::string body =
      "  std::memcpy(out0, in0, sizeof(*out0) * " + lit(total) + ");\n";
  body += "  for (long long kiln_t = 0; kiln_t < " + lit(tuples) +
          "; ++kiln_t) {\n";
  body += codegen::printTupleOffset("kiln_t", xs.take_front(m),
                                    ArrayRef<int64_t>(strides).take_front(m),
                                    kBadIndex, "    ");
  body += "    const auto *src = in2 + kiln_t * " + lit(slice) + ";\n";
  body += "    auto *dst = out0 + kiln_off;\n";
  if (reduction == "none") {
    body += "    std::memcpy(dst, src, sizeof(*dst) * " + lit(slice) + ");\n";
  } else {
    body += "    for (int64_t e = 0; e < " + lit(slice) + "; ++e)\n";
    body += scatterStore(*st, reduction, "dst[e]", "src[e]", "      ");
  }
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(scatter, name, paramsOf(scatter), body, what);
}

std::optional<CppKernel> emitGatherND(GatherNDOp gather, StringRef name) {
  RankedTensorType xt = staticType(gather.getX()),
                   it = staticType(gather.getIndices()),
                   yt = staticType(gather.getResult());
  if (!scalarOf(xt) || !scalarOf(it) || !yt || it.getRank() < 1)
    return std::nullopt;
  int64_t b = gather.getBatchDims(), r = xt.getRank(), q = it.getRank();
  if (b < 0 || b >= std::min(r, q))
    return std::nullopt;
  int64_t m = it.getDimSize(q - 1);
  ArrayRef<int64_t> xs = xt.getShape(), is = it.getShape();
  if (m > r - b || xs.take_front(b) != is.take_front(b))
    return std::nullopt;
  int64_t tuples = product(is.drop_back()),
          tuplesPerBatch = product(is.slice(b, q - 1 - b)),
          slice = product(xs.drop_front(b + m)),
          batchElems = product(xs.drop_front(b));
  std::string what = "gather_nd of " + lit(m) + "-index tuples, batch_dims " +
                     lit(b) + ", slices of " + lit(slice);
  // Tuples are checked even when their slices are empty (the reference's
  // error).
  if (tuples == 0)
    return makeCppOpKernel(gather, name, paramsOf(gather), emptyBody(gather),
                           what);
  std::vector<int64_t> strides = rowMajorStrides(xs);
  // Tuple t of batch t / tuplesPerBatch selects a slice of that batch.
  std::string body = "  for (long long kiln_t = 0; kiln_t < " + lit(tuples) +
                     "; ++kiln_t) {\n";
  body += "    const long long kiln_b = kiln_t / " + lit(tuplesPerBatch) +
          "; // the batch\n";
  body += codegen::printTupleOffset("kiln_t", xs.slice(b, m),
                                    ArrayRef<int64_t>(strides).slice(b, m),
                                    kBadIndex, "    ");
  body += "    std::memcpy(out0 + kiln_t * " + lit(slice) + ", in0 + kiln_b * " +
          lit(batchElems) + " + kiln_off, sizeof(*out0) * " + lit(slice) +
          ");\n";
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(gather, name, paramsOf(gather), body, what);
}

} // namespace

bool hasCppIndexKernel(Operation *op) {
  return isa<TriluOp, HardmaxOp, ScatterElementsOp, ScatterNDOp, GatherNDOp>(
      op);
}

std::optional<CppKernel> emitCppIndexKernel(Operation *op, StringRef name) {
  if (auto trilu = dyn_cast<TriluOp>(op))
    return emitTrilu(trilu, name);
  if (auto hardmax = dyn_cast<HardmaxOp>(op))
    return emitHardmax(hardmax, name);
  if (auto scatter = dyn_cast<ScatterElementsOp>(op))
    return emitScatterElements(scatter, name);
  if (auto scatter = dyn_cast<ScatterNDOp>(op))
    return emitScatterND(scatter, name);
  if (auto gather = dyn_cast<GatherNDOp>(op))
    return emitGatherND(gather, name);
  return std::nullopt;
}

} // namespace kiln
