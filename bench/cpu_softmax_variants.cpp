//===- cpu_softmax_variants.cpp - Softmax [1024, 4096] row schedules -----===//
//
// This file implements the measurement behind the CPU softmax's limit
// (BENCHMARKS.md, issue 20): one thread, f32 [1024, 4096] (the bench graph,
// 16 MB in, 16 MB out, together the machine's L3), the same buffers every
// run as `kiln bench` and ONNX Runtime use them. It times the copy floor
// (read x, write y, with ordinary and with streaming stores) and softmax
// schedules, all with Kiln's generated kiln_expf:
//   A  Kiln's kernel: the next row's max in this row's exp loop, exp(x - m)
//      written into the output row, then scaled in place
//   C  max pass, exp into an L1 scratch row, scaled into the output
//   D  C with streaming stores
//   E  one online (max, sum) pass, then exp(x - m) / sum recomputed
//   F  A with the exp row in L1 scratch and streaming stores
//   G  A with the exp row in L1 scratch, ordinary stores
//   H  A with the next output row prefetched for writing
// Medians of 60 runs, in ms, four rounds.
//
//   g++ -O3 -march=x86-64-v4 -fno-tree-slp-vectorize -fno-trapping-math \
//     -fno-math-errno -fopenmp-simd bench/cpu_softmax_variants.cpp -o /tmp/smv
//   /tmp/smv
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

/// Kiln's generated exp (targets/cpu/CppPrelude.cpp).
static inline float kiln_expf(float x) {
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
  uint32_t bits;
  std::memcpy(&bits, &t, sizeof(bits));
  bits <<= 23; // 2^(n-1): n - 1 + 127 in the exponent field
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  float y = p * scale;
  y = x < -87.3365448f ? 0.0f : y;
  return x > 88.7228391f ? INFINITY : y;
}

const int R=1024,N=4096;
void A(const float*__restrict in0,float*__restrict out0){
  float p1; { float acc=-INFINITY;
#pragma omp simd reduction(max:acc)
  for(int j=0;j<N;j++) acc=std::max(acc,in0[j]); p1=acc;}
  for(int i=0;i<R;i++){ float*c0=out0+(int64_t)i*N; int nx=i+1<R?i+1:i; float t1=p1; float s=0, m2=-INFINITY;
#pragma omp simd reduction(+:s) reduction(max:m2)
    for(int j=0;j<N;j++){ float t4=kiln_expf(in0[(int64_t)i*N+j]-t1); c0[j]=t4; s+=t4; float t0=in0[(int64_t)nx*N+j]; m2=t0>m2?t0:m2;}
    p1=m2; float inv=1.0f/s;
#pragma omp simd
    for(int j=0;j<N;j++) c0[j]*=inv; }
}
// C: max pass, then exp pass into L1 scratch with sum, then out = scratch*inv (single write of out)
void C(const float*__restrict in0,float*__restrict out0){
  alignas(64) static float sc[N];
  for(int i=0;i<R;i++){ const float*x=in0+(int64_t)i*N; float m=-INFINITY;
#pragma omp simd reduction(max:m)
    for(int j=0;j<N;j++) m=x[j]>m?x[j]:m;
    float s=0;
#pragma omp simd reduction(+:s)
    for(int j=0;j<N;j++){ float e=kiln_expf(x[j]-m); sc[j]=e; s+=e;}
    float inv=1.0f/s; float*o=out0+(int64_t)i*N;
#pragma omp simd
    for(int j=0;j<N;j++) o[j]=sc[j]*inv; }
}
// D: as C but stream store
void D(const float*__restrict in0,float*__restrict out0){
  alignas(64) static float sc[N];
  for(int i=0;i<R;i++){ const float*x=in0+(int64_t)i*N; float m=-INFINITY;
#pragma omp simd reduction(max:m)
    for(int j=0;j<N;j++) m=x[j]>m?x[j]:m;
    float s=0;
#pragma omp simd reduction(+:s)
    for(int j=0;j<N;j++){ float e=kiln_expf(x[j]-m); sc[j]=e; s+=e;}
    __m512 inv=_mm512_set1_ps(1.0f/s); float*o=out0+(int64_t)i*N;
    for(int j=0;j<N;j+=16) _mm512_stream_ps(o+j,_mm512_mul_ps(_mm512_load_ps(sc+j),inv)); }
  _mm_sfence();
}
// E: online max+sum in one pass, then out = exp(x-m)*inv (recompute exp)
void E(const float*__restrict in0,float*__restrict out0){
  for(int i=0;i<R;i++){ const float*x=in0+(int64_t)i*N;
    __m512 m=_mm512_set1_ps(-INFINITY), s=_mm512_setzero_ps();
    for(int j=0;j<N;j+=16){ __m512 v=_mm512_loadu_ps(x+j); __m512 mn=_mm512_max_ps(m,v);
      float a[16],b[16],c[16]; _mm512_storeu_ps(a,m);_mm512_storeu_ps(b,mn);_mm512_storeu_ps(c,v);
      float r1[16],r2[16];
      for(int k=0;k<16;k++){r1[k]=kiln_expf(a[k]-b[k]); r2[k]=kiln_expf(c[k]-b[k]);}
      s=_mm512_fmadd_ps(s,_mm512_loadu_ps(r1),_mm512_loadu_ps(r2)); m=mn; }
    float mm=_mm512_reduce_max_ps(m); float mv[16],sv[16]; _mm512_storeu_ps(mv,m);_mm512_storeu_ps(sv,s); float ss=0; for(int k=0;k<16;k++) ss+=sv[k]*kiln_expf(mv[k]-mm);
    float inv=1.0f/ss; float*o=out0+(int64_t)i*N;
#pragma omp simd
    for(int j=0;j<N;j++) o[j]=kiln_expf(x[j]-mm)*inv; }
}
void F(const float*__restrict in0,float*__restrict out0){
  alignas(64) static float c0[N];
  float p1; { float acc=-INFINITY;
#pragma omp simd reduction(max:acc)
  for(int j=0;j<N;j++) acc=std::max(acc,in0[j]); p1=acc;}
  for(int i=0;i<R;i++){ int nx=i+1<R?i+1:i; float t1=p1; float s=0, m2=-INFINITY;
#pragma omp simd reduction(+:s) reduction(max:m2)
    for(int j=0;j<N;j++){ float t4=kiln_expf(in0[(int64_t)i*N+j]-t1); c0[j]=t4; s+=t4; float t0=in0[(int64_t)nx*N+j]; m2=t0>m2?t0:m2;}
    p1=m2; __m512 inv=_mm512_set1_ps(1.0f/s); float*o=out0+(int64_t)i*N;
    for(int j=0;j<N;j+=16) _mm512_stream_ps(o+j,_mm512_mul_ps(_mm512_load_ps(c0+j),inv)); }
  _mm_sfence();
}
void G(const float*__restrict in0,float*__restrict out0){
  alignas(64) static float c0[N];
  float p1; { float acc=-INFINITY;
#pragma omp simd reduction(max:acc)
  for(int j=0;j<N;j++) acc=std::max(acc,in0[j]); p1=acc;}
  for(int i=0;i<R;i++){ int nx=i+1<R?i+1:i; float t1=p1; float s=0, m2=-INFINITY;
#pragma omp simd reduction(+:s) reduction(max:m2)
    for(int j=0;j<N;j++){ float t4=kiln_expf(in0[(int64_t)i*N+j]-t1); c0[j]=t4; s+=t4; float t0=in0[(int64_t)nx*N+j]; m2=t0>m2?t0:m2;}
    p1=m2; float inv=1.0f/s; float*o=out0+(int64_t)i*N;
#pragma omp simd
    for(int j=0;j<N;j++) o[j]=c0[j]*inv; }
}
// H: A but prefetch the out row of the next row with prefetchw during pass 2
void H(const float*__restrict in0,float*__restrict out0){
  float p1; { float acc=-INFINITY;
#pragma omp simd reduction(max:acc)
  for(int j=0;j<N;j++) acc=std::max(acc,in0[j]); p1=acc;}
  for(int i=0;i<R;i++){ float*c0=out0+(int64_t)i*N; int nx=i+1<R?i+1:i; float t1=p1; float s=0, m2=-INFINITY;
    for(int j=0;j<N;j+=16) __builtin_prefetch(out0+(int64_t)nx*N+j,1,3);
#pragma omp simd reduction(+:s) reduction(max:m2)
    for(int j=0;j<N;j++){ float t4=kiln_expf(in0[(int64_t)i*N+j]-t1); c0[j]=t4; s+=t4; float t0=in0[(int64_t)nx*N+j]; m2=t0>m2?t0:m2;}
    p1=m2; float inv=1.0f/s;
#pragma omp simd
    for(int j=0;j<N;j++) c0[j]*=inv; }
}
int main() {
  size_t n = (size_t)R * N;
  float *a = (float *)aligned_alloc(64, n * 4);
  float *b = (float *)aligned_alloc(64, n * 4);
  for (size_t i = 0; i < n; i++)
    a[i] = sinf(i * 0.001f) * 3;
  memset(b, 0, n * 4);
  auto T = [&](auto f) {
    std::vector<double> t;
    for (int r = 0; r < 60; r++) {
      auto s = std::chrono::steady_clock::now();
      f();
      t.push_back(std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - s)
                      .count());
    }
    std::sort(t.begin(), t.end());
    return t[30];
  };
  auto copy = [&] {
    for (size_t i = 0; i < n; i += 16)
      _mm512_store_ps(b + i, _mm512_load_ps(a + i));
  };
  auto stream = [&] {
    for (size_t i = 0; i < n; i += 16)
      _mm512_stream_ps(b + i, _mm512_load_ps(a + i));
    _mm_sfence();
  };
  for (int rep = 0; rep < 4; rep++)
    printf("copy %.3f stream %.3f | A %.3f C %.3f D %.3f E %.3f F %.3f G %.3f "
           "H %.3f\n",
           T(copy), T(stream), T([&] { A(a, b); }), T([&] { C(a, b); }),
           T([&] { D(a, b); }), T([&] { E(a, b); }), T([&] { F(a, b); }),
           T([&] { G(a, b); }), T([&] { H(a, b); }));
}
