// A module as the tracer writes it: kiln.source on the module, kiln.graph on
// the function, kiln.name / kiln.weight on arguments and results, fused
// locations naming the ONNX node. It parses, verifies and round-trips, with
// locations (print -> parse -> print is identical).

// RUN: kiln-opt %s -mlir-print-debuginfo | FileCheck %s
// RUN: kiln-opt %s -mlir-print-debuginfo > %t.1 && kiln-opt %t.1 -mlir-print-debuginfo > %t.2 && diff %t.1 %t.2
// RUN: kiln-opt %s -mlir-print-debuginfo -mlir-print-op-generic | kiln-opt -mlir-print-debuginfo | FileCheck %s

// CHECK: module attributes {kiln.source = "model.onnx"}
// CHECK: func.func @main(%arg0: tensor<2x4xf32> {kiln.name = "x"}{{.*}}, %arg1: tensor<4xf32> {kiln.name = "ln.weight", kiln.weight}{{.*}}) -> (tensor<2x4xf32> {kiln.name = "y"}) attributes {kiln.graph}
// CHECK: %0 = kiln.add %arg0, %arg1 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc(#[[LOC:loc[0-9]*]])
// CHECK: return %0 : tensor<2x4xf32>
// CHECK-DAG: #[[NODE:loc[0-9]*]] = loc("add_0"(#{{loc[0-9]*}}))
// CHECK-DAG: #{{loc[0-9]*}} = loc("model.onnx":1:0)
// CHECK-DAG: #[[LOC]] = loc(fused<"Add">[#[[NODE]]])

module attributes {kiln.source = "model.onnx"} {
  func.func @main(%arg0: tensor<2x4xf32> {kiln.name = "x"}, %arg1: tensor<4xf32> {kiln.name = "ln.weight", kiln.weight}) -> (tensor<2x4xf32> {kiln.name = "y"}) attributes {kiln.graph} {
    %0 = kiln.add %arg0, %arg1 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc(#loc1)
    return %0 : tensor<2x4xf32>
  }
}
#loc1 = loc(fused<"Add">["add_0"("model.onnx":1:0)])
