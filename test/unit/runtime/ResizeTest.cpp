//===- ResizeTest.cpp - Tests of the resize reference kernel --------------===//
//
// This file implements the unit tests of kiln.resize on the CPU: cases from
// the ONNX backend node tests (test_resize_*) and a few extra dtypes and
// ranks computed by the ONNX reference evaluator, converted to .npy by
// gen_resize_cases.py, plus hand-written checks of integer inputs and of the
// errors on malformed operands and attributes.
//
//===----------------------------------------------------------------------===//

#include "OpCaseData.h"

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

Status runResize(const Tensor &x, const Tensor &scales, const Tensor &sizes,
                 const Attributes &attrs, Tensor &out) {
  std::vector<Tensor> outputs(1);
  Status s =
      Dispatcher::global().call("resize", {x, scales, sizes}, attrs, outputs);
  out = outputs[0];
  return s;
}

Tensor noScales() { return Tensor::fromVector<float>({}, {0}); }
Tensor noSizes() { return Tensor::fromVector<int64_t>({}, {0}); }

} // namespace

TEST_CASE("resize matches the ONNX node tests", "[runtime][resize]") {
  std::vector<std::string> names = testdata::caseNames("resize");
  REQUIRE(names.size() >= 20);
  for (const std::string &name : names) {
    INFO("case " << name);
    testdata::OpCase c = testdata::loadCase("resize", name, 3);
    REQUIRE(c.error == "");
    REQUIRE(c.expected.size() == 1);
    std::vector<Tensor> outputs(1);
    Status s = Dispatcher::global().call("resize", c.inputs, c.attrs, outputs);
    INFO(s.message());
    REQUIRE(s.isOk());
    double rtol = 1e-5, atol = 1e-5;
    if (c.expected[0].dtype() == DType::F16)
      rtol = 1e-2, atol = 1e-3;
    else if (!isFloatingPoint(c.expected[0].dtype()))
      rtol = 0, atol = 0;
    CHECK(testdata::compareTensors(outputs[0], c.expected[0], rtol, atol) ==
          "");
  }
}

TEST_CASE("resize nearest on integers", "[runtime][resize]") {
  Tensor x = Tensor::fromVector<int64_t>({1, 2, 3, 4}, {1, 2, 2});
  Attributes attrs;
  attrs.set("mode", std::string("nearest"));
  Tensor out;
  REQUIRE(runResize(x, Tensor::fromVector<float>({1, 2, 1.5f}, {3}), noSizes(),
                    attrs, out)
              .isOk());
  REQUIRE(out.dtype() == DType::I64);
  REQUIRE(out.shape() == Shape{1, 4, 3});
  // half_pixel, round_prefer_floor: rows 0 0 1 1; cols 0 (0.33->0), 1, 1.
  CHECK(out.toIntVector() ==
        std::vector<int64_t>{1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4});
}

TEST_CASE("resize keep_aspect_ratio_policy over all axes",
          "[runtime][resize]") {
  Tensor x = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  Attributes attrs;
  attrs.set("mode", std::string("nearest"));
  attrs.set("keep_aspect_ratio_policy", std::string("not_larger"));
  Tensor out;
  // Scales 0.5 and 0.75 -> 0.5 for both: [1, 2].
  REQUIRE(runResize(x, noScales(), Tensor::fromVector<int64_t>({1, 3}, {2}),
                    attrs, out)
              .isOk());
  CHECK(out.shape() == Shape{1, 2});
}

TEST_CASE("resize to an empty shape", "[runtime][resize]") {
  Tensor x = Tensor::fromVector<float>({1, 2, 3, 4}, {2, 2});
  Tensor out;
  REQUIRE(runResize(x, noScales(), Tensor::fromVector<int64_t>({0, 3}, {2}),
                    Attributes(), out)
              .isOk());
  CHECK(out.shape() == Shape{0, 3});
}

TEST_CASE("resize rejects malformed operands and attributes",
          "[runtime][resize]") {
  Tensor x = Tensor::fromVector<float>({1, 2, 3, 4}, {2, 2});
  Tensor scales = Tensor::fromVector<float>({2, 2}, {2});
  Tensor sizes = Tensor::fromVector<int64_t>({4, 4}, {2});
  Tensor out;
  Attributes none;

  Status both = runResize(x, scales, sizes, none, out);
  CHECK_FALSE(both.isOk());
  CHECK(both.message().find("exactly one") != std::string::npos);

  CHECK_FALSE(runResize(x, noScales(), noSizes(), none, out).isOk());
  Status rank = runResize(x, Tensor::fromVector<float>({2, 2, 2}, {3}),
                          noSizes(), none, out);
  CHECK_FALSE(rank.isOk());
  CHECK(rank.message().find("rank 2") != std::string::npos);
  CHECK_FALSE(runResize(x, Tensor::fromVector<float>({2, -1}, {2}), noSizes(),
                        none, out)
                  .isOk());
  CHECK_FALSE(runResize(x, noScales(),
                        Tensor::fromVector<int64_t>({2, -3}, {2}), none, out)
                  .isOk());

  Attributes badMode;
  badMode.set("mode", std::string("bilinear"));
  Status m = runResize(x, scales, noSizes(), badMode, out);
  CHECK_FALSE(m.isOk());
  CHECK(m.message().find("bilinear") != std::string::npos);

  Attributes nearestAA;
  nearestAA.set("antialias", int64_t(1));
  CHECK_FALSE(runResize(x, scales, noSizes(), nearestAA, out).isOk());

  Attributes badRoi;
  badRoi.set("roi", std::vector<double>{0, 1});
  CHECK_FALSE(runResize(x, scales, noSizes(), badRoi, out).isOk());

  std::vector<Tensor> outputs(1);
  CHECK_FALSE(
      Dispatcher::global().call("resize", {x, scales}, none, outputs).isOk());
}
