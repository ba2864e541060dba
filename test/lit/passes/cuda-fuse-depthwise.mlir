// RUN: kiln-opt %s -kiln-cuda-fuse-depthwise -split-input-file | FileCheck %s

// MobileNet's block: ReLU6 (max then min) before and after a depthwise
// convolution become its input and output activations; the expand
// convolution's result, read by the first ReLU6 only, is the new operand.
// CHECK-LABEL: func.func @relu6(
// CHECK: %[[E:.*]] = kiln.conv %arg0, %arg1
// CHECK-NEXT: %[[D:.*]] = kiln.depthwise_conv %[[E]], %arg2 {activation = "relu6", dilations = array<i64: 1, 1>, group = 8 : i64, input_activation = "relu6", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK-NOT: kiln.max
// CHECK-NOT: kiln.min
// CHECK: return %[[D]]
func.func @relu6(%x: tensor<1x4x8x8xf32>, %we: tensor<8x4x1x1xf32>, %wd: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %zero = kiln.constant dense<0.000000e+00> : tensor<f32>
  %six = kiln.constant dense<6.000000e+00> : tensor<f32>
  %e = kiln.conv %x, %we {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x8x8xf32>
  %m = kiln.max %e, %zero : (tensor<1x8x8x8xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
  %a = kiln.min %m, %six : (tensor<1x8x8x8xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
  %d = kiln.conv %a, %wd {dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
  %m2 = kiln.max %d, %zero : (tensor<1x8x8x8xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
  %y = kiln.min %m2, %six : (tensor<1x8x8x8xf32>, tensor<f32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

// EfficientNet's: SiLU as x * sigmoid(x) on both sides (channels last). The
// output's becomes the kernel's activation; its result feeds two ops (the
// squeeze-excite mean and its scale), which now read the kernel's output.
// The input's stays an op (the kernel would compute it once per tap).
// CHECK-LABEL: func.func @silu(
// CHECK: %[[S:.*]] = kiln.sigmoid %arg0
// CHECK: %[[A:.*]] = kiln.mul %arg0, %[[S]]
// CHECK: %[[D:.*]] = kiln.depthwise_conv %[[A]], %arg1 {activation = "silu", {{.*}}input_activation = "none", layout = "nhwc"
// CHECK-NOT: kiln.sigmoid
// CHECK: kiln.reduce_mean %[[D]]
// CHECK: kiln.mul %[[D]]
func.func @silu(%e: tensor<1x8x8x16xbf16>, %w: tensor<16x3x3x1xbf16>) -> tensor<1x8x8x16xbf16> {
  %s = kiln.sigmoid %e : (tensor<1x8x8x16xbf16>) -> tensor<1x8x8x16xbf16>
  %a = kiln.mul %e, %s : (tensor<1x8x8x16xbf16>, tensor<1x8x8x16xbf16>) -> tensor<1x8x8x16xbf16>
  %d = kiln.conv %a, %w {dilations = array<i64: 1, 1>, group = 16 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x16xbf16>, tensor<16x3x3x1xbf16>) -> tensor<1x8x8x16xbf16>
  %s2 = kiln.sigmoid %d : (tensor<1x8x8x16xbf16>) -> tensor<1x8x8x16xbf16>
  %y = kiln.mul %s2, %d : (tensor<1x8x8x16xbf16>, tensor<1x8x8x16xbf16>) -> tensor<1x8x8x16xbf16>
  %axes = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %p = kiln.reduce_mean %y, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x8x8x16xbf16>, tensor<2xi64>) -> tensor<1x1x1x16xbf16>
  %z = kiln.mul %y, %p : (tensor<1x8x8x16xbf16>, tensor<1x1x1x16xbf16>) -> tensor<1x8x8x16xbf16>
  return %z : tensor<1x8x8x16xbf16>
}

// -----

// MobileNetV3's hard-swish and a ReLU; kiln.swish with alpha 1 is SiLU.
// CHECK-LABEL: func.func @others(
// CHECK: kiln.depthwise_conv %arg0, %arg1 {activation = "relu", {{.*}}input_activation = "hard_swish"
// CHECK: kiln.depthwise_conv %arg0, %arg1 {activation = "silu", {{.*}}input_activation = "none"
func.func @others(%e: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %a = kiln.hard_swish %e : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %d = kiln.conv %a, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %y = kiln.relu %d : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %d2 = kiln.conv %e, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %y2 = kiln.swish %d2 {alpha = 1.000000e+00 : f32} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %y, %y2 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// Kept apart: the convolution's result is also returned (a training graph
// saves it), the activated input has another reader, ReLU6 with other
// bounds, a grouped (not depthwise) convolution.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: kiln.depthwise_conv
// CHECK: return
func.func @kept(%e: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>, %wg: tensor<4x2x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %zero = kiln.constant dense<0.000000e+00> : tensor<f32>
  %five = kiln.constant dense<5.000000e+00> : tensor<f32>
  %d = kiln.conv %e, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %y = kiln.relu %d : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %a = kiln.relu %e : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %d2 = kiln.conv %a, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %d3 = kiln.conv %e, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %m = kiln.max %d3, %zero : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %y3 = kiln.min %m, %five : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %d4 = kiln.conv %e, %wg {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  %y4 = kiln.relu %d4 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %d, %y, %a, %y3, %y4 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}
