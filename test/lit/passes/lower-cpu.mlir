// kiln-lower-cpu: matmul and convolutions become calls of the runtime's
// OpenBLAS-backed kernels (their attributes as params); every other op
// outside a fusion is a reference step on the CPU. Nothing is folded yet.

// RUN: kiln-opt %s -kiln-fuse -kiln-lower-cpu | FileCheck %s

// CHECK-LABEL: func.func @linear_conv(
// CHECK: %[[T:.*]] = kiln.transpose %arg1 {kiln.reference = "cpu", perm = array<i64: 1, 0>}
// CHECK: %[[MM:.*]] = kiln.library_call "runtime.matmul"(%arg0, %[[T]]) {roles = ["a", "b"]}
// CHECK: kiln.fusion "k0_add" ins(%[[MM]]
// CHECK: kiln.library_call "runtime.conv"(%arg3, %arg4) {params = {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}, roles = ["x", "w"]}
func.func @linear_conv(%x: tensor<8x16xf32>, %w: tensor<4x16xf32> {kiln.weight}, %b: tensor<4xf32>, %img: tensor<1x2x4x4xf32>, %k: tensor<2x2x3x3xf32>) -> (tensor<8x4xf32>, tensor<1x2x4x4xf32>) {
  %wt = kiln.transpose %w {perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %0 = kiln.matmul %x, %wt : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = kiln.add %0, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %2 = kiln.conv %img, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  return %1, %2 : tensor<8x4xf32>, tensor<1x2x4x4xf32>
}
