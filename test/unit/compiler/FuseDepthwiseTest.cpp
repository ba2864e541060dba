//===- FuseDepthwiseTest.cpp - kiln-cuda-fuse-depthwise keeps the values --===//
//
// This file implements the numeric test of targets/cuda/FuseDepthwise.cpp
// and of kiln.depthwise_conv's reference kernel: MobileNet's ReLU6 and
// EfficientNet's SiLU blocks around a depthwise convolution (channels first
// and last) run through the reference executor before and after
// kiln-cuda-fuse-depthwise agree, and the pass leaves one
// kiln.depthwise_conv and only the input SiLU's ops. The CUDA kernel of the op
// is checked emulated against this reference kernel (CudaOpKernelTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "ReferenceRun.h"
#include "ir/KilnDialect.h"
#include "kiln/runtime/TensorCompare.h"
#include "targets/cuda/CudaTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <random>

using namespace kiln;

namespace {

/// Runs `ir` before and after the pass on random inputs of `shapes` and
/// compares every output; `keptActivations` of its sigmoid, max and min ops
/// stay.
void checkFusion(const char *ir,
                 const std::vector<std::pair<std::string, Shape>> &shapes,
                 int keptActivations) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  REQUIRE(module);
  std::mt19937 rng(7);
  NamedTensors inputs;
  for (const auto &[name, shape] : shapes)
    inputs.push_back({name, test::randomTensor(shape, rng)});
  NamedTensors before = test::runOnReference(*module, inputs);

  mlir::PassManager pm(&ctx);
  pm.nest<mlir::func::FuncOp>().addPass(createFuseDepthwisePass());
  REQUIRE(mlir::succeeded(pm.run(*module)));
  int fused = 0, activations = 0;
  module->walk([&](mlir::Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    fused += name == "kiln.depthwise_conv";
    activations +=
        name == "kiln.sigmoid" || name == "kiln.max" || name == "kiln.min";
  });
  CHECK(fused == 1);
  CHECK(activations == keptActivations);

  NamedTensors after = test::runOnReference(*module, inputs);
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    Status s = compareTensors(after[i].second, before[i].second, {1e-5, 1e-6});
    INFO("output " << before[i].first << ": " << s.message());
    CHECK(s.isOk());
  }
}

} // namespace

TEST_CASE("kiln-cuda-fuse-depthwise keeps a ReLU6 block's values", "[passes]") {
  checkFusion(R"mlir(
func.func @main(%e: tensor<2x4x7x7xf32> {kiln.name = "e"},
                %w: tensor<4x1x3x3xf32> {kiln.name = "w"})
    -> (tensor<2x4x4x4xf32> {kiln.name = "y"}) attributes {kiln.graph} {
  %zero = kiln.constant dense<0.000000e+00> : tensor<f32>
  %six = kiln.constant dense<6.000000e+00> : tensor<f32>
  %scale = kiln.constant dense<4.000000e+00> : tensor<f32>
  %big = kiln.mul %e, %scale : (tensor<2x4x7x7xf32>, tensor<f32>) -> tensor<2x4x7x7xf32>
  %m = kiln.max %big, %zero : (tensor<2x4x7x7xf32>, tensor<f32>) -> tensor<2x4x7x7xf32>
  %a = kiln.min %m, %six : (tensor<2x4x7x7xf32>, tensor<f32>) -> tensor<2x4x7x7xf32>
  %d = kiln.conv %a, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x7x7xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32>
  %m2 = kiln.min %d, %six : (tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x4x4xf32>
  %y = kiln.max %m2, %zero : (tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x4x4xf32>
  return %y : tensor<2x4x4x4xf32>
})mlir",
              {{"e", {2, 4, 7, 7}}, {"w", {4, 1, 3, 3}}}, 0);
}

TEST_CASE("kiln-cuda-fuse-depthwise keeps a channels-last SiLU block's values",
          "[passes]") {
  checkFusion(R"mlir(
func.func @main(%e: tensor<1x6x6x8xf32> {kiln.name = "e"},
                %w: tensor<8x5x5x1xf32> {kiln.name = "w"})
    -> (tensor<1x6x6x8xf32> {kiln.name = "y"}, tensor<1x1x1x8xf32> {kiln.name = "p"})
    attributes {kiln.graph} {
  %s = kiln.sigmoid %e : (tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %a = kiln.mul %s, %e : (tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %d = kiln.conv %a, %w {dilations = array<i64: 1, 1>, group = 8 : i64, layout = "nhwc", pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x6x6x8xf32>, tensor<8x5x5x1xf32>) -> tensor<1x6x6x8xf32>
  %s2 = kiln.sigmoid %d : (tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %y = kiln.mul %d, %s2 : (tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  %axes = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %p = kiln.reduce_mean %y, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x6x6x8xf32>, tensor<2xi64>) -> tensor<1x1x1x8xf32>
  return %y, %p : tensor<1x6x6x8xf32>, tensor<1x1x1x8xf32>
})mlir",
              {{"e", {1, 6, 6, 8}}, {"w", {8, 5, 5, 1}}},
              /*keptActivations=*/1); // the input's SiLU
}
