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
//   grid   [ceil(T / 64), B * H], block 256: a block owns 64 queries of one
//          (32, block 128, with KILN_CUDA_F32_ATTENTION_QUERIES=32)
//          (batch, head); thread (ty, tx) = (tid / 16, tid % 16) owns query
//          rows 4 ty .. 4 ty + 3, key columns tx and tx + 16 of each tile
//          and D / 16 output columns of its rows;
//   Q      the block's rows in shared memory, loaded once (past T: zeros);
//   loop   over key tiles of 32 (with `causal`, up to the block's last
//          query): K and V through shared memory (keys past T: zeros,
//          masked), S = Q K^T from 16-byte loads of both, the online softmax
//          (running max and sum per row, reduced over the 16 threads of a
//          row group with shuffles, exp2 of log2(e)-scaled scores), P to
//          shared memory (read back only by the same 16 threads: a warp
//          barrier), O = alpha O + P V;
//   end    O / sum, stored.
//
// Shared memory: (64 + 32) x (D + 4) + 32 x D + 64 x 36 floats, at most
// 44 KiB for D = 64, the largest D it takes (the pass then keeps larger
// heads written out).
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaAttentionKernel.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln {

CudaKernel emitCudaAttentionF32Kernel(const AttentionGeometry &g,
                                      CudaKernel k) {
  // Queries a block owns: 64 (256 threads), or 32 (128 threads: twice the
  // blocks, for small batches) with KILN_CUDA_F32_ATTENTION_QUERIES=32 at
  // compile time (to compare; not measured as a default yet).
  int64_t bq = 64;
  if (const char *env = std::getenv("KILN_CUDA_F32_ATTENTION_QUERIES"))
    if (std::string(env) == "32")
      bq = 32;
  int64_t threads = 4 * bq;
  k.grid[0] = static_cast<unsigned>((g.t + bq - 1) / bq);
  k.grid[1] = static_cast<unsigned>(g.b * g.h);
  k.block[0] = static_cast<unsigned>(threads);
  k.gridStride = false; // a block per query tile
  std::string params =
      std::string(
          g.packed ? "const float *__restrict__ in0, float *__restrict__ out0"
                   : "const float *__restrict__ in0, const float "
                     "*__restrict__ in1, const float *__restrict__ in2, "
                     "float *__restrict__ out0") +
      ", float *__restrict__ out1";
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     std::to_string(threads) + ")\n" + k.name + "(" + params +
                     ")";
  k.declaration = head + ";";

  char scaleText[64];
  snprintf(scaleText, sizeof(scaleText), "%.9e", g.scale);
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string s;
  s += "// " + k.name + ": flash attention, softmax(" + scaleText + " * Q K^T" +
       (g.causal ? " + causal mask" : "") + ") V over [" + str(g.b) + ", " +
       str(g.h) + ", " + str(g.t) + ", " + str(g.d) + "] f32" +
       (g.packed ? ", q, k and v read in place from [B, T, 3 * H * D], the "
                   "result written [B, T, H, D]"
                 : "") +
       "\n";
  s += "// ONNX nodes:";
  for (const std::string &n : k.sourceNodes)
    s += " " + n;
  s += "\n// mapping: a block per " + str(bq) +
       " queries of one (batch, head), 16 threads "
       "per 4 rows; key tiles of 32 through shared memory; f32 FMA, online "
       "softmax\n";
  s += "// launch: grid [" + str(k.grid[0]) + ", " + str(k.grid[1]) +
       ", 1], block [" + str(threads) + ", 1, 1]\n";
  s += head + " {\n";
  s += "  constexpr int T = " + str(g.t) + ", D = " + str(g.d) +
       ", BQ = " + str(bq) + ", NT = " + str(threads) +
       ", BC = 32, LD = D + 4, LP = BC + 4, DC = D / 16;\n";
  int64_t c = g.h * g.d;
  s += "  constexpr int RS = " + str(g.packed ? 3 * c : g.d) +
       ", OS = " + str(g.packed ? c : g.d) + ";\n";
  s +=
      "  constexpr bool kCausal = " + std::string(g.causal ? "true" : "false") +
      ";\n";
  s += "  // log2(e) * scale: the softmax runs on exp2.\n";
  s += "  const float kScaleLog2 = " + std::string(scaleText) +
       "f * 1.4426950408889634f;\n";
  s += R"cu(  __shared__ __align__(16) float qs[BQ][LD];
  __shared__ __align__(16) float ks[BC][LD];
  __shared__ __align__(16) float vs[BC][D];
  __shared__ __align__(16) float ps[BQ][LP];
  using f4 = kiln_vec<float, 4>; // 16-byte loads and stores
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const int qt = blockIdx.x;
KILN_ATTENTION_POINTERS  // The block's queries (past T: zeros), 16 bytes at a time.
  for (int i = threadIdx.x; i < BQ * D / 4; i += NT) {
    const int r = i / (D / 4), col = (i % (D / 4)) * 4;
    const int row = qt * BQ + r;
    *reinterpret_cast<f4 *>(&qs[r][col]) =
        row < T ? *reinterpret_cast<const f4 *>(q + (size_t)row * RS + col) : f4{};
  }
  float m[4], l[4], acc[4][DC];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < DC; ++j)
      acc[i][j] = 0.f;
  }
  const int row0 = qt * BQ + ty * 4; // the thread's first query
  const int lastKey = kCausal && qt * BQ + BQ < T ? qt * BQ + BQ : T;
  const int tiles = (lastKey + BC - 1) / BC;
  for (int kt = 0; kt < tiles; ++kt) {
    __syncthreads(); // the previous tile's readers are done (and Q stored)
    for (int i = threadIdx.x; i < BC * D / 4; i += NT) {
      const int r = i / (D / 4), col = (i % (D / 4)) * 4;
      const int key = kt * BC + r;
      const size_t at = (size_t)key * RS + col;
      // Keys past T: zeros (their scores are masked; V's zeros keep P V
      // finite).
      const bool valid = key < T;
      *reinterpret_cast<f4 *>(&ks[r][col]) =
          valid ? *reinterpret_cast<const f4 *>(k + at) : f4{};
      *reinterpret_cast<f4 *>(&vs[r][col]) =
          valid ? *reinterpret_cast<const f4 *>(v + at) : f4{};
    }
    __syncthreads();
    // S = Q K^T for rows row0 + i, keys kt * BC + tx + 16 j.
    float sc[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      sc[i][0] = sc[i][1] = 0.f;
#pragma unroll 4
    for (int d = 0; d < D; d += 4) {
      f4 kv[2], qv[4];
#pragma unroll
      for (int j = 0; j < 2; ++j)
        kv[j] = *reinterpret_cast<const f4 *>(&ks[tx + 16 * j][d]);
#pragma unroll
      for (int i = 0; i < 4; ++i)
        qv[i] = *reinterpret_cast<const f4 *>(&qs[ty * 4 + i][d]);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            sc[i][j] += qv[i].v[e] * kv[j].v[e];
    }
    // The online softmax: scale, mask, running max and sum per row (the 16
    // threads of a row group hold its 32 keys).
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float mx = m[i];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int key = kt * BC + tx + 16 * j;
        float x = sc[i][j] * kScaleLog2;
        if ((kCausal && key > row0 + i) || (T % BC != 0 && key >= T))
          x = -INFINITY;
        sc[i][j] = x;
        mx = fmaxf(mx, x);
      }
#pragma unroll
      for (int o = 8; o > 0; o >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
      // A row whose keys so far are all masked keeps max -inf: subtract 0.
      const float base = mx == -INFINITY ? 0.f : mx;
      const float alpha = exp2f(m[i] - base);
      m[i] = mx;
      float rs = 0.f;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float p = exp2f(sc[i][j] - base);
        ps[ty * 4 + i][tx + 16 * j] = p;
        rs += p;
      }
#pragma unroll
      for (int o = 8; o > 0; o >>= 1)
        rs += __shfl_xor_sync(0xffffffffu, rs, o);
      l[i] = l[i] * alpha + rs;
#pragma unroll
      for (int j = 0; j < DC; ++j)
        acc[i][j] *= alpha;
    }
    __syncwarp(); // a row group's P is written and read by its own threads
    // O += P V: rows row0 + i, the thread's columns j (KILN_COLUMN).
#pragma unroll 2
    for (int kk = 0; kk < BC; kk += 4) {
      f4 pv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        pv[i] = *reinterpret_cast<const f4 *>(&ps[ty * 4 + i][kk]);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float vv[DC];
KILN_LOAD_V#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int j = 0; j < DC; ++j)
            acc[i][j] += pv[i].v[e] * vv[j];
        }
      }
    }
    __syncwarp(); // P read before the next tile overwrites it
  }
  // O / sum; lse = (m + log2(l)) ln 2 per row (m in log2 units), the
  // op's second result.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (row0 + i >= T)
      continue;
    const float inv = 1.f / l[i];
#pragma unroll
    for (int j = 0; j < DC; ++j)
      o[(size_t)(row0 + i) * OS + KILN_COLUMN] = acc[i][j] * inv;
    if (tx == 0)
      out1[(size_t)blockIdx.y * T + row0 + i] =
          (m[i] + log2f(l[i])) * 0.6931471805599453f;
  }
}
)cu";
  std::string pointers =
      g.packed ? "  const int bi = blockIdx.y / " + str(g.h) +
                     ", hi = blockIdx.y % " + str(g.h) +
                     ";\n"
                     "  const float *q = in0 + (size_t)bi * T * RS + hi * D;\n"
                     "  const float *k = q + " +
                     str(c) + ", *v = q + " + str(2 * c) +
                     ";\n"
                     "  float *o = out0 + (size_t)bi * T * OS + hi * D;\n"
               : "  const size_t base = (size_t)blockIdx.y * T * D;\n"
                 "  const float *q = in0 + base, *k = in1 + base, *v = in2 + "
                 "base;\n"
                 "  float *o = out0 + base;\n";
  // The thread's output columns: D / 16 in a row (16-byte loads of V) when
  // that is a multiple of 4, else interleaved (tx + 16 j: no bank
  // conflicts on scalar loads).
  bool vectorV = (g.d / 16) % 4 == 0;
  std::string column = vectorV ? "tx * DC + j" : "tx + 16 * j";
  std::string loadV = vectorV
                          ? "#pragma unroll\n"
                            "        for (int j = 0; j < DC; j += 4) {\n"
                            "          const f4 w = *reinterpret_cast<const f4 "
                            "*>(&vs[kk + e][tx * DC + j]);\n"
                            "#pragma unroll\n"
                            "          for (int x = 0; x < 4; ++x)\n"
                            "            vv[j + x] = w.v[x];\n"
                            "        }\n"
                          : "#pragma unroll\n"
                            "        for (int j = 0; j < DC; ++j)\n"
                            "          vv[j] = vs[kk + e][tx + 16 * j];\n";
  auto replace = [&](const std::string &from, const std::string &to) {
    for (size_t at = s.find(from); at != std::string::npos;
         at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
  };
  replace("KILN_ATTENTION_POINTERS", pointers);
  replace("KILN_LOAD_V", loadV);
  replace("KILN_COLUMN", column);
  k.definition = s;
  return k;
}

} // namespace kiln
