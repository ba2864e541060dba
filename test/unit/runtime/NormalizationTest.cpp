//===- NormalizationTest.cpp - Tests of the normalization kernels ---------===//
//
// This file implements the unit tests of the reference normalization kernels
// (batch_norm, layer_norm, rms_norm, instance_norm, group_norm) and of the
// softmax family (softmax, log_softmax, hardmax), called through the global
// Dispatcher. Expected values are hand-computed or come from NumPy.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace kiln;

namespace {

std::vector<Tensor> runNorm(const std::string &op,
                            const std::vector<Tensor> &inputs,
                            const Attributes &attrs, size_t numResults = 1) {
  std::vector<Tensor> outputs(numResults);
  Status s = Dispatcher::global().call(op, inputs, attrs, outputs);
  INFO(s.message());
  REQUIRE(s.isOk());
  return outputs;
}

std::string normError(const std::string &op, const std::vector<Tensor> &inputs,
                      const Attributes &attrs, size_t numResults = 1) {
  std::vector<Tensor> outputs(numResults);
  Status s = Dispatcher::global().call(op, inputs, attrs, outputs);
  return s.isOk() ? "" : s.message();
}

void checkClose(const Tensor &t, const std::vector<double> &want,
                double tol = 1e-5) {
  REQUIRE(t.numel() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(t.getDouble(i) == Approx(want[i]).margin(tol).epsilon(1e-4));
  }
}

Tensor f32(const std::vector<float> &v, const Shape &shape) {
  return Tensor::fromVector<float>(v, shape);
}

Attributes epsAttrs(double eps) {
  Attributes a;
  a.set("epsilon", eps);
  return a;
}

} // namespace

TEST_CASE("batch_norm (inference)", "[runtime][normalization]") {
  // x: N=1, C=2, 2 elements each.
  Tensor x = f32({1, 2, 3, 4}, {1, 2, 2});
  Tensor scale = f32({2, 0.5f}, {2});
  Tensor bias = f32({1, -1}, {2});
  Tensor mean = f32({1, 3}, {2});
  Tensor var = f32({4, 1}, {2});
  auto out = runNorm("batch_norm", {x, scale, bias, mean, var}, epsAttrs(0));
  CHECK(out[0].shape() == Shape{1, 2, 2});
  // c0: (x-1)/2*2+1; c1: (x-3)/1*0.5-1.
  checkClose(out[0], {1, 2, -1, -0.5});

  CHECK(normError("batch_norm", {x, f32({1, 2, 3}, {3}), bias, mean, var},
                  epsAttrs(0))
            .find("operand 1 (scale)") != std::string::npos);
  CHECK(normError("batch_norm", {x, scale, bias, mean}, epsAttrs(0)) != "");
}

TEST_CASE("layer_norm results and statistics", "[runtime][normalization]") {
  Tensor x = f32({1, 2, 3, 4, 0, 4, 0, 4}, {2, 4});
  Tensor scale = f32({1, 1, 2, 2}, {4});
  Tensor bias = f32({0, 0, 0, 1}, {4});
  Attributes a = epsAttrs(0);
  a.set("axis", int64_t(1));
  auto out = runNorm("layer_norm", {x, scale, bias}, a, 3);
  // Row 0: mean 2.5, var 1.25; row 1: mean 2, var 4.
  double inv = 1.0 / std::sqrt(1.25);
  checkClose(out[0], {-1.5 * inv, -0.5 * inv, 2 * 0.5 * inv, 2 * 1.5 * inv + 1,
                      -1, 1, -2, 3});
  CHECK(out[0].dtype() == DType::F32);
  CHECK(out[1].dtype() == DType::F32);
  CHECK(out[1].shape() == Shape{2, 1});
  checkClose(out[1], {2.5, 2});
  CHECK(out[2].shape() == Shape{2, 1});
  checkClose(out[2], {inv, 0.5});
}

TEST_CASE("layer_norm over several dims with broadcast scale",
          "[runtime][normalization]") {
  Tensor x = f32({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  Tensor scale = f32({2}, {1});
  Tensor bias = f32({1, -1}, {2});
  Attributes a = epsAttrs(1e-5);
  a.set("axis", int64_t(-2));
  auto out = runNorm("layer_norm", {x, scale, bias}, a, 3);
  CHECK(out[1].shape() == Shape{2, 1, 1});
  double inv = 1.0 / std::sqrt(1.25 + 1e-5);
  std::vector<double> want;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 4; ++i)
      want.push_back((i - 1.5) * inv * 2 + (i % 2 ? -1 : 1));
  checkClose(out[0], want);

  CHECK(normError("layer_norm", {x, f32({1, 2, 3}, {3}), bias}, a, 3)
            .find("does not broadcast") != std::string::npos);
}

TEST_CASE("layer_norm on f16 and f64", "[runtime][normalization]") {
  std::vector<Half> xh = {Half(1.f), Half(2.f), Half(3.f), Half(4.f)};
  Tensor x = Tensor::fromVector<Half>(xh, {1, 4});
  Tensor s = Tensor::fromVector<Half>({Half(1.f)}, {1});
  Tensor b = Tensor::fromVector<Half>({Half(0.f)}, {1});
  Attributes a = epsAttrs(0);
  a.set("axis", int64_t(1));
  auto out = runNorm("layer_norm", {x, s, b}, a, 3);
  CHECK(out[0].dtype() == DType::F16);
  CHECK(out[1].dtype() == DType::F32);
  double inv = 1.0 / std::sqrt(1.25);
  checkClose(out[0], {-1.5 * inv, -0.5 * inv, 0.5 * inv, 1.5 * inv}, 2e-3);

  Tensor xd = Tensor::fromVector<double>({1, 2, 3, 4}, {1, 4});
  auto outd = runNorm("layer_norm",
                      {xd, Tensor::fromVector<double>({1}, {1}),
                       Tensor::fromVector<double>({0}, {1})},
                      a, 3);
  CHECK(outd[1].dtype() == DType::F64);
  CHECK(outd[0].getDouble(3) == Approx(1.5 * inv).epsilon(1e-12));
}

TEST_CASE("rms_norm", "[runtime][normalization]") {
  Tensor x = f32({1, 2, 3, 4, 3, 4}, {3, 2});
  Tensor scale = f32({1, 2}, {2});
  Attributes a = epsAttrs(0);
  a.set("axis", int64_t(-1));
  auto out = runNorm("rms_norm", {x, scale}, a);
  std::vector<double> want;
  for (int r = 0; r < 3; ++r) {
    double u = x.getDouble(2 * r), v = x.getDouble(2 * r + 1);
    double rms = std::sqrt((u * u + v * v) / 2);
    want.push_back(u / rms);
    want.push_back(v / rms * 2);
  }
  checkClose(out[0], want);

  a.set("axis", int64_t(0));
  auto all = runNorm("rms_norm", {x, f32({1}, {1})}, a);
  double sq = 1 + 4 + 9 + 16 + 9 + 16;
  CHECK(all[0].getDouble(5) == Approx(4 / std::sqrt(sq / 6)));
}

TEST_CASE("instance_norm and group_norm", "[runtime][normalization]") {
  // N=1, C=4, spatial 2.
  Tensor x = f32({1, 3, 0, 2, 5, 5, 1, 5}, {1, 4, 2});
  Tensor scale = f32({1, 2, 1, 1}, {4});
  Tensor bias = f32({0, 0, 1, 0}, {4});
  auto in = runNorm("instance_norm", {x, scale, bias}, epsAttrs(0));
  // Channel 2 has zero variance (eps 0): 0 * inf is NaN, skip it.
  CHECK(in[0].getDouble(0) == Approx(-1));
  CHECK(in[0].getDouble(1) == Approx(1));
  CHECK(in[0].getDouble(2) == Approx(-2));
  CHECK(in[0].getDouble(3) == Approx(2));
  CHECK(in[0].getDouble(6) == Approx(-1));
  CHECK(in[0].getDouble(7) == Approx(1));

  Attributes g = epsAttrs(0);
  g.set("num_groups", int64_t(2));
  auto gn = runNorm("group_norm", {x, scale, bias}, g);
  // Group 0: {1, 3, 0, 2} mean 1.5 var 1.25; group 1: {5, 5, 1, 5} mean 4
  // var 3.
  double i0 = 1 / std::sqrt(1.25), i1 = 1 / std::sqrt(3.0);
  checkClose(gn[0], {-0.5 * i0, 1.5 * i0, 2 * -1.5 * i0, 2 * 0.5 * i0, i1 + 1,
                     i1 + 1, -3 * i1, i1});

  g.set("num_groups", int64_t(3));
  CHECK(normError("group_norm", {x, scale, bias}, g).find("num_groups") !=
        std::string::npos);
  CHECK(normError("instance_norm", {x, f32({1}, {1}), bias}, epsAttrs(0)) !=
        "");
}

TEST_CASE("softmax and log_softmax", "[runtime][normalization]") {
  Tensor x = f32({0, 1, 2, 1000, 1001, 1002}, {2, 3});
  Attributes a;
  a.set("axis", int64_t(1));
  auto sm = runNorm("softmax", {x}, a);
  double e1 = std::exp(1.0), e2 = std::exp(2.0), z = 1 + e1 + e2;
  checkClose(sm[0], {1 / z, e1 / z, e2 / z, 1 / z, e1 / z, e2 / z});
  auto lsm = runNorm("log_softmax", {x}, a);
  double lz = std::log(z);
  checkClose(lsm[0], {-lz, 1 - lz, 2 - lz, -lz, 1 - lz, 2 - lz});

  // Along axis 0 (inner dims > 1).
  a.set("axis", int64_t(0));
  auto col = runNorm("softmax", {f32({0, 0, std::log(3.f), 0}, {2, 2})}, a);
  checkClose(col[0], {0.25, 0.5, 0.75, 0.5});

  a.set("axis", int64_t(-3));
  CHECK(normError("softmax", {x}, a).find("out of range") != std::string::npos);
  CHECK(normError("softmax", {Tensor::fromVector<int32_t>({1}, {1})},
                  Attributes())
            .find("no kernel") != std::string::npos);
}

TEST_CASE("hardmax picks the first maximum", "[runtime][normalization]") {
  Tensor x = f32({3, 1, 3, 0, 2, 2, 1, 4}, {2, 4});
  Attributes a;
  a.set("axis", int64_t(1));
  auto out = runNorm("hardmax", {x}, a);
  checkClose(out[0], {1, 0, 0, 0, 0, 0, 0, 1});
  a.set("axis", int64_t(0));
  out = runNorm("hardmax", {x}, a);
  checkClose(out[0], {1, 0, 1, 0, 0, 1, 0, 1});
}

TEST_CASE("softmax on bf16 rounds once", "[runtime][normalization]") {
  std::vector<BFloat16> v = {BFloat16(0.f), BFloat16(0.f), BFloat16(0.f),
                             BFloat16(0.f)};
  Tensor x = Tensor::fromVector<BFloat16>(v, {4});
  Attributes a;
  a.set("axis", int64_t(0));
  auto out = runNorm("softmax", {x}, a);
  CHECK(out[0].dtype() == DType::BF16);
  checkClose(out[0], {0.25, 0.25, 0.25, 0.25});
  auto log = runNorm("log_softmax", {x}, a);
  checkClose(log[0], std::vector<double>(4, std::log(0.25)), 1e-2);
}
