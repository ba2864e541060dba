//===- CudaKernel.h - CUDA kernels of fusion regions ------------*- C++ -*-===//
//
// This file declares the CUDA kernel printer's API, the contract between the
// printer, the NVRTC driver and the wrapper (docs/cuda-backend.md): each
// fusion region becomes one kernel
//
//   extern "C" __global__ void __launch_bounds__(256)
//   k0_softmax(const float *__restrict__ in0, float *__restrict__ out0);
//
// with the C++ kernel's parameters in the same order (the fusion's inputs,
// then its results; contiguous, row-major, element types as in CppKernel.h,
// kiln_f16/kiln_bf16 being 16-bit structs), and a launch shape derived from
// the kernel's iteration domain that the wrapper must launch it with.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDAKERNEL_H
#define KILN_CODEGEN_CUDAKERNEL_H

#include "codegen/KernelIR.h"
#include "ir/KilnOps.h"

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// One generated CUDA kernel and its launch shape.
struct CudaKernel {
  /// The function name (the fusion's `name`), e.g. "k3_softmax"; extern "C",
  /// so it is also the symbol to look up in the cubin.
  std::string name;
  /// The ONNX node names of the region's ops, in op order.
  std::vector<std::string> sourceNodes;
  /// The prototype, e.g. `extern "C" __global__ void __launch_bounds__(256)
  /// k3(const float *__restrict__ in0, float *__restrict__ out0);`.
  std::string declaration;
  /// The definition, preceded by a comment naming its ONNX nodes, domain and
  /// mapping; every line of it appears verbatim in kernels.cu.
  std::string definition;
  /// The grid (blocks in x, y, z) to launch with. Kernels loop over their
  /// work (grid-stride), so a smaller grid stays correct, only slower,
  /// unless `gridStride` is false.
  unsigned grid[3] = {1, 1, 1};
  /// A kernel with run-time sizes (a package compiled for a range of
  /// sizes): each grid dim that follows them as a C++ expression in the
  /// run's size variables (`kiln_s_batch`), at most grid[i]; "" where
  /// grid[i] is the grid.
  std::array<std::string, 3> runTimeGrid;
  /// An element kernel (beginElementKernel) whose batch is a run-time size:
  /// its element count as device code in the size variables; "" otherwise.
  std::string runTimeElements;
  /// False for kernels whose blocks each own a fixed tile (the
  /// flash-attention kernels): they need exactly `grid`.
  bool gridStride = true;
  /// The block (threads in x, y, z); block[0] * block[1] * block[2] is the
  /// kernel's __launch_bounds__ and must not be exceeded.
  unsigned block[3] = {1, 1, 1};
  /// Dynamic shared memory bytes to launch with. The printer uses static
  /// __shared__ arrays only (at most 48 KiB), so this is 0 today.
  unsigned sharedBytes = 0;
  /// Launches in a row per run: 1, or a recurrence's steps, each launch
  /// getting its index as a last `int kiln_step` parameter (after the
  /// results).
  unsigned launches = 1;
};

/// Prints a kernel of the kernel IR as CUDA. Every kernel the kernel IR can
/// express prints (a generic one-thread-per-parallel-index mapping backs the
/// specialized pointwise and row-reduction mappings).
CudaKernel printCudaKernel(const codegen::Kernel &kernel);

/// Why the CUDA code of `op`, a lowered step with sizes that follow size
/// symbols (codegen/SymbolicShapes.h), cannot take them at run time, or "":
/// fusions whose rows (reduced dims) keep static extents, cuBLASLt and
/// cuDNN calls, host steps; not yet the kernels of single ops.
std::string whyNotCudaRunTimeSizes(mlir::Operation *op);

/// Lowers one fusion op to the kernel IR and prints it as CUDA; emits
/// diagnostics and fails on ops or shapes the kernel IR cannot express.
mlir::FailureOr<CudaKernel> emitCudaKernel(FusionOp op);

/// The CUDA kernel of a top-level kiln.max_pool or kiln.avg_pool (static
/// shapes, float types, 1-3 spatial dims), named `name`
/// (CudaPoolKernel.cpp): pooling windows are not kernel IR, so the CUDA
/// target prints them directly. Nullopt when the op does not qualify (it
/// then runs on the host).
std::optional<CudaKernel> emitCudaPoolKernel(mlir::Operation *op,
                                             llvm::StringRef name);

/// The CUDA kernel of a top-level kiln.concat (static shapes), named
/// `name` (CudaConcatKernel.cpp); nullopt when the op does not qualify.
std::optional<CudaKernel> emitCudaConcatKernel(mlir::Operation *op,
                                               llvm::StringRef name);

/// The flash-attention kernel of a top-level kiln.attention or
/// kiln.packed_attention (f16/bf16, T a multiple of 64, D a multiple of 16
/// up to 128), named `name`
/// (CudaAttentionKernel.cpp); nullopt when the op does not qualify.
std::optional<CudaKernel> emitCudaAttentionKernel(mlir::Operation *op,
                                                  llvm::StringRef name);
/// The backward kernel of a top-level kiln.attention_grad or
/// kiln.packed_attention_grad (f16/bf16, D a multiple of 16 up to 64),
/// named `name` (CudaAttentionGradKernel.cpp); nullopt when the op does not
/// qualify.
std::optional<CudaKernel> emitCudaAttentionGradKernel(mlir::Operation *op,
                                                      llvm::StringRef name);
/// The kernel of a top-level kiln.gather (static shapes, i32/i64
/// indices read at run time; an index out of range traps), named `name`
/// (CudaGatherKernel.cpp); nullopt when the op does not qualify.
std::optional<CudaKernel> emitCudaGatherKernel(mlir::Operation *op,
                                               llvm::StringRef name);

/// The kernel of a top-level kiln.resize with constant scales or sizes
/// (static shapes, f32/f16/bf16), its interpolation tables planned at
/// compile time, named `name` (CudaResizeKernel.cpp); nullopt when the op
/// does not qualify.
std::optional<CudaKernel> emitCudaResizeKernel(mlir::Operation *op,
                                               llvm::StringRef name);

/// The direct kernel of a top-level kiln.conv_transpose (static shapes,
/// f32/f16/bf16, 1-3 spatial dims), named `name`
/// (CudaConvTransposeKernel.cpp); nullopt when the op does not qualify.
std::optional<CudaKernel> emitCudaConvTransposeKernel(mlir::Operation *op,
                                                      llvm::StringRef name);

/// Whether the CUDA target prints its own kernel for `op`, a depthwise
/// kiln.conv (2-D, static shapes, f32/f16/bf16, group = input channels,
/// one input channel per group) or a kiln.depthwise_conv, instead of
/// calling cuDNN (CudaDepthwiseConvKernel.cpp); KILN_CUDA_DEPTHWISE_KERNEL=0
/// says no.
bool cudaDepthwiseConvQualifies(mlir::Operation *op);

/// The direct kernel of such a depthwise convolution, named `name`;
/// nullopt when the op does not qualify.
std::optional<CudaKernel> emitCudaDepthwiseConvKernel(mlir::Operation *op,
                                                      llvm::StringRef name);

/// The kernel of a top-level kiln.gather_elements, kiln.argmax / argmin or
/// kiln.cumsum / cumprod (static shapes; constant scan axis): one thread
/// per output element, or per line along the axis (CudaIndexKernels.cpp),
/// named `name`; nullopt when the op does not qualify.
std::optional<CudaKernel> emitCudaGatherElementsKernel(mlir::Operation *op,
                                                       llvm::StringRef name);
std::optional<CudaKernel> emitCudaArgReduceKernel(mlir::Operation *op,
                                                  llvm::StringRef name);
std::optional<CudaKernel> emitCudaScanKernel(mlir::Operation *op,
                                             llvm::StringRef name);
/// kiln.trilu (one thread per element, k read at run time) and
/// kiln.scatter_elements (two launches: the copy, then the updates in
/// order from one thread), also CudaIndexKernels.cpp.
std::optional<CudaKernel> emitCudaTriluKernel(mlir::Operation *op,
                                              llvm::StringRef name);
/// kiln.hardmax (one thread per line along the axis), also
/// CudaIndexKernels.cpp.
std::optional<CudaKernel> emitCudaHardmaxKernel(mlir::Operation *op,
                                                llvm::StringRef name);
std::optional<CudaKernel> emitCudaScatterElementsKernel(mlir::Operation *op,
                                                        llvm::StringRef name);
/// kiln.gather_nd (one thread per output element) and kiln.scatter_nd (two
/// launches: the copy, then a thread per slice position over the tuples in
/// order), also CudaIndexKernels.cpp.
std::optional<CudaKernel> emitCudaGatherNDKernel(mlir::Operation *op,
                                                 llvm::StringRef name);
std::optional<CudaKernel> emitCudaScatterNDKernel(mlir::Operation *op,
                                                  llvm::StringRef name);

/// The kernel of a top-level kiln.einsum (static shapes, one dtype, not
/// bool): one thread per output element, a loop per summed label
/// (CudaEinsumKernel.cpp), named `name`; nullopt when it does not qualify.
std::optional<CudaKernel> emitCudaEinsumKernel(mlir::Operation *op,
                                               llvm::StringRef name);

/// The kernel of a top-level kiln.matmul that cuBLASLt does not take
/// (vectors, broadcast batches, f64, integers): one thread per output
/// element (CudaMatmulKernel.cpp), named `name`; nullopt when it does not
/// qualify.
std::optional<CudaKernel> emitCudaMatmulKernel(mlir::Operation *op,
                                               llvm::StringRef name);

/// The kernel of a top-level kiln.pad with constant pads (any mode): one
/// thread per output element (CudaPadKernel.cpp), named `name`; nullopt
/// when it does not qualify.
std::optional<CudaKernel> emitCudaPadKernel(mlir::Operation *op,
                                            llvm::StringRef name);

/// The kernel of a top-level kiln.gru_recurrence (static shapes,
/// f32/f16/bf16, any sequence lengths), launched once per step, twice with
/// linear_before_reset = 0 (CudaKernel::launches), named `name`
/// (CudaRecurrenceKernel.cpp); nullopt when the op does not qualify.
std::optional<CudaKernel> emitCudaGRURecurrenceKernel(mlir::Operation *op,
                                                      llvm::StringRef name);

/// The kernel of a top-level kiln.lstm_recurrence (static shapes,
/// f32/f16/bf16), launched once per step, named `name`
/// (CudaRecurrenceKernel.cpp); nullopt when the op does not qualify.
std::optional<CudaKernel> emitCudaLSTMRecurrenceKernel(mlir::Operation *op,
                                                       llvm::StringRef name);

/// Starts the kernel `k` of a single op with one thread per output element,
/// grid-stride over `total` elements (CudaOpKernels.cpp): its name, source
/// nodes, launch (256 threads, at most 65535 blocks) and declaration with
/// the parameter list `params`; returns the head the definition starts with.
std::string beginElementKernel(CudaKernel &k, mlir::Operation *op,
                               llvm::StringRef name, int64_t total,
                               const std::string &params);

/// The grid-stride loop over `total` elements of such a kernel (kiln_i the
/// element, kiln_n the stride), up to and including its `{`; over
/// `k.runTimeElements` instead when the op's batch is a run-time size.
std::string elementLoopHead(const CudaKernel &k, int64_t total);

/// True when the kernel the CUDA target prints for `op` (a cudaOpKernelKind
/// op) takes the sizes of `op` that follow size symbols at run time (a
/// package compiled for a range of sizes): pooling, concat (not along the
/// batch) and resize (not of the batch) any batch (the first dims; the launch follows it, the code
/// never uses it), attention any batch and sequence length
/// (cudaAttentionTakesRunTimeSizes).
bool cudaOpKernelTakesRunTimeSizes(mlir::Operation *op);

/// For attention: the batch and sequence dims may follow size symbols
/// (not with the sequence-first packed layout, whose rows interleave the
/// batches); the heads and head size are static.
bool cudaAttentionTakesRunTimeSizes(mlir::Operation *op);

/// The run-time batch of `op` (the first dim of its first result, which
/// follows the size symbols: codegen/SymbolicShapes.h) as C++ in the size
/// variables, or "" when static.
std::string runTimeBatchOf(mlir::Operation *op);

/// ", int64_t kiln_s_batch, ...": the size parameters of the kernel of
/// `op` (after its buffers, as the wrapper passes them), "" when its sizes
/// are static.
std::string sizeParameterList(mlir::Operation *op);

/// `v` as a `long long` literal of generated code ("12LL").
std::string llLiteral(int64_t v);

/// The accumulator of a single-op kernel that sums products of elements of
/// type `t` (einsum, matmul): its C type ("float", "double" for f64,
/// "unsigned long long" for integers, which wrap as the reference's), the
/// cast that reads an element into it, and the store of the sum `acc` back
/// into type `t`.
struct ProductAccumulator {
  std::string type, load;
  std::string store(const std::string &acc) const;
  codegen::ScalarType element;
  ProductAccumulator(codegen::ScalarType t, bool f64ForFloats);
};

/// The comment a single-op kernel starts with: `// <name>: <what>`, its
/// ONNX nodes, and `// mapping: <mapping>`.
std::string opKernelComment(const CudaKernel &k, const std::string &what,
                            const std::string &mapping);

/// Statements (at `indent`) that count the run-time index `var` from the
/// end when negative and trap when it is outside [0, size): a bad input
/// fails the run with a CUDA error instead of reading outside the tensor.
std::string wrapAndCheckIndex(const std::string &var, int64_t size,
                              const std::string &indent);

/// The kind of kernel the CUDA target prints directly for a top-level op:
/// its name's stem ("max_pool", "gather_elements", "depthwise_conv", ...;
/// CudaOpKernels.cpp's table lists them all) and the letter the lowering's
/// names start with (the N-th kernel of a kind is `<letter><N>_<stem>`,
/// e.g. `p0_max_pool`).
struct CudaOpKernelKind {
  char letter;
  llvm::StringRef stem;
};

/// The kind of `op`'s directly printed kernel, or nullopt for an op that has
/// none (a fusion, a library call, or an op that runs on the host).
std::optional<CudaOpKernelKind> cudaOpKernelKind(mlir::Operation *op);

/// The kernel of a top-level op the CUDA target prints directly (an op with
/// a cudaOpKernelKind), or nullopt when this op does not qualify: what the
/// lowering tags kiln.kernel and the printer emits for such a tag.
std::optional<CudaKernel> emitCudaOpKernel(mlir::Operation *op,
                                           llvm::StringRef name);

/// The prelude of kernels.cu (CudaPrelude.cpp): NVRTC has no standard
/// headers; every helper is `__device__ __forceinline__`.
std::string cudaKernelPrelude();

/// The text of kernels.cu: a banner naming `modelName`, the device prelude
/// (cudaKernelPrelude()), then every definition in order.
std::string emitCudaKernelsFile(llvm::ArrayRef<CudaKernel> kernels,
                                llvm::StringRef modelName);

} // namespace kiln

#endif // KILN_CODEGEN_CUDAKERNEL_H
