// Kiln ops may be inlined (the glue between graphs calls graph functions);
// symbol-dce then removes the inlined private function.

// RUN: kiln-opt %s -inline -symbol-dce | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[A:.*]] = kiln.relu %arg0
// CHECK-NEXT: %[[B:.*]] = kiln.add %[[A]], %arg0
// CHECK-NEXT: return %[[B]]
// CHECK-NOT: func.func private @graph
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @graph(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func private @graph(%x: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.graph} {
  %0 = kiln.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.add %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
