//===- ReductionTest.cpp - Tests of the reduction kernels -----------------===//
//
// This file implements the unit tests of the reference reduction kernels
// (reduce_*, argmax/argmin, cumsum/cumprod, topk), called through the global
// Dispatcher as the executor calls them. Expected values are hand-computed or
// taken from NumPy / the ONNX backend node tests.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace kiln;

namespace {

/// Runs `op` and requires success; returns the `numResults` outputs.
std::vector<Tensor> runOk(const std::string &op,
                          const std::vector<Tensor> &inputs,
                          const Attributes &attrs, size_t numResults = 1) {
  std::vector<Tensor> outputs(numResults);
  Status s = Dispatcher::global().call(op, inputs, attrs, outputs);
  INFO(s.message());
  REQUIRE(s.isOk());
  return outputs;
}

/// Runs `op` and returns its error message ("" on success).
std::string runError(const std::string &op, const std::vector<Tensor> &inputs,
                     const Attributes &attrs, size_t numResults = 1) {
  std::vector<Tensor> outputs(numResults);
  Status s = Dispatcher::global().call(op, inputs, attrs, outputs);
  return s.isOk() ? "" : s.message();
}

Tensor axesOf(std::vector<int64_t> axes) {
  Shape shape{static_cast<int64_t>(axes.size())};
  return Tensor::fromVector<int64_t>(axes, shape);
}

Attributes reduceAttrs(int64_t keepdims, int64_t noop = 0) {
  Attributes a;
  a.set("keepdims", keepdims);
  a.set("noop_with_empty_axes", noop);
  return a;
}

void requireValues(const Tensor &t, const std::vector<double> &want,
                   double tol = 1e-5) {
  REQUIRE(t.numel() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    if (std::isinf(want[i]))
      CHECK(t.getDouble(i) == want[i]);
    else
      CHECK(t.getDouble(i) == Approx(want[i]).margin(tol));
  }
}

/// 0..n-1 as f32 with the given shape.
Tensor iotaF32(const Shape &shape) {
  std::vector<float> v(numElements(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i);
  return Tensor::fromVector<float>(v, shape);
}

} // namespace

TEST_CASE("reduce_sum over one axis, keepdims", "[runtime][reduction]") {
  Tensor x = iotaF32({2, 3, 2});
  auto out = runOk("reduce_sum", {x, axesOf({1})}, reduceAttrs(1));
  CHECK(out[0].shape() == Shape{2, 1, 2});
  requireValues(out[0], {6, 9, 24, 27});
  out = runOk("reduce_sum", {x, axesOf({-1})}, reduceAttrs(0));
  CHECK(out[0].shape() == Shape{2, 3});
  requireValues(out[0], {1, 5, 9, 13, 17, 21});
}

TEST_CASE("reduce over non-adjacent axes", "[runtime][reduction]") {
  Tensor x = iotaF32({2, 3, 2});
  auto out = runOk("reduce_sum", {x, axesOf({0, 2})}, reduceAttrs(0));
  CHECK(out[0].shape() == Shape{3});
  // Rows (0,1,6,7), (2,3,8,9), (4,5,10,11).
  requireValues(out[0], {14, 22, 30});
  out = runOk("reduce_max", {x, axesOf({2, 0})}, reduceAttrs(1));
  CHECK(out[0].shape() == Shape{1, 3, 1});
  requireValues(out[0], {7, 9, 11});
  out = runOk("reduce_mean", {x, axesOf({0, 2})}, reduceAttrs(0));
  requireValues(out[0], {3.5, 5.5, 7.5});
}

TEST_CASE("reduce with empty axes", "[runtime][reduction]") {
  Tensor x = iotaF32({2, 3});
  auto all = runOk("reduce_sum", {x, axesOf({})}, reduceAttrs(0));
  CHECK(all[0].rank() == 0);
  requireValues(all[0], {15});
  auto allKeep = runOk("reduce_prod", {x, axesOf({})}, reduceAttrs(1));
  CHECK(allKeep[0].shape() == Shape{1, 1});
  requireValues(allKeep[0], {0});
  auto noop = runOk("reduce_sum", {x, axesOf({})}, reduceAttrs(1, 1));
  CHECK(noop[0].shape() == Shape{2, 3});
  requireValues(noop[0], {0, 1, 2, 3, 4, 5});
}

TEST_CASE("reductions of an empty set give the identity",
          "[runtime][reduction]") {
  Tensor x = Tensor::empty(DType::F32, {2, 0, 4});
  auto sum = runOk("reduce_sum", {x, axesOf({1})}, reduceAttrs(1));
  CHECK(sum[0].shape() == Shape{2, 1, 4});
  requireValues(sum[0], std::vector<double>(8, 0.0));
  auto prod = runOk("reduce_prod", {x, axesOf({1})}, reduceAttrs(0));
  requireValues(prod[0], std::vector<double>(8, 1.0));
  double inf = std::numeric_limits<double>::infinity();
  auto mx = runOk("reduce_max", {x, axesOf({1})}, reduceAttrs(0));
  requireValues(mx[0], std::vector<double>(8, -inf));
  auto mn = runOk("reduce_min", {x, axesOf({1})}, reduceAttrs(0));
  requireValues(mn[0], std::vector<double>(8, inf));
  // A zero-sized kept dim gives an empty result.
  auto kept = runOk("reduce_sum", {x, axesOf({2})}, reduceAttrs(1));
  CHECK(kept[0].shape() == Shape{2, 0, 1});

  Tensor xi = Tensor::empty(DType::I32, {0, 3});
  auto imax = runOk("reduce_max", {xi, axesOf({0})}, reduceAttrs(0));
  CHECK(imax[0].getInt(0) == std::numeric_limits<int32_t>::lowest());
}

TEST_CASE("integer and bool reductions", "[runtime][reduction]") {
  Tensor x = Tensor::fromVector<int32_t>({1, -2, 3, 4, 5, -7}, {2, 3});
  auto sum = runOk("reduce_sum", {x, axesOf({1})}, reduceAttrs(0));
  CHECK(sum[0].dtype() == DType::I32);
  CHECK(sum[0].toIntVector() == std::vector<int64_t>{2, 2});
  auto mean = runOk("reduce_mean", {x, axesOf({0})}, reduceAttrs(0));
  CHECK(mean[0].toIntVector() == std::vector<int64_t>{2, 1, -2});
  auto prod = runOk("reduce_prod", {x, axesOf({1})}, reduceAttrs(0));
  CHECK(prod[0].toIntVector() == std::vector<int64_t>{-6, -140});

  Tensor b = Tensor::fromVector<bool>({true, false, false, false}, {2, 2});
  auto any = runOk("reduce_max", {b, axesOf({1})}, reduceAttrs(0));
  CHECK(any[0].dtype() == DType::Bool);
  CHECK(any[0].toIntVector() == std::vector<int64_t>{1, 0});
  auto all = runOk("reduce_min", {b, axesOf({1})}, reduceAttrs(0));
  CHECK(all[0].toIntVector() == std::vector<int64_t>{0, 0});
}

TEST_CASE("f16 sums accumulate wide", "[runtime][reduction]") {
  // 4096 ones: an f16 accumulator would stop at 2048.
  std::vector<Half> v(4096, Half(1.0f));
  Tensor x = Tensor::fromVector<Half>(v, {4096});
  auto out = runOk("reduce_sum", {x, axesOf({0})}, reduceAttrs(0));
  CHECK(out[0].dtype() == DType::F16);
  CHECK(out[0].getDouble(0) == 4096.0);
}

TEST_CASE("reduce_max propagates NaN", "[runtime][reduction]") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::fromVector<float>({1, nan, 3, 4}, {2, 2});
  auto out = runOk("reduce_max", {x, axesOf({1})}, reduceAttrs(0));
  CHECK(std::isnan(out[0].getDouble(0)));
  CHECK(out[0].getDouble(1) == 4.0);
}

TEST_CASE("reduce errors", "[runtime][reduction]") {
  Tensor x = iotaF32({2, 3});
  CHECK(runError("reduce_sum", {x, axesOf({2})}, reduceAttrs(1))
            .find("out of range") != std::string::npos);
  CHECK(runError("reduce_sum", {x, axesOf({1, -1})}, reduceAttrs(1))
            .find("twice") != std::string::npos);
  CHECK(runError("reduce_sum", {x, Tensor::fromVector<float>({0}, {1})},
                 reduceAttrs(1)) != "");
  std::vector<Tensor> none;
  CHECK(!Dispatcher::global()
             .call("reduce_sum", {x, axesOf({0})}, reduceAttrs(1), none)
             .isOk());
}

TEST_CASE("argmax and argmin", "[runtime][reduction]") {
  Tensor x = Tensor::fromVector<float>({2, 1, 3, 3, 1, 2}, {2, 3});
  Attributes a;
  a.set("axis", int64_t(1));
  a.set("keepdims", int64_t(1));
  a.set("select_last_index", int64_t(0));
  auto out = runOk("argmax", {x}, a);
  CHECK(out[0].dtype() == DType::I64);
  CHECK(out[0].shape() == Shape{2, 1});
  CHECK(out[0].toIntVector() == std::vector<int64_t>{2, 0});
  out = runOk("argmin", {x}, a);
  CHECK(out[0].toIntVector() == std::vector<int64_t>{1, 1});

  Tensor ties = Tensor::fromVector<int64_t>({5, 1, 5, 1, 1, 5}, {2, 3});
  a.set("axis", int64_t(0));
  a.set("keepdims", int64_t(0));
  a.set("select_last_index", int64_t(1));
  out = runOk("argmax", {ties}, a);
  CHECK(out[0].shape() == Shape{3});
  CHECK(out[0].toIntVector() == std::vector<int64_t>{0, 1, 1});
  out = runOk("argmin", {ties}, a);
  CHECK(out[0].toIntVector() == std::vector<int64_t>{1, 1, 1});
  a.set("select_last_index", int64_t(0));
  out = runOk("argmax", {ties}, a);
  CHECK(out[0].toIntVector() == std::vector<int64_t>{0, 0, 0});

  a.set("axis", int64_t(2));
  CHECK(runError("argmax", {ties}, a).find("out of range") !=
        std::string::npos);
  a.set("axis", int64_t(0));
  CHECK(runError("argmax", {Tensor::empty(DType::F32, {0, 2})}, a) != "");
}

TEST_CASE("argmax treats NaN as the maximum", "[runtime][reduction]") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::fromVector<float>({1, nan, 5, nan}, {4});
  Attributes a;
  a.set("axis", int64_t(0));
  a.set("keepdims", int64_t(0));
  CHECK(runOk("argmax", {x}, a)[0].getInt(0) == 1);
  CHECK(runOk("argmin", {x}, a)[0].getInt(0) == 1);
  a.set("select_last_index", int64_t(1));
  CHECK(runOk("argmax", {x}, a)[0].getInt(0) == 3);
}

TEST_CASE("cumsum and cumprod", "[runtime][reduction]") {
  Tensor x = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor axis1 = Tensor::scalar<int64_t>(1);
  Attributes a;
  auto out = runOk("cumsum", {x, axis1}, a);
  requireValues(out[0], {1, 3, 6, 4, 9, 15});
  a.set("exclusive", int64_t(1));
  out = runOk("cumsum", {x, axis1}, a);
  requireValues(out[0], {0, 1, 3, 0, 4, 9});
  a.set("reverse", int64_t(1));
  out = runOk("cumsum", {x, axis1}, a);
  requireValues(out[0], {5, 3, 0, 11, 6, 0});
  a.set("exclusive", int64_t(0));
  out = runOk("cumsum", {x, Tensor::fromVector<int64_t>({-2}, {1})}, a);
  requireValues(out[0], {5, 7, 9, 4, 5, 6});

  Attributes p;
  out = runOk("cumprod", {x, axis1}, p);
  requireValues(out[0], {1, 2, 6, 4, 20, 120});
  p.set("exclusive", int64_t(1));
  p.set("reverse", int64_t(1));
  out = runOk("cumprod", {x, axis1}, p);
  requireValues(out[0], {6, 3, 1, 30, 6, 1});

  Tensor xi = Tensor::fromVector<int32_t>({1, 2, 3}, {3});
  out = runOk("cumsum", {xi, Tensor::scalar<int64_t>(0)}, Attributes());
  CHECK(out[0].dtype() == DType::I32);
  CHECK(out[0].toIntVector() == std::vector<int64_t>{1, 3, 6});

  CHECK(runError("cumsum", {x, Tensor::scalar<int64_t>(2)}, Attributes())
            .find("out of range") != std::string::npos);
  CHECK(runError("cumsum", {x, axesOf({0, 1})}, Attributes()) != "");
}

TEST_CASE("topk", "[runtime][reduction]") {
  Tensor x =
      Tensor::fromVector<float>({0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8}, {3, 4});
  Attributes a;
  a.set("axis", int64_t(1));
  a.set("largest", int64_t(1));
  a.set("sorted", int64_t(1));
  auto out = runOk("topk", {x, axesOf({3})}, a, 2);
  CHECK(out[0].shape() == Shape{3, 3});
  requireValues(out[0], {3, 2, 1, 7, 6, 5, 11, 10, 9});
  CHECK(out[1].dtype() == DType::I64);
  CHECK(out[1].toIntVector() ==
        std::vector<int64_t>{3, 2, 1, 3, 2, 1, 0, 1, 2});

  a.set("largest", int64_t(0));
  a.set("axis", int64_t(0));
  out = runOk("topk", {x, axesOf({2})}, a, 2);
  CHECK(out[0].shape() == Shape{2, 4});
  requireValues(out[0], {0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(out[1].toIntVector() == std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1, 1});
}

TEST_CASE("topk ties keep the lower index first", "[runtime][reduction]") {
  Tensor x = Tensor::fromVector<int64_t>({1, 3, 3, 1, 3, 2}, {6});
  Attributes a;
  a.set("axis", int64_t(0));
  a.set("largest", int64_t(1));
  auto out = runOk("topk", {x, axesOf({4})}, a, 2);
  CHECK(out[0].toIntVector() == std::vector<int64_t>{3, 3, 3, 2});
  CHECK(out[1].toIntVector() == std::vector<int64_t>{1, 2, 4, 5});
  a.set("largest", int64_t(0));
  out = runOk("topk", {x, axesOf({3})}, a, 2);
  CHECK(out[0].toIntVector() == std::vector<int64_t>{1, 1, 2});
  CHECK(out[1].toIntVector() == std::vector<int64_t>{0, 3, 5});

  CHECK(runError("topk", {x, axesOf({7})}, a, 2).find("k = 7") !=
        std::string::npos);
  CHECK(runError("topk", {x, axesOf({2})}, a, 1) != "");
}

TEST_CASE("reductions read strided views", "[runtime][reduction]") {
  // The transpose of iota(2, 3) is [[0, 3], [1, 4], [2, 5]].
  Tensor x = iotaF32({2, 3}).permute({1, 0});
  auto out = runOk("reduce_sum", {x, axesOf({1})}, reduceAttrs(0));
  requireValues(out[0], {3, 5, 7});
  Attributes a;
  a.set("axis", int64_t(0));
  a.set("keepdims", int64_t(0));
  CHECK(runOk("argmax", {x}, a)[0].toIntVector() == std::vector<int64_t>{2, 2});
  out = runOk("cumsum", {x, Tensor::scalar<int64_t>(0)}, Attributes());
  requireValues(out[0], {0, 3, 1, 7, 3, 12});
}
