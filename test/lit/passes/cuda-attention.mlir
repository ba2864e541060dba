// RUN: kiln-opt %s -kiln-cuda-attention -cse -split-input-file | FileCheck %s

// Attention written out in bf16 (no mask; the softmax in f32 between casts,
// as kiln-decompose leaves it) becomes one kiln.attention; the transpose of
// k^T back to k is left for kiln-layout-cleanup to merge.
// CHECK-LABEL: func.func @bf16
// CHECK: %[[K:.*]] = kiln.transpose %{{.*}} {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x16x64xbf16>) -> tensor<1x2x64x16xbf16>
// CHECK: %[[A:[^,]*]], %{{.*}} = kiln.attention %arg0, %[[K]], %arg2 {causal = 0 : i64, scale = 2.500000e-01 : f32}
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

// f32 with a head of 128 (the f32 kernel takes up to 64): the ops stay. A
// sequence that is not a multiple of 64 (48) is taken: the kernel's
// last tiles are partial.
// CHECK-LABEL: func.func @not_taken
// CHECK: kiln.matmul %arg0, %arg1
// CHECK: kiln.matmul %{{.*}}, %arg2
// CHECK: kiln.attention %arg3, %{{.*}}, %arg5 {causal = 0 : i64, scale = 1.000000e+00 : f32}
// CHECK: return
func.func @not_taken(%q: tensor<1x1x64x128xf32>, %kt: tensor<1x1x128x64xf32>, %v: tensor<1x1x64x128xf32>, %qh: tensor<1x1x48x16xf16>, %kth: tensor<1x1x16x48xf16>, %vh: tensor<1x1x48x16xf16>) -> (tensor<1x1x64x128xf32>, tensor<1x1x48x16xf16>) {
  %axes = kiln.constant dense<3> : tensor<1xi64>
  %s = kiln.matmul %q, %kt : (tensor<1x1x64x128xf32>, tensor<1x1x128x64xf32>) -> tensor<1x1x64x64xf32>
  %m = kiln.reduce_max %s, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x64x64xf32>, tensor<1xi64>) -> tensor<1x1x64x1xf32>
  %d = kiln.sub %s, %m : (tensor<1x1x64x64xf32>, tensor<1x1x64x1xf32>) -> tensor<1x1x64x64xf32>
  %e = kiln.exp %d : (tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  %sum = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x64x64xf32>, tensor<1xi64>) -> tensor<1x1x64x1xf32>
  %p = kiln.div %e, %sum : (tensor<1x1x64x64xf32>, tensor<1x1x64x1xf32>) -> tensor<1x1x64x64xf32>
  %y = kiln.matmul %p, %v : (tensor<1x1x64x64xf32>, tensor<1x1x64x128xf32>) -> tensor<1x1x64x128xf32>
  %sh = kiln.matmul %qh, %kth : (tensor<1x1x48x16xf16>, tensor<1x1x16x48xf16>) -> tensor<1x1x48x48xf16>
  %mh = kiln.reduce_max %sh, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x48x48xf16>, tensor<1xi64>) -> tensor<1x1x48x1xf16>
  %dh = kiln.sub %sh, %mh : (tensor<1x1x48x48xf16>, tensor<1x1x48x1xf16>) -> tensor<1x1x48x48xf16>
  %eh = kiln.exp %dh : (tensor<1x1x48x48xf16>) -> tensor<1x1x48x48xf16>
  %sumh = kiln.reduce_sum %eh, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1x48x48xf16>, tensor<1xi64>) -> tensor<1x1x48x1xf16>
  %ph = kiln.div %eh, %sumh : (tensor<1x1x48x48xf16>, tensor<1x1x48x1xf16>) -> tensor<1x1x48x48xf16>
  %yh = kiln.matmul %ph, %vh : (tensor<1x1x48x48xf16>, tensor<1x1x48x16xf16>) -> tensor<1x1x48x16xf16>
  return %y, %yh : tensor<1x1x64x128xf32>, tensor<1x1x48x16xf16>
}

// -----

// q, k and v are heads of three slices of one packed projection, the result
// is transposed back (GPT-2's layout; k through two transposes): one
// kiln.packed_attention reads the heads in place, no slice or transpose is
// left.
// CHECK-LABEL: func.func @packed
// CHECK: %[[A:[^,]*]], %{{.*}} = kiln.packed_attention %arg0 {causal = 1 : i64, heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<1x64x96xbf16>) -> (tensor<1x64x2x16xbf16>, tensor<1x2x64xf32>)
// CHECK-NOT: kiln.slice
// CHECK-NOT: kiln.transpose
// CHECK: kiln.reshape %[[A]]
func.func @packed(%x: tensor<1x64x96xbf16>) -> tensor<1x64x32xbf16> {
  %s0 = kiln.constant dense<0> : tensor<1xi64>
  %s1 = kiln.constant dense<32> : tensor<1xi64>
  %s2 = kiln.constant dense<64> : tensor<1xi64>
  %s3 = kiln.constant dense<9223372036854775807> : tensor<1xi64>
  %ax = kiln.constant dense<-1> : tensor<1xi64>
  %one = kiln.constant dense<1> : tensor<1xi64>
  %heads = kiln.constant dense<[1, 64, 2, 16]> : tensor<4xi64>
  %merged = kiln.constant dense<[1, 64, 32]> : tensor<3xi64>
  %qs = kiln.slice %x, %s0, %s1, %ax, %one : (tensor<1x64x96xbf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x32xbf16>
  %ks = kiln.slice %x, %s1, %s2, %ax, %one : (tensor<1x64x96xbf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x32xbf16>
  %vs = kiln.slice %x, %s2, %s3, %ax, %one : (tensor<1x64x96xbf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x32xbf16>
  %qh = kiln.reshape %qs, %heads {allowzero = 0 : i64} : (tensor<1x64x32xbf16>, tensor<4xi64>) -> tensor<1x64x2x16xbf16>
  %kh = kiln.reshape %ks, %heads {allowzero = 0 : i64} : (tensor<1x64x32xbf16>, tensor<4xi64>) -> tensor<1x64x2x16xbf16>
  %vh = kiln.reshape %vs, %heads {allowzero = 0 : i64} : (tensor<1x64x32xbf16>, tensor<4xi64>) -> tensor<1x64x2x16xbf16>
  %qt = kiln.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %kt0 = kiln.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x16x64xbf16>
  %kt = kiln.transpose %kt0 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x16x64xbf16>) -> tensor<1x2x64x16xbf16>
  %vt = kiln.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %a:2 = kiln.attention %qt, %kt, %vt {causal = 1 : i64, scale = 2.500000e-01 : f32} : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64xf32>)
  %b = kiln.transpose %a#0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x64x16xbf16>) -> tensor<1x64x2x16xbf16>
  %y = kiln.reshape %b, %merged {allowzero = 0 : i64} : (tensor<1x64x2x16xbf16>, tensor<3xi64>) -> tensor<1x64x32xbf16>
  return %y : tensor<1x64x32xbf16>
}

// -----

// v is a slice of another tensor: the attention stays unpacked.
// CHECK-LABEL: func.func @not_packed
// CHECK-NOT: kiln.packed_attention
// CHECK: kiln.attention
func.func @not_packed(%x: tensor<1x64x96xbf16>, %w: tensor<1x64x96xbf16>) -> tensor<1x64x2x16xbf16> {
  %s0 = kiln.constant dense<0> : tensor<1xi64>
  %s1 = kiln.constant dense<32> : tensor<1xi64>
  %s2 = kiln.constant dense<64> : tensor<1xi64>
  %s3 = kiln.constant dense<96> : tensor<1xi64>
  %ax = kiln.constant dense<2> : tensor<1xi64>
  %one = kiln.constant dense<1> : tensor<1xi64>
  %heads = kiln.constant dense<[1, 64, 2, 16]> : tensor<4xi64>
  %qs = kiln.slice %x, %s0, %s1, %ax, %one : (tensor<1x64x96xbf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x32xbf16>
  %ks = kiln.slice %x, %s1, %s2, %ax, %one : (tensor<1x64x96xbf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x32xbf16>
  %vs = kiln.slice %w, %s2, %s3, %ax, %one : (tensor<1x64x96xbf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x32xbf16>
  %qh = kiln.reshape %qs, %heads {allowzero = 0 : i64} : (tensor<1x64x32xbf16>, tensor<4xi64>) -> tensor<1x64x2x16xbf16>
  %kh = kiln.reshape %ks, %heads {allowzero = 0 : i64} : (tensor<1x64x32xbf16>, tensor<4xi64>) -> tensor<1x64x2x16xbf16>
  %vh = kiln.reshape %vs, %heads {allowzero = 0 : i64} : (tensor<1x64x32xbf16>, tensor<4xi64>) -> tensor<1x64x2x16xbf16>
  %qt = kiln.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %kt = kiln.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %vt = kiln.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %a:2 = kiln.attention %qt, %kt, %vt {causal = 1 : i64, scale = 2.500000e-01 : f32} : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64xf32>)
  %b = kiln.transpose %a#0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x64x16xbf16>) -> tensor<1x64x2x16xbf16>
  return %b : tensor<1x64x2x16xbf16>
}

// -----

// q and k each scaled by sqrt(scale) before their product (PyTorch's
// exported scaled_dot_product_attention; ViT's 197 tokens): one attention
// with the product of the factors (of the bf16 constant: 0.35351562^2).
// CHECK-LABEL: func.func @prescaled
// CHECK: %[[K:.*]] = kiln.transpose %arg1 {perm = array<i64: 0, 1, 3, 2>}
// CHECK: kiln.attention %arg0, %[[K]], %arg2 {causal = 0 : i64, scale = 0.124973297 : f32}
// CHECK-NOT: kiln.mul
func.func @prescaled(%q: tensor<2x6x197x64xbf16>, %kt: tensor<2x6x64x197xbf16>, %v: tensor<2x6x197x64xbf16>) -> tensor<2x6x197x64xbf16> {
  %c = kiln.constant dense<0.353553385> : tensor<1xbf16>
  %axes = kiln.constant dense<3> : tensor<1xi64>
  %qs = kiln.mul %q, %c : (tensor<2x6x197x64xbf16>, tensor<1xbf16>) -> tensor<2x6x197x64xbf16>
  %ks = kiln.mul %kt, %c : (tensor<2x6x64x197xbf16>, tensor<1xbf16>) -> tensor<2x6x64x197xbf16>
  %s = kiln.matmul %qs, %ks : (tensor<2x6x197x64xbf16>, tensor<2x6x64x197xbf16>) -> tensor<2x6x197x197xbf16>
  %x = kiln.cast %s {to = f32} : (tensor<2x6x197x197xbf16>) -> tensor<2x6x197x197xf32>
  %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x6x197x197xf32>, tensor<1xi64>) -> tensor<2x6x197x1xf32>
  %d = kiln.sub %x, %m : (tensor<2x6x197x197xf32>, tensor<2x6x197x1xf32>) -> tensor<2x6x197x197xf32>
  %e = kiln.exp %d : (tensor<2x6x197x197xf32>) -> tensor<2x6x197x197xf32>
  %sum = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x6x197x197xf32>, tensor<1xi64>) -> tensor<2x6x197x1xf32>
  %p = kiln.div %e, %sum : (tensor<2x6x197x197xf32>, tensor<2x6x197x1xf32>) -> tensor<2x6x197x197xf32>
  %pb = kiln.cast %p {to = bf16} : (tensor<2x6x197x197xf32>) -> tensor<2x6x197x197xbf16>
  %y = kiln.matmul %pb, %v : (tensor<2x6x197x197xbf16>, tensor<2x6x197x64xbf16>) -> tensor<2x6x197x64xbf16>
  return %y : tensor<2x6x197x64xbf16>
}

// -----

// f32 with a head of 64 or less: the CUDA-core flash kernel
// (CudaAttentionF32Kernel.cpp) takes it.
// CHECK-LABEL: func.func @f32
// CHECK: %[[K:.*]] = kiln.transpose %arg1 {perm = array<i64: 0, 1, 3, 2>}
// CHECK: %[[A:[^,]*]], %{{.*}} = kiln.attention %arg0, %[[K]], %arg2 {causal = 0 : i64, scale = 1.000000e+00 : f32}
// CHECK-NOT: kiln.matmul
// CHECK: return %[[A]]
func.func @f32(%q: tensor<2x3x40x64xf32>, %kt: tensor<2x3x64x40xf32>, %v: tensor<2x3x40x64xf32>) -> tensor<2x3x40x64xf32> {
  %axes = kiln.constant dense<3> : tensor<1xi64>
  %s = kiln.matmul %q, %kt : (tensor<2x3x40x64xf32>, tensor<2x3x64x40xf32>) -> tensor<2x3x40x40xf32>
  %m = kiln.reduce_max %s, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3x40x40xf32>, tensor<1xi64>) -> tensor<2x3x40x1xf32>
  %d = kiln.sub %s, %m : (tensor<2x3x40x40xf32>, tensor<2x3x40x1xf32>) -> tensor<2x3x40x40xf32>
  %e = kiln.exp %d : (tensor<2x3x40x40xf32>) -> tensor<2x3x40x40xf32>
  %sum = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3x40x40xf32>, tensor<1xi64>) -> tensor<2x3x40x1xf32>
  %p = kiln.div %e, %sum : (tensor<2x3x40x40xf32>, tensor<2x3x40x1xf32>) -> tensor<2x3x40x40xf32>
  %y = kiln.matmul %p, %v : (tensor<2x3x40x40xf32>, tensor<2x3x40x64xf32>) -> tensor<2x3x40x64xf32>
  return %y : tensor<2x3x40x64xf32>
}

// -----

// nn.MultiheadAttention's export (ViT): the in-projection's [T, B, 3 * E]
// reshaped to [1, T, B, 3, E], transposed to [3, T, B, 1, E], squeezed,
// q, k and v sliced out of the first axis, split into heads through
// [T, B * H, D] and transposed (k through [B, H, D, T] and back), the
// result transposed to [T, B, H, D] for the out-projection: every one of
// those is a strided view of the projection, so one seq-first
// kiln.packed_attention reads it in place and no transpose is left.
// CHECK-LABEL: func.func @seq_first
// CHECK: %[[A:[^,]*]], %{{.*}} = kiln.packed_attention %arg0 {causal = 0 : i64, heads = 2 : i64, layout = "seq_first", scale = 2.500000e-01 : f32} : (tensor<10x2x96xf32>) -> (tensor<10x2x2x16xf32>, tensor<2x2x10xf32>)
// CHECK-NOT: kiln.transpose
// CHECK-NOT: kiln.slice
// CHECK: %[[Y:.*]] = kiln.reshape %[[A]]
// CHECK: return %[[Y]]
func.func @seq_first(%x: tensor<10x2x96xf32>) -> tensor<20x32xf32> {
  %five = kiln.constant dense<[1, 10, 2, 3, 32]> : tensor<5xi64>
  %m2 = kiln.constant dense<-2> : tensor<1xi64>
  %c0 = kiln.constant dense<0> : tensor<1xi64>
  %c1 = kiln.constant dense<1> : tensor<1xi64>
  %c2 = kiln.constant dense<2> : tensor<1xi64>
  %c3 = kiln.constant dense<3> : tensor<1xi64>
  %rows = kiln.constant dense<[10, 4, 16]> : tensor<3xi64>
  %heads = kiln.constant dense<[2, 2, 10, 16]> : tensor<4xi64>
  %headsT = kiln.constant dense<[2, 2, 16, 10]> : tensor<4xi64>
  %merged = kiln.constant dense<[20, 32]> : tensor<2xi64>
  %r = kiln.reshape %x, %five {allowzero = 1 : i64} : (tensor<10x2x96xf32>, tensor<5xi64>) -> tensor<1x10x2x3x32xf32>
  %t = kiln.transpose %r {perm = array<i64: 3, 1, 2, 0, 4>} : (tensor<1x10x2x3x32xf32>) -> tensor<3x10x2x1x32xf32>
  %p = kiln.squeeze %t, %m2 : (tensor<3x10x2x1x32xf32>, tensor<1xi64>) -> tensor<3x10x2x32xf32>
  %qs = kiln.slice %p, %c0, %c1, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %ks = kiln.slice %p, %c1, %c2, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %vs = kiln.slice %p, %c2, %c3, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %qr = kiln.reshape %qs, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %qt = kiln.transpose %qr {perm = array<i64: 1, 0, 2>} : (tensor<10x4x16xf32>) -> tensor<4x10x16xf32>
  %q = kiln.reshape %qt, %heads {allowzero = 1 : i64} : (tensor<4x10x16xf32>, tensor<4xi64>) -> tensor<2x2x10x16xf32>
  %kr = kiln.reshape %ks, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %kt0 = kiln.transpose %kr {perm = array<i64: 1, 2, 0>} : (tensor<10x4x16xf32>) -> tensor<4x16x10xf32>
  %kt1 = kiln.reshape %kt0, %headsT {allowzero = 0 : i64} : (tensor<4x16x10xf32>, tensor<4xi64>) -> tensor<2x2x16x10xf32>
  %k = kiln.transpose %kt1 {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x16x10xf32>) -> tensor<2x2x10x16xf32>
  %vr = kiln.reshape %vs, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %vt = kiln.transpose %vr {perm = array<i64: 1, 0, 2>} : (tensor<10x4x16xf32>) -> tensor<4x10x16xf32>
  %v = kiln.reshape %vt, %heads {allowzero = 1 : i64} : (tensor<4x10x16xf32>, tensor<4xi64>) -> tensor<2x2x10x16xf32>
  %a:2 = kiln.attention %q, %k, %v {causal = 0 : i64, scale = 2.500000e-01 : f32} : (tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>) -> (tensor<2x2x10x16xf32>, tensor<2x2x10xf32>)
  %b = kiln.transpose %a#0 {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x2x10x16xf32>) -> tensor<10x2x2x16xf32>
  %y = kiln.reshape %b, %merged {allowzero = 1 : i64} : (tensor<10x2x2x16xf32>, tensor<2xi64>) -> tensor<20x32xf32>
  return %y : tensor<20x32xf32>
}

// -----

// q and k read from the wrong thirds of the projection: not packed.
// CHECK-LABEL: func.func @seq_first_swapped
// CHECK-NOT: kiln.packed_attention
// CHECK: kiln.attention
func.func @seq_first_swapped(%x: tensor<10x2x96xf32>) -> tensor<20x32xf32> {
  %five = kiln.constant dense<[1, 10, 2, 3, 32]> : tensor<5xi64>
  %m2 = kiln.constant dense<-2> : tensor<1xi64>
  %c0 = kiln.constant dense<0> : tensor<1xi64>
  %c1 = kiln.constant dense<1> : tensor<1xi64>
  %c2 = kiln.constant dense<2> : tensor<1xi64>
  %c3 = kiln.constant dense<3> : tensor<1xi64>
  %rows = kiln.constant dense<[10, 4, 16]> : tensor<3xi64>
  %heads = kiln.constant dense<[2, 2, 10, 16]> : tensor<4xi64>
  %headsT = kiln.constant dense<[2, 2, 16, 10]> : tensor<4xi64>
  %merged = kiln.constant dense<[20, 32]> : tensor<2xi64>
  %r = kiln.reshape %x, %five {allowzero = 1 : i64} : (tensor<10x2x96xf32>, tensor<5xi64>) -> tensor<1x10x2x3x32xf32>
  %t = kiln.transpose %r {perm = array<i64: 3, 1, 2, 0, 4>} : (tensor<1x10x2x3x32xf32>) -> tensor<3x10x2x1x32xf32>
  %p = kiln.squeeze %t, %m2 : (tensor<3x10x2x1x32xf32>, tensor<1xi64>) -> tensor<3x10x2x32xf32>
  %qs = kiln.slice %p, %c1, %c2, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %ks = kiln.slice %p, %c0, %c1, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %vs = kiln.slice %p, %c2, %c3, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %qr = kiln.reshape %qs, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %qt = kiln.transpose %qr {perm = array<i64: 1, 0, 2>} : (tensor<10x4x16xf32>) -> tensor<4x10x16xf32>
  %q = kiln.reshape %qt, %heads {allowzero = 1 : i64} : (tensor<4x10x16xf32>, tensor<4xi64>) -> tensor<2x2x10x16xf32>
  %kr = kiln.reshape %ks, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %kt0 = kiln.transpose %kr {perm = array<i64: 1, 2, 0>} : (tensor<10x4x16xf32>) -> tensor<4x16x10xf32>
  %kt1 = kiln.reshape %kt0, %headsT {allowzero = 0 : i64} : (tensor<4x16x10xf32>, tensor<4xi64>) -> tensor<2x2x16x10xf32>
  %k = kiln.transpose %kt1 {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x16x10xf32>) -> tensor<2x2x10x16xf32>
  %vr = kiln.reshape %vs, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %vt = kiln.transpose %vr {perm = array<i64: 1, 0, 2>} : (tensor<10x4x16xf32>) -> tensor<4x10x16xf32>
  %v = kiln.reshape %vt, %heads {allowzero = 1 : i64} : (tensor<4x10x16xf32>, tensor<4xi64>) -> tensor<2x2x10x16xf32>
  %a:2 = kiln.attention %q, %k, %v {causal = 0 : i64, scale = 2.500000e-01 : f32} : (tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>) -> (tensor<2x2x10x16xf32>, tensor<2x2x10xf32>)
  %b = kiln.transpose %a#0 {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x2x10x16xf32>) -> tensor<10x2x2x16xf32>
  %y = kiln.reshape %b, %merged {allowzero = 1 : i64} : (tensor<10x2x2x16xf32>, tensor<2xi64>) -> tensor<20x32xf32>
  return %y : tensor<20x32xf32>
}

// -----

// The result transposed batch-first ([B, T, H, D]), not what the
// seq-first kernel writes: not packed.
// CHECK-LABEL: func.func @seq_first_batch_first_result
// CHECK-NOT: kiln.packed_attention
// CHECK: kiln.attention
func.func @seq_first_batch_first_result(%x: tensor<10x2x96xf32>) -> tensor<20x32xf32> {
  %five = kiln.constant dense<[1, 10, 2, 3, 32]> : tensor<5xi64>
  %m2 = kiln.constant dense<-2> : tensor<1xi64>
  %c0 = kiln.constant dense<0> : tensor<1xi64>
  %c1 = kiln.constant dense<1> : tensor<1xi64>
  %c2 = kiln.constant dense<2> : tensor<1xi64>
  %c3 = kiln.constant dense<3> : tensor<1xi64>
  %rows = kiln.constant dense<[10, 4, 16]> : tensor<3xi64>
  %heads = kiln.constant dense<[2, 2, 10, 16]> : tensor<4xi64>
  %headsT = kiln.constant dense<[2, 2, 16, 10]> : tensor<4xi64>
  %merged = kiln.constant dense<[20, 32]> : tensor<2xi64>
  %r = kiln.reshape %x, %five {allowzero = 1 : i64} : (tensor<10x2x96xf32>, tensor<5xi64>) -> tensor<1x10x2x3x32xf32>
  %t = kiln.transpose %r {perm = array<i64: 3, 1, 2, 0, 4>} : (tensor<1x10x2x3x32xf32>) -> tensor<3x10x2x1x32xf32>
  %p = kiln.squeeze %t, %m2 : (tensor<3x10x2x1x32xf32>, tensor<1xi64>) -> tensor<3x10x2x32xf32>
  %qs = kiln.slice %p, %c0, %c1, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %ks = kiln.slice %p, %c1, %c2, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %vs = kiln.slice %p, %c2, %c3, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %qr = kiln.reshape %qs, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %qt = kiln.transpose %qr {perm = array<i64: 1, 0, 2>} : (tensor<10x4x16xf32>) -> tensor<4x10x16xf32>
  %q = kiln.reshape %qt, %heads {allowzero = 1 : i64} : (tensor<4x10x16xf32>, tensor<4xi64>) -> tensor<2x2x10x16xf32>
  %kr = kiln.reshape %ks, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %kt0 = kiln.transpose %kr {perm = array<i64: 1, 2, 0>} : (tensor<10x4x16xf32>) -> tensor<4x16x10xf32>
  %kt1 = kiln.reshape %kt0, %headsT {allowzero = 0 : i64} : (tensor<4x16x10xf32>, tensor<4xi64>) -> tensor<2x2x16x10xf32>
  %k = kiln.transpose %kt1 {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x16x10xf32>) -> tensor<2x2x10x16xf32>
  %vr = kiln.reshape %vs, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %vt = kiln.transpose %vr {perm = array<i64: 1, 0, 2>} : (tensor<10x4x16xf32>) -> tensor<4x10x16xf32>
  %v = kiln.reshape %vt, %heads {allowzero = 1 : i64} : (tensor<4x10x16xf32>, tensor<4xi64>) -> tensor<2x2x10x16xf32>
  %a:2 = kiln.attention %q, %k, %v {causal = 0 : i64, scale = 2.500000e-01 : f32} : (tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>) -> (tensor<2x2x10x16xf32>, tensor<2x2x10xf32>)
  %b = kiln.transpose %a#0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x10x16xf32>) -> tensor<2x10x2x16xf32>
  %y = kiln.reshape %b, %merged {allowzero = 1 : i64} : (tensor<2x10x2x16xf32>, tensor<2xi64>) -> tensor<20x32xf32>
  return %y : tensor<20x32xf32>
}
