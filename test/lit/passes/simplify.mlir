// RUN: kiln-opt %s -kiln-simplify -split-input-file | FileCheck %s

// transpose(transpose(x)) with inverse permutations is x; with others it is
// one transpose.
// CHECK-LABEL: func.func @transposes
// CHECK-NEXT: %[[T:.*]] = kiln.transpose %arg0 {perm = array<i64: 1, 2, 0>}
// CHECK-NEXT: return %arg0, %[[T]]
func.func @transposes(%arg0: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x4x2xf32>) {
  %a = kiln.transpose %arg0 {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %b = kiln.transpose %a {perm = array<i64: 1, 2, 0>} : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  %c = kiln.transpose %arg0 {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %d = kiln.transpose %c {perm = array<i64: 0, 2, 1>} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  %e = kiln.transpose %d {perm = array<i64: 0, 1, 2>} : (tensor<3x4x2xf32>) -> tensor<3x4x2xf32>
  return %b, %e : tensor<2x3x4xf32>, tensor<3x4x2xf32>
}

// -----

// Chains of reshape-like ops become one reshape; a chain back to the same
// shape disappears.
// CHECK-LABEL: func.func @reshapes
// CHECK-DAG: %[[S:.*]] = kiln.constant dense<[6, 4]> : tensor<2xi64>
// CHECK-DAG: %[[R:.*]] = kiln.reshape %arg0, %[[S]] {allowzero = 1 : i64}
// CHECK-NOT: kiln.flatten
// CHECK-NOT: kiln.unsqueeze
// CHECK: return %[[R]], %arg0
func.func @reshapes(%arg0: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x3x4xf32>) {
  %axes = kiln.constant dense<0> : tensor<1xi64>
  %u = kiln.unsqueeze %arg0, %axes : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<1x2x3x4xf32>
  %f = kiln.flatten %u {axis = 3 : i64} : (tensor<1x2x3x4xf32>) -> tensor<6x4xf32>
  %s = kiln.squeeze %u, %axes : (tensor<1x2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x4xf32>
  return %f, %s : tensor<6x4xf32>, tensor<2x3x4xf32>
}

// -----

// Views, casts and reductions to the same type are the identity.
// CHECK-LABEL: func.func @identities
// CHECK-NEXT: return %arg0, %arg0, %arg0, %arg0, %arg0
func.func @identities(%arg0: tensor<2x1xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %shape = kiln.constant dense<[2, 1]> : tensor<2xi64>
  %r = kiln.reshape %arg0, %shape {allowzero = 0 : i64} : (tensor<2x1xf32>, tensor<2xi64>) -> tensor<2x1xf32>
  %e = kiln.expand %arg0, %shape : (tensor<2x1xf32>, tensor<2xi64>) -> tensor<2x1xf32>
  %c = kiln.cast %arg0 {to = f32} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %m = kiln.reduce_sum %arg0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x1xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %one = kiln.constant dense<[2, 1]> : tensor<2xi64>
  %z = kiln.constant dense<[0, 0]> : tensor<2xi64>
  %big = kiln.constant dense<[9, 9]> : tensor<2xi64>
  %ax = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %st = kiln.constant dense<[1, 1]> : tensor<2xi64>
  %sl = kiln.slice %arg0, %z, %big, %ax, %st : (tensor<2x1xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1xf32>
  return %r, %e, %c, %m, %sl : tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

// A slice that reverses keeps the shape but is not the identity.
// CHECK-LABEL: func.func @reverse_slice
// CHECK: kiln.slice
func.func @reverse_slice(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %s = kiln.constant dense<-1> : tensor<1xi64>
  %e = kiln.constant dense<-10> : tensor<1xi64>
  %a = kiln.constant dense<0> : tensor<1xi64>
  %st = kiln.constant dense<-1> : tensor<1xi64>
  %r = kiln.slice %arg0, %s, %e, %a, %st : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Arithmetic identities with splat constants, and double negation.
// CHECK-LABEL: func.func @arith
// CHECK-NEXT: return %arg0, %arg0, %arg0, %arg0, %arg0, %arg1
func.func @arith(%arg0: tensor<2x3xf32>, %arg1: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>) {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<3xf32>
  %a = kiln.mul %one, %arg0 : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = kiln.add %arg0, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %c = kiln.sub %arg0, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %d = kiln.div %arg0, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %n = kiln.neg %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %nn = kiln.neg %n : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %i1 = kiln.constant dense<1> : tensor<i64>
  %e = kiln.mul %arg1, %i1 : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %a, %b, %c, %d, %nn, %e : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>
}

// -----

// No identity when the constant broadcasts x to a larger shape, when it is
// on the wrong side of sub/div, or when its value is not the identity.
// CHECK-LABEL: func.func @not_identities
// CHECK: kiln.mul
// CHECK: kiln.sub
// CHECK: kiln.div
// CHECK: kiln.add
func.func @not_identities(%arg0: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %one = kiln.constant dense<1.0> : tensor<2x3xf32>
  %a = kiln.mul %arg0, %one : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %b = kiln.sub %zero, %arg0 : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %o = kiln.constant dense<1.0> : tensor<f32>
  %c = kiln.div %o, %arg0 : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %d = kiln.add %arg0, %o : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %a, %b, %c, %d : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// concat of one operand; dead ops are removed; shape of a static tensor folds.
// CHECK-LABEL: func.func @concat_dead
// CHECK-NEXT: %[[S:.*]] = kiln.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT: return %arg0, %[[S]]
func.func @concat_dead(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xi64>) {
  %c = kiln.concat %arg0 {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %dead = kiln.exp %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = kiln.shape %arg0 {start = 0 : i64, end = 2 : i64} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %c, %s : tensor<2x3xf32>, tensor<2xi64>
}

// -----

// Ops inside a fusion region are left alone.
// CHECK-LABEL: func.func @fusion
// CHECK: kiln.fusion
// CHECK: kiln.neg
// CHECK-NEXT: kiln.neg
func.func @fusion(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %r = kiln.fusion "k0_neg" ins(%arg0 : tensor<2xf32>) kind("pointwise") {
  ^bb0(%x: tensor<2xf32>):
    %a = kiln.neg %x : (tensor<2xf32>) -> tensor<2xf32>
    %b = kiln.neg %a : (tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %b : tensor<2xf32>
  } -> (tensor<2xf32>)
  return %r : tensor<2xf32>
}

// -----

// gather by a constant in-range scalar index is a slice and a reshape that
// drops the axis (ViT's q/k/v `select`); by consecutive indices, a slice;
// non-consecutive or out-of-range indices stay a gather.
// CHECK-LABEL: func.func @constant_gathers
// CHECK: %[[S:.*]] = kiln.slice %arg0
// CHECK-SAME: -> tensor<1x4x6xf32>
// CHECK: %[[R:.*]] = kiln.reshape %[[S]]
// CHECK-SAME: -> tensor<4x6xf32>
// CHECK: %[[T:.*]] = kiln.slice %arg0
// CHECK-SAME: -> tensor<3x2x6xf32>
// CHECK: %[[G:.*]] = kiln.gather %arg0
// CHECK-SAME: tensor<2xi64>
// CHECK: %[[O:.*]] = kiln.gather %arg0
// CHECK-SAME: tensor<i64>
// CHECK: return %[[R]], %[[T]], %[[G]], %[[O]]
func.func @constant_gathers(%x: tensor<3x4x6xf32>) -> (tensor<4x6xf32>, tensor<3x2x6xf32>, tensor<3x2x6xf32>, tensor<4x6xf32>) {
  %i = kiln.constant dense<-1> : tensor<i64>
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<3x4x6xf32>, tensor<i64>) -> tensor<4x6xf32>
  %j = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %1 = kiln.gather %x, %j {axis = 1 : i64} : (tensor<3x4x6xf32>, tensor<2xi64>) -> tensor<3x2x6xf32>
  %k = kiln.constant dense<[2, 1]> : tensor<2xi64>
  %2 = kiln.gather %x, %k {axis = 1 : i64} : (tensor<3x4x6xf32>, tensor<2xi64>) -> tensor<3x2x6xf32>
  %o = kiln.constant dense<3> : tensor<i64>
  %3 = kiln.gather %x, %o {axis = 0 : i64} : (tensor<3x4x6xf32>, tensor<i64>) -> tensor<4x6xf32>
  return %0, %1, %2, %3 : tensor<4x6xf32>, tensor<3x2x6xf32>, tensor<3x2x6xf32>, tensor<4x6xf32>
}

// -----

// Axes that are a run-time operand with no elements (ONNX's default axes)
// mean every axis, unless noop_with_empty_axes (then the reduction is the
// identity); they become a constant.
// CHECK-LABEL: func.func @empty_axes
// CHECK: %[[ALL:.*]] = kiln.constant dense<[0, 1]> : tensor<2xi64>
// CHECK: %[[SUM:.*]] = kiln.reduce_sum %arg0, %[[ALL]]
// CHECK: return %[[SUM]], %arg0
func.func @empty_axes(%x: tensor<3x4xf32>, %axes: tensor<0xi64>) -> (tensor<1x1xf32>, tensor<3x4xf32>) {
  %0 = kiln.reduce_sum %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<3x4xf32>, tensor<0xi64>) -> tensor<1x1xf32>
  %1 = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 1 : i64} : (tensor<3x4xf32>, tensor<0xi64>) -> tensor<3x4xf32>
  return %0, %1 : tensor<1x1xf32>, tensor<3x4xf32>
}

// -----

// Ops whose results have no elements compute nothing: empty constants.
// CHECK-LABEL: func.func @empty_results
// CHECK-DAG: %[[T:.*]] = kiln.constant dense<> : tensor<3x0x5xi64>
// CHECK-DAG: %[[A:.*]] = kiln.constant dense<> : tensor<0x4xf32>
// CHECK-NOT: kiln.trilu
// CHECK: %[[B:.*]] = kiln.add %arg3, %arg3
// CHECK: return %[[T]], %[[A]], %[[B]]
func.func @empty_results(%x: tensor<3x0x5xi64>, %k: tensor<i64>, %a: tensor<0x4xf32>, %b: tensor<3x4xf32>) -> (tensor<3x0x5xi64>, tensor<0x4xf32>, tensor<3x4xf32>) {
  %0 = kiln.trilu %x, %k {upper = 0 : i64} : (tensor<3x0x5xi64>, tensor<i64>) -> tensor<3x0x5xi64>
  %1 = kiln.add %a, %a : (tensor<0x4xf32>, tensor<0x4xf32>) -> tensor<0x4xf32>
  %2 = kiln.add %b, %b : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0, %1, %2 : tensor<3x0x5xi64>, tensor<0x4xf32>, tensor<3x4xf32>
}
