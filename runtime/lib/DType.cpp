//===- DType.cpp - Element types of runtime tensors -----------------------===//
//
// This file implements the half-precision conversions (IEEE binary16 and
// bfloat16, both rounding to nearest even and keeping NaN a NaN), the float8
// conversions (the four ONNX formats, as ml_dtypes converts: round to
// nearest even, overflow to infinity or NaN) and the helpers that name, size
// and parse dtypes.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/DType.h"

namespace kiln {

namespace {

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// float -> binary16 bits, round to nearest even.
uint16_t floatToHalfBits(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {
    // Inf or NaN; keep NaN quiet and non-zero.
    if (absx > 0x7f800000u)
      return static_cast<uint16_t>(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  // Values >= 65520 round to infinity.
  if (absx >= 0x477ff000u)
    return static_cast<uint16_t>(sign | 0x7c00u);
  int32_t exp = static_cast<int32_t>(absx >> 23) - 127;
  if (exp >= -14) {
    // Normal half.
    uint32_t mant = absx & 0x7fffffu;
    uint32_t h = (static_cast<uint32_t>(exp + 15) << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
      ++h; // A carry into the exponent is the right result.
    return static_cast<uint16_t>(sign | h);
  }
  if (exp < -25)
    return static_cast<uint16_t>(sign); // Rounds to zero (below half of min).
  // Subnormal half: value = mant24 * 2^(exp-23); unit is 2^-24.
  uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
  int shift = -exp - 1; // 14..24: bits dropped = (exp-23) - (-24) negated.
  // mant * 2^(exp - 23) / 2^-24 = mant >> (-1 - exp)
  uint32_t h = mant >> shift;
  uint32_t rest = mant & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

float halfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0)
      return bitsFloat(sign);
    // Subnormal: mant * 2^-24.
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t floatToBFloat16Bits(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u); // Quiet NaN.
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

/// The parameters of a float8 format.
struct Float8Spec {
  int expBits, manBits, bias;
  bool fnuz, hasInf;
};

Float8Spec specOf(Float8Format f) {
  switch (f) {
  case Float8Format::E4M3FN:
    return {4, 3, 7, false, false};
  case Float8Format::E4M3FNUZ:
    return {4, 3, 8, true, false};
  case Float8Format::E5M2:
    return {5, 2, 15, false, true};
  case Float8Format::E5M2FNUZ:
    return {5, 2, 16, true, false};
  }
  return {4, 3, 7, false, false};
}

/// The NaN of a format: 0x80 for fnuz, else a positive quiet NaN.
uint8_t float8NaN(Float8Format f) {
  Float8Spec s = specOf(f);
  if (s.fnuz)
    return 0x80;
  return s.hasInf ? 0x7e : 0x7f;
}

/// The largest finite magnitude's bits of a format.
int float8MaxCode(Float8Format f) {
  Float8Spec s = specOf(f);
  return s.fnuz ? 0x7f : (s.hasInf ? 0x7b : 0x7e);
}

} // namespace

uint8_t floatToFloat8Bits(float x, Float8Format f) {
  Float8Spec s = specOf(f);
  uint32_t u = floatBits(x);
  uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  uint32_t absx = u & 0x7fffffffu;
  uint8_t overflow =
      s.hasInf ? static_cast<uint8_t>(sign | 0x7c) : float8NaN(f);
  if (absx > 0x7f800000u)
    return float8NaN(f);
  if (absx == 0x7f800000u)
    return overflow;
  int code = 0;
  int e32 = static_cast<int>(absx >> 23);
  if (e32 != 0) { // A float subnormal rounds to zero in every format.
    int exp = e32 - 127;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u; // value mant * 2^(exp-23)
    int minNormExp = 1 - s.bias;
    // The float8 unit at this exponent is 2^(max(exp, minNormExp) - manBits):
    // q is the value in units, rounded to nearest even.
    int unitExp = (exp < minNormExp ? minNormExp : exp) - s.manBits;
    int shift = unitExp - (exp - 23);
    uint32_t q = 0;
    if (shift <= 24) {
      q = mant >> shift;
      uint32_t rest = mant & ((1u << shift) - 1u);
      uint32_t half = 1u << (shift - 1);
      if (rest > half || (rest == half && (q & 1u)))
        ++q;
    }
    // A subnormal's q is its code (a carry makes the smallest normal); a
    // normal's exponent field goes above the mantissa (a carry bumps it).
    code = exp < minNormExp ? static_cast<int>(q)
                            : ((exp - minNormExp + 1) << s.manBits) +
                                  static_cast<int>(q - (1u << s.manBits));
    if (code > float8MaxCode(f))
      return overflow;
  }
  if (code == 0 && s.fnuz)
    return 0; // No negative zero.
  return static_cast<uint8_t>(sign | code);
}

float float8BitsToFloat(uint8_t bits, Float8Format f) {
  Float8Spec s = specOf(f);
  bool neg = (bits & 0x80u) != 0;
  int e = (bits >> s.manBits) & ((1 << s.expBits) - 1);
  int m = bits & ((1 << s.manBits) - 1);
  if (s.fnuz) {
    if (bits == 0x80)
      return bitsFloat(0x7fc00000u);
  } else if (s.hasInf) {
    if (e == (1 << s.expBits) - 1)
      return m ? bitsFloat(0x7fc00000u)
               : bitsFloat((neg ? 0x80000000u : 0u) | 0x7f800000u);
  } else if ((bits & 0x7fu) == 0x7fu) {
    return bitsFloat(0x7fc00000u);
  }
  // value = m * 2^(1 - bias - manBits) (subnormal) or (2^manBits + m) *
  // 2^(e - bias - manBits); built as float bits, every value is exact.
  float v;
  if (e == 0) {
    v = static_cast<float>(m) *
        bitsFloat(static_cast<uint32_t>(127 + 1 - s.bias - s.manBits) << 23);
  } else {
    v = bitsFloat((static_cast<uint32_t>(e - s.bias + 127) << 23) |
                  (static_cast<uint32_t>(m) << (23 - s.manBits)));
  }
  return neg ? -v : v;
}

float float8Max(Float8Format f) {
  return float8BitsToFloat(static_cast<uint8_t>(float8MaxCode(f)), f);
}

namespace {} // namespace

Half::Half(float f) : bits(floatToHalfBits(f)) {}
Half::operator float() const { return halfBitsToFloat(bits); }

BFloat16::BFloat16(float f) : bits(floatToBFloat16Bits(f)) {}
BFloat16::operator float() const {
  return bitsFloat(static_cast<uint32_t>(bits) << 16);
}

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
    return 4;
  case DType::F16:
    return 2;
  case DType::BF16:
    return 2;
  case DType::F64:
    return 8;
  case DType::I64:
    return 8;
  case DType::I32:
    return 4;
  case DType::I8:
    return 1;
  case DType::U8:
    return 1;
  case DType::Bool:
    return 1;
  case DType::U16:
    return 2;
  case DType::U32:
    return 4;
  case DType::U64:
    return 8;
  case DType::I16:
    return 2;
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
  case DType::I4:
  case DType::U4:
  case DType::I2:
  case DType::U2:
    return 1;
  }
  return 1;
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I8:
    return "i8";
  case DType::U8:
    return "u8";
  case DType::Bool:
    return "bool";
  case DType::U16:
    return "u16";
  case DType::U32:
    return "u32";
  case DType::U64:
    return "u64";
  case DType::I16:
    return "i16";
  case DType::F8E4M3FN:
    return "f8e4m3fn";
  case DType::F8E4M3FNUZ:
    return "f8e4m3fnuz";
  case DType::F8E5M2:
    return "f8e5m2";
  case DType::F8E5M2FNUZ:
    return "f8e5m2fnuz";
  case DType::I4:
    return "i4";
  case DType::U4:
    return "u4";
  case DType::I2:
    return "i2";
  case DType::U2:
    return "u2";
  }
  return "?";
}

std::optional<DType> parseDType(const std::string &name) {
  static const struct {
    const char *name;
    DType type;
  } kNames[] = {
      {"f32", DType::F32},   {"f16", DType::F16},  {"bf16", DType::BF16},
      {"f64", DType::F64},   {"i64", DType::I64},  {"i32", DType::I32},
      {"i8", DType::I8},     {"u8", DType::U8},    {"ui8", DType::U8},
      {"bool", DType::Bool}, {"i1", DType::Bool},  {"u16", DType::U16},
      {"ui16", DType::U16},  {"u32", DType::U32},  {"ui32", DType::U32},
      {"u64", DType::U64},   {"ui64", DType::U64}, {"i16", DType::I16},
      {"ui4", DType::U4},    {"ui2", DType::U2}};
  for (const auto &entry : kNames)
    if (name == entry.name)
      return entry.type;
  for (int code = 0; code < kNumDTypes; ++code)
    if (name == dtypeName(static_cast<DType>(code)))
      return static_cast<DType>(code);
  return std::nullopt;
}

bool isFloatingPoint(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F64;
}

bool isInteger(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I16 ||
         t == DType::I8 || isUnsignedInteger(t);
}

bool isUnsignedInteger(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 ||
         t == DType::U64;
}

bool isFloat8(DType t) {
  return t == DType::F8E4M3FN || t == DType::F8E4M3FNUZ || t == DType::F8E5M2 ||
         t == DType::F8E5M2FNUZ;
}

Float8Format float8FormatOf(DType t) {
  switch (t) {
  case DType::F8E4M3FNUZ:
    return Float8Format::E4M3FNUZ;
  case DType::F8E5M2:
    return Float8Format::E5M2;
  case DType::F8E5M2FNUZ:
    return Float8Format::E5M2FNUZ;
  default:
    return Float8Format::E4M3FN;
  }
}

bool isSubByteInteger(DType t) {
  return t == DType::I4 || t == DType::U4 || t == DType::I2 || t == DType::U2;
}

int packedBits(DType t) {
  if (t == DType::I4 || t == DType::U4)
    return 4;
  if (t == DType::I2 || t == DType::U2)
    return 2;
  return static_cast<int>(dtypeSize(t) * 8);
}

bool isStorageOnly(DType t) { return isFloat8(t) || isSubByteInteger(t); }

} // namespace kiln
