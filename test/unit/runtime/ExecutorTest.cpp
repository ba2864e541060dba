//===- ExecutorTest.cpp - Tests of the reference executor -----------------===//
//
// This file implements the unit tests of runProgram: a small program run end
// to end (inputs, a weight, a constant, several nodes), the input and weight
// validation messages, kernel errors wrapped with the node's source, and
// malformed programs reported as errors.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Executor.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

ValueSignature sig(const std::string &name, DType dtype, Shape shape,
                   int valueId, std::vector<std::string> dimNames = {}) {
  ValueSignature s;
  s.name = name;
  s.dtype = dtype;
  s.shape = std::move(shape);
  s.dimNames = std::move(dimNames);
  s.valueId = valueId;
  return s;
}

ProgramNode node(const std::string &op, std::vector<int> operands,
                 std::vector<int> results, const std::string &name) {
  ProgramNode n;
  n.op = op;
  n.operands = std::move(operands);
  n.results = std::move(results);
  n.sourceName = name;
  n.sourceOp = "Op";
  return n;
}

/// y = relu(x * w + c), z = (y > 0); x: f32[batch, 3], w: f32[3], c = 1.
Program smallProgram() {
  Program p;
  p.numValues = 7;
  p.inputs = {sig("x", DType::F32, {-1, 3}, 0, {"batch", ""})};
  p.weights = {sig("w", DType::F32, {3}, 1)};
  p.constants[2] = Tensor::scalar<float>(1.0f);
  p.nodes.push_back(node("mul", {0, 1}, {3}, "/mul"));
  p.nodes.push_back(node("add", {3, 2}, {4}, "/add"));
  p.nodes.push_back(node("relu", {4}, {5}, "/relu"));
  p.nodes.push_back(node("greater", {5, 2}, {6}, "/gt"));
  p.outputs = {sig("y", DType::F32, {-1, 3}, 5, {"batch", ""}),
               sig("z", DType::Bool, {-1, 3}, 6, {"batch", ""})};
  return p;
}

NamedTensors weights() {
  return {{"w", Tensor::fromVector<float>({1, -1, 2}, {3})}};
}

} // namespace

TEST_CASE("runProgram runs a small program", "[executor]") {
  Program p = smallProgram();
  Tensor x = Tensor::fromVector<float>({1, 2, 3, -4, 5, 0.25}, {2, 3});
  auto out = runProgram(p, {{"x", x}}, weights());
  INFO((out ? std::string() : out.status().message()));
  REQUIRE(out.isOk());
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].first == "y");
  CHECK((*out)[0].second.toDoubleVector() ==
        std::vector<double>{2, 0, 7, 0, 0, 1.5});
  CHECK((*out)[1].first == "z");
  CHECK((*out)[1].second.toIntVector() ==
        std::vector<int64_t>{1, 0, 1, 0, 0, 1});
  // A different batch size is fine: the dimension is dynamic.
  auto out3 =
      runProgram(p, {{"x", Tensor::empty(DType::F32, {5, 3})}}, weights());
  REQUIRE(out3.isOk());
  CHECK((*out3)[0].second.shape() == Shape{5, 3});
}

TEST_CASE("runProgram validates inputs", "[executor]") {
  Program p = smallProgram();
  auto wrongDim =
      runProgram(p, {{"x", Tensor::empty(DType::F32, {2, 4})}}, weights());
  REQUIRE(!wrongDim);
  CHECK(wrongDim.status().message() ==
        "input 'x': expected f32[batch, 3] but got f32[2, 4]");
  auto wrongType =
      runProgram(p, {{"x", Tensor::empty(DType::F64, {2, 3})}}, weights());
  REQUIRE(!wrongType);
  CHECK_THAT(wrongType.status().message(),
             Catch::Contains("expected f32[batch, 3] but got f64[2, 3]"));
  auto wrongRank =
      runProgram(p, {{"x", Tensor::empty(DType::F32, {3})}}, weights());
  REQUIRE(!wrongRank);
  CHECK_THAT(wrongRank.status().message(), Catch::Contains("got f32[3]"));
  auto missing = runProgram(p, {}, weights());
  REQUIRE(!missing);
  CHECK_THAT(missing.status().message(), Catch::Contains("missing input 'x'"));
  auto unknown = runProgram(p,
                            {{"x", Tensor::empty(DType::F32, {2, 3})},
                             {"extra", Tensor::scalar<float>(0)}},
                            weights());
  REQUIRE(!unknown);
  CHECK_THAT(unknown.status().message(),
             Catch::Contains("unknown input 'extra'") &&
                 Catch::Contains("'x'"));
  auto noWeight = runProgram(p, {{"x", Tensor::empty(DType::F32, {2, 3})}});
  REQUIRE(!noWeight);
  CHECK_THAT(noWeight.status().message(),
             Catch::Contains("missing weight 'w'"));
}

TEST_CASE("named dynamic dimensions must agree", "[executor]") {
  Program p;
  p.numValues = 3;
  p.inputs = {sig("a", DType::F32, {-1}, 0, {"n"}),
              sig("b", DType::F32, {-1}, 1, {"n"})};
  p.nodes.push_back(node("add", {0, 1}, {2}, "/add"));
  p.outputs = {sig("c", DType::F32, {-1}, 2, {"n"})};
  auto ok = runProgram(p, {{"a", Tensor::empty(DType::F32, {4})},
                           {"b", Tensor::empty(DType::F32, {4})}});
  REQUIRE(ok.isOk());
  auto bad = runProgram(p, {{"a", Tensor::empty(DType::F32, {4})},
                            {"b", Tensor::empty(DType::F32, {5})}});
  REQUIRE(!bad);
  CHECK_THAT(bad.status().message(),
             Catch::Contains("'n'") && Catch::Contains("input 'b'"));
}

TEST_CASE("kernel errors name the node", "[executor]") {
  Program p;
  p.numValues = 3;
  p.inputs = {sig("a", DType::F32, {3}, 0), sig("b", DType::F32, {2}, 1)};
  p.nodes.push_back(node("add", {0, 1}, {2}, "/layer1/add"));
  p.nodes.back().sourceOp = "Add";
  p.outputs = {sig("c", DType::F32, {-1}, 2)};
  auto r = runProgram(p, {{"a", Tensor::empty(DType::F32, {3})},
                          {"b", Tensor::empty(DType::F32, {2})}});
  REQUIRE(!r);
  CHECK_THAT(r.status().message(),
             Catch::StartsWith("node '/layer1/add' (Add, kiln.add): "));
}

TEST_CASE("malformed programs are errors", "[executor]") {
  Program p;
  p.numValues = 3;
  p.inputs = {sig("a", DType::F32, {1}, 0)};
  p.nodes.push_back(node("neg", {1}, {2}, "/neg")); // %1 never defined.
  p.outputs = {sig("c", DType::F32, {1}, 2)};
  auto r = runProgram(p, {{"a", Tensor::empty(DType::F32, {1})}});
  REQUIRE(!r);
  CHECK_THAT(r.status().message(), Catch::Contains("before it is defined"));

  p.nodes[0].operands = {7}; // Out of range.
  r = runProgram(p, {{"a", Tensor::empty(DType::F32, {1})}});
  REQUIRE(!r);
  CHECK_THAT(r.status().message(), Catch::Contains("value id 7"));

  p.nodes.clear(); // The output is never produced.
  r = runProgram(p, {{"a", Tensor::empty(DType::F32, {1})}});
  REQUIRE(!r);
  CHECK_THAT(r.status().message(), Catch::Contains("output 'c'"));
}

TEST_CASE("an input may also be an output", "[executor]") {
  Program p;
  p.numValues = 3;
  p.inputs = {sig("a", DType::F32, {2}, 0)};
  p.nodes.push_back(node("neg", {0}, {1}, "/n1"));
  p.nodes.push_back(node("neg", {1}, {2}, "/n2"));
  p.outputs = {sig("a_out", DType::F32, {2}, 0), sig("b", DType::F32, {2}, 2)};
  Tensor a = Tensor::fromVector<float>({1, 2}, {2});
  auto r = runProgram(p, {{"a", a}});
  REQUIRE(r.isOk());
  CHECK((*r)[0].second.toDoubleVector() == std::vector<double>{1, 2});
  CHECK((*r)[1].second.toDoubleVector() == std::vector<double>{1, 2});
  CHECK((*r)[0].second.storage() == a.storage()); // Passed through as is.
}
