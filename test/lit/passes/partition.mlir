// kiln-partition: the joint graph from kiln-autodiff becomes @forward (the
// loss, then the saved activations "saved.<i>") and @backward (the saved
// values, then the arguments it reads -> the gradients), what to save chosen
// by a min-cut: matmuls are never recomputed, elementwise ops and views are
// recomputed in @backward when that saves memory. kiln.saved_bytes and
// kiln.recomputed_ops on both say what was chosen.

// RUN: kiln-opt %s -kiln-autodiff -kiln-partition | FileCheck %s
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition=recompute=false | FileCheck %s --check-prefix=SAVE
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition=memory-budget=0.5 | FileCheck %s --check-prefix=HALF
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition=memory-budget=0.25 | FileCheck %s --check-prefix=QUARTER
// RUN: not kiln-opt %s -kiln-autodiff -kiln-partition=memory-budget=0 2>&1 | FileCheck %s --check-prefix=ZERO

// One value is saved (4x5 f32 = 80 bytes): the bias add's output, which
// costs as many bytes as the matmul's and spares @backward recomputing the
// add (between cuts of equal bytes, the one at cheap ops' outputs wins);
// the tanh after it is recomputed from it in @backward.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x3xf32> {kiln.name = "x"}, %[[W:[^:]+]]: tensor<3x5xf32> {kiln.name = "w", kiln.trainable}, %[[B:[^:]+]]: tensor<5xf32> {kiln.name = "b", kiln.trainable}
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x5xf32> {kiln.name = "saved.0"})
// CHECK-SAME: attributes {kiln.graph, kiln.recompute_flops = {{[0-9]+}} : i64, kiln.recomputed_ops = {{[0-9]+}} : i64, kiln.saved_bytes = 80 : i64, kiln.saved_bytes_no_recompute = 208 : i64}
// CHECK-NEXT: %[[MM:.*]] = kiln.matmul %[[X]], %[[W]]
// CHECK-NEXT: %[[ADD:.*]] = kiln.add %[[MM]], %[[B]]
// CHECK-NEXT: kiln.tanh
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.constant
// CHECK-NEXT: %[[LOSS:.*]] = kiln.reduce_mean
// No backward op in @forward.
// CHECK-NOT: kiln.grad_seed
// CHECK-NEXT: return %[[LOSS]], %[[ADD]] : tensor<f32>, tensor<4x5xf32>

// @backward reads the saved add output and x.
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[S:[^:]+]]: tensor<4x5xf32> {kiln.name = "saved.0"}, %[[BX:[^:]+]]: tensor<4x3xf32> {kiln.name = "x"}
// CHECK-SAME: -> (tensor<3x5xf32> {kiln.gradient_of = "w", kiln.name = "w.grad"}, tensor<5xf32> {kiln.gradient_of = "b", kiln.name = "b.grad"})
// CHECK-SAME: attributes {kiln.graph, kiln.recompute_flops = {{[0-9]+}} : i64, kiln.recomputed_ops = {{[0-9]+}} : i64, kiln.saved_bytes = 80 : i64, kiln.saved_bytes_no_recompute = 208 : i64}
// It starts with the recomputed tanh.
// CHECK-NEXT: %[[RY:.*]] = kiln.tanh %[[S]]
// The seed is re-created as a plain constant.
// CHECK-NOT: kiln.grad_seed
// CHECK: kiln.mul %{{.*}}, %[[RY]]
// CHECK: %[[XT:.*]] = kiln.transpose %[[BX]]
// CHECK-NEXT: %[[GW:.*]] = kiln.matmul %[[XT]], %{{.*}} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: return %[[GW]], %{{.*}} : tensor<3x5xf32>, tensor<5xf32>
// No matmul of the forward graph is recomputed.
// CHECK-NOT: kiln.matmul %[[BX]]

// recompute=false: every forward value @backward reads is saved: tanh's
// output y, tanh's 1 - y^2 and x^T (80 + 80 + 48 bytes); nothing is
// recomputed.
// SAVE-LABEL: func.func @forward(
// SAVE-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x5xf32> {kiln.name = "saved.0"}, tensor<4x5xf32> {kiln.name = "saved.1"}, tensor<3x4xf32> {kiln.name = "saved.2"})
// SAVE-SAME: attributes {kiln.graph, kiln.recompute_flops = 0 : i64, kiln.recomputed_ops = 0 : i64, kiln.saved_bytes = 208 : i64, kiln.saved_bytes_no_recompute = 208 : i64}
// SAVE: %[[Y:.*]] = kiln.tanh
// SAVE: %[[D:.*]] = kiln.sub
// SAVE: %[[XT:.*]] = kiln.transpose
// SAVE-NEXT: return %{{.*}}, %[[Y]], %[[D]], %[[XT]]
// SAVE-LABEL: func.func @backward(
// SAVE-SAME: %[[SY:[^:]+]]: tensor<4x5xf32> {kiln.name = "saved.0"}, %[[SD:[^:]+]]: tensor<4x5xf32> {kiln.name = "saved.1"}, %[[SXT:[^:]+]]: tensor<3x4xf32> {kiln.name = "saved.2"})
// SAVE-SAME: attributes {kiln.graph, kiln.recompute_flops = 0 : i64, kiln.recomputed_ops = 0 : i64, kiln.saved_bytes = 208 : i64, kiln.saved_bytes_no_recompute = 208 : i64}
// SAVE-NOT: kiln.tanh
// SAVE: kiln.mul %{{.*}}, %[[SY]]
// SAVE: kiln.mul %{{.*}}, %[[SD]]
// SAVE: kiln.matmul %[[SXT]], %{{.*}} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// SAVE-NOT: kiln.tanh
// A memory budget of half the no-recompute plan's 208 bytes (104): the
// default plan's 80 bytes fit, nothing changes.
// HALF-LABEL: func.func @forward(
// HALF-SAME: kiln.saved_bytes = 80 : i64, kiln.saved_bytes_no_recompute = 208 : i64

// A quarter (52 bytes): the matmul is recomputed too (from x and w, which
// cost nothing to keep), so nothing is saved; the recomputation costs the
// matmul's 2 M N K = 120 FLOP plus the elementwise ops'.
// QUARTER-LABEL: func.func @forward(
// QUARTER-SAME: -> (tensor<f32> {kiln.name = "loss"})
// QUARTER-SAME: kiln.saved_bytes = 0 : i64
// QUARTER-LABEL: func.func @backward(
// QUARTER-SAME: %[[QX:[^:]+]]: tensor<4x3xf32> {kiln.name = "x"}, %[[QW:[^:]+]]: tensor<3x5xf32> {kiln.name = "w", kiln.trainable}
// QUARTER-SAME: kiln.recompute_flops = [[FLOPS:[0-9]+]] : i64
// QUARTER-NEXT: kiln.matmul %[[QX]], %[[QW]] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>

// ZERO: error: kiln-partition: memory-budget must be in (0, 1], not 0
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

// Without a joint graph there is nothing to partition.
// RUN: not kiln-opt %s -kiln-partition 2>&1 | FileCheck %s --check-prefix=NOJOINT
// NOJOINT: error: no joint graph (kiln.joint) to partition; run kiln-autodiff first
