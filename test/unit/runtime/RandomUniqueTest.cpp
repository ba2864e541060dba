//===- RandomUniqueTest.cpp - Tests of the random, unique and RoI kernels -===//
//
// This file implements the unit tests of the reference kernels of
// kiln.random_uniform, kiln.random_normal, kiln.multinomial (determinism
// for a seed, ranges, moments and frequencies), kiln.unique (sorted,
// unsorted, along an axis, NaN) and the untrusted-value errors of
// kiln.roi_align and kiln.stft, called through the global Dispatcher as the
// executor calls them. ONNX's node tests of the random generators cannot
// check them (their expected values are NumPy's global generator's).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>

using namespace kiln;

namespace {

std::vector<Tensor> run(const std::string &op,
                        const std::vector<Tensor> &inputs,
                        const Attributes &attrs, size_t numResults = 1) {
  std::vector<Tensor> outputs(numResults);
  Status s = Dispatcher::global().call(op, inputs, attrs, outputs);
  INFO(s.message());
  REQUIRE(s.isOk());
  return outputs;
}

std::string runError(const std::string &op, const std::vector<Tensor> &inputs,
                     const Attributes &attrs, size_t numResults = 1) {
  std::vector<Tensor> outputs(numResults);
  Status s = Dispatcher::global().call(op, inputs, attrs, outputs);
  return s.isOk() ? "" : s.message();
}

Tensor shapeOf(std::vector<int64_t> dims) {
  return Tensor::fromVector<int64_t>(dims, {static_cast<int64_t>(dims.size())});
}

Attributes drawAttrs(DType dtype, int64_t seed) {
  Attributes a;
  a.set("dtype", dtype);
  a.set("seed", seed);
  return a;
}

std::vector<double> values(const Tensor &t) { return t.toDoubleVector(); }

} // namespace

TEST_CASE("random_uniform: deterministic per seed, in [low, high), uniform") {
  Attributes a = drawAttrs(DType::F32, 7);
  a.set("low", -2.0);
  a.set("high", 3.0);
  Tensor x = run("random_uniform", {shapeOf({100, 100})}, a)[0];
  REQUIRE(x.dtype() == DType::F32);
  REQUIRE(x.shape() == Shape{100, 100});
  Tensor again = run("random_uniform", {shapeOf({100, 100})}, a)[0];
  CHECK(values(x) == values(again));
  std::vector<double> v = values(x);
  double mean = 0, var = 0;
  for (double e : v) {
    REQUIRE(e >= -2.0);
    REQUIRE(e < 3.0);
    mean += e;
  }
  mean /= v.size();
  for (double e : v)
    var += (e - mean) * (e - mean);
  var /= v.size();
  // U(-2, 3): mean 0.5, variance 25/12; 10^4 draws.
  CHECK(mean == Approx(0.5).margin(0.05));
  CHECK(var == Approx(25.0 / 12).margin(0.1));
  // Another seed gives other values; a prefix shape gives a prefix.
  a.set("seed", int64_t(8));
  CHECK(values(run("random_uniform", {shapeOf({100, 100})}, a)[0]) != v);
  a.set("seed", int64_t(7));
  std::vector<double> prefix =
      values(run("random_uniform", {shapeOf({10})}, a)[0]);
  CHECK(std::equal(prefix.begin(), prefix.end(), v.begin()));
}

TEST_CASE("random_uniform: f16 draws stay below high") {
  Attributes a = drawAttrs(DType::F16, 1);
  a.set("low", 0.0);
  a.set("high", 1.0);
  for (double e : values(run("random_uniform", {shapeOf({4096})}, a)[0]))
    REQUIRE((e >= 0.0 && e < 1.0));
}

TEST_CASE("random_normal: moments of the draws") {
  Attributes a = drawAttrs(DType::F64, 3);
  a.set("mean", 1.5);
  a.set("scale", 2.0);
  Tensor x = run("random_normal", {shapeOf({20000})}, a)[0];
  REQUIRE(x.dtype() == DType::F64);
  std::vector<double> v = values(x);
  double mean = 0, var = 0;
  for (double e : v) {
    REQUIRE(std::isfinite(e));
    mean += e;
  }
  mean /= v.size();
  for (double e : v)
    var += (e - mean) * (e - mean);
  var /= v.size();
  CHECK(mean == Approx(1.5).margin(0.05));
  CHECK(std::sqrt(var) == Approx(2.0).margin(0.05));
  CHECK(values(run("random_normal", {shapeOf({20000})}, a)[0]) == v);
}

TEST_CASE("random draws: bad shapes and dtypes are errors") {
  Attributes a = drawAttrs(DType::F32, 0);
  CHECK(runError("random_uniform", {shapeOf({-1, 2})}, a).find("bad dim") !=
        std::string::npos);
  Attributes i = drawAttrs(DType::I32, 0);
  CHECK(runError("random_normal", {shapeOf({2})}, i).find("float") !=
        std::string::npos);
}

TEST_CASE("multinomial: frequencies follow the probabilities") {
  Attributes a = drawAttrs(DType::I64, 5);
  a.set("sample_size", int64_t(20000));
  // Row 0: probabilities 0.1, 0.2, 0.7; row 1: only class 2.
  const double ninf = -std::numeric_limits<double>::infinity();
  Tensor logits =
      Tensor::fromVector<float>({std::log(0.1f), std::log(0.2f), std::log(0.7f),
                                 float(ninf), float(ninf), 0.0f},
                                {2, 3});
  Tensor s = run("multinomial", {logits}, a)[0];
  REQUIRE(s.dtype() == DType::I64);
  REQUIRE(s.shape() == Shape{2, 20000});
  std::vector<double> v = values(s);
  double counts[3] = {0, 0, 0};
  for (int i = 0; i < 20000; ++i) {
    REQUIRE((v[i] >= 0 && v[i] <= 2));
    counts[static_cast<int>(v[i])] += 1;
    REQUIRE(v[20000 + i] == 2);
  }
  CHECK(counts[0] / 20000 == Approx(0.1).margin(0.015));
  CHECK(counts[1] / 20000 == Approx(0.2).margin(0.015));
  CHECK(counts[2] / 20000 == Approx(0.7).margin(0.015));
  CHECK(values(run("multinomial", {logits}, a)[0]) == v);
}

TEST_CASE("unique: sorted and unsorted, flattened") {
  Tensor x = Tensor::fromVector<float>({2, 1, 1, 3, 4, 3}, {6});
  Attributes a;
  a.set("axis", int64_t(-1));
  a.set("sorted", int64_t(1));
  std::vector<Tensor> r = run("unique", {x}, a, 4);
  CHECK(values(r[0]) == std::vector<double>{1, 2, 3, 4});
  CHECK(values(r[1]) == std::vector<double>{1, 0, 3, 4});
  CHECK(values(r[2]) == std::vector<double>{1, 0, 0, 2, 3, 2});
  CHECK(values(r[3]) == std::vector<double>{2, 1, 2, 1});
  a.set("sorted", int64_t(0));
  r = run("unique", {x}, a, 4);
  CHECK(values(r[0]) == std::vector<double>{2, 1, 3, 4});
  CHECK(values(r[1]) == std::vector<double>{0, 1, 3, 4});
  CHECK(values(r[2]) == std::vector<double>{0, 1, 1, 2, 3, 2});
  CHECK(values(r[3]) == std::vector<double>{1, 2, 2, 1});
}

TEST_CASE("unique: slices along an axis, NaNs equal") {
  // Columns of [[1, 0, 1], [2, 5, 2]]: (1,2), (0,5), (1,2).
  Tensor x = Tensor::fromVector<int32_t>({1, 0, 1, 2, 5, 2}, {2, 3});
  Attributes a;
  a.set("axis", int64_t(1));
  a.set("sorted", int64_t(1));
  std::vector<Tensor> r = run("unique", {x}, a, 4);
  REQUIRE(r[0].shape() == Shape{2, 2});
  CHECK(values(r[0]) == std::vector<double>{0, 1, 5, 2});
  CHECK(values(r[2]) == std::vector<double>{1, 0, 1});
  CHECK(values(r[3]) == std::vector<double>{1, 2});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor n = Tensor::fromVector<float>({nan, 1, nan}, {3});
  a.set("axis", int64_t(-1));
  r = run("unique", {n}, a, 4);
  REQUIRE(r[0].numel() == 2);
  CHECK(values(r[3]) == std::vector<double>{1, 2});
}

TEST_CASE("roi_align and stft: untrusted values are errors") {
  Tensor x =
      Tensor::fromVector<float>(std::vector<float>(16, 1.0f), {1, 1, 4, 4});
  Tensor rois = Tensor::fromVector<float>({0, 0, 2, 2}, {1, 4});
  Attributes a;
  a.set("mode", std::string("avg"));
  a.set("output_height", int64_t(2));
  a.set("output_width", int64_t(2));
  a.set("sampling_ratio", int64_t(0));
  a.set("spatial_scale", 1.0);
  a.set("half_pixel", int64_t(0));
  Tensor ok = run("roi_align", {x, rois, shapeOf({0})}, a)[0];
  for (double e : values(ok))
    CHECK(e == Approx(1.0));
  CHECK(
      runError("roi_align", {x, rois, shapeOf({1})}, a).find("batch index 1") !=
      std::string::npos);
  Tensor huge = Tensor::fromVector<float>({0, 0, 1e30f, 1e30f}, {1, 4});
  CHECK(
      runError("roi_align", {x, huge, shapeOf({0})}, a).find("sampling grid") !=
      std::string::npos);
  Tensor sig =
      Tensor::fromVector<float>(std::vector<float>(8, 1.0f), {1, 8, 1});
  Tensor win = Tensor::fromVector<float>(std::vector<float>(4, 1.0f), {4});
  Attributes s;
  s.set("onesided", int64_t(1));
  CHECK(runError("stft", {sig, Tensor::scalar<int64_t>(0), win}, s)
            .find("frame_step") != std::string::npos);
  Tensor spec = run("stft", {sig, Tensor::scalar<int64_t>(2), win}, s)[0];
  REQUIRE(spec.shape() == Shape{1, 3, 3, 2});
  // A constant frame of ones: all its energy in bin 0.
  CHECK(spec.getDouble(0) == Approx(4.0));
  CHECK(spec.getDouble(2) == Approx(0.0).margin(1e-9));
}
