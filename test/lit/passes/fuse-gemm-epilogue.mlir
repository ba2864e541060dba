// kiln-fuse: GEMMs and convolutions stay outside the regions (library
// calls); their epilogue (bias add, activation, residual add) becomes the
// next pointwise region, which takes the GEMM's result as an input.

// RUN: kiln-opt %s -kiln-fuse -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @matmul_bias_gelu(
// CHECK-NEXT: %[[MM:.*]] = kiln.matmul %arg0, %arg1
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "k0_gemm" ins(%[[MM]], %arg2, %arg3 : tensor<8x4xf32>, tensor<4xf32>, tensor<8x4xf32>) kind("pointwise") {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<8x4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<8x4xf32>):
// CHECK-NEXT:   kiln.add
// CHECK-NEXT:   kiln.gelu
// CHECK-NEXT:   kiln.add
// CHECK-NEXT:   kiln.yield
// CHECK-NEXT: } -> (tensor<8x4xf32>)
// CHECK-NEXT: return %[[R]]
func.func @matmul_bias_gelu(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>, %res: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32> loc(#gemm)
  %1 = kiln.add %0, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32> loc(#gemm)
  %2 = kiln.gelu %1 {approximate = "none"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %3 = kiln.add %2, %res : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %3 : tensor<8x4xf32>
}
#gemm = loc(fused<"Gemm">["fc1"("model.onnx":2:0)])

// -----

// Two GEMMs in a row: the first one's epilogue is a region between them.

// CHECK-LABEL: func.func @mlp(
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.fusion "k0_add"
// CHECK: kiln.add
// CHECK-NEXT: kiln.relu
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.fusion "k1_add"
func.func @mlp(%x: tensor<2x8xf32>, %w1: tensor<8x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x8xf32>, %b2: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = kiln.matmul %x, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %1 = kiln.add %0, %b1 : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %2 = kiln.relu %1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = kiln.matmul %2, %w2 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %4 = kiln.add %3, %b2 : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

// -----

// Convolution + bias + relu: conv, then one region.

// CHECK-LABEL: func.func @conv_bias_relu(
// CHECK-NEXT: %[[C:.*]] = kiln.conv
// CHECK-NEXT: kiln.fusion "k0_add" ins(%[[C]], %arg2 : tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) kind("pointwise")
// CHECK-NOT: kiln.fusion
func.func @conv_bias_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = kiln.add %0, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %2 = kiln.relu %1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %2 : tensor<1x4x6x6xf32>
}
