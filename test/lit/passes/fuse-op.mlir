// kiln.fusion parses, verifies, prints and round-trips (custom and generic
// form, with locations); the inner ops keep their ONNX locations.

// RUN: kiln-opt %s -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file -mlir-print-debuginfo > %t.1 && kiln-opt %t.1 -split-input-file -mlir-print-debuginfo > %t.2 && diff %t.1 %t.2
// RUN: kiln-opt %s -split-input-file -mlir-print-op-generic | kiln-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT: %[[R:.*]]:2 = kiln.fusion "k0_softmax" ins(%arg0 : tensor<8x16xf32>) kind("reduction") {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8x16xf32>):
// CHECK:   kiln.yield %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x1xf32>
// CHECK-NEXT: } -> (tensor<8x16xf32>, tensor<8x1xf32>)
func.func @softmax(%a: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x1xf32>) {
  %r:2 = kiln.fusion "k0_softmax" ins(%a : tensor<8x16xf32>) kind("reduction") {
  ^bb0(%x: tensor<8x16xf32>):
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32> loc(#sm)
    %d = kiln.sub %x, %m : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32> loc(#sm)
    %e = kiln.exp %d : (tensor<8x16xf32>) -> tensor<8x16xf32> loc(#sm)
    %s = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32> loc(#sm)
    %y = kiln.div %e, %s : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32> loc(#sm)
    kiln.yield %y, %m : tensor<8x16xf32>, tensor<8x1xf32>
  } -> (tensor<8x16xf32>, tensor<8x1xf32>)
  return %r#0, %r#1 : tensor<8x16xf32>, tensor<8x1xf32>
}
#sm = loc(fused<"Softmax">["softmax_0"("model.onnx":3:0)])

// -----

// No inputs (only constants inside) and extra attributes.

// CHECK-LABEL: func.func @no_inputs(
// CHECK-NEXT: kiln.fusion "k0_neg" kind("pointwise") attributes {note = "x"} {
// CHECK-NEXT: kiln.constant dense<1.000000e+00> : tensor<4xf32>
func.func @no_inputs() -> tensor<4xf32> {
  %r = kiln.fusion "k0_neg" kind("pointwise") attributes {note = "x"} {
    %c = kiln.constant dense<1.0> : tensor<4xf32>
    %n = kiln.neg %c : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %n : tensor<4xf32>
  } -> (tensor<4xf32>)
  return %r : tensor<4xf32>
}
