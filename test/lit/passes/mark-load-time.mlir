// kiln-mark-load-time: steps that read only weights (and what such steps
// computed) run once, at load; steps that read an input, and steps whose
// result is a graph output, do not.

// RUN: kiln-opt %s -kiln-fuse -kiln-lower-cpu -kiln-mark-load-time | FileCheck %s

// CHECK-LABEL: func.func @prepare(
// CHECK: %[[C:.*]] = kiln.fusion "k0_cast" ins(%arg1 {{.*}} attributes {kiln.load_time}
// CHECK: %[[MM:.*]] = kiln.library_call "runtime.matmul"(%arg0, %[[C]]) {roles = ["a", "b"]}
// CHECK: %[[T:.*]] = kiln.fusion "k1_transpose" ins(%arg2 : tensor<3x2xf32>) kind("pointwise") {
// CHECK: return %[[MM]], %[[T]]
func.func @prepare(%x: tensor<8x16xf16>, %w: tensor<4x16xf32> {kiln.weight}, %v: tensor<3x2xf32> {kiln.weight}) -> (tensor<8x4xf16>, tensor<2x3xf32>) {
  %wt = kiln.transpose %w {perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %wh = kiln.cast %wt {to = f16} : (tensor<16x4xf32>) -> tensor<16x4xf16>
  %0 = kiln.matmul %x, %wh : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %vt = kiln.transpose %v {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %0, %vt : tensor<8x4xf16>, tensor<2x3xf32>
}
