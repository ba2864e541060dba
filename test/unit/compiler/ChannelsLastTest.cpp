//===- ChannelsLastTest.cpp - kiln-channels-last computes the same values -===//
//
// This file implements the numeric test of passes/ChannelsLast.cpp: a
// ResNet-like block (convolutions with bias, ReLU, max pooling, a residual
// add, a global mean) runs through the reference executor before and after
// kiln-channels-last + kiln-layout-cleanup + cse, on random inputs, and the
// results agree. The rewritten graph runs its convolutions and its pooling
// with layout = "nhwc", which the reference kernels compute through their
// channels-first code (runtime/kernels/KernelUtils.h, runChannelsFirst), so
// this checks the pass's rewrites, not cuDNN (CudnnConvGpuTest.cpp does).
//
//===----------------------------------------------------------------------===//

#include "ReferenceRun.h"
#include "compiler/ProgramBuilder.h"
#include "ir/KilnDialect.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/TensorCompare.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <catch2/catch.hpp>

#include <random>

using namespace kiln;

namespace {

const char *kBlock = R"mlir(
func.func @main(%x: tensor<2x4x8x8xf32> {kiln.name = "x"},
                %w1: tensor<8x4x3x3xf32> {kiln.name = "w1"},
                %w2: tensor<8x8x1x1xf32> {kiln.name = "w2"},
                %w3: tensor<8x4x3x3xf32> {kiln.name = "w3"})
    -> (tensor<2x8xf32> {kiln.name = "y"}, tensor<2x8x4x4xf32> {kiln.name = "features"})
    attributes {kiln.graph} {
  %b4 = kiln.constant dense<[[[0.5]], [[-0.5]], [[0.25]], [[-0.25]], [[0.1]], [[-0.1]], [[0.0]], [[1.0]]]> : tensor<8x1x1xf32>
  %c1 = kiln.conv %x, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32>
  %b1 = kiln.add %c1, %b4 : (tensor<2x8x8x8xf32>, tensor<8x1x1xf32>) -> tensor<2x8x8x8xf32>
  %r1 = kiln.relu %b1 : (tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %p = kiln.max_pool %r1 {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x8x8xf32>) -> tensor<2x8x4x4xf32>
  %c2 = kiln.conv %p, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x4x4xf32>
  %c3 = kiln.conv %x, %w3 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x4x4xf32>
  %s = kiln.add %c2, %c3 : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %r2 = kiln.relu %s : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %axes = kiln.constant dense<[2, 3]> : tensor<2xi64>
  %m = kiln.reduce_mean %r2, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x8x4x4xf32>, tensor<2xi64>) -> tensor<2x8x1x1xf32>
  %flat = kiln.constant dense<[2, 8]> : tensor<2xi64>
  %y = kiln.reshape %m, %flat {allowzero = 0 : i64} : (tensor<2x8x1x1xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  return %y, %r2 : tensor<2x8xf32>, tensor<2x8x4x4xf32>
})mlir";


} // namespace

TEST_CASE("kiln-channels-last keeps a ResNet block's values", "[passes]") {
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kBlock, &ctx);
  REQUIRE(module);
  std::mt19937 rng(11);
  NamedTensors inputs = {{"x", test::randomTensor({2, 4, 8, 8}, rng)},
                         {"w1", test::randomTensor({8, 4, 3, 3}, rng)},
                         {"w2", test::randomTensor({8, 8, 1, 1}, rng)},
                         {"w3", test::randomTensor({8, 4, 3, 3}, rng)}};
  NamedTensors before = test::runOnReference(*module, inputs);

  mlir::PassManager pm(&ctx);
  mlir::OpPassManager &fn = pm.nest<mlir::func::FuncOp>();
  fn.addPass(createChannelsLastPass(/*includeF32=*/true));
  fn.addPass(createLayoutCleanupPass());
  fn.addPass(mlir::createCSEPass());
  REQUIRE(mlir::succeeded(pm.run(*module)));

  // Every convolution and the pooling run channels last; the only
  // transposes left are of the inputs (x twice is CSE'd to once, the 3x3
  // weights) and the one back for the `features` output.
  int channelsLast = 0, transposes = 0;
  module->walk([&](mlir::Operation *op) {
    if (op->hasAttr("layout"))
      ++channelsLast;
    if (op->getName().getStringRef() == "kiln.transpose")
      ++transposes;
  });
  CHECK(channelsLast == 4);
  CHECK(transposes == 4); // x, w1, w3, features

  NamedTensors after = test::runOnReference(*module, inputs);
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    INFO(before[i].first);
    CHECK(after[i].second.shape() == before[i].second.shape());
    Status s = compareTensors(after[i].second, before[i].second, {1e-5, 1e-5});
    INFO(s.message());
    CHECK(s.isOk());
  }
}
