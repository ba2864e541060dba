// RUN: kiln-opt %s -kiln-plan-graph-breaks -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-plan-graph-breaks=target=cuda -split-input-file | FileCheck %s --check-prefix=CUDA

// No break: the graph stays one graph (the fast path), untouched.
// CHECK-LABEL: func.func @main
// CHECK-SAME: attributes {kiln.graph}
// CHECK-NEXT: kiln.relu
// CHECK-NEXT: return
// CHECK-NOT: func.func @graph_
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}) -> tensor<4xf32> attributes {kiln.graph} {
  %0 = kiln.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// NonZero: its output size depends on the data, and the ops that read it
// have dynamic operands; they run eagerly as one break, between two graphs.
// The independent neg after the break is scheduled into the first graph.
// CHECK-LABEL: func.func @main
// CHECK-SAME: attributes {kiln.program}
// CHECK: %[[G0:.*]]:2 = call @graph_0(%arg0) : (tensor<8xf32>) -> (tensor<8xi1>, tensor<8xf32>)
// CHECK: %[[E:.*]] = kiln.eager "data-dependent-shape" ins(%[[G0]]#0, %arg0 : tensor<8xi1>, tensor<8xf32>)
// CHECK-SAME: detail = "output #0 is i64[1, ?]: its size depends on the values of the data"
// CHECK: kiln.non_zero
// CHECK: kiln.squeeze
// CHECK: kiln.gather
// CHECK: kiln.reduce_sum
// CHECK: kiln.yield
// CHECK: } -> (tensor<1xf32>)
// CHECK: %[[G1:.*]] = call @graph_1(%[[G0]]#1, %[[E]])
// CHECK: return %[[G1]]
// CHECK: func.func @graph_0(%arg0: tensor<8xf32> {kiln.name = "x"})
// CHECK-SAME: -> (tensor<8xi1> {kiln.name = "mask"}, tensor<8xf32> {kiln.name = "negated"}) attributes {kiln.graph}
// CHECK: kiln.greater
// CHECK: kiln.neg
// CHECK: func.func @graph_1
// CHECK: kiln.mul
func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> tensor<8xf32> attributes {kiln.graph} {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %axis = kiln.constant dense<0> : tensor<1xi64>
  %m = kiln.greater %x, %zero : (tensor<8xf32>, tensor<f32>) -> tensor<8xi1> loc(fused<"Greater">["mask"("m.onnx":1:0)])
  %nz = kiln.non_zero %m : (tensor<8xi1>) -> tensor<1x?xi64> loc(fused<"NonZero">["nz"("m.onnx":2:0)])
  %i = kiln.squeeze %nz, %axis : (tensor<1x?xi64>, tensor<1xi64>) -> tensor<?xi64> loc(fused<"Squeeze">["sq"("m.onnx":3:0)])
  %g = kiln.gather %x, %i {axis = 0 : i64} : (tensor<8xf32>, tensor<?xi64>) -> tensor<?xf32> loc(fused<"Gather">["g"("m.onnx":4:0)])
  %n = kiln.neg %x : (tensor<8xf32>) -> tensor<8xf32> loc(fused<"Neg">["negated"("m.onnx":5:0)])
  %s = kiln.reduce_sum %g, %axis {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<?xf32>, tensor<1xi64>) -> tensor<1xf32> loc(fused<"ReduceSum">["s"("m.onnx":6:0)])
  %y = kiln.mul %n, %s : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32> loc(fused<"Mul">["y"("m.onnx":7:0)])
  return %y : tensor<8xf32>
}

// -----

// An op no code generator supports (EagerOnly): a break on both targets.
// CHECK-LABEL: func.func @main
// CHECK: call @graph_0
// CHECK: kiln.eager "unsupported-op"
// CHECK-SAME: detail = "no code generator of the cpu target compiles kiln.det (ONNX Det) yet"
// CHECK: kiln.det
// CHECK: call @graph_1
// CUDA: kiln.eager "unsupported-op"
// CUDA-SAME: detail = "no code generator of the cuda target compiles kiln.det (ONNX Det) yet"
func.func @main(%x: tensor<2x3x3xf32> {kiln.name = "x"}) -> tensor<2xf32> attributes {kiln.graph} {
  %a = kiln.exp %x : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %d = kiln.det %a : (tensor<2x3x3xf32>) -> tensor<2xf32> loc(fused<"Det">["det"("m.onnx":2:0)])
  %y = kiln.tanh %d : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// kiln.if on data: glue in the program; each branch is planned on its own,
// and may read values from above (here %h, an output of graph_0).
// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]]:2 = call @graph_0(%arg0)
// CHECK: %[[R:.*]] = kiln.if %[[G]]#{{[01]}} : tensor<i1> -> (tensor<4xf32>) {
// CHECK:   %[[T:.*]] = func.call @graph_1(%[[G]]#{{[01]}})
// CHECK:   kiln.yield %[[T]]
// CHECK: } else {
// CHECK:   %[[F:.*]] = func.call @graph_2(%[[G]]#{{[01]}})
// CHECK:   kiln.yield %[[F]]
// CHECK: }
// CHECK: call @graph_3(%[[R]])
// CHECK: func.func @graph_1
// CHECK: kiln.relu
// CHECK: func.func @graph_2
// CHECK: kiln.neg
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}) -> tensor<4xf32> attributes {kiln.graph} {
  %axes = kiln.constant dense<0> : tensor<1xi64>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %h = kiln.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = kiln.reduce_sum %x, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4xf32>, tensor<1xi64>) -> tensor<f32>
  %c = kiln.greater %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %r = kiln.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = kiln.relu %h : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %a : tensor<4xf32>
  } else {
    %b = kiln.neg %h : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %b : tensor<4xf32>
  }
  %y = kiln.sigmoid %r : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// kiln.loop: the body becomes a graph the runtime calls per iteration; the
// loop's scan output has a dynamic first dimension, so the op that reads it
// runs eagerly.
// CHECK-LABEL: func.func @main
// CHECK: %[[L:.*]]:2 = kiln.loop %arg1, %{{.*}}, %arg0
// CHECK: ^bb0(%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %[[ACC:.*]]: tensor<2xf32>):
// CHECK:   %[[N:.*]] = func.call @graph_0(%[[ACC]], %arg0)
// CHECK:   kiln.yield %[[C]], %[[N]], %[[N]]
// CHECK: kiln.eager "dynamic-shape" ins(%[[L]]#1 : tensor<?x2xf32>)
// CHECK-SAME: operand #0 is f32[?, 2], whose size is only known at run time (it comes from kiln.loop)
func.func @main(%x: tensor<2xf32> {kiln.name = "x"}, %n: tensor<i64> {kiln.name = "n"}) -> (tensor<2xf32>, tensor<2xf32>) attributes {kiln.graph} {
  %true = kiln.constant dense<true> : tensor<i1>
  %axes = kiln.constant dense<0> : tensor<1xi64>
  %r:2 = kiln.loop %n, %true, %x : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
    %next = kiln.add %acc, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %c, %next, %next : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  %s = kiln.reduce_sum %r#1, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<?x2xf32>, tensor<1xi64>) -> tensor<2xf32>
  return %r#0, %s : tensor<2xf32>, tensor<2xf32>
}
