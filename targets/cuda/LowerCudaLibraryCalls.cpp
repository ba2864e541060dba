//===- LowerCudaLibraryCalls.cpp - cuBLASLt/cuDNN calls with their folds --===//
//
// This file implements kiln-lower-cuda, the CUDA target's lowering pass. It
// runs on a fused graph and decides how every top-level step runs on the GPU,
// in the IR (passes/LoweringPasses.h), so the wrapper emitter decides nothing:
//
//  - A kiln.matmul that cuBLASLt takes (f32/f16/bf16, matrices with batches
//    that are equal or broadcast from one matrix) becomes
//    kiln.library_call "cublaslt.matmul" with its GEMM geometry in `params`.
//    An operand that is a transpose of the last two dims (of a weight: Linear
//    layers export as MatMul(x, Transpose(W)); of an activation, also through
//    a reshape to a matrix: weight gradients x^T g) is read in
//    place: `transpose_a/b`. A batch of row-major
//    A matrices times one B is one taller GEMM. When the matmul's only user
//    is a kiln.fusion computing `mm + bias`, `relu(mm)` or `relu(mm + bias)`
//    of a single GEMM, cuBLASLt's epilogue computes it: the call replaces the
//    fusion. So does `gelu_tanh(mm [+ bias])` when the fusion computes the
//    tanh approximation op for op (GPT-2's 0.5 x (1 + tanh(sqrt(2/pi) (x +
//    0.044715 x^3))), as exported): cuBLASLt's GELU epilogue is exactly that
//    form. ONNX's exact (erf) Gelu is never folded into it.
//  - A kiln.conv that cuDNN takes (f32/f16/bf16, 1 to 3 spatial dims, static
//    positive shapes, symmetric pads), unless it is a depthwise convolution
//    the target prints a kernel for, becomes "cudnn.conv"; when its only
//    user is a fusion computing relu(conv [+ per-channel bias] [+ residual]),
//    cuDNN's fused convolution computes it (epilogue `relu`, `bias_relu`,
//    `residual_relu` or `bias_residual_relu`). A channels-last convolution
//    (layout = "nhwc", from kiln-channels-last) keeps that in `params`.
//  - An op the CUDA printer prints a kernel for (CudaOpKernels.cpp's table:
//    max_pool, concat, attention, packed_attention and their gradients,
//    gather, resize, conv_transpose, depthwise convolutions,
//    gru_recurrence, lstm_recurrence) is tagged with the name of its generated
//    kernel (kiln.kernel), `<letter><N>_<stem>`.
//  - A reshape, flatten, squeeze or unsqueeze outside a fusion (a graph
//    output included) is an alias of its operand (kiln.alias): no step, no
//    copy (the memory planner places an output view's operand in the
//    output buffer when it can).
//  - A kiln.custom_call whose library (loaded with --custom-ops) has a CUDA
//    kernel, with every result used, runs that kernel on the device buffers
//    on the package's stream (kiln.reference = "device": no copies, CUDA
//    graphs still capture the run).
//  - Every other op outside a fusion runs the runtime's reference kernel on
//    the host (kiln.reference = "host"): operands copied from the device,
//    results copied back.
//
// It leaves kiln.constant, kiln.fusion and func.return alone.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"
#include "passes/LibraryCalls.h"
#include "passes/LibraryEpilogues.h"
#include "passes/LoweringPasses.h"
#include "targets/cuda/CudaKernel.h"
#include "targets/cuda/CudaTarget.h"

#include "kiln/runtime/CustomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln {
namespace {

/// Whether a custom op's step runs its library's CUDA kernel on the device
/// buffers: the library loaded at compile time has one, and every result is
/// used (has a planned buffer for the kernel to write).
bool customCallRunsOnDevice(Operation *op) {
  auto call = dyn_cast<CustomCallOp>(op);
  if (!call)
    return false;
  CustomOpEntry entry =
      findCustomOp(call.getDomain().str(), call.getOpType().str());
  return entry.op && entry.op->cuda_kernel &&
         llvm::all_of(op->getResults(),
                      [](Value v) { return !v.use_empty(); });
}

/// cuBLASLt's workspace: 32 MiB, what NVIDIA recommends for Hopper.
constexpr int64_t kCublasLtWorkspaceBytes = int64_t(32) << 20;

bool isCudaFloat(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

/// Lowers `mm` to cuBLASLt when it qualifies.
void lowerMatmul(MatMulOp mm) {
  std::optional<Gemm> g = gemmOf(mm, isCudaFloat);
  if (!g)
    return;
  // Only a single GEMM takes an epilogue; of two matmuls added together the
  // one computed last folds the add (the other is its bias).
  std::optional<Epilogue> epilogue;
  if (g->batch == 1)
    epilogue = matmulEpilogue(mm.getResult());
  if (epilogue && epilogue->bias)
    if (auto other = epilogue->bias.getDefiningOp<MatMulOp>())
      if (other->getBlock() == mm->getBlock() && mm->isBeforeInBlock(other) &&
          other.getResult().hasOneUse())
        epilogue.reset();
  FusionOp fusion =
      epilogue ? cast<FusionOp>(*mm.getResult().getUsers().begin()) : nullptr;
  Builder b(mm.getContext());
  NamedAttrList params;
  params.append("batch", b.getI64IntegerAttr(g->batch));
  params.append("k", b.getI64IntegerAttr(g->k));
  params.append("m", b.getI64IntegerAttr(g->m));
  params.append("n", b.getI64IntegerAttr(g->n));
  params.append("stride_a", b.getI64IntegerAttr(g->strideA));
  params.append("stride_b", b.getI64IntegerAttr(g->strideB));
  Operation *ta = g->transA ? mm.getOperand(0).getDefiningOp() : nullptr;
  Operation *tb = g->transB ? mm.getOperand(1).getDefiningOp() : nullptr;
  createLibraryCall(mm, fusion, "cublaslt.matmul", {{"a", g->a}, {"b", g->b}},
                    epilogue ? &*epilogue : nullptr, g->transA, g->transB,
                    kCublasLtWorkspaceBytes, params);
  // A transpose that every reader now reads through is gone.
  if (ta && ta->use_empty())
    ta->erase();
  if (tb && tb != ta && tb->use_empty())
    tb->erase();
}

/// Lowers `conv` to cuDNN when it qualifies.
void lowerConv(ConvOp conv) {
  std::optional<NamedAttrList> params =
      convLibraryParams(conv, isCudaFloat, /*symmetricPads=*/true);
  if (!params)
    return;
  std::optional<Epilogue> epilogue = convEpilogue(conv.getResult());
  FusionOp fusion =
      epilogue ? cast<FusionOp>(*conv.getResult().getUsers().begin()) : nullptr;
  createLibraryCall(conv, fusion, "cudnn.conv",
                    {{"x", conv.getOperand(0)}, {"w", conv.getOperand(1)}},
                    epilogue ? &*epilogue : nullptr, false, false, 0, *params);
}

struct LowerCudaPass
    : public PassWrapper<LowerCudaPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerCudaPass)

  StringRef getArgument() const final { return "kiln-lower-cuda"; }
  StringRef getDescription() const final {
    return "CUDA target lowering: cuBLASLt and cuDNN library calls with "
           "their transposes and epilogues folded in, kernels of single "
           "ops, host reference steps";
  }
  void runOnOperation() override {
    func::FuncOp graph = getOperation();
    if (graph.isExternal())
      return;
    Block &body = graph.getBody().front();
    // Library calls, in program order (an epilogue's fusion comes later).
    // Lowering one erases the fusion its epilogue replaces and the
    // transposes it reads through, so the calls are collected first.
    SmallVector<Operation *> calls;
    // A depthwise convolution is a kernel the target prints, not cuDNN's.
    for (Operation &op : body)
      if (isa<MatMulOp>(op) ||
          (isa<ConvOp>(op) && !cudaDepthwiseConvQualifies(&op)))
        calls.push_back(&op);
    for (Operation *op : calls) {
      if (auto mm = dyn_cast<MatMulOp>(op))
        lowerMatmul(mm);
      else
        lowerConv(cast<ConvOp>(op));
    }
    // What is left: kernels of single ops, or reference kernels on the host.
    Builder b(&getContext());
    llvm::StringMap<int> counts; // Kernels of each kind so far.
    for (Operation &op : body) {
      if (isa<ConstantOp, FusionOp, LibraryCallOp, func::ReturnOp>(op))
        continue;
      if (std::optional<CudaOpKernelKind> kind = cudaOpKernelKind(&op)) {
        int &count = counts[kind->stem];
        std::string name = std::string(1, kind->letter) +
                           std::to_string(count) + "_" + kind->stem.str();
        if (emitCudaOpKernel(&op, name)) {
          op.setAttr(kKernelAttr, b.getStringAttr(name));
          ++count;
          continue;
        }
      }
      if (isAliasingView(&op)) {
        op.setAttr(kAliasAttr, b.getUnitAttr());
        continue;
      }
      op.setAttr(kReferenceAttr, b.getStringAttr(customCallRunsOnDevice(&op)
                                                     ? "device"
                                                     : "host"));
    }
  }
};

} // namespace

std::unique_ptr<Pass> createLowerCudaPass() {
  return std::make_unique<LowerCudaPass>();
}

} // namespace kiln
