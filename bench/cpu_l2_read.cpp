//===- cpu_l2_read.cpp - Read bandwidth by buffer size, one thread --------===//
//
// This file implements the measurement behind "the recurrence's product is
// at this machine's L2 bandwidth" (BENCHMARKS.md, twenty-third session): a
// sum of AVX-512 loads over buffers of 32 KB to 4 MB, best of 200 passes,
// printed in GB/s and bytes per cycle at 2.8 GHz. On the Ice Lake machine:
// 1 MB at 45.5 and 53.2 GB/s (two runs), 256-768 KB at 49-50, 4 MB (L3) at
// 29-32.
//
//   g++ -O2 -march=native bench/cpu_l2_read.cpp -o /tmp/l2 && /tmp/l2
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
int main() {
  for (size_t kb : {32, 256, 512, 768, 1024, 1536, 4096}) {
    size_t n = kb * 1024 / 4;
    std::vector<float> a(n, 1.0f);
    double best = 1e9;
    for (int rep = 0; rep < 200; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      for (size_t i = 0; i < n; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_loadu_ps(&a[i]));
        s1 = _mm512_add_ps(s1, _mm512_loadu_ps(&a[i + 16]));
        s2 = _mm512_add_ps(s2, _mm512_loadu_ps(&a[i + 32]));
        s3 = _mm512_add_ps(s3, _mm512_loadu_ps(&a[i + 48]));
      }
      float r = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
      auto t1 = std::chrono::steady_clock::now();
      if (r == 0) printf("x");
      best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    }
    printf("%5zu KB: %.1f GB/s, %.1f B/cycle@2.8\n", kb, kb * 1024 / best / 1e9, kb * 1024 / best / 2.8e9);
  }
}
