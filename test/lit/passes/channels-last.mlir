// RUN: kiln-opt %s -kiln-channels-last=include-f32 -kiln-layout-cleanup -cse -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-channels-last -split-input-file | FileCheck %s --check-prefix=DEFAULT

// Without include-f32 (the CUDA target's default) only f16 and bf16
// convolutions run channels last: cuDNN's f32 FMA kernels are slower in NHWC.
// DEFAULT-LABEL: func.func @dtypes
// DEFAULT: kiln.conv %arg0, %arg1 {dilations
// DEFAULT-NOT: layout
// DEFAULT-SAME: -> tensor<1x2x6x6xf32>
// DEFAULT: kiln.conv {{.*}}layout = "nhwc"{{.*}} -> tensor<1x6x6x2xbf16>
// DEFAULT: kiln.conv {{.*}}layout = "nhwc"{{.*}} -> tensor<1x6x6x2xf16>
func.func @dtypes(%x: tensor<1x4x8x8xf32>, %w: tensor<2x4x3x3xf32>, %xb: tensor<1x4x8x8xbf16>, %wb: tensor<2x4x3x3xbf16>, %xh: tensor<1x4x8x8xf16>, %wh: tensor<2x4x3x3xf16>) -> (tensor<1x2x6x6xf32>, tensor<1x2x6x6xbf16>, tensor<1x2x6x6xf16>) {
  %a = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x6x6xf32>
  %b = kiln.conv %xb, %wb {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xbf16>, tensor<2x4x3x3xbf16>) -> tensor<1x2x6x6xbf16>
  %c = kiln.conv %xh, %wh {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf16>, tensor<2x4x3x3xf16>) -> tensor<1x2x6x6xf16>
  return %a, %b, %c : tensor<1x2x6x6xf32>, tensor<1x2x6x6xbf16>, tensor<1x2x6x6xf16>
}

// -----

// A ResNet-like block: conv -> bias -> relu -> max_pool -> 1x1 conv ->
// residual add -> relu -> global mean -> reshape. Channels last from the
// first convolution to the mean: one transpose of the input, the 3x3
// weight's transpose, the 1x1 weight's as a reshape, the per-channel bias
// folded to [1, 1, 1, C], and the pooled [N, 1, 1, C] reshaped.
// CHECK-LABEL: func.func @block
// CHECK-DAG: %[[X:.*]] = kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x4x8x8xf32>) -> tensor<2x8x8x4xf32>
// CHECK-DAG: %[[W1:.*]] = kiln.transpose %arg1 {perm = array<i64: 0, 2, 3, 1>} : (tensor<8x4x3x3xf32>) -> tensor<8x3x3x4xf32>
// CHECK: %[[C1:.*]] = kiln.conv %[[X]], %[[W1]] {{.*}}layout = "nhwc"{{.*}} -> tensor<2x8x8x8xf32>
// CHECK: %[[BIAS:.*]] = kiln.constant dense<5.000000e-01> : tensor<1x1x1x8xf32>
// CHECK: %[[B1:.*]] = kiln.add %[[C1]], %[[BIAS]] : (tensor<2x8x8x8xf32>, tensor<1x1x1x8xf32>)
// CHECK: %[[R1:.*]] = kiln.relu %[[B1]]
// CHECK: %[[P:.*]] = kiln.max_pool %[[R1]] {{.*}}layout = "nhwc"{{.*}} -> tensor<2x4x4x8xf32>
// CHECK: %[[W2:.*]] = kiln.reshape %arg2, %{{.*}} : (tensor<8x8x1x1xf32>, tensor<4xi64>) -> tensor<8x1x1x8xf32>
// CHECK: %[[C2:.*]] = kiln.conv %[[P]], %[[W2]] {{.*}}layout = "nhwc"
// CHECK: %[[S:.*]] = kiln.add %[[C2]], %[[P]] : (tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>)
// CHECK: %[[R2:.*]] = kiln.relu %[[S]]
// CHECK: %[[AX:.*]] = kiln.constant dense<[1, 2]> : tensor<2xi64>
// CHECK: %[[M:.*]] = kiln.reduce_mean %[[R2]], %[[AX]] {{.*}} -> tensor<2x1x1x8xf32>
// CHECK: %[[F:.*]] = kiln.reshape %[[M]], %{{.*}} -> tensor<2x8x1x1xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return
func.func @block(%x: tensor<2x4x8x8xf32>, %w1: tensor<8x4x3x3xf32>, %w2: tensor<8x8x1x1xf32>) -> tensor<2x8x1x1xf32> {
  %bias = kiln.constant dense<0.5> : tensor<1x8x1x1xf32>
  %c1 = kiln.conv %x, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32>
  %b1 = kiln.add %c1, %bias : (tensor<2x8x8x8xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x8x8xf32>
  %r1 = kiln.relu %b1 : (tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %p = kiln.max_pool %r1 {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x8x8x8xf32>) -> tensor<2x8x4x4xf32>
  %c2 = kiln.conv %p, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x4x4xf32>
  %s = kiln.add %c2, %p : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %r2 = kiln.relu %s : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %axes = kiln.constant dense<[2, 3]> : tensor<2xi64>
  %m = kiln.reduce_mean %r2, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x8x4x4xf32>, tensor<2xi64>) -> tensor<2x8x1x1xf32>
  return %m : tensor<2x8x1x1xf32>
}

// -----

// A graph input added to a convolution's result is transposed once at the
// entry (like the convolution's own input), so the add runs channels last;
// an operand of lower rank (here a weight-like argument [4], broadcast along
// W) is padded with leading 1s first, keeping what it broadcasts along.
// CHECK-LABEL: func.func @boundary
// CHECK: %[[C:.*]] = kiln.conv {{.*}}layout = "nhwc"
// CHECK: %[[Z:.*]] = kiln.transpose %arg2 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
// CHECK: %[[A:.*]] = kiln.add %[[C]], %[[Z]] : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>)
// CHECK: %[[AB:.*]] = kiln.transpose %[[A]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK: %[[V4:.*]] = kiln.reshape %arg3, %{{.*}} : (tensor<4xf32>, tensor<4xi64>) -> tensor<1x1x1x4xf32>
// CHECK: %[[VL:.*]] = kiln.reshape %[[V4]], %{{.*}} -> tensor<1x1x4x1xf32>
// CHECK: %[[V:.*]] = kiln.add %[[C]], %[[VL]] : (tensor<1x4x4x8xf32>, tensor<1x1x4x1xf32>)
// CHECK: %[[VB:.*]] = kiln.transpose %[[V]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK: return %[[AB]], %[[VB]]
func.func @boundary(%x: tensor<1x4x4x4xf32>, %w: tensor<8x4x1x1xf32>, %z: tensor<1x8x4x4xf32>, %v: tensor<4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32>
  %a = kiln.add %c, %z : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %b = kiln.add %c, %v : (tensor<1x8x4x4xf32>, tensor<4xf32>) -> tensor<1x8x4x4xf32>
  return %a, %b : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// -----

// Two computed values: the add of a convolution's result and a softmax's
// keeps its transpose back (moving it would add one on the softmax).
// CHECK-LABEL: func.func @computed
// CHECK: %[[C:.*]] = kiln.conv {{.*}}layout = "nhwc"
// CHECK: %[[B:.*]] = kiln.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK: %[[S:.*]] = kiln.softmax %arg2
// CHECK: kiln.add %[[B]], %[[S]] : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>)
func.func @computed(%x: tensor<1x4x4x4xf32>, %w: tensor<8x4x1x1xf32>, %z: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32>
  %s = kiln.softmax %z {axis = 3 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %a = kiln.add %c, %s : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %a : tensor<1x8x4x4xf32>
}

// -----

// Convolutions of other ranks and dynamic shapes stay channels first.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: layout
// CHECK-NOT: kiln.transpose
// CHECK: return
func.func @left_alone(%x: tensor<1x4x9xf32>, %w: tensor<2x4x3xf32>, %d: tensor<?x4x8x8xf32>, %w2: tensor<2x4x3x3xf32>) -> (tensor<1x2x7xf32>, tensor<?x2x6x6xf32>) {
  %a = kiln.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x4x9xf32>, tensor<2x4x3xf32>) -> tensor<1x2x7xf32>
  %b = kiln.conv %d, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x4x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<?x2x6x6xf32>
  return %a, %b : tensor<1x2x7xf32>, tensor<?x2x6x6xf32>
}
