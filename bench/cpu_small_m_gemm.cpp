//===- cpu_small_m_gemm.cpp - 49-row products: panels vs oneDNN -----------===//
//
// This file implements the measurement behind leaving ResNet-50's 7x7 stage
// to oneDNN (BENCHMARKS.md, twenty-third session): products of 49 rows (the
// stage's 1x1 convolutions as [49, C] x [C, O], a 3x3 one as its im2col
// [49, 4608] x [4608, 512]) and a 196-row one, by oneDNN 2.6's matmul with
// packed weights against PanelMatmul's kernel extended to row blocks of 7
// (32-column panels, A transposed per block, k in chunks of 64-256 or whole
// so that a panel chunk stays in L1). Best of 50 runs each, one thread,
// weights hot in cache. On the Ice Lake machine: oneDNN 140-164 GFLOP/s on
// the 1x1 shapes and 105 on the im2col one; the panels 95-117 and 74-80.
//
//   g++ -O3 -std=c++17 -march=native bench/cpu_small_m_gemm.cpp -ldnnl \
//       -o /tmp/smallm && OMP_NUM_THREADS=1 /tmp/smallm
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
#include <functional>
#include <random>
#include <cmath>
using namespace dnnl;
constexpr int C = 32;  // panel columns
double bestMs(const std::function<void()> &f, int it) {
  f(); double best = 1e9;
  for (int i = 0; i < it; ++i) { auto t0 = std::chrono::steady_clock::now(); f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()); }
  return best;
}
// panels [N/32][K][32]; at: A blocks of R rows transposed [blocks][K][8]
template <int R>
__attribute__((target("avx512f,fma"))) void blockPanel(const float *at, const float *b, int64_t k0, int64_t k1, float *acc_io, bool first) {
  __m512 acc[R][2];
  for (int i = 0; i < R; ++i) {
    if (first) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    else { acc[i][0] = _mm512_load_ps(acc_io + i * C); acc[i][1] = _mm512_load_ps(acc_io + i * C + 16); }
  }
  for (int64_t s = k0; s < k1; ++s) {
    const float *row = b + s * C;
    __m512 b0 = _mm512_load_ps(row), b1 = _mm512_load_ps(row + 16);
    const float *a = at + s * 8;
    for (int i = 0; i < R; ++i) {
      __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
  for (int i = 0; i < R; ++i) { _mm512_store_ps(acc_io + i * C, acc[i][0]); _mm512_store_ps(acc_io + i * C + 16, acc[i][1]); }
}
int main(int argc, char **argv) {
  struct Shape { int64_t m, k, n; const char *what; };
  Shape shapes[] = {{49, 2048, 512, "1x1 2048->512"}, {49, 512, 2048, "1x1 512->2048"}, {49, 4608, 512, "3x3 512 (im2col)"}, {196, 1024, 256, "14x14 1x1 1024->256"}};
  engine eng(engine::kind::cpu, 0); stream st(eng);
  std::mt19937 g(0); std::uniform_real_distribution<float> d(-1, 1);
  for (auto sh : shapes) {
    int64_t M = sh.m, K = sh.k, N = sh.n;
    std::vector<float> A(M * K), B(K * N), Y(M * N), Y2(M * N);
    for (auto &v : A) v = d(g); for (auto &v : B) v = d(g);
    // oneDNN matmul, B packed
    memory::desc ad({M, K}, memory::data_type::f32, memory::format_tag::ab), bd({K, N}, memory::data_type::f32, memory::format_tag::any),
        yd({M, N}, memory::data_type::f32, memory::format_tag::ab);
    auto pd = matmul::primitive_desc(matmul::desc(ad, bd, yd), eng);
    memory bplain({{K, N}, memory::data_type::f32, memory::format_tag::ab}, eng, B.data()), bpacked(pd.weights_desc(), eng);
    reorder(bplain, bpacked).execute(st, bplain, bpacked);
    memory am(ad, eng, A.data()), ym(yd, eng, Y.data());
    matmul mm(pd);
    double tOne = bestMs([&] { mm.execute(st, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bpacked}, {DNNL_ARG_DST, ym}}); }, 50);
    // oneDNN conv 1x1 NHWC for the 1x1 shapes (7x7 spatial)
    // Panels
    int64_t P = (N + C - 1) / C;
    std::vector<float, std::allocator<float>> panels(P * K * C + 16);
    float *pan = (float *)(((uintptr_t)panels.data() + 63) & ~63ull);
    for (int64_t p = 0; p < P; ++p) for (int64_t s = 0; s < K; ++s) for (int c = 0; c < C; ++c) pan[(p * K + s) * C + c] = B[s * N + p * C + c];
    const int R = 7; int64_t blocks = (M + R - 1) / R;
    std::vector<float> atv(blocks * K * 8 + 16); float *at = (float *)(((uintptr_t)atv.data() + 63) & ~63ull);
    alignas(64) static float accbuf[256 * C];
    auto run = [&](int64_t kc) {
      for (int64_t bl = 0; bl < blocks; ++bl) for (int i = 0; i < R && bl * R + i < M; ++i) for (int64_t s = 0; s < K; ++s) at[(bl * K + s) * 8 + i] = A[(bl * R + i) * K + s];
      for (int64_t p = 0; p < P; ++p) {
        const float *b = pan + p * K * C;
        for (int64_t k0 = 0; k0 < K; k0 += kc)
          for (int64_t bl = 0; bl < blocks; ++bl)
            blockPanel<R>(at + bl * K * 8, b, k0, std::min(K, k0 + kc), accbuf + bl * R * C, k0 == 0);
        for (int64_t i = 0; i < M; ++i) std::memcpy(&Y2[i * N + p * C], accbuf + i * C, C * 4);
      }
    };
    double tFull = bestMs([&] { run(K); }, 50);
    double t256 = bestMs([&] { run(256); }, 50);
    double t128 = bestMs([&] { run(128); }, 50);
    double t64 = bestMs([&] { run(64); }, 50);
    run(128);
    double err = 0; for (int64_t i = 0; i < M * N; ++i) err = std::max(err, (double)std::fabs(Y[i] - Y2[i]));
    double gf = 2.0 * M * K * N / 1e6;
    printf("%-22s oneDNN %.3f ms (%.0f GF/s) | panels k=all %.3f (%.0f) k256 %.3f (%.0f) k128 %.3f (%.0f) k64 %.3f (%.0f)  err %.2g\n", sh.what, tOne, gf / tOne, tFull, gf / tFull, t256, gf / t256, t128, gf / t128, t64, gf / t64, err);
  }
}
