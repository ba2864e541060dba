//===- PanelMatmul.cpp - A GEMM of few rows by a packed constant ----------===//
//
// This file implements PanelMatmul (PanelMatmul.h): the packing of b into
// 32-column panels, and the run: a on the calling thread transposed into
// [k][8] (each step of k broadcasts its rows' values from one 32-byte
// line), then the panels split among the OpenMP threads, each panel's
// m x 32 results accumulated in AVX-512 registers over k with the panel
// prefetched 4 KB (32 steps of k) ahead, and stored once with the bias,
// the residual and ReLU. Without AVX-512 (checked once, at run time) a
// portable loop computes the same sums in the same order per element.
//
//===----------------------------------------------------------------------===//

#include "PanelMatmul.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cassert>
#include <vector>

namespace kiln {

namespace {

constexpr int64_t kCols = PanelMatmul::kPanelColumns;
constexpr int64_t kRows = PanelMatmul::kMaxRows;
/// How far ahead of its loads a panel is prefetched, in floats (4 KB:
/// measured best of 1, 4, 8 and 16 KB on mlp's weights).
constexpr int64_t kPrefetchFloats = 1024;

/// The panels [p0, p1) of y, AVX-512: `at` is a transposed, [k][8].
template <int M>
__attribute__((target("avx512f,fma"))) void
panelsAvx512(const float *at, const float *panels, int64_t n, int64_t k,
             int64_t p0, int64_t p1, const float *bias, const float *residual,
             float *y, bool relu) {
  for (int64_t p = p0; p < p1; ++p) {
    const float *b = panels + p * k * kCols;
    __m512 acc[M][2];
    for (int i = 0; i < M; ++i)
      acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t s = 0; s < k; ++s) {
      const float *row = b + s * kCols;
      _mm_prefetch(reinterpret_cast<const char *>(row + kPrefetchFloats),
                   _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char *>(row + kPrefetchFloats + 16),
                   _MM_HINT_T0);
      __m512 b0 = _mm512_load_ps(row), b1 = _mm512_load_ps(row + 16);
      const float *a = at + s * kRows;
      for (int i = 0; i < M; ++i) {
        __m512 ai = _mm512_set1_ps(a[i]);
        acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
    // The panel's columns that exist (the last panel may be partial).
    const int64_t col = p * kCols, valid = std::min<int64_t>(kCols, n - col);
    const __mmask16 m0 = valid >= 16 ? 0xFFFF : (1u << valid) - 1;
    const __mmask16 m1 = valid >= 32  ? 0xFFFF
                         : valid > 16 ? (1u << (valid - 16)) - 1
                                      : 0;
    __m512 bias0 = _mm512_setzero_ps(), bias1 = _mm512_setzero_ps();
    if (bias) {
      bias0 = _mm512_maskz_loadu_ps(m0, bias + col);
      bias1 = _mm512_maskz_loadu_ps(m1, bias + col + 16);
    }
    for (int i = 0; i < M; ++i) {
      __m512 v0 = _mm512_add_ps(acc[i][0], bias0);
      __m512 v1 = _mm512_add_ps(acc[i][1], bias1);
      if (residual) {
        const float *r = residual + i * n + col;
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, r));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, r + 16));
      }
      if (relu) {
        v0 = _mm512_max_ps(v0, _mm512_setzero_ps());
        v1 = _mm512_max_ps(v1, _mm512_setzero_ps());
      }
      _mm512_mask_storeu_ps(y + i * n + col, m0, v0);
      _mm512_mask_storeu_ps(y + i * n + col + 16, m1, v1);
    }
  }
}

/// The panels [p0, p1) of y for m rows, in portable C++.
void panelsPortable(int64_t m, const float *at, const float *panels, int64_t n,
                    int64_t k, int64_t p0, int64_t p1, const float *bias,
                    const float *residual, float *y, bool relu) {
  for (int64_t p = p0; p < p1; ++p) {
    const float *b = panels + p * k * kCols;
    float acc[kRows][kCols] = {};
    for (int64_t s = 0; s < k; ++s)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t c = 0; c < kCols; ++c)
          acc[i][c] += at[s * kRows + i] * b[s * kCols + c];
    const int64_t col = p * kCols, valid = std::min<int64_t>(kCols, n - col);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t c = 0; c < valid; ++c) {
        float v = acc[i][c] + (bias ? bias[col + c] : 0.f);
        if (residual)
          v += residual[i * n + col + c];
        y[i * n + col + c] = relu ? std::max(v, 0.f) : v;
      }
  }
}

using PanelsFn = void (*)(const float *, const float *, int64_t, int64_t,
                          int64_t, int64_t, const float *, const float *,
                          float *, bool);

/// The AVX-512 kernel for `m` rows.
PanelsFn avx512Kernel(int64_t m) {
  static const PanelsFn kernels[kRows] = {
      panelsAvx512<1>, panelsAvx512<2>, panelsAvx512<3>, panelsAvx512<4>,
      panelsAvx512<5>, panelsAvx512<6>, panelsAvx512<7>, panelsAvx512<8>};
  return kernels[m - 1];
}

} // namespace

PanelMatmul::PanelMatmul(int64_t m, int64_t n, int64_t k, const float *b,
                         bool transB, bool relu, bool portable)
    : m_(m), n_(n), k_(k), relu_(relu),
      avx512_(!portable && __builtin_cpu_supports("avx512f")) {
  assert(m >= 1 && m <= kMaxRows && n >= 1 && k >= 1 &&
         "OneDnnPrimitives::addMatmul checks the panel geometry");
  int64_t count = (n + kCols - 1) / kCols;
  const size_t floats = static_cast<size_t>(count * k * kCols);
  panels_ = allocateHugePageFloats(floats);
  std::fill(panels_.get(), panels_.get() + floats, 0.f);
  for (int64_t p = 0; p < count; ++p)
    for (int64_t s = 0; s < k; ++s) {
      float *row = panels_.get() + (p * k + s) * kCols;
      for (int64_t c = 0; c < kCols && p * kCols + c < n; ++c) {
        int64_t j = p * kCols + c;
        row[c] = transB ? b[j * k + s] : b[s * n + j];
      }
    }
}

void PanelMatmul::run(const float *a, const float *bias, const float *residual,
                      float *y) const {
  // a transposed into [k][8] (rows past m are never read).
  thread_local std::vector<float> transposed;
  if (transposed.size() < static_cast<size_t>(k_ * kRows))
    transposed.resize(static_cast<size_t>(k_ * kRows));
  float *at = transposed.data();
  for (int64_t i = 0; i < m_; ++i)
    for (int64_t s = 0; s < k_; ++s)
      at[s * kRows + i] = a[i * k_ + s];
  const int64_t count = (n_ + kCols - 1) / kCols;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const float *panels = panels_.get();
  const PanelsFn kernel = avx512_ ? avx512Kernel(m_) : nullptr;
#pragma omp parallel num_threads(threads) if (threads > 1 && count > 1)
  {
    // Each thread a contiguous range of panels.
    int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t p0 = count * t / nt, p1 = count * (t + 1) / nt;
    if (kernel)
      kernel(at, panels, n_, k_, p0, p1, bias, residual, y, relu_);
    else
      panelsPortable(m_, at, panels, n_, k_, p0, p1, bias, residual, y, relu_);
  }
}

} // namespace kiln
