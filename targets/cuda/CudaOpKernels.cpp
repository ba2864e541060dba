//===- CudaOpKernels.cpp - The kernels printed for single top-level ops ---===//
//
// This file implements the one table of the ops that the CUDA target prints
// a kernel for directly, outside the kernel IR (CudaKernel.h): each op's
// kernel kind (name letter and stem) and its emitter. kiln-lower-cuda tags
// such an op `kiln.kernel = "<letter><N>_<stem>"` when its emitter takes
// it, and the printer emits the same kernel for the tag.
//
//===----------------------------------------------------------------------===//

#include "codegen/MemoryPlanner.h"
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
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     std::to_string(block) + ")\n" + k.name + "(" + params +
                     ")";
  k.declaration = head + ";";
  return head;
}

std::string elementLoopHead(int64_t total) {
  return "  const long long kiln_n = (long long)gridDim.x * blockDim.x;\n"
         "  for (long long kiln_i = (long long)blockIdx.x * blockDim.x + "
         "threadIdx.x; kiln_i < " +
         std::to_string(total) + "LL; kiln_i += kiln_n) {\n";
}

std::optional<CudaOpKernelKind> cudaOpKernelKind(Operation *op) {
  if (isa<MaxPoolOp>(op))
    return CudaOpKernelKind{'p', "max_pool"};
  if (isa<ConcatOp>(op))
    return CudaOpKernelKind{'c', "concat"};
  if (isa<AttentionOp, PackedAttentionOp>(op))
    return CudaOpKernelKind{'a', "attention"};
  if (isa<GatherOp>(op))
    return CudaOpKernelKind{'g', "gather"};
  if (isa<ResizeOp>(op))
    return CudaOpKernelKind{'r', "resize"};
  if (isa<ConvTransposeOp>(op))
    return CudaOpKernelKind{'t', "conv_transpose"};
  if (isa<GRURecurrenceOp>(op))
    return CudaOpKernelKind{'u', "gru"};
  return std::nullopt;
}

std::optional<CudaKernel> emitCudaOpKernel(Operation *op,
                                           llvm::StringRef name) {
  if (isa<MaxPoolOp>(op))
    return emitCudaMaxPoolKernel(op, name);
  if (isa<ConcatOp>(op))
    return emitCudaConcatKernel(op, name);
  if (isa<AttentionOp, PackedAttentionOp>(op))
    return emitCudaAttentionKernel(op, name);
  if (isa<GatherOp>(op))
    return emitCudaGatherKernel(op, name);
  if (isa<ResizeOp>(op))
    return emitCudaResizeKernel(op, name);
  if (isa<ConvTransposeOp>(op))
    return emitCudaConvTransposeKernel(op, name);
  if (isa<GRURecurrenceOp>(op))
    return emitCudaGRURecurrenceKernel(op, name);
  return std::nullopt;
}

} // namespace kiln
