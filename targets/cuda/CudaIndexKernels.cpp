//===- CudaIndexKernels.cpp - CUDA kernels that index by position ---------===//
//
// This file implements the CUDA kernels of the top-level op families that
// read or write at positions the kernel IR cannot express (along one axis,
// by run-time indices or a run-time diagonal), so that they run on the
// device instead of on the host (issue 14: the node tests' losses,
// classifiers, scans and masks):
//
//  - kiln.gather_elements: one thread per output element, reading x at its
//    own coordinates with the axis coordinate replaced by the index (run-time
//    indices, negative ones counted from the end; an index out of range
//    traps, as the gather kernel's);
//  - kiln.argmax / kiln.argmin: one thread per output, walking the axis with
//    the reference kernel's rule (runtime/kernels/Reduction.cpp: NaN wins,
//    ties keep the first index unless select_last_index);
//  - kiln.cumsum / kiln.cumprod: one thread per line along the axis (a
//    constant, or read at run time and switched over), accumulating as the
//    reference does (f64 for floats,
//    wrapping 64-bit integers), exclusive and reverse as attributes say;
//  - kiln.hardmax: one thread per line along the axis, 1 at the first
//    maximum (a NaN wins), as the reference's softmax-family kernel;
//  - kiln.trilu: one thread per element, the diagonal k read at run time;
//  - kiln.gather_nd: one thread per output element, its index tuple read
//    and checked at run time (batch_dims as the reference's);
//  - kiln.scatter_nd: launched twice, the copy, then a thread per position
//    within a slice applying every tuple's update there in order;
//  - kiln.scatter_elements: launched twice (CudaKernel::launches): the first
//    launch copies x into the result (grid-stride), the second applies the
//    updates in the reference's order from one thread, so duplicate indices
//    combine (none: the last wins; add, mul, max, min) exactly as the
//    reference kernel does. Serial, it suits the small scatters of losses and
//    masks, not large ones.
//
// The index checks, element and tuple offsets, scatter combinations and
// the hardmax step are codegen/IndexPrinter.h's, shared with the CPU
// kernels (targets/cpu/CppIndexKernels.cpp).
//
// Consecutive threads take consecutive inner positions, so their reads and
// writes are coalesced unless the axis is the innermost one.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/IndexPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <string>

using namespace mlir;

namespace kiln {

namespace {

/// A static-shaped tensor type of at most 2^62 elements, or null.
RankedTensorType staticType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getNumElements() >= (int64_t(1) << 62))
    return nullptr;
  return t;
}

/// The sizes before, along and after `axis` of `shape`.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisSplit splitAround(ArrayRef<int64_t> shape, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < axis ? s.outer : d == axis ? s.len : s.inner) *= shape[d];
  return s;
}

/// `axis` counted from the end when negative, or -1 when out of range.
int64_t normalizedAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

/// What a kernel does at an index out of range: a bad input fails the run
/// with a CUDA error instead of reading or writing outside the tensor.
const char *const kTrap = "__trap(); // an index out of range: a bad input";

/// Row-major strides of `shape`.
std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The product of `dims`.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

} // namespace

std::optional<CudaKernel> emitCudaGatherNDKernel(Operation *op,
                                                 llvm::StringRef name) {
  auto gather = dyn_cast<GatherNDOp>(op);
  if (!gather)
    return std::nullopt;
  RankedTensorType xt = staticType(gather.getX()),
                   it = staticType(gather.getIndices()),
                   yt = staticType(gather.getResult());
  if (!xt || !it || !yt || yt.getNumElements() == 0 || it.getRank() < 1)
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  std::optional<codegen::ScalarType> indexType =
      codegen::scalarTypeOf(it.getElementType());
  int64_t b = gather.getBatchDims(), r = xt.getRank(), q = it.getRank();
  if (!st || !indexType || b < 0 || b >= std::min(r, q))
    return std::nullopt;
  int64_t m = it.getDimSize(q - 1);
  if (m < 0 || m > r - b)
    return std::nullopt;
  ArrayRef<int64_t> xs = xt.getShape(), is = it.getShape();
  int64_t tuplesPerBatch = product(is.slice(b, q - 1 - b));
  int64_t slice = product(xs.drop_front(b + m));
  int64_t batchElems = product(xs.drop_front(b));
  std::vector<int64_t> strides = rowMajorStrides(xs);
  int64_t total = yt.getNumElements();
  std::string storage = codegen::storageCType(*st);
  std::string index = codegen::storageCType(*indexType);
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + index +
          " *__restrict__ in1, " + storage + " *__restrict__ out0");
  std::string s = opKernelComment(
      k,
      "gather_nd of " + std::to_string(m) + "-index tuples, batch_dims " +
          std::to_string(b) + ", slices of " + std::to_string(slice),
      "one thread per output element, grid-stride; an index out of range "
      "traps");
  s += head + " {\n";
  s += elementLoopHead(k, total);
  // kiln_i = (batch * tuplesPerBatch + tuple) * slice + position.
  s += "    const long long kiln_t = kiln_i / " + llLiteral(slice) +
       "; // the tuple, counted over all batches\n";
  s += "    const long long kiln_b = kiln_t / " + llLiteral(tuplesPerBatch) + ";\n";
  s += codegen::printTupleOffset("kiln_t", xs.slice(b, m),
                                 ArrayRef<int64_t>(strides).slice(b, m), kTrap,
                                 "    ");
  s += "    out0[kiln_i] = in0[kiln_b * " + llLiteral(batchElems) +
       " + kiln_off + kiln_i % " + llLiteral(slice) + "];\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

std::optional<CudaKernel> emitCudaScatterNDKernel(Operation *op,
                                                  llvm::StringRef name) {
  auto scatter = dyn_cast<ScatterNDOp>(op);
  if (!scatter)
    return std::nullopt;
  RankedTensorType xt = staticType(scatter.getX()),
                   it = staticType(scatter.getIndices()),
                   ut = staticType(scatter.getUpdates());
  if (!xt || !it || !ut || xt.getNumElements() == 0 || it.getRank() < 1)
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  std::optional<codegen::ScalarType> indexType =
      codegen::scalarTypeOf(it.getElementType());
  StringRef reduction = scatter.getReduction();
  bool isBool = st && *st == codegen::ScalarType::Bool;
  int64_t r = xt.getRank(), q = it.getRank(), m = it.getDimSize(q - 1);
  if (!st || !indexType || m < 0 || m > r ||
      !codegen::isScatterReduction(reduction) ||
      (isBool && reduction != "none"))
    return std::nullopt;
  ArrayRef<int64_t> xs = xt.getShape();
  int64_t tuples = product(it.getShape().drop_back());
  int64_t slice = product(xs.drop_front(m));
  if (ut.getNumElements() != tuples * slice)
    return std::nullopt;
  std::vector<int64_t> strides = rowMajorStrides(xs);
  std::string storage = codegen::storageCType(*st);
  std::string compute = codegen::computeCType(*st);
  std::string index = codegen::storageCType(*indexType);
  int64_t total = xt.getNumElements();
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + index +
          " *__restrict__ in1, const " + storage + " *__restrict__ in2, " +
          storage + " *__restrict__ out0, int kiln_step");
  k.launches = 2;
  std::string s = opKernelComment(
      k,
      "scatter_nd of " + std::to_string(tuples) + " slices of " +
          std::to_string(slice) + ", reduction " + reduction.str(),
      "launch 0: one thread per element copies x; launch 1: one thread per "
      "position within a slice applies every tuple's update there in order "
      "(duplicate tuples combine as in the reference; an index out of range "
      "traps)");
  s += head + " {\n";
  s += "  if (kiln_step == 0) {\n";
  s += elementLoopHead(k, total);
  s += "      out0[kiln_i] = in0[kiln_i];\n    }\n    return;\n  }\n";
  s += "  const long long kiln_n = (long long)gridDim.x * blockDim.x;\n";
  s += "  for (long long kiln_e = (long long)blockIdx.x * blockDim.x + "
       "threadIdx.x; kiln_e < " +
       llLiteral(slice) + "; kiln_e += kiln_n) {\n";
  s += "    for (long long kiln_t = 0; kiln_t < " + llLiteral(tuples) +
       "; ++kiln_t) {\n";
  s += codegen::printTupleOffset("kiln_t", xs.take_front(m),
                                 ArrayRef<int64_t>(strides).take_front(m),
                                 kTrap, "      ");
  s += "      const long long kiln_x = kiln_off + kiln_e;\n";
  s += "      out0[kiln_x] = (" + storage + ")(" +
       codegen::printScatterCombine(reduction, "(" + compute + ")out0[kiln_x]",
                                    "(" + compute + ")in2[kiln_t * " +
                                        llLiteral(slice) + " + kiln_e]") +
       ");\n";
  s += "    }\n  }\n}\n";
  k.definition = s;
  return k;
}

std::optional<CudaKernel> emitCudaGatherElementsKernel(Operation *op,
                                                       llvm::StringRef name) {
  auto gather = dyn_cast<GatherElementsOp>(op);
  if (!gather)
    return std::nullopt;
  RankedTensorType xt = staticType(gather.getX()),
                   it = staticType(gather.getIndices()),
                   yt = staticType(gather.getResult());
  if (!xt || !it || !yt || yt.getNumElements() == 0 ||
      it.getShape() != yt.getShape() || xt.getRank() != yt.getRank())
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  std::optional<codegen::ScalarType> indexType =
      codegen::scalarTypeOf(it.getElementType());
  int64_t axis = normalizedAxis(gather.getAxis(), xt.getRank());
  if (!st || !indexType || axis < 0 || xt.getDimSize(axis) == 0)
    return std::nullopt;
  // The indices may be smaller than x in the other dims.
  int64_t size = xt.getDimSize(axis), total = yt.getNumElements();
  std::string storage = codegen::storageCType(*st);
  std::string index = codegen::storageCType(*indexType);
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + index +
          " *__restrict__ in1, " + storage + " *__restrict__ out0");
  std::string s = opKernelComment(
      k,
      "gather_elements along axis " + std::to_string(axis) + " of " +
          std::to_string(size) + " into " +
          std::to_string(yt.getDimSize(axis)) + " positions",
      "one thread per output element, grid-stride; an index out "
      "of range traps");
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += "    long long kiln_idx = (long long)in1[kiln_i];\n";
  s += wrapAndCheckIndex("kiln_idx", size, "    ");
  // x is read at the output's coordinates with x's strides.
  s += codegen::printElementOffset(yt.getShape(), xt.getShape(), axis, "kiln_i",
                                   "kiln_idx");
  s += "    out0[kiln_i] = in0[kiln_x];\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

std::optional<CudaKernel> emitCudaArgReduceKernel(Operation *op,
                                                  llvm::StringRef name) {
  bool isMax = isa<ArgMaxOp>(op);
  if (!isMax && !isa<ArgMinOp>(op))
    return std::nullopt;
  RankedTensorType xt = staticType(op->getOperand(0)),
                   yt = staticType(op->getResult(0));
  auto axisAttr = op->getAttrOfType<IntegerAttr>("axis");
  auto lastAttr = op->getAttrOfType<IntegerAttr>("select_last_index");
  if (!xt || !yt || !axisAttr || !lastAttr || yt.getNumElements() == 0 ||
      xt.getRank() < 1)
    return std::nullopt;
  int64_t axis = normalizedAxis(axisAttr.getInt(), xt.getRank());
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  if (axis < 0 || !st || xt.getDimSize(axis) == 0)
    return std::nullopt;
  AxisSplit a = splitAround(xt.getShape(), axis);
  bool last = lastAttr.getInt() != 0;
  bool isFloat = codegen::isFloatType(*st);
  std::string storage = codegen::storageCType(*st);
  std::string compute = codegen::computeCType(*st);
  int64_t total = a.outer * a.inner;
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, long long *__restrict__ out0");
  std::string s = opKernelComment(
      k,
      std::string(isMax ? "argmax" : "argmin") + " along axis " +
          std::to_string(axis) + " of " + std::to_string(a.len) +
          (last ? ", ties to the last index" : ""),
      "one thread per output, walking the axis; NaN wins");
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += "    const " + storage + " *kiln_x = in0 + (kiln_i / " + llLiteral(a.inner) +
       ") * " + llLiteral(a.len * a.inner) + " + kiln_i % " + llLiteral(a.inner) + ";\n";
  s += "    " + compute + " kiln_best = (" + compute + ")kiln_x[0];\n";
  s += "    long long kiln_arg = 0;\n";
  s += "    for (long long r = 1; r < " + llLiteral(a.len) + "; ++r) {\n";
  s += "      const " + compute + " v = (" + compute + ")kiln_x[r * " +
       llLiteral(a.inner) + "];\n";
  s += codegen::printArgReduceStep(isMax, last, isFloat, "      ");
  s += "    }\n";
  s += "    out0[kiln_i] = kiln_arg;\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

std::optional<CudaKernel> emitCudaHardmaxKernel(Operation *op,
                                                llvm::StringRef name) {
  auto hardmax = dyn_cast<HardmaxOp>(op);
  if (!hardmax)
    return std::nullopt;
  RankedTensorType xt = staticType(hardmax.getX());
  std::optional<codegen::ScalarType> st =
      xt ? codegen::scalarTypeOf(xt.getElementType()) : std::nullopt;
  if (!xt || !st || !codegen::isFloatType(*st) || xt.getRank() < 1 ||
      xt.getNumElements() == 0)
    return std::nullopt;
  int64_t axis = normalizedAxis(hardmax.getAxis(), xt.getRank());
  if (axis < 0)
    return std::nullopt;
  AxisSplit a = splitAround(xt.getShape(), axis);
  std::string storage = codegen::storageCType(*st);
  std::string compute = codegen::computeCType(*st);
  int64_t total = a.outer * a.inner;
  CudaKernel k;
  std::string head =
      beginElementKernel(k, op, name, total,
                         "const " + storage + " *__restrict__ in0, " + storage +
                             " *__restrict__ out0");
  std::string s = opKernelComment(
      k,
      "hardmax along axis " + std::to_string(axis) + " of " +
          std::to_string(a.len),
      "one thread per line along the axis: 1 at its first maximum (a NaN "
      "wins), 0 elsewhere");
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += "    const long long kiln_base = (kiln_i / " + llLiteral(a.inner) + ") * " +
       llLiteral(a.len * a.inner) + " + kiln_i % " + llLiteral(a.inner) + ";\n";
  s += "    " + compute + " kiln_best = -INFINITY;\n";
  s += "    long long kiln_arg = 0;\n";
  s += "    for (long long r = 0; r < " + llLiteral(a.len) + "; ++r) {\n";
  s += "      const " + compute + " v = (" + compute + ")in0[kiln_base + r * " +
       llLiteral(a.inner) + "];\n";
  s += codegen::printHardmaxStep("      ");
  s += "    }\n";
  s += "    for (long long r = 0; r < " + llLiteral(a.len) + "; ++r)\n";
  s += "      out0[kiln_base + r * " + llLiteral(a.inner) + "] = " + storage +
       "(r == kiln_arg ? 1.0f : 0.0f);\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

std::optional<CudaKernel> emitCudaScanKernel(Operation *op,
                                             llvm::StringRef name) {
  bool isProd = isa<CumProdOp>(op);
  if (!isProd && !isa<CumSumOp>(op))
    return std::nullopt;
  RankedTensorType xt = staticType(op->getOperand(0)),
                   yt = staticType(op->getResult(0)),
                   at = staticType(op->getOperand(1));
  auto exclusive = op->getAttrOfType<IntegerAttr>("exclusive");
  auto reverse = op->getAttrOfType<IntegerAttr>("reverse");
  if (!xt || !yt || !at || at.getNumElements() != 1 || !exclusive || !reverse ||
      yt.getNumElements() == 0 || xt.getRank() < 1)
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  std::optional<codegen::ScalarType> axisType =
      codegen::scalarTypeOf(at.getElementType());
  if (!st || !axisType || *st == codegen::ScalarType::Bool)
    return std::nullopt;
  // The axis: a constant, or read at run time (the node tests give it as an
  // input); then the kernel switches over every axis's split.
  int64_t rank = xt.getRank();
  std::optional<SmallVector<int64_t>> constantAxis =
      passes::getConstantInts(op->getOperand(1));
  SmallVector<int64_t> axes;
  if (constantAxis) {
    int64_t axis = normalizedAxis((*constantAxis)[0], rank);
    if (axis < 0)
      return std::nullopt;
    axes.push_back(axis);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  bool isFloat = codegen::isFloatType(*st);
  bool isDouble = *st == codegen::ScalarType::F64;
  std::string storage = codegen::storageCType(*st);
  // The reference's accumulator: f64, or a wrapping 64-bit integer.
  std::string acc = isFloat ? "double" : "unsigned long long";
  std::string load = isDouble  ? "(double)"
                     : isFloat ? "(double)(float)"
                               : "(unsigned long long)";
  std::string store = isDouble  ? std::string("kiln_acc")
                      : isFloat ? storage + "((float)kiln_acc)"
                                : "(" + storage + ")(long long)kiln_acc";
  int64_t lines = 0;
  for (int64_t axis : axes)
    lines = std::max(lines, xt.getNumElements() / xt.getDimSize(axis));
  bool excl = exclusive.getInt() != 0, rev = reverse.getInt() != 0;
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, lines,
      "const " + storage + " *__restrict__ in0, const " +
          codegen::storageCType(*axisType) + " *__restrict__ in1, " + storage +
          " *__restrict__ out0");
  std::string s = opKernelComment(
      k,
      std::string(isProd ? "cumprod" : "cumsum") + " along " +
          (constantAxis ? "axis " + std::to_string(axes[0])
                        : std::string("the run-time axis")) +
          (excl ? ", exclusive" : "") + (rev ? ", reversed" : ""),
      "one thread per line along the axis, grid-stride");
  s += head + " {\n";
  s += "  long long kiln_len, kiln_inner, kiln_lines;\n";
  if (constantAxis) {
    AxisSplit a = splitAround(xt.getShape(), axes[0]);
    s += "  kiln_len = " + llLiteral(a.len) + ", kiln_inner = " + llLiteral(a.inner) +
         ", kiln_lines = " + llLiteral(a.outer * a.inner) + ";\n";
  } else {
    s += "  long long kiln_axis = (long long)in1[0];\n";
    s += "  if (kiln_axis < 0)\n    kiln_axis += " + llLiteral(rank) + ";\n";
    s += "  switch (kiln_axis) {\n";
    for (int64_t axis : axes) {
      AxisSplit a = splitAround(xt.getShape(), axis);
      s += "  case " + std::to_string(axis) + ": kiln_len = " + llLiteral(a.len) +
           ", kiln_inner = " + llLiteral(a.inner) +
           ", kiln_lines = " + llLiteral(a.outer * a.inner) + "; break;\n";
    }
    s += "  default:\n    __trap(); // an axis out of range: a bad input\n";
    s += "  }\n";
  }
  s += "  const long long kiln_n = (long long)gridDim.x * blockDim.x;\n";
  s += "  for (long long kiln_i = (long long)blockIdx.x * blockDim.x + "
       "threadIdx.x; kiln_i < kiln_lines; kiln_i += kiln_n) {\n";
  s += "    const long long kiln_base = (kiln_i / kiln_inner) * kiln_len * "
       "kiln_inner + kiln_i % kiln_inner;\n";
  s += "    " + acc + " kiln_acc = " + (isProd ? "1" : "0") + ";\n";
  s += "    for (long long step = 0; step < kiln_len; ++step) {\n";
  s += "      const long long at = kiln_base + (" +
       std::string(rev ? "kiln_len - 1 - step" : "step") + ") * kiln_inner;\n";
  std::string update = "      kiln_acc " + std::string(isProd ? "*" : "+") +
                       "= " + load + "in0[at];\n";
  std::string write = "      out0[at] = " + store + ";\n";
  s += excl ? write + update : update + write;
  s += "    }\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

std::optional<CudaKernel> emitCudaTriluKernel(Operation *op,
                                              llvm::StringRef name) {
  auto trilu = dyn_cast<TriluOp>(op);
  if (!trilu)
    return std::nullopt;
  RankedTensorType xt = staticType(trilu.getX());
  std::optional<codegen::ScalarType> st =
      xt ? codegen::scalarTypeOf(xt.getElementType()) : std::nullopt;
  if (!xt || !st || xt.getRank() < 2 || xt.getNumElements() == 0)
    return std::nullopt;
  int64_t rows = xt.getDimSize(xt.getRank() - 2),
          cols = xt.getDimSize(xt.getRank() - 1), total = xt.getNumElements();
  bool upper = trilu.getUpper() != 0;
  std::string storage = codegen::storageCType(*st);
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage +
          " *__restrict__ in0, const long long *__restrict__ in1, " + storage +
          " *__restrict__ out0");
  std::string s = opKernelComment(k,
                                  std::string(upper ? "upper" : "lower") +
                                      " triangle of [" + std::to_string(rows) +
                                      ", " + std::to_string(cols) +
                                      "] matrices, diagonal k read at run time",
                                  "one thread per element, grid-stride");
  s += head + " {\n";
  s += "  const long long kiln_k = in1[0];\n";
  s += elementLoopHead(k, total);
  s += "    const long long kiln_c = kiln_i % " + llLiteral(cols) + ";\n";
  s += "    const long long kiln_r = (kiln_i / " + llLiteral(cols) + ") % " +
       llLiteral(rows) + ";\n";
  s += "    out0[kiln_i] = kiln_c - kiln_r " +
       std::string(upper ? ">=" : "<=") + " kiln_k ? in0[kiln_i] : " + storage +
       "(0);\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

std::optional<CudaKernel> emitCudaScatterElementsKernel(Operation *op,
                                                        llvm::StringRef name) {
  auto scatter = dyn_cast<ScatterElementsOp>(op);
  if (!scatter)
    return std::nullopt;
  RankedTensorType xt = staticType(scatter.getX()),
                   it = staticType(scatter.getIndices()),
                   ut = staticType(scatter.getUpdates());
  if (!xt || !it || !ut || it.getShape() != ut.getShape() ||
      it.getRank() != xt.getRank() || xt.getNumElements() == 0)
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  std::optional<codegen::ScalarType> indexType =
      codegen::scalarTypeOf(it.getElementType());
  int64_t axis = normalizedAxis(scatter.getAxis(), xt.getRank());
  StringRef reduction = scatter.getReduction();
  bool isBool = st && *st == codegen::ScalarType::Bool;
  if (!st || !indexType || axis < 0 || xt.getDimSize(axis) == 0 ||
      !codegen::isScatterReduction(reduction) ||
      (isBool && reduction != "none"))
    return std::nullopt;
  std::string storage = codegen::storageCType(*st);
  std::string compute = codegen::computeCType(*st);
  std::string index = codegen::storageCType(*indexType);
  int64_t total = xt.getNumElements(), count = it.getNumElements();
  int64_t size = xt.getDimSize(axis);
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + index +
          " *__restrict__ in1, const " + storage + " *__restrict__ in2, " +
          storage + " *__restrict__ out0, int kiln_step");
  k.launches = 2;
  std::string s = opKernelComment(
      k,
      "scatter_elements of " + std::to_string(count) + " updates along axis " +
          std::to_string(axis) + ", reduction " + reduction.str(),
      "launch 0: one thread per element copies x; launch 1: one thread "
      "applies the updates in order (an index out of range traps)");
  s += head + " {\n";
  s += "  if (kiln_step == 0) {\n";
  s += elementLoopHead(k, total);
  s += "      out0[kiln_i] = in0[kiln_i];\n    }\n    return;\n  }\n";
  s += "  if (blockIdx.x != 0 || threadIdx.x != 0)\n    return;\n";
  s +=
      "  for (long long kiln_u = 0; kiln_u < " + llLiteral(count) + "; ++kiln_u) {\n";
  s += "    long long kiln_idx = (long long)in1[kiln_u];\n";
  s += wrapAndCheckIndex("kiln_idx", size, "    ");
  s += codegen::printElementOffset(it.getShape(), xt.getShape(), axis, "kiln_u",
                                   "kiln_idx");
  s += "    out0[kiln_x] = (" + storage + ")(" +
       codegen::printScatterCombine(reduction, "(" + compute + ")out0[kiln_x]",
                                    "(" + compute + ")in2[kiln_u]") +
       ");\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
