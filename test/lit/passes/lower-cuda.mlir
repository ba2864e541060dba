// kiln-lower-cuda: cuBLASLt and cuDNN library calls with their folds, the
// kernels of single ops and the host reference steps, all in the IR.

// RUN: kiln-opt %s -kiln-fuse -kiln-lower-cuda -split-input-file | FileCheck %s

// A Linear layer (MatMul(x, Transpose(W)) + b, ReLU): cuBLASLt reads the
// weight transposed and applies the bias and ReLU in its epilogue; the
// transpose and the fusion are gone.
// CHECK-LABEL: func.func @linear_bias_relu(
// CHECK-NOT: kiln.transpose
// CHECK: %[[Y:.*]] = kiln.library_call "cublaslt.matmul"(%arg0, %arg1, %arg2) {epilogue = "bias_relu", params = {batch = 1 : i64, k = 16 : i64, m = 8 : i64, n = 4 : i64, stride_a = 0 : i64, stride_b = 0 : i64}, roles = ["a", "b", "bias"], transpose_b = true, workspace = 33554432 : i64}
// CHECK-NOT: kiln.fusion
// CHECK: return %[[Y]]
func.func @linear_bias_relu(%x: tensor<8x16xf32>, %w: tensor<4x16xf32> {kiln.weight}, %b: tensor<4xf32> {kiln.weight}) -> tensor<8x4xf32> {
  %p = kiln.constant dense<[1, 0]> : tensor<2xi64>
  %wt = kiln.transpose %w {perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %0 = kiln.matmul %x, %wt : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = kiln.add %0, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %2 = kiln.relu %1 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// -----

// A transpose of a computed value folds too (FuseOps makes it a fusion of
// one transpose, which the call reads through): no copy kernel is left.
// CHECK-LABEL: func.func @activation_transpose(
// CHECK-NOT: kiln.fusion
// CHECK: kiln.library_call "cublaslt.matmul"(%arg0, %arg1) {params = {{.*}}, roles = ["a", "b"], transpose_b = true, workspace = 33554432 : i64}
func.func @activation_transpose(%x: tensor<8x16xf32>, %y: tensor<4x16xf32>) -> tensor<8x4xf32> {
  %yt = kiln.transpose %y {perm = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %0 = kiln.matmul %x, %yt : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A weight gradient x^T g of a Linear layer on [B, T, K] activations: the
// transpose of the reshape to [B*T, K] folds too, and the call reads the
// 3-D activation as the [B*T, K] matrix it is in memory.
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-NOT: kiln.fusion
// CHECK: kiln.library_call "cublaslt.matmul"(%arg0, %arg1) {params = {batch = 1 : i64, k = 32 : i64, m = 16 : i64, n = 8 : i64, {{.*}}}, roles = ["a", "b"], transpose_a = true, workspace = 33554432 : i64}
func.func @weight_gradient(%x: tensor<2x16x16xf32>, %g: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %s = kiln.constant dense<[32, 16]> : tensor<2xi64>
  %x2 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x16x16xf32>, tensor<2xi64>) -> tensor<32x16xf32>
  %xt = kiln.transpose %x2 {perm = array<i64: 1, 0>} : (tensor<32x16xf32>) -> tensor<16x32xf32>
  %0 = kiln.matmul %xt, %g : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// The same through a reshape that merges attention heads [B, T, H, D] into
// [B*T, H*D] (the output projection's weight gradient): any reshape to a
// matrix is the same bytes, read in place.
// CHECK-LABEL: func.func @heads_weight_gradient(
// CHECK-NOT: kiln.fusion
// CHECK: kiln.library_call "cublaslt.matmul"(%arg0, %arg1) {params = {batch = 1 : i64, k = 32 : i64, m = 16 : i64, n = 8 : i64, {{.*}}}, roles = ["a", "b"], transpose_a = true, workspace = 33554432 : i64}
func.func @heads_weight_gradient(%x: tensor<2x16x4x4xbf16>, %g: tensor<32x8xbf16>) -> tensor<16x8xbf16> {
  %s = kiln.constant dense<[32, 16]> : tensor<2xi64>
  %x2 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x16x4x4xbf16>, tensor<2xi64>) -> tensor<32x16xbf16>
  %xt = kiln.transpose %x2 {perm = array<i64: 1, 0>} : (tensor<32x16xbf16>) -> tensor<16x32xbf16>
  %0 = kiln.matmul %xt, %g : (tensor<16x32xbf16>, tensor<32x8xbf16>) -> tensor<16x8xbf16>
  return %0 : tensor<16x8xbf16>
}

// -----

// A matmul whose result is read twice keeps its own buffer: no epilogue.
// CHECK-LABEL: func.func @shared_result(
// CHECK: %[[MM:.*]] = kiln.library_call "cublaslt.matmul"(%arg0, %arg1) {params
// CHECK-NOT: epilogue
// CHECK: kiln.fusion "k0_add" ins(%[[MM]]
func.func @shared_result(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = kiln.add %0, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Two one-row products added: either could pass for the other's bias; the
// one computed last folds the add and ReLU, the first writes its own result.
// CHECK-LABEL: func.func @two_matmuls(
// CHECK: %[[A:.*]] = kiln.library_call "cublaslt.matmul"(%arg0, %arg1) {params
// CHECK: %[[B:.*]] = kiln.library_call "cublaslt.matmul"(%arg2, %arg3, %[[A]]) {epilogue = "bias_relu"
// CHECK: return %[[B]]
func.func @two_matmuls(%x: tensor<1x8xf32>, %wx: tensor<8x4xf32>, %h: tensor<1x8xf32>, %wh: tensor<8x4xf32>) -> tensor<1x4xf32> {
  %0 = kiln.matmul %x, %wx : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %1 = kiln.matmul %h, %wh : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %2 = kiln.add %0, %1 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %3 = kiln.relu %2 : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %3 : tensor<1x4xf32>
}

// -----

// A batch of row-major matrices times one matrix is one taller GEMM.
// CHECK-LABEL: func.func @batched_linear(
// CHECK: kiln.library_call "cublaslt.matmul"(%arg0, %arg1) {params = {batch = 1 : i64, k = 16 : i64, m = 24 : i64, n = 4 : i64, stride_a = 0 : i64, stride_b = 0 : i64}
func.func @batched_linear(%x: tensor<3x8x16xf32>, %w: tensor<16x4xf32>) -> tensor<3x8x4xf32> {
  %0 = kiln.matmul %x, %w : (tensor<3x8x16xf32>, tensor<16x4xf32>) -> tensor<3x8x4xf32>
  return %0 : tensor<3x8x4xf32>
}

// -----

// GPT-2's GELU (the tanh approximation, as exported) after the bias is
// cuBLASLt's GELU_BIAS epilogue: the fusion is not launched.
// CHECK-LABEL: func.func @gemm_bias_gelu_tanh(
// CHECK: %[[Y:.*]] = kiln.library_call "cublaslt.matmul"(%arg0, %arg1, %arg2) {{[{]}}epilogue = "bias_gelu_tanh"
// CHECK-NOT: kiln.fusion
// CHECK: return %[[Y]]
func.func @gemm_bias_gelu_tanh(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %c3 = kiln.constant dense<3.0> : tensor<f32>
  %c2 = kiln.constant dense<4.471500e-02> : tensor<f32>
  %c1 = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %mm = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %u = kiln.add %mm, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %p = kiln.pow %u, %c3 : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %m = kiln.mul %c2, %p : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %s = kiln.add %u, %m : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %a = kiln.mul %c1, %s : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %t = kiln.tanh %a : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %t1 = kiln.add %t, %one : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %h = kiln.mul %half, %t1 : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = kiln.mul %u, %h : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// Mixed precision leaves the GELU of a bf16 GEMM in f32 between two casts
// (kiln-autocast: pow is f32-class): the same epilogue, computed in f32 by
// cuBLASLt.
// CHECK-LABEL: func.func @gemm_bias_gelu_tanh_f32_between_casts(
// CHECK: %[[Y:.*]] = kiln.library_call "cublaslt.matmul"(%arg0, %arg1, %arg2) {{[{]}}epilogue = "bias_gelu_tanh"
// CHECK-NOT: kiln.fusion
// CHECK: return %[[Y]]
func.func @gemm_bias_gelu_tanh_f32_between_casts(%x: tensor<8x16xbf16>, %w: tensor<16x32xbf16>, %b: tensor<32xbf16>) -> tensor<8x32xbf16> {
  %c3 = kiln.constant dense<3.0> : tensor<f32>
  %c2 = kiln.constant dense<4.471500e-02> : tensor<f32>
  %c1 = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %mm = kiln.matmul %x, %w : (tensor<8x16xbf16>, tensor<16x32xbf16>) -> tensor<8x32xbf16>
  %ub = kiln.add %mm, %b : (tensor<8x32xbf16>, tensor<32xbf16>) -> tensor<8x32xbf16>
  %u = kiln.cast %ub {to = f32} : (tensor<8x32xbf16>) -> tensor<8x32xf32>
  %p = kiln.pow %u, %c3 : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %m = kiln.mul %c2, %p : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %s = kiln.add %u, %m : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %a = kiln.mul %c1, %s : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %t = kiln.tanh %a : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %t1 = kiln.add %t, %one : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %h = kiln.mul %half, %t1 : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = kiln.mul %u, %h : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %yb = kiln.cast %y {to = bf16} : (tensor<8x32xf32>) -> tensor<8x32xbf16>
  return %yb : tensor<8x32xbf16>
}

// -----

// Another constant (not the tanh approximation cuBLASLt computes): the
// fusion stays.
// CHECK-LABEL: func.func @gemm_not_gelu_tanh(
// CHECK: %[[M:.*]] = kiln.library_call "cublaslt.matmul"(%arg0, %arg1) {{[{]}}params
// CHECK: kiln.fusion "k0_add" ins(%[[M]], %arg2
func.func @gemm_not_gelu_tanh(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %c3 = kiln.constant dense<3.0> : tensor<f32>
  %c2 = kiln.constant dense<4.0e-02> : tensor<f32>
  %c1 = kiln.constant dense<0.797884583> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %mm = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %u = kiln.add %mm, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %p = kiln.pow %u, %c3 : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %m = kiln.mul %c2, %p : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %s = kiln.add %u, %m : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %a = kiln.mul %c1, %s : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %t = kiln.tanh %a : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %t1 = kiln.add %t, %one : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %h = kiln.mul %half, %t1 : (tensor<f32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = kiln.mul %u, %h : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// ONNX's exact GELU (erf) is never folded into cuBLASLt's tanh epilogue.
// CHECK-LABEL: func.func @gemm_gelu_erf(
// CHECK: kiln.library_call "cublaslt.matmul"(%arg0, %arg1) {{[{]}}params
// CHECK: kiln.fusion
func.func @gemm_gelu_erf(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %mm = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %y = kiln.gelu %mm {approximate = "none"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// A convolution's bias, residual add and ReLU run in its cuDNN call.
// CHECK-LABEL: func.func @conv_bias_add_relu(
// CHECK: %[[Y:.*]] = kiln.library_call "cudnn.conv"(%arg0, %arg1, %arg2, %arg3) {epilogue = "bias_residual_relu", params = {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nchw", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}, roles = ["x", "w", "bias", "residual"]}
// CHECK-NOT: kiln.fusion
// CHECK: return %[[Y]]
func.func @conv_bias_add_relu(%x: tensor<2x8x10x10xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8x1x1xf32>, %r: tensor<2x8x10x10xf32>) -> tensor<2x8x10x10xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x10x10xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x10x10xf32>
  %1 = kiln.add %0, %b : (tensor<2x8x10x10xf32>, tensor<8x1x1xf32>) -> tensor<2x8x10x10xf32>
  %2 = kiln.add %1, %r : (tensor<2x8x10x10xf32>, tensor<2x8x10x10xf32>) -> tensor<2x8x10x10xf32>
  %3 = kiln.relu %2 : (tensor<2x8x10x10xf32>) -> tensor<2x8x10x10xf32>
  return %3 : tensor<2x8x10x10xf32>
}

// -----

// Channels last (kiln-channels-last): the per-channel bias is [1, 1, 1, C]
// or [C], the residual NHWC, and the layout goes into the call's params.
// CHECK-LABEL: func.func @conv_nhwc_bias_add_relu(
// CHECK: %[[Y:.*]] = kiln.library_call "cudnn.conv"(%arg0, %arg1, %arg2, %arg3) {epilogue = "bias_residual_relu", params = {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}, roles = ["x", "w", "bias", "residual"]}
// CHECK-NOT: kiln.fusion
// CHECK: return %[[Y]]
func.func @conv_nhwc_bias_add_relu(%x: tensor<2x10x10x4xf32>, %w: tensor<8x3x3x4xf32>, %b: tensor<1x1x1x8xf32>, %r: tensor<2x10x10x8xf32>) -> tensor<2x10x10x8xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x10x10x4xf32>, tensor<8x3x3x4xf32>) -> tensor<2x10x10x8xf32>
  %1 = kiln.add %0, %b : (tensor<2x10x10x8xf32>, tensor<1x1x1x8xf32>) -> tensor<2x10x10x8xf32>
  %2 = kiln.add %1, %r : (tensor<2x10x10x8xf32>, tensor<2x10x10x8xf32>) -> tensor<2x10x10x8xf32>
  %3 = kiln.relu %2 : (tensor<2x10x10x8xf32>) -> tensor<2x10x10x8xf32>
  return %3 : tensor<2x10x10x8xf32>
}

// -----

// Channels last, an [8, 1, 1] operand is not per channel (it broadcasts
// along H): the fusion stays, nothing folds into the cuDNN call.
// CHECK-LABEL: func.func @conv_nhwc_not_per_channel(
// CHECK: %[[C:.*]] = kiln.library_call "cudnn.conv"(%arg0, %arg1) {params
// CHECK: kiln.fusion "k0_add" ins(%[[C]], %arg2
func.func @conv_nhwc_not_per_channel(%x: tensor<2x8x8x4xf32>, %w: tensor<8x3x3x4xf32>, %b: tensor<8x1x1xf32>) -> tensor<2x8x8x8xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x8x4xf32>, tensor<8x3x3x4xf32>) -> tensor<2x8x8x8xf32>
  %1 = kiln.add %0, %b : (tensor<2x8x8x8xf32>, tensor<8x1x1xf32>) -> tensor<2x8x8x8xf32>
  %2 = kiln.relu %1 : (tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %2 : tensor<2x8x8x8xf32>
}

// -----

// A convolution whose result is also returned keeps its ReLU kernel.
// CHECK-LABEL: func.func @conv_relu_shared(
// CHECK: %[[C:.*]] = kiln.library_call "cudnn.conv"(%arg0, %arg1) {params
// CHECK: kiln.fusion "k0_relu" ins(%[[C]]
func.func @conv_relu_shared(%x: tensor<2x8x10x10xf32>, %w: tensor<8x8x3x3xf32>) -> (tensor<2x8x10x10xf32>, tensor<2x8x10x10xf32>) {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x10x10xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x10x10xf32>
  %1 = kiln.relu %0 : (tensor<2x8x10x10xf32>) -> tensor<2x8x10x10xf32>
  return %0, %1 : tensor<2x8x10x10xf32>, tensor<2x8x10x10xf32>
}

// -----

// Asymmetric pads: cuDNN does not take them; the convolution runs on the
// host. A max pool is a generated kernel of its own, so is an integer
// matmul (cuBLASLt takes the float ones).
// CHECK-LABEL: func.func @host_and_kernels(
// CHECK: kiln.conv %arg0, %arg1 {{{.*}}kiln.reference = "host"
// CHECK: kiln.max_pool {{.*}}kiln.kernel = "p0_max_pool"
// CHECK: kiln.matmul %arg2, %arg3 {kiln.kernel = "m0_matmul"}
func.func @host_and_kernels(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>, %a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> (tensor<1x2x2x2xf32>, tensor<2x2xi32>) {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x5x5xf32>
  %1 = kiln.max_pool %0 {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32>
  %2 = kiln.matmul %a, %b : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  return %1, %2 : tensor<1x2x2x2xf32>, tensor<2x2xi32>
}

// -----

// A reshape outside a fusion (here of an argument, read by a GEMM) is an
// alias of its operand's buffer: no step. A concat outside a fusion is a
// generated device kernel, not a host step.
// CHECK-LABEL: func.func @alias_and_concat(
// CHECK: %[[R:.*]] = kiln.reshape %arg0, %{{.*}} {allowzero = 0 : i64, kiln.alias} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
// CHECK: %[[MM:.*]] = kiln.library_call "cublaslt.matmul"(%[[R]], %arg1)
// CHECK: kiln.concat %[[R]], %arg2, %[[MM]] {axis = 1 : i64, kiln.kernel = "c0_concat"}
// CHECK-NOT: kiln.reference
func.func @alias_and_concat(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %y: tensor<6x2xf32>) -> tensor<6x11xf32> {
  %s = kiln.constant dense<[6, 4]> : tensor<2xi64>
  %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %1 = kiln.matmul %0, %w : (tensor<6x4xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
  %2 = kiln.concat %0, %y, %1 {axis = 1 : i64} : (tensor<6x4xf32>, tensor<6x2xf32>, tensor<6x5xf32>) -> tensor<6x11xf32>
  return %2 : tensor<6x11xf32>
}

// -----

// A reshape that is a graph output is an alias too: the memory planner
// computes its operand straight into the output buffer when it can, and the
// return copies the bytes otherwise (here: the operand is an argument).
// CHECK-LABEL: func.func @reshape_output(
// CHECK: kiln.reshape %arg0, %{{.*}} {allowzero = 0 : i64, kiln.alias}
// CHECK-NOT: kiln.reference
func.func @reshape_output(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %s = kiln.constant dense<6> : tensor<1xi64>
  %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// kiln.attention (from kiln-cuda-attention) is the flash-attention kernel
// a0_attention (f32 too, a1_attention: the CUDA-core kernel); one the kernels
// do not take (f32 with a head of 128) runs the reference kernel on the host.
// CHECK-LABEL: func.func @attention(
// CHECK: kiln.attention %arg0, %arg1, %arg2 {causal = 1 : i64, kiln.kernel = "a0_attention"
// CHECK: kiln.attention %arg3, %arg4, %arg5 {causal = 0 : i64, kiln.kernel = "a1_attention"
// CHECK: kiln.attention %arg6, %arg7, %arg8 {causal = 0 : i64, kiln.reference = "host"
func.func @attention(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x4x128x64xbf16>, %v: tensor<2x4x128x64xbf16>, %qf: tensor<1x1x64x16xf32>, %kf: tensor<1x1x64x16xf32>, %vf: tensor<1x1x64x16xf32>, %qw: tensor<1x1x64x128xf32>, %kw: tensor<1x1x64x128xf32>, %vw: tensor<1x1x64x128xf32>) -> (tensor<2x4x128x64xbf16>, tensor<1x1x64x16xf32>, tensor<1x1x64x128xf32>) {
  %0:2 = kiln.attention %q, %k, %v {causal = 1 : i64, scale = 1.250000e-01 : f32} : (tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>) -> (tensor<2x4x128x64xbf16>, tensor<2x4x128xf32>)
  %1:2 = kiln.attention %qf, %kf, %vf {causal = 0 : i64, scale = 2.500000e-01 : f32} : (tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>) -> (tensor<1x1x64x16xf32>, tensor<1x1x64xf32>)
  %2:2 = kiln.attention %qw, %kw, %vw {causal = 0 : i64, scale = 2.500000e-01 : f32} : (tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>) -> (tensor<1x1x64x128xf32>, tensor<1x1x64xf32>)
  return %0#0, %1#0, %2#0 : tensor<2x4x128x64xbf16>, tensor<1x1x64x16xf32>, tensor<1x1x64x128xf32>
}

// -----

// kiln.packed_attention is the same kernel reading q, k and v in place.
// CHECK-LABEL: func.func @packed_attention(
// CHECK: kiln.packed_attention %arg0 {causal = 1 : i64, heads = 4 : i64, kiln.kernel = "a0_attention"
func.func @packed_attention(%x: tensor<2x128x768xbf16>) -> tensor<2x128x4x64xbf16> {
  %0:2 = kiln.packed_attention %x {causal = 1 : i64, heads = 4 : i64, scale = 1.250000e-01 : f32} : (tensor<2x128x768xbf16>) -> (tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>)
  return %0#0 : tensor<2x128x4x64xbf16>
}

// -----

// A gather by run-time indices (an embedding), a resize with constant
// scales and a transposed convolution are kernels printed for them, named
// by kind; a resize whose scales are not constants runs on the host.
// CHECK-LABEL: func.func @data_movement_kernels(
// CHECK: kiln.gather %arg1, %arg0 {axis = 0 : i64, kiln.kernel = "g0_gather"}
// CHECK: kiln.resize {{.*}}kiln.kernel = "r0_resize"
// CHECK: kiln.conv_transpose {{.*}}kiln.kernel = "t0_conv_transpose"
// CHECK: kiln.resize {{.*}}kiln.reference = "host"
func.func @data_movement_kernels(%ids: tensor<2x5xi64>, %e: tensor<100x8xf32>, %x: tensor<1x4x3x3xf32>, %w: tensor<4x2x2x2xf32>, %s: tensor<4xf32>) -> (tensor<2x5x8xf32>, tensor<1x4x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x4x6x6xf32>) {
  %0 = kiln.gather %e, %ids {axis = 0 : i64} : (tensor<100x8xf32>, tensor<2x5xi64>) -> tensor<2x5x8xf32>
  %sc = kiln.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %none = kiln.constant dense<> : tensor<0xi64>
  %1 = kiln.resize %x, %sc, %none {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "linear", nearest_mode = "round_prefer_floor", roi = array<f32>} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x4x6x6xf32>
  %2 = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x6x6xf32>
  %3 = kiln.resize %x, %s, %none {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "linear", nearest_mode = "round_prefer_floor", roi = array<f32>} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x4x6x6xf32>
  return %0, %1, %2, %3 : tensor<2x5x8xf32>, tensor<1x4x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// A depthwise convolution (group = channels, one input channel each) is a
// kernel the target prints, in either layout; a grouped one with more input
// channels per group stays cuDNN's.
// CHECK-LABEL: func.func @depthwise(
// CHECK: kiln.conv %arg0, %arg1 {{.*}}kiln.kernel = "d0_depthwise_conv"
// CHECK: kiln.conv %arg2, %arg3 {{.*}}kiln.kernel = "d1_depthwise_conv"{{.*}}layout = "nhwc"
// CHECK: kiln.library_call "cudnn.conv"(%arg0, %arg4) {{.*}}group = 2
func.func @depthwise(%x: tensor<2x8x9x9xf32>, %w: tensor<8x1x3x3xf32>, %xl: tensor<2x9x9x8xbf16>, %wl: tensor<8x3x3x1xbf16>, %wg: tensor<8x4x3x3xf32>) -> (tensor<2x8x5x5xf32>, tensor<2x9x9x8xbf16>, tensor<2x8x9x9xf32>) {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x9x9xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x5x5xf32>
  %1 = kiln.conv %xl, %wl {dilations = array<i64: 1, 1>, group = 8 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x9x9x8xbf16>, tensor<8x3x3x1xbf16>) -> tensor<2x9x9x8xbf16>
  %2 = kiln.conv %x, %wg {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x9x9xf32>
  return %0, %1, %2 : tensor<2x8x5x5xf32>, tensor<2x9x9x8xbf16>, tensor<2x8x9x9xf32>
}

// -----

// Pools, positional gathers and scatters, arg reductions, scans and
// triangles are kernels the target prints (CudaPoolKernel.cpp,
// CudaIndexKernels.cpp), not host steps.
// CHECK-LABEL: func.func @positional_kernels(
// CHECK: kiln.avg_pool {{.*}}kiln.kernel = "v0_avg_pool"
// CHECK: kiln.gather_elements {{.*}}kiln.kernel = "e0_gather_elements"
// CHECK: kiln.argmax {{.*}}kiln.kernel = "x0_argmax"
// CHECK: kiln.cumsum {{.*}}kiln.kernel = "s0_cumsum"
// CHECK: kiln.trilu {{.*}}kiln.kernel = "w0_trilu"
// CHECK: kiln.scatter_elements {{.*}}kiln.kernel = "z0_scatter_elements"
// CHECK-NOT: kiln.reference = "host"
func.func @positional_kernels(%x: tensor<1x2x6x6xf32>, %m: tensor<4x5xf32>, %i: tensor<4x2xi64>, %k: tensor<i64>) -> (tensor<1x2x3x3xf32>, tensor<4x2xf32>, tensor<4xi64>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  %0 = kiln.avg_pool %x {ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %1 = kiln.gather_elements %m, %i {axis = 1 : i64} : (tensor<4x5xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  %2 = kiln.argmax %m {axis = 1 : i64, keepdims = 0 : i64, select_last_index = 0 : i64} : (tensor<4x5xf32>) -> tensor<4xi64>
  %axis = kiln.constant dense<1> : tensor<i64>
  %3 = kiln.cumsum %m, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<4x5xf32>, tensor<i64>) -> tensor<4x5xf32>
  %4 = kiln.trilu %m, %k {upper = 1 : i64} : (tensor<4x5xf32>, tensor<i64>) -> tensor<4x5xf32>
  %5 = kiln.scatter_elements %m, %i, %1 {axis = 1 : i64, reduction = "add"} : (tensor<4x5xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x5xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x2x3x3xf32>, tensor<4x2xf32>, tensor<4xi64>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}
