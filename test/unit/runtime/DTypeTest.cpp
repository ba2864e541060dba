//===- DTypeTest.cpp - Tests of the 16/32/64-bit, float8 and 4/2-bit dtypes
//===//
//
// This file implements the unit tests of the dtypes issue 19 added: names,
// sizes and parsing of every dtype, the .npy round trip of the new integer
// types (and the error for the types NumPy lacks), the float8 conversions
// (every bit pattern, rounding, overflow and the fnuz encodings), the
// wrapping of the sub-byte integers, casts between them, and the unsigned
// semantics of the integer kernels (wrapping products, shifts, division,
// modulo, comparisons, min/max).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/SafeTensors.h"
#include "kiln/runtime/Tensor.h"
#include "kiln/runtime/TensorIO.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <unistd.h>

using namespace kiln;

namespace {

/// Runs `op` on the CPU reference kernels; the first output.
Tensor call(const std::string &op, std::vector<Tensor> inputs,
            Attributes attrs = {}) {
  std::vector<Tensor> outputs(1);
  Status st = Dispatcher::global().call(op, inputs, attrs, outputs);
  INFO(st.message());
  REQUIRE(st);
  REQUIRE(outputs.size() >= 1);
  return outputs[0];
}

std::vector<int64_t> ints(const Tensor &t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i)
    v.push_back(t.getInt(i));
  return v;
}

} // namespace

TEST_CASE("every dtype has a name that parses back and a size", "[dtype]") {
  for (int code = 0; code < kNumDTypes; ++code) {
    DType t = static_cast<DType>(code);
    INFO(dtypeName(t));
    CHECK(parseDType(dtypeName(t)) == t);
    CHECK(dtypeSize(t) >= 1);
  }
  CHECK(dtypeSize(DType::U16) == 2);
  CHECK(dtypeSize(DType::U32) == 4);
  CHECK(dtypeSize(DType::U64) == 8);
  CHECK(dtypeSize(DType::I16) == 2);
  CHECK(dtypeSize(DType::F8E5M2FNUZ) == 1);
  CHECK(dtypeSize(DType::I4) == 1); // One byte per element in memory.
  CHECK(packedBits(DType::I4) == 4);
  CHECK(packedBits(DType::U2) == 2);
  CHECK(packedBits(DType::U16) == 16);
  CHECK(parseDType("ui16") == DType::U16);
  CHECK(std::string(dtypeName(DType::F8E4M3FNUZ)) == "f8e4m3fnuz");
  CHECK(isUnsignedInteger(DType::U64));
  CHECK(!isUnsignedInteger(DType::I16));
  CHECK(isInteger(DType::I16));
  CHECK(isStorageOnly(DType::F8E5M2));
  CHECK(isStorageOnly(DType::U4));
  CHECK(!isStorageOnly(DType::U16));
  CHECK(std::string(safeTensorsDTypeName(DType::U16)) == "U16");
  CHECK(parseSafeTensorsDType("F8_E4M3") == DType::F8E4M3FN);
  CHECK(safeTensorsDTypeName(DType::I4) == nullptr);
}

TEST_CASE("npy round trip of u16, u32, u64 and i16", "[dtype][npy]") {
  std::string path =
      "/tmp/kiln-dtype-test-" + std::to_string(::getpid()) + ".npy";
  std::vector<Tensor> tensors = {
      Tensor::fromVector<uint16_t>({0, 65535, 7}, {3}),
      Tensor::fromVector<uint32_t>({4294967295u, 1}, {2}),
      Tensor::fromVector<uint64_t>({18446744073709551615ull, 3}, {1, 2}),
      Tensor::fromVector<int16_t>({-32768, 32767}, {2}),
  };
  for (const Tensor &t : tensors) {
    INFO(t.typeString());
    REQUIRE(writeNpy(path, t).isOk());
    Expected<Tensor> back = readNpy(path);
    REQUIRE(back.isOk());
    CHECK(back->typeString() == t.typeString());
    CHECK(ints(*back) == ints(t));
  }
  Status st = writeNpy(path, Tensor::empty(DType::F8E4M3FN, {2}));
  CHECK(!st);
  CHECK(st.message().find("NumPy has no dtype for f8e4m3fn") !=
        std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("float8 conversions round to nearest even and overflow as ONNX",
          "[dtype][float8]") {
  const Float8Format formats[] = {Float8Format::E4M3FN, Float8Format::E4M3FNUZ,
                                  Float8Format::E5M2, Float8Format::E5M2FNUZ};
  // Every non-NaN bit pattern converts to float and back unchanged (the
  // fnuz formats have no negative zero: 0x80 is their NaN).
  for (Float8Format f : formats) {
    for (int b = 0; b < 256; ++b) {
      float v = float8BitsToFloat(static_cast<uint8_t>(b), f);
      INFO("format " << int(f) << " bits " << b << " value " << v);
      if (std::isnan(v))
        continue;
      CHECK(floatToFloat8Bits(v, f) == b);
    }
  }
  CHECK(float8Max(Float8Format::E4M3FN) == 448.0f);
  CHECK(float8Max(Float8Format::E4M3FNUZ) == 240.0f);
  CHECK(float8Max(Float8Format::E5M2) == 57344.0f);
  CHECK(float8Max(Float8Format::E5M2FNUZ) == 57344.0f);
  // ONNX's test_cast_FLOAT_to_FLOAT8E4M3FN values.
  CHECK(float(Float8E4M3FN(0.47892547f)) == 0.46875f);
  CHECK(float(Float8E4M3FN(0.49968487f)) == 0.5f);
  CHECK(float(Float8E4M3FN(0.72290379f)) == 0.75f);
  CHECK(float(Float8E4M3FN(1e-7f)) == 0.0f);
  // Ties go to even: 464 lies between 448 (even) and 480 (beyond the range).
  CHECK(float(Float8E4M3FN(464.0f)) == 448.0f);
  // Beyond the range (non-saturating): NaN for fn/fnuz, inf for e5m2.
  CHECK(std::isnan(float(Float8E4M3FN(470.0f))));
  CHECK(std::isnan(float(Float8E4M3FN(INFINITY))));
  CHECK(std::isnan(float(Float8E4M3FNUZ(1e6f))));
  CHECK(float(Float8E5M2(1e6f)) == INFINITY);
  CHECK(float(Float8E5M2(-INFINITY)) == -INFINITY);
  CHECK(std::isnan(float(Float8E5M2FNUZ(INFINITY))));
  // fnuz: NaN is 0x80 and -0 is +0.
  CHECK(Float8E4M3FNUZ(NAN).bits == 0x80);
  CHECK(Float8E5M2FNUZ(-0.0f).bits == 0x00);
  CHECK(Float8E4M3FN(-0.0f).bits == 0x80);
  // Subnormals: the smallest e4m3fn value is 2^-9; half of it ties to 0.
  CHECK(float(Float8E4M3FN(std::ldexp(1.0f, -9))) == std::ldexp(1.0f, -9));
  CHECK(float(Float8E4M3FN(std::ldexp(1.0f, -10))) == 0.0f);
  CHECK(float(Float8E4M3FN(std::ldexp(1.5f, -10))) == std::ldexp(1.0f, -9));
}

TEST_CASE("sub-byte integers wrap and cast as ONNX", "[dtype][int4]") {
  CHECK(int32_t(Int4(-9)) == 7);
  CHECK(int32_t(Int4(8)) == -8);
  CHECK(int32_t(UInt4(17)) == 1);
  CHECK(int32_t(Int2(2)) == -2);
  CHECK(int32_t(UInt2(-1)) == 3);
  CHECK(int32_t(Int4(-2.7f)) == -2); // Truncated, then wrapped.
  CHECK(Int4::lowest() == -8);
  CHECK(UInt2::highest() == 3);
  Tensor f = Tensor::fromVector<float>({-9, -8, 7, 8, 15.5f}, {5});
  CHECK(ints(f.to(DType::I4)) == std::vector<int64_t>{7, -8, 7, -8, -1});
  CHECK(ints(f.to(DType::U4)) == std::vector<int64_t>{7, 8, 7, 8, 15});
  CHECK(ints(f.to(DType::I4).to(DType::I8)) ==
        std::vector<int64_t>{7, -8, 7, -8, -1});
  CHECK(f.to(DType::I4).to(DType::F32).toDoubleVector() ==
        std::vector<double>{7, -8, 7, -8, -1});
}

TEST_CASE("float8 casts and data movement in the reference kernels",
          "[dtype][float8]") {
  Tensor x = Tensor::fromVector<float>({0.3f, -1000.0f, 2.0f, NAN}, {2, 2});
  Attributes to;
  to.set("to", AttrValue(DType::F8E5M2));
  Tensor y = call("cast", {x}, to);
  CHECK(y.dtype() == DType::F8E5M2);
  Tensor back = y.to(DType::F32);
  CHECK(back.getDouble(0) == 0.3125);
  CHECK(back.getDouble(1) == -1024.0);
  CHECK(back.getDouble(2) == 2.0);
  CHECK(std::isnan(back.getDouble(3)));
  // Data movement takes the storage types; arithmetic does not.
  Attributes perm;
  perm.set("perm", AttrValue(std::vector<int64_t>{1, 0}));
  Tensor t = call("transpose", {y}, perm).contiguous();
  CHECK(t.dtype() == DType::F8E5M2);
  CHECK(t.to(DType::F32).getDouble(1) == 2.0);
  std::vector<Tensor> outputs(1);
  Status st = Dispatcher::global().call("add", {y, y}, {}, outputs);
  CHECK(!st);
  CHECK(st.message().find("f8e5m2") != std::string::npos);
}

TEST_CASE("unsigned and 16-bit integer kernels keep their semantics",
          "[dtype][elementwise]") {
  Tensor a = Tensor::fromVector<uint16_t>({65535, 40000, 7, 0}, {4});
  Tensor b = Tensor::fromVector<uint16_t>({65535, 3, 2, 5}, {4});
  CHECK(ints(call("mul", {a, b})) ==
        std::vector<int64_t>{1, (40000 * 3) % 65536, 14, 0});
  CHECK(ints(call("div", {a, b})) == std::vector<int64_t>{1, 13333, 3, 0});
  CHECK(ints(call("sub", {b, a})) ==
        std::vector<int64_t>{0, 65536 + 3 - 40000, 65531, 5});
  CHECK(ints(call("max", {a, b})) == std::vector<int64_t>{65535, 40000, 7, 5});
  Attributes left;
  left.set("direction", AttrValue(std::string("left")));
  Tensor s = Tensor::fromVector<uint16_t>({15, 1, 16, 0}, {4});
  CHECK(ints(call("bit_shift", {a, s}, left)) ==
        std::vector<int64_t>{32768, 80000 % 65536, 0, 0});
  Tensor big = Tensor::fromVector<uint64_t>({18446744073709551615ull, 5}, {2});
  Tensor two = Tensor::fromVector<uint64_t>({2, 2}, {2});
  Tensor q = call("div", {big, two});
  CHECK(static_cast<uint64_t>(q.getInt(0)) == 9223372036854775807ull);
  CHECK(call("greater", {big, two}).getInt(0) == 1); // Unsigned compare.
  Tensor u32 = Tensor::fromVector<uint32_t>({4294967295u, 3}, {2});
  Tensor m = Tensor::fromVector<uint32_t>({10, 3}, {2});
  Attributes fmod0;
  fmod0.set("fmod", AttrValue(int64_t(0)));
  CHECK(ints(call("mod", {u32, m}, fmod0)) == std::vector<int64_t>{5, 0});
  Tensor i16 = Tensor::fromVector<int16_t>({-7, 7, -32768}, {3});
  Tensor d16 = Tensor::fromVector<int16_t>({3, -3, -1}, {3});
  CHECK(ints(call("mod", {i16, d16}, fmod0)) == std::vector<int64_t>{2, -2, 0});
  CHECK(ints(call("mul", {i16, d16})) ==
        std::vector<int64_t>{-21, -21, -32768});
  // Reductions compare in the unsigned type.
  Attributes keep;
  keep.set("keepdims", AttrValue(int64_t(0)));
  keep.set("noop_with_empty_axes", AttrValue(int64_t(0)));
  Tensor r =
      call("reduce_max", {a, Tensor::fromVector<int64_t>({0}, {1})}, keep);
  CHECK(r.getInt(0) == 65535);
}
