// kiln-mark-in-place: a kernel stores its result over an operand that dies
// there (kiln.in_place = array<i64: RESULT, OPERAND>) when every element of
// the operand is read before the element at the same place is written, and
// never afterwards: pointwise kernels, and reduction kernels whose result
// reads the reduction (stored by the epilogue). Not over an operand read
// later, a weight or input, a value read at another element, or into a
// graph output.

// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-cpu -kiln-mark-load-time -kiln-mark-in-place | FileCheck %s

// The softmax gradient over the gradient of the probabilities.
// CHECK-LABEL: func.func @softmax_grad(
// CHECK: %[[DP:.*]] = kiln.library_call "onednn.matmul"
// CHECK: kiln.fusion "k0_reduce_sum" ins(%[[DP]], %arg0 : {{.*}}) kind("reduction") attributes {kiln.in_place = array<i64: 0, 0>}
func.func @softmax_grad(%p: tensor<8x16xf32>, %dy: tensor<8x4xf32>, %v: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> tensor<8x4xf32> {
  %dp = kiln.matmul %dy, %v : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %axes = kiln.constant dense<-1> : tensor<1xi64>
  %pd = kiln.mul %dp, %p : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = kiln.reduce_sum %pd, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
  %d = kiln.sub %dp, %s : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %ds = kiln.mul %p, %d : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %g = kiln.matmul %ds, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}

// -----

// A column reduction (a bias gradient summed over the rows) with the
// activation gradient it sums: its loads must not wait for its stores, so
// no result is stored over the product.
// CHECK-LABEL: func.func @column_reduction(
// CHECK: kiln.fusion
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @column_reduction(%x: tensor<8x4xf32>, %w: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> (tensor<8x4xf32>, tensor<1x16xf32>) {
  %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %s = kiln.sin %h : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %axes = kiln.constant dense<0> : tensor<1xi64>
  %b = kiln.reduce_sum %s, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<1x16xf32>
  %g = kiln.matmul %s, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %g, %b : tensor<8x4xf32>, tensor<1x16xf32>
}

// -----

// A pointwise chain over the product it reads.
// CHECK-LABEL: func.func @pointwise(
// CHECK: kiln.fusion "k0_mul" {{.*}} kind("pointwise") attributes {kiln.in_place = array<i64: 0, 0>}
func.func @pointwise(%x: tensor<8x4xf32>, %w: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> tensor<8x4xf32> {
  %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %sq = kiln.mul %h, %h : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = kiln.sin %sq : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %g = kiln.matmul %s, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}

// -----

// The product is read again after the kernel: no.
// CHECK-LABEL: func.func @lives_on(
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @lives_on(%x: tensor<8x4xf32>, %w: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %s = kiln.sin %h : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %g = kiln.matmul %s, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %g2 = kiln.matmul %h, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %g, %g2 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// The kernel reads the product transposed (another element): no.
// CHECK-LABEL: func.func @transposed(
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @transposed(%x: tensor<16x4xf32>, %w: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> tensor<16x4xf32> {
  %h = kiln.matmul %x, %w : (tensor<16x4xf32>, tensor<4x16xf32>) -> tensor<16x16xf32>
  %t = kiln.transpose %h {perm = array<i64: 1, 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = kiln.add %h, %t : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %g = kiln.matmul %s, %k : (tensor<16x16xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %g : tensor<16x4xf32>
}

// -----

// Inputs and weights are the caller's; a graph output is the caller's: no.
// CHECK-LABEL: func.func @callers_buffers(
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @callers_buffers(%x: tensor<8x16xf32>, %w: tensor<8x16xf32> {kiln.weight}, %v: tensor<4x8xf32> {kiln.weight}) -> tensor<4x16xf32> {
  %s = kiln.sin %x : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = kiln.mul %s, %w : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h = kiln.matmul %v, %m : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y = kiln.tanh %h : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// In a reduction kernel, a result that reads no reduction is stored by the
// first reduce loop; a second level of reductions reads the operand again
// after it: no. (Written fused: kiln-fuse leaves a fusion as it is.)
// CHECK-LABEL: func.func @early_store_nested(
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @early_store_nested(%x: tensor<8x4xf32>, %w: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> (tensor<8x1xf32>, tensor<8x4xf32>) {
  %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %v, %s = kiln.fusion "k0_reduce_mean" ins(%h : tensor<8x16xf32>) kind("reduction") {
  ^bb0(%a: tensor<8x16xf32>):
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %m = kiln.reduce_mean %a, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %d = kiln.sub %a, %m : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    %q = kiln.mul %d, %d : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %var = kiln.reduce_mean %q, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %sin = kiln.sin %a : (tensor<8x16xf32>) -> tensor<8x16xf32>
    kiln.yield %var, %sin : tensor<8x1xf32>, tensor<8x16xf32>
  } -> (tensor<8x1xf32>, tensor<8x16xf32>)
  %g = kiln.matmul %s, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %v, %g : tensor<8x1xf32>, tensor<8x4xf32>
}

// -----

// The same with one level of reductions: the early store is the operand's
// last read, so yes.
// CHECK-LABEL: func.func @early_store(
// CHECK: kiln.fusion "k0_reduce_mean" {{.*}} attributes {kiln.in_place = array<i64: 1, 0>}
func.func @early_store(%x: tensor<8x4xf32>, %w: tensor<4x16xf32> {kiln.weight}, %k: tensor<16x4xf32> {kiln.weight}) -> (tensor<8x1xf32>, tensor<8x4xf32>) {
  %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %m, %s = kiln.fusion "k0_reduce_mean" ins(%h : tensor<8x16xf32>) kind("reduction") {
  ^bb0(%a: tensor<8x16xf32>):
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %mean = kiln.reduce_mean %a, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %sin = kiln.sin %a : (tensor<8x16xf32>) -> tensor<8x16xf32>
    kiln.yield %mean, %sin : tensor<8x1xf32>, tensor<8x16xf32>
  } -> (tensor<8x1xf32>, tensor<8x16xf32>)
  %g = kiln.matmul %s, %k : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %m, %g : tensor<8x1xf32>, tensor<8x4xf32>
}

// -----

// Load-time steps: a projected table (a product of weights) plus a bias of
// two weights, stored over the table, which only load-time steps read (they
// run in order, once, in the model's prepared memory).
// CHECK-LABEL: func.func @load_time_chain(
// CHECK: %[[T:.*]] = kiln.library_call "onednn.matmul"(%arg1, %arg2) {kiln.load_time
// CHECK: kiln.fusion "k0_add" ins(%arg3, %arg4, %[[T]] : {{.*}}) kind("pointwise") attributes {kiln.in_place = array<i64: 0, 2>, kiln.load_time}
func.func @load_time_chain(%ids: tensor<6xi64>, %e: tensor<50x8xf32> {kiln.weight}, %w: tensor<8x24xf32> {kiln.weight}, %b1: tensor<24xf32> {kiln.weight}, %b2: tensor<24xf32> {kiln.weight}) -> tensor<6x24xf32> {
  %t = kiln.matmul %e, %w : (tensor<50x8xf32>, tensor<8x24xf32>) -> tensor<50x24xf32>
  %b = kiln.add %b1, %b2 : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
  %tb = kiln.add %t, %b : (tensor<50x24xf32>, tensor<24xf32>) -> tensor<50x24xf32>
  %y = kiln.gather %tb, %ids {axis = 0 : i64} : (tensor<50x24xf32>, tensor<6xi64>) -> tensor<6x24xf32>
  return %y : tensor<6x24xf32>
}

// -----

// Not over a load-time value that a step of the run also reads (every
// load-time step runs before the run's, wherever it stands).
// CHECK-LABEL: func.func @load_time_read_by_run(
// CHECK: kiln.fusion "k0_add" {{.*}} attributes {kiln.load_time}
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @load_time_read_by_run(%x: tensor<4x50xf32>, %e: tensor<50x8xf32> {kiln.weight}, %w: tensor<8x24xf32> {kiln.weight}, %b1: tensor<24xf32> {kiln.weight}, %b2: tensor<24xf32> {kiln.weight}) -> (tensor<4x24xf32>, tensor<4x24xf32>) {
  %t = kiln.matmul %e, %w : (tensor<50x8xf32>, tensor<8x24xf32>) -> tensor<50x24xf32>
  %early = kiln.matmul %x, %t : (tensor<4x50xf32>, tensor<50x24xf32>) -> tensor<4x24xf32>
  %b = kiln.add %b1, %b2 : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
  %tb = kiln.add %t, %b : (tensor<50x24xf32>, tensor<24xf32>) -> tensor<50x24xf32>
  %y = kiln.matmul %x, %tb : (tensor<4x50xf32>, tensor<50x24xf32>) -> tensor<4x24xf32>
  return %early, %y : tensor<4x24xf32>, tensor<4x24xf32>
}

// -----

// A channels-last squeeze-excite product, as kiln-fuse leaves it: the body
// transposes its operand to NCHW and back, so it reads each element where
// it stores it; the operand was read before through an alias view (the
// spatial mean's reshape) and dies here.
// CHECK-LABEL: func.func @se_gate(
// CHECK: kiln.reshape {{.*}}kiln.alias
// CHECK: kiln.fusion "k1_mul" {{.*}} attributes {kiln.in_place = array<i64: 0, 0>}
func.func @se_gate(%x: tensor<1x8x8x32xf32>, %g: tensor<1x32x1x1xf32>, %w: tensor<32x16xf32> {kiln.weight}) -> (tensor<8x1x32xf32>, tensor<1x8x8x16xf32>) {
  %s = kiln.fusion "k0_sigmoid" ins(%x : tensor<1x8x8x32xf32>) kind("pointwise") {
  ^bb0(%a: tensor<1x8x8x32xf32>):
    %t = kiln.sigmoid %a : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
    kiln.yield %t : tensor<1x8x8x32xf32>
  } -> (tensor<1x8x8x32xf32>)
  %shape = kiln.constant dense<[8, 8, 32]> : tensor<3xi64>
  %v = kiln.reshape %s, %shape {allowzero = 0 : i64} : (tensor<1x8x8x32xf32>, tensor<3xi64>) -> tensor<8x8x32xf32>
  %ones = kiln.constant dense<0.125> : tensor<1x8xf32>
  %m = kiln.matmul %ones, %v : (tensor<1x8xf32>, tensor<8x8x32xf32>) -> tensor<8x1x32xf32>
  %y = kiln.fusion "k1_mul" ins(%s, %g : tensor<1x8x8x32xf32>, tensor<1x32x1x1xf32>) kind("pointwise") {
  ^bb0(%a: tensor<1x8x8x32xf32>, %b: tensor<1x32x1x1xf32>):
    %nchw = kiln.transpose %a {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x32xf32>) -> tensor<1x32x8x8xf32>
    %p = kiln.mul %b, %nchw : (tensor<1x32x1x1xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
    %nhwc = kiln.transpose %p {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x32x8x8xf32>) -> tensor<1x8x8x32xf32>
    kiln.yield %nhwc : tensor<1x8x8x32xf32>
  } -> (tensor<1x8x8x32xf32>)
  %o = kiln.matmul %y, %w : (tensor<1x8x8x32xf32>, tensor<32x16xf32>) -> tensor<1x8x8x16xf32>
  return %m, %o : tensor<8x1x32xf32>, tensor<1x8x8x16xf32>
}

// -----

// Not when the transposes do not bring the element back (a transpose of a
// square image: each element is read at its mirror place), nor when an
// alias view of the operand is read after the kernel.
// CHECK-LABEL: func.func @mirrored_or_read_later(
// CHECK-NOT: kiln.in_place
// CHECK: return
func.func @mirrored_or_read_later(%x: tensor<8x8xf32>, %w: tensor<8x8xf32> {kiln.weight}, %k: tensor<64x4xf32> {kiln.weight}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<1x4xf32>) {
  %h = kiln.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = kiln.fusion "k0_transpose" ins(%h : tensor<8x8xf32>) kind("pointwise") {
  ^bb0(%a: tensor<8x8xf32>):
    %t = kiln.transpose %a {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %s = kiln.sin %t : (tensor<8x8xf32>) -> tensor<8x8xf32>
    kiln.yield %s : tensor<8x8xf32>
  } -> (tensor<8x8xf32>)
  %h2 = kiln.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = kiln.fusion "k1_cos" ins(%h2 : tensor<8x8xf32>) kind("pointwise") {
  ^bb0(%a: tensor<8x8xf32>):
    %t = kiln.cos %a : (tensor<8x8xf32>) -> tensor<8x8xf32>
    kiln.yield %t : tensor<8x8xf32>
  } -> (tensor<8x8xf32>)
  %flat = kiln.constant dense<[1, 64]> : tensor<2xi64>
  %v = kiln.reshape %h2, %flat {allowzero = 0 : i64} : (tensor<8x8xf32>, tensor<2xi64>) -> tensor<1x64xf32>
  %e = kiln.matmul %v, %k : (tensor<1x64xf32>, tensor<64x4xf32>) -> tensor<1x4xf32>
  return %m, %c, %e : tensor<8x8xf32>, tensor<8x8xf32>, tensor<1x4xf32>
}
