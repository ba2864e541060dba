// kiln-fuse: a reduction with its pointwise prologue and epilogue is one
// "reduction" region. Decomposed softmax, log-softmax, layer norm and RMS
// norm each become ONE kernel; batch norm in inference (no reduction) is one
// pointwise kernel with its parameter reshapes as index arithmetic.

// RUN: kiln-opt %s -kiln-fuse -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-fuse -split-input-file -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_softmax" ins(%arg0 : tensor<8x16xf32>) kind("reduction") {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8x16xf32>):
// CHECK-NEXT:   %[[AXES:.*]] = kiln.constant dense<-1> : tensor<1xi64>
// CHECK-NEXT:   %[[MAX:.*]] = kiln.reduce_max %[[X]], %[[AXES]]
// CHECK-NEXT:   %[[D:.*]] = kiln.sub %[[X]], %[[MAX]]
// CHECK-NEXT:   %[[E:.*]] = kiln.exp %[[D]]
// CHECK-NEXT:   %[[SUM:.*]] = kiln.reduce_sum %[[E]], %[[AXES]]
// CHECK-NEXT:   %[[Y:.*]] = kiln.div %[[E]], %[[SUM]]
// CHECK-NEXT:   kiln.yield %[[Y]] : tensor<8x16xf32>
// CHECK-NEXT: } -> (tensor<8x16xf32>)
// CHECK-NEXT: return %[[R]]
// The inner ops keep the ONNX node's location.
// LOC-LABEL: func.func @softmax(
// LOC: kiln.reduce_max {{.*}} loc(#[[SM:loc[0-9]*]])
// LOC: kiln.div {{.*}} loc(#[[SM]])
// LOC-DAG: #[[NODE:loc[0-9]*]] = loc("softmax_0"(#{{loc[0-9]*}}))
// LOC-DAG: #[[SM]] = loc(fused<"Softmax">[#[[NODE]]])
func.func @softmax(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %axes = kiln.constant dense<-1> : tensor<1xi64> loc(#sm)
  %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32> loc(#sm)
  %d = kiln.sub %x, %m : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32> loc(#sm)
  %e = kiln.exp %d : (tensor<8x16xf32>) -> tensor<8x16xf32> loc(#sm)
  %s = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32> loc(#sm)
  %y = kiln.div %e, %s : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32> loc(#sm)
  return %y : tensor<8x16xf32>
}
#sm = loc(fused<"Softmax">["softmax_0"("model.onnx":3:0)])

// -----

// CHECK-LABEL: func.func @log_softmax(
// CHECK-NEXT: kiln.fusion "k0_reduce_max" ins(%arg0 : tensor<2x4x8xf32>) kind("reduction") {
// CHECK-COUNT-2: kiln.reduce_
// CHECK: kiln.log
// CHECK: kiln.sub
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.fusion
func.func @log_softmax(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %axes = kiln.constant dense<2> : tensor<1xi64>
  %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x4x8xf32>, tensor<1xi64>) -> tensor<2x4x1xf32>
  %d = kiln.sub %x, %m : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %e = kiln.exp %d : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x4x8xf32>, tensor<1xi64>) -> tensor<2x4x1xf32>
  %l = kiln.log %s : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %y = kiln.sub %d, %l : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Layer norm: two reductions over the same axes; scale and bias are operands,
// epsilon (rank 0) is cloned in; the mean is also returned (a result).

// CHECK-LABEL: func.func @layer_norm(
// CHECK-NEXT: %[[R:.*]]:2 = kiln.fusion "k0_layer_normalization" ins(%arg0, %arg1, %arg2 : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) kind("reduction") {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<16xf32>, %{{.*}}: tensor<16xf32>):
// CHECK-DAG: kiln.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-DAG: kiln.constant dense<-1> : tensor<1xi64>
// CHECK: %[[MEAN:.*]] = kiln.reduce_mean
// CHECK: kiln.reduce_mean
// CHECK: kiln.sqrt
// CHECK: %[[Y:.*]] = kiln.add
// CHECK-NEXT: kiln.yield %[[MEAN]], %[[Y]] : tensor<8x1xf32>, tensor<8x16xf32>
// CHECK-NEXT: } -> (tensor<8x1xf32>, tensor<8x16xf32>)
// CHECK-NEXT: return %[[R]]#1, %[[R]]#0
func.func @layer_norm(%x: tensor<8x16xf32>, %scale: tensor<16xf32>, %bias: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x1xf32>) {
  %axes = kiln.constant dense<-1> : tensor<1xi64> loc(#ln)
  %eps = kiln.constant dense<1.0e-5> : tensor<f32> loc(#ln)
  %mean = kiln.reduce_mean %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32> loc(#ln)
  %d = kiln.sub %x, %mean : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32> loc(#ln)
  %sq = kiln.mul %d, %d : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32> loc(#ln)
  %var = kiln.reduce_mean %sq, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32> loc(#ln)
  %ve = kiln.add %var, %eps : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xf32> loc(#ln)
  %std = kiln.sqrt %ve : (tensor<8x1xf32>) -> tensor<8x1xf32> loc(#ln)
  %n = kiln.div %d, %std : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32> loc(#ln)
  %s = kiln.mul %n, %scale : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32> loc(#ln)
  %y = kiln.add %s, %bias : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32> loc(#ln)
  return %y, %mean : tensor<8x16xf32>, tensor<8x1xf32>
}
#ln = loc(fused<"LayerNormalization">["ln_0"("model.onnx":5:0)])

// -----

// RMS norm over the last axis, keepdims = 0 with an unsqueeze (a view) back.

// CHECK-LABEL: func.func @rms_norm(
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_reduce_mean" ins(%arg0, %arg1 : tensor<4x32xf32>, tensor<32xf32>) kind("reduction") {
// CHECK: kiln.reduce_mean {{.*}} -> tensor<4xf32>
// CHECK: kiln.unsqueeze
// CHECK: kiln.sqrt
// CHECK: kiln.yield {{.*}} : tensor<4x32xf32>
// CHECK-NOT: kiln.fusion
func.func @rms_norm(%x: tensor<4x32xf32>, %scale: tensor<32xf32>) -> tensor<4x32xf32> {
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %eps = kiln.constant dense<1.0e-6> : tensor<f32>
  %sq = kiln.mul %x, %x : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %ms = kiln.reduce_mean %sq, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x32xf32>, tensor<1xi64>) -> tensor<4xf32>
  %u = kiln.unsqueeze %ms, %axes : (tensor<4xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %a = kiln.add %u, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = kiln.sqrt %a : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = kiln.div %x, %r : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %y = kiln.mul %n, %scale : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// Batch norm in inference: the per-channel parameters are reshaped to
// [C, 1, 1] (views inside the region); one pointwise kernel.

// CHECK-LABEL: func.func @batch_norm(
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_sub" ins(%arg3, %arg4, %arg1, %arg2, %arg0 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4x4xf32>) kind("pointwise") {
// CHECK-COUNT-4: kiln.reshape
// CHECK: kiln.yield {{.*}} : tensor<2x3x4x4xf32>
// CHECK-NOT: kiln.fusion
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %scale: tensor<3xf32>, %bias: tensor<3xf32>, %mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %shape = kiln.constant dense<[3, 1, 1]> : tensor<3xi64>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reshape %mean, %shape {allowzero = 0 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3x1x1xf32>
  %v = kiln.reshape %var, %shape {allowzero = 0 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3x1x1xf32>
  %s = kiln.reshape %scale, %shape {allowzero = 0 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3x1x1xf32>
  %b = kiln.reshape %bias, %shape {allowzero = 0 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3x1x1xf32>
  %d = kiln.sub %x, %m : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %ve = kiln.add %v, %eps : (tensor<3x1x1xf32>, tensor<f32>) -> tensor<3x1x1xf32>
  %std = kiln.sqrt %ve : (tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %n = kiln.div %d, %std : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %sc = kiln.mul %n, %s : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %y = kiln.add %sc, %b : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}
