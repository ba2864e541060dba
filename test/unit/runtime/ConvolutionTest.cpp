//===- ConvolutionTest.cpp - Tests of the conv kernels --------------------===//
//
// This file implements the unit tests of the runtime's conv and
// conv_transpose kernels, called through the global dispatcher. Inputs are
// arange (as in the ONNX node tests test_basic_conv_* and test_convtranspose)
// or the "ramp" pattern ((i*7) % 13 - 6) * 0.5; expected values come from
// onnx.reference (Conv) and onnxruntime (ConvTranspose) on the same inputs.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

Tensor ramp(DType dt, const Shape &shape) {
  std::vector<double> v(numElements(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = (static_cast<double>(i * 7 % 13) - 6) * 0.5;
  return Tensor::fromVector<double>(v, shape).to(dt);
}

Tensor arange(const Shape &shape) {
  std::vector<float> v(numElements(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i);
  return Tensor::fromVector<float>(v, shape);
}

Tensor ones(const Shape &shape) {
  return Tensor::fromVector<float>(std::vector<float>(numElements(shape), 1.f),
                                   shape);
}

Attributes convAttrs(std::vector<int64_t> pads,
                     std::vector<int64_t> strides = {},
                     std::vector<int64_t> dilations = {}, int64_t group = 1) {
  Attributes a;
  a.set("pads", pads);
  a.set("strides", strides);
  a.set("dilations", dilations);
  a.set("group", group);
  return a;
}

Status runStatus(const std::string &op, const std::vector<Tensor> &inputs,
                 const Attributes &attrs, Tensor &out) {
  std::vector<Tensor> outputs(1);
  Status st = Dispatcher::global().call(op, inputs, attrs, outputs);
  out = outputs[0];
  return st;
}

Tensor run(const std::string &op, const std::vector<Tensor> &inputs,
           const Attributes &attrs) {
  Tensor out;
  Status st = runStatus(op, inputs, attrs, out);
  INFO(st.message());
  REQUIRE(st.isOk());
  REQUIRE(out.defined());
  return out;
}

void requireValues(const Tensor &t, DType dt, const Shape &shape,
                   const std::vector<double> &expected, double tol = 1e-4) {
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

TEST_CASE("conv 2-D with and without padding", "[runtime][conv]") {
  Tensor x = arange({1, 1, 5, 5}), w = ones({1, 1, 3, 3});
  requireValues(run("conv", {x, w}, convAttrs({1, 1, 1, 1})), DType::F32,
                {1, 1, 5, 5},
                {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                 117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84});
  requireValues(run("conv", {x, w}, convAttrs({0, 0, 0, 0})), DType::F32,
                {1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162});
  // Absent attributes default to stride 1, dilation 1, no padding, group 1.
  requireValues(run("conv", {x, w}, Attributes()), DType::F32, {1, 1, 3, 3},
                {54, 63, 72, 99, 108, 117, 144, 153, 162});
}

TEST_CASE("conv with strides and asymmetric padding", "[runtime][conv]") {
  Tensor x = arange({1, 1, 7, 5}), w = ones({1, 1, 3, 3});
  requireValues(run("conv", {x, w}, convAttrs({1, 0, 1, 0}, {2, 2})),
                DType::F32, {1, 1, 4, 2},
                {21, 33, 99, 117, 189, 207, 171, 183});
}

TEST_CASE("conv with groups and dilations", "[runtime][conv]") {
  Tensor y = run(
      "conv", {ramp(DType::F32, {1, 4, 5, 4}), ramp(DType::F32, {2, 2, 2, 2})},
      convAttrs({0, 1, 1, 0}, {1, 1}, {2, 1}, 2));
  requireValues(y, DType::F32, {1, 2, 4, 4},
                {-4.5,   14.5,  -9.25,  12.5, 0.5,    4,     -6.75,  15,
                 -4.25,  13,    -10.75, -2,   -2.25,  4.5,   3.75,   3,
                 9.25,   -11.5, 11,     -12,  -10.25, 10.25, -9.5,   9.75,
                 -10.25, 9.25,  5.75,   5.5,  -13.5,  7.25,  -14.25, 6.5});
  Tensor dw = run(
      "conv", {ramp(DType::F32, {1, 3, 3, 3}), ramp(DType::F32, {3, 1, 2, 2})},
      convAttrs({0, 0, 0, 0}, {}, {}, 3));
  requireValues(dw, DType::F32, {1, 3, 2, 2},
                {4.75, 3.75, 1.75, 0.75, -11.75, 11, 1.25, 1.25, 2.75, 3.75,
                 5.75, -12.75});
}

TEST_CASE("conv 1-D and 3-D", "[runtime][conv]") {
  std::vector<double> expected1d = {3.25,  2.5,  0.25, 0.25, 6.25, 8.5,
                                    3.75,  -3,   -6,   2.25, 8.5,  6.25,
                                    -2.25, 0.25, 2.5,  3,    5,    2};
  for (DType dt : {DType::F32, DType::F64}) {
    Tensor y = run("conv", {ramp(dt, {2, 2, 6}), ramp(dt, {3, 2, 3})},
                   convAttrs({1, 1}, {2}));
    requireValues(y, dt, {2, 3, 3}, expected1d);
  }
  Tensor y3 = run(
      "conv",
      {ramp(DType::F32, {1, 1, 3, 3, 3}), ramp(DType::F32, {2, 1, 2, 2, 2})},
      convAttrs({0, 0, 1, 1, 0, 0}));
  requireValues(y3, DType::F32, {1, 2, 3, 2, 3},
                {3.25, -7,    14.75, -6,    3,     2,     1.5,  -9.5,  12.25,
                 2,    7,     -7,    -0.25, -0.25, -1.25, 2.5,  -3.25, -10.75,
                 -12,  6.75,  -13,   4.25,  6,     5.75,  4.25, -15,   7.5,
                 -12,  -9.25, 6.75,  0.75,  2.75,  3.75,  6.5,  5.75,  -12.75});
}

TEST_CASE("conv on f16 and bf16 computes in f32", "[runtime][conv]") {
  for (DType dt : {DType::F16, DType::BF16}) {
    Tensor y = run("conv", {ramp(dt, {1, 3, 3, 3}), ramp(dt, {3, 1, 2, 2})},
                   convAttrs({0, 0, 0, 0}, {}, {}, 3));
    requireValues(y, dt, {1, 3, 2, 2},
                  {4.75, 3.75, 1.75, 0.75, -11.75, 11, 1.25, 1.25, 2.75, 3.75,
                   5.75, -12.75},
                  1e-2);
  }
}

TEST_CASE("conv rejects bad operands and attributes", "[runtime][conv]") {
  Tensor out;
  Tensor x = arange({1, 2, 5, 5});
  // Channel mismatch.
  CHECK_FALSE(
      runStatus("conv", {x, ones({1, 3, 3, 3})}, Attributes(), out).isOk());
  // Kernel larger than the padded input.
  Status st = runStatus("conv", {x, ones({1, 2, 7, 7})}, Attributes(), out);
  REQUIRE_FALSE(st.isOk());
  CHECK(st.message().find("larger") != std::string::npos);
  // Wrong attribute lengths and values.
  CHECK_FALSE(runStatus("conv", {x, ones({1, 2, 3, 3})}, convAttrs({1, 1}), out)
                  .isOk());
  CHECK_FALSE(runStatus("conv", {x, ones({1, 2, 3, 3})},
                        convAttrs({0, 0, 0, 0}, {0, 1}), out)
                  .isOk());
  CHECK_FALSE(runStatus("conv", {x, ones({1, 1, 3, 3})},
                        convAttrs({0, 0, 0, 0}, {}, {}, 2), out)
                  .isOk()); // 1 output channel, 2 groups.
  // Rank mismatch and integer dtype.
  CHECK_FALSE(
      runStatus("conv", {x, ones({1, 2, 3})}, Attributes(), out).isOk());
  CHECK_FALSE(runStatus("conv",
                        {x.to(DType::I32), ones({1, 2, 3, 3}).to(DType::I32)},
                        Attributes(), out)
                  .isOk());
}

TEST_CASE("conv_transpose basic (ONNX test_convtranspose)", "[runtime][conv]") {
  Tensor y = run("conv_transpose", {arange({1, 1, 3, 3}), ones({1, 2, 3, 3})},
                 Attributes());
  std::vector<double> plane = {0,  1,  3,  3,  2,  3,  8, 15, 12,
                               7,  9,  21, 36, 27, 15, 9, 20, 33,
                               24, 13, 6,  13, 21, 15, 8};
  std::vector<double> expected = plane;
  expected.insert(expected.end(), plane.begin(), plane.end());
  requireValues(y, DType::F32, {1, 2, 5, 5}, expected);
}

TEST_CASE("conv_transpose with strides, pads and output_padding",
          "[runtime][conv]") {
  Attributes a = convAttrs({1, 0, 0, 1}, {3, 2});
  a.set("output_padding", std::vector<int64_t>{1, 1});
  Tensor y =
      run("conv_transpose",
          {ramp(DType::F32, {1, 2, 2, 3}), ramp(DType::F32, {2, 1, 3, 2})}, a);
  requireValues(y, DType::F32, {1, 1, 6, 6},
                {9,    -6.75, -3.25, 5.5,   7.25,  -5,   6.75,  -9, -2,
                 6.75, 5.5,   -6.75, -6.75, 5.5,   6.75, -2,    -9, 6.75,
                 -5,   7.25,  5.5,   -3.25, -6.75, 9,    -3.25, 9,  4.25,
                 -4.5, -4.5,  11.25, 0,     0,     0,    0,     0,  0});
}

TEST_CASE("conv_transpose with groups, dilations, 1-D and 3-D",
          "[runtime][conv]") {
  Tensor y1 = run("conv_transpose",
                  {ramp(DType::F32, {1, 4, 3}), ramp(DType::F32, {4, 1, 2})},
                  convAttrs({0, 0}, {2}, {2}, 2));
  requireValues(y1, DType::F32, {1, 2, 7},
                {6.5, 0, 3, 0, 2, 0, 0.25, -0.75, 0, -0.5, 0, -0.5, 0, 4.5});
  Tensor y3 = run(
      "conv_transpose",
      {ramp(DType::F64, {1, 1, 2, 2, 2}), ramp(DType::F64, {1, 1, 2, 2, 2})},
      convAttrs({0, 0, 0, 0, 0, 0}, {2, 1, 1}));
  requireValues(y3, DType::F64, {1, 1, 4, 3, 3},
                {9, -3,   0.25, 15,  -8.5,  1,   6.25, -5,   1,
                 6, -5.5, 0.75, 9.5, -12.5, 2.5, 3.75, -6.5, 2,
                 6, -5.5, 0.75, 9.5, -12.5, 2.5, 3.75, -6.5, 2,
                 4, -6,   2.25, 6,   -12.5, 6,   2.25, -6,   4});
}

TEST_CASE("conv_transpose with a negative end pad grows the output",
          "[runtime][conv]") {
  // ONNX test_convtranspose_output_shape: output_shape [10, 8] with strides
  // [3, 2] resolves to pads [0, 0, -1, -1].
  Tensor y = run("conv_transpose", {arange({1, 1, 3, 3}), ones({1, 2, 3, 3})},
                 convAttrs({0, 0, -1, -1}, {3, 2}));
  REQUIRE(y.shape() == Shape{1, 2, 10, 8});
  std::vector<double> v = y.toDoubleVector();
  CHECK(v[0] == 0);     // x[0,0]
  CHECK(v[2] == 1);     // x[0,0] + x[0,1]
  CHECK(v[9 * 8] == 0); // last row only exists through the negative pad
}

TEST_CASE("conv_transpose rejects bad operands", "[runtime][conv]") {
  Tensor out;
  CHECK_FALSE(runStatus("conv_transpose",
                        {arange({1, 2, 3, 3}), ones({1, 2, 3, 3})},
                        Attributes(), out)
                  .isOk());
  CHECK_FALSE(runStatus("conv_transpose",
                        {arange({1, 1, 3, 3}), ones({1, 2, 3, 3})},
                        convAttrs({4, 4, 4, 4}), out)
                  .isOk());
}
