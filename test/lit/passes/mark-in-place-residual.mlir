// kiln-mark-in-place with residual-callees (the CPU target's oneDNN calls):
// a library call of those callees whose residual dies there takes the
// residual's buffer (kiln.in_place = array<i64: 0, OPERAND>) and adds the
// residual found in its destination (oneDNN's sum post-op). Not when the
// residual is read later, is a graph input, or the result is a graph output;
// not for other callees, nor without the option (the CUDA target).

// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-cpu -kiln-mark-load-time -kiln-mark-in-place="residual-callees=onednn.matmul,onednn.conv" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-cpu -kiln-mark-load-time -kiln-mark-in-place | FileCheck %s --check-prefix=NONE
// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-cpu -kiln-mark-load-time -kiln-mark-in-place="residual-callees=onednn.conv" | FileCheck %s --check-prefix=NONE
// NONE-NOT: kiln.in_place

// The residual (another product) dies at the add folded into the call.
// CHECK-LABEL: func.func @residual_dies(
// CHECK: %[[R:.*]] = kiln.library_call "onednn.matmul"(%arg0, %arg2)
// CHECK: kiln.library_call "onednn.matmul"(%arg0, %arg1, %[[R]]) {epilogue = "residual", kiln.in_place = array<i64: 0, 2>
func.func @residual_dies(%x: tensor<8x4xf32>, %w: tensor<4x16xf32> {kiln.weight}, %v: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> tensor<8x4xf32> {
  %r = kiln.matmul %x, %v : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %s = kiln.add %h, %r : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %g = kiln.matmul %s, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}

// -----

// The residual is read again after the call: two buffers.
// CHECK-LABEL: func.func @residual_read_later(
// CHECK: epilogue = "residual"
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @residual_read_later(%x: tensor<8x4xf32>, %w: tensor<4x16xf32> {kiln.weight}, %v: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %r = kiln.matmul %x, %v : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %s = kiln.add %h, %r : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %g = kiln.matmul %s, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %g2 = kiln.matmul %r, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %g, %g2 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// The result is the graph's output (the caller's buffer), or the residual
// a graph input: two buffers.
// CHECK-LABEL: func.func @output_or_input(
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @output_or_input(%x: tensor<8x4xf32>, %res: tensor<8x16xf32>, %w: tensor<4x16xf32> {kiln.weight}, %v: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> (tensor<8x16xf32>, tensor<8x4xf32>) {
  %r = kiln.matmul %x, %v : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %s = kiln.add %h, %r : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h2 = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %s2 = kiln.add %h2, %res : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %g = kiln.matmul %s2, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %s, %g : tensor<8x16xf32>, tensor<8x4xf32>
}
