//===- CudaAttentionGradKernel.cpp - Flash attention's backward kernel ----===//
//
// This file implements the CUDA kernel of a top-level kiln.attention_grad
// or kiln.packed_attention_grad (formed by kiln-autodiff's rule for a
// kiln.attention / kiln.packed_attention): flash attention's backward pass
// with tensor-core MMA. The probabilities are rebuilt per tile from q, k and
// the forward's log-sum-exp (P = exp2(scale log2(e) q k^T - lse log2(e))),
// so no [T, T] tensor reaches memory; delta (each query row's
// sum(grad * output)) comes in as an operand, computed by fused kiln ops.
//
//   grid  [ceil(T / 64), B * H, 2], block 128 (4 warps). Two kinds of
//         block, so no two blocks write the same element (no atomics, the
//         same result every run):
//   z = 0 a block per 64 keys, a warp per 16 of them: dK and dV in
//         registers, over the query tiles (with `causal`, from the
//         diagonal tile on), Q and dO tiles through shared memory (two
//         buffers: the next tile's cp.async copies overlap this tile's
//         products):
//           S^T  = K Q^T,  P^T = exp2(S^T scale log2(e) - lse log2(e))
//           dV  += P^T dO, dP^T = V dO^T, dS^T = P^T (dP^T - delta)
//           dK  += dS^T Q                       (dK scaled once, at the end)
//   z = 1 a block per 64 queries, a warp per 16 of them: dQ in registers,
//         over the key tiles (with `causal`, up to the diagonal), K and V
//         tiles through shared memory (two buffers, as above):
//           S = Q K^T, P, dP = dO V^T, dS = P (dP - delta), dQ += dS K
//   Every product is mma.sync m16n8k16 (f16/bf16 inputs, f32
//   accumulators); P and dS are rounded to the input type as MMA operands,
//   as FlashAttention-2 does. The dQ blocks recompute S and dP (7 products
//   a tile pair instead of FlashAttention-2's 5 with atomic dQ updates).
//
// Requirements (kiln-cuda-attention{training} forms only such attention):
// f16/bf16, static shapes, Tq = Tk = T (any), D a multiple of 16 up to 64
// (kMaxAttentionGradHeadDim: the accumulators of dK and dV stay in
// registers); contiguous [B, H, T, D] operands and results, or, packed, q,
// k and v (and dq, dk, dv) the heads of one [B, T, 3 * H * D] tensor and
// grad [B, T, H, D].
//
//===----------------------------------------------------------------------===//

#include "codegen/MemoryPlanner.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaAttentionKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdio>
#include <string>

using namespace mlir;

namespace kiln {

namespace {

/// The kernel body (the part after the constants), shared by both forms:
/// `q`, `k`, `v`, `dO`, `dq`, `dk`, `dv` point at the block's (batch, head),
/// rows RS (q, k, v and their gradients) and GS (dO) elements apart;
/// `lse` and `delta` at its T rows.
const char *const kGradBody =
    R"cu(  // Two buffers of each tile: the next one is copied (cp.async) while the
  // current one is used.
  __shared__ __align__(16) uint16_t as[2][64][LD]; // Q (z = 0) or K (z = 1)
  __shared__ __align__(16) uint16_t bs[2][64][LD]; // dO (z = 0) or V (z = 1)
  __shared__ float ls[2][64], ds[2][64];           // the query tile's lse, delta
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t4 = lane & 3;
  const int tiles = (T + 63) / 64;
  // Starts copying 64 rows of D from `src` (rows `stride` apart) from row
  // `first` into `dst`; rows past T are zeros.
  auto loadTile = [&](uint16_t (*dst)[LD], const uint16_t *src, int stride,
                      int first) {
    for (int c = threadIdx.x; c < 64 * D / 8; c += 128) {
      const int r = c / (D / 8), col = (c % (D / 8)) * 8;
      const bool valid = first + r < T;
      kiln_cp16(&dst[r][col],
                valid ? src + (size_t)(first + r) * stride + col : src, valid);
    }
  };
  // A fragments of 16 rows from `row0` of `src` (rows past T: zeros).
  auto loadRows = [&](uint32_t (&a)[D / 16][4], const uint16_t *src,
                      int stride, int row0) {
    const bool r0 = row0 + g < T, r1 = row0 + g + 8 < T;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const uint16_t *p0 = src + (size_t)(row0 + g) * stride + kk * 16 + 2 * t4;
      const uint16_t *p1 = p0 + 8 * (size_t)stride;
      a[kk][0] = r0 ? *reinterpret_cast<const uint32_t *>(p0) : 0u;
      a[kk][1] = r1 ? *reinterpret_cast<const uint32_t *>(p1) : 0u;
      a[kk][2] = r0 ? *reinterpret_cast<const uint32_t *>(p0 + 8) : 0u;
      a[kk][3] = r1 ? *reinterpret_cast<const uint32_t *>(p1 + 8) : 0u;
    }
  };
  // c[j] (16 x 8 each, j < 8) = A (16 x D fragments) times the 64 rows of
  // `tile` transposed: c[j][.] += A . tile[j * 8 + n].
  auto rowsTimesTileT = [&](float (&c)[8][4], const uint32_t (&a)[D / 16][4],
                            uint16_t (*tile)[LD]) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.f;
      if constexpr (D % 32 == 0) {
        // Two k steps' B fragments per ldmatrix.
#pragma unroll
        for (int kk = 0; kk < D / 16; kk += 2) {
          uint32_t b[4];
          kiln_ldsm(b, &tile[j * 8 + (lane & 7)]
                            [(kk + (lane >> 4)) * 16 + ((lane >> 3) & 1) * 8]);
          kiln_mma(c[j], a[kk], b[0], b[1]);
          kiln_mma(c[j], a[kk + 1], b[2], b[3]);
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          const uint32_t b0 = *reinterpret_cast<const uint32_t *>(
              &tile[j * 8 + g][kk * 16 + 2 * t4]);
          const uint32_t b1 = *reinterpret_cast<const uint32_t *>(
              &tile[j * 8 + g][kk * 16 + 2 * t4 + 8]);
          kiln_mma(c[j], a[kk], b0, b1);
        }
      }
    }
  };
  // acc (16 x D) += p (16 x 64, the accumulators of c[8], rounded) times
  // the 64 rows of `tile` (B fragments by ldmatrix .trans, two column
  // tiles at a time).
  auto accumulateTimesTile = [&](float (&acc)[D / 8][4], const float (&p)[8][4],
                                 uint16_t (*tile)[LD]) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      uint32_t pa[4] = {kiln_pack2(p[2 * kk][0], p[2 * kk][1]),
                        kiln_pack2(p[2 * kk][2], p[2 * kk][3]),
                        kiln_pack2(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                        kiln_pack2(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
      for (int n = 0; n < D / 8; n += 2) {
        uint32_t b[4];
        kiln_ldsm_t(b, &tile[kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8]
                            [(n + (lane >> 4)) * 8]);
        kiln_mma(acc[n], pa, b[0], b[1]);
        kiln_mma(acc[n + 1], pa, b[2], b[3]);
      }
    }
  };
  // Stores 16 rows from `row0` of acc * factor (rows past T skipped).
  auto storeRows = [&](uint16_t *dst, const float (&acc)[D / 8][4], int row0,
                       float factor) {
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const int c = n * 8 + 2 * t4;
      if (row0 + g < T)
        *reinterpret_cast<uint32_t *>(dst + (size_t)(row0 + g) * RS + c) =
            kiln_pack2(acc[n][0] * factor, acc[n][1] * factor);
      if (row0 + g + 8 < T)
        *reinterpret_cast<uint32_t *>(dst + (size_t)(row0 + g + 8) * RS + c) =
            kiln_pack2(acc[n][2] * factor, acc[n][3] * factor);
    }
  };
  float s[8][4], dp[8][4];
  if (blockIdx.z == 0) {
    // dK and dV of the warp's 16 keys.
    const int key0 = blockIdx.x * 64 + warp * 16;
    uint32_t ka[D / 16][4], va[D / 16][4];
    loadRows(ka, k, RS, key0);
    loadRows(va, v, RS, key0);
    float dk[D / 8][4], dv[D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dk[n][e] = dv[n][e] = 0.f;
    // Query tile `qt` into buffer `b`: Q and dO copied, lse and delta.
    auto stage = [&](int qt, int b) {
      loadTile(as[b], q, RS, qt * 64);
      loadTile(bs[b], dO, GS, qt * 64);
      if (threadIdx.x < 64) {
        const int row = qt * 64 + threadIdx.x;
        // Queries past T: lse +inf makes their P zero.
        ls[b][threadIdx.x] = row < T ? lse[row] * 1.4426950408889634f : INFINITY;
        ds[b][threadIdx.x] = row < T ? delta[row] : 0.f;
      }
      kiln_cp_commit();
    };
    const int firstTile = kCausal ? (int)blockIdx.x : 0;
    stage(firstTile, 0);
    for (int qt = firstTile; qt < tiles; ++qt) {
      const int b = (qt - firstTile) & 1;
      // The next tile's copies start; this tile's (every thread's) are done.
      if (qt + 1 < tiles)
        stage(qt + 1, b ^ 1);
      else
        kiln_cp_commit();
      kiln_cp_wait_previous();
      __syncthreads();
      uint16_t (*qs)[LD] = as[b], (*dos)[LD] = bs[b];
      const float *lsb = ls[b], *dsb = ds[b];
      // S^T = K Q^T, then P^T (keys g, g + 8 of the warp; queries in the
      // columns).
      rowsTimesTileT(s, ka, qs);
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = j * 8 + 2 * t4 + e, query = qt * 64 + col;
          float p0 = exp2f(s[j][e] * kScaleLog2 - lsb[col]);
          float p1 = exp2f(s[j][2 + e] * kScaleLog2 - lsb[col]);
          if (kCausal && key0 + g > query)
            p0 = 0.f;
          if (kCausal && key0 + g + 8 > query)
            p1 = 0.f;
          s[j][e] = p0;
          s[j][2 + e] = p1;
        }
      // dV += P^T dO.
      accumulateTimesTile(dv, s, dos);
      // dP^T = V dO^T; dS^T = P^T (dP^T - delta).
      rowsTimesTileT(dp, va, dos);
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float d0 = dsb[j * 8 + 2 * t4 + e];
          s[j][e] *= dp[j][e] - d0;
          s[j][2 + e] *= dp[j][2 + e] - d0;
        }
      // dK += dS^T Q.
      accumulateTimesTile(dk, s, qs);
      __syncthreads(); // buffer b is read before the next tile's copies
    }
    storeRows(dkOut, dk, key0, kScale);
    storeRows(dvOut, dv, key0, 1.f);
  } else {
    // dQ of the warp's 16 queries.
    // With the causal mask the last query tiles loop over the most key
    // tiles: they take the first dQ blocks (the dK/dV blocks of the first
    // key tiles, the longest there, come first already).
    const int qtile =
        kCausal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
    const int row0 = qtile * 64 + warp * 16;
    uint32_t qa[D / 16][4], ga[D / 16][4];
    loadRows(qa, q, RS, row0);
    loadRows(ga, dO, GS, row0);
    const bool q0 = row0 + g < T, q1 = row0 + g + 8 < T;
    const float l0 = q0 ? lse[row0 + g] * 1.4426950408889634f : INFINITY;
    const float l1 = q1 ? lse[row0 + g + 8] * 1.4426950408889634f : INFINITY;
    const float d0 = q0 ? delta[row0 + g] : 0.f;
    const float d1 = q1 ? delta[row0 + g + 8] : 0.f;
    float dq[D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;
    const int last = kCausal ? qtile + 1 : tiles;
    // Key tile `kt` into buffer `b`: K and V copied.
    auto stage = [&](int kt, int b) {
      loadTile(as[b], k, RS, kt * 64);
      loadTile(bs[b], v, RS, kt * 64);
      kiln_cp_commit();
    };
    stage(0, 0);
    for (int kt = 0; kt < last; ++kt) {
      const int b = kt & 1;
      if (kt + 1 < last)
        stage(kt + 1, b ^ 1);
      else
        kiln_cp_commit();
      kiln_cp_wait_previous();
      __syncthreads();
      uint16_t (*ks)[LD] = as[b], (*vs)[LD] = bs[b];
      // S = Q K^T, then P (masked keys, and keys past T, zero).
      rowsTimesTileT(s, qa, ks);
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int key = kt * 64 + j * 8 + 2 * t4 + e;
          float p0 = exp2f(s[j][e] * kScaleLog2 - l0);
          float p1 = exp2f(s[j][2 + e] * kScaleLog2 - l1);
          if ((kCausal && key > row0 + g) || key >= T)
            p0 = 0.f;
          if ((kCausal && key > row0 + g + 8) || key >= T)
            p1 = 0.f;
          s[j][e] = p0;
          s[j][2 + e] = p1;
        }
      // dP = dO V^T; dS = P (dP - delta).
      rowsTimesTileT(dp, ga, vs);
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          s[j][e] *= dp[j][e] - d0;
          s[j][2 + e] *= dp[j][2 + e] - d1;
        }
      // dQ += dS K.
      accumulateTimesTile(dq, s, ks);
      __syncthreads(); // buffer b is read before the next tile's copies
    }
    storeRows(dqOut, dq, row0, kScale);
  }
}
)cu";

} // namespace

std::optional<CudaKernel> emitCudaAttentionGradKernel(Operation *op,
                                                      llvm::StringRef name) {
  auto plain = dyn_cast<AttentionGradOp>(op);
  auto packedOp = dyn_cast<PackedAttentionGradOp>(op);
  if (!plain && !packedOp)
    return std::nullopt;
  bool packed = packedOp != nullptr;
  // [B, H, T, D] from q (plain) or grad ([B, T, H, D], packed).
  auto gt =
      dyn_cast<RankedTensorType>(op->getOperand(packed ? 1 : 3).getType());
  if (!gt || !gt.hasStaticShape() || gt.getRank() != 4)
    return std::nullopt;
  for (Value v : op->getOperands())
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return std::nullopt;
  Type e = gt.getElementType();
  int64_t b = gt.getDimSize(0), h = gt.getDimSize(packed ? 2 : 1),
          t = gt.getDimSize(packed ? 1 : 2), d = gt.getDimSize(3);
  // The plain op's q, k and v: contiguous [B, H, T, D] each, as grad.
  if (plain && (plain.getQ().getType() != gt || plain.getK().getType() != gt ||
                plain.getV().getType() != gt))
    return std::nullopt;
  if ((!e.isBF16() && !e.isF16()) || d % 16 != 0 || d == 0 ||
      d > kMaxAttentionGradHeadDim || t < 1 || t > (int64_t(1) << 30) ||
      b * h == 0 || b * h > 65535)
    return std::nullopt;
  bool causal = (packed ? packedOp.getCausal() : plain.getCausal()) != 0;
  float scale =
      (packed ? packedOp.getScale() : plain.getScale()).convertToFloat();
  std::string storage = e.isBF16() ? "kiln_bf16" : "kiln_f16";
  std::string mmaType = e.isBF16() ? "bf16" : "f16";

  CudaKernel k;
  k.name = name.str();
  k.sourceNodes = sourceNodeNames(op);
  k.grid[0] = static_cast<unsigned>((t + 63) / 64);
  k.grid[1] = static_cast<unsigned>(b * h);
  k.grid[2] = 2;
  k.block[0] = 128;
  k.gridStride = false; // a block per key or query tile
  std::string in = "const " + storage + " *__restrict__ ";
  std::string outT = storage + " *__restrict__ ";
  std::string params =
      packed ? in + "in0, " + in +
                   "in1, const float *__restrict__ in2, "
                   "const float *__restrict__ in3, " +
                   outT + "out0"
             : in + "in0, " + in + "in1, " + in + "in2, " + in + "in3, " +
                   "const float *__restrict__ in4, const float *__restrict__ "
                   "in5, " +
                   outT + "out0, " + outT + "out1, " + outT + "out2";
  std::string head = "extern \"C\" __global__ void __launch_bounds__(128)\n" +
                     k.name + "(" + params + ")";
  k.declaration = head + ";";

  char scaleText[64];
  snprintf(scaleText, sizeof(scaleText), "%.9e", scale);
  int64_t c = h * d;
  std::string s;
  s += "// " + k.name +
       ": flash attention's backward pass, the gradients of "
       "softmax(" +
       std::string(scaleText) + " * Q K^T" + (causal ? " + causal mask" : "") +
       ") V over [" + std::to_string(b) + ", " + std::to_string(h) + ", " +
       std::to_string(t) + ", " + std::to_string(d) + "] " + mmaType +
       (packed ? ", q, k and v read from (and dq, dk, dv written into) "
                 "[B, T, 3 * H * D], grad [B, T, H, D]"
               : "") +
       "\n// ONNX nodes:";
  for (const std::string &n : k.sourceNodes)
    s += " " + n;
  s += "\n// mapping: z = 0, a block per 64 keys (dK, dV over the query "
       "tiles); z = 1, a block per 64 queries (dQ over the key tiles); a warp "
       "per 16 rows; mma.sync m16n8k16\n";
  s += "// launch: grid [" + std::to_string(k.grid[0]) + ", " +
       std::to_string(k.grid[1]) + ", 2], block [128, 1, 1]\n";
  s += head + " {\n";
  s += "  constexpr int T = " + std::to_string(t) +
       ", D = " + std::to_string(d) + ", LD = D + 8;\n";
  s += "  constexpr int RS = " + std::to_string(packed ? 3 * c : d) +
       ", GS = " + std::to_string(packed ? c : d) + ";\n";
  s += "  constexpr bool kCausal = " + std::string(causal ? "true" : "false") +
       ";\n";
  s += "  const float kScale = " + std::string(scaleText) +
       "f, kScaleLog2 = kScale * 1.4426950408889634f;\n";
  // The block's (batch, head): its rows of each operand and result.
  if (packed) {
    s += "  const int bi = blockIdx.y / " + std::to_string(h) +
         ", hi = blockIdx.y % " + std::to_string(h) + ";\n";
    s += "  const size_t base = (size_t)bi * T * RS + hi * D;\n";
    s += "  const uint16_t *q = reinterpret_cast<const uint16_t *>(in0) + "
         "base;\n";
    s += "  const uint16_t *k = q + " + std::to_string(c) + ", *v = q + " +
         std::to_string(2 * c) + ";\n";
    s += "  const uint16_t *dO = reinterpret_cast<const uint16_t *>(in1) + "
         "(size_t)bi * T * GS + hi * D;\n";
    s += "  const float *lse = in2 + (size_t)blockIdx.y * T, *delta = in3 + "
         "(size_t)blockIdx.y * T;\n";
    s += "  uint16_t *dqOut = reinterpret_cast<uint16_t *>(out0) + base;\n";
    s += "  uint16_t *dkOut = dqOut + " + std::to_string(c) +
         ", *dvOut = dqOut + " + std::to_string(2 * c) + ";\n";
  } else {
    s += "  const size_t base = (size_t)blockIdx.y * T * D;\n";
    s += "  const uint16_t *q = reinterpret_cast<const uint16_t *>(in0) + "
         "base;\n";
    s += "  const uint16_t *k = reinterpret_cast<const uint16_t *>(in1) + "
         "base;\n";
    s += "  const uint16_t *v = reinterpret_cast<const uint16_t *>(in2) + "
         "base;\n";
    s += "  const uint16_t *dO = reinterpret_cast<const uint16_t *>(in3) + "
         "base;\n";
    s += "  const float *lse = in4 + (size_t)blockIdx.y * T, *delta = in5 + "
         "(size_t)blockIdx.y * T;\n";
    s += "  uint16_t *dqOut = reinterpret_cast<uint16_t *>(out0) + base;\n";
    s += "  uint16_t *dkOut = reinterpret_cast<uint16_t *>(out1) + base;\n";
    s += "  uint16_t *dvOut = reinterpret_cast<uint16_t *>(out2) + base;\n";
  }
  s += kGradBody;
  std::string helpers = attentionMmaHelpers(s, k.name, mmaType);
  k.definition = helpers + s;
  return k;
}

} // namespace kiln
