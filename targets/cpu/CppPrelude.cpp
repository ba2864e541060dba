//===- CppPrelude.cpp - The prelude of kernels.cpp ------------------------===//
//
// This file implements the C++ target's kernel prelude: the standard headers
// the host compiler has, the vectorizable kiln_expf/kiln_erff polynomials,
// the f16/bf16 bit conversions through memcpy, then the scalar helpers that
// every printer shares (codegen/ExprPrinter.cpp), all `static inline`.
//
//===----------------------------------------------------------------------===//

#include "targets/cpu/CppKernel.h"
#include "codegen/ExprPrinter.h"

namespace kiln {

namespace {
const char *const kCppHead = R"PRELUDE(#include <cmath>
#include <cstdint>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__SSE2__)
#include <immintrin.h>
#endif

// Non-temporal stores of outputs larger than a last-level cache
// (CppPrinter.cpp printStreamedLoop): `bytes` (a multiple of 64) from the
// 64-byte aligned local chunk `src` to `dst`, bypassing the caches (a
// `dst` that is not 64-byte aligned, which a caller of the C ABI may pass,
// is copied); the fence makes them visible before the kernel's threads
// synchronize.
static inline void kiln_stream_store(void *dst, const void *src,
                                     int64_t bytes) {
  if (((uintptr_t)dst & 63) != 0) {
    std::memcpy(dst, src, (size_t)bytes);
    return;
  }
#if defined(__AVX512F__)
  for (int64_t i = 0; i < bytes; i += 64)
    _mm512_stream_si512((__m512i *)((char *)dst + i),
                        _mm512_load_si512((const char *)src + i));
#elif defined(__AVX__)
  for (int64_t i = 0; i < bytes; i += 32)
    _mm256_stream_si256((__m256i *)((char *)dst + i),
                        _mm256_load_si256((const __m256i *)((const char *)src + i)));
#elif defined(__SSE2__)
  for (int64_t i = 0; i < bytes; i += 16)
    _mm_stream_si128((__m128i *)((char *)dst + i),
                     _mm_load_si128((const __m128i *)((const char *)src + i)));
#else
  std::memcpy(dst, src, (size_t)bytes);
#endif
}
static inline void kiln_stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// exp and erf for float without calls or branches, so that loops using them
// vectorize. kiln_expf: Cephes' polynomial on r = x - n*ln2, times 2^(n-1)
// built in the exponent bits: n is rounded by the 1.5*2^23 bias, whose float
// bits then hold n + 126 in the low mantissa; the polynomial's coefficients
// are doubled (exact) to make up the missing factor 2. The argument is not
// clamped: outside [-87.34, 88.72] the result is fixed afterwards (0 below,
// infinity above; two compares and blends instead of clamping before and
// after, which costs the loop about 7%), and NaN goes through the arithmetic.
// Within 1 ulp of expf for results of at least 2^-125 (checked against libm
// over all 2^32 inputs); smaller results flush to 0. kiln_erff: below
// 0.921875, x P(x^2) (a fit of relative error 1.6e-8, so that small
// arguments keep their relative accuracy); above, Abramowitz & Stegun
// 7.1.26 (absolute error below 1.5e-7); both computed, one selected. Within
// 4.1 ulp and 2.5e-7 of erf over [-6, 6] (bench/cuda_ln_gelu_variants.cu's
// accuracy table; the CUDA prelude computes the same function).
// kiln_erff_absolute is A&S alone (within 5.8e-7, not relatively accurate
// near 0), for an erf whose every use adds 1 (markPlusOneErfs: GELU).
// kiln_expf_nonpositive is
// kiln_expf for an argument known to be at most 0 or NaN (softmax's
// exp(x - max x), marked by the kernel IR's markNonPositiveExps): the same
// results without the overflow fix, two of the loop's ~21 vector
// instructions.
static inline float kiln_expf_nonpositive(float x) {
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
  return x < -87.3365448f ? 0.0f : y;
}
static inline float kiln_expf(float x) {
  float y = kiln_expf_nonpositive(x);
  return x > 88.7228391f ? INFINITY : y;
}
static inline float kiln_erff_absolute(float x) {
  float ax = fabsf(x);
  float t = 1.0f / (1.0f + 0.3275911f * ax);
  float poly = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t -
                 0.284496736f) * t + 0.254829592f) * t;
  float y = 1.0f - poly * kiln_expf_nonpositive(-ax * ax);
  y = x < 0.0f ? -y : y;
  return x != x ? x : y;
}
static inline float kiln_erff(float x) {
  float large = kiln_erff_absolute(x);
  float s = x * x;
  float p = -5.99113351e-4f * s + 4.99324501e-3f;
  p = p * s - 2.67666709e-2f;
  p = p * s + 1.12818182e-1f;
  p = p * s - 3.76124948e-1f;
  p = p * s + 1.12837911f;
  return fabsf(x) < 0.921875f ? x * p : large;
}
// erf of a bf16 value (the CUDA file reads a table of all 65536 results).
static inline float kiln_erf_bf16(float x) { return kiln_erff(x); }

)PRELUDE";
const char *const kCppBits = R"PRELUDE(// f16 and bf16 storage types: round to nearest even from float, NaN stays a
// NaN (the runtime's DType.cpp).
static inline uint32_t kiln_float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
static inline float kiln_bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
)PRELUDE";
const char *const kCppConversions = R"PRELUDE(KILN_FN uint16_t kiln_float_to_f16_bits(float f) {
  uint32_t x = kiln_float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)
    return (uint16_t)(absx > 0x7f800000u ? sign | 0x7e00u | ((absx >> 13) & 0x3ffu)
                                         : sign | 0x7c00u);
  if (absx >= 0x477ff000u)
    return (uint16_t)(sign | 0x7c00u);
  int32_t e = (int32_t)(absx >> 23) - 127;
  if (e >= -14) {
    uint32_t mant = absx & 0x7fffffu;
    uint32_t h = ((uint32_t)(e + 15) << 10) | (mant >> 13), rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
      ++h;
    return (uint16_t)(sign | h);
  }
  if (e < -25)
    return (uint16_t)sign;
  uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
  int shift = -e - 1;
  uint32_t h = mant >> shift, rest = mant & ((1u << shift) - 1u),
           halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u)))
    ++h;
  return (uint16_t)(sign | h);
}
KILN_FN float kiln_f16_bits_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu,
           mant = h & 0x3ffu;
  if (e == 0x1f)
    return kiln_bits_float(sign | 0x7f800000u | (mant << 13));
  if (e == 0) {
    if (mant == 0)
      return kiln_bits_float(sign);
    float v = (float)mant * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return kiln_bits_float(sign | ((e + 112u) << 23) | (mant << 13));
}
KILN_FN uint16_t kiln_float_to_bf16_bits(float f) {
  uint32_t x = kiln_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}
KILN_FN float kiln_round_bf16(float x) {
  return kiln_bits_float((uint32_t)kiln_float_to_bf16_bits(x) << 16);
}
)PRELUDE";
} // namespace

std::string cppKernelPrelude() {
  return std::string(kCppHead) + kCppBits +
         codegen::markQualifiers(kCppConversions, "static inline", "") +
         codegen::scalarHelperPrelude("static inline", "");
}

} // namespace kiln
