//===- CudaOpKernels.cpp - The kernels printed for single top-level ops ---===//
//
// This file implements the one table of the ops that the CUDA target prints
// a kernel for directly, outside the kernel IR (CudaKernel.h): each op's
// kernel kind (name letter and stem) and its emitter. kiln-lower-cuda tags
// such an op `kiln.kernel = "<letter><N>_<stem>"` when its emitter takes
// it, and the printer emits the same kernel for the tag.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/IndexPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "codegen/SymbolicShapes.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaKernel.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

std::string beginElementKernel(CudaKernel &k, Operation *op,
                               llvm::StringRef name, int64_t total,
                               const std::string &params) {
  k.name = name.str();
  k.sourceNodes = sourceNodeNames(op);
  constexpr unsigned block = 256;
  int64_t blocks = std::min<int64_t>((total + block - 1) / block, 65535);
  k.grid[0] = static_cast<unsigned>(std::max<int64_t>(blocks, 1));
  k.block[0] = block;
  // A run-time batch: the element count and the grid follow it (the
  // bound's batch is the result's first dim).
  if (std::string batch = runTimeBatchOf(op); !batch.empty()) {
    assert(cudaOpKernelTakesRunTimeSizes(op) &&
           "a run-time batch for a kernel that does not take it");
    int64_t bound =
        cast<RankedTensorType>(op->getResult(0).getType()).getDimSize(0);
    std::string perBatch = llLiteral(total / bound);
    k.runTimeElements = "(long long)(" + batch + ") * " + perBatch;
    k.runTimeGrid[0] = "std::min<int64_t>(std::max<int64_t>(int64_t(1), (" +
                       batch + " * " + perBatch + " + " +
                       std::to_string(block - 1) + ") / " +
                       std::to_string(block) + "), " +
                       std::to_string(k.grid[0]) + ")";
  }
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     std::to_string(block) + ")\n" + k.name + "(" + params +
                     sizeParameterList(op) + ")";
  k.declaration = head + ";";
  return head;
}

std::string elementLoopHead(const CudaKernel &k, int64_t total) {
  std::string count = k.runTimeElements.empty() ? llLiteral(total)
                                                : k.runTimeElements;
  return "  const long long kiln_n = (long long)gridDim.x * blockDim.x;\n"
         "  for (long long kiln_i = (long long)blockIdx.x * blockDim.x + "
         "threadIdx.x; kiln_i < " +
         count + "; kiln_i += kiln_n) {\n";
}

std::string runTimeBatchOf(Operation *op) {
  if (op->getNumResults() == 0)
    return "";
  std::vector<std::string> dims = symbolicDimsOf(op->getResult(0));
  return dims.empty() || dims[0].empty() ? ""
                                         : parseSizeExpr(dims[0]).cExpr();
}

std::string sizeParameterList(Operation *op) {
  std::string s;
  for (const std::string &symbol : kernelSizeSymbols(op))
    s += ", int64_t " + sizeSymbolCName(symbol);
  return s;
}

std::string llLiteral(int64_t v) { return std::to_string(v) + "LL"; }

ProductAccumulator::ProductAccumulator(codegen::ScalarType t, bool f64ForFloats)
    : element(t) {
  bool isFloat = codegen::isFloatType(t);
  std::string compute = codegen::computeCType(t);
  type = !isFloat ? "unsigned long long"
         : (f64ForFloats || t == codegen::ScalarType::F64) ? "double"
                                                           : "float";
  load = isFloat ? "(" + type + ")(" + compute + ")"
                 : "(unsigned long long)(long long)";
}

std::string ProductAccumulator::store(const std::string &acc) const {
  std::string storage = codegen::storageCType(element);
  return codegen::isFloatType(element)
             ? storage + "((" + codegen::computeCType(element) + ")" + acc + ")"
             : "(" + storage + ")(long long)" + acc;
}

std::string opKernelComment(const CudaKernel &k, const std::string &what,
                            const std::string &mapping) {
  std::string s = "// " + k.name + ": " + what + "\n// ONNX nodes:";
  for (const std::string &node : k.sourceNodes)
    s += " " + node;
  return s + "\n// mapping: " + mapping + "\n";
}

std::string wrapAndCheckIndex(const std::string &var, int64_t size,
                              const std::string &indent) {
  return codegen::printCheckedIndex(
      var, size, "__trap(); // an index out of range: a bad input", indent);
}

namespace {

/// One op family the CUDA target prints a kernel for: which ops, the name's
/// letter and stem, and the emitter.
struct OpKernelEntry {
  bool (*matches)(Operation *);
  CudaOpKernelKind kind;
  std::optional<CudaKernel> (*emit)(Operation *, llvm::StringRef);
  /// Whether the kernel takes the run-time sizes of `op`
  /// (cudaOpKernelTakesRunTimeSizes); null: it takes none.
  bool (*takesRunTimeSizes)(Operation *) = nullptr;
};

/// True when only the first dims of `op`'s operands and results follow
/// size symbols: a kernel that never uses that dim's extent (its launch
/// does) then serves any batch.
bool onlyFirstDims(Operation *op) {
  auto onlyFirst = [](Value v) {
    std::vector<std::string> dims = symbolicDimsOf(v);
    for (size_t d = 1; d < dims.size(); ++d)
      if (!dims[d].empty())
        return false;
    return true;
  };
  return llvm::all_of(op->getOperands(), onlyFirst) &&
         llvm::all_of(op->getResults(), onlyFirst);
}

/// Concat indexes its outer dims by the quotient of the flat position: any
/// batch, unless it concatenates along the batch.
bool concatServesAnyBatch(Operation *op) {
  return cast<ConcatOp>(op).getAxis() != 0 && onlyFirstDims(op);
}

/// Resize decomposes the flat position innermost first and reads its input
/// at the output's batch index: any batch, when the batch is not resized
/// (the input's and the result's first dims follow the same symbols).
bool resizeServesAnyBatch(Operation *op) {
  std::vector<std::string> in = symbolicDimsOf(op->getOperand(0)),
                           out = symbolicDimsOf(op->getResult(0));
  return onlyFirstDims(op) && !in.empty() && !out.empty() && in[0] == out[0];
}

template <typename... Ops> bool isOneOf(Operation *op) {
  return isa<Ops...>(op);
}

const OpKernelEntry kOpKernels[] = {
    {isOneOf<MaxPoolOp>, {'p', "max_pool"}, emitCudaPoolKernel, onlyFirstDims},
    {isOneOf<AvgPoolOp>, {'v', "avg_pool"}, emitCudaPoolKernel, onlyFirstDims},
    {isOneOf<ConcatOp>,
     {'c', "concat"},
     emitCudaConcatKernel,
     concatServesAnyBatch},
    {isOneOf<AttentionOp, PackedAttentionOp>,
     {'a', "attention"},
     emitCudaAttentionKernel,
     cudaAttentionTakesRunTimeSizes},
    {isOneOf<AttentionGradOp, PackedAttentionGradOp>,
     {'y', "attention_grad"},
     emitCudaAttentionGradKernel},
    {isOneOf<GatherOp>, {'g', "gather"}, emitCudaGatherKernel},
    {isOneOf<GatherElementsOp>,
     {'e', "gather_elements"},
     emitCudaGatherElementsKernel},
    {isOneOf<ArgMaxOp>, {'x', "argmax"}, emitCudaArgReduceKernel},
    {isOneOf<ArgMinOp>, {'n', "argmin"}, emitCudaArgReduceKernel},
    {isOneOf<CumSumOp>, {'s', "cumsum"}, emitCudaScanKernel},
    {isOneOf<CumProdOp>, {'q', "cumprod"}, emitCudaScanKernel},
    {isOneOf<TriluOp>, {'w', "trilu"}, emitCudaTriluKernel},
    {isOneOf<HardmaxOp>, {'h', "hardmax"}, emitCudaHardmaxKernel},
    {isOneOf<EinsumOp>, {'i', "einsum"}, emitCudaEinsumKernel},
    {isOneOf<MatMulOp>, {'m', "matmul"}, emitCudaMatmulKernel},
    {isOneOf<PadOp>, {'b', "pad"}, emitCudaPadKernel},
    {isOneOf<GatherNDOp>, {'j', "gather_nd"}, emitCudaGatherNDKernel},
    {isOneOf<ScatterNDOp>, {'o', "scatter_nd"}, emitCudaScatterNDKernel},
    {isOneOf<ScatterElementsOp>,
     {'z', "scatter_elements"},
     emitCudaScatterElementsKernel},
    {isOneOf<ResizeOp>, {'r', "resize"}, emitCudaResizeKernel,
     resizeServesAnyBatch},
    {isOneOf<ConvTransposeOp>,
     {'t', "conv_transpose"},
     emitCudaConvTransposeKernel},
    {cudaDepthwiseConvQualifies,
     {'d', "depthwise_conv"},
     emitCudaDepthwiseConvKernel},
    {isOneOf<GRURecurrenceOp>, {'u', "gru"}, emitCudaGRURecurrenceKernel},
    {isOneOf<LSTMRecurrenceOp>, {'l', "lstm"}, emitCudaLSTMRecurrenceKernel},
};

const OpKernelEntry *findOpKernel(Operation *op) {
  for (const OpKernelEntry &e : kOpKernels)
    if (e.matches(op))
      return &e;
  return nullptr;
}

} // namespace

std::optional<CudaOpKernelKind> cudaOpKernelKind(Operation *op) {
  if (const OpKernelEntry *e = findOpKernel(op))
    return e->kind;
  return std::nullopt;
}

bool cudaOpKernelTakesRunTimeSizes(Operation *op) {
  const OpKernelEntry *e = findOpKernel(op);
  return e && e->takesRunTimeSizes && e->takesRunTimeSizes(op);
}

std::optional<CudaKernel> emitCudaOpKernel(Operation *op,
                                           llvm::StringRef name) {
  if (const OpKernelEntry *e = findOpKernel(op))
    return e->emit(op, name);
  return std::nullopt;
}

} // namespace kiln
