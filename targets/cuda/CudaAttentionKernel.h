//===- CudaAttentionKernel.h - Flash attention, shared parts ----*- C++ -*-===//
//
// This file declares what the flash-attention kernels share: the geometry
// of a kiln.attention / kiln.packed_attention that CudaAttentionKernel.cpp
// reads and checks, the f32 kernel's emitter (CudaAttentionF32Kernel.cpp)
// it calls for f32 operands, and the tensor-core helpers the f16/bf16
// forward and backward (CudaAttentionGradKernel.cpp) kernels print.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGETS_CUDA_CUDAATTENTIONKERNEL_H
#define KILN_TARGETS_CUDA_CUDAATTENTIONKERNEL_H

#include "targets/cuda/CudaKernel.h"

#include <cstdint>
#include <string>

namespace kiln {

/// The largest head dimension the f32 kernel takes (its shared memory
/// stays within the 48 KiB of static arrays).
constexpr int64_t kMaxF32AttentionHeadDim = 64;

/// The largest head dimension the backward kernel (kiln.attention_grad,
/// f16/bf16) takes: its per-thread accumulators of dk and dv (16 rows of D
/// each per warp) stay in registers up to 64.
constexpr int64_t kMaxAttentionGradHeadDim = 64;

/// A flash-attention op's geometry: [b, h, t, d] (q, k, v and the result
/// [B, H, T, D]; packed: q, k and v the heads of one [B, T, 3 * H * D]
/// tensor, the result [B, T, H, D]; packed and seqFirst: [T, B, 3 * H * D]
/// and [T, B, H, D]), the causal mask and the scores' scale.
struct AttentionGeometry {
  int64_t b = 0, h = 0, t = 0, d = 0;
  bool packed = false, causal = false, seqFirst = false;
  float scale = 1.0f;
  /// A package compiled for a range of sizes: `b` and `t` are the bound's,
  /// these the run-time batch and sequence length as C++ in the size
  /// variables (the launch follows them; the kernel reads T at run time),
  /// and `sizeParams` the kernel's size parameters after its buffers
  /// (sizeParameterList); "" when static. Not with seqFirst.
  std::string runTimeBatch, runTimeSeq, sizeParams;

  /// The grid: [ceil(T / tile), B * H], at run time where the sizes are.
  void setGrid(CudaKernel &k, int64_t tile) const {
    k.grid[0] = static_cast<unsigned>((t + tile - 1) / tile);
    k.grid[1] = static_cast<unsigned>(b * h);
    if (!runTimeSeq.empty())
      k.runTimeGrid[0] = "((" + runTimeSeq + ") + " +
                         std::to_string(tile - 1) + ") / " +
                         std::to_string(tile);
    if (!runTimeBatch.empty())
      k.runTimeGrid[1] = "(" + runTimeBatch + ") * " + std::to_string(h);
  }
  /// The kernel's T: a constant, or its run-time sequence length.
  std::string seqDeclaration() const {
    return runTimeSeq.empty()
               ? "  constexpr int T = " + std::to_string(t) + ";\n"
               : "  const int T = (int)(" + runTimeSeq +
                     "); // at most " + std::to_string(t) + "\n";
  }
  /// batchStride() and outBatchStride() as code (T * RS, T * OS where T is
  /// a run-time size).
  std::string batchStrideText() const {
    return runTimeSeq.empty() ? std::to_string(batchStride())
                              : "(size_t)T * RS";
  }
  std::string outBatchStrideText() const {
    return runTimeSeq.empty() ? std::to_string(outBatchStride())
                              : "(size_t)T * OS";
  }

  /// Elements from one position's q (k, v) row to the next (`RS`) and the
  /// same for the result (`OS`).
  int64_t rowStride() const {
    return packed ? 3 * h * d * (seqFirst ? b : 1) : d;
  }
  int64_t outRowStride() const {
    return packed ? h * d * (seqFirst ? b : 1) : d;
  }
  /// Elements from one batch's first q row to the next's (`BS`) and the
  /// same for the result (`OBS`), for the packed forms.
  int64_t batchStride() const { return seqFirst ? 3 * h * d : t * rowStride(); }
  int64_t outBatchStride() const {
    return seqFirst ? h * d : t * outRowStride();
  }
};

/// The f32 (FFMA) flash-attention kernel for `g` (d a multiple of 16 up to
/// 64), `k` carrying its name and source nodes.
CudaKernel emitCudaAttentionF32Kernel(const AttentionGeometry &g, CudaKernel k);

/// Replaces every `from` in `text` by `to`.
void replaceAllText(std::string &text, const std::string &from,
                    const std::string &to);

/// The tensor-core helpers of the flash-attention kernel `kernel`, for
/// `mmaType` "bf16" or "f16": `<kernel>_mma` (one mma.sync m16n8k16, f32
/// accumulators), `<kernel>_ldsm` (the B fragments of two k steps of a
/// row-major [n][k] shared-memory tile, one ldmatrix.x4), `<kernel>_ldsm_t`
/// (the B fragments of two 8-column tiles of a row-major [k][n] tile, one
/// ldmatrix.x4.trans) and
/// `<kernel>_pack2` (two floats rounded into one 32-bit register, the first
/// in the low half). `body`'s `kiln_mma(`, `kiln_ldsm(`, `kiln_ldsm_t(` and
/// `kiln_pack2(` are renamed to them, so several kernels share kernels.cu.
std::string attentionMmaHelpers(std::string &body, const std::string &kernel,
                                const std::string &mmaType);

} // namespace kiln

#endif // KILN_TARGETS_CUDA_CUDAATTENTIONKERNEL_H
