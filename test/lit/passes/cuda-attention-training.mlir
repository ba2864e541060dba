// RUN: kiln-opt %s -kiln-cuda-attention="training=1" -cse -split-input-file | FileCheck %s

// kiln-cuda-attention{training}: on a training graph before autodiff (the
// softmax still kiln.softmax, q, k and v results of kiln.split, as
// PyTorch's GPT-2 export traces in bf16 under --precision bf16), causal
// attention over the heads of one [B, T, 3 * H * D] tensor becomes one
// kiln.packed_attention, whose lse autodiff's rule hands to
// kiln.packed_attention_grad.
// CHECK-LABEL: func.func @gpt2_bf16
// CHECK: %[[O:[^,]*]], %{{.*}} = kiln.packed_attention %arg0 {causal = 1 : i64, heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<2x16x96xbf16>) -> (tensor<2x16x2x16xbf16>, tensor<2x2x16xf32>)
// CHECK-NOT: kiln.softmax
// CHECK-NOT: kiln.matmul
// CHECK: kiln.reshape %[[O]]
func.func @gpt2_bf16(%qkv: tensor<2x16x96xbf16>) -> tensor<2x16x32xbf16> {
  %sizes = kiln.constant dense<32> : tensor<3xi64>
  %parts:3 = kiln.split %qkv, %sizes {axis = 2 : i64} : (tensor<2x16x96xbf16>, tensor<3xi64>) -> (tensor<2x16x32xbf16>, tensor<2x16x32xbf16>, tensor<2x16x32xbf16>)
  %heads = kiln.constant dense<[2, 16, 2, 16]> : tensor<4xi64>
  %qh = kiln.reshape %parts#0, %heads {allowzero = 1 : i64} : (tensor<2x16x32xbf16>, tensor<4xi64>) -> tensor<2x16x2x16xbf16>
  %kh = kiln.reshape %parts#1, %heads {allowzero = 1 : i64} : (tensor<2x16x32xbf16>, tensor<4xi64>) -> tensor<2x16x2x16xbf16>
  %vh = kiln.reshape %parts#2, %heads {allowzero = 1 : i64} : (tensor<2x16x32xbf16>, tensor<4xi64>) -> tensor<2x16x2x16xbf16>
  %q = kiln.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xbf16>) -> tensor<2x2x16x16xbf16>
  %k = kiln.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xbf16>) -> tensor<2x2x16x16xbf16>
  %v = kiln.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xbf16>) -> tensor<2x2x16x16xbf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %s = kiln.matmul %q, %kt : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %c = kiln.constant dense<2.500000e-01> : tensor<bf16>
  %z = kiln.mul %s, %c : (tensor<2x2x16x16xbf16>, tensor<bf16>) -> tensor<2x2x16x16xbf16>
  %mask = kiln.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<16x16xi1>
  %ninf = kiln.constant dense<0xFF80> : tensor<bf16>
  %y = kiln.where %mask, %ninf, %z : (tensor<16x16xi1>, tensor<bf16>, tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %x = kiln.cast %y {to = f32} : (tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xf32>
  %p = kiln.softmax %x {axis = 3 : i64} : (tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xf32>
  %pc = kiln.cast %p {to = bf16} : (tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xbf16>
  %o = kiln.matmul %pc, %v : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %ot = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x16x16xbf16>) -> tensor<2x16x2x16xbf16>
  %merged = kiln.constant dense<[2, 16, 32]> : tensor<3xi64>
  %r = kiln.reshape %ot, %merged {allowzero = 1 : i64} : (tensor<2x16x2x16xbf16>, tensor<3xi64>) -> tensor<2x16x32xbf16>
  return %r : tensor<2x16x32xbf16>
}

// -----

// In training mode the attention must have a gradient kernel: f32 (the
// f32 kernel has no backward) and a head of 128 (the backward kernel takes
// up to 64) keep their ops; outside training both would be formed.
// CHECK-LABEL: func.func @no_gradient_kernel
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
// CHECK: kiln.softmax
func.func @no_gradient_kernel(%q: tensor<1x1x64x16xf32>, %kt: tensor<1x1x16x64xf32>, %v: tensor<1x1x64x16xf32>, %qw: tensor<1x1x64x128xbf16>, %ktw: tensor<1x1x128x64xbf16>, %vw: tensor<1x1x64x128xbf16>) -> (tensor<1x1x64x16xf32>, tensor<1x1x64x128xbf16>) {
  %s = kiln.matmul %q, %kt : (tensor<1x1x64x16xf32>, tensor<1x1x16x64xf32>) -> tensor<1x1x64x64xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : (tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  %y = kiln.matmul %p, %v : (tensor<1x1x64x64xf32>, tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32>
  %sw = kiln.matmul %qw, %ktw : (tensor<1x1x64x128xbf16>, tensor<1x1x128x64xbf16>) -> tensor<1x1x64x64xbf16>
  %xw = kiln.cast %sw {to = f32} : (tensor<1x1x64x64xbf16>) -> tensor<1x1x64x64xf32>
  %pw = kiln.softmax %xw {axis = 3 : i64} : (tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  %pwc = kiln.cast %pw {to = bf16} : (tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xbf16>
  %yw = kiln.matmul %pwc, %vw : (tensor<1x1x64x64xbf16>, tensor<1x1x64x128xbf16>) -> tensor<1x1x64x128xbf16>
  return %y, %yw : tensor<1x1x64x16xf32>, tensor<1x1x64x128xbf16>
}
