// kiln-lower-cpu: f32 matmuls and convolutions with static shapes become
// oneDNN calls, a matrix transpose of an operand read in place, a constant
// operand packed at load (pack_b / pack_w), and the fusion after them folded
// as oneDNN post-ops when it computes act(result + bias + residual) (the
// epilogue vocabulary of the CUDA target, plus gelu_erf); other library ops
// call the runtime's kernels; views are aliases; every other op outside a
// fusion is a reference step on the CPU. A product of at most 8 rows by a
// constant matrix of 1 MB or more runs on the runtime's panel GEMM. A GRU or
// LSTM recurrence with
// constant recurrence weights is a oneDNN-backed call too; a gather, a
// concat, an argmax, an argmin, a gather_elements, a trilu, a hardmax, a
// scatter, a gather_nd, a grid_sample, a dft, a roi_align or a deform_conv a
// kernel of its own.

// RUN: kiln-opt %s -split-input-file -kiln-fuse -kiln-lower-cpu | FileCheck %s

// A Linear layer: the weight's transpose read in place, the bias folded.
// CHECK-LABEL: func.func @linear(
// CHECK-NOT: kiln.transpose
// CHECK: %[[MM:.*]] = kiln.library_call "onednn.matmul"(%arg0, %arg1, %arg2) {epilogue = "bias", params = {batch = 1 : i64, k = 16 : i64, m = 8 : i64, n = 4 : i64, pack_b = true, stride_a = 0 : i64, stride_b = 0 : i64}, roles = ["a", "b", "bias"], transpose_b = true}
// CHECK-NOT: kiln.fusion
// CHECK: return %[[MM]]
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<4x16xf32> {kiln.weight}, %b: tensor<4xf32> {kiln.weight}) -> tensor<8x4xf32> {
  %wt = kiln.transpose %w {perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %0 = kiln.matmul %x, %wt : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = kiln.add %0, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// ONNX's exact GELU after the bias (x * 0.5 * (1 + erf(x / sqrt(2)))).
// CHECK-LABEL: func.func @bias_gelu_erf(
// CHECK: kiln.library_call "onednn.matmul"(%arg0, %arg1, %arg2) {epilogue = "bias_gelu_erf"
// CHECK-NOT: kiln.fusion
func.func @bias_gelu_erf(%x: tensor<8x16xf32>, %w: tensor<16x4xf32> {kiln.weight}, %b: tensor<4xf32> {kiln.weight}) -> tensor<8x4xf32> {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = kiln.add %0, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %2 = kiln.div %1, %sqrt2 : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %3 = kiln.erf %2 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %4 = kiln.add %3, %one : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %5 = kiln.mul %1, %4 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %6 = kiln.mul %5, %half : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  return %6 : tensor<8x4xf32>
}

// -----

// A product of at most 8 rows by a constant B of 1 MB or more (a batch-8
// Linear layer) runs on the runtime's panel GEMM, which folds the bias and
// the residual (and ReLU) but not GELU: the GELU after it stays a kernel.
// 9 rows, or a B computed at run time, stay with oneDNN.
// CHECK-LABEL: func.func @panels(
// CHECK: %[[P:.*]] = kiln.library_call "cpu.panel_matmul"(%arg0, %arg1, %arg2, %arg3) {epilogue = "bias_residual", params = {batch = 1 : i64, k = 1024 : i64, m = 8 : i64, n = 256 : i64, pack_b = true, {{.*}}roles = ["a", "b", "bias", "residual"]}
// CHECK: %[[G:.*]] = kiln.library_call "cpu.panel_matmul"(%[[P]], %arg4) {params = {batch = 1 : i64, k = 256 : i64, m = 8 : i64, n = 1024 : i64, pack_b = true
// CHECK: kiln.fusion {{.*}}ins(%[[G]], %arg5
// CHECK: kiln.erf
// CHECK: kiln.library_call "onednn.matmul"(%arg6, %arg1) {{.*}}m = 9 : i64
// CHECK: kiln.library_call "onednn.matmul"(%arg0, %arg7) {{.*}}pack_b = false
func.func @panels(%x: tensor<8x1024xf32>, %w: tensor<1024x256xf32> {kiln.weight}, %b: tensor<256xf32> {kiln.weight}, %r: tensor<8x256xf32>, %w2: tensor<256x1024xf32> {kiln.weight}, %b2: tensor<1024xf32> {kiln.weight}, %x9: tensor<9x1024xf32>, %wr: tensor<1024x256xf32>) -> (tensor<8x1024xf32>, tensor<9x256xf32>, tensor<8x256xf32>) {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.matmul %x, %w : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
  %1 = kiln.add %0, %b : (tensor<8x256xf32>, tensor<256xf32>) -> tensor<8x256xf32>
  %2 = kiln.add %r, %1 : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
  %3 = kiln.matmul %2, %w2 : (tensor<8x256xf32>, tensor<256x1024xf32>) -> tensor<8x1024xf32>
  %4 = kiln.add %3, %b2 : (tensor<8x1024xf32>, tensor<1024xf32>) -> tensor<8x1024xf32>
  %5 = kiln.div %4, %sqrt2 : (tensor<8x1024xf32>, tensor<f32>) -> tensor<8x1024xf32>
  %6 = kiln.erf %5 : (tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %7 = kiln.add %6, %one : (tensor<8x1024xf32>, tensor<f32>) -> tensor<8x1024xf32>
  %8 = kiln.mul %4, %7 : (tensor<8x1024xf32>, tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %9 = kiln.mul %8, %half : (tensor<8x1024xf32>, tensor<f32>) -> tensor<8x1024xf32>
  %10 = kiln.matmul %x9, %w : (tensor<9x1024xf32>, tensor<1024x256xf32>) -> tensor<9x256xf32>
  %11 = kiln.matmul %x, %wr : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
  return %9, %10, %11 : tensor<8x1024xf32>, tensor<9x256xf32>, tensor<8x256xf32>
}

// -----

// A residual add after the bias (a transformer's output projection).
// CHECK-LABEL: func.func @bias_residual(
// CHECK: kiln.library_call "onednn.matmul"(%arg0, %arg1, %arg2, %arg3) {epilogue = "bias_residual", {{.*}}roles = ["a", "b", "bias", "residual"]}
// CHECK-NOT: kiln.fusion
func.func @bias_residual(%x: tensor<1x8x16xf32>, %w: tensor<16x4xf32> {kiln.weight}, %b: tensor<4xf32> {kiln.weight}, %r: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  %0 = kiln.matmul %x, %w : (tensor<1x8x16xf32>, tensor<16x4xf32>) -> tensor<1x8x4xf32>
  %1 = kiln.add %0, %b : (tensor<1x8x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  %2 = kiln.add %r, %1 : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %2 : tensor<1x8x4xf32>
}

// -----

// A batched product of two activations: nothing packed; a fusion that is
// not an epilogue stays.
// CHECK-LABEL: func.func @batched(
// CHECK: %[[MM:.*]] = kiln.library_call "onednn.matmul"(%arg0, %arg1) {params = {batch = 2 : i64, k = 4 : i64, m = 8 : i64, n = 8 : i64, pack_b = false, stride_a = 32 : i64, stride_b = 32 : i64}, roles = ["a", "b"]}
// CHECK: kiln.fusion {{.*}} ins(%[[MM]]
func.func @batched(%q: tensor<2x8x4xf32>, %k: tensor<2x4x8xf32>) -> tensor<2x8x8xf32> {
  %0 = kiln.matmul %q, %k : (tensor<2x8x4xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
  %1 = kiln.exp %0 : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %1 : tensor<2x8x8xf32>
}

// -----

// Convolutions: a per-channel bias, a residual and ReLU folded; the
// weights packed when constant.
// CHECK-LABEL: func.func @conv_block(
// CHECK: %[[C:.*]] = kiln.library_call "onednn.conv"(%arg0, %arg1, %arg2) {epilogue = "bias_relu", params = {algorithm = "direct", dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nchw", pack_w = true, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}, roles = ["x", "w", "bias"]}
// CHECK: kiln.library_call "onednn.conv"(%[[C]], %arg3, %arg0) {epilogue = "residual_relu", params = {{{.*}}pack_w = false{{.*}}}, roles = ["x", "w", "residual"]}
func.func @conv_block(%x: tensor<1x2x4x4xf32>, %k: tensor<2x2x3x3xf32> {kiln.weight}, %b: tensor<2x1x1xf32> {kiln.weight}, %k2: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %0 = kiln.conv %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = kiln.add %0, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = kiln.relu %1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = kiln.conv %2, %k2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %4 = kiln.add %3, %x : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %5 = kiln.relu %4 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %5 : tensor<1x2x4x4xf32>
}

// -----

// A channels-last convolution (kiln-channels-last) keeps its layout.
// CHECK-LABEL: func.func @conv_nhwc(
// CHECK: kiln.library_call "onednn.conv"(%arg0, %arg1) {params = {algorithm = "direct", dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pack_w = true, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>}, roles = ["x", "w"]}
func.func @conv_nhwc(%x: tensor<1x4x4x2xf32>, %k: tensor<3x3x3x2xf32> {kiln.weight}) -> tensor<1x2x2x3xf32> {
  %0 = kiln.conv %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>, tensor<3x3x3x2xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

// Winograd's algorithm for a 3x3 convolution of stride 1 with at least
// 28x28 output pixels, channels in and out a multiple of 16, constant
// weights and a bias and ReLU at most after it; the direct one otherwise:
// 14x14 pixels, 8 input channels, weights computed at run time, a residual.
// CHECK-LABEL: func.func @conv_winograd(
// CHECK: %[[W:.*]] = kiln.library_call "onednn.conv"(%arg0, %arg1, %arg2) {epilogue = "bias_relu", params = {algorithm = "winograd", {{.*}}pack_w = true
// CHECK: kiln.library_call "onednn.conv"(%arg3, %arg1) {params = {algorithm = "direct",
// CHECK: kiln.library_call "onednn.conv"(%arg4, %arg5) {params = {algorithm = "direct",
// CHECK: kiln.library_call "onednn.conv"(%arg0, %arg6) {params = {algorithm = "direct", {{.*}}pack_w = false
// CHECK: kiln.library_call "onednn.conv"(%[[W]], %arg1, %arg0) {epilogue = "residual", params = {algorithm = "direct",
func.func @conv_winograd(%x: tensor<1x28x28x16xf32>, %k: tensor<16x3x3x16xf32> {kiln.weight}, %b: tensor<16xf32> {kiln.weight}, %small: tensor<1x14x14x16xf32>, %narrow: tensor<1x28x28x8xf32>, %k8: tensor<16x3x3x8xf32> {kiln.weight}, %kRun: tensor<16x3x3x16xf32>) -> (tensor<1x28x28x16xf32>, tensor<1x14x14x16xf32>, tensor<1x28x28x16xf32>, tensor<1x28x28x16xf32>, tensor<1x28x28x16xf32>) {
  %0 = kiln.conv %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x28x28x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x28x28x16xf32>
  %1 = kiln.add %0, %b : (tensor<1x28x28x16xf32>, tensor<16xf32>) -> tensor<1x28x28x16xf32>
  %2 = kiln.relu %1 : (tensor<1x28x28x16xf32>) -> tensor<1x28x28x16xf32>
  %3 = kiln.conv %small, %k {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x14x14x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x14x14x16xf32>
  %4 = kiln.conv %narrow, %k8 {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x28x28x8xf32>, tensor<16x3x3x8xf32>) -> tensor<1x28x28x16xf32>
  %5 = kiln.conv %x, %kRun {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x28x28x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x28x28x16xf32>
  %6 = kiln.conv %2, %k {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x28x28x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x28x28x16xf32>
  %7 = kiln.add %6, %x : (tensor<1x28x28x16xf32>, tensor<1x28x28x16xf32>) -> tensor<1x28x28x16xf32>
  return %2, %3, %4, %5, %7 : tensor<1x28x28x16xf32>, tensor<1x14x14x16xf32>, tensor<1x28x28x16xf32>, tensor<1x28x28x16xf32>, tensor<1x28x28x16xf32>
}

// -----

// The runtime's panel convolution (im2col, then a GEMM streaming the
// weights) for a channels-last convolution of at most 64 output pixels by
// constant weights of at least 2^18 elements, one group, dilation 1, and a
// bias, residual and ReLU at most after it: a 1x1 one with a residual and
// ReLU, a strided 3x3 one. Direct otherwise: 196 pixels, weights of 2^12
// elements, dilation 2, weights computed at run time, a sigmoid after it,
// channels first.
// CHECK-LABEL: func.func @conv_panels(
// CHECK: kiln.library_call "onednn.conv"(%arg0, %arg1, %arg2) {epilogue = "residual_relu", params = {algorithm = "panels", {{.*}}pack_w = true
// CHECK: kiln.library_call "onednn.conv"(%arg3, %arg4) {params = {algorithm = "panels", {{.*}}strides = array<i64: 2, 2>}
// CHECK: kiln.library_call "onednn.conv"(%arg5, %arg1) {params = {algorithm = "direct",
// CHECK: kiln.library_call "onednn.conv"(%arg6, %arg7) {params = {algorithm = "direct",
// CHECK: kiln.library_call "onednn.conv"(%arg8, %arg9) {params = {algorithm = "direct", dilations = array<i64: 2, 2>
// CHECK: kiln.library_call "onednn.conv"(%arg0, %arg10) {params = {algorithm = "direct", {{.*}}pack_w = false
// CHECK: kiln.library_call "onednn.conv"(%arg0, %arg1) {epilogue = "sigmoid", params = {algorithm = "direct",
// CHECK: kiln.library_call "onednn.conv"(%arg11, %arg12) {params = {algorithm = "direct", {{.*}}layout = "nchw"
func.func @conv_panels(%x: tensor<1x7x7x512xf32>, %k: tensor<512x1x1x512xf32> {kiln.weight}, %r: tensor<1x7x7x512xf32>, %x14: tensor<1x14x14x64xf32>, %k3: tensor<512x3x3x64xf32> {kiln.weight}, %big: tensor<1x14x14x512xf32>, %x64: tensor<1x7x7x64xf32>, %k64: tensor<64x1x1x64xf32> {kiln.weight}, %x9: tensor<1x9x9x64xf32>, %k3b: tensor<512x3x3x64xf32> {kiln.weight}, %kRun: tensor<512x1x1x512xf32>, %xc: tensor<1x512x7x7xf32>, %kc: tensor<512x512x1x1xf32> {kiln.weight}) -> (tensor<1x7x7x512xf32>, tensor<1x7x7x512xf32>, tensor<1x14x14x512xf32>, tensor<1x7x7x64xf32>, tensor<1x5x5x512xf32>, tensor<1x7x7x512xf32>, tensor<1x7x7x512xf32>, tensor<1x512x7x7xf32>) {
  %0 = kiln.conv %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x7x7x512xf32>, tensor<512x1x1x512xf32>) -> tensor<1x7x7x512xf32>
  %1 = kiln.add %0, %r : (tensor<1x7x7x512xf32>, tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %2 = kiln.relu %1 : (tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %3 = kiln.conv %x14, %k3 {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x14x14x64xf32>, tensor<512x3x3x64xf32>) -> tensor<1x7x7x512xf32>
  %4 = kiln.conv %big, %k {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x14x14x512xf32>, tensor<512x1x1x512xf32>) -> tensor<1x14x14x512xf32>
  %5 = kiln.conv %x64, %k64 {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x7x7x64xf32>, tensor<64x1x1x64xf32>) -> tensor<1x7x7x64xf32>
  %6 = kiln.conv %x9, %k3b {dilations = array<i64: 2, 2>, group = 1 : i64, layout = "nhwc", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x9x9x64xf32>, tensor<512x3x3x64xf32>) -> tensor<1x5x5x512xf32>
  %7 = kiln.conv %x, %kRun {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x7x7x512xf32>, tensor<512x1x1x512xf32>) -> tensor<1x7x7x512xf32>
  %8 = kiln.conv %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x7x7x512xf32>, tensor<512x1x1x512xf32>) -> tensor<1x7x7x512xf32>
  %9 = kiln.sigmoid %8 : (tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %10 = kiln.conv %xc, %kc {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x512x7x7xf32>, tensor<512x512x1x1xf32>) -> tensor<1x512x7x7xf32>
  return %2, %3, %4, %5, %6, %7, %9, %10 : tensor<1x7x7x512xf32>, tensor<1x7x7x512xf32>, tensor<1x14x14x512xf32>, tensor<1x7x7x64xf32>, tensor<1x5x5x512xf32>, tensor<1x7x7x512xf32>, tensor<1x7x7x512xf32>, tensor<1x512x7x7xf32>
}

// -----

// What oneDNN does not take here runs the runtime's kernels: a bf16 matmul,
// a transposed convolution; a reshape is an alias; a bf16 max pooling is a
// kernel of its own (CppWindowKernels.cpp).
// CHECK-LABEL: func.func @others(
// CHECK: kiln.library_call "runtime.matmul"(%arg0, %arg1) {roles = ["a", "b"]}
// CHECK: kiln.library_call "runtime.conv_transpose"(%arg2, %arg3)
// CHECK: kiln.reshape {{.*}}kiln.alias
// CHECK: kiln.max_pool {{.*}}kiln.kernel = "o0_max_pool"
func.func @others(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>, %x: tensor<1x2x4x4xf32>, %k: tensor<2x2x2x2xf32>, %h: tensor<1x2x4x4xbf16>) -> (tensor<4x4xbf16>, tensor<1x2x8x8xf32>, tensor<2x16xf32>, tensor<1x2x2x2xbf16>) {
  %0 = kiln.matmul %a, %b : (tensor<4x8xbf16>, tensor<8x4xbf16>) -> tensor<4x4xbf16>
  %1 = kiln.conv_transpose %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  %shape = kiln.constant dense<[2, 16]> : tensor<2xi64>
  %2 = kiln.reshape %x, %shape {allowzero = 0 : i64} : (tensor<1x2x4x4xf32>, tensor<2xi64>) -> tensor<2x16xf32>
  %3 = kiln.max_pool %h {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xbf16>) -> tensor<1x2x2x2xbf16>
  return %0, %1, %2, %3 : tensor<4x4xbf16>, tensor<1x2x8x8xf32>, tensor<2x16xf32>, tensor<1x2x2x2xbf16>
}

// -----

// An f32 max pooling is oneDNN's (channels last here, as after
// kiln-channels-last).
// CHECK-LABEL: func.func @max_pool(
// CHECK: kiln.library_call "onednn.max_pool"(%arg0) {params = {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}, roles = ["x"]}
func.func @max_pool(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.max_pool %x {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// An f32 average pooling is oneDNN's too, unless it counts the pads and
// ceil_mode's last window reaches past them (oneDNN would count that
// overhang as padding): that one is a kernel of its own.
// CHECK-LABEL: func.func @avg_pool(
// CHECK: kiln.library_call "onednn.avg_pool"(%arg0) {params = {count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, layout = "nchw", pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}, roles = ["x"]}
// CHECK: kiln.library_call "onednn.avg_pool"(%arg0) {params = {count_include_pad = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, layout = "nchw", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}, roles = ["x"]}
// CHECK: kiln.avg_pool {{.*}}kiln.kernel = "o0_avg_pool"
func.func @avg_pool(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %0 = kiln.avg_pool %x {ceil_mode = 1 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  %1 = kiln.avg_pool %x {ceil_mode = 0 : i64, count_include_pad = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  %2 = kiln.avg_pool %x {ceil_mode = 1 : i64, count_include_pad = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %0, %1, %2 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// A pad with constant pads is a kernel of its own, in every mode (an
// attention mask padded to the keys' length, a reflect pad cropping), and so
// is a max pooling of integers; a pad whose pads are read at run time stays
// a reference step.
// CHECK-LABEL: func.func @pads(
// CHECK: kiln.pad %arg0, %{{.*}}, %{{.*}} {kiln.kernel = "o0_pad", mode = "constant"}
// CHECK: kiln.pad %arg0, %{{.*}}, %{{.*}} {kiln.kernel = "o1_pad", mode = "reflect"}
// CHECK: kiln.pad %arg0, %arg1, %{{.*}} {kiln.reference = "cpu", mode = "edge"}
// CHECK: kiln.max_pool %arg2 {{.*}}kiln.kernel = "o0_max_pool"
func.func @pads(%x: tensor<2x4x4xf32>, %p: tensor<6xi64>, %q: tensor<1x1x4x4xui8>) -> (tensor<2x4x6xf32>, tensor<2x4x3xf32>, tensor<?x?x?xf32>, tensor<1x1x3x3xui8>) {
  %v = kiln.constant dense<0xFF800000> : tensor<f32>
  %p0 = kiln.constant dense<[0, 0, 0, 0, 0, 2]> : tensor<6xi64>
  %p1 = kiln.constant dense<[0, 0, 2, 0, 0, -3]> : tensor<6xi64>
  %0 = kiln.pad %x, %p0, %v {mode = "constant"} : (tensor<2x4x4xf32>, tensor<6xi64>, tensor<f32>) -> tensor<2x4x6xf32>
  %1 = kiln.pad %x, %p1, %v {mode = "reflect"} : (tensor<2x4x4xf32>, tensor<6xi64>, tensor<f32>) -> tensor<2x4x3xf32>
  %2 = kiln.pad %x, %p, %v {mode = "edge"} : (tensor<2x4x4xf32>, tensor<6xi64>, tensor<f32>) -> tensor<?x?x?xf32>
  %3 = kiln.max_pool %q {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xui8>) -> tensor<1x1x3x3xui8>
  return %0, %1, %2, %3 : tensor<2x4x6xf32>, tensor<2x4x3xf32>, tensor<?x?x?xf32>, tensor<1x1x3x3xui8>
}

// -----

// An einsum the reference sums in a loop (a diagonal, int32 products) is a
// kernel of its own (CppEinsumKernel.cpp); an f32 one in matmul form, which
// the reference computes as a GEMM, stays a reference step.
// CHECK-LABEL: func.func @einsums(
// CHECK: kiln.einsum %arg0 {equation = "bii->bi", kiln.kernel = "o0_einsum"}
// CHECK: kiln.einsum %arg1, %arg1 {equation = "ij,jk->ik", kiln.kernel = "o1_einsum"}
// CHECK: kiln.einsum %arg2, %arg2 {equation = "bij,bjk->bik", kiln.reference = "cpu"}
func.func @einsums(%d: tensor<2x3x3xf32>, %n: tensor<3x3xi32>, %m: tensor<2x3x3xf32>) -> (tensor<2x3xf32>, tensor<3x3xi32>, tensor<2x3x3xf32>) {
  %0 = kiln.einsum %d {equation = "bii->bi"} : (tensor<2x3x3xf32>) -> tensor<2x3xf32>
  %1 = kiln.einsum %n, %n {equation = "ij,jk->ik"} : (tensor<3x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi32>
  %2 = kiln.einsum %m, %m {equation = "bij,bjk->bik"} : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<3x3xi32>, tensor<2x3x3xf32>
}

// -----

// A dft, a roi_align and a deform_conv of f32 or f64 with static shapes are
// kernels of their own (CppSignalKernels.cpp, CppImageKernels.cpp); an f16
// dft and one longer than the kernel takes stay reference steps.
// CHECK-LABEL: func.func @signal_image(
// CHECK: kiln.dft %arg0 {{.*}}kiln.kernel = "o0_dft"
// CHECK: kiln.dft %arg1 {{.*}}kiln.kernel = "o1_dft"
// CHECK: kiln.dft %arg2 {{.*}}kiln.reference = "cpu"
// CHECK: kiln.dft %arg0 {{.*}}kiln.reference = "cpu"
// CHECK: kiln.roi_align %arg3, %arg4, %arg5 {{.*}}kiln.kernel = "o0_roi_align"
// CHECK: kiln.deform_conv %arg6, %arg7, %arg8, %arg9, %arg10 {{.*}}kiln.kernel = "o0_deform_conv"
func.func @signal_image(%s: tensor<2x10x1xf32>, %c: tensor<3x6x2xf64>, %h: tensor<1x10x1xf16>, %x: tensor<1x1x10x10xf32>, %rois: tensor<3x4xf32>, %batch: tensor<3xi64>, %dx: tensor<1x1x3x3xf32>, %dw: tensor<1x1x2x2xf32>, %doff: tensor<1x8x2x2xf32>, %db: tensor<1xf32>, %dm: tensor<1x4x2x2xf32>) -> (tensor<2x6x2xf32>, tensor<3x10x1xf64>, tensor<1x10x2xf16>, tensor<2x10000x2xf32>, tensor<3x1x5x5xf32>, tensor<1x1x2x2xf32>) {
  %0 = kiln.dft %s {axis = 1 : i64, inverse = 0 : i64, length = 10 : i64, onesided = 1 : i64} : (tensor<2x10x1xf32>) -> tensor<2x6x2xf32>
  %1 = kiln.dft %c {axis = 1 : i64, inverse = 1 : i64, length = 10 : i64, onesided = 1 : i64} : (tensor<3x6x2xf64>) -> tensor<3x10x1xf64>
  %2 = kiln.dft %h {axis = 1 : i64, inverse = 0 : i64, length = 10 : i64, onesided = 0 : i64} : (tensor<1x10x1xf16>) -> tensor<1x10x2xf16>
  %3 = kiln.dft %s {axis = 1 : i64, inverse = 0 : i64, length = 10000 : i64, onesided = 0 : i64} : (tensor<2x10x1xf32>) -> tensor<2x10000x2xf32>
  %4 = kiln.roi_align %x, %rois, %batch {half_pixel = 1 : i64, mode = "avg", output_height = 5 : i64, output_width = 5 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.000000e+00 : f32} : (tensor<1x1x10x10xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x1x5x5xf32>
  %5 = kiln.deform_conv %dx, %dw, %doff, %db, %dm {dilations = array<i64: 1, 1>, group = 1 : i64, offset_group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x8x2x2xf32>, tensor<1xf32>, tensor<1x4x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x6x2xf32>, tensor<3x10x1xf64>, tensor<1x10x2xf16>, tensor<2x10000x2xf32>, tensor<3x1x5x5xf32>, tensor<1x1x2x2xf32>
}

// -----

// A graph traced at one size of a range (kiln.size_range): its sizes are
// run-time values, so its matmuls call the runtime's kernels.
// CHECK-LABEL: func.func @range(
// CHECK: kiln.library_call "runtime.matmul"
module attributes {kiln.size_range} {
  func.func @range(%x: tensor<8x16xf32>, %w: tensor<16x4xf32> {kiln.weight}) -> tensor<8x4xf32> {
    %0 = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}

// -----

// oneDNN's eltwise post-ops fold sigmoid, tanh and hard swish too (a
// MobileNetV3 block's convolution, a gate's matmul).
// CHECK-LABEL: func.func @more_activations(
// CHECK: kiln.library_call "onednn.conv"(%arg0, %arg1, %arg2) {epilogue = "bias_hard_swish"
// CHECK: kiln.library_call "onednn.matmul"(%arg3, %arg4) {epilogue = "sigmoid"
// CHECK-NOT: kiln.fusion
func.func @more_activations(%x: tensor<1x2x4x4xf32>, %k: tensor<2x2x3x3xf32> {kiln.weight}, %b: tensor<2x1x1xf32> {kiln.weight}, %a: tensor<8x16xf32>, %w: tensor<16x4xf32> {kiln.weight}) -> (tensor<1x2x4x4xf32>, tensor<8x4xf32>) {
  %0 = kiln.conv %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = kiln.add %0, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %2 = kiln.hard_swish %1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = kiln.matmul %a, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %4 = kiln.sigmoid %3 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %2, %4 : tensor<1x2x4x4xf32>, tensor<8x4xf32>
}

// -----

// Constant weights that kiln-channels-last transposed for a channels-last
// convolution are read as they are (w_layout = "oihw"): no transposed copy.
// CHECK-LABEL: func.func @conv_weights_in_place(
// CHECK-NOT: kiln.transpose
// CHECK: kiln.library_call "onednn.conv"(%arg0, %arg1) {params = {algorithm = "direct", dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pack_w = true, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, w_layout = "oihw"}, roles = ["x", "w"]}
func.func @conv_weights_in_place(%x: tensor<1x4x4x2xf32>, %k: tensor<3x2x3x3xf32> {kiln.weight}) -> tensor<1x4x4x3xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<3x2x3x3xf32>) -> tensor<3x3x3x2xf32>
  %0 = kiln.conv %x, %kt {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<3x3x3x2xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

// The recurrences kiln-split-recurrent leaves: with constant recurrence
// weights they are oneDNN calls (a matmul of the state per step, its
// weights packed at load), the op's attributes and sizes in params, the
// operands by role (a GRU's recurrence bias rb; an LSTM's peepholes p, both
// initial states and its run-time sequence lengths); recurrence weights
// that are a run-time value are read by each run (pack_r = false).
// CHECK-LABEL: func.func @recurrences(
// CHECK: %[[G:.*]]:2 = kiln.library_call "onednn.gru_recurrence"(%arg0, %arg1, %arg2, %arg3) {params = {batch = 2 : i64, clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, linear_before_reset = 1 : i64, pack_r = true, seq = 4 : i64}, roles = ["xw", "r", "rb", "h0"]}
// CHECK: %[[L:.*]]:3 = kiln.library_call "onednn.lstm_recurrence"(%arg4, %arg5, %arg6, %arg7, %arg8, %arg9) {params = {batch = 2 : i64, clip = 2.500000e+00 : f32, direction = "bidirectional", hidden_size = 5 : i64, input_forget = 0 : i64, pack_r = true, seq = 4 : i64}, roles = ["xw", "r", "p", "h0", "c0", "lengths"]}
// CHECK: kiln.library_call "onednn.gru_recurrence"(%arg0, %arg10, %arg2, %arg3) {params = {{{.*}}linear_before_reset = 0 : i64, pack_r = false,
// CHECK: return %[[G]]#0, %[[L]]#1,
func.func @recurrences(%xw: tensor<4x2x15xf32>, %r: tensor<1x15x5xf32> {kiln.weight}, %rb: tensor<1x15xf32> {kiln.weight}, %h0: tensor<1x2x5xf32>, %lxw: tensor<4x2x40xf32>, %lr: tensor<2x20x5xf32> {kiln.weight}, %p: tensor<2x15xf32> {kiln.weight}, %lh0: tensor<2x2x5xf32>, %lc0: tensor<2x2x5xf32>, %lens: tensor<2xi32>, %rin: tensor<1x15x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<2x2x5xf32>, tensor<4x1x2x5xf32>) {
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, linear_before_reset = 1 : i64} : (tensor<4x2x15xf32>, tensor<1x15x5xf32>, tensor<1x15xf32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  %ly, %lyh, %lyc = kiln.lstm_recurrence %lxw, %lr, %p, %lh0, %lc0, %lens {clip = 2.500000e+00 : f32, direction = "bidirectional", hidden_size = 5 : i64, input_forget = 0 : i64} : (tensor<4x2x40xf32>, tensor<2x20x5xf32>, tensor<2x15xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>, tensor<2xi32>) -> (tensor<4x2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  %y2, %yh2 = kiln.gru_recurrence %xw, %rin, %rb, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, linear_before_reset = 0 : i64} : (tensor<4x2x15xf32>, tensor<1x15x5xf32>, tensor<1x15xf32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  return %y, %lyh, %y2 : tensor<4x1x2x5xf32>, tensor<2x2x5xf32>, tensor<4x1x2x5xf32>
}

// -----

// A gather (an embedding lookup), a concat, an argmax/argmin and a
// gather_elements of static shapes outside a fusion are kernels of their own
// (o<N>_<op>), not reference steps.
// CHECK-LABEL: func.func @data_movement(
// CHECK: kiln.gather %arg0, %arg1 {axis = 0 : i64, kiln.kernel = "o0_gather"}
// CHECK: kiln.concat %arg2, %arg3 {axis = 1 : i64, kiln.kernel = "o0_concat"}
// CHECK: kiln.concat %arg3, %arg3 {axis = 2 : i64, kiln.kernel = "o1_concat"}
// CHECK: kiln.argmax %arg3 {axis = 2 : i64, keepdims = 0 : i64, kiln.kernel = "o0_argmax", select_last_index = 0 : i64}
// CHECK: kiln.argmin %arg3 {axis = 1 : i64, keepdims = 1 : i64, kiln.kernel = "o0_argmin", select_last_index = 1 : i64}
// CHECK: kiln.gather_elements %arg3, %arg4 {axis = 2 : i64, kiln.kernel = "o0_gather_elements"}
func.func @data_movement(%table: tensor<10x4xf32> {kiln.weight}, %tokens: tensor<2x3xi64>, %cls: tensor<1x1x4xf32>, %patches: tensor<1x5x4xf32>, %picks: tensor<1x5x1xi64>) -> (tensor<2x3x4xf32>, tensor<1x6x4xf32>, tensor<1x5x8xf32>, tensor<1x5xi64>, tensor<1x1x4xi64>, tensor<1x5x1xf32>) {
  %0 = kiln.gather %table, %tokens {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = kiln.concat %cls, %patches {axis = 1 : i64} : (tensor<1x1x4xf32>, tensor<1x5x4xf32>) -> tensor<1x6x4xf32>
  %2 = kiln.concat %patches, %patches {axis = 2 : i64} : (tensor<1x5x4xf32>, tensor<1x5x4xf32>) -> tensor<1x5x8xf32>
  %3 = kiln.argmax %patches {axis = 2 : i64, keepdims = 0 : i64, select_last_index = 0 : i64} : (tensor<1x5x4xf32>) -> tensor<1x5xi64>
  %4 = kiln.argmin %patches {axis = 1 : i64, keepdims = 1 : i64, select_last_index = 1 : i64} : (tensor<1x5x4xf32>) -> tensor<1x1x4xi64>
  %5 = kiln.gather_elements %patches, %picks {axis = 2 : i64} : (tensor<1x5x4xf32>, tensor<1x5x1xi64>) -> tensor<1x5x1xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3x4xf32>, tensor<1x6x4xf32>, tensor<1x5x8xf32>, tensor<1x5xi64>, tensor<1x1x4xi64>, tensor<1x5x1xf32>
}

// -----

// A trilu (its diagonal read at run time), a hardmax, the scatters (with
// reductions or without), a gather_nd and a grid_sample of static shapes are
// kernels of their own (CppIndexKernels.cpp), not reference steps.
// CHECK-LABEL: func.func @index_kernels(
// CHECK: kiln.trilu %arg0, %arg1 {kiln.kernel = "o0_trilu", upper = 0 : i64}
// CHECK: kiln.hardmax %arg0 {axis = 0 : i64, kiln.kernel = "o0_hardmax"}
// CHECK: kiln.scatter_elements %arg0, %arg2, %arg3 {axis = 1 : i64, kiln.kernel = "o0_scatter_elements", reduction = "none"}
// CHECK: kiln.scatter_elements %arg0, %arg2, %arg3 {axis = 0 : i64, kiln.kernel = "o1_scatter_elements", reduction = "max"}
// CHECK: kiln.scatter_nd %arg0, %arg4, %arg5 {kiln.kernel = "o0_scatter_nd", reduction = "mul"}
// CHECK: kiln.gather_nd %arg0, %arg4 {batch_dims = 0 : i64, kiln.kernel = "o0_gather_nd"}
// CHECK: kiln.grid_sample %arg6, %arg7 {align_corners = 0 : i64, kiln.kernel = "o0_grid_sample", mode = "cubic", padding_mode = "reflection"}
func.func @index_kernels(%x: tensor<3x4xf32>, %k: tensor<i64>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>, %t: tensor<2x1xi32>, %v: tensor<2x4xf32>, %img: tensor<1x2x4x4xf32>, %grid: tensor<1x3x5x2xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<1x2x3x5xf32>) {
  %0 = kiln.trilu %x, %k {upper = 0 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  %1 = kiln.hardmax %x {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = kiln.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "none"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  %3 = kiln.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "max"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  %4 = kiln.scatter_nd %x, %t, %v {reduction = "mul"} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %5 = kiln.gather_nd %x, %t {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  %6 = kiln.grid_sample %img, %grid {align_corners = 0 : i64, mode = "cubic", padding_mode = "reflection"} : (tensor<1x2x4x4xf32>, tensor<1x3x5x2xf32>) -> tensor<1x2x3x5xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<1x2x3x5xf32>
}

// -----

// A cumulative sum along a constant axis is a kernel, and so is one along a
// run-time axis (a switch over the axes) and a cumprod; a bitcast is a kernel
// too (a byte copy; a bool or sub-byte result as the reference makes it).
// CHECK-LABEL: func.func @scans(
// CHECK: kiln.cumsum %arg0, %{{.*}} {exclusive = 0 : i64, kiln.kernel = "o0_cumsum", reverse = 1 : i64}
// CHECK: kiln.cumsum %arg0, %arg1 {exclusive = 0 : i64, kiln.kernel = "o1_cumsum", reverse = 0 : i64}
// CHECK: kiln.cumprod %arg2, %arg3 {exclusive = 1 : i64, kiln.kernel = "o0_cumprod", reverse = 1 : i64}
// CHECK: kiln.bitcast %arg2 {kiln.kernel = "o0_bitcast", to = i32}
// CHECK: kiln.bitcast %arg4 {kiln.kernel = "o1_bitcast", to = i1}
// CHECK: kiln.bitcast %arg5 {kiln.kernel = "o2_bitcast", to = i4}
func.func @scans(%x: tensor<2x6xi64>, %axis: tensor<i64>, %f: tensor<3x4xf32>, %axis32: tensor<1xi32>, %u: tensor<5xui8>, %n: tensor<5xui4>) -> (tensor<2x6xi64>, tensor<2x6xi64>, tensor<3x4xf32>, tensor<3x4xi32>, tensor<5xi1>, tensor<5xi4>) {
  %one = kiln.constant dense<1> : tensor<i64>
  %0 = kiln.cumsum %x, %one {exclusive = 0 : i64, reverse = 1 : i64} : (tensor<2x6xi64>, tensor<i64>) -> tensor<2x6xi64>
  %1 = kiln.cumsum %x, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<2x6xi64>, tensor<i64>) -> tensor<2x6xi64>
  %2 = kiln.cumprod %f, %axis32 {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>, tensor<1xi32>) -> tensor<3x4xf32>
  %3 = kiln.bitcast %f {to = i32} : (tensor<3x4xf32>) -> tensor<3x4xi32>
  %4 = kiln.bitcast %u {to = i1} : (tensor<5xui8>) -> tensor<5xi1>
  %5 = kiln.bitcast %n {to = i4} : (tensor<5xui4>) -> tensor<5xi4>
  return %0, %1, %2, %3, %4, %5 : tensor<2x6xi64>, tensor<2x6xi64>, tensor<3x4xf32>, tensor<3x4xi32>, tensor<5xi1>, tensor<5xi4>
}

// -----

// In a graph compiled for a range of sizes a gather stays a reference step
// (the kernels print their sizes as literals).
// CHECK-LABEL: func.func @gather_range(
// CHECK: kiln.gather {{.*}}kiln.reference = "cpu"
module attributes {kiln.size_range} {
  func.func @gather_range(%table: tensor<10x4xf32> {kiln.weight}, %tokens: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
    %0 = kiln.gather %table, %tokens {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    return %0 : tensor<2x3x4xf32>
  }
}

// -----

// ReLU6 (ONNX Clip(x, 0, 6) traces as max with 0, then min with 6) folds as
// oneDNN's clip post-op (a MobileNetV2 convolution); other bounds, and a
// max that is not followed by its min, do not.
// CHECK-LABEL: func.func @relu6(
// CHECK: kiln.library_call "onednn.conv"(%arg0, %arg1) {epilogue = "relu6"
// CHECK: %[[MM:.*]] = kiln.library_call "onednn.matmul"(%arg2, %arg3) {params
// CHECK: kiln.fusion {{.*}}ins(%[[MM]]
// CHECK: kiln.min
// CHECK: %[[MM2:.*]] = kiln.library_call "onednn.matmul"(%arg2, %arg3) {params
// CHECK: kiln.fusion {{.*}}ins(%[[MM2]]
// CHECK: kiln.max
func.func @relu6(%x: tensor<1x4x4x2xf32>, %k: tensor<2x3x3x2xf32> {kiln.weight}, %a: tensor<8x16xf32>, %w: tensor<16x4xf32> {kiln.weight}) -> (tensor<1x4x4x2xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %zero = kiln.constant dense<0.000000e+00> : tensor<f32>
  %six = kiln.constant dense<6.000000e+00> : tensor<f32>
  %four = kiln.constant dense<4.000000e+00> : tensor<f32>
  %0 = kiln.conv %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<2x3x3x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = kiln.max %0, %zero : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %2 = kiln.min %1, %six : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x4x4x2xf32>
  %3 = kiln.matmul %a, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %4 = kiln.max %3, %zero : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %5 = kiln.min %4, %four : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  %6 = kiln.matmul %a, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %7 = kiln.max %6, %zero : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
  return %2, %5, %7 : tensor<1x4x4x2xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
