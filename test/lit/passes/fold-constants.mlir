// RUN: kiln-opt %s -kiln-fold-constants -split-input-file | FileCheck %s

// A chain of constant ops folds to one constant; the operands disappear.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[C:.*]] = kiln.constant dense<[4.000000e+00, 9.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[R:.*]] = kiln.add %arg0, %[[C]]
// CHECK-NEXT: return %[[R]]
func.func @chain(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %a = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = kiln.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %s = kiln.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %m = kiln.mul %s, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = kiln.add %arg0, %m : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Shape computations fold: reshape of a constant, with several results
// (split) and integer dtypes.
// CHECK-LABEL: func.func @split
// CHECK-DAG: kiln.constant dense<{{\[}}[1, 2]]> : tensor<1x2xi64>
// CHECK-DAG: kiln.constant dense<{{\[}}[3, 4]]> : tensor<1x2xi64>
// CHECK-NOT: kiln.split
// CHECK-NOT: kiln.reshape
func.func @split() -> (tensor<1x2xi64>, tensor<1x2xi64>) {
  %x = kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %shape = kiln.constant dense<[2, 2]> : tensor<2xi64>
  %r = kiln.reshape %x, %shape {allowzero = 0 : i64} : (tensor<4xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %sizes = kiln.constant dense<[1, 1]> : tensor<2xi64>
  %a, %b = kiln.split %r, %sizes {axis = 0 : i64} : (tensor<2x2xi64>, tensor<2xi64>) -> (tensor<1x2xi64>, tensor<1x2xi64>)
  return %a, %b : tensor<1x2xi64>, tensor<1x2xi64>
}

// -----

// An op with a non-constant operand stays; so does a dynamic result.
// CHECK-LABEL: func.func @not_constant
// CHECK: kiln.neg %arg0
// CHECK: kiln.shape %arg0
func.func @not_constant(%arg0: tensor<?xf32>) -> (tensor<?xf32>, tensor<1xi64>) {
  %n = kiln.neg %arg0 : (tensor<?xf32>) -> tensor<?xf32>
  %s = kiln.shape %arg0 {start = 0 : i64, end = 1 : i64} : (tensor<?xf32>) -> tensor<1xi64>
  return %n, %s : tensor<?xf32>, tensor<1xi64>
}

// -----

// Transposes and casts of constants fold; bool results too.
// CHECK-LABEL: func.func @transpose_cast
// CHECK-DAG: kiln.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NOT: kiln.transpose
// CHECK-NOT: kiln.cast
func.func @transpose_cast() -> (tensor<2x2xf32>, tensor<2xi1>) {
  %x = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %f = kiln.cast %x {to = f32} : (tensor<2x2xi64>) -> tensor<2x2xf32>
  %t = kiln.transpose %f {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = kiln.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %b = kiln.cast %y {to = i1} : (tensor<2xf32>) -> tensor<2xi1>
  return %t, %b : tensor<2x2xf32>, tensor<2xi1>
}

// -----

// Ops inside a fusion region are left alone.
// CHECK-LABEL: func.func @fusion
// CHECK: kiln.fusion
// CHECK: kiln.add
func.func @fusion(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %r = kiln.fusion "k0_add" ins(%arg0 : tensor<2xf32>) kind("pointwise") {
  ^bb0(%x: tensor<2xf32>):
    %a = kiln.constant dense<1.0> : tensor<2xf32>
    %b = kiln.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %c = kiln.add %x, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %c : tensor<2xf32>
  } -> (tensor<2xf32>)
  return %r : tensor<2xf32>
}
