// kiln-fuse never creates a cycle: two ops do not share a region when a
// path leads from one to the other through an op outside the region (here a
// matmul), also when that path goes through another region.

// RUN: kiln-opt %s -kiln-fuse -split-input-file | FileCheck %s

// exp -> matmul -> add, and exp -> add: the add may not join the exp.

// CHECK-LABEL: func.func @through_matmul(
// CHECK-NEXT: %[[E:.*]] = kiln.fusion "k0_exp" ins(%arg0 : tensor<4x4xf32>) kind("pointwise")
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[M:.*]] = kiln.matmul %[[E]], %arg1
// CHECK-NEXT: %[[A:.*]] = kiln.fusion "k1_add" ins(%[[E]], %[[M]] : tensor<4x4xf32>, tensor<4x4xf32>) kind("pointwise")
// CHECK: return %[[A]]
func.func @through_matmul(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = kiln.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = kiln.matmul %a, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = kiln.add %a, %m : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

// exp -> matmul -> add, where the add shares a group with tanh; the mul reads
// exp and tanh. Putting mul with exp would make exp's region wait for the
// tanh region, which waits for the matmul, which waits for exp's region:
// the mul joins the tanh group instead.

// CHECK-LABEL: func.func @through_group(
// CHECK-NEXT: %[[E:.*]] = kiln.fusion "k0_exp" ins(%arg0 : tensor<4x4xf32>) kind("pointwise")
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[M:.*]] = kiln.matmul %[[E]], %arg1
// CHECK-NEXT: %[[R:.*]]:2 = kiln.fusion "k1_tanh" ins(%arg2, %[[M]], %[[E]] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) kind("pointwise")
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.tanh
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.yield
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @through_group(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %a = kiln.exp %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = kiln.matmul %a, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = kiln.tanh %y : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e1 = kiln.add %m, %e2 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = kiln.mul %a, %e2 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %e1, %c : tensor<4x4xf32>, tensor<4x4xf32>
}
