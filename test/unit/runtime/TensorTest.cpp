//===- TensorTest.cpp - Tests of dtypes, tensors and the dispatcher -------===//
//
// This file implements the unit tests of the runtime core: half-precision
// conversions (round to nearest even, subnormals, overflow, NaN), Storage
// alignment, Tensor views and copies, dtype conversion, element accessors,
// Attributes getters and Dispatcher errors.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Tensor.h"
#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace kiln;

namespace {
float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
} // namespace

TEST_CASE("Half converts with round to nearest even", "[dtype]") {
  CHECK(Half(1.0f).bits == 0x3c00);
  CHECK(Half(-2.0f).bits == 0xc000);
  CHECK(Half(0.1f).bits == 11878); // numpy: float16(0.1).view(uint16)
  CHECK(Half(65504.0f).bits == 0x7bff);
  CHECK(Half(65519.0f).bits == 0x7bff);
  CHECK(Half(65520.0f).bits == 0x7c00); // Rounds to infinity.
  CHECK(Half(70000.0f).bits == 0x7c00);
  CHECK(Half(-std::numeric_limits<float>::infinity()).bits == 0xfc00);
  // Ties: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> even (1.0).
  CHECK(Half(1.0f + std::ldexp(1.0f, -11)).bits == 0x3c00);
  CHECK(Half(1.0f + 3 * std::ldexp(1.0f, -11)).bits == 0x3c02);
  // Subnormals.
  CHECK(Half(std::ldexp(1.0f, -24)).bits == 0x0001);
  CHECK(Half(std::ldexp(1.0f, -25)).bits == 0x0000);     // Tie to even 0.
  CHECK(Half(3 * std::ldexp(1.0f, -25)).bits == 0x0002); // Tie to even 2.
  CHECK(Half(1e-5f).bits == 168);
  CHECK(Half(std::ldexp(1.0f, -14)).bits == 0x0400); // Smallest normal.
  CHECK(std::isnan(static_cast<float>(Half(std::nanf("")))));
  // Round trip of every finite half.
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    Half h;
    h.bits = static_cast<uint16_t>(b);
    REQUIRE(Half(static_cast<float>(h)).bits == b);
  }
  Half sub;
  sub.bits = 0x0001;
  CHECK(static_cast<float>(sub) == std::ldexp(1.0f, -24));
}

TEST_CASE("BFloat16 converts with round to nearest even", "[dtype]") {
  CHECK(BFloat16(1.0f).bits == 0x3f80);
  CHECK(BFloat16(fromBits(0x3f808000u)).bits == 0x3f80); // Tie, even.
  CHECK(BFloat16(fromBits(0x3f818000u)).bits == 0x3f82); // Tie, odd -> up.
  CHECK(BFloat16(fromBits(0x3f808001u)).bits == 0x3f81);
  CHECK(static_cast<float>(BFloat16(3.0f)) == 3.0f);
  CHECK(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
  CHECK(std::isinf(static_cast<float>(BFloat16(fromBits(0x7f7fffffu)))));
}

TEST_CASE("dtype names and sizes", "[dtype]") {
  CHECK(std::string(dtypeName(DType::BF16)) == "bf16");
  CHECK(dtypeSize(DType::F64) == 8);
  CHECK(dtypeSize(DType::Bool) == 1);
  CHECK(parseDType("i32") == DType::I32);
  CHECK(!parseDType("f8").has_value());
  CHECK(isFloatingPoint(DType::F16));
  CHECK(!isFloatingPoint(DType::I8));
}

TEST_CASE("Storage is aligned and zeroed", "[tensor]") {
  auto s = Storage::allocateCpu(100);
  CHECK(reinterpret_cast<uintptr_t>(s->data()) % 64 == 0);
  const auto *p = static_cast<const unsigned char *>(s->data());
  for (int i = 0; i < 100; ++i)
    REQUIRE(p[i] == 0);
  CHECK(Storage::allocateCpu(0)->data() != nullptr);
  Tensor t = Tensor::empty(DType::F32, {0, 3});
  CHECK(t.numel() == 0);
  CHECK(t.clone().numel() == 0);
}

TEST_CASE("Tensor views and copies", "[tensor]") {
  Tensor t = Tensor::fromVector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  CHECK(t.isContiguous());
  CHECK(t.strides() == Shape{3, 1});
  CHECK(t.typeString() == "f32[2, 3]");
  CHECK(shapeToString({}) == "[]");

  Tensor p = t.permute({1, 0});
  CHECK(p.shape() == Shape{3, 2});
  CHECK(!p.isContiguous());
  CHECK(p.storage() == t.storage());
  CHECK(p.toDoubleVector() == std::vector<double>{0, 3, 1, 4, 2, 5});
  Tensor c = p.contiguous();
  CHECK(c.isContiguous());
  CHECK(c.storage() != t.storage());
  CHECK(c.toDoubleVector() == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(t.contiguous().storage() == t.storage());

  Tensor r = p.reshape({6});
  CHECK(r.toDoubleVector() == std::vector<double>{0, 3, 1, 4, 2, 5});
  Tensor r2 = t.reshape({3, 2});
  CHECK(r2.storage() == t.storage());

  Tensor k = t.clone();
  k.data<float>()[0] = 42;
  CHECK(t.getDouble(0) == 0);

  // A sliced view (offset, step) reads correctly.
  Tensor v(t.storage(), DType::F32, {2}, {3}, 1); // Column 1.
  CHECK(v.toDoubleVector() == std::vector<double>{1, 4});
  CHECK(v.clone().toDoubleVector() == std::vector<double>{1, 4});

  Tensor s = Tensor::scalar<int64_t>(7);
  CHECK(s.rank() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.getInt(0) == 7);
  // Size-1 dims with odd strides still count as contiguous.
  Tensor one(t.storage(), DType::F32, {1, 3}, {99, 1}, 0);
  CHECK(one.isContiguous());
}

TEST_CASE("Tensor::to follows ONNX Cast", "[tensor]") {
  Tensor f = Tensor::fromVector<float>({-1.7f, 2.9f, 0.0f, 0.5f}, {4});
  CHECK(f.to(DType::I32).toIntVector() == std::vector<int64_t>{-1, 2, 0, 0});
  Tensor b = f.to(DType::Bool);
  CHECK(b.toIntVector() == std::vector<int64_t>{1, 1, 0, 1});
  CHECK(b.to(DType::F32).toDoubleVector() == std::vector<double>{1, 1, 0, 1});
  Tensor h = f.to(DType::F16);
  CHECK(h.dtype() == DType::F16);
  CHECK(h.getDouble(3) == 0.5);
  CHECK(h.getDouble(0) == Approx(-1.7).epsilon(1e-3));
  Tensor i8 = Tensor::fromVector<int64_t>({300, -1}, {2}).to(DType::U8);
  CHECK(i8.toIntVector() == std::vector<int64_t>{44, 255});
  // Casting a non-contiguous view.
  Tensor m = Tensor::fromVector<int32_t>({1, 2, 3, 4}, {2, 2}).permute({1, 0});
  CHECK(m.to(DType::F64).toDoubleVector() == std::vector<double>{1, 3, 2, 4});
  CHECK(f.getInt(1) == 2);
}

TEST_CASE("Attributes getters", "[attrs]") {
  Attributes a;
  a.set("i", int64_t(3));
  a.set("f", 0.25);
  a.set("s", std::string("left"));
  a.set("v", std::vector<int64_t>{1, 2});
  a.set("t", DType::F16);
  CHECK(a.getInt("i") == 3);
  CHECK(a.getFloat("i") == 3.0);
  CHECK(a.getFloat("f") == 0.25);
  CHECK(a.getFloat("missing", 1.5) == 1.5);
  CHECK(a.getString("s") == "left");
  CHECK(a.getInts("v") == std::vector<int64_t>{1, 2});
  CHECK(a.getFloats("v") == std::vector<double>{1, 2});
  CHECK(a.getDType("t") == DType::F16);
  CHECK(!a.getTensor("i").defined());
}

TEST_CASE("Dispatcher errors name op, device and dtype", "[dispatcher]") {
  Dispatcher &d = Dispatcher::global();
  CHECK(&d == &Dispatcher::global());
  CHECK(d.hasOp("add", Device::CPU));
  CHECK(!d.hasOp("no_such_op", Device::CPU));
  std::vector<Tensor> outs(1);
  Attributes attrs;
  Status st =
      d.call("sqrt", {Tensor::fromVector<int8_t>({1}, {1})}, attrs, outs);
  REQUIRE(!st);
  CHECK_THAT(st.message(),
             Catch::Contains("no kernel for op 'sqrt' on cpu for dtype i8"));
  st = d.call("no_such_op", {Tensor::scalar<float>(1)}, attrs, outs);
  REQUIRE(!st);
  CHECK_THAT(st.message(), Catch::Contains("no_such_op"));
  st = d.call("add", {Tensor(), Tensor::scalar<float>(1)}, attrs, outs);
  CHECK(!st);
}
