// RUN: kiln-opt %s -kiln-fold-embedding-projection -split-input-file | FileCheck %s

// A recurrent layer's input projection after kiln-split-recurrent: rows of
// an embedding table, batch first, transposed to the step order, times the
// transposed input weights, plus the bias. The table is projected (and the
// bias added) once; the transpose moves onto the token ids.
// CHECK-LABEL: func.func @tagger_projection(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<4x32xi64>
// CHECK: %[[E:.*]] = kiln.constant {{.*}} : tensor<100x16xf32>
// CHECK: %[[WT:.*]] = kiln.transpose %{{.*}} {perm = array<i64: 1, 0>} : (tensor<64x16xf32>) -> tensor<16x64xf32>
// CHECK: %[[T:.*]] = kiln.matmul %[[E]], %[[WT]] : (tensor<100x16xf32>, tensor<16x64xf32>) -> tensor<100x64xf32>
// CHECK: %[[TB:.*]] = kiln.add %[[T]], %{{.*}} : (tensor<100x64xf32>, tensor<64xf32>) -> tensor<100x64xf32>
// CHECK: %[[I:.*]] = kiln.transpose %[[IDS]] {perm = array<i64: 1, 0>} : (tensor<4x32xi64>) -> tensor<32x4xi64>
// CHECK: %[[Y:.*]] = kiln.gather %[[TB]], %[[I]] {axis = 0 : i64} : (tensor<100x64xf32>, tensor<32x4xi64>) -> tensor<32x4x64xf32>
// CHECK-NOT: kiln.matmul
// CHECK: return %[[Y]]
func.func @tagger_projection(%ids: tensor<4x32xi64>) -> tensor<32x4x64xf32> {
  %e = kiln.constant dense<0.5> : tensor<100x16xf32>
  %w = kiln.constant dense<0.25> : tensor<64x16xf32>
  %b = kiln.constant dense<1.0> : tensor<64xf32>
  %rows = kiln.gather %e, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<4x32xi64>) -> tensor<4x32x16xf32>
  %steps = kiln.transpose %rows {perm = array<i64: 1, 0, 2>} : (tensor<4x32x16xf32>) -> tensor<32x4x16xf32>
  %wt = kiln.transpose %w {perm = array<i64: 1, 0>} : (tensor<64x16xf32>) -> tensor<16x64xf32>
  %p = kiln.matmul %steps, %wt : (tensor<32x4x16xf32>, tensor<16x64xf32>) -> tensor<32x4x64xf32>
  %y = kiln.add %p, %b : (tensor<32x4x64xf32>, tensor<64xf32>) -> tensor<32x4x64xf32>
  return %y : tensor<32x4x64xf32>
}

// -----

// Weights bound at load (--weights external) are weights too; a reshape
// that keeps the last dim moves onto the ids; a bias of shape [1, N] is
// viewed [N]; an add of something else stays after the lookup.
// CHECK-LABEL: func.func @external_weights(
// CHECK: %[[T:.*]] = kiln.matmul %arg1, %arg2 : (tensor<50x8xf32>, tensor<8x24xf32>) -> tensor<50x24xf32>
// CHECK: %[[B:.*]] = kiln.reshape %arg3, %{{.*}} : (tensor<1x24xf32>, tensor<1xi64>) -> tensor<24xf32>
// CHECK: %[[TB:.*]] = kiln.add %[[T]], %[[B]]
// CHECK: %[[I:.*]] = kiln.reshape %arg0, %{{.*}} : (tensor<2x3x5xi32>, tensor<2xi64>) -> tensor<6x5xi32>
// CHECK: %[[Y:.*]] = kiln.gather %[[TB]], %[[I]] {axis = 0 : i64} : (tensor<50x24xf32>, tensor<6x5xi32>) -> tensor<6x5x24xf32>
// CHECK: kiln.add %[[Y]], %arg4
func.func @external_weights(%ids: tensor<2x3x5xi32>, %e: tensor<50x8xf32> {kiln.weight}, %w: tensor<8x24xf32> {kiln.weight}, %b: tensor<1x24xf32> {kiln.weight}, %x: tensor<6x5x24xf32>) -> tensor<6x5x24xf32> {
  %rows = kiln.gather %e, %ids {axis = 0 : i64} : (tensor<50x8xf32>, tensor<2x3x5xi32>) -> tensor<2x3x5x8xf32>
  %shape = kiln.constant dense<[6, 5, 8]> : tensor<3xi64>
  %r = kiln.reshape %rows, %shape {allowzero = 0 : i64} : (tensor<2x3x5x8xf32>, tensor<3xi64>) -> tensor<6x5x8xf32>
  %p = kiln.matmul %r, %w : (tensor<6x5x8xf32>, tensor<8x24xf32>) -> tensor<6x5x24xf32>
  %pb = kiln.add %p, %b : (tensor<6x5x24xf32>, tensor<1x24xf32>) -> tensor<6x5x24xf32>
  %y = kiln.add %pb, %x : (tensor<6x5x24xf32>, tensor<6x5x24xf32>) -> tensor<6x5x24xf32>
  return %y : tensor<6x5x24xf32>
}

// -----

// Left alone: a table that is an input (not a weight), a projection by an
// input, a transpose that moves the last dim, a lookup along axis 1, and a
// projected table larger than 16 MB (50,000 x 128 embeddings to 1,024).
// CHECK-LABEL: func.func @not_folded(
// CHECK-COUNT-5: kiln.matmul
// CHECK-NOT: kiln.matmul
func.func @not_folded(%ids: tensor<8xi64>, %table: tensor<100x16xf32>, %x: tensor<16x32xf32>, %big: tensor<50000x128xf32> {kiln.weight}, %wbig: tensor<128x1024xf32> {kiln.weight}) -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<16x32xf32>, tensor<100x32xf32>, tensor<8x1024xf32>) {
  %w = kiln.constant dense<0.5> : tensor<16x32xf32>
  %e = kiln.constant dense<0.5> : tensor<100x16xf32>
  %a = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
  %0 = kiln.matmul %a, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %b = kiln.gather %e, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
  %1 = kiln.matmul %b, %x : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %et = kiln.constant dense<0.5> : tensor<16x16xf32>
  %c = kiln.gather %et, %ids {axis = 0 : i64} : (tensor<16x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
  %ct = kiln.transpose %c {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %w8 = kiln.constant dense<0.5> : tensor<8x32xf32>
  %2 = kiln.matmul %ct, %w8 : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %d = kiln.gather %e, %ids {axis = 1 : i64} : (tensor<100x16xf32>, tensor<8xi64>) -> tensor<100x8xf32>
  %3 = kiln.matmul %d, %w8 : (tensor<100x8xf32>, tensor<8x32xf32>) -> tensor<100x32xf32>
  %f = kiln.gather %big, %ids {axis = 0 : i64} : (tensor<50000x128xf32>, tensor<8xi64>) -> tensor<8x128xf32>
  %4 = kiln.matmul %f, %wbig : (tensor<8x128xf32>, tensor<128x1024xf32>) -> tensor<8x1024xf32>
  return %0, %1, %2, %3, %4 : tensor<8x32xf32>, tensor<8x32xf32>, tensor<16x32xf32>, tensor<100x32xf32>, tensor<8x1024xf32>
}
