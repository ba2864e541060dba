//===- RecurrentTest.cpp - Tests of the lstm and gru reference kernels ----===//
//
// This file implements the unit tests of kiln.lstm and kiln.gru on the CPU:
// cases from the ONNX backend node tests (test_lstm_*, test_gru_*) and cases
// computed by onnxruntime for what those do not cover (bidirectional,
// reverse, sequence lengths including 0, clip, input_forget, peepholes,
// linear_before_reset, layout 1), converted to .npy by gen_resize_cases.py,
// plus checks of f64 / f16 inputs and of the errors on malformed operands.
//
//===----------------------------------------------------------------------===//

#include "OpCaseData.h"

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

void checkCases(const std::string &op, int numInputs, size_t numResults) {
  std::vector<std::string> names = testdata::caseNames(op);
  REQUIRE(names.size() >= 5);
  for (const std::string &name : names) {
    INFO("case " << name);
    testdata::OpCase c = testdata::loadCase(op, name, numInputs, numResults);
    REQUIRE(c.error == "");
    std::vector<Tensor> outputs(numResults);
    Status s = Dispatcher::global().call(op, c.inputs, c.attrs, outputs);
    INFO(s.message());
    REQUIRE(s.isOk());
    for (size_t k = 0; k < c.expected.size(); ++k) {
      if (!c.expected[k].defined())
        continue;
      INFO("result " << k);
      CHECK(testdata::compareTensors(outputs[k], c.expected[k], 1e-4, 1e-5) ==
            "");
    }
  }
}

/// Converts every float operand of a case to `dtype`.
std::vector<Tensor> castFloats(const std::vector<Tensor> &in, DType dtype) {
  std::vector<Tensor> out;
  for (const Tensor &t : in)
    out.push_back(isFloatingPoint(t.dtype()) ? t.to(dtype) : t);
  return out;
}

} // namespace

TEST_CASE("lstm matches the ONNX node tests and onnxruntime",
          "[runtime][recurrent]") {
  checkCases("lstm", 8, 3);
}

TEST_CASE("gru matches the ONNX node tests and onnxruntime",
          "[runtime][recurrent]") {
  checkCases("gru", 6, 2);
}

TEST_CASE("lstm and gru on f64 and f16", "[runtime][recurrent]") {
  for (auto [op, name, n] : {std::tuple<const char *, const char *, int>{
                                 "lstm", "lstm_bidirectional_seqlens_clip", 8},
                             {"gru", "gru_bidirectional_seqlens_lbr", 6}}) {
    INFO(op);
    testdata::OpCase c = testdata::loadCase(op, name, n, n == 8 ? 3 : 2);
    REQUIRE(c.error == "");
    for (DType dt : {DType::F64, DType::F16}) {
      std::vector<Tensor> outputs(c.expected.size());
      Status s = Dispatcher::global().call(op, castFloats(c.inputs, dt),
                                           c.attrs, outputs);
      INFO(s.message());
      REQUIRE(s.isOk());
      REQUIRE(outputs[0].dtype() == dt);
      double tol = dt == DType::F16 ? 1e-2 : 1e-5;
      CHECK(testdata::compareTensors(outputs[0].to(DType::F32), c.expected[0],
                                     tol, tol) == "");
    }
  }
}

TEST_CASE("lstm and gru reject malformed operands", "[runtime][recurrent]") {
  testdata::OpCase c = testdata::loadCase("lstm", "lstm_defaults", 8);
  REQUIRE(c.error == "");
  std::vector<Tensor> outputs(3);

  std::vector<Tensor> bad = c.inputs;
  bad[2] = Tensor::empty(DType::F32, {1, 5, 5});
  Status s = Dispatcher::global().call("lstm", bad, c.attrs, outputs);
  CHECK_FALSE(s.isOk());
  CHECK(s.message().find("operand 2") != std::string::npos);

  bad = c.inputs;
  bad[4] = Tensor::fromVector<int32_t>({1, 99, 1}, {3});
  s = Dispatcher::global().call("lstm", bad, c.attrs, outputs);
  CHECK_FALSE(s.isOk());
  CHECK(s.message().find("sequence_lens") != std::string::npos);

  bad = c.inputs;
  bad.pop_back();
  CHECK_FALSE(Dispatcher::global().call("lstm", bad, c.attrs, outputs).isOk());

  Attributes dir = c.attrs;
  dir.set("direction", std::string("sideways"));
  CHECK_FALSE(Dispatcher::global().call("lstm", c.inputs, dir, outputs).isOk());

  Attributes twoDir = c.attrs;
  twoDir.set("direction", std::string("bidirectional"));
  CHECK_FALSE(
      Dispatcher::global().call("lstm", c.inputs, twoDir, outputs).isOk());

  testdata::OpCase g = testdata::loadCase("gru", "gru_defaults", 6);
  REQUIRE(g.error == "");
  std::vector<Tensor> gout(2);
  std::vector<Tensor> gbad = g.inputs;
  gbad[5] = Tensor::empty(DType::F32, {1, 2, 5});
  s = Dispatcher::global().call("gru", gbad, g.attrs, gout);
  CHECK_FALSE(s.isOk());
  CHECK(s.message().find("initial_h") != std::string::npos);
}
