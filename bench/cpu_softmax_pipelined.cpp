//===- cpu_softmax_pipelined.cpp - Softmax [1024, 4096] rows pipelined ----===//
//
// This file implements the measurement behind the CPU printer's pipelined
// rows (targets/cpu/CppRowSchedules.cpp printPipelinedRows; BENCHMARKS.md,
// issue 20): f32 softmax [1024, 4096] (16 MB in, 16 MB out), the same
// buffers every run, on OMP_NUM_THREADS threads. Times the copy floor
// (ordinary and streaming stores) and these schedules, all with Kiln's exp:
//   K    Kiln's earlier kernel: max, exp into the output row (the next
//        row prefetched), scaled in place
//   F    K with the exp row in L1 scratch, scaled into streaming stores
//   G    F with ordinary stores
//   P    pipelined: one loop per row computes this row's exp into one of
//        two scratch rows and the next row's max, and streams the previous
//        row's scaled outputs block by block
//   Pp   P with the max a loop of its own over the prefetched row (the
//        schedule kiln first generated)
//   Pst  P with ordinary stores
//   Ps   Pp with one scratch row: each block of the previous row is stored
//        before this row's block is computed into the same columns
//   PsT1 Ps with the next row prefetched into L2 only (the schedule kiln
//        generates since the second commit of the twenty-second session)
// P and Pp write their loops with AVX-512 intrinsics (the same exp):
// GCC left the harness's scalar-style versions unvectorized inside a bare
// `omp parallel` region (the generated kernel's loops vectorize; checked
// with objdump). Medians of 60 runs, in ms, four rounds.
//
//   g++ -O3 -march=x86-64-v4 -fno-tree-slp-vectorize -fno-trapping-math \
//     -fno-math-errno -fopenmp bench/cpu_softmax_pipelined.cpp -o /tmp/smp
//   OMP_NUM_THREADS=2 /tmp/smp; OMP_NUM_THREADS=1 /tmp/smp
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <omp.h>
static inline float kexp(float x) {
  float t = x * 1.44269504088896341f + (12582912.0f + 126.0f);
  float n = t - (12582912.0f + 126.0f);
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 2.0f * 1.9875691500E-4f;
  p = p * r + 2.0f * 1.3981999507E-3f;
  p = p * r + 2.0f * 8.3334519073E-3f;
  p = p * r + 2.0f * 4.1665795894E-2f;
  p = p * r + 2.0f * 1.6666665459E-1f;
  p = p * r + 2.0f * 5.0000001201E-1f;
  p = p * (r * r) + (r * 2.0f + 2.0f);
  uint32_t bits; std::memcpy(&bits, &t, 4); bits <<= 23;
  float scale; std::memcpy(&scale, &bits, 4);
  float y = p * scale;
  return x < -87.3365448f ? 0.0f : y;
}
const int R=1024,N=4096;
template<int V> void K(const float*__restrict in0,float*__restrict out0){
  #pragma omp parallel for
  for (int64_t i0 = 0; i0 < R; ++i0) {
    float *c0 = out0 + i0*N;
    const int64_t nx = i0 + 1 < R ? i0 + 1 : i0;
    float acc1 = -INFINITY; int nan1 = 0;
    #pragma omp simd reduction(max:acc1) reduction(|:nan1)
    for (int64_t j0 = 0; j0 < N; ++j0) { const float t0 = in0[i0*N + j0]; acc1 = t0 > acc1 ? t0 : acc1; nan1 |= t0 != t0; }
    const float t1 = (nan1 ? NAN : acc1);
    float acc5 = 0;
    for (int64_t jb = 0; jb < N; jb += 256) {
      for (int64_t k = jb; k < jb+256; k += 16) __builtin_prefetch(&in0[nx*N + k]);
      #pragma omp simd reduction(+:acc5)
      for (int64_t j0 = jb; j0 < jb+256; ++j0) {
        const float t3 = in0[i0*N + j0] - t1;
        const float t4 = kexp(t3);
        c0[j0] = t4; acc5 += t4;
      }
    }
    const float t9 = 1.0f / acc5;
    #pragma omp simd
    for (int64_t j0 = 0; j0 < N; ++j0) out0[i0*N + j0] = c0[j0] * t9;
  }
}
// Columns [j0, j1) of a row cache times `inv` into the output row: streamed
// (V = 0) or stored (V = 1). Every variant's store of a finished row.
template<int V> static inline void storeScaled(const float*__restrict row, float*__restrict out,
                                               int64_t j0, int64_t j1, float inv){
  __m512 iv = _mm512_set1_ps(inv);
  for (int64_t j = j0; j < j1; j += 16) {
    __m512 v = _mm512_mul_ps(_mm512_load_ps(row + j), iv);
    if (V==0) _mm512_stream_ps(out + j, v); else _mm512_store_ps(out + j, v);
  }
}
template<int V> void F(const float*__restrict in0,float*__restrict out0){
  #pragma omp parallel
  {
  alignas(64) float c0[N];
  #pragma omp for
  for (int64_t i0 = 0; i0 < R; ++i0) {
    const int64_t nx = i0 + 1 < R ? i0 + 1 : i0;
    float acc1 = -INFINITY; int nan1 = 0;
    #pragma omp simd reduction(max:acc1) reduction(|:nan1)
    for (int64_t j0 = 0; j0 < N; ++j0) { const float t0 = in0[i0*N + j0]; acc1 = t0 > acc1 ? t0 : acc1; nan1 |= t0 != t0; }
    const float t1 = (nan1 ? NAN : acc1);
    float acc5 = 0;
    for (int64_t jb = 0; jb < N; jb += 256) {
      for (int64_t k = jb; k < jb+256; k += 16) __builtin_prefetch(&in0[nx*N + k]);
      #pragma omp simd reduction(+:acc5)
      for (int64_t j0 = jb; j0 < jb+256; ++j0) {
        const float t3 = in0[i0*N + j0] - t1;
        const float t4 = kexp(t3);
        c0[j0] = t4; acc5 += t4;
      }
    }
    storeScaled<V>(c0, out0 + i0*N, 0, N, 1.0f / acc5);
  }
  _mm_sfence();
  }
}
static inline __m512 vexp(__m512 x){
  const __m512 bias=_mm512_set1_ps(12582912.0f + 126.0f);
  __m512 t=_mm512_fmadd_ps(x,_mm512_set1_ps(1.44269504088896341f),bias);
  __m512 n=_mm512_sub_ps(t,bias);
  __m512 r=_mm512_fnmadd_ps(n,_mm512_set1_ps(0.693359375f),x);
  r=_mm512_fmadd_ps(n,_mm512_set1_ps(2.12194440e-4f),r);
  __m512 p=_mm512_set1_ps(2.0f * 1.9875691500E-4f);
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(2.0f * 1.3981999507E-3f));
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(2.0f * 8.3334519073E-3f));
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(2.0f * 4.1665795894E-2f));
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(2.0f * 1.6666665459E-1f));
  p=_mm512_fmadd_ps(p,r,_mm512_set1_ps(2.0f * 5.0000001201E-1f));
  p=_mm512_fmadd_ps(p,_mm512_mul_ps(r,r),_mm512_fmadd_ps(r,_mm512_set1_ps(2.0f),_mm512_set1_ps(2.0f)));
  __m512 sc=_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(t),23));
  __m512 y=_mm512_mul_ps(p,sc);
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x,_mm512_set1_ps(-87.3365448f),_CMP_GE_OQ),y);
}
static inline void chunk(const float*__restrict x,const float*__restrict xn,float*__restrict cur,float m,float&s_,float&mn_){
  __m512 s=_mm512_setzero_ps(), mn=_mm512_set1_ps(-INFINITY), mv=_mm512_set1_ps(m);
  for (int64_t j = 0; j < 256; j += 16) {
    __m512 ev = vexp(_mm512_sub_ps(_mm512_load_ps(x+j), mv)); _mm512_store_ps(cur+j, ev); s = _mm512_add_ps(s, ev);
    mn = _mm512_max_ps(mn, _mm512_load_ps(xn+j));
  }
  s_ += _mm512_reduce_add_ps(s); mn_ = std::max(mn_, _mm512_reduce_max_ps(mn));
}
// P: one loop per row: exp of row i into scratch, max of row i+1, stream out row i-1
template<int V> void P(const float*__restrict in0,float*__restrict out0){
  #pragma omp parallel
  {
  alignas(64) float sc[2][N];
  int nt = omp_get_num_threads(), t = omp_get_thread_num();
  int64_t b = R * t / nt, e = R * (t + 1) / nt;
  float m; { float acc = -INFINITY;
    #pragma omp simd reduction(max:acc)
    for (int j = 0; j < N; ++j) acc = std::max(acc, in0[b*N + j]); m = acc; }
  float invPrev = 0;
  for (int64_t i = b; i <= e; ++i) {
    float *__restrict cur = sc[i & 1]; const float *__restrict prev = sc[(i + 1) & 1];
    float *oprev = out0 + (i - 1) * N;
    const bool hasCur = i < e, hasNext = i + 1 < e, hasPrev = i > b;
    const float *__restrict x = in0 + i * N, *__restrict xn = in0 + (hasNext ? i + 1 : i) * N;
    float s = 0, mn = -INFINITY;
    if (hasCur) {
      for (int64_t jb = 0; jb < N; jb += 256) {
        chunk(x + jb, xn + jb, cur + jb, m, s, mn);
        if (hasPrev) storeScaled<V>(prev, oprev, jb, jb + 256, invPrev);
      }
    } else if (hasPrev) {
      storeScaled<V>(prev, oprev, 0, N, invPrev);
    }
    invPrev = 1.0f / s; m = mn;
  }
  _mm_sfence();
  }
}
static inline void chunkP(const float*__restrict x,const float*__restrict xn,float*__restrict cur,float m,float&s_){
  __m512 s=_mm512_setzero_ps(), mv=_mm512_set1_ps(m);
  for (int64_t j = 0; j < 256; j += 16) __builtin_prefetch(xn + j);
  for (int64_t j = 0; j < 256; j += 16) {
    __m512 ev = vexp(_mm512_sub_ps(_mm512_load_ps(x+j), mv)); _mm512_store_ps(cur+j, ev); s = _mm512_add_ps(s, ev);
  }
  s_ += _mm512_reduce_add_ps(s);
}
template<int V> void Pp(const float*__restrict in0,float*__restrict out0){
  #pragma omp parallel
  {
  alignas(64) float sc[2][N];
  int nt = omp_get_num_threads(), t = omp_get_thread_num();
  int64_t b = R * t / nt, e = R * (t + 1) / nt;
  float invPrev = 0;
  for (int64_t i = b; i <= e; ++i) {
    float *__restrict cur = sc[i & 1]; const float *__restrict prev = sc[(i + 1) & 1];
    float *oprev = out0 + (i - 1) * N;
    const bool hasCur = i < e, hasNext = i + 1 < e, hasPrev = i > b;
    const float *__restrict x = in0 + i * N, *__restrict xn = in0 + (hasNext ? i + 1 : i) * N;
    float s = 0;
    if (hasCur) {
      __m512 mv = _mm512_set1_ps(-INFINITY);
      for (int j = 0; j < N; j += 16) mv = _mm512_max_ps(mv, _mm512_load_ps(x + j));
      float m = _mm512_reduce_max_ps(mv);
      for (int64_t jb = 0; jb < N; jb += 256) {
        chunkP(x + jb, xn + jb, cur + jb, m, s);
        if (hasPrev) storeScaled<V>(prev, oprev, jb, jb + 256, invPrev);
      }
    } else if (hasPrev) {
      storeScaled<V>(prev, oprev, 0, N, invPrev);
    }
    invPrev = 1.0f / s;
  }
  _mm_sfence();
  }
}
static inline void chunkP1(const float*__restrict x,const float*__restrict xn,float*__restrict cur,float m,float&s_){
  __m512 s=_mm512_setzero_ps(), mv=_mm512_set1_ps(m);
  for (int64_t j = 0; j < 256; j += 16) _mm_prefetch((const char*)(xn + j), _MM_HINT_T1);
  for (int64_t j = 0; j < 256; j += 16) {
    __m512 ev = vexp(_mm512_sub_ps(_mm512_load_ps(x+j), mv)); _mm512_store_ps(cur+j, ev); s = _mm512_add_ps(s, ev);
  }
  s_ += _mm512_reduce_add_ps(s);
}
template<int V, int H> void Ps(const float*__restrict in0,float*__restrict out0){
  #pragma omp parallel
  {
  alignas(64) float sc[N];
  int nt = omp_get_num_threads(), t = omp_get_thread_num();
  int64_t b = R * t / nt, e = R * (t + 1) / nt;
  float invPrev = 0;
  for (int64_t i = b; i <= e; ++i) {
    float *__restrict cur = sc; const float *__restrict prev = sc;
    float *oprev = out0 + (i - 1) * N;
    const bool hasCur = i < e, hasNext = i + 1 < e, hasPrev = i > b;
    const float *__restrict x = in0 + i * N, *__restrict xn = in0 + (hasNext ? i + 1 : i) * N;
    float s = 0;
    if (hasCur) {
      __m512 mv = _mm512_set1_ps(-INFINITY);
      for (int j = 0; j < N; j += 16) mv = _mm512_max_ps(mv, _mm512_load_ps(x + j));
      float m = _mm512_reduce_max_ps(mv);
      for (int64_t jb = 0; jb < N; jb += 256) {
        if (hasPrev) storeScaled<V>(prev, oprev, jb, jb + 256, invPrev);
        if (H) chunkP1(x + jb, xn + jb, cur + jb, m, s); else chunkP(x + jb, xn + jb, cur + jb, m, s);
      }
    } else if (hasPrev) {
      storeScaled<V>(prev, oprev, 0, N, invPrev);
    }
    invPrev = 1.0f / s;
  }
  _mm_sfence();
  }
}
void stream(const float*__restrict a,float*__restrict b){
  #pragma omp parallel for
  for (int64_t i0 = 0; i0 < R; ++i0) for (int j=0;j<N;j+=16) _mm512_stream_ps(b+i0*N+j,_mm512_load_ps(a+i0*N+j));
  _mm_sfence();
}
void copy(const float*__restrict a,float*__restrict b){
  #pragma omp parallel for
  for (int64_t i0 = 0; i0 < R; ++i0) for (int j=0;j<N;j+=16) _mm512_store_ps(b+i0*N+j,_mm512_load_ps(a+i0*N+j));
}
int main(int argc,char**argv) {
  size_t n = (size_t)R * N;
  float *a = (float *)aligned_alloc(64, n * 4), *b = (float *)aligned_alloc(64, n * 4);
  for (size_t i = 0; i < n; i++) a[i] = sinf(i * 0.001f) * 3;
  memset(b, 0, n * 4);
  auto T = [&](auto f) { std::vector<double> t;
    for (int r = 0; r < 60; r++) { auto s = std::chrono::steady_clock::now(); f();
      t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count()); }
    std::sort(t.begin(), t.end()); return t[30]; };
  { K<0>(a,b); std::vector<float> ref(b,b+n); memset(b,0,n*4); P<0>(a,b); double md=0; for(size_t i=0;i<n;i++) md=std::max(md,(double)fabsf(ref[i]-b[i])); printf("P vs K max diff %g\n",md);}
  { K<0>(a,b); std::vector<float> ref(b,b+n); memset(b,0,n*4); Ps<0,1>(a,b); double md=0; for(size_t i=0;i<n;i++) md=std::max(md,(double)fabsf(ref[i]-b[i])); printf("PsT1 vs K max diff %g\n",md);}
  for (int rep = 0; rep < 4; rep++)
    printf("threads %d copy %.3f stream %.3f | K %.3f F %.3f G %.3f P %.3f Pp %.3f Pst %.3f Ps %.3f PsT1 %.3f\n", omp_get_max_threads(), T([&]{copy(a,b);}), T([&]{stream(a,b);}), T([&]{K<0>(a,b);}), T([&]{F<0>(a,b);}), T([&]{F<1>(a,b);}), T([&]{P<0>(a,b);}), T([&]{Pp<0>(a,b);}), T([&]{P<1>(a,b);}), T([&]{Ps<0,0>(a,b);}), T([&]{Ps<0,1>(a,b);}));
}
