//===- PoolingTest.cpp - Tests of the max_pool and avg_pool kernels -------===//
//
// This file implements the unit tests of the runtime's max_pool and avg_pool
// kernels, called through the global dispatcher. Inputs are the "ramp"
// pattern ((i*7) % 13 - 6) * 0.5 or small literal tensors from the ONNX node
// tests; expected values come from onnx.reference (MaxPool) and onnxruntime
// (AveragePool-19) on the same inputs.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace kiln;

namespace {

Tensor ramp(DType dt, const Shape &shape) {
  std::vector<double> v(numElements(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = (static_cast<double>(i * 7 % 13) - 6) * 0.5;
  return Tensor::fromVector<double>(v, shape).to(dt);
}

Attributes poolAttrs(std::vector<int64_t> kernel,
                     std::vector<int64_t> strides = {},
                     std::vector<int64_t> pads = {},
                     std::vector<int64_t> dilations = {}, int64_t ceil = 0) {
  Attributes a;
  a.set("kernel_shape", kernel);
  if (!strides.empty())
    a.set("strides", strides);
  if (!pads.empty())
    a.set("pads", pads);
  if (!dilations.empty())
    a.set("dilations", dilations);
  a.set("ceil_mode", ceil);
  return a;
}

Attributes withIncludePad(Attributes a, int64_t include) {
  a.set("count_include_pad", include);
  return a;
}

Status runStatus(const std::string &op, const Tensor &x,
                 const Attributes &attrs, Tensor &out) {
  std::vector<Tensor> outputs(1);
  Status st = Dispatcher::global().call(op, {x}, attrs, outputs);
  out = outputs[0];
  return st;
}

Tensor run(const std::string &op, const Tensor &x, const Attributes &attrs) {
  Tensor out;
  Status st = runStatus(op, x, attrs, out);
  INFO(st.message());
  REQUIRE(st.isOk());
  REQUIRE(out.defined());
  return out;
}

void requireValues(const Tensor &t, DType dt, const Shape &shape,
                   const std::vector<double> &expected, double tol = 1e-5) {
  REQUIRE(t.dtype() == dt);
  REQUIRE(t.shape() == shape);
  std::vector<double> got = t.toDoubleVector();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(expected[i]).margin(tol).epsilon(tol));
  }
}

} // namespace

TEST_CASE("max_pool 2-D default, strides, pads, dilations", "[runtime][pool]") {
  Tensor x = ramp(DType::F32, {1, 1, 5, 5});
  requireValues(run("max_pool", x, poolAttrs({2, 2})), DType::F32, {1, 1, 4, 4},
                {1.5, 2, 2, 2.5, 3, 3, 2, 2.5, 3, 3, 1.5, 1.5, 2, 2.5, 2.5, 3});
  requireValues(run("max_pool", x, poolAttrs({3, 3}, {2, 2}, {1, 1, 1, 1})),
                DType::F32, {1, 1, 3, 3}, {1.5, 2, 2.5, 3, 3, 2.5, 2, 2.5, 3});
  requireValues(run("max_pool", x, poolAttrs({2, 2}, {}, {}, {2, 2})),
                DType::F32, {1, 1, 3, 3}, {0, 3, 0.5, 2, 1.5, 2.5, 2.5, 3, 3});
}

TEST_CASE("max_pool ceil_mode", "[runtime][pool]") {
  requireValues(run("max_pool", ramp(DType::F32, {1, 1, 4, 4}),
                    poolAttrs({3, 3}, {2, 2}, {}, {}, 1)),
                DType::F32, {1, 1, 2, 2}, {2.5, 3, 2.5, 3});
  // ONNX test_maxpool_2d_ceil_output_size_reduce_by_one: the second window
  // would start past the input, so it is dropped.
  Tensor x = Tensor::fromVector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  requireValues(run("max_pool", x, poolAttrs({1, 1}, {2, 2}, {}, {}, 1)),
                DType::F32, {1, 1, 1, 1}, {1});
}

TEST_CASE("max_pool 1-D, 3-D and other dtypes", "[runtime][pool]") {
  requireValues(
      run("max_pool", ramp(DType::F32, {1, 2, 7}), poolAttrs({3}, {2}, {1, 0})),
      DType::F32, {1, 2, 3}, {0.5, 1, 1.5, 2, 2.5, 3});
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::BF16})
    requireValues(
        run("max_pool", ramp(dt, {1, 1, 3, 3, 3}), poolAttrs({2, 2, 2})), dt,
        {1, 1, 2, 2, 2}, {2.5, 3, 2, 2, 2.5, 3, 3, 2.5});
  Tensor u8 =
      Tensor::fromVector<uint8_t>({0, 7, 1, 8, 2, 9, 3, 10, 4}, {1, 1, 3, 3});
  requireValues(run("max_pool", u8, poolAttrs({2, 2})), DType::U8, {1, 1, 2, 2},
                {8, 9, 10, 10});
}

TEST_CASE("max_pool propagates NaN", "[runtime][pool]") {
  Tensor x = Tensor::fromVector<float>({1, NAN, 3, 4}, {1, 1, 4});
  Tensor y = run("max_pool", x, poolAttrs({2}, {2}));
  std::vector<double> v = y.toDoubleVector();
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == 4);
}

TEST_CASE("avg_pool count_include_pad", "[runtime][pool]") {
  Tensor x = ramp(DType::F32, {1, 1, 5, 5});
  Attributes a = poolAttrs({3, 3}, {2, 2}, {1, 1, 1, 1});
  requireValues(
      run("avg_pool", x, withIncludePad(a, 0)), DType::F32, {1, 1, 3, 3},
      {-0.625, -0.25, 0.125, 1.0 / 6, 0, -1.0 / 6, -0.125, 0.25, 0.625});
  requireValues(run("avg_pool", x, withIncludePad(a, 1)), DType::F32,
                {1, 1, 3, 3},
                {-2.5 / 9, -1.5 / 9, 0.5 / 9, 1.0 / 9, 0, -1.0 / 9, -0.5 / 9,
                 1.5 / 9, 2.5 / 9});
}

TEST_CASE("avg_pool ceil_mode clips windows to the padded input",
          "[runtime][pool]") {
  Tensor x = ramp(DType::F32, {1, 1, 4, 4});
  Attributes a = poolAttrs({3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 1);
  requireValues(run("avg_pool", x, withIncludePad(a, 1)), DType::F32,
                {1, 1, 3, 3},
                {-3.0 / 9, 1.0 / 9, 0.5, -2.0 / 9, 2.0 / 9, 2.5 / 6, -0.5,
                 -2.5 / 3, -0.625});
  requireValues(
      run("avg_pool", x, withIncludePad(a, 0)), DType::F32, {1, 1, 3, 3},
      {-0.75, 1.0 / 6, 1.5, -1.0 / 3, 2.0 / 9, 2.5 / 3, -1.5, -5.0 / 3, -2.5});
  // ONNX test_averagepool_2d_ceil_last_window_starts_on_pad (one channel).
  requireValues(
      run("avg_pool", ramp(DType::F32, {1, 1, 2, 2}),
          withIncludePad(poolAttrs({3, 3}, {3, 3}, {1, 1, 1, 1}, {}, 1), 1)),
      DType::F32, {1, 1, 1, 1}, {-4.0 / 9});
  // Stride 3: the ceil window [5, 8) counts only position 5 (inside the
  // input, no end padding); onnxruntime agrees.
  requireValues(run("avg_pool", ramp(DType::F32, {1, 1, 6}),
                    withIncludePad(poolAttrs({3}, {3}, {1, 0}, {}, 1), 1)),
                DType::F32, {1, 1, 3}, {-2.5 / 3, -3.5 / 3, 1.5});
}

TEST_CASE("avg_pool 3-D with dilations", "[runtime][pool]") {
  Attributes a = withIncludePad(
      poolAttrs({2, 2, 2}, {2, 2, 2}, {1, 1, 1, 1, 1, 1}, {2, 2, 2}, 1), 0);
  std::vector<double> expected = {-1,   -0.75, -0.5,  0,    0.25, 0.5,  1,
                                  1.25, 1.5,   -0.25, 0,    0.25, 0.75, 1,
                                  1.25, 1.75,  2,     2.25, 0.5,  0.75, 1,
                                  1.5,  1.75,  2,     2.5,  2.75, 3};
  requireValues(run("avg_pool", ramp(DType::F32, {1, 1, 4, 4, 4}), a),
                DType::F32, {1, 1, 3, 3, 3}, expected);
  requireValues(run("avg_pool", ramp(DType::F16, {1, 1, 4, 4, 4}), a),
                DType::F16, {1, 1, 3, 3, 3}, expected, 1e-2);
}

TEST_CASE("pooling rejects bad attributes", "[runtime][pool]") {
  Tensor x = ramp(DType::F32, {1, 1, 4, 4}), out;
  CHECK_FALSE(runStatus("max_pool", x, Attributes(), out).isOk());
  CHECK_FALSE(runStatus("max_pool", x, poolAttrs({2}), out).isOk());
  CHECK_FALSE(runStatus("avg_pool", x, poolAttrs({2, 2}, {0, 1}), out).isOk());
  CHECK_FALSE(
      runStatus("avg_pool", x, poolAttrs({2, 2}, {}, {1, 1}), out).isOk());
  CHECK_FALSE(
      runStatus("max_pool", ramp(DType::F32, {4, 4}), poolAttrs({2}), out)
          .isOk());
  CHECK_FALSE(
      runStatus("avg_pool", x.to(DType::I32), poolAttrs({2, 2}), out).isOk());
}
