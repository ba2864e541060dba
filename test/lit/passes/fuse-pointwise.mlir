// kiln-fuse: chains of elementwise ops become one "pointwise" region; a
// single elementwise op is a region too; splat and rank-0 constants are
// cloned into the region, other constants are operands; a producer of a
// smaller (broadcast) shape fuses into its consumer.

// RUN: kiln-opt %s -kiln-fuse -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-fuse -split-input-file -mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:.*]]: tensor<8x16xf32>, %[[Y:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_add" ins(%[[X]], %[[Y]] : tensor<8x16xf32>, tensor<8x16xf32>) kind("pointwise") {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<8x16xf32>):
// CHECK-NEXT:   %[[TWO:.*]] = kiln.constant dense<2.000000e+00> : tensor<8x16xf32>
// CHECK-NEXT:   %[[HALF:.*]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:   %[[S:.*]] = kiln.add %[[A]], %[[B]]
// CHECK-NEXT:   %[[M:.*]] = kiln.mul %[[S]], %[[TWO]]
// CHECK-NEXT:   %[[P:.*]] = kiln.sub %[[M]], %[[HALF]]
// CHECK-NEXT:   %[[Q:.*]] = kiln.relu %[[P]]
// CHECK-NEXT:   kiln.yield %[[Q]] : tensor<8x16xf32>
// CHECK-NEXT: } -> (tensor<8x16xf32>)
// CHECK-NEXT: return %[[R]] : tensor<8x16xf32>
func.func @chain(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %two = kiln.constant dense<2.0> : tensor<8x16xf32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.add %x, %y : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = kiln.mul %0, %two : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = kiln.sub %1, %half : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %3 = kiln.relu %2 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// A single elementwise op is a region; a non-splat constant is an operand.

// CHECK-LABEL: func.func @single(
// CHECK-NEXT: %[[C:.*]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_mul" ins(%arg0, %[[C]] : tensor<3x2xf32>, tensor<2xf32>) kind("pointwise") {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<2xf32>):
// CHECK-NEXT:   %[[M:.*]] = kiln.mul %[[A]], %[[B]]
// CHECK-NEXT:   kiln.yield %[[M]]
func.func @single(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = kiln.mul %x, %c : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// The producer of a broadcast operand (exp of a [16] vector) fuses into its
// consumer; comparisons, where and cast are elementwise too.

// CHECK-LABEL: func.func @broadcast_producer(
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_exp" ins(%arg0, %arg1 : tensor<16xf32>, tensor<8x16xf32>) kind("pointwise") {
// CHECK: kiln.exp
// CHECK: kiln.add
// CHECK: kiln.greater
// CHECK: kiln.where
// CHECK: kiln.cast
// CHECK: kiln.yield %{{.*}} : tensor<8x16xf16>
// CHECK-NEXT: } -> (tensor<8x16xf16>)
// CHECK-NOT: kiln.fusion
// CHECK: return %[[R]]
func.func @broadcast_producer(%b: tensor<16xf32>, %x: tensor<8x16xf32>) -> tensor<8x16xf16> {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %0 = kiln.exp %b : (tensor<16xf32>) -> tensor<16xf32>
  %1 = kiln.add %x, %0 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %2 = kiln.greater %1, %zero : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xi1>
  %3 = kiln.where %2, %1, %zero : (tensor<8x16xi1>, tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %4 = kiln.cast %3 {to = f16} : (tensor<8x16xf32>) -> tensor<8x16xf16>
  return %4 : tensor<8x16xf16>
}

// -----

// Ops that may not enter a region (gather) split the chain; regions are
// numbered in program order and named after the ONNX op of their first
// elementwise op when the location names one.

// CHECK-LABEL: func.func @split_by_fallback(
// CHECK: kiln.fusion "k0_sigmoid"
// CHECK: kiln.sigmoid
// CHECK: kiln.gather
// CHECK: kiln.fusion "k1_neg"
// CHECK: kiln.neg
// CHECK: kiln.tanh
func.func @split_by_fallback(%x: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = kiln.sigmoid %x : (tensor<4x3xf32>) -> tensor<4x3xf32> loc(fused<"Sigmoid">["sig_0"("m.onnx":1:0)])
  %1 = kiln.gather %0, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %2 = kiln.neg %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = kiln.tanh %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}
