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
#include "targets/cuda/CudaTarget.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

/// Checks that the pass keeps `ir`'s values on random inputs of `shapes`
/// and leaves one kiln.depthwise_conv and `keptActivations` of its sigmoid,
/// max and min ops.
void checkFusion(const char *ir,
                 const std::vector<std::pair<std::string, Shape>> &shapes,
                 int keptActivations) {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      test::checkPassKeepsValues(ctx, ir, shapes, createFuseDepthwisePass(), 7);
  CHECK(test::countOps(*module, {"kiln.depthwise_conv"}) == 1);
  CHECK(test::countOps(*module, {"kiln.sigmoid", "kiln.max", "kiln.min"}) ==
        keptActivations);
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
