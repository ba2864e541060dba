//===- CudaAttentionKernel.h - Flash attention, shared parts ----*- C++ -*-===//
//
// This file declares what the flash-attention kernels share: the geometry
// of a kiln.attention / kiln.packed_attention that CudaAttentionKernel.cpp
// reads and checks, and the f32 kernel's emitter (CudaAttentionF32Kernel.cpp)
// it calls for f32 operands.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGETS_CUDA_CUDAATTENTIONKERNEL_H
#define KILN_TARGETS_CUDA_CUDAATTENTIONKERNEL_H

#include "targets/cuda/CudaKernel.h"

#include <cstdint>

namespace kiln {

/// The largest head dimension the f32 kernel takes (its shared memory
/// stays within the 48 KiB of static arrays).
constexpr int64_t kMaxF32AttentionHeadDim = 64;

/// A flash-attention op's geometry: [b, h, t, d] (q, k, v and the result
/// [B, H, T, D]; packed: q, k and v the heads of one [B, T, 3 * H * D]
/// tensor, the result [B, T, H, D]), the causal mask and the scores' scale.
struct AttentionGeometry {
  int64_t b = 0, h = 0, t = 0, d = 0;
  bool packed = false, causal = false;
  float scale = 1.0f;
};

/// The f32 (FFMA) flash-attention kernel for `g` (d a multiple of 16 up to
/// 64), `k` carrying its name and source nodes.
CudaKernel emitCudaAttentionF32Kernel(const AttentionGeometry &g, CudaKernel k);

} // namespace kiln

#endif // KILN_TARGETS_CUDA_CUDAATTENTIONKERNEL_H
