// kiln-fuse{isolate-broadcast-transcendentals} (the CPU target's choice): an
// elementwise group with a transcendental op (a squeeze-excite gate's
// sigmoid) stays out of a consumer that reads it broadcast to at least 8
// times its size, which would compute it again per element; without the
// option (the CUDA target) it fuses. A cheap producer, a broadcast of less
// than 8x and a reduction's epilogue fuse either way.

// RUN: kiln-opt %s -kiln-fuse='isolate-broadcast-transcendentals=true' -split-input-file | FileCheck %s --check-prefix=CPU
// RUN: kiln-opt %s -kiln-fuse -split-input-file | FileCheck %s --check-prefix=FUSED

// CPU-LABEL: func.func @gate(
// CPU: %[[G:.*]] = kiln.fusion "k0_sigmoid" ins(%arg1 : tensor<1x1x1x96xf32>)
// CPU: kiln.sigmoid
// CPU: kiln.fusion "k1_mul" ins(%arg0, %[[G]] : tensor<1x56x56x96xf32>, tensor<1x1x1x96xf32>)
// CPU-NOT: kiln.sigmoid
// CPU: return
// FUSED-LABEL: func.func @gate(
// FUSED: kiln.fusion "k0_sigmoid" ins(%arg1, %arg0 : tensor<1x1x1x96xf32>, tensor<1x56x56x96xf32>)
// FUSED: kiln.sigmoid
// FUSED-NEXT: kiln.mul
// FUSED-NEXT: kiln.yield
// FUSED-NEXT: }
// FUSED-NEXT: return
func.func @gate(%x: tensor<1x56x56x96xf32>, %s: tensor<1x1x1x96xf32>) -> tensor<1x56x56x96xf32> {
  %0 = kiln.sigmoid %s : (tensor<1x1x1x96xf32>) -> tensor<1x1x1x96xf32>
  %1 = kiln.mul %x, %0 : (tensor<1x56x56x96xf32>, tensor<1x1x1x96xf32>) -> tensor<1x56x56x96xf32>
  return %1 : tensor<1x56x56x96xf32>
}

// -----

// A cheap producer (no transcendental op) fuses.

// CPU-LABEL: func.func @cheap(
// CPU: kiln.fusion "k0_relu" ins(%arg1, %arg0
// CPU-NOT: kiln.fusion
// CPU: return
func.func @cheap(%x: tensor<1x56x56x96xf32>, %s: tensor<1x1x1x96xf32>) -> tensor<1x56x56x96xf32> {
  %0 = kiln.relu %s : (tensor<1x1x1x96xf32>) -> tensor<1x1x1x96xf32>
  %1 = kiln.mul %x, %0 : (tensor<1x56x56x96xf32>, tensor<1x1x1x96xf32>) -> tensor<1x56x56x96xf32>
  return %1 : tensor<1x56x56x96xf32>
}

// -----

// A broadcast to 4x the producer's size: recomputing costs little, it fuses.

// CPU-LABEL: func.func @small_broadcast(
// CPU: kiln.fusion "k0_exp" ins(%arg1, %arg0
// CPU-NOT: kiln.fusion
// CPU: return
func.func @small_broadcast(%x: tensor<4x96xf32>, %s: tensor<96xf32>) -> tensor<4x96xf32> {
  %0 = kiln.exp %s : (tensor<96xf32>) -> tensor<96xf32>
  %1 = kiln.mul %x, %0 : (tensor<4x96xf32>, tensor<96xf32>) -> tensor<4x96xf32>
  return %1 : tensor<4x96xf32>
}

// -----

// A reduction's group (softmax's row sum, then its exp and division) keeps
// its epilogue.

// CPU-LABEL: func.func @reduction_epilogue(
// CPU: kiln.fusion "k0_reduce_sum"
// CPU: kiln.reduce_sum
// CPU: kiln.log
// CPU: kiln.sub
// CPU-NOT: kiln.fusion
// CPU: return
func.func @reduction_epilogue(%x: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %e = kiln.exp %x : (tensor<64x512xf32>) -> tensor<64x512xf32>
  %s = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<64x512xf32>, tensor<1xi64>) -> tensor<64x1xf32>
  %l = kiln.log %s : (tensor<64x1xf32>) -> tensor<64x1xf32>
  %y = kiln.sub %x, %l : (tensor<64x512xf32>, tensor<64x1xf32>) -> tensor<64x512xf32>
  return %y : tensor<64x512xf32>
}
