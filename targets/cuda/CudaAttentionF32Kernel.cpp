//===- CudaAttentionF32Kernel.cpp - Flash attention in f32 ----------------===//
//
// This file implements the f32 flash-attention kernel of a top-level
// kiln.attention or kiln.packed_attention (CudaAttentionKernel.cpp picks it
// for f32 operands): the same algorithm as the tensor-core kernel, on the
// CUDA cores in f32 (FFMA: results match the written-out ops within f32
// rounding; no TF32), so f32 models keep their [B, H, T, T] scores and
// probabilities out of memory too (PyTorch's f32 SDPA is the same kind of
// kernel: CUTLASS's memory-efficient attention).
//
// It is a register-blocked SIMT GEMM twice over, shaped so that a block is
// small (three of them share an SM, which hides the latencies one block
// alone cannot: ViT's [8, 6, 197, 64] is 336 blocks, all resident at once
// on 132 SMs) and each thread reads little shared memory per FMA:
//
//   grid   [ceil(T / 32), B * H], block 128 (4 warps): a block owns 32
//          queries of one (batch, head) (with `causal`, the last query tile
//          first: the longest blocks start first); thread (ty, tx) =
//          (tid / 16, tid % 16) owns query rows 4 ty .. 4 ty + 3, keys
//          tx + 16 j (j < 4) of each key tile (S: 4 x 4 scores) and D / 16
//          output columns of its rows (O: 4 x D / 16);
//   copies Q once, then per tile of 64 keys K and V, by 16-byte cp.async
//          (zeros past T), V's while S is computed, the next tile's K while
//          P V is: three barriers a tile, no register staging;
//   S      = Q K^T: per 4 d, four 16-byte reads of Q (two rows a warp:
//          broadcast) and four of K for 64 FMAs;
//   softmax online: scale, mask, the row's running max over its 16 threads
//          (shuffles), exp2 of log2(e)-scaled scores; each thread sums its
//          own keys' probabilities (the row's sum is reduced once, at the
//          end); P to shared memory, read back by the same warp;
//   O      = alpha O + P V: per 4 keys, four 16-byte reads of P and four of
//          V (D = 64) for 64 FMAs;
//   end    O / sum and the log-sum-exp, stored.
//   A partial last key tile (T % 64, or the diagonal of a causal block)
//   computes only its 16-key groups and 4-key steps that hold a key; a
//   warp whose rows all lie past T (the last query tile's) only copies.
//
// Shared memory: Q [32][D], K [64][D], V [64][D], P [32][64] floats, 48 KiB
// for D = 64 (the largest D it takes), static. Q and K rows are 16-byte
// chunks permuted by an XOR of the row (D = 32, 64; padded by 4 floats for
// D = 16, 48), P's by an XOR of row bit 2, so that the 16 rows of K, or the
// two rows of Q and P, a warp reads at once fall in different banks.
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaAttentionKernel.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln {

namespace {

/// The code of one key tile: copies, S, the online softmax, P V. `partial`:
/// the last tile, holding `nk` keys (a run-time value) of the BC; its
/// 16-key groups and 4-key steps past them are skipped and its scores
/// masked. A full tile masks only on a causal block's diagonal.
std::string keyTileCode(bool partial) {
  std::string s =
      R"cu(    // K (and Q) of this tile landed; every warp is past the last P V.
    kiln_cp_wait_all();
    __syncthreads();
    kiln_copy_tile(vs, v, kt, false);
    kiln_cp_commit();
    if (busy) {
      // S = Q K^T: rows r0 + i, keys kt * BC + tx + 16 j.
      float sc[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          sc[i][j] = 0.f;
#pragma unroll 4
      for (int c = 0; c < DV; ++c) {
        f4 qv[4], kv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          qv[i] = *reinterpret_cast<const f4 *>(&qs[qk(r0 + i, c)]);
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (16 * j < KILN_NK)
            kv[j] = *reinterpret_cast<const f4 *>(&ks[qk(tx + 16 * j, c)]);
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (16 * j < KILN_NK)
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
              for (int e = 0; e < 4; ++e)
                sc[i][j] += qv[i].v[e] * kv[j].v[e];
      }
      // The online softmax: scale, mask, the row's running max (its 16
      // threads hold its 64 keys), the thread's own running sum.
      const bool mask = KILN_MASKED;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = q0 + r0 + i;
        float mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int key = kt * BC + tx + 16 * j;
          float x = sc[i][j] * kScaleLog2;
          if (mask && (key >= T || (kCausal && key > row)))
            x = -INFINITY;
          sc[i][j] = x;
          mx = fmaxf(mx, x);
        }
#pragma unroll
        for (int sh = 8; sh > 0; sh >>= 1)
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, sh));
        mx = fmaxf(mx, m[i]);
        // A row whose keys so far are all masked keeps max -inf: subtract 0.
        const float base = mx == -INFINITY ? 0.f : mx;
        const float alpha = exp2f(m[i] - base);
        m[i] = mx;
        float rs = 0.f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float p = exp2f(sc[i][j] - base);
          const int col = tx + 16 * j;
          ps[pc(r0 + i, col >> 2) + (col & 3)] = p;
          rs += p;
        }
        l[i] = l[i] * alpha + rs;
#pragma unroll
        for (int j = 0; j < DC; ++j)
          acc[i][j] *= alpha;
      }
    }
    // Every warp is done with K: the next tile's K, while V lands.
    __syncthreads();
    if (kt + 1 < tiles)
      kiln_copy_tile(ks, k, kt + 1, true);
    kiln_cp_commit();
    kiln_cp_wait_previous();
    __syncthreads();
    if (busy) {
      // O += P V: rows r0 + i, the thread's columns j (KILN_COLUMN).
#pragma unroll 4
      for (int kk = 0; kk < KILN_NK; kk += 4) {
        f4 pv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          pv[i] = *reinterpret_cast<const f4 *>(&ps[pc(r0 + i, kk >> 2)]);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float vv[DC];
KILN_LOAD_V#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < DC; ++j)
              acc[i][j] += pv[i].v[e] * vv[j];
        }
      }
    }
)cu";
  replaceAllText(s, "KILN_NK", partial ? "nk" : "BC");
  replaceAllText(s, "KILN_MASKED",
                 partial ? "true" : "kCausal && kt * BC + BC - 1 > q0");
  return s;
}

} // namespace

CudaKernel emitCudaAttentionF32Kernel(const AttentionGeometry &g,
                                      CudaKernel k) {
  const int64_t bq = 32, threads = 128;
  g.setGrid(k, bq);
  k.block[0] = static_cast<unsigned>(threads);
  k.gridStride = false; // a block per query tile
  std::string params =
      std::string(
          g.packed ? "const float *__restrict__ in0, float *__restrict__ out0"
                   : "const float *__restrict__ in0, const float "
                     "*__restrict__ in1, const float *__restrict__ in2, "
                     "float *__restrict__ out0") +
      ", float *__restrict__ out1" + g.sizeParams;
  // Three blocks an SM (at most 168 registers a thread: no spills; four
  // spill at 128), or KILN_CUDA_F32_ATTENTION_MIN_BLOCKS at compile time
  // (to compare).
  std::string minBlocks = "3";
  if (const char *env = std::getenv("KILN_CUDA_F32_ATTENTION_MIN_BLOCKS"))
    minBlocks = env;
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     std::to_string(threads) + ", " + minBlocks + ")\n" +
                     k.name + "(" + params + ")";
  k.declaration = head + ";";

  char scaleText[64];
  snprintf(scaleText, sizeof(scaleText), "%.9e", g.scale);
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string s;
  s += "// " + k.name + ": flash attention, softmax(" + scaleText + " * Q K^T" +
       (g.causal ? " + causal mask" : "") + ") V over [" + str(g.b) + ", " +
       str(g.h) + ", " + str(g.t) + ", " + str(g.d) + "] f32" +
       (g.packed ? g.seqFirst
                       ? ", q, k and v read in place from [T, B, 3 * H * D], "
                         "the result written [T, B, H, D]"
                       : ", q, k and v read in place from [B, T, 3 * H * D], "
                         "the result written [B, T, H, D]"
                 : "") +
       "\n";
  s += "// ONNX nodes:";
  for (const std::string &n : k.sourceNodes)
    s += " " + n;
  s += "\n// mapping: a block per 32 queries of one (batch, head), 16 threads "
       "per 4 rows (4 x 4 scores, 4 x D / 16 outputs each); key tiles of 64 "
       "through shared memory (cp.async); f32 FMA, online softmax\n";
  s += "// launch: grid [" + str(k.grid[0]) + ", " + str(k.grid[1]) +
       ", 1], block [" + str(threads) + ", 1, 1]\n";
  // 16 bytes copied global -> shared without the registers (zeros when
  // !valid), a group's commit, the wait for every group and the wait for
  // all but the last group committed.
  std::string helpers =
      "__device__ __forceinline__ void kiln_cp16(void *dst, const void *src, "
      "bool valid) {\n"
      "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\"\n"
      "               :: \"r\"((uint32_t)__cvta_generic_to_shared(dst)), "
      "\"l\"(src), \"r\"(valid ? 16 : 0));\n}\n"
      "__device__ __forceinline__ void kiln_cp_commit() {\n"
      "  asm volatile(\"cp.async.commit_group;\" ::);\n}\n"
      "__device__ __forceinline__ void kiln_cp_wait_all() {\n"
      "  asm volatile(\"cp.async.wait_group 0;\" ::);\n}\n"
      "__device__ __forceinline__ void kiln_cp_wait_previous() {\n"
      "  asm volatile(\"cp.async.wait_group 1;\" ::);\n}\n";
  s += helpers + head + " {\n";
  s += g.seqDeclaration();
  s += "  constexpr int D = " + str(g.d) + ", BQ = 32, BC = 64, NT = 128, DV = D / 4, DC = D / 16;\n";
  int64_t c = g.h * g.d;
  s += "  constexpr int RS = " + str(g.rowStride()) +
       ", OS = " + str(g.outRowStride()) + ";\n";
  s +=
      "  constexpr bool kCausal = " + std::string(g.causal ? "true" : "false") +
      ";\n";
  s += "  // log2(e) * scale: the softmax runs on exp2.\n";
  s += "  const float kScaleLog2 = " + std::string(scaleText) +
       "f * 1.4426950408889634f;\n";
  s +=
      R"cu(  // Q and K rows: 16-byte chunks XOR-permuted by the row (D = 32, 64)
  // or rows padded by 4 floats (D = 16, 48); P's chunks XOR-permuted by
  // row bit 2 (a warp's two row groups are 4 rows apart).
  constexpr bool kSwizzle = D % 32 == 0;
  constexpr int LD = kSwizzle ? D : D + 4;
  __shared__ __align__(16) float qs[BQ * LD];
  __shared__ __align__(16) float ks[BC * LD];
  __shared__ __align__(16) float vs[BC * D];
  __shared__ __align__(16) float ps[BQ * BC];
  auto qk = [](int r, int c) { // chunk c of row r of Q or K
    return r * LD + ((kSwizzle ? c ^ (r & 7) : c) << 2);
  };
  auto pc = [](int r, int c) { return r * BC + ((c ^ (r & 4)) << 2); };
  using f4 = kiln_vec<float, 4>; // 16-byte loads
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  // Causal blocks hold more keys the later their queries: those first.
  const int qt = kCausal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int q0 = qt * BQ, r0 = ty * 4;
  // A warp whose 8 rows all lie past T (in the last query tile) skips the
  // arithmetic, not the copies and barriers.
  const bool busy = q0 + (threadIdx.x >> 5) * 8 < T;
KILN_ATTENTION_POINTERS  // Key tile kt of K or V into its shared array (keys past T: zeros,
  // masked; V's zeros keep P V finite).
  auto kiln_copy_tile = [&](float *dst, const float *src, int kt,
                            bool keyRows) { // K (Q's layout) or V (dense)
#pragma unroll
    for (int n = 0; n < BC * DV / NT; ++n) {
      const int i = threadIdx.x + n * NT, r = i / DV, c = i % DV;
      const int key = kt * BC + r;
      const bool valid = key < T;
      kiln_cp16(&dst[keyRows ? qk(r, c) : r * D + c * 4],
                src + (size_t)(valid ? key : 0) * RS + c * 4, valid);
    }
  };
  // The block's queries (past T: zeros) and the first key tile.
#pragma unroll
  for (int n = 0; n < BQ * DV / NT; ++n) {
    const int i = threadIdx.x + n * NT, r = i / DV, c = i % DV;
    const int row = q0 + r;
    const bool valid = row < T;
    kiln_cp16(&qs[qk(r, c)], q + (size_t)(valid ? row : 0) * RS + c * 4,
              valid);
  }
  kiln_copy_tile(ks, k, 0, true);
  kiln_cp_commit();
  const int lastKey = kCausal && q0 + BQ < T ? q0 + BQ : T;
  const int full = lastKey / BC, nk = lastKey % BC;
  const int tiles = full + (nk > 0);
  float m[4], l[4], acc[4][DC];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < DC; ++j)
      acc[i][j] = 0.f;
  }
  for (int kt = 0; kt < full; ++kt) {
KILN_FULL_TILE  }
  if (nk > 0) {
    const int kt = full;
KILN_PARTIAL_TILE  }
  // O / sum (the row's sum over its 16 threads); lse = (m + log2(l)) ln 2
  // per row (m in log2 units), the op's second result.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int sh = 8; sh > 0; sh >>= 1)
      l[i] += __shfl_xor_sync(0xffffffffu, l[i], sh);
    const int row = q0 + r0 + i;
    if (row >= T)
      continue;
    const float inv = 1.f / l[i];
#pragma unroll
    for (int j = 0; j < DC; ++j)
      o[(size_t)row * OS + KILN_COLUMN] = acc[i][j] * inv;
    if (tx == 0)
      out1[(size_t)blockIdx.y * T + row] =
          (m[i] + log2f(l[i])) * 0.6931471805599453f;
  }
}
)cu";
  std::string pointers =
      g.packed ? "  const int bi = blockIdx.y / " + str(g.h) +
                     ", hi = blockIdx.y % " + str(g.h) +
                     ";\n"
                     "  const float *q = in0 + (size_t)bi * " +
                     g.batchStrideText() +
                     " + hi * D;\n"
                     "  const float *k = q + " +
                     str(c) + ", *v = q + " + str(2 * c) +
                     ";\n"
                     "  float *o = out0 + (size_t)bi * " +
                     g.outBatchStrideText() + " + hi * D;\n"
               : "  const size_t base = (size_t)blockIdx.y * T * D;\n"
                 "  const float *q = in0 + base, *k = in1 + base, *v = in2 + "
                 "base;\n"
                 "  float *o = out0 + base;\n";
  // The thread's output columns: D / 16 in a row (16-byte loads of V) when
  // that is a multiple of 4, else interleaved (tx + 16 j: no bank
  // conflicts on scalar loads).
  bool vectorV = (g.d / 16) % 4 == 0;
  std::string column = vectorV ? "tx * DC + j" : "tx + 16 * j";
  std::string loadV =
      vectorV ? "#pragma unroll\n"
                "          for (int j = 0; j < DC; j += 4) {\n"
                "            const f4 w = *reinterpret_cast<const f4 "
                "*>(&vs[(kk + e) * D + tx * DC + j]);\n"
                "#pragma unroll\n"
                "            for (int x = 0; x < 4; ++x)\n"
                "              vv[j + x] = w.v[x];\n"
                "          }\n"
              : "#pragma unroll\n"
                "          for (int j = 0; j < DC; ++j)\n"
                "            vv[j] = vs[(kk + e) * D + tx + 16 * j];\n";
  replaceAllText(s, "KILN_FULL_TILE", keyTileCode(false));
  replaceAllText(s, "KILN_PARTIAL_TILE", keyTileCode(true));
  replaceAllText(s, "KILN_ATTENTION_POINTERS", pointers);
  replaceAllText(s, "KILN_LOAD_V", loadV);
  replaceAllText(s, "KILN_COLUMN", column);
  // The helpers are named after the kernel: several share kernels.cu.
  for (const char *name : {"kiln_cp16", "kiln_cp_commit", "kiln_cp_wait_all",
                           "kiln_cp_wait_previous"})
    replaceAllText(s, name, k.name + (name + 4));
  k.definition = s;
  return k;
}

} // namespace kiln
