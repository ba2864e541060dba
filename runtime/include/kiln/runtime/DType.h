//===- DType.h - Element types of runtime tensors --------------*- C++ -*-===//
//
// This file declares DType, the element types Kiln supports (f32, f16, bf16,
// f64, i64, i32, i8, u8, bool, u16, u32, u64, i16, the four float8 formats
// and the 4- and 2-bit integers), the storage types of the ones C++ lacks
// (half, bfloat16, float8, sub-byte integers), and the helpers to name them
// and to dispatch a generic lambda on the C++ type.
//
// float8 and the sub-byte integers are storage types: tensors of them are
// copied, gathered, reshaped and cast, but no arithmetic kernel takes them.
// A sub-byte integer takes one byte per element in memory (sign-extended or
// zero-extended); only ONNX files pack them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DTYPE_H
#define KILN_RUNTIME_DTYPE_H

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

namespace kiln {

/// Element types of tensors. The values are the dtype codes of the package
/// ABI (ModelABI.h): new types are appended, never inserted.
enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  F64,
  I64,
  I32,
  I8,
  U8,
  Bool,
  U16,
  U32,
  U64,
  I16,
  F8E4M3FN,
  F8E4M3FNUZ,
  F8E5M2,
  F8E5M2FNUZ,
  I4,
  U4,
  I2,
  U2
};

/// Number of DType values (for tables indexed by dtype).
constexpr int kNumDTypes = 21;

/// IEEE binary16 stored as bits; converts to and from float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f);
  operator float() const;
};

/// bfloat16 stored as bits; converts to and from float (round to nearest even).
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f);
  operator float() const;
};

/// The float8 formats of ONNX: E4M3FN and E5M2 (OCP FP8), and the
/// "fnuz" variants (no negative zero, NaN is 0x80, no infinity).
enum class Float8Format : uint8_t { E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ };

/// float -> float8 bits, rounding to nearest even; a finite value that rounds
/// beyond the largest finite one, and infinity, become infinity (E5M2) or
/// NaN (the other formats): ONNX's Cast with saturate=0. Saturation is a clip
/// before the conversion.
uint8_t floatToFloat8Bits(float f, Float8Format format);
/// float8 bits -> float (exact).
float float8BitsToFloat(uint8_t bits, Float8Format format);
/// The largest finite value of a float8 format (448, 240, 57344, 57344).
float float8Max(Float8Format format);

/// A float8 value stored as bits; converts to and from float.
template <Float8Format F> struct Float8 {
  uint8_t bits = 0;
  Float8() = default;
  Float8(float f) : bits(floatToFloat8Bits(f, F)) {}
  operator float() const { return float8BitsToFloat(bits, F); }
};
using Float8E4M3FN = Float8<Float8Format::E4M3FN>;
using Float8E4M3FNUZ = Float8<Float8Format::E4M3FNUZ>;
using Float8E5M2 = Float8<Float8Format::E5M2>;
using Float8E5M2FNUZ = Float8<Float8Format::E5M2FNUZ>;

/// A `Bits`-bit integer (4 or 2) held in one byte, sign-extended when
/// `Signed`. Conversions wrap modulo 2^Bits, as ONNX's Cast does; a float
/// is truncated toward zero first (NaN gives 0).
template <int Bits, bool Signed> struct SubByteInt {
  int8_t value = 0;
  SubByteInt() = default;
  template <typename V> SubByteInt(V v) : value(wrap(toInt64(v))) {}
  operator int32_t() const {
    return Signed ? value : static_cast<int32_t>(static_cast<uint8_t>(value));
  }

  /// The lowest and highest values (-8, 7 for int4; 0, 3 for uint2).
  static constexpr int32_t lowest() { return Signed ? -(1 << (Bits - 1)) : 0; }
  static constexpr int32_t highest() {
    return Signed ? (1 << (Bits - 1)) - 1 : (1 << Bits) - 1;
  }

private:
  template <typename V> static int64_t toInt64(V v) {
    if constexpr (std::is_floating_point_v<V>) {
      if (!(v == v) || v >= 9.2e18 || v <= -9.2e18)
        return 0;
      return static_cast<int64_t>(v);
    } else {
      return static_cast<int64_t>(v);
    }
  }
  static int8_t wrap(int64_t v) {
    uint8_t low =
        static_cast<uint8_t>(static_cast<uint64_t>(v) & ((1u << Bits) - 1u));
    if (Signed && (low & (1u << (Bits - 1))))
      return static_cast<int8_t>(low |
                                 static_cast<uint8_t>(~((1u << Bits) - 1u)));
    return static_cast<int8_t>(low);
  }
};
using Int4 = SubByteInt<4, true>;
using UInt4 = SubByteInt<4, false>;
using Int2 = SubByteInt<2, true>;
using UInt2 = SubByteInt<2, false>;

/// Size in bytes of one element.
size_t dtypeSize(DType t);
/// Short name: "f32", "f16", "bf16", "f64", "i64", "i32", "i8", "u8", "bool",
/// "u16", "u32", "u64", "i16", "f8e4m3fn", "f8e4m3fnuz", "f8e5m2",
/// "f8e5m2fnuz", "i4", "u4", "i2", "u2".
const char *dtypeName(DType t);
/// Parses a short name; nullopt when unknown.
std::optional<DType> parseDType(const std::string &name);
/// True for f32, f16, bf16, f64.
bool isFloatingPoint(DType t);
/// True for the integer types (not bool).
bool isInteger(DType t);
/// True for the unsigned integer types u8, u16, u32, u64.
bool isUnsignedInteger(DType t);
/// True for the float8 formats.
bool isFloat8(DType t);
/// The float8 format of a float8 dtype.
Float8Format float8FormatOf(DType t);
/// True for i4, u4, i2, u2 (one byte per element in memory).
bool isSubByteInteger(DType t);
/// Bits per element in an ONNX file: 4 or 2 for the sub-byte integers, 8 *
/// dtypeSize otherwise.
int packedBits(DType t);
/// True for the storage-only types (float8, sub-byte integers): no
/// arithmetic kernel takes them.
bool isStorageOnly(DType t);

/// Maps a C++ element type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> {
  static constexpr DType value = DType::F32;
};
template <> struct DTypeOf<Half> { static constexpr DType value = DType::F16; };
template <> struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::BF16;
};
template <> struct DTypeOf<double> {
  static constexpr DType value = DType::F64;
};
template <> struct DTypeOf<int64_t> {
  static constexpr DType value = DType::I64;
};
template <> struct DTypeOf<int32_t> {
  static constexpr DType value = DType::I32;
};
template <> struct DTypeOf<int8_t> {
  static constexpr DType value = DType::I8;
};
template <> struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::U8;
};
template <> struct DTypeOf<bool> {
  static constexpr DType value = DType::Bool;
};
template <> struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::U16;
};
template <> struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::U32;
};
template <> struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::U64;
};
template <> struct DTypeOf<int16_t> {
  static constexpr DType value = DType::I16;
};
template <> struct DTypeOf<Float8E4M3FN> {
  static constexpr DType value = DType::F8E4M3FN;
};
template <> struct DTypeOf<Float8E4M3FNUZ> {
  static constexpr DType value = DType::F8E4M3FNUZ;
};
template <> struct DTypeOf<Float8E5M2> {
  static constexpr DType value = DType::F8E5M2;
};
template <> struct DTypeOf<Float8E5M2FNUZ> {
  static constexpr DType value = DType::F8E5M2FNUZ;
};
template <> struct DTypeOf<Int4> { static constexpr DType value = DType::I4; };
template <> struct DTypeOf<UInt4> { static constexpr DType value = DType::U4; };
template <> struct DTypeOf<Int2> { static constexpr DType value = DType::I2; };
template <> struct DTypeOf<UInt2> { static constexpr DType value = DType::U2; };

/// The type used for arithmetic on T: float for f16/bf16/float8, int32_t for
/// the sub-byte integers, T otherwise.
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <> struct ComputeType<BFloat16> { using type = float; };
template <Float8Format F> struct ComputeType<Float8<F>> { using type = float; };
template <int B, bool S> struct ComputeType<SubByteInt<B, S>> {
  using type = int32_t;
};

/// True for the storage-only C++ element types (float8, sub-byte integers).
template <typename T> struct IsStorageOnly : std::false_type {};
template <Float8Format F> struct IsStorageOnly<Float8<F>> : std::true_type {};
template <int B, bool S>
struct IsStorageOnly<SubByteInt<B, S>> : std::true_type {};

/// Calls fn(T{}) with the C++ type of `t`. Example:
///   visitDType(t.dtype(), [&](auto tag) { using T = decltype(tag); ... });
template <typename Fn> decltype(auto) visitDType(DType t, Fn &&fn) {
  switch (t) {
  case DType::F32:
    return fn(float{});
  case DType::F16:
    return fn(Half{});
  case DType::BF16:
    return fn(BFloat16{});
  case DType::F64:
    return fn(double{});
  case DType::I64:
    return fn(int64_t{});
  case DType::I32:
    return fn(int32_t{});
  case DType::I8:
    return fn(int8_t{});
  case DType::U8:
    return fn(uint8_t{});
  case DType::Bool:
    return fn(bool{});
  case DType::U16:
    return fn(uint16_t{});
  case DType::U32:
    return fn(uint32_t{});
  case DType::U64:
    return fn(uint64_t{});
  case DType::I16:
    return fn(int16_t{});
  case DType::F8E4M3FN:
    return fn(Float8E4M3FN{});
  case DType::F8E4M3FNUZ:
    return fn(Float8E4M3FNUZ{});
  case DType::F8E5M2:
    return fn(Float8E5M2{});
  case DType::F8E5M2FNUZ:
    return fn(Float8E5M2FNUZ{});
  case DType::I4:
    return fn(Int4{});
  case DType::U4:
    return fn(UInt4{});
  case DType::I2:
    return fn(Int2{});
  case DType::U2:
    return fn(UInt2{});
  }
  return fn(float{});
}

} // namespace kiln

#endif // KILN_RUNTIME_DTYPE_H
