//===- ExprPrinter.cpp - Scalar ops as C expressions ----------------------===//
//
// This file implements the expression printer shared by the kernel printers
// and the kernel prelude it relies on. Every expression reproduces the
// reference runtime's scalar semantics (runtime/kernels/Elementwise*.cpp):
// wrapping integer arithmetic, integer division truncating toward zero with
// x / 0 = 0, both ONNX mod modes, NaN-propagating max/min, round half to
// even (nearbyint), ONNX cast rules, the erf and tanh forms of gelu, and
// f16/bf16 computed in float and rounded to nearest even once per op.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstdio>

namespace kiln {
namespace codegen {

namespace {

const llvm::StringSet<> &scalarOps() {
  static const llvm::StringSet<> ops = {
      // Elementwise, binary.
      "add", "sub", "mul", "div", "pow", "max", "min", "mod", "bitwise_and",
      "bitwise_or", "bitwise_xor", "bit_shift", "and", "or", "xor", "prelu",
      // Comparisons.
      "equal", "less", "less_equal", "greater", "greater_equal",
      // Elementwise, unary.
      "neg", "abs", "sign", "exp", "log", "sqrt", "reciprocal", "floor", "ceil",
      "round", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
      "asinh", "acosh", "atanh", "erf", "not", "bitwise_not", "relu", "sigmoid",
      "tanh", "softplus", "softsign", "mish", "hard_swish", "leaky_relu", "elu",
      "celu", "selu", "hard_sigmoid", "thresholded_relu", "shrink", "gelu",
      "swish", "is_nan", "is_inf", "cast",
      // Selection.
      "where"};
  return ops;
}

/// The unsigned type of the same width (for wrapping arithmetic).
std::string unsignedCType(ScalarType t) {
  switch (t) {
  case ScalarType::I64:
    return "uint64_t";
  case ScalarType::I32:
    return "uint32_t";
  default:
    return "uint8_t";
  }
}

/// The name of a math function for the compute type: libm's `exp` for f64;
/// for float, the prelude's vectorizable `kiln_expf`/`kiln_erff` (libm's
/// calls keep loops scalar), else libm's `expf`.
std::string fn(llvm::StringRef name, ScalarType t) {
  if (t == ScalarType::F64)
    return name.str();
  if (name == "exp" || name == "erf")
    return ("kiln_" + name + "f").str();
  return (name + "f").str();
}

/// A literal of the compute type of `t`.
std::string lit(ScalarType t, double v) {
  return printLiteral(t, v, static_cast<int64_t>(v));
}

} // namespace

bool isScalarOp(llvm::StringRef op) { return scalarOps().contains(op); }

std::string computeCType(ScalarType t) {
  switch (t) {
  case ScalarType::F32:
  case ScalarType::F16:
  case ScalarType::BF16:
    return "float";
  case ScalarType::F64:
    return "double";
  case ScalarType::I64:
    return "int64_t";
  case ScalarType::I32:
    return "int32_t";
  case ScalarType::I8:
    return "int8_t";
  case ScalarType::U8:
    return "uint8_t";
  case ScalarType::Bool:
    return "bool";
  }
  return "void";
}

std::string storageCType(ScalarType t) {
  if (t == ScalarType::F16)
    return "kiln_f16";
  if (t == ScalarType::BF16)
    return "kiln_bf16";
  return computeCType(t);
}

std::string printLiteral(ScalarType t, double floatValue, int64_t intValue) {
  if (t == ScalarType::Bool)
    return intValue ? "true" : "false";
  if (isFloatType(t)) {
    bool isDouble = t == ScalarType::F64;
    if (std::isnan(floatValue))
      return isDouble ? "(double)NAN" : "NAN";
    if (std::isinf(floatValue)) {
      std::string inf = isDouble ? "(double)INFINITY" : "INFINITY";
      return floatValue < 0 ? "(-" + inf + ")" : inf;
    }
    char buf[64];
    if (isDouble)
      std::snprintf(buf, sizeof(buf), "%.17g", floatValue);
    else
      std::snprintf(buf, sizeof(buf), "%.9g",
                    static_cast<double>(static_cast<float>(floatValue)));
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
      s += ".0";
    if (!isDouble)
      s += "f";
    return s[0] == '-' ? "(" + s + ")" : s;
  }
  std::string ct = computeCType(t);
  if (t == ScalarType::I64 && intValue == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return "((" + ct + ")" + std::to_string(intValue) + "LL)";
}

std::string roundTo(ScalarType t, const std::string &expr) {
  if (t == ScalarType::F16)
    return "kiln_round_f16(" + expr + ")";
  if (t == ScalarType::BF16)
    return "kiln_round_bf16(" + expr + ")";
  return expr;
}

std::string printScalarOp(llvm::StringRef op, ScalarType resultType,
                          llvm::ArrayRef<ScalarType> argTypes,
                          llvm::ArrayRef<std::string> args,
                          const ScalarAttrs &attrs) {
  ScalarType t = argTypes.empty() ? resultType : argTypes[0];
  if (op == "where")
    t = argTypes[1];
  const std::string ct = computeCType(t), ut = unsignedCType(t);
  const bool isFloat = isFloatType(t), isInt = isIntType(t);
  const std::string a = args.empty() ? "" : args[0];
  const std::string b = args.size() > 1 ? args[1] : "";
  const std::string zero = lit(t, 0), one = lit(t, 1);
  auto num = [&](const char *name, double dflt) {
    return lit(t, attrs.getNumber(name, dflt));
  };
  auto wrap = [&](const char *sym) {
    return "(" + ct + ")((" + ut + ")" + a + " " + sym + " (" + ut + ")" + b +
           ")";
  };

  std::string e;
  // Elementwise, binary.
  if (op == "add" || op == "sub" || op == "mul") {
    const char *sym = op == "add" ? "+" : op == "sub" ? "-" : "*";
    e = isInt ? wrap(sym) : "(" + a + " " + sym + " " + b + ")";
  } else if (op == "div") {
    e = isInt ? "kiln_idiv(" + a + ", " + b + ")" : "(" + a + " / " + b + ")";
  } else if (op == "pow") {
    e = isInt ? "kiln_ipow(" + a + ", " + b + ")"
              : fn("pow", t) + "(" + a + ", " + b + ")";
  } else if (op == "max" || op == "min") {
    e = "kiln_" + op.str() + "(" + a + ", " + b + ")";
  } else if (op == "mod") {
    std::string python = attrs.getNumber("fmod", 0) != 0 ? "0" : "1";
    e = (isFloat ? "kiln_fmod(" : "kiln_imod(") + a + ", " + b + ", " + python +
        ")";
  } else if (op == "bitwise_and" || op == "bitwise_or" || op == "bitwise_xor") {
    const char *sym = op == "bitwise_and"  ? "&"
                      : op == "bitwise_or" ? "|"
                                           : "^";
    e = "(" + ct + ")(" + a + " " + sym + " " + b + ")";
  } else if (op == "bit_shift") {
    std::string dir = attrs.getString("direction", "left");
    bool left = dir == "left" || dir == "LEFT" || dir == "Left";
    e = (left ? "kiln_shl(" : "kiln_shr(") + a + ", " + b + ")";
  } else if (op == "and") {
    e = "(" + a + " && " + b + ")";
  } else if (op == "or") {
    e = "(" + a + " || " + b + ")";
  } else if (op == "xor") {
    e = "(" + a + " != " + b + ")";
  } else if (op == "prelu") {
    e = "(" + a + " < " + zero + " ? " + b + " * " + a + " : " + a + ")";
    // Comparisons.
  } else if (op == "equal" || op == "less" || op == "less_equal" ||
             op == "greater" || op == "greater_equal") {
    const char *sym = llvm::StringSwitch<const char *>(op)
                          .Case("equal", "==")
                          .Case("less", "<")
                          .Case("less_equal", "<=")
                          .Case("greater", ">")
                          .Default(">=");
    e = "(" + a + " " + sym + " " + b + ")";
    // Elementwise, unary.
  } else if (op == "neg") {
    e = isInt ? "(" + ct + ")((" + ut + ")0 - (" + ut + ")" + a + ")"
              : "(-" + a + ")";
  } else if (op == "abs") {
    if (isFloat)
      e = fn("fabs", t) + "(" + a + ")";
    else if (t == ScalarType::U8)
      e = a;
    else
      e = "(" + a + " < " + zero + " ? (" + ct + ")((" + ut + ")0 - (" + ut +
          ")" + a + ") : " + a + ")";
  } else if (op == "sign") {
    e = "(" + a + " > " + zero + " ? " + one + " : (" + a + " < " + zero +
        " ? " + lit(t, -1) + " : " + a + "))";
  } else if (op == "relu") {
    e = "(" + a + " < " + zero + " ? " + zero + " : " + a + ")";
  } else if (op == "reciprocal") {
    e = "(" + one + " / " + a + ")";
  } else if (op == "round") {
    e = fn("nearbyint", t) + "(" + a + ")"; // Half to even.
  } else if (op == "exp" || op == "log" || op == "sqrt" || op == "floor" ||
             op == "ceil" || op == "sin" || op == "cos" || op == "tan" ||
             op == "asin" || op == "acos" || op == "atan" || op == "sinh" ||
             op == "cosh" || op == "asinh" || op == "acosh" || op == "atanh" ||
             op == "erf" || op == "tanh") {
    // erf from bf16 to bf16: every input is one of 65536 values, and the
    // CUDA file tabulates the results (CudaPrinter.cpp); the CPU prelude's
    // kiln_erf_bf16 calls kiln_erff.
    if (op == "erf" && t == ScalarType::BF16 && resultType == ScalarType::BF16)
      e = "kiln_erf_bf16(" + a + ")";
    else
      e = fn(op, t) + "(" + a + ")";
  } else if (op == "not") {
    e = "(!" + a + ")";
  } else if (op == "bitwise_not") {
    e = "(" + ct + ")(~" + a + ")";
  } else if (op == "sigmoid") {
    e = "kiln_sigmoid(" + a + ")";
  } else if (op == "softplus") {
    e = "kiln_softplus(" + a + ")";
  } else if (op == "softsign") {
    e = "(" + a + " / (" + one + " + " + fn("fabs", t) + "(" + a + ")))";
  } else if (op == "mish") {
    e = "(" + a + " * " + fn("tanh", t) + "(kiln_softplus(" + a + ")))";
  } else if (op == "hard_swish") {
    e = "(" + a + " * kiln_clamp01(" + a + " / " + lit(t, 6) + " + " +
        lit(t, 0.5) + "))";
  } else if (op == "leaky_relu") {
    e = "(" + a + " < " + zero + " ? " + num("alpha", 0.01) + " * " + a +
        " : " + a + ")";
  } else if (op == "elu") {
    e = "(" + a + " < " + zero + " ? " + num("alpha", 1.0) + " * (" +
        fn("exp", t) + "(" + a + ") - " + one + ") : " + a + ")";
  } else if (op == "celu") {
    std::string alpha = num("alpha", 1.0);
    e = "((" + a + " > " + zero + " ? " + a + " : " + zero +
        ") + kiln_neg_part(" + alpha + " * (" + fn("exp", t) + "(" + a + " / " +
        alpha + ") - " + one + ")))";
  } else if (op == "selu") {
    std::string alpha = num("alpha", 1.67326319217681884765625);
    std::string gamma = num("gamma", 1.05070102214813232421875);
    e = "(" + a + " <= " + zero + " ? " + gamma + " * (" + alpha + " * " +
        fn("exp", t) + "(" + a + ") - " + alpha + ") : " + gamma + " * " + a +
        ")";
  } else if (op == "hard_sigmoid") {
    e = "kiln_clamp01(" + num("alpha", 0.2) + " * " + a + " + " +
        num("beta", 0.5) + ")";
  } else if (op == "thresholded_relu") {
    e = "(" + a + " > " + num("alpha", 1.0) + " ? " + a + " : " + zero + ")";
  } else if (op == "shrink") {
    e = "kiln_shrink(" + a + ", " +
        printLiteral(ScalarType::F64, attrs.getNumber("bias", 0.0), 0) + ", " +
        printLiteral(ScalarType::F64, attrs.getNumber("lambd", 0.5), 0) + ")";
  } else if (op == "gelu") {
    if (attrs.getString("approximate", "none") == "tanh")
      e = "(" + lit(t, 0.5) + " * " + a + " * (" + one + " + " + fn("tanh", t) +
          "(" + lit(t, 0.7978845608028654) + " * (" + a + " + " +
          lit(t, 0.044715) + " * " + a + " * " + a + " * " + a + "))))";
    else
      e = "(" + lit(t, 0.5) + " * " + a + " * (" + one + " + " + fn("erf", t) +
          "(" + a + " * " + lit(t, 0.7071067811865476) + ")))";
  } else if (op == "swish") {
    e = "(" + a + " * kiln_sigmoid(" + num("alpha", 1.0) + " * " + a + "))";
  } else if (op == "is_nan") {
    e = "(" + a + " != " + a + ")";
  } else if (op == "is_inf") {
    bool pos = attrs.getNumber("detect_positive", 1) != 0;
    bool neg = attrs.getNumber("detect_negative", 1) != 0;
    std::string p = "(" + a + " == " + lit(t, INFINITY) + ")";
    std::string n = "(" + a + " == " + lit(t, -INFINITY) + ")";
    e = pos && neg ? "(" + p + " || " + n + ")" : pos ? p : neg ? n : "false";
  } else if (op == "cast") {
    ScalarType to = resultType;
    if (to == t)
      e = a;
    else if (to == ScalarType::Bool)
      e = "(" + a + " != " + zero + ")";
    else if (isIntType(to) && isFloat)
      e = "kiln_f2i<" + computeCType(to) + ">(" + a + ")";
    else
      e = "(" + computeCType(to) + ")" + a;
    // Selection.
  } else if (op == "where") {
    e = "(" + a + " ? " + b + " : " + args[2] + ")";
  } else {
    assert(false && "printScalarOp: not a scalar op");
  }
  return roundTo(resultType, e);
}

/// The pieces of the kernel prelude. The f16/bf16 conversions are integer
/// code on the host (vectorizable, exact) and cvt instructions on the device
/// (the integer code, unrolled, made NVRTC 30x slower on f16 kernels). The
/// common part marks its functions
/// with KILN_FN (`static inline` for C++, `__device__ __forceinline__` for
/// CUDA, not static: NVRTC warns about unused static functions) and the storage types' conversions with KILN_HD
/// (nothing for C++, `__device__ ` for CUDA); the C++ text is the prelude
/// kernels.cpp always had.
namespace prelude {
const char *const kCppHead = R"PRELUDE(#include <cmath>
#include <cstdint>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

// The rows [*lo, *hi) of `n` that this thread of the enclosing parallel
// region takes (OpenMP's static schedule: one contiguous block per thread).
static inline void kiln_thread_rows(int64_t n, int64_t *lo, int64_t *hi) {
#ifdef _OPENMP
  int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
#else
  int64_t threads = 1, t = 0;
#endif
  *lo = n * t / threads;
  *hi = n * (t + 1) / threads;
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
// over all 2^32 inputs); smaller results flush to 0. kiln_erff: Abramowitz &
// Stegun 7.1.26 (absolute error below 1.5e-7).
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
static inline float kiln_erff(float x) {
  float ax = fabsf(x);
  float t = 1.0f / (1.0f + 0.3275911f * ax);
  float poly = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t -
                 0.284496736f) * t + 0.254829592f) * t;
  float y = 1.0f - poly * kiln_expf(-ax * ax);
  y = x < 0.0f ? -y : y;
  return x != x ? x : y;
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
const char *const kCudaHead = R"PRELUDE(// NVRTC has no standard headers: the fixed-width integer types, the math
// constants and the limits the helpers use are defined here.
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define INT64_MAX 9223372036854775807LL
#define INT64_MIN (-9223372036854775807LL - 1)

// exp and erf: the device's correctly rounded-to-a-few-ulp library functions
// (no fast-math intrinsics such as __expf).
__device__ __forceinline__ float kiln_expf(float x) { return expf(x); }
__device__ __forceinline__ float kiln_erff(float x) { return erff(x); }

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
const char *const kCommon = R"PRELUDE(struct kiln_f16 {
  uint16_t bits;
  kiln_f16() = default;
  KILN_HDkiln_f16(float f) : bits(kiln_float_to_f16_bits(f)) {}
  KILN_HDoperator float() const { return kiln_f16_bits_to_float(bits); }
};
struct kiln_bf16 {
  uint16_t bits;
  kiln_bf16() = default;
  KILN_HDkiln_bf16(float f) : bits(kiln_float_to_bf16_bits(f)) {}
  KILN_HDoperator float() const { return kiln_bits_float((uint32_t)bits << 16); }
};
KILN_FN float kiln_round_f16(float x) { return (float)kiln_f16(x); }

// Scalar helpers with the reference runtime's semantics.
template <class T> struct kiln_unsigned { typedef T type; };
template <> struct kiln_unsigned<int64_t> { typedef uint64_t type; };
template <> struct kiln_unsigned<int32_t> { typedef uint32_t type; };
template <> struct kiln_unsigned<int8_t> { typedef uint8_t type; };
template <class T> KILN_FN T kiln_lowest() {
  typedef typename kiln_unsigned<T>::type U;
  return (T)-1 < (T)0 ? (T)((U)1 << (sizeof(T) * 8 - 1)) : (T)0;
}
template <class T> KILN_FN T kiln_highest() { return (T)~kiln_lowest<T>(); }
template <class T> KILN_FN T kiln_max(T a, T b) {
  return a != a ? a : (b != b ? b : (a < b ? b : a));
}
template <class T> KILN_FN T kiln_min(T a, T b) {
  return a != a ? a : (b != b ? b : (b < a ? b : a));
}
template <class T> KILN_FN T kiln_neg_part(T x) { return x < T(0) ? x : T(0); }
template <class T> KILN_FN T kiln_clamp01(T v) {
  return v != v ? v : (v < T(0) ? T(0) : (v > T(1) ? T(1) : v));
}
template <class T> KILN_FN T kiln_idiv(T a, T b) {
  typedef typename kiln_unsigned<T>::type U;
  if (b == 0)
    return 0;
  if ((T)-1 < (T)0 && b == (T)-1)
    return (T)((U)0 - (U)a);
  return (T)(a / b);
}
template <class T> KILN_FN T kiln_imod(T a, T b, int python) {
  if (b == 0 || ((T)-1 < (T)0 && b == (T)-1))
    return 0;
  T r = (T)(a % b);
  if ((T)-1 < (T)0 && python && r != 0 && ((r < 0) != (b < 0)))
    r = (T)(r + b);
  return r;
}
KILN_FN float kiln_fmod(float a, float b, int python) {
  float r = fmodf(a, b);
  if (python && r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}
KILN_FN double kiln_fmod(double a, double b, int python) {
  double r = fmod(a, b);
  if (python && r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}
template <class T> KILN_FN T kiln_ipow(T a, T b) {
  typedef typename kiln_unsigned<T>::type U;
  if (b < 0) {
    if (a == 1)
      return 1;
    if ((T)-1 < (T)0 && a == (T)-1)
      return (b % 2) ? (T)-1 : (T)1;
    return 0;
  }
  U result = 1, base = (U)a;
  for (T e = b; e > 0; e = (T)(e >> 1)) {
    if (e & 1)
      result = (U)(result * base);
    base = (U)(base * base);
  }
  return (T)result;
}
template <class T> KILN_FN T kiln_shl(T a, T b) {
  typedef typename kiln_unsigned<T>::type U;
  if (b < 0 || b >= (T)(sizeof(T) * 8))
    return 0;
  return (T)(U)((U)a << b);
}
template <class T> KILN_FN T kiln_shr(T a, T b) {
  if (b < 0 || b >= (T)(sizeof(T) * 8))
    return ((T)-1 < (T)0 && a < 0) ? (T)-1 : (T)0;
  return (T)(a >> b);
}
KILN_FN float kiln_sigmoid(float x) {
  float e = kiln_expf(-fabsf(x));
  float d = 1.0f / (1.0f + e);
  return x >= 0.0f ? d : e * d;
}
KILN_FN double kiln_sigmoid(double x) {
  if (x >= 0.0)
    return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}
KILN_FN float kiln_softplus(float x) {
  return (x > 0.0f ? x : 0.0f) + log1pf(expf(-fabsf(x)));
}
KILN_FN double kiln_softplus(double x) {
  return (x > 0.0 ? x : 0.0) + log1p(exp(-fabs(x)));
}
template <class T> KILN_FN T kiln_shrink(T x, double bias, double lambd) {
  double v = (double)x;
  if (v < -lambd)
    return (T)(v + bias);
  if (v > lambd)
    return (T)(v - bias);
  return (T)0;
}
template <class T> KILN_FN T kiln_f2i(double x) {
  if (x != x)
    return (T)0;
  double d = trunc(x);
  if (d >= 9.2233720368547758e18)
    return (T)INT64_MAX;
  if (d <= -9.2233720368547758e18)
    return (T)INT64_MIN;
  return (T)(int64_t)d;
}
)PRELUDE";;
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
} // namespace prelude

/// Replaces every `from` in `s` by `to`.
static std::string replaceAll(std::string s, llvm::StringRef from,
                              llvm::StringRef to) {
  for (size_t pos = s.find(from.str()); pos != std::string::npos;
       pos = s.find(from.str(), pos + to.size()))
    s.replace(pos, from.size(), to.str());
  return s;
}

std::string kernelPrelude(PreludeTarget target) {
  bool cuda = target == PreludeTarget::Cuda;
  auto mark = [&](const char *text) {
    return replaceAll(
        replaceAll(text, "KILN_FN",
                   cuda ? "__device__ __forceinline__" : "static inline"),
        "KILN_HD", cuda ? "__device__ " : "");
  };
  if (!cuda)
    return std::string(prelude::kCppHead) + prelude::kCppBits +
           mark(prelude::kCppConversions) + mark(prelude::kCommon);
  return std::string(prelude::kCudaHead) + prelude::kCudaBits +
         prelude::kCudaConversions + mark(prelude::kCommon) +
         prelude::kCudaTail;
}

const char *kernelPrelude() {
  static const std::string text = kernelPrelude(PreludeTarget::Cpp);
  return text.c_str();
}

} // namespace codegen
} // namespace kiln
