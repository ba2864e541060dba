//===- DType.cpp - Element types of runtime tensors -----------------------===//
//
// This file implements the half-precision conversions (IEEE binary16 and
// bfloat16, both rounding to nearest even and keeping NaN a NaN) and the
// helpers that name, size and parse dtypes.
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

} // namespace

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
  }
  return "?";
}

std::optional<DType> parseDType(const std::string &name) {
  static const struct {
    const char *name;
    DType type;
  } kNames[] = {
      {"f32", DType::F32},   {"f16", DType::F16}, {"bf16", DType::BF16},
      {"f64", DType::F64},   {"i64", DType::I64}, {"i32", DType::I32},
      {"i8", DType::I8},     {"u8", DType::U8},   {"ui8", DType::U8},
      {"bool", DType::Bool}, {"i1", DType::Bool}};
  for (const auto &entry : kNames)
    if (name == entry.name)
      return entry.type;
  return std::nullopt;
}

bool isFloatingPoint(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F64;
}

} // namespace kiln
