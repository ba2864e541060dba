// RUN: kiln-opt %s -kiln-cpu-column-reduce-as-matmul -split-input-file | FileCheck %s

// A channels-last spatial mean (squeeze-excite, global average pooling) as
// kiln-split-reductions leaves it, a mean over W then over H: each becomes a
// matmul of a splat row of 1/R by the input viewed [outer, R, inner].
// CHECK-LABEL: func.func @spatial_mean(
// CHECK: %[[W:.*]] = kiln.constant dense<0.0178571437> : tensor<1x56xf32>
// CHECK: %[[X:.*]] = kiln.reshape %arg0, %{{.*}} : (tensor<2x56x56x32xf32>, tensor<3xi64>) -> tensor<112x56x32xf32>
// CHECK: %[[MM:.*]] = kiln.matmul %[[W]], %[[X]] : (tensor<1x56xf32>, tensor<112x56x32xf32>) -> tensor<112x1x32xf32>
// CHECK: %[[Y:.*]] = kiln.reshape %[[MM]], %{{.*}} -> tensor<2x56x1x32xf32>
// CHECK: %[[X2:.*]] = kiln.reshape %[[Y]], %{{.*}} -> tensor<2x56x32xf32>
// CHECK: kiln.matmul %{{.*}}, %[[X2]] : (tensor<1x56xf32>, tensor<2x56x32xf32>) -> tensor<2x1x32xf32>
// CHECK-NOT: kiln.reduce_mean
func.func @spatial_mean(%x: tensor<2x56x56x32xf32>) -> tensor<2x1x1x32xf32> {
  %w = kiln.constant dense<2> : tensor<1xi64>
  %0 = kiln.reduce_mean %x, %w {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x56x56x32xf32>, tensor<1xi64>) -> tensor<2x56x1x32xf32>
  %hw = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %1 = kiln.reduce_mean %0, %hw {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x56x1x32xf32>, tensor<2xi64>) -> tensor<2x1x1x32xf32>
  return %1 : tensor<2x1x1x32xf32>
}

// -----

// A sum over the leading dims (no keepdims) by a splat row of ones.
// CHECK-LABEL: func.func @column_sum(
// CHECK: %[[ONES:.*]] = kiln.constant dense<1.000000e+00> : tensor<1x12xf32>
// CHECK: kiln.matmul %[[ONES]], %{{.*}} : (tensor<1x12xf32>, tensor<1x12x16xf32>) -> tensor<1x1x16xf32>
// CHECK: -> tensor<16xf32>
func.func @column_sum(%x: tensor<3x4x16xf32>) -> tensor<16xf32> {
  %a = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %0 = kiln.reduce_sum %x, %a {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<3x4x16xf32>, tensor<2xi64>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// Left alone: a reduction over the innermost dim (a row reduction), fewer
// than 8 inner elements, axes that are not one block, f16, a max.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: kiln.matmul
// CHECK-COUNT-5: kiln.reduce_
// CHECK-NOT: kiln.matmul
func.func @kept(%x: tensor<4x8x16xf32>, %s: tensor<4x8x4xf32>, %h: tensor<4x8x16xf16>) -> (tensor<4x8x1xf32>, tensor<4x1x4xf32>, tensor<1x8x1xf32>, tensor<4x1x16xf16>, tensor<4x1x16xf32>) {
  %last = kiln.constant dense<2> : tensor<1xi64>
  %mid = kiln.constant dense<1> : tensor<1xi64>
  %ends = kiln.constant dense<[0, 2]> : tensor<2xi64>
  %0 = kiln.reduce_mean %x, %last {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x8x16xf32>, tensor<1xi64>) -> tensor<4x8x1xf32>
  %1 = kiln.reduce_mean %s, %mid {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x8x4xf32>, tensor<1xi64>) -> tensor<4x1x4xf32>
  %2 = kiln.reduce_sum %x, %ends {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x8x16xf32>, tensor<2xi64>) -> tensor<1x8x1xf32>
  %3 = kiln.reduce_mean %h, %mid {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x8x16xf16>, tensor<1xi64>) -> tensor<4x1x16xf16>
  %4 = kiln.reduce_max %x, %mid {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x8x16xf32>, tensor<1xi64>) -> tensor<4x1x16xf32>
  return %0, %1, %2, %3, %4 : tensor<4x8x1xf32>, tensor<4x1x4xf32>, tensor<1x8x1xf32>, tensor<4x1x16xf16>, tensor<4x1x16xf32>
}
