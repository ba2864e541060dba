// kiln-fuse: a value used inside a region and outside it becomes one more
// result of the region (multi-output regions).

// RUN: kiln-opt %s -kiln-fuse -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @used_outside(
// CHECK-NEXT: %[[R:.*]]:2 = kiln.fusion "k0_add" ins(%arg0, %arg1 : tensor<4x4xf32>, tensor<4x4xf32>) kind("pointwise") {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x4xf32>, %[[B:.*]]: tensor<4x4xf32>):
// CHECK-NEXT:   %[[S:.*]] = kiln.add %[[A]], %[[B]]
// CHECK-NEXT:   %[[T:.*]] = kiln.tanh %[[S]]
// CHECK-NEXT:   kiln.yield %[[S]], %[[T]] : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT: } -> (tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT: %[[M:.*]] = kiln.matmul %[[R]]#0, %arg1
// CHECK-NEXT: return %[[R]]#1, %[[M]]
func.func @used_outside(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = kiln.add %x, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = kiln.matmul %0, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kiln.tanh %0 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A value returned by the function and used inside is a result too.

// CHECK-LABEL: func.func @returned(
// CHECK-NEXT: %[[R:.*]]:2 = kiln.fusion "k0_exp"
// CHECK: kiln.yield %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @returned(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = kiln.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  %1 = kiln.log %0 : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// A pointwise region returns values of one shape: a smaller producer that is
// also used outside stays a region of its own instead of becoming a result
// of another shape.

// CHECK-LABEL: func.func @different_shapes(
// CHECK: kiln.fusion "k0_exp" ins(%arg0 : tensor<4xf32>)
// CHECK: kiln.yield %{{.*}} : tensor<4xf32>
// CHECK: kiln.fusion "k1_add" ins(%arg1, %{{.*}} : tensor<3x4xf32>, tensor<4xf32>)
// CHECK: kiln.yield %{{.*}} : tensor<3x4xf32>
func.func @different_shapes(%b: tensor<4xf32>, %x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<4xf32>) {
  %0 = kiln.exp %b : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.add %x, %0 : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %1, %0 : tensor<3x4xf32>, tensor<4xf32>
}

// -----

// A region sits after its last member, so an op that read an earlier member
// (the matmul of %0) now comes before its producer: it moves to just after
// the region, not past the independent ops that follow (which would keep
// its operands alive longer: a backward graph's weight-gradient GEMMs).
// CHECK-LABEL: func.func @reader_stays_early(
// CHECK-NEXT: %[[R:.*]]:2 = kiln.fusion "k0_add"
// CHECK: } -> (tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT: %[[M:.*]] = kiln.matmul %[[R]]#0, %arg1
// CHECK-NEXT: %[[N:.*]] = kiln.matmul %arg0, %arg0
// CHECK-NEXT: %[[E:.*]] = kiln.fusion "k1_mul" ins(%[[N]]
// CHECK: return %[[R]]#1, %[[M]], %[[E]]
func.func @reader_stays_early(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = kiln.add %x, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = kiln.matmul %0, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kiln.tanh %0 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = kiln.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = kiln.mul %3, %3 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2, %1, %4 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
