// RUN: kiln-opt %s -kiln-autocast -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-autocast="precision=f16 low-interface=true overrides=softmax=follow" -split-input-file | FileCheck %s --check-prefix=IO
// RUN: not kiln-opt %s -kiln-autocast="overrides=softmax=fast" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// The matmul in bf16 (its f32 input and weight cast once, the weight's cast
// folded or run at load later), the bias (a weight: weak) and the scale (a
// constant: weak) follow it, the softmax in f32, the residual with the
// softmax's f32 result in f32, the result cast back to its declared f32.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %arg0: tensor<4x16xf32>
// CHECK-SAME: -> (tensor<4x32xf32>
// CHECK-DAG: %[[B:.*]] = kiln.cast %arg2 {to = bf16}
// CHECK-DAG: %[[W:.*]] = kiln.cast %arg1 {to = bf16}
// CHECK-DAG: %[[X:.*]] = kiln.cast %arg0 {to = bf16}
// CHECK-DAG: %[[H:.*]] = kiln.cast %{{.*}} {to = bf16} : (tensor<f32>) -> tensor<bf16>
// CHECK: %[[M:.*]] = kiln.matmul %[[X]], %[[W]] : (tensor<4x16xbf16>, tensor<16x32xbf16>) -> tensor<4x32xbf16>
// CHECK: %[[A:.*]] = kiln.add %[[M]], %[[B]] : (tensor<4x32xbf16>, tensor<32xbf16>) -> tensor<4x32xbf16>
// CHECK: %[[S:.*]] = kiln.mul %[[A]], %[[H]] : (tensor<4x32xbf16>, tensor<bf16>) -> tensor<4x32xbf16>
// CHECK: %[[UP:.*]] = kiln.cast %[[S]] {to = f32}
// CHECK: %[[P:.*]] = kiln.softmax %[[UP]] {axis = 1 : i64} : (tensor<4x32xf32>) -> tensor<4x32xf32>
// CHECK: %[[R:.*]] = kiln.add %[[P]], %[[UP]] : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
// CHECK: return %[[R]]
//
// With f16, the interface low too and softmax following its operand: every
// op in f16, the signature changed, no cast to f32 left.
// IO-LABEL: func.func @mlp(
// IO-SAME: %arg0: tensor<4x16xf16> {kiln.name = "x"}, %arg1: tensor<16x32xf32> {kiln.name = "w", kiln.weight}
// IO-SAME: -> (tensor<4x32xf16> {kiln.name = "y"})
// IO: kiln.matmul %arg0, %{{.*}} : (tensor<4x16xf16>, tensor<16x32xf16>) -> tensor<4x32xf16>
// IO: kiln.softmax %{{.*}} : (tensor<4x32xf16>) -> tensor<4x32xf16>
// IO-NOT: {to = f32}
// IO: return %{{.*}} : tensor<4x32xf16>
//
// BAD: error: kiln-autocast: override 'softmax=fast' is not NAME=low|f32|follow
func.func @mlp(%x: tensor<4x16xf32> {kiln.name = "x"}, %w: tensor<16x32xf32> {kiln.name = "w", kiln.weight}, %b: tensor<32xf32> {kiln.name = "b", kiln.weight}) -> (tensor<4x32xf32> {kiln.name = "y"}) attributes {kiln.graph} {
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %m = kiln.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %a = kiln.add %m, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %h = kiln.mul %a, %half : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %s = kiln.softmax %h {axis = 1 : i64} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %r = kiln.add %s, %h : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// A value read by two matmuls is cast once; an elementwise op of two strong
// f32 inputs stays f32; f64 values, integer operands and the model's own
// casts (which read their operand in its original type) are left alone.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-1: kiln.cast %arg0 {to = bf16}
// CHECK-NOT: kiln.cast %arg0
// CHECK: kiln.add %arg0, %arg1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: kiln.mul %arg2, %arg2 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
// CHECK: kiln.cast %{{.*}} {to = f32} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: kiln.gather
// CHECK-SAME: (tensor<4x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
func.func @kept(%x: tensor<4x4xf32> {kiln.name = "x"}, %y: tensor<4x4xf32> {kiln.name = "y"}, %z: tensor<4x4xf64> {kiln.name = "z"}, %i: tensor<2xi64> {kiln.name = "i"}) -> (tensor<4x4xf32> {kiln.name = "p"}, tensor<4x4xf32> {kiln.name = "q"}, tensor<4x4xf32> {kiln.name = "s"}, tensor<4x4xf64> {kiln.name = "t"}, tensor<2x4xf32> {kiln.name = "g"}) attributes {kiln.graph} {
  %p = kiln.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %q = kiln.matmul %x, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = kiln.add %x, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = kiln.mul %z, %z : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %c = kiln.cast %q {to = f32} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = kiln.gather %c, %i {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %p, %q, %s, %t, %g : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf64>, tensor<2x4xf32>
}

// -----

// An op that takes its f32 parameters only as f32 (Resize's scales) still
// follows its low operand: the up-sampling of a bf16 convolution's output
// runs in bf16, its scales stay f32 (U-Net's decoder took an f32 detour,
// with its skip connection, before).
// CHECK-LABEL: func.func @resize_params(
// CHECK-NOT: kiln.cast %{{.*}} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK: %[[C:.*]] = kiln.conv {{.*}} -> tensor<1x4x3x3xbf16>
// CHECK: kiln.resize %[[C]], %{{.*}}, %{{.*}} {{.*}} : (tensor<1x4x3x3xbf16>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x4x6x6xbf16>
func.func @resize_params(%x: tensor<1x4x3x3xf32> {kiln.name = "x"}, %w: tensor<4x4x1x1xf32> {kiln.name = "w", kiln.weight}) -> (tensor<1x4x6x6xf32> {kiln.name = "y"}) attributes {kiln.graph} {
  %s = kiln.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %none = kiln.constant dense<> : tensor<0xi64>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x3x3xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %y = kiln.resize %c, %s, %none {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "linear", nearest_mode = "round_prefer_floor", roi = array<f32>} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}
