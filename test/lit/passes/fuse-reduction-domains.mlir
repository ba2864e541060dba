// kiln-fuse: a region has one reduction domain (same axes of operands of
// the same shape). A reduction over other axes starts a region of its own;
// a reduction alone is a region; reductions over the same domain that are
// connected share one region.

// RUN: kiln-opt %s -kiln-fuse -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @different_axes(
// CHECK-NEXT: %[[A:.*]] = kiln.fusion "k0_reduce_sum" ins(%arg0 : tensor<8x16xf32>) kind("reduction") {
// CHECK: kiln.reduce_sum {{.*}} -> tensor<8x1xf32>
// CHECK: kiln.sub
// CHECK: kiln.yield %{{.*}} : tensor<8x16xf32>
// CHECK: %[[B:.*]] = kiln.fusion "k1_reduce_sum" ins(%[[A]] : tensor<8x16xf32>) kind("reduction") {
// CHECK: kiln.reduce_sum {{.*}} -> tensor<1x16xf32>
// CHECK: kiln.yield %{{.*}} : tensor<1x16xf32>
// CHECK: return %[[B]]
func.func @different_axes(%x: tensor<8x16xf32>) -> tensor<1x16xf32> {
  %a1 = kiln.constant dense<1> : tensor<1xi64>
  %a0 = kiln.constant dense<0> : tensor<1xi64>
  %0 = kiln.reduce_sum %x, %a1 {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
  %1 = kiln.sub %x, %0 : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %2 = kiln.reduce_sum %1, %a0 {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<1x16xf32>
  return %2 : tensor<1x16xf32>
}

// -----

// Axes -1 and 1 of a rank-2 operand are the same domain.

// CHECK-LABEL: func.func @same_axes_spelled_differently(
// CHECK-NEXT: kiln.fusion "k0_reduce_max"
// CHECK-NOT: kiln.fusion
func.func @same_axes_spelled_differently(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %a1 = kiln.constant dense<1> : tensor<1xi64>
  %am = kiln.constant dense<-1> : tensor<1xi64>
  %0 = kiln.reduce_max %x, %a1 {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
  %1 = kiln.sub %x, %0 : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %2 = kiln.reduce_sum %1, %am {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
  %3 = kiln.div %1, %2 : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// A global reduction (empty axes) alone is a region; with non-constant
// axes it stays outside; a reduced value consumed at a larger shape does
// not join the region.

// CHECK-LABEL: func.func @standalone(
// CHECK-NEXT: %[[S:.*]] = kiln.fusion "k0_reduce_sum" ins(%arg0 : tensor<4x5xf32>) kind("reduction") {
// CHECK: kiln.constant dense<> : tensor<0xi64>
// CHECK: kiln.yield %{{.*}} : tensor<f32>
// CHECK: kiln.reduce_max %arg0, %arg1
// CHECK: kiln.fusion "k1_mul" ins(%arg2, %[[S]] : tensor<2x4x5xf32>, tensor<f32>) kind("pointwise")
func.func @standalone(%x: tensor<4x5xf32>, %axes: tensor<1xi64>, %z: tensor<2x4x5xf32>) -> (tensor<2x4x5xf32>, tensor<4x1xf32>) {
  %none = kiln.constant dense<> : tensor<0xi64>
  %0 = kiln.reduce_sum %x, %none {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x5xf32>, tensor<0xi64>) -> tensor<f32>
  %1 = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x5xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %2 = kiln.mul %z, %0 : (tensor<2x4x5xf32>, tensor<f32>) -> tensor<2x4x5xf32>
  return %2, %1 : tensor<2x4x5xf32>, tensor<4x1xf32>
}
