// kiln-fuse: views (reshape, transpose, expand, squeeze, unsqueeze,
// flatten, slice) with constant parameters fuse as index arithmetic; their
// parameter constants are cloned into the region. A view with users outside
// the region stays outside; views that only reinterpret (reshape, flatten,
// squeeze, unsqueeze) alone are no kernel, while a group with a view that
// moves data (transpose, slice, expand) is one copy kernel named after it.

// RUN: kiln-opt %s -kiln-fuse -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @transpose_add(
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_add" ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x4xf32>) kind("pointwise") {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x4xf32>):
// CHECK-NEXT:   %[[T:.*]] = kiln.transpose %[[A]] {perm = array<i64: 1, 0>}
// CHECK-NEXT:   %[[S:.*]] = kiln.add %[[T]], %[[B]]
// CHECK-NEXT:   kiln.yield %[[S]] : tensor<8x4xf32>
func.func @transpose_add(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %1 = kiln.add %0, %y : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// Slice, expand, unsqueeze and a trailing reshape, all in one region with
// their parameter constants.

// CHECK-LABEL: func.func @view_chain(
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_mul" ins(%arg0, %arg1 : tensor<4x6xf32>, tensor<3xf32>) kind("pointwise") {
// CHECK-DAG: kiln.constant dense<0> : tensor<1xi64>
// CHECK-DAG: kiln.constant dense<[4, 3]> : tensor<2xi64>
// CHECK-DAG: kiln.constant dense<12> : tensor<1xi64>
// CHECK: kiln.slice
// CHECK: kiln.unsqueeze
// CHECK: kiln.expand
// CHECK: kiln.mul
// CHECK: kiln.reshape
// CHECK-NEXT: kiln.yield %{{.*}} : tensor<12xf32>
// CHECK-NEXT: } -> (tensor<12xf32>)
// CHECK-NEXT: return %[[R]]
func.func @view_chain(%x: tensor<4x6xf32>, %v: tensor<3xf32>) -> tensor<12xf32> {
  %start = kiln.constant dense<0> : tensor<1xi64>
  %end = kiln.constant dense<3> : tensor<1xi64>
  %axis = kiln.constant dense<1> : tensor<1xi64>
  %step = kiln.constant dense<1> : tensor<1xi64>
  %zero = kiln.constant dense<0> : tensor<1xi64>
  %shape = kiln.constant dense<[4, 3]> : tensor<2xi64>
  %flat = kiln.constant dense<12> : tensor<1xi64>
  %0 = kiln.slice %x, %start, %end, %axis, %step : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x3xf32>
  %1 = kiln.unsqueeze %v, %zero : (tensor<3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  %2 = kiln.expand %1, %shape : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %3 = kiln.mul %0, %2 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %4 = kiln.reshape %3, %flat {allowzero = 0 : i64} : (tensor<4x3xf32>, tensor<1xi64>) -> tensor<12xf32>
  return %4 : tensor<12xf32>
}

// -----

// A reshape that also feeds a matmul stays outside, and so does a view
// alone; only the elementwise op is a kernel.

// CHECK-LABEL: func.func @shared_view(
// CHECK-NEXT: %[[S:.*]] = kiln.constant dense<4> : tensor<2xi64>
// CHECK-NEXT: %[[V:.*]] = kiln.reshape %arg0, %[[S]]
// CHECK-NEXT: %[[F:.*]] = kiln.flatten %arg0
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_relu" ins(%[[V]] : tensor<4x4xf32>) kind("pointwise")
// CHECK: kiln.matmul %[[V]], %[[R]]
func.func @shared_view(%x: tensor<2x8xf32>) -> (tensor<4x4xf32>, tensor<1x16xf32>) {
  %s = kiln.constant dense<[4, 4]> : tensor<2xi64>
  %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  %f = kiln.flatten %x {axis = 0 : i64} : (tensor<2x8xf32>) -> tensor<1x16xf32>
  %1 = kiln.relu %0 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kiln.matmul %0, %1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2, %f : tensor<4x4xf32>, tensor<1x16xf32>
}

// -----

// A view whose parameter is not a constant may not enter a region.

// CHECK-LABEL: func.func @dynamic_param(
// CHECK-NEXT: %[[V:.*]] = kiln.reshape %arg0, %arg1
// CHECK-NEXT: kiln.fusion "k0_neg" ins(%[[V]] : tensor<2x3xf32>)
func.func @dynamic_param(%x: tensor<6xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<6xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %1 = kiln.neg %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Views alone: reshape + transpose is one copy kernel (named after the
// transpose); a lone reshape is no kernel.

// CHECK-LABEL: func.func @copy_kernel(
// CHECK: kiln.fusion "k0_transpose" ins(%arg0 : tensor<2x8xf32>) kind("pointwise")
// CHECK:   kiln.reshape
// CHECK:   kiln.transpose
// CHECK: kiln.reshape %arg1
// CHECK-NOT: kiln.fusion
func.func @copy_kernel(%x: tensor<2x8xf32>, %y: tensor<16xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %s = kiln.constant dense<[4, 4]> : tensor<2xi64>
  %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  %1 = kiln.transpose %0 {perm = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kiln.reshape %y, %s {allowzero = 0 : i64} : (tensor<16xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  return %1, %2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A lone transpose of the last two dims of a weight that only matmuls read
// stays: the GEMM library reads the weight transposed in place. The same
// transpose of a computed value is a copy kernel (its input's buffer may be
// reused once the transpose has read it).

// CHECK-LABEL: func.func @transpose_for_gemm(
// CHECK-NEXT: %[[T:.*]] = kiln.transpose %arg1
// CHECK-NEXT: kiln.matmul %arg0, %[[T]]
// CHECK-NEXT: %[[C:.*]] = kiln.fusion "k0_transpose" ins(%arg2 : tensor<4x8xf32>)
// CHECK: kiln.matmul %arg0, %[[C]]
func.func @transpose_for_gemm(%x: tensor<2x8xf32>, %w: tensor<4x8xf32> {kiln.weight}, %y: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = kiln.transpose %w {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %1 = kiln.matmul %x, %0 : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %t = kiln.transpose %y {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %2 = kiln.matmul %x, %t : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Ops computed from weights alone group only with each other (the wrapper
// computes them once, at load time): the cast of the bias is its own kernel,
// not part of the add's.

// CHECK-LABEL: func.func @weight_derived(
// CHECK: %[[B:.*]] = kiln.fusion "k0_cast" ins(%arg1 : tensor<4xf32>)
// CHECK: kiln.fusion "k1_add" ins(%arg0, %[[B]] : tensor<2x4xf16>, tensor<4xf16>)
func.func @weight_derived(%x: tensor<2x4xf16>, %b: tensor<4xf32> {kiln.weight}) -> tensor<2x4xf16> {
  %0 = kiln.cast %b {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %1 = kiln.add %x, %0 : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  return %1 : tensor<2x4xf16>
}
