// RUN: kiln-opt %s -kiln-split-reductions -split-input-file | FileCheck %s

// A mean over everything (a loss): the innermost axis first, keeping the
// dims, then the original axes.
// CHECK-LABEL: func.func @loss
// CHECK: %[[P:.*]] = kiln.reduce_mean %arg0, %{{.*}} {keepdims = 1 : i64, {{.*}}} : (tensor<64x1024xf32>, tensor<1xi64>) -> tensor<64x1xf32>
// CHECK: kiln.reduce_mean %[[P]], %{{.*}} {keepdims = 0 : i64, {{.*}}} : (tensor<64x1xf32>, tensor<2xi64>) -> tensor<f32>
func.func @loss(%x: tensor<64x1024xf32>) -> tensor<f32> {
  %a = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %0 = kiln.reduce_mean %x, %a {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<64x1024xf32>, tensor<2xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A sum over the rows (a bias gradient): the rows as [128, 64], the 64
// first.
// CHECK-LABEL: func.func @bias_grad
// CHECK: %[[R:.*]] = kiln.reshape %arg0, %{{.*}} : (tensor<8192x64xf32>, tensor<3xi64>) -> tensor<128x64x64xf32>
// CHECK: %[[P:.*]] = kiln.reduce_sum %[[R]], %{{.*}} : (tensor<128x64x64xf32>, tensor<1xi64>) -> tensor<128x64xf32>
// CHECK: kiln.reduce_sum %[[P]], %{{.*}} : (tensor<128x64xf32>, tensor<1xi64>) -> tensor<64xf32>
func.func @bias_grad(%g: tensor<8192x64xf32>) -> tensor<64xf32> {
  %a = kiln.constant dense<0> : tensor<1xi64>
  %0 = kiln.reduce_sum %g, %a {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8192x64xf32>, tensor<1xi64>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// Many outputs (rows of a softmax) already give the kernel parallel work.
// CHECK-LABEL: func.func @rows
// CHECK-NOT: kiln.reshape
// CHECK: kiln.reduce_max %arg0
// CHECK-NOT: kiln.reduce_max
func.func @rows(%x: tensor<4096x512xf32>) -> tensor<4096xf32> {
  %a = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.reduce_max %x, %a {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4096x512xf32>, tensor<1xi64>) -> tensor<4096xf32>
  return %0 : tensor<4096xf32>
}

// -----

// Softmax rows of 8192 (8192 of them): a block per row fills the GPU, and
// the row stays one kernel.
// CHECK-LABEL: func.func @long_rows
// CHECK-NOT: kiln.reshape
// CHECK: kiln.reduce_max %arg0
// CHECK-NOT: kiln.reduce_max
func.func @long_rows(%x: tensor<8192x8192xf32>) -> tensor<8192x1xf32> {
  %a = kiln.constant dense<-1> : tensor<1xi64>
  %0 = kiln.reduce_max %x, %a {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8192x8192xf32>, tensor<1xi64>) -> tensor<8192x1xf32>
  return %0 : tensor<8192x1xf32>
}

// -----

// A channels-last global average pool (squeeze-excite's): 1152 strided
// outputs of 784 inputs each, W first, then both axes.
// CHECK-LABEL: func.func @pool_nhwc
// CHECK: %[[P:.*]] = kiln.reduce_mean %arg0, %{{.*}} {keepdims = 1 : i64, {{.*}}} : (tensor<8x28x28x144xbf16>, tensor<1xi64>) -> tensor<8x28x1x144xbf16>
// CHECK: kiln.reduce_mean %[[P]], %{{.*}} {keepdims = 1 : i64, {{.*}}} : (tensor<8x28x1x144xbf16>, tensor<2xi64>) -> tensor<8x1x1x144xbf16>
func.func @pool_nhwc(%x: tensor<8x28x28x144xbf16>) -> tensor<8x1x1x144xbf16> {
  %a = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %0 = kiln.reduce_mean %x, %a {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x28x28x144xbf16>, tensor<2xi64>) -> tensor<8x1x1x144xbf16>
  return %0 : tensor<8x1x1x144xbf16>
}

// -----

// A few hundred strided inputs per output are left alone.
// CHECK-LABEL: func.func @pool_small
// CHECK: kiln.reduce_mean %arg0
// CHECK-NOT: kiln.reduce_mean
func.func @pool_small(%x: tensor<8x14x14x480xbf16>) -> tensor<8x1x1x480xbf16> {
  %a = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %0 = kiln.reduce_mean %x, %a {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x14x14x480xbf16>, tensor<2xi64>) -> tensor<8x1x1x480xbf16>
  return %0 : tensor<8x1x1x480xbf16>
}
