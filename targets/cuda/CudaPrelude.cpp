//===- CudaPrelude.cpp - The prelude of kernels.cu ------------------------===//
//
// This file implements the CUDA target's kernel prelude: the integer
// typedefs and math constants NVRTC lacks, kiln_expf and kiln_erff as the
// device's expf and erff, the f16/bf16 conversions as single device
// instructions, the scalar helpers every printer shares
// (codegen/ExprPrinter.cpp) as `__device__ __forceinline__`, and the device
// extras: max/min with NaN semantics in one instruction, kiln_vec (aligned
// vector access) and kiln_shfl_xor (warp shuffles of accumulators).
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaKernel.h"
#include "codegen/ExprPrinter.h"

namespace kiln {

namespace {
const char *const kCudaHead = R"PRELUDE(// NVRTC has no standard headers: the fixed-width integer types, the math
// constants and the limits the helpers use are defined here.
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define INT64_MAX 9223372036854775807LL
#define INT64_MIN (-9223372036854775807LL - 1)

// exp: the device's expf (within 2 ulp; no fast-math intrinsics such as
// __expf). erf: the C++ prelude's function (x P(x^2) below 0.921875,
// Abramowitz & Stegun 7.1.26 above, both computed and one selected), its
// reciprocal and exp2 from the special-function unit: within 4 ulp and
// 2.5e-7 of erf, branch-free, about 20 instructions where erff takes both
// of its branches in a warp of mixed arguments. kiln_erff_absolute is A&S
// alone (within 5.8e-7, not relatively accurate near 0) for an erf whose
// every use adds 1 (markPlusOneErfs: GELU). The bf16 ln_gelu kernel on an
// H200 (bench/cuda_ln_gelu_variants.cu): erff 0.117 ms, kiln_erff 0.110,
// A&S alone 0.101; the converted graph's erf table 0.109.
__device__ __forceinline__ float kiln_expf(float x) { return expf(x); }
__device__ __forceinline__ float kiln_expf_nonpositive(float x) {
  return expf(x);
}
__device__ __forceinline__ float kiln_erff_absolute(float x) {
  float ax = fabsf(x), d = fmaf(0.3275911f, ax, 1.0f), t, e;
  float a = -ax * ax * 1.44269504088896341f;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(d));
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(a));
  float poly = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t -
                 0.284496736f) * t + 0.254829592f) * t;
  return copysignf(1.0f - poly * e, x);
}
__device__ __forceinline__ float kiln_erff(float x) {
  float large = kiln_erff_absolute(x);
  float s = x * x;
  float p = fmaf(-5.99113351e-4f, s, 4.99324501e-3f);
  p = fmaf(p, s, -2.67666709e-2f);
  p = fmaf(p, s, 1.12818182e-1f);
  p = fmaf(p, s, -3.76124948e-1f);
  p = fmaf(p, s, 1.12837911f);
  return fabsf(x) < 0.921875f ? x * p : large;
}

)PRELUDE";
const char *const kCudaBits = R"PRELUDE(// f16 and bf16 storage types: round to nearest even from float, NaN stays a
// NaN (the runtime's DType.cpp).
__device__ __forceinline__ uint32_t kiln_float_bits(float f) {
  return __float_as_uint(f);
}
__device__ __forceinline__ float kiln_bits_float(uint32_t u) {
  return __uint_as_float(u);
}
)PRELUDE";
const char *const kCudaConversions = R"PRELUDE(// The device converts with single instructions: round to nearest even, NaN
// stays a NaN (its payload may differ from the host's).
__device__ __forceinline__ uint16_t kiln_float_to_f16_bits(float f) {
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float kiln_f16_bits_to_float(uint16_t h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ uint16_t kiln_float_to_bf16_bits(float f) {
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
// x rounded to bf16 and widened back, in one instruction (F2FP): the packed
// conversion puts bf16(x) in the upper half and bf16(0) = 0 in the lower.
__device__ __forceinline__ float kiln_round_bf16(float x) {
  uint32_t u;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(x), "f"(0.0f));
  return __uint_as_float(u);
}
)PRELUDE";
const char *const kCudaTail = R"PRELUDE(
// float max and min with the helpers' NaN semantics (a NaN operand gives a
// NaN) in one instruction each (sm_80 and later), instead of two compares and
// two selects: they sit in the inner loop of every max/min reduction.
template <> __device__ __forceinline__ float kiln_max<float>(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __device__ __forceinline__ float kiln_min<float>(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

// Vector access: N consecutive elements, aligned to their size, read or
// written as one (up to 16-byte) memory transaction.
template <class T, int N> struct alignas(sizeof(T) * N) kiln_vec {
  T v[N];
};

// Warp shuffles of accumulators (types narrower than int go through int).
__device__ __forceinline__ float kiln_shfl_xor(float v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ double kiln_shfl_xor(double v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ int kiln_shfl_xor(int v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ unsigned kiln_shfl_xor(unsigned v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ long long kiln_shfl_xor(long long v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ unsigned long long
kiln_shfl_xor(unsigned long long v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
)PRELUDE";
} // namespace

std::string cudaKernelPrelude() {
  return std::string(kCudaHead) + kCudaBits + kCudaConversions +
         codegen::scalarHelperPrelude("__device__ __forceinline__",
                                      "__device__ ") +
         kCudaTail;
}

} // namespace kiln
