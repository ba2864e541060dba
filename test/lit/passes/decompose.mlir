// RUN: kiln-opt %s -kiln-decompose -split-input-file | FileCheck %s

// softmax: max, sub, exp, sum, div along the axis with keepdims.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[AX:.*]] = kiln.constant dense<1> : tensor<1xi64>
// CHECK: %[[M:.*]] = kiln.reduce_max %arg0, %[[AX]] {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<3x1x5xf32>
// CHECK: %[[D:.*]] = kiln.sub %arg0, %[[M]]
// CHECK: %[[E:.*]] = kiln.exp %[[D]]
// CHECK: %[[S:.*]] = kiln.reduce_sum %[[E]]
// CHECK: %[[Y:.*]] = kiln.div %[[E]], %[[S]]
// CHECK-NOT: kiln.softmax
// CHECK: return %[[Y]]
func.func @softmax(%arg0: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %0 = kiln.softmax %arg0 {axis = 1 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK: %[[M:.*]] = kiln.reduce_max %arg0
// CHECK: %[[D:.*]] = kiln.sub %arg0, %[[M]]
// CHECK: %[[E:.*]] = kiln.exp %[[D]]
// CHECK: %[[S:.*]] = kiln.reduce_sum %[[E]]
// CHECK: %[[L:.*]] = kiln.log %[[S]]
// CHECK: %[[Y:.*]] = kiln.sub %[[D]], %[[L]]
// CHECK: return %[[Y]]
func.func @log_softmax(%arg0: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %0 = kiln.log_softmax %arg0 {axis = 1 : i64} : (tensor<3x4xf64>) -> tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// -----

// layer_norm produces y, mean and inv_std_dev.
// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[AX:.*]] = kiln.constant dense<[1, 2]> : tensor<2xi64>
// CHECK: %[[MEAN:.*]] = kiln.reduce_mean %arg0, %[[AX]] {{.*}} -> tensor<2x1x1xf32>
// CHECK: %[[D:.*]] = kiln.sub %arg0, %[[MEAN]]
// CHECK: %[[SQ:.*]] = kiln.mul %[[D]], %[[D]]
// CHECK: %[[VAR:.*]] = kiln.reduce_mean %[[SQ]]
// CHECK: %[[EPS:.*]] = kiln.constant dense<9.99999974E-6> : tensor<f32>
// CHECK: %[[VE:.*]] = kiln.add %[[VAR]], %[[EPS]]
// CHECK: %[[SD:.*]] = kiln.sqrt %[[VE]]
// CHECK: %[[INV:.*]] = kiln.reciprocal %[[SD]]
// CHECK: %[[N:.*]] = kiln.mul %[[D]], %[[INV]]
// CHECK: %[[SC:.*]] = kiln.mul %[[N]], %arg1
// CHECK: %[[Y:.*]] = kiln.add %[[SC]], %arg2
// CHECK: return %[[Y]], %[[MEAN]], %[[INV]]
func.func @layer_norm(%arg0: tensor<2x3x4xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %y, %mean, %inv = kiln.layer_norm %arg0, %arg1, %arg2 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %y, %mean, %inv : tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

// -----

// f16 is computed in f32 (as the reference computes its statistics) and
// rounded once; the f32 statistics results need no cast. Dynamic shapes stay.
// CHECK-LABEL: func.func @half_and_dynamic
// CHECK: %[[X:.*]] = kiln.cast %arg0 {to = f32} : (tensor<2x4xf16>) -> tensor<2x4xf32>
// CHECK: kiln.reduce_mean %[[X]]
// CHECK: %[[Y:.*]] = kiln.add {{.*}} -> tensor<2x4xf32>
// CHECK-NEXT: %[[H:.*]] = kiln.cast %[[Y]] {to = f16} : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CHECK-NOT: kiln.layer_norm
// CHECK: kiln.softmax
// CHECK: return %[[H]]
func.func @half_and_dynamic(%arg0: tensor<2x4xf16>, %arg1: tensor<4xf16>, %arg2: tensor<?x4xf32>) -> (tensor<2x4xf16>, tensor<?x4xf32>) {
  %y, %mean, %inv = kiln.layer_norm %arg0, %arg1, %arg1 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4xf16>, tensor<4xf16>, tensor<4xf16>) -> (tensor<2x4xf16>, tensor<2x1xf32>, tensor<2x1xf32>)
  %s = kiln.softmax %arg2 {axis = 1 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y, %s : tensor<2x4xf16>, tensor<?x4xf32>
}

// -----

// split: one slice per result (any dtype).
// CHECK-LABEL: func.func @split
// CHECK: %[[A:.*]] = kiln.slice %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> tensor<3x2xi64>
// CHECK: %[[B:.*]] = kiln.slice %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> tensor<3x4xi64>
// CHECK-NOT: kiln.split
// CHECK: return %[[A]], %[[B]]
func.func @split(%arg0: tensor<3x6xi64>) -> (tensor<3x2xi64>, tensor<3x4xi64>) {
  %s = kiln.constant dense<[2, 4]> : tensor<2xi64>
  %a, %b = kiln.split %arg0, %s {axis = 1 : i64} : (tensor<3x6xi64>, tensor<2xi64>) -> (tensor<3x2xi64>, tensor<3x4xi64>)
  return %a, %b : tensor<3x2xi64>, tensor<3x4xi64>
}

// -----

// rms_norm.
// CHECK-LABEL: func.func @rms_norm
// CHECK: %[[SQ:.*]] = kiln.mul %arg0, %arg0
// CHECK: %[[MS:.*]] = kiln.reduce_mean %[[SQ]]
// CHECK: kiln.add %[[MS]]
// CHECK: kiln.sqrt
// CHECK: %[[INV:.*]] = kiln.reciprocal
// CHECK: %[[N:.*]] = kiln.mul %arg0, %[[INV]]
// CHECK: %[[Y:.*]] = kiln.mul %[[N]], %arg1
// CHECK: return %[[Y]]
func.func @rms_norm(%arg0: tensor<2x4xf32>, %arg1: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = kiln.rms_norm %arg0, %arg1 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// batch_norm with run-time parameters: per-channel vectors become [C, 1, 1].
// CHECK-LABEL: func.func @batch_norm
// CHECK: %[[SH:.*]] = kiln.constant dense<[3, 1, 1]> : tensor<3xi64>
// CHECK: %[[SC:.*]] = kiln.reshape %arg1, %[[SH]] {{.*}} -> tensor<3x1x1xf32>
// CHECK: kiln.reshape %arg2
// CHECK: %[[MEAN:.*]] = kiln.reshape %arg3
// CHECK: %[[VAR:.*]] = kiln.reshape %arg4
// CHECK: %[[VE:.*]] = kiln.add %[[VAR]]
// CHECK: %[[SD:.*]] = kiln.sqrt %[[VE]]
// CHECK: %[[A:.*]] = kiln.div %[[SC]], %[[SD]]
// CHECK: %[[D:.*]] = kiln.sub %arg0, %[[MEAN]]
// CHECK: %[[M:.*]] = kiln.mul %[[D]], %[[A]]
// CHECK: %[[Y:.*]] = kiln.add %[[M]]
// CHECK: return %[[Y]]
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// batch_norm with constant parameters: the per-channel factor folds.
// CHECK-LABEL: func.func @batch_norm_const
// CHECK-DAG: %[[A:.*]] = kiln.constant dense<{{\[}}[5.000000e-01], [1.000000e+00]]> : tensor<2x1xf32>
// CHECK-DAG: %[[MEAN:.*]] = kiln.constant dense<{{\[}}[1.000000e+00], [0.000000e+00]]> : tensor<2x1xf32>
// CHECK-DAG: %[[B:.*]] = kiln.constant dense<{{\[}}[0.000000e+00], [1.000000e+00]]> : tensor<2x1xf32>
// CHECK: %[[D:.*]] = kiln.sub %arg0, %[[MEAN]]
// CHECK: %[[M:.*]] = kiln.mul %[[D]], %[[A]]
// CHECK: %[[Y:.*]] = kiln.add %[[M]], %[[B]]
// CHECK: return %[[Y]]
func.func @batch_norm_const(%x: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %s = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = kiln.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %m = kiln.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %v = kiln.constant dense<[4.0, 4.0]> : tensor<2xf32>
  %0 = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<1x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// group_norm reshapes to [N, G, C/G * spatial] for the statistics.
// CHECK-LABEL: func.func @group_norm
// CHECK: %[[G:.*]] = kiln.reshape %arg0, {{.*}} -> tensor<2x2x18xf32>
// CHECK: kiln.reduce_mean %[[G]], {{.*}} -> tensor<2x2x1xf32>
// CHECK: %[[N:.*]] = kiln.mul {{.*}} : (tensor<2x2x18xf32>, tensor<2x2x1xf32>)
// CHECK: %[[BACK:.*]] = kiln.reshape %[[N]], {{.*}} -> tensor<2x4x3x3xf32>
// CHECK: %[[S:.*]] = kiln.reshape %arg1, {{.*}} -> tensor<4x1x1xf32>
// CHECK: %[[B:.*]] = kiln.reshape %arg2, {{.*}} -> tensor<4x1x1xf32>
// CHECK: %[[M:.*]] = kiln.mul %[[BACK]], %[[S]]
// CHECK: %[[Y:.*]] = kiln.add %[[M]], %[[B]]
// CHECK: return %[[Y]]
func.func @group_norm(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %0 = kiln.group_norm %x, %s, %b {epsilon = 9.99999974E-6 : f32, num_groups = 2 : i64} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// -----

// instance_norm normalizes over the spatial dims.
// CHECK-LABEL: func.func @instance_norm
// CHECK: %[[AX:.*]] = kiln.constant dense<[2, 3]> : tensor<2xi64>
// CHECK: kiln.reduce_mean %arg0, %[[AX]] {{.*}} -> tensor<2x3x1x1xf32>
// CHECK-NOT: kiln.instance_norm
func.func @instance_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = kiln.instance_norm %x, %s, %b {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// gelu, erf and tanh forms; other activations and library ops stay.
// CHECK-LABEL: func.func @gelu
// CHECK: kiln.erf
// CHECK: kiln.tanh
// CHECK-NOT: kiln.gelu
// CHECK: kiln.hard_swish
// CHECK: kiln.matmul
func.func @gelu(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = kiln.gelu %x {approximate = "none"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = kiln.gelu %x {approximate = "tanh"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kiln.hard_swish %x : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = kiln.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1, %2, %3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Ops inside a fusion region are left alone.
// CHECK-LABEL: func.func @fusion
// CHECK: kiln.fusion
// CHECK: kiln.gelu
func.func @fusion(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = kiln.fusion "k0_gelu" ins(%arg0 : tensor<2x4xf32>) kind("pointwise") {
  ^bb0(%x: tensor<2x4xf32>):
    %a = kiln.gelu %x {approximate = "none"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    kiln.yield %a : tensor<2x4xf32>
  } -> (tensor<2x4xf32>)
  return %r : tensor<2x4xf32>
}
