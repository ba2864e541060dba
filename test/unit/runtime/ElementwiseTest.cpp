//===- ElementwiseTest.cpp - Tests of the elementwise kernels -------------===//
//
// This file implements the unit tests of the elementwise kernel family:
// broadcasting and its errors, ONNX corner cases (integer division, both mod
// modes, NaN-propagating max/min, round half to even, bit shifts, cast), the
// activations against values computed with NumPy, bool-valued ops, where, and
// f16/bf16 and non-contiguous inputs.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace kiln;

namespace {

Expected<Tensor> run(const std::string &op, std::vector<Tensor> inputs,
                     const Attributes &attrs = {}) {
  std::vector<Tensor> outs(1);
  Status st = Dispatcher::global().call(op, inputs, attrs, outs);
  if (!st)
    return st;
  return outs[0];
}

Tensor runOk(const std::string &op, std::vector<Tensor> inputs,
             const Attributes &attrs = {}) {
  Expected<Tensor> r = run(op, std::move(inputs), attrs);
  INFO(op << ": " << (r ? std::string() : r.status().message()));
  REQUIRE(r.isOk());
  return *r;
}

Tensor f32(std::vector<float> v, Shape s) {
  return Tensor::fromVector<float>(v, s);
}
Tensor i64(std::vector<int64_t> v, Shape s) {
  return Tensor::fromVector<int64_t>(v, s);
}

void checkClose(const Tensor &t, const std::vector<double> &expected,
                double rtol = 1e-5, double atol = 1e-6) {
  REQUIRE(t.numel() == static_cast<int64_t>(expected.size()));
  std::vector<double> got = t.toDoubleVector();
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i]))
      CHECK(std::isnan(got[i]));
    else
      CHECK(std::fabs(got[i] - expected[i]) <=
            atol + rtol * std::fabs(expected[i]));
  }
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

} // namespace

TEST_CASE("binary ops broadcast", "[elementwise]") {
  Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  checkClose(runOk("add", {a, f32({10, 20, 30}, {3})}),
             {11, 22, 33, 14, 25, 36});
  Tensor sum = runOk("add", {f32({1, 2}, {2, 1}), f32({10, 20, 30}, {1, 3})});
  CHECK(sum.shape() == Shape{2, 3});
  checkClose(sum, {11, 21, 31, 12, 22, 32});
  checkClose(runOk("sub", {Tensor::scalar<float>(1), a}),
             {0, -1, -2, -3, -4, -5});
  checkClose(runOk("mul", {a, a}), {1, 4, 9, 16, 25, 36});
  // A transposed (non-contiguous) operand.
  Tensor t = runOk("add", {a.permute({1, 0}), f32({0, 100}, {2})});
  CHECK(t.shape() == Shape{3, 2});
  checkClose(t, {1, 104, 2, 105, 3, 106});
  // Rank 0 with rank 0.
  Tensor s =
      runOk("mul", {Tensor::scalar<double>(3), Tensor::scalar<double>(4)});
  CHECK(s.rank() == 0);
  CHECK(s.getDouble(0) == 12);
  // Empty tensors.
  CHECK(runOk("add", {f32({}, {0, 3}), f32({1, 2, 3}, {3})}).shape() ==
        Shape{0, 3});
}

TEST_CASE("binary op errors", "[elementwise]") {
  auto r = run("add", {f32({1, 2, 3}, {3}), f32({1, 2}, {2})});
  REQUIRE(!r);
  CHECK_THAT(r.status().message(), Catch::Contains("[3]") &&
                                       Catch::Contains("[2]") &&
                                       Catch::Contains("add"));
  r = run("add", {f32({1}, {1}), i64({1}, {1})});
  REQUIRE(!r);
  CHECK_THAT(r.status().message(), Catch::Contains("same dtype"));
  r = run("add", {f32({1}, {1})});
  REQUIRE(!r);
  CHECK_THAT(r.status().message(), Catch::Contains("expects 2"));
  Attributes bad;
  bad.set("direction", std::string("up"));
  r = run("bit_shift",
          {Tensor::fromVector<uint8_t>({1}, {1}),
           Tensor::fromVector<uint8_t>({1}, {1})},
          bad);
  REQUIRE(!r);
  CHECK_THAT(r.status().message(), Catch::Contains("direction"));
}

TEST_CASE("integer division and mod follow ONNX", "[elementwise]") {
  Tensor a = i64({-7, 7, -7, 7}, {4}), b = i64({2, 2, -2, -2}, {4});
  CHECK(runOk("div", {a, b}).toIntVector() ==
        std::vector<int64_t>{-3, 3, 3, -3});
  // Division by zero does not trap.
  CHECK(runOk("div", {i64({5}, {1}), i64({0}, {1})}).toIntVector() ==
        std::vector<int64_t>{0});
  Tensor m = i64({3, 3, -3, -3}, {4});
  Attributes fmod0, fmod1;
  fmod0.set("fmod", int64_t(0));
  fmod1.set("fmod", int64_t(1));
  // numpy.mod / numpy.fmod.
  CHECK(runOk("mod", {a, m}, fmod0).toIntVector() ==
        std::vector<int64_t>{2, 1, -1, -2});
  CHECK(runOk("mod", {a, m}, fmod1).toIntVector() ==
        std::vector<int64_t>{-1, 1, -1, 1});
  checkClose(runOk("mod", {f32({-7.5, 7.5}, {2}), f32({2, -2}, {2})}, fmod1),
             {-1.5, 1.5});
  checkClose(runOk("mod", {f32({-7.5, 7.5}, {2}), f32({2, -2}, {2})}, fmod0),
             {0.5, -0.5});
  Tensor i8 = Tensor::fromVector<int8_t>({100, -128}, {2});
  CHECK(runOk("add", {i8, i8}).toIntVector() == std::vector<int64_t>{-56, 0});
  CHECK(runOk("pow", {i64({2, -3, 5}, {3}), i64({10, 3, 0}, {3})})
            .toIntVector() == std::vector<int64_t>{1024, -27, 1});
  checkClose(runOk("pow", {f32({2, 4}, {2}), f32({0.5, -1}, {2})}),
             {1.41421356, 0.25});
}

TEST_CASE("max and min propagate NaN", "[elementwise]") {
  Tensor a = f32({1, NAN, 3}, {3}), b = f32({2, 0, NAN}, {3});
  checkClose(runOk("max", {a, b}), {2, kNaN, kNaN});
  checkClose(runOk("min", {a, b}), {1, kNaN, kNaN});
  CHECK(runOk("max", {i64({1, 5}, {2}), i64({3, 2}, {2})}).toIntVector() ==
        std::vector<int64_t>{3, 5});
}

TEST_CASE("bitwise ops and shifts", "[elementwise]") {
  auto u8 = [](std::vector<uint8_t> v) {
    Shape s{static_cast<int64_t>(v.size())};
    return Tensor::fromVector<uint8_t>(v, s);
  };
  Attributes left, right;
  left.set("direction", std::string("left"));
  right.set("direction", std::string("right"));
  CHECK(runOk("bit_shift", {u8({16, 4, 1}), u8({1, 2, 3})}, right)
            .toIntVector() == std::vector<int64_t>{8, 1, 0});
  CHECK(
      runOk("bit_shift", {u8({16, 4, 1}), u8({1, 2, 8})}, left).toIntVector() ==
      std::vector<int64_t>{32, 16, 0});
  CHECK(runOk("bitwise_and", {i64({12}, {1}), i64({10}, {1})}).toIntVector() ==
        std::vector<int64_t>{8});
  CHECK(runOk("bitwise_xor", {i64({12}, {1}), i64({10}, {1})}).toIntVector() ==
        std::vector<int64_t>{6});
  CHECK(runOk("bitwise_not", {u8({0, 255})}).toIntVector() ==
        std::vector<int64_t>{255, 0});
  Tensor t = Tensor::fromVector<bool>({true, true, false, false}, {4});
  Tensor f = Tensor::fromVector<bool>({true, false, true, false}, {4});
  CHECK(runOk("and", {t, f}).toIntVector() == std::vector<int64_t>{1, 0, 0, 0});
  CHECK(runOk("or", {t, f}).toIntVector() == std::vector<int64_t>{1, 1, 1, 0});
  CHECK(runOk("xor", {t, f}).toIntVector() == std::vector<int64_t>{0, 1, 1, 0});
  CHECK(runOk("not", {t}).toIntVector() == std::vector<int64_t>{0, 0, 1, 1});
}

TEST_CASE("comparisons give bool", "[elementwise]") {
  Tensor a = f32({1, 2, 3}, {3}), b = Tensor::scalar<float>(2);
  Tensor eq = runOk("equal", {a, b});
  CHECK(eq.dtype() == DType::Bool);
  CHECK(eq.toIntVector() == std::vector<int64_t>{0, 1, 0});
  CHECK(runOk("less", {a, b}).toIntVector() == std::vector<int64_t>{1, 0, 0});
  CHECK(runOk("less_equal", {a, b}).toIntVector() ==
        std::vector<int64_t>{1, 1, 0});
  CHECK(runOk("greater", {a, b}).toIntVector() ==
        std::vector<int64_t>{0, 0, 1});
  CHECK(runOk("greater_equal", {a, b}).toIntVector() ==
        std::vector<int64_t>{0, 1, 1});
  Tensor t = Tensor::fromVector<bool>({true, false}, {2});
  CHECK(runOk("equal", {t, t}).toIntVector() == std::vector<int64_t>{1, 1});
  CHECK(runOk("less", {f32({NAN}, {1}), f32({1}, {1})}).toIntVector() ==
        std::vector<int64_t>{0});
}

TEST_CASE("unary math", "[elementwise]") {
  checkClose(runOk("round", {f32({0.5, 1.5, 2.5, -0.5, -2.5, 2.6}, {6})}),
             {0, 2, 2, 0, -2, 3});
  checkClose(runOk("neg", {f32({1, -2}, {2})}), {-1, 2});
  CHECK(
      runOk("abs", {Tensor::fromVector<int32_t>({-3, 4}, {2})}).toIntVector() ==
      std::vector<int64_t>{3, 4});
  checkClose(runOk("sign", {f32({-3, 0, 2}, {3})}), {-1, 0, 1});
  CHECK(runOk("relu", {i64({-3, 4}, {2})}).toIntVector() ==
        std::vector<int64_t>{0, 4});
  checkClose(runOk("sqrt", {f32({4, 9}, {2})}), {2, 3});
  checkClose(runOk("reciprocal", {f32({4, -0.5}, {2})}), {0.25, -2});
  checkClose(runOk("floor", {f32({-1.5, 1.5}, {2})}), {-2, 1});
  checkClose(runOk("ceil", {f32({-1.5, 1.5}, {2})}), {-1, 2});
  checkClose(runOk("erf", {f32({0.5}, {1})}), {0.5204998778});
  checkClose(runOk("atanh", {f32({0.5}, {1})}), {0.5493061443});
  Tensor isnan = runOk("is_nan", {f32({1, NAN}, {2})});
  CHECK(isnan.dtype() == DType::Bool);
  CHECK(isnan.toIntVector() == std::vector<int64_t>{0, 1});
  Tensor x = f32({-kInf, 0, kInf, NAN}, {4});
  CHECK(runOk("is_inf", {x}).toIntVector() == std::vector<int64_t>{1, 0, 1, 0});
  Attributes posOnly;
  posOnly.set("detect_positive", int64_t(1));
  posOnly.set("detect_negative", int64_t(0));
  CHECK(runOk("is_inf", {x}, posOnly).toIntVector() ==
        std::vector<int64_t>{0, 0, 1, 0});
}

TEST_CASE("activations match numpy", "[elementwise]") {
  Tensor x = f32({-2, -0.5, 0, 0.5, 1, 3}, {6});
  Attributes none, tanhForm;
  none.set("approximate", std::string("none"));
  tanhForm.set("approximate", std::string("tanh"));
  checkClose(runOk("gelu", {x}, none),
             {-0.045500267, -0.15426877, 0, 0.34573123, 0.8413447, 2.9959502});
  checkClose(runOk("gelu", {x}, tanhForm),
             {-0.045402307, -0.15428598, 0, 0.345714, 0.841192, 2.9963627});
  checkClose(runOk("selu", {x}), {-1.5201664733475926, -0.6917581899652426, 0,
                                  0.5253505, 1.050701, 3.152103});
  checkClose(runOk("softplus", {x}),
             {0.126928, 0.474077, 0.6931472, 0.974077, 1.3132617, 3.0485873});
  checkClose(runOk("mish", {x}),
             {-0.25250146, -0.22074378, 0, 0.37524518, 0.8650984, 2.986535});
  Attributes alpha2;
  alpha2.set("alpha", 2.0);
  checkClose(runOk("celu", {x}, alpha2),
             {-1.2642412, -0.44239855, 0, 0.5, 1, 3});
  checkClose(runOk("hard_swish", {x}),
             {-0.3333333, -0.20833333, 0, 0.29166666, 0.6666667, 3});
  checkClose(runOk("hard_sigmoid", {x}), {0.1, 0.4, 0.5, 0.6, 0.7, 1});
  checkClose(runOk("thresholded_relu", {x}), {0, 0, 0, 0, 0, 3});
  checkClose(runOk("leaky_relu", {x}), {-0.02, -0.005, 0, 0.5, 1, 3});
  checkClose(
      runOk("elu", {x}, alpha2),
      {2 * (std::exp(-2.0) - 1), 2 * (std::exp(-0.5) - 1), 0, 0.5, 1, 3});
  checkClose(runOk("softsign", {x}),
             {-2.0 / 3, -1.0 / 3, 0, 1.0 / 3, 0.5, 0.75});
  checkClose(runOk("sigmoid", {f32({-100, 0, 100}, {3})}), {0, 0.5, 1});
  checkClose(runOk("swish", {x}),
             {-2 / (1 + std::exp(2.0)), -0.5 / (1 + std::exp(0.5)), 0,
              0.5 / (1 + std::exp(-0.5)), 1 / (1 + std::exp(-1.0)),
              3 / (1 + std::exp(-3.0))});
  Attributes shrink;
  shrink.set("bias", 1.5);
  shrink.set("lambd", 1.5);
  checkClose(runOk("shrink", {f32({-2, -1, 0, 1, 2}, {5})}, shrink),
             {-0.5, 0, 0, 0, 0.5});
  Attributes badGelu;
  badGelu.set("approximate", std::string("fast"));
  CHECK(!run("gelu", {x}, badGelu));
}

TEST_CASE("cast", "[elementwise]") {
  Attributes toI32, toBool, toF16, toBF16, toF32;
  toI32.set("to", DType::I32);
  toBool.set("to", DType::Bool);
  toF16.set("to", DType::F16);
  toBF16.set("to", DType::BF16);
  toF32.set("to", DType::F32);
  Tensor x = f32({-1.7f, 2.9f, 0, 1e-5f}, {4});
  Tensor i = runOk("cast", {x}, toI32);
  CHECK(i.dtype() == DType::I32);
  CHECK(i.toIntVector() == std::vector<int64_t>{-1, 2, 0, 0});
  CHECK(runOk("cast", {x}, toBool).toIntVector() ==
        std::vector<int64_t>{1, 1, 0, 1});
  Tensor h = runOk("cast", {x}, toF16);
  CHECK(h.dtype() == DType::F16);
  CHECK(h.data<Half>()[3].bits == 168);
  Tensor bf = runOk("cast", {f32({1.00390625f}, {1})}, toBF16); // Tie.
  CHECK(bf.data<BFloat16>()[0].bits == 0x3f80);
  Tensor back =
      runOk("cast", {Tensor::fromVector<bool>({true, false}, {2})}, toF32);
  checkClose(back, {1, 0});
  CHECK(!run("cast", {x}));
}

TEST_CASE("half precision computes in float", "[elementwise]") {
  Tensor a = f32({1, 2.5, -3}, {3}).to(DType::F16);
  Tensor b = f32({0.5, 0.25, 8}, {3}).to(DType::F16);
  Tensor s = runOk("add", {a, b});
  CHECK(s.dtype() == DType::F16);
  checkClose(s, {1.5, 2.75, 5});
  Tensor e = runOk("exp", {f32({0, 1}, {2}).to(DType::BF16)});
  CHECK(e.dtype() == DType::BF16);
  checkClose(e, {1, 2.71875}, 0, 1e-6); // bf16(e) = 2.71875.
  CHECK(runOk("less", {a, b}).toIntVector() == std::vector<int64_t>{0, 0, 1});
}

TEST_CASE("where broadcasts its three operands", "[elementwise]") {
  Tensor c = Tensor::fromVector<bool>({true, false}, {2, 1});
  Tensor x = f32({1, 2, 3}, {3});
  Tensor y = Tensor::scalar<float>(-1);
  Tensor w = runOk("where", {c, x, y});
  CHECK(w.shape() == Shape{2, 3});
  CHECK(w.dtype() == DType::F32);
  checkClose(w, {1, 2, 3, -1, -1, -1});
  Tensor same = runOk("where", {Tensor::fromVector<bool>({true, false}, {2}),
                                i64({1, 2}, {2}), i64({3, 4}, {2})});
  CHECK(same.toIntVector() == std::vector<int64_t>{1, 4});
  CHECK(!run("where", {c, x, i64({1}, {1})}));
  CHECK(!run("where", {c, x, f32({1, 2}, {2})}));
}
