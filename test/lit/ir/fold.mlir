// kiln.constant is ConstantLike and folds to its value: canonicalize
// deduplicates constants and drops unused (Pure) ops; kiln.shape and
// kiln.size fold to constants when the dims are static (materialized as
// kiln.constant by the dialect); CSE merges identical ops.

// RUN: kiln-opt %s -canonicalize | FileCheck %s
// RUN: kiln-opt %s -cse | FileCheck %s --check-prefix=CSE

// CHECK-LABEL: func.func @dedup_constants
// CHECK-NEXT: %[[C:.*]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[A:.*]] = kiln.add %arg0, %[[C]]
// CHECK-NEXT: %[[B:.*]] = kiln.mul %[[A]], %[[C]]
// CHECK-NEXT: return %[[B]]
func.func @dedup_constants(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c1 = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %unused = kiln.constant dense<3.0> : tensor<4xf32>
  %0 = kiln.add %x, %c0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %dead = kiln.exp %0 : (tensor<2xf32>) -> tensor<2xf32>
  %1 = kiln.mul %0, %c1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// CHECK-LABEL: func.func @fold_shape
// CHECK-DAG: %[[S:.*]] = kiln.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-DAG: %[[N:.*]] = kiln.constant dense<24> : tensor<i64>
// CHECK-DAG: %[[D:.*]] = kiln.shape %arg1 {end = 1 : i64, start = 0 : i64}
// CHECK: return %[[S]], %[[N]], %[[D]]
func.func @fold_shape(%x: tensor<2x3x4xf32>, %y: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<i64>, tensor<1xi64>) {
  %0 = kiln.shape %x {end = 3 : i64, start = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %1 = kiln.size %x : (tensor<2x3x4xf32>) -> tensor<i64>
  %2 = kiln.shape %y {end = 1 : i64, start = 0 : i64} : (tensor<?x3xf32>) -> tensor<1xi64>
  return %0, %1, %2 : tensor<2xi64>, tensor<i64>, tensor<1xi64>
}

// CSE-LABEL: func.func @cse
// CSE: %[[A:.*]] = kiln.add %arg0, %arg0
// CSE-NOT: kiln.add
// CSE: kiln.mul %[[A]], %[[A]]
func.func @cse(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = kiln.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = kiln.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = kiln.mul %0, %1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}
