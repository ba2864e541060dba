// RUN: kiln-opt %s -kiln-cuda-conv-transpose-as-matmul -split-input-file | FileCheck %s

// U-Net's 2x2 stride-2 up-sampling: the weight [C, M, 2, 2] as [M*4, C]
// times the input's pixels [N, C, H*W], then the taps shuffled into place.
// CHECK-LABEL: func.func @upsample(
// CHECK: %[[W2:.*]] = kiln.reshape %arg1, %{{.*}} : (tensor<8x4x2x2xf32>, tensor<2xi64>) -> tensor<8x16xf32>
// CHECK: %[[WT:.*]] = kiln.transpose %[[W2]] {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
// CHECK: %[[X:.*]] = kiln.reshape %arg0, %{{.*}} : (tensor<2x8x3x5xf32>, tensor<3xi64>) -> tensor<2x8x15xf32>
// CHECK: %[[G:.*]] = kiln.matmul %[[WT]], %[[X]] : (tensor<16x8xf32>, tensor<2x8x15xf32>) -> tensor<2x16x15xf32>
// CHECK: %[[S:.*]] = kiln.reshape %[[G]], %{{.*}} -> tensor<2x4x2x2x3x5xf32>
// CHECK: %[[P:.*]] = kiln.transpose %[[S]] {perm = array<i64: 0, 1, 4, 2, 5, 3>} : (tensor<2x4x2x2x3x5xf32>) -> tensor<2x4x3x2x5x2xf32>
// CHECK: %[[Y:.*]] = kiln.reshape %[[P]], %{{.*}} -> tensor<2x4x6x10xf32>
// CHECK-NOT: kiln.conv_transpose
// CHECK: return %[[Y]]
func.func @upsample(%x: tensor<2x8x3x5xf32>, %w: tensor<8x4x2x2xf32>) -> tensor<2x4x6x10xf32> {
  %y = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x8x3x5xf32>, tensor<8x4x2x2xf32>) -> tensor<2x4x6x10xf32>
  return %y : tensor<2x4x6x10xf32>
}

// -----

// Taps that overlap (kernel 3, stride 2), padding, output padding and groups
// keep the op (the direct kernel).
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-4: kiln.conv_transpose
// CHECK-NOT: kiln.matmul
func.func @kept(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>, %w2: tensor<4x2x2x2xf32>, %w3: tensor<4x1x2x2xf32>) -> (tensor<1x2x11x11xf32>, tensor<1x2x8x8xf32>, tensor<1x2x11x11xf32>, tensor<1x2x10x10xf32>) {
  %a = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x11x11xf32>
  %b = kiln.conv_transpose %x, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  %c = kiln.conv_transpose %x, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x11x11xf32>
  %d = kiln.conv_transpose %x, %w3 {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x1x2x2xf32>) -> tensor<1x2x10x10xf32>
  return %a, %b, %c, %d : tensor<1x2x11x11xf32>, tensor<1x2x8x8xf32>, tensor<1x2x11x11xf32>, tensor<1x2x10x10xf32>
}
