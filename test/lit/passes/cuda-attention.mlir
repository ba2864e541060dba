// RUN: kiln-opt %s -kiln-cuda-attention -cse -split-input-file | FileCheck %s

// Attention written out in bf16 (no mask; the softmax in f32 between casts,
// as kiln-decompose leaves it) becomes one kiln.attention; the transpose of
// k^T back to k is left for kiln-layout-cleanup to merge.
// CHECK-LABEL: func.func @bf16
// CHECK: %[[K:.*]] = kiln.transpose %{{.*}} {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x16x64xbf16>) -> tensor<1x2x64x16xbf16>
// CHECK: %[[A:.*]] = kiln.attention %arg0, %[[K]], %arg2 {causal = 0 : i64, scale = 2.500000e-01 : f32}
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.exp
// CHECK: return %[[A]]
func.func @bf16(%q: tensor<1x2x64x16xbf16>, %k: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x16xbf16>) -> tensor<1x2x64x16xbf16> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x64x16xbf16>) -> tensor<1x2x16x64xbf16>
  %s = kiln.matmul %q, %kt : (tensor<1x2x64x16xbf16>, tensor<1x2x16x64xbf16>) -> tensor<1x2x64x64xbf16>
  %c = kiln.constant dense<2.500000e-01> : tensor<bf16>
  %z = kiln.mul %c, %s : (tensor<bf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %x = kiln.cast %z {to = f32} : (tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xf32>
  %axes = kiln.constant dense<-1> : tensor<1xi64>
  %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x2x64x64xf32>, tensor<1xi64>) -> tensor<1x2x64x1xf32>
  %d = kiln.sub %x, %m : (tensor<1x2x64x64xf32>, tensor<1x2x64x1xf32>) -> tensor<1x2x64x64xf32>
  %e = kiln.exp %d : (tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  %sum = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x2x64x64xf32>, tensor<1xi64>) -> tensor<1x2x64x1xf32>
  %p = kiln.div %e, %sum : (tensor<1x2x64x64xf32>, tensor<1x2x64x1xf32>) -> tensor<1x2x64x64xf32>
  %pc = kiln.cast %p {to = bf16} : (tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xbf16>
  %y = kiln.matmul %pc, %v : (tensor<1x2x64x64xbf16>, tensor<1x2x64x16xbf16>) -> tensor<1x2x64x16xbf16>
  return %y : tensor<1x2x64x16xbf16>
}

// -----

// The probabilities are also returned (a training forward saves them): the
// ops stay.
// CHECK-LABEL: func.func @saved
// CHECK-NOT: kiln.attention
// CHECK: kiln.matmul
// CHECK: kiln.matmul
func.func @saved(%q: tensor<1x1x64x16xf16>, %kt: tensor<1x1x16x64xf16>, %v: tensor<1x1x64x16xf16>) -> (tensor<1x1x64x16xf16>, tensor<1x1x64x64xf16>) {
  %s = kiln.matmul %q, %kt : (tensor<1x1x64x16xf16>, tensor<1x1x16x64xf16>) -> tensor<1x1x64x64xf16>
  %axes = kiln.constant dense<3> : tensor<1xi64>
  %m = kiln.reduce_max %s, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x64x64xf16>, tensor<1xi64>) -> tensor<1x1x64x1xf16>
  %d = kiln.sub %s, %m : (tensor<1x1x64x64xf16>, tensor<1x1x64x1xf16>) -> tensor<1x1x64x64xf16>
  %e = kiln.exp %d : (tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16>
  %sum = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x64x64xf16>, tensor<1xi64>) -> tensor<1x1x64x1xf16>
  %p = kiln.div %e, %sum : (tensor<1x1x64x64xf16>, tensor<1x1x64x1xf16>) -> tensor<1x1x64x64xf16>
  %y = kiln.matmul %p, %v : (tensor<1x1x64x64xf16>, tensor<1x1x64x16xf16>) -> tensor<1x1x64x16xf16>
  return %y, %p : tensor<1x1x64x16xf16>, tensor<1x1x64x64xf16>
}

// -----

// f32 (no f32 kernel: without TF32 the matmuls stay cuBLASLt's) and a
// sequence that is not a multiple of 64: the ops stay.
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: kiln.attention
// CHECK: return
func.func @not_taken(%q: tensor<1x1x64x16xf32>, %kt: tensor<1x1x16x64xf32>, %v: tensor<1x1x64x16xf32>, %qh: tensor<1x1x48x16xf16>, %kth: tensor<1x1x16x48xf16>, %vh: tensor<1x1x48x16xf16>) -> (tensor<1x1x64x16xf32>, tensor<1x1x48x16xf16>) {
  %axes = kiln.constant dense<3> : tensor<1xi64>
  %s = kiln.matmul %q, %kt : (tensor<1x1x64x16xf32>, tensor<1x1x16x64xf32>) -> tensor<1x1x64x64xf32>
  %m = kiln.reduce_max %s, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x64x64xf32>, tensor<1xi64>) -> tensor<1x1x64x1xf32>
  %d = kiln.sub %s, %m : (tensor<1x1x64x64xf32>, tensor<1x1x64x1xf32>) -> tensor<1x1x64x64xf32>
  %e = kiln.exp %d : (tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  %sum = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x64x64xf32>, tensor<1xi64>) -> tensor<1x1x64x1xf32>
  %p = kiln.div %e, %sum : (tensor<1x1x64x64xf32>, tensor<1x1x64x1xf32>) -> tensor<1x1x64x64xf32>
  %y = kiln.matmul %p, %v : (tensor<1x1x64x64xf32>, tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32>
  %sh = kiln.matmul %qh, %kth : (tensor<1x1x48x16xf16>, tensor<1x1x16x48xf16>) -> tensor<1x1x48x48xf16>
  %mh = kiln.reduce_max %sh, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x48x48xf16>, tensor<1xi64>) -> tensor<1x1x48x1xf16>
  %dh = kiln.sub %sh, %mh : (tensor<1x1x48x48xf16>, tensor<1x1x48x1xf16>) -> tensor<1x1x48x48xf16>
  %eh = kiln.exp %dh : (tensor<1x1x48x48xf16>) -> tensor<1x1x48x48xf16>
  %sumh = kiln.reduce_sum %eh, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x48x48xf16>, tensor<1xi64>) -> tensor<1x1x48x1xf16>
  %ph = kiln.div %eh, %sumh : (tensor<1x1x48x48xf16>, tensor<1x1x48x1xf16>) -> tensor<1x1x48x48xf16>
  %yh = kiln.matmul %ph, %vh : (tensor<1x1x48x48xf16>, tensor<1x1x48x16xf16>) -> tensor<1x1x48x16xf16>
  return %y, %yh : tensor<1x1x64x16xf32>, tensor<1x1x48x16xf16>
}
