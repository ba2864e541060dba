// kiln-autodiff: the forward graph @main (kiln.graph, loss first, parameters
// tagged kiln.trainable) becomes the joint graph (kiln.joint): the forward
// ops, the seed (a constant 1 tagged kiln.grad_seed), the backward ops the
// gradient rules build in reverse order, and the results loss, then
// "<param>.grad" per trainable parameter (tagged kiln.gradient_of).
// Errors: autodiff-invalid.mlir.

// RUN: kiln-opt %s -kiln-autodiff -split-input-file | FileCheck %s

// matmul + bias + tanh + square + mean: d/dw = x^T g, d/db = g summed over
// the broadcast rows, tanh' = 1 - y^2, mean' = 1/20.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x3xf32> {kiln.name = "x"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x5xf32> {kiln.name = "w", kiln.trainable}
// CHECK-SAME: %[[B:[^:]+]]: tensor<5xf32> {kiln.name = "b", kiln.trainable}
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<3x5xf32> {kiln.gradient_of = "w", kiln.name = "w.grad"}, tensor<5xf32> {kiln.gradient_of = "b", kiln.name = "b.grad"})
// CHECK-SAME: attributes {kiln.joint}
// The forward ops stay first, unchanged.
// CHECK-NEXT: %[[MM:.*]] = kiln.matmul %[[X]], %[[W]]
// CHECK-NEXT: %[[ADD:.*]] = kiln.add %[[MM]], %[[B]]
// CHECK-NEXT: %[[Y:.*]] = kiln.tanh %[[ADD]]
// CHECK-NEXT: %[[SQ:.*]] = kiln.mul %[[Y]], %[[Y]]
// CHECK-NEXT: %[[AXES:.*]] = kiln.constant dense<[0, 1]>
// CHECK-NEXT: %[[LOSS:.*]] = kiln.reduce_mean %[[SQ]], %[[AXES]]
// The seed, d loss / d loss = 1, then reduce_mean's rule: broadcast, 1/20.
// CHECK-NEXT: %[[SEED:.*]] = kiln.constant {kiln.grad_seed} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[G0:.*]] = kiln.expand %{{.*}}, %{{.*}} : (tensor<1x1xf32>, tensor<2xi64>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[N:.*]] = kiln.constant dense<5.000000e-02> : tensor<f32>
// CHECK-NEXT: %[[G1:.*]] = kiln.mul %[[G0]], %[[N]]
// mul's rule, both operands y: g y + g y.
// CHECK-NEXT: %[[P0:.*]] = kiln.mul %[[G1]], %[[Y]]
// CHECK-NEXT: %[[P1:.*]] = kiln.mul %[[G1]], %[[Y]]
// CHECK-NEXT: %[[G2:.*]] = kiln.add %[[P0]], %[[P1]]
// tanh's rule: g (1 - y^2).
// CHECK-NEXT: %[[YY:.*]] = kiln.mul %[[Y]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[D:.*]] = kiln.sub %[[ONE]], %[[YY]]
// CHECK-NEXT: %[[G3:.*]] = kiln.mul %[[G2]], %[[D]]
// add's rule: the bias gradient is summed over the broadcast dim, then
// reshaped to the bias's shape.
// CHECK-NEXT: %[[R0:.*]] = kiln.constant dense<0> : tensor<1xi64>
// CHECK-NEXT: %[[S:.*]] = kiln.reduce_sum %[[G3]], %[[R0]] {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x5xf32>, tensor<1xi64>) -> tensor<1x5xf32>
// CHECK-NEXT: %[[SH:.*]] = kiln.constant dense<5> : tensor<1xi64>
// CHECK-NEXT: %[[GB:.*]] = kiln.reshape %[[S]], %[[SH]] {{.*}}: (tensor<1x5xf32>, tensor<1xi64>) -> tensor<5xf32>
// matmul's rule: d/dw = x^T g.
// CHECK-NEXT: %[[XT:.*]] = kiln.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[GW:.*]] = kiln.matmul %[[XT]], %[[G3]] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: return %[[LOSS]], %[[GW]], %[[GB]] : tensor<f32>, tensor<3x5xf32>, tensor<5xf32>
// x is not trainable: no gradient of it is built.
// CHECK-NOT: kiln.transpose %[[W]]
module {
  func.func @main(%x: tensor<4x3xf32> {kiln.name = "x"}, %w: tensor<3x5xf32> {kiln.name = "w", kiln.trainable}, %b: tensor<5xf32> {kiln.name = "b", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
    %0 = kiln.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
    %1 = kiln.add %0, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
    %2 = kiln.tanh %1 : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %3 = kiln.mul %2, %2 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
    %axes = kiln.constant dense<[0, 1]> : tensor<2xi64>
    %4 = kiln.reduce_mean %3, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x5xf32>, tensor<2xi64>) -> tensor<f32>
    return %4 : tensor<f32>
  }
}

// -----

// Broadcasting in the middle of the shape: a 3x1 scale against 2x3x4 is
// reduced over dims 0 and 2 (keepdims) and reshaped back to 3x1. A parameter
// used twice gets the sum of both gradients; one the loss does not depend
// on gets a zero gradient.
// CHECK-LABEL: func.func @bcast(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32> {kiln.name = "x"}
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<3x1xf32> {kiln.gradient_of = "s", kiln.name = "s.grad"}, tensor<4xf32> {kiln.gradient_of = "unused", kiln.name = "unused.grad"})
// CHECK: %[[SEED:.*]] = kiln.constant {kiln.grad_seed} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[G:.*]] = kiln.expand %{{.*}}, %{{.*}} : (tensor<1x1x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
// From the add: g summed over dims 0, 2.
// CHECK-NEXT: %[[A0:.*]] = kiln.constant dense<[0, 2]> : tensor<2xi64>
// CHECK-NEXT: %[[A1:.*]] = kiln.reduce_sum %[[G]], %[[A0]] {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[A2:.*]] = kiln.constant dense<[3, 1]> : tensor<2xi64>
// CHECK-NEXT: %[[GA:.*]] = kiln.reshape %[[A1]], %[[A2]] {{.*}} -> tensor<3x1xf32>
// From the mul: g x summed likewise.
// CHECK-NEXT: %[[M0:.*]] = kiln.mul %[[G]], %[[X]]
// CHECK-NEXT: %[[M1:.*]] = kiln.constant dense<[0, 2]> : tensor<2xi64>
// CHECK-NEXT: %[[M2:.*]] = kiln.reduce_sum %[[M0]], %[[M1]] {{.*}} -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[M3:.*]] = kiln.constant dense<[3, 1]> : tensor<2xi64>
// CHECK-NEXT: %[[GM:.*]] = kiln.reshape %[[M2]], %[[M3]] {{.*}} -> tensor<3x1xf32>
// CHECK-NEXT: %[[GS:.*]] = kiln.add %[[GA]], %[[GM]] : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
// CHECK-NEXT: %[[Z:.*]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %{{.*}}, %[[GS]], %[[Z]] : tensor<f32>, tensor<3x1xf32>, tensor<4xf32>
func.func @bcast(%x: tensor<2x3x4xf32> {kiln.name = "x"}, %s: tensor<3x1xf32> {kiln.name = "s", kiln.trainable}, %u: tensor<4xf32> {kiln.name = "unused", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %0 = kiln.mul %x, %s : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = kiln.add %0, %s : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %axes = kiln.constant dense<[0, 1, 2]> : tensor<3xi64>
  %2 = kiln.reduce_sum %1, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// kiln.packed_attention's rule (flash attention's backward): delta, each
// query row's sum(grad * output) in f32, summed over D of [B, T, H, D] and
// transposed to lse's [B, H, T], then one kiln.packed_attention_grad
// reading qkv and the forward's lse; its result is qkv's gradient.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<1x16x96xbf16> {kiln.gradient_of = "qkv", kiln.name = "qkv.grad"})
// CHECK: %[[O:[^,]*]], %[[LSE:.*]] = kiln.packed_attention %arg0 {causal = 1 : i64, heads = 2 : i64, scale = 2.500000e-01 : f32}
// CHECK: kiln.grad_seed
// CHECK: %[[GF:.*]] = kiln.cast %[[G:.*]] {to = f32} : (tensor<1x16x2x16xbf16>) -> tensor<1x16x2x16xf32>
// CHECK-NEXT: %[[OF:.*]] = kiln.cast %[[O]] {to = f32} : (tensor<1x16x2x16xbf16>) -> tensor<1x16x2x16xf32>
// CHECK-NEXT: %[[M:.*]] = kiln.mul %[[GF]], %[[OF]]
// CHECK: %[[S:.*]] = kiln.reduce_sum %[[M]], %{{.*}} {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x16x2x16xf32>, tensor<1xi64>) -> tensor<1x16x2xf32>
// CHECK-NEXT: %[[D:.*]] = kiln.transpose %[[S]] {perm = array<i64: 0, 2, 1>} : (tensor<1x16x2xf32>) -> tensor<1x2x16xf32>
// CHECK-NEXT: %[[DQKV:.*]] = kiln.packed_attention_grad %arg0, %[[G]], %[[LSE]], %[[D]] {causal = 1 : i64, heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<1x16x96xbf16>, tensor<1x16x2x16xbf16>, tensor<1x2x16xf32>, tensor<1x2x16xf32>) -> tensor<1x16x96xbf16>
// CHECK: return %{{.*}}, %[[DQKV]]
func.func @main(%qkv: tensor<1x16x96xbf16> {kiln.name = "qkv", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %o:2 = kiln.packed_attention %qkv {causal = 1 : i64, heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<1x16x96xbf16>) -> (tensor<1x16x2x16xbf16>, tensor<1x2x16xf32>)
  %f = kiln.cast %o#0 {to = f32} : (tensor<1x16x2x16xbf16>) -> tensor<1x16x2x16xf32>
  %sq = kiln.mul %f, %f : (tensor<1x16x2x16xf32>, tensor<1x16x2x16xf32>) -> tensor<1x16x2x16xf32>
  %axes = kiln.constant dense<[]> : tensor<0xi64>
  %loss = kiln.reduce_mean %sq, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x16x2x16xf32>, tensor<0xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A seq-first kiln.packed_attention ([T, B, 3 * H * D]): delta ([T, B, H])
// transposed to lse's [B, H, T], the batch-first backward op reads qkv and
// the gradient transposed to [B, T, ...], and its result is transposed
// back to qkv's layout.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<16x2x96xf32> {kiln.gradient_of = "qkv", kiln.name = "qkv.grad"})
// CHECK: %[[O:[^,]*]], %[[LSE:.*]] = kiln.packed_attention %arg0 {causal = 0 : i64, heads = 2 : i64, layout = "seq_first", scale = 2.500000e-01 : f32}
// CHECK-DAG: %[[X:.*]] = kiln.transpose %arg0 {perm = array<i64: 1, 0, 2>} : (tensor<16x2x96xf32>) -> tensor<2x16x96xf32>
// CHECK-DAG: %[[G:.*]] = kiln.transpose %{{.*}} {perm = array<i64: 1, 0, 2, 3>} : (tensor<16x2x2x16xf32>) -> tensor<2x16x2x16xf32>
// CHECK: %[[DX:.*]] = kiln.packed_attention_grad %[[X]], %[[G]], %[[LSE]], %{{.*}} {causal = 0 : i64, heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<2x16x96xf32>, tensor<2x16x2x16xf32>, tensor<2x2x16xf32>, tensor<2x2x16xf32>) -> tensor<2x16x96xf32>
// CHECK-NEXT: %[[DQKV:.*]] = kiln.transpose %[[DX]] {perm = array<i64: 1, 0, 2>} : (tensor<2x16x96xf32>) -> tensor<16x2x96xf32>
// CHECK: return %{{.*}}, %[[DQKV]]
func.func @main(%qkv: tensor<16x2x96xf32> {kiln.name = "qkv", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %o:2 = kiln.packed_attention %qkv {causal = 0 : i64, heads = 2 : i64, layout = "seq_first", scale = 2.500000e-01 : f32} : (tensor<16x2x96xf32>) -> (tensor<16x2x2x16xf32>, tensor<2x2x16xf32>)
  %sq = kiln.mul %o#0, %o#0 : (tensor<16x2x2x16xf32>, tensor<16x2x2x16xf32>) -> tensor<16x2x2x16xf32>
  %axes = kiln.constant dense<[]> : tensor<0xi64>
  %loss = kiln.reduce_mean %sq, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<16x2x2x16xf32>, tensor<0xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
