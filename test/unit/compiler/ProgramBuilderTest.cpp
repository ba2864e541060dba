//===- ProgramBuilderTest.cpp - Tests of the MLIR <-> runtime bridge ------===//
//
// This file implements the Catch2 tests of compiler/TensorConversion and
// compiler/ProgramBuilder: tensors of every dtype survive the round trip
// through an ElementsAttr bit for bit, op attributes convert by kind, and a
// kiln function parsed from text becomes a Program that the reference
// executor runs with the expected result.
//
//===----------------------------------------------------------------------===//

#include "compiler/ProgramBuilder.h"
#include "passes/TensorConversion.h"
#include "ir/KilnDialect.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/TensorCompare.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace kiln;

namespace {

/// A context with the dialects of traced modules.
std::unique_ptr<mlir::MLIRContext> makeContext() {
  auto ctx = std::make_unique<mlir::MLIRContext>();
  ctx->loadDialect<KilnDialect, mlir::func::FuncDialect>();
  return ctx;
}

} // namespace

TEST_CASE("tensors round-trip through ElementsAttr for every dtype",
          "[conversion]") {
  auto ctx = makeContext();
  for (DType dtype : kAllTypes) {
    Tensor t = Tensor::empty(dtype, {2, 3});
    auto *bytes = static_cast<unsigned char *>(t.rawData());
    for (size_t i = 0; i < t.nbytes(); ++i)
      bytes[i] = dtype == DType::Bool ? (i % 2)
                                      : static_cast<unsigned char>(i * 7 + 1);
    mlir::DenseElementsAttr attr = toElementsAttr(ctx.get(), t);
    REQUIRE(fromMlirElementType(attr.getType().getElementType()) == dtype);
    std::optional<Tensor> back = toTensor(attr);
    REQUIRE(back);
    CHECK(back->dtype() == dtype);
    CHECK(back->shape() == t.shape());
    CHECK(std::memcmp(back->rawData(), t.rawData(), t.nbytes()) == 0);
  }
}

TEST_CASE("splat constants expand to full tensors", "[conversion]") {
  auto ctx = makeContext();
  auto type =
      mlir::RankedTensorType::get({3}, mlir::Float32Type::get(ctx.get()));
  auto splat = mlir::DenseElementsAttr::get(type, 2.5f);
  std::optional<Tensor> t = toTensor(splat);
  REQUIRE(t);
  CHECK(t->toDoubleVector() == std::vector<double>{2.5, 2.5, 2.5});
}

TEST_CASE("op attributes convert by kind", "[conversion]") {
  auto ctx = makeContext();
  mlir::Builder b(ctx.get());
  CHECK(std::get<int64_t>(*toAttrValue(b.getI64IntegerAttr(-3))) == -3);
  CHECK(std::get<int64_t>(*toAttrValue(b.getBoolAttr(true))) == 1);
  CHECK(std::get<double>(*toAttrValue(b.getF32FloatAttr(0.5f))) == 0.5);
  CHECK(std::get<std::string>(*toAttrValue(b.getStringAttr("tanh"))) == "tanh");
  CHECK(std::get<std::vector<int64_t>>(*toAttrValue(
            b.getDenseI64ArrayAttr({1, 0}))) == std::vector<int64_t>{1, 0});
  CHECK(std::get<std::vector<double>>(*toAttrValue(
            b.getDenseF32ArrayAttr({0.25f}))) == std::vector<double>{0.25});
  CHECK(std::get<DType>(*toAttrValue(mlir::TypeAttr::get(b.getBF16Type()))) ==
        DType::BF16);
  CHECK(std::get<DType>(*toAttrValue(
            mlir::TypeAttr::get(b.getIntegerType(8, false)))) == DType::U8);
  CHECK_FALSE(toAttrValue(mlir::TypeAttr::get(b.getIntegerType(16))));
}

TEST_CASE("a kiln function becomes a runnable Program", "[program]") {
  auto ctx = makeContext();
  const char *source = R"mlir(
    func.func @main(%x: tensor<?x3xf32> {kiln.name = "x", kiln.dim_names = ["batch", ""]},
                    %w: tensor<3xf32> {kiln.name = "w", kiln.weight})
        -> (tensor<?x3xf32> {kiln.name = "y"}) attributes {kiln.graph} {
      %c = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %0 = kiln.mul %x, %w : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32> loc(fused<"Mul">["scale"("m.onnx":1:0)])
      %1 = kiln.add %0, %c : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      %2 = kiln.softmax %1 {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
      return %2 : tensor<?x3xf32>
    })mlir";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, ctx.get());
  REQUIRE(module);
  mlir::func::FuncOp graph = findGraphFunction(*module);
  REQUIRE(graph);
  Expected<Program> program = buildProgram(graph);
  REQUIRE(program.isOk());
  REQUIRE(program->inputs.size() == 1);
  CHECK(program->inputs[0].name == "x");
  CHECK(program->inputs[0].shape == Shape{-1, 3});
  CHECK(program->inputs[0].dimNames == std::vector<std::string>{"batch", ""});
  REQUIRE(program->weights.size() == 1);
  CHECK(program->weights[0].name == "w");
  CHECK(program->constants.size() == 1);
  REQUIRE(program->nodes.size() == 3);
  CHECK(program->nodes[0].op == "mul");
  CHECK(program->nodes[0].sourceName == "scale");
  CHECK(program->nodes[0].sourceOp == "Mul");
  CHECK(program->nodes[2].attrs.getInt("axis") == 1);

  Tensor x = Tensor::fromVector<float>({0, 0, 0, 1, 1, 1}, {2, 3});
  Tensor w = Tensor::fromVector<float>({1, 1, 1}, {3});
  Expected<NamedTensors> out = runProgram(*program, {{"x", x}}, {{"w", w}});
  REQUIRE(out.isOk());
  // softmax([1, 2, 3]) and softmax([2, 3, 4]) are equal.
  Tensor expected =
      Tensor::fromVector<float>({0.09003057f, 0.24472847f, 0.66524096f,
                                 0.09003057f, 0.24472847f, 0.66524096f},
                                {2, 3});
  CHECK(compareTensors((*out)[0].second, expected, {1e-5, 1e-6}).isOk());

  // A missing weight is an error naming it.
  Expected<NamedTensors> missing = runProgram(*program, {{"x", x}});
  REQUIRE_FALSE(missing.isOk());
  CHECK(missing.status().message().find("'w'") != std::string::npos);
}

TEST_CASE("non-kiln ops are reported, not run", "[program]") {
  auto ctx = makeContext();
  ctx->allowUnregisteredDialects();
  const char *source = R"mlir(
    func.func @main(%x: tensor<2xf32> {kiln.name = "x"}) -> tensor<2xf32> attributes {kiln.graph} {
      %0 = "other.op"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, ctx.get());
  REQUIRE(module);
  Expected<Program> program = buildProgram(findGraphFunction(*module));
  REQUIRE_FALSE(program.isOk());
  CHECK(program.status().message().find("other.op") != std::string::npos);
}
