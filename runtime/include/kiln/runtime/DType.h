//===- DType.h - Element types of runtime tensors --------------*- C++ -*-===//
//
// This file declares DType, the element types Kiln supports (f32, f16, bf16,
// f64, i64, i32, i8, u8, bool), the half-precision storage types, and the
// helpers to name them and to dispatch a generic lambda on the C++ type.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DTYPE_H
#define KILN_RUNTIME_DTYPE_H

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace kiln {

/// Element types of tensors.
enum class DType : uint8_t { F32, F16, BF16, F64, I64, I32, I8, U8, Bool };

/// Number of DType values (for tables indexed by dtype).
constexpr int kNumDTypes = 9;

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

/// Size in bytes of one element.
size_t dtypeSize(DType t);
/// Short name: "f32", "f16", "bf16", "f64", "i64", "i32", "i8", "u8", "bool".
const char *dtypeName(DType t);
/// Parses a short name; nullopt when unknown.
std::optional<DType> parseDType(const std::string &name);
/// True for f32, f16, bf16, f64.
bool isFloatingPoint(DType t);

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

/// The type used for arithmetic on T: float for f16/bf16, T otherwise.
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <> struct ComputeType<BFloat16> { using type = float; };

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
  }
  return fn(float{});
}

} // namespace kiln

#endif // KILN_RUNTIME_DTYPE_H
