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
#include "ir/KilnDialect.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/TensorCompare.h"
#include "passes/TensorConversion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <set>

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
    // A sub-byte integer's byte is its value extended (the cast wraps it).
    if (isSubByteInteger(dtype))
      t = Tensor::fromVector<int64_t>({1, 8, 15, -9, 22, 29}, {2, 3}).to(dtype);
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
  CHECK(std::get<DType>(*toAttrValue(
            mlir::TypeAttr::get(b.getIntegerType(16, false)))) == DType::U16);
  CHECK_FALSE(toAttrValue(mlir::TypeAttr::get(b.getIntegerType(128))));
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

TEST_CASE("kiln.if, kiln.loop and kiln.eager become structural nodes",
          "[program]") {
  auto ctx = makeContext();
  const char *source = R"mlir(
    func.func @main(%c: tensor<i1> {kiln.name = "c"}, %n: tensor<i64> {kiln.name = "n"},
                    %x: tensor<2xf32> {kiln.name = "x"})
        -> (tensor<2xf32> {kiln.name = "a"}, tensor<2xf32> {kiln.name = "b"},
            tensor<?x2xf32> {kiln.name = "s"}, tensor<2xf32> {kiln.name = "e"})
        attributes {kiln.graph} {
      %0 = kiln.if %c : tensor<i1> -> (tensor<2xf32>) {
        %r = kiln.relu %x : (tensor<2xf32>) -> tensor<2xf32> loc(fused<"Relu">["r"("m.onnx":1:0)])
        kiln.yield %r : tensor<2xf32>
      } else {
        %k = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
        kiln.yield %k : tensor<2xf32>
      } loc(fused<"If">["if"("m.onnx":1:0)])
      %1:2 = kiln.loop %n, %c, %x : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
      ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %acc: tensor<2xf32>):
        %next = kiln.add %acc, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
        kiln.yield %ci, %next, %next : tensor<i1>, tensor<2xf32>, tensor<2xf32>
      } loc(fused<"Loop">["loop"("m.onnx":2:0)])
      %2 = kiln.eager "unsupported-op" ins(%x : tensor<2xf32>) attributes {detail = "kiln.det", hint = "none"} {
      ^bb0(%a: tensor<2xf32>):
        %d = kiln.neg %a : (tensor<2xf32>) -> tensor<2xf32>
        kiln.yield %d : tensor<2xf32>
      } -> (tensor<2xf32>)
      return %0, %1#0, %1#1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<?x2xf32>, tensor<2xf32>
    })mlir";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, ctx.get());
  REQUIRE(module);
  Expected<Program> program = buildProgram(findProgramFunction(*module));
  REQUIRE(program.isOk());
  REQUIRE(program->nodes.size() == 3);
  CHECK(program->constants.size() == 1); // the one inside the else branch

  const ProgramNode &ifNode = program->nodes[0];
  CHECK(ifNode.op == "if");
  CHECK(ifNode.sourceName == "if");
  CHECK(ifNode.operands == std::vector<int>{program->inputs[0].valueId});
  REQUIRE(ifNode.regions.size() == 2);
  CHECK(ifNode.regions[0].arguments.empty());
  REQUIRE(ifNode.regions[0].nodes.size() == 1);
  CHECK(ifNode.regions[0].nodes[0].op == "relu");
  // Values from above are referenced directly.
  CHECK(ifNode.regions[0].nodes[0].operands ==
        std::vector<int>{program->inputs[2].valueId});
  CHECK(ifNode.regions[0].results == ifNode.regions[0].nodes[0].results);
  CHECK(ifNode.regions[1].nodes.empty());
  REQUIRE(ifNode.regions[1].results.size() == 1);
  CHECK(program->constants.count(ifNode.regions[1].results[0]) == 1);
  REQUIRE(ifNode.results.size() == 1);

  const ProgramNode &loop = program->nodes[1];
  CHECK(loop.op == "loop");
  CHECK(loop.operands.size() == 3);
  CHECK(loop.attrs.getInts("scan_dtypes") ==
        std::vector<int64_t>{static_cast<int64_t>(DType::F32)});
  CHECK(loop.attrs.getInts("scan_shapes") == std::vector<int64_t>{1, 2});
  REQUIRE(loop.regions.size() == 1);
  const ProgramRegion &body = loop.regions[0];
  REQUIRE(body.arguments.size() == 3);
  REQUIRE(body.nodes.size() == 1);
  CHECK(body.nodes[0].op == "add");
  CHECK(body.nodes[0].operands ==
        std::vector<int>{body.arguments[2], ifNode.results[0]});
  CHECK(body.results == std::vector<int>{body.arguments[1],
                                         body.nodes[0].results[0],
                                         body.nodes[0].results[0]});
  REQUIRE(loop.results.size() == 2);

  const ProgramNode &eager = program->nodes[2];
  CHECK(eager.op == "eager");
  CHECK(eager.attrs.getString("reason") == "unsupported-op");
  CHECK(eager.attrs.getString("detail") == "kiln.det");
  CHECK(eager.attrs.getString("hint") == "none");
  REQUIRE(eager.regions.size() == 1);
  REQUIRE(eager.regions[0].arguments.size() == 1);
  CHECK(eager.regions[0].nodes[0].operands == eager.regions[0].arguments);

  // Every id is distinct and below numValues.
  std::set<int> ids;
  auto collect = [&](auto &self,
                     const std::vector<ProgramNode> &nodes) -> void {
    for (const ProgramNode &node : nodes) {
      for (int r : node.results)
        CHECK(ids.insert(r).second);
      for (const ProgramRegion &region : node.regions) {
        for (int a : region.arguments)
          CHECK(ids.insert(a).second);
        self(self, region.nodes);
      }
    }
  };
  collect(collect, program->nodes);
  for (int id : ids)
    CHECK(id < program->numValues);

  REQUIRE(program->outputs.size() == 4);
  CHECK(program->outputs[0].valueId == ifNode.results[0]);
  CHECK(program->outputs[2].valueId == loop.results[1]);
  CHECK(program->outputs[2].shape == Shape{-1, 2});
  CHECK(program->outputs[3].valueId == eager.results[0]);
}

TEST_CASE("func.call of a graph becomes a call node; the program function "
          "is found first",
          "[program]") {
  auto ctx = makeContext();
  const char *source = R"mlir(
    func.func @graph_1(%a: tensor<2xf32>) -> tensor<2xf32> attributes {kiln.graph} {
      %0 = kiln.relu %a : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }
    func.func @graph_0(%a: tensor<2xf32>) -> tensor<2xf32> attributes {kiln.graph} {
      %0 = kiln.neg %a : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }
    func.func @main(%x: tensor<2xf32> {kiln.name = "x"}) -> (tensor<2xf32> {kiln.name = "y"})
        attributes {kiln.program} {
      %0 = func.call @graph_0(%x) : (tensor<2xf32>) -> tensor<2xf32>
      %1 = func.call @graph_1(%0) : (tensor<2xf32>) -> tensor<2xf32>
      %2 = func.call @graph_0(%1) : (tensor<2xf32>) -> tensor<2xf32>
      return %2 : tensor<2xf32>
    })mlir";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, ctx.get());
  REQUIRE(module);
  mlir::func::FuncOp main = findProgramFunction(*module);
  REQUIRE(main);
  CHECK(main.getSymName() == "main");
  CHECK(findGraphFunction(*module).getSymName() == "graph_1");
  Expected<Program> program = buildProgram(main);
  REQUIRE(program.isOk());
  CHECK(program->graphs == std::vector<std::string>{"graph_0", "graph_1"});
  REQUIRE(program->nodes.size() == 3);
  for (const ProgramNode &node : program->nodes)
    CHECK(node.op == "call");
  CHECK(program->nodes[0].attrs.getInt("graph") == 0);
  CHECK(program->nodes[1].attrs.getInt("graph") == 1);
  CHECK(program->nodes[2].attrs.getInt("graph") == 0);
  CHECK(program->nodes[0].operands ==
        std::vector<int>{program->inputs[0].valueId});
  CHECK(program->nodes[1].operands == program->nodes[0].results);
  CHECK(program->outputs[0].valueId == program->nodes[2].results[0]);
}
