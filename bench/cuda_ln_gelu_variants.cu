//===- cuda_ln_gelu_variants.cu - bf16 ln_gelu kernel variants -----------===//
//
// This file implements the measurement behind the bf16 ln_gelu row of
// BENCHMARKS.md (issue 16): the kernel that `kiln compile --precision bf16
// --io-precision low` generates for bench-graphs/ln_gelu.onnx (layer norm
// in f32, GELU's erf by the prelude), the kernel of the graph converted to
// bf16 (its erf a 65536-entry bf16 table, six bf16 roundings), and
// hand-written variants of the first: one rounding per stored element
// instead of two, the residual sum cached instead of re-read, 256 and 512
// threads per row, bf16 pairs converted in one instruction, no register
// cache of the centred row, the erf table, CUDA's erff, and the prelude's
// two erfs (kiln_erff_absolute: Abramowitz & Stegun 7.1.26 on the
// special-function unit; kiln_erff: with x P(x^2) for small arguments),
// whose accuracy against double erf is printed first. Each is checked against the
// generated autocast kernel's outputs (bf16 values that differ, and by how
// many ulp) and timed with CUDA events (median of 200 launches, three
// rounds). bench/cuda_ln_gelu_variants.sh builds it: it prepends the two
// packages' kernels.cu (they define k2_layer_normalization and
// k0_layer_normalization and the prelude this file uses).
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cuda_runtime.h>

template <int THREADS, bool CACHE_SUM, int SINGLE_ROUND, int ERF, bool NO_C0 = false>
__global__ void __launch_bounds__(THREADS)
variant(const kiln_bf16 *__restrict__ in0, const kiln_bf16 *__restrict__ in1,
        const float *__restrict__ in2, const float *__restrict__ in3,
        kiln_bf16 *__restrict__ out0) {
  constexpr int PER = 4096 / THREADS;  // elements per thread
  constexpr int RUNS = PER / 8;
  constexpr int WARPS = THREADS / 32;
  __shared__ float red[32];
  for (int row = blockIdx.x; row < 16384; row += gridDim.x) {
    const int lane = threadIdx.x;
    float c0[PER];
    float l0[PER];
    float acc = 0;
#pragma unroll
    for (int k = 0; k < RUNS; ++k) {
      const int j0 = (lane + k * THREADS) * 8;
      const kiln_vec<kiln_bf16, 8> v0 = *reinterpret_cast<const kiln_vec<kiln_bf16, 8> *>(in0 + row * 4096 + j0);
      const kiln_vec<kiln_bf16, 8> v1 = *reinterpret_cast<const kiln_vec<kiln_bf16, 8> *>(in1 + row * 4096 + j0);
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        float t0 = (float)v0.v[u], t1 = (float)v1.v[u];
        float t3 = kiln_round_bf16(t0 + t1);
        l0[k * 8 + u] = CACHE_SUM ? t3 : t0;
        acc += t3;
      }
    }
    for (int o = 16; o > 0; o >>= 1) acc += kiln_shfl_xor(acc, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = acc;
    __syncthreads();
    acc = (threadIdx.x & 31) < WARPS ? red[threadIdx.x & 31] : 0.f;
    for (int o = 16; o > 0; o >>= 1) acc += kiln_shfl_xor(acc, o);
    __syncthreads();
    const float mean = acc / 4096.f;
    float acc2 = 0;
#pragma unroll
    for (int k = 0; k < RUNS; ++k) {
      const int j0 = (lane + k * THREADS) * 8;
      kiln_vec<kiln_bf16, 8> v6;
      if (!CACHE_SUM) v6 = *reinterpret_cast<const kiln_vec<kiln_bf16, 8> *>(in1 + row * 4096 + j0);
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        float t8 = CACHE_SUM ? l0[k * 8 + u] : kiln_round_bf16(l0[k * 8 + u] + (float)v6.v[u]);
        float t9 = t8 - mean;
        if (!NO_C0) c0[k * 8 + u] = t9;
        acc2 += t9 * t9;
      }
    }
    for (int o = 16; o > 0; o >>= 1) acc2 += kiln_shfl_xor(acc2, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = acc2;
    __syncthreads();
    acc2 = (threadIdx.x & 31) < WARPS ? red[threadIdx.x & 31] : 0.f;
    for (int o = 16; o > 0; o >>= 1) acc2 += kiln_shfl_xor(acc2, o);
    __syncthreads();
    const float rstd = 1.0f / sqrtf(acc2 / 4096.f + 9.99999975e-06f);
#pragma unroll
    for (int k = 0; k < RUNS; ++k) {
      const int j0 = (lane + k * THREADS) * 8;
      const kiln_vec<float, 8> g = *reinterpret_cast<const kiln_vec<float, 8> *>(in2 + j0);
      const kiln_vec<float, 8> b = *reinterpret_cast<const kiln_vec<float, 8> *>(in3 + j0);
      kiln_vec<kiln_bf16, 8> s;
      float pair[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        float cc = NO_C0 ? l0[k * 8 + u] - mean : c0[k * 8 + u];
        float t21 = cc * rstd * g.v[u] + b.v[u];
        float e;
        if (ERF == 0) e = erff(t21 * 0.707106769f);
        else if (ERF == 2) e = kiln_erff_absolute(t21 * 0.707106769f);
        else if (ERF == 3) e = kiln_erff(t21 * 0.707106769f);
        else e = kiln_erf_bf16(kiln_round_bf16(t21 * 0.707106769f));
        float t29 = t21 * (0.5f * (e + 1.0f));
        if (SINGLE_ROUND == 2) {
          pair[u] = t29;
        } else {
          s.v[u] = SINGLE_ROUND ? kiln_bf16(t29) : kiln_bf16(kiln_round_bf16(t29));
        }
      }
      if (SINGLE_ROUND == 2) {
        uint32_t *w = reinterpret_cast<uint32_t *>(&s);
#pragma unroll
        for (int u = 0; u < 4; ++u)
          asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[u]) : "f"(pair[2 * u + 1]), "f"(pair[2 * u]));
      }
      *reinterpret_cast<kiln_vec<kiln_bf16, 8> *>(out0 + row * 4096 + j0) = s;
    }
  }
}

/// erf by `WHICH` (0 erff, 2 kiln_erff_absolute, 3 kiln_erff) of every
/// input: the accuracy table printed first.
template <int WHICH>
__global__ void erfOf(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = WHICH == 0 ? erff(x[i]) : WHICH == 2 ? kiln_erff_absolute(x[i]) : kiln_erff(x[i]);
}

/// Prints each erf's largest absolute and relative error against the
/// host's double erf over `n` arguments spread over [-6, 6] (and tiny
/// ones near 0).
static void printErfAccuracy() {
  const int n = 1 << 22;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) {
    double u = (i + 0.5) / n * 2 - 1;
    hx[i] = (float)(i % 8 == 0 ? u * 1e-3 : u * 6);
  }
  float *x, *y;
  cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4);
  cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice);
  const char *names[] = {"erff", "", "kiln_erff_absolute", "kiln_erff"};
  for (int w : {0, 2, 3}) {
    if (w == 0) erfOf<0><<<n / 256, 256>>>(x, y, n);
    else if (w == 2) erfOf<2><<<n / 256, 256>>>(x, y, n);
    else erfOf<3><<<n / 256, 256>>>(x, y, n);
    cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost);
    double maxAbs = 0, maxRel = 0, relAt = 0;
    for (int i = 0; i < n; ++i) {
      double r = std::erf((double)hx[i]), e = std::fabs(hy[i] - r);
      maxAbs = std::max(maxAbs, e);
      if (r != 0 && e / std::fabs(r) > maxRel) { maxRel = e / std::fabs(r); relAt = hx[i]; }
    }
    printf("erf %-14s max abs error %.3g, max relative error %.3g (at %.3g)\n", names[w], maxAbs, maxRel, relAt);
  }
  cudaFree(x); cudaFree(y);
}

typedef void (*Kernel)(const kiln_bf16 *, const kiln_bf16 *, const float *, const float *, kiln_bf16 *);

static uint16_t bf16Of(float f) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16); }

int main() {
  printErfAccuracy();
  const size_t n = 16384ull * 4096;
  std::vector<uint16_t> hx(n), hr(n);
  std::vector<float> hg(4096), hb(4096);
  uint64_t s = 1;
  auto rnd = [&]() { s = s * 6364136223846793005ull + 1442695040888963407ull; return ((s >> 33) / (double)(1ull << 31)) * 2 - 1; };
  for (size_t i = 0; i < n; ++i) { hx[i] = bf16Of((float)(rnd() * 3)); hr[i] = bf16Of((float)rnd()); }
  for (int i = 0; i < 4096; ++i) { hg[i] = 1 + 0.1f * (float)rnd(); hb[i] = 0.1f * (float)rnd(); }
  kiln_bf16 *x, *r, *y; float *g, *b;
  cudaMalloc(&x, n * 2); cudaMalloc(&r, n * 2); cudaMalloc(&y, n * 2); cudaMalloc(&g, 16384); cudaMalloc(&b, 16384);
  cudaMemcpy(x, hx.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(r, hr.data(), n * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(g, hg.data(), 16384, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), 16384, cudaMemcpyHostToDevice);
  struct V { const char *name; Kernel k; int threads; };
  V vs[] = {
    {"generated autocast", (Kernel)k0_layer_normalization, 128},
    {"generated converted (bf16 erf table)", (Kernel)k2_layer_normalization, 128},
    {"hand 128: erff, two roundings", variant<128, false, false, 0>, 128},
    {"hand 128: erff, single rounding", variant<128, false, true, 0>, 128},
    {"hand 128: erff, cached sum + single rounding", variant<128, true, true, 0>, 128},
    {"hand 256: erff, cached sum + single rounding", variant<256, true, true, 0>, 256},
    {"hand 512: erff, cached sum + single rounding", variant<512, true, true, 0>, 512},
    {"hand 128: erff, cached sum + paired rounding", variant<128, true, 2, 0>, 128},
    {"hand 128: erff, cached sum, no centred cache, paired", variant<128, true, 2, 0, true>, 128},
    {"hand 256: erff, cached sum, no centred cache, paired", variant<256, true, 2, 0, true>, 256},
    {"hand 128: cached sum + single rounding, erf table", variant<128, true, true, 1>, 128},
    {"hand 128: cached sum + single rounding, A&S erf", variant<128, true, true, 2>, 128},
    {"hand 256: cached sum + single rounding, A&S erf", variant<256, true, true, 2>, 256},
    {"hand 128: A&S erf, two roundings", variant<128, false, false, 2>, 128},
    {"hand 128: kiln_erff, cached sum + single rounding", variant<128, true, true, 3>, 128},
    {"hand 128: kiln_erff, single rounding", variant<128, false, true, 3>, 128},
    {"hand 256: cached sum + single rounding, erf table", variant<256, true, true, 1>, 256},
  };
  std::vector<uint16_t> ref(n), out(n);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int round = 0; round < 3; ++round)
  for (int vi = 0; vi < (int)(sizeof(vs) / sizeof(vs[0])); ++vi) {
    V &v = vs[vi];
    cudaMemset(y, 0, n * 2);
    v.k<<<16384, v.threads>>>(x, r, g, b, y);
    if (cudaDeviceSynchronize() != cudaSuccess) { printf("%s: launch failed %s\n", v.name, cudaGetErrorString(cudaGetLastError())); return 1; }
    cudaMemcpy(vi == 0 ? ref.data() : out.data(), y, n * 2, cudaMemcpyDeviceToHost);
    size_t diff = 0; int maxUlp = 0;
    if (vi) for (size_t i = 0; i < n; ++i) if (out[i] != ref[i]) { ++diff; maxUlp = std::max(maxUlp, std::abs((int)(int16_t)out[i] - (int)(int16_t)ref[i])); }
    std::vector<float> ms;
    for (int it = 0; it < 200; ++it) {
      cudaEventRecord(e0); v.k<<<16384, v.threads>>>(x, r, g, b, y); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float t; cudaEventElapsedTime(&t, e0, e1); ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    double bytes = n * 6.0;
    printf("round %d  %-52s median %.4f ms  %.0f GB/s  outputs differing from generated autocast: %zu (max %d bf16 ulp)\n",
           round, v.name, ms[100], bytes / ms[100] / 1e6, diff, maxUlp);
  }
  return 0;
}
