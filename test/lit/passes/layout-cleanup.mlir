// RUN: kiln-opt %s -kiln-layout-cleanup -split-input-file | FileCheck %s

// transpose -> elementwise chain -> inverse transpose: the transposes go.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[C:.*]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[R:.*]] = kiln.relu %arg0 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[M:.*]] = kiln.mul %[[R]], %[[C]] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: return %[[M]]
func.func @chain(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %t = kiln.transpose %arg0 {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %r = kiln.relu %t : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %c = kiln.constant dense<2.0> : tensor<f32>
  %m = kiln.mul %r, %c : (tensor<2x4x3xf32>, tensor<f32>) -> tensor<2x4x3xf32>
  %b = kiln.transpose %m {perm = array<i64: 0, 2, 1>} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  return %b : tensor<2x3x4xf32>
}

// -----

// A binary op of two transposed values and a full-rank constant: the
// constant is transposed at compile time.
// CHECK-LABEL: func.func @binary
// CHECK-DAG: %[[C:.*]] = kiln.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[A:.*]] = kiln.add %arg0, %arg1
// CHECK: kiln.sub %[[A]], %[[C]]
// CHECK-NOT: kiln.transpose
func.func @binary(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %a = kiln.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = kiln.transpose %arg1 {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = kiln.add %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %d = kiln.sub %s, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = kiln.transpose %d {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Not free: an operand of lower rank (broadcast on the trailing dims), an
// elementwise op with another user, or a function argument operand.
// CHECK-LABEL: func.func @kept
// CHECK: kiln.transpose
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.transpose
// CHECK-NEXT: kiln.transpose
// CHECK-NEXT: kiln.exp
// CHECK: kiln.transpose
// CHECK: kiln.neg
// CHECK: kiln.transpose
func.func @kept(%arg0: tensor<3x4xf32>, %arg1: tensor<3xf32>) -> (tensor<3x4xf32>, tensor<4x3xf32>, tensor<3x4xf32>, tensor<4x3xf32>) {
  %t = kiln.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %a = kiln.add %t, %arg1 : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %b = kiln.transpose %a {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %t2 = kiln.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %e = kiln.exp %t2 : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %c = kiln.transpose %e {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %n = kiln.neg %arg0 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %d = kiln.transpose %n {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  return %b, %e, %c, %d : tensor<3x4xf32>, tensor<4x3xf32>, tensor<3x4xf32>, tensor<4x3xf32>
}

// -----

// transpose(matmul(a, b)) becomes matmul(transpose(b), transpose(a)), and
// the transpose of the transposed operand cancels: (a^T b)^T = b^T a.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[BT:.*]] = kiln.transpose %arg1 {perm = array<i64: 1, 0>}
// CHECK-NEXT: %[[M:.*]] = kiln.matmul %[[BT]], %arg0
// CHECK-NEXT: return %[[M]]
func.func @matmul(%arg0: tensor<3x4xf32>, %arg1: tensor<3x5xf32>) -> tensor<5x4xf32> {
  %t = kiln.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %m = kiln.matmul %t, %arg1 : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %r = kiln.transpose %m {perm = array<i64: 1, 0>} : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// -----

// A matmul read elsewhere too keeps its transpose (swapping would compute
// the product twice).
// CHECK-LABEL: func.func @matmul_shared
// CHECK: %[[M:.*]] = kiln.matmul %arg0, %arg1
// CHECK: kiln.transpose %[[M]]
func.func @matmul_shared(%arg0: tensor<4x3xf32>, %arg1: tensor<3x5xf32>) -> (tensor<5x4xf32>, tensor<4x5xf32>) {
  %m = kiln.matmul %arg0, %arg1 : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %r = kiln.transpose %m {perm = array<i64: 1, 0>} : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return %r, %m : tensor<5x4xf32>, tensor<4x5xf32>
}
