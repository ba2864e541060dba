//===- ConvTransposeAsMatmulTest.cpp - ConvTranspose as a GEMM keeps values
//===//
//
// This file implements the numeric test of
// targets/cuda/ConvTransposeAsMatmul.cpp: up-sampling transposed
// convolutions (stride = kernel) in 1, 2 and 3 spatial dims, with a bias and
// channels that differ in and out, run through the reference executor before
// and after kiln-cuda-conv-transpose-as-matmul agree, and the pass leaves a
// kiln.matmul instead of the kiln.conv_transpose; overlapping taps, padding
// and groups keep the op.
//
//===----------------------------------------------------------------------===//

#include "ReferenceRun.h"
#include "targets/cuda/CudaTarget.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

/// Checks that the pass keeps `ir`'s values on random inputs of `shapes`
/// and leaves `convTransposes` kiln.conv_transpose ops and `matmuls`
/// kiln.matmul ops.
void checkRewrite(const char *ir,
                  const std::vector<std::pair<std::string, Shape>> &shapes,
                  int convTransposes, int matmuls) {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = test::checkPassKeepsValues(
      ctx, ir, shapes, createConvTransposeAsMatmulPass(), 11);
  CHECK(test::countOps(*module, {"kiln.conv_transpose"}) == convTransposes);
  CHECK(test::countOps(*module, {"kiln.matmul"}) == matmuls);
}

} // namespace

TEST_CASE("kiln-cuda-conv-transpose-as-matmul keeps a 2x2 stride-2 "
          "up-sampling's values",
          "[passes]") {
  checkRewrite(R"mlir(
func.func @main(%x: tensor<2x3x3x5xf32> {kiln.name = "x"},
                %w: tensor<3x4x2x2xf32> {kiln.name = "w"},
                %b: tensor<4x1x1xf32> {kiln.name = "b"})
    -> (tensor<2x4x6x10xf32> {kiln.name = "y"}) attributes {kiln.graph} {
  %t = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x3x3x5xf32>, tensor<3x4x2x2xf32>) -> tensor<2x4x6x10xf32>
  %y = kiln.add %t, %b : (tensor<2x4x6x10xf32>, tensor<4x1x1xf32>) -> tensor<2x4x6x10xf32>
  return %y : tensor<2x4x6x10xf32>
})mlir",
               {{"x", {2, 3, 3, 5}}, {"w", {3, 4, 2, 2}}, {"b", {4, 1, 1}}}, 0,
               1);
}

TEST_CASE("kiln-cuda-conv-transpose-as-matmul keeps 1-D and 3-D "
          "up-samplings' values",
          "[passes]") {
  checkRewrite(R"mlir(
func.func @main(%x: tensor<1x2x7xf32> {kiln.name = "x"},
                %w: tensor<2x5x3xf32> {kiln.name = "w"})
    -> (tensor<1x5x21xf32> {kiln.name = "y"}) attributes {kiln.graph} {
  %y = kiln.conv_transpose %x, %w {dilations = array<i64: 1>, group = 1 : i64, output_padding = array<i64: 0>, pads = array<i64: 0, 0>, strides = array<i64: 3>} : (tensor<1x2x7xf32>, tensor<2x5x3xf32>) -> tensor<1x5x21xf32>
  return %y : tensor<1x5x21xf32>
})mlir",
               {{"x", {1, 2, 7}}, {"w", {2, 5, 3}}}, 0, 1);
  checkRewrite(R"mlir(
func.func @main(%x: tensor<2x3x2x3x2xf32> {kiln.name = "x"},
                %w: tensor<3x2x2x1x3xf32> {kiln.name = "w"})
    -> (tensor<2x2x4x3x6xf32> {kiln.name = "y"}) attributes {kiln.graph} {
  %y = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0, 0>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 2, 1, 3>} : (tensor<2x3x2x3x2xf32>, tensor<3x2x2x1x3xf32>) -> tensor<2x2x4x3x6xf32>
  return %y : tensor<2x2x4x3x6xf32>
})mlir",
               {{"x", {2, 3, 2, 3, 2}}, {"w", {3, 2, 2, 1, 3}}}, 0, 1);
}

TEST_CASE("kiln-cuda-conv-transpose-as-matmul keeps overlapping, padded and "
          "grouped ConvTransposes",
          "[passes]") {
  checkRewrite(R"mlir(
func.func @main(%x: tensor<1x4x5x5xf32> {kiln.name = "x"},
                %w: tensor<4x2x3x3xf32> {kiln.name = "w"},
                %w2: tensor<4x2x2x2xf32> {kiln.name = "w2"},
                %w3: tensor<4x1x2x2xf32> {kiln.name = "w3"})
    -> (tensor<1x2x11x11xf32> {kiln.name = "y"}, tensor<1x2x8x8xf32> {kiln.name = "p"},
        tensor<1x2x10x10xf32> {kiln.name = "g"}) attributes {kiln.graph} {
  %y = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x11x11xf32>
  %p = kiln.conv_transpose %x, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  %g = kiln.conv_transpose %x, %w3 {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x1x2x2xf32>) -> tensor<1x2x10x10xf32>
  return %y, %p, %g : tensor<1x2x11x11xf32>, tensor<1x2x8x8xf32>, tensor<1x2x10x10xf32>
})mlir",
               {{"x", {1, 4, 5, 5}},
                {"w", {4, 2, 3, 3}},
                {"w2", {4, 2, 2, 2}},
                {"w3", {4, 1, 2, 2}}},
               3, 0);
}
