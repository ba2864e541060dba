// RUN: kiln-opt %s -kiln-split-recurrent -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-split-recurrent=f32-only=true -split-input-file | FileCheck %s --check-prefix=F32

// A GRU with full-length sequences becomes its input projection, one matmul
// of x [seq, batch, input] (one GEMM of seq * batch rows) by the transposed
// weight plus the input half of the bias (what a library folds as its bias),
// and a kiln.gru_recurrence with the recurrence half.
// CHECK-LABEL: func.func @gru(
// CHECK: %[[WB:.*]] = kiln.slice %arg3
// CHECK-SAME: -> tensor<1x15xf32>
// CHECK: %[[WB1:.*]] = kiln.reshape %[[WB]], %{{.*}} -> tensor<15xf32>
// CHECK: %[[RB:.*]] = kiln.slice %arg3
// CHECK-SAME: -> tensor<1x15xf32>
// CHECK: %[[W:.*]] = kiln.reshape %arg1, %{{.*}} : (tensor<1x15x3xf32>, tensor<2xi64>) -> tensor<15x3xf32>
// CHECK: %[[WT:.*]] = kiln.transpose %[[W]] {perm = array<i64: 1, 0>}
// CHECK: %[[MM:.*]] = kiln.matmul %arg0, %[[WT]] : (tensor<4x2x3xf32>, tensor<3x15xf32>) -> tensor<4x2x15xf32>
// CHECK: %[[XW:.*]] = kiln.add %[[MM]], %[[WB1]] : (tensor<4x2x15xf32>, tensor<15xf32>) -> tensor<4x2x15xf32>
// CHECK: %[[Y:.*]], %[[YH:.*]] = kiln.gru_recurrence %[[XW]], %arg2, %[[RB]], %arg4 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, linear_before_reset = 1 : i64}
// CHECK-NOT: kiln.gru %
// CHECK: return %[[Y]], %[[YH]]
func.func @gru(%x: tensor<4x2x3xf32>, %w: tensor<1x15x3xf32>, %r: tensor<1x15x5xf32>, %b: tensor<1x30xf32>, %h0: tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>) {
  %len = kiln.constant dense<4> : tensor<2xi32>
  %y, %yh = kiln.gru %x, %w, %r, %b, %len, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 0 : i64, linear_before_reset = 1 : i64} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  return %y, %yh : tensor<4x1x2x5xf32>, tensor<1x2x5xf32>
}

// -----

// Shorter sequences and run-time lengths go to the recurrence as its last
// operand (the constant full-length ones do not); linear_before_reset = 0
// is split too; a batch-first one (layout 1) is split between transposes;
// a GRU with a dynamic dimension keeps its kiln.gru.
// CHECK-LABEL: func.func @kept(
// CHECK: %[[SHORT:.*]] = kiln.constant dense<[4, 3]> : tensor<2xi32>
// CHECK: kiln.gru_recurrence %{{.*}}, %arg2, %{{.*}}, %arg4, %[[SHORT]] {
// CHECK: kiln.gru_recurrence %{{.*}}, %arg2, %{{.*}}, %arg4, %arg5 {
// CHECK: %[[XS:.*]] = kiln.transpose %arg6 {perm = array<i64: 1, 0, 2>} : (tensor<2x4x3xf32>) -> tensor<4x2x3xf32>
// CHECK: %[[HS:.*]] = kiln.transpose %arg7 {perm = array<i64: 1, 0, 2>} : (tensor<2x1x5xf32>) -> tensor<1x2x5xf32>
// CHECK: %[[Y:.*]], %{{.*}} = kiln.gru_recurrence %{{.*}}, %arg2, %{{.*}}, %[[HS]] {
// CHECK-SAME: -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
// CHECK: %[[YB:.*]] = kiln.transpose %[[Y]] {perm = array<i64: 2, 0, 1, 3>} : (tensor<4x1x2x5xf32>) -> tensor<2x4x1x5xf32>
// CHECK: kiln.gru_recurrence %{{.*}}, %arg2, %{{.*}}, %arg4 {{{.*}}linear_before_reset = 0 : i64}
// CHECK: kiln.gru %arg8
// CHECK: return %{{.*}}, %{{.*}}, %[[YB]], %{{.*}}, %{{.*}} :
func.func @kept(%x: tensor<4x2x3xf32>, %w: tensor<1x15x3xf32>, %r: tensor<1x15x5xf32>, %b: tensor<1x30xf32>, %h0: tensor<1x2x5xf32>, %lens: tensor<2xi32>, %xb: tensor<2x4x3xf32>, %hb: tensor<2x1x5xf32>, %xd: tensor<?x2x3xf32>) -> (tensor<4x1x2x5xf32>, tensor<4x1x2x5xf32>, tensor<2x4x1x5xf32>, tensor<4x1x2x5xf32>, tensor<?x1x2x5xf32>) {
  %short = kiln.constant dense<[4, 3]> : tensor<2xi32>
  %y0, %h1 = kiln.gru %x, %w, %r, %b, %short, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 0 : i64, linear_before_reset = 1 : i64} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  %y1, %h2 = kiln.gru %x, %w, %r, %b, %lens, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 0 : i64, linear_before_reset = 1 : i64} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  %full = kiln.constant dense<4> : tensor<2xi32>
  %y2, %h3 = kiln.gru %xb, %w, %r, %b, %full, %hb {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 1 : i64, linear_before_reset = 1 : i64} : (tensor<2x4x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<2x1x5xf32>) -> (tensor<2x4x1x5xf32>, tensor<2x1x5xf32>)
  %y3, %h4 = kiln.gru %x, %w, %r, %b, %full, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 0 : i64, linear_before_reset = 0 : i64} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  %y4, %h5 = kiln.gru %xd, %w, %r, %b, %full, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 0 : i64, linear_before_reset = 1 : i64} : (tensor<?x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<1x2x5xf32>) -> (tensor<?x1x2x5xf32>, tensor<1x2x5xf32>)
  return %y0, %y1, %y2, %y3, %y4 : tensor<4x1x2x5xf32>, tensor<4x1x2x5xf32>, tensor<2x4x1x5xf32>, tensor<4x1x2x5xf32>, tensor<?x1x2x5xf32>
}

// -----

// A bidirectional LSTM: the projection adds both halves of the bias (Wb +
// Rb) for every direction; the recurrence takes the peepholes and both
// initial states.
// CHECK-LABEL: func.func @lstm(
// CHECK: %[[WB:.*]] = kiln.slice %arg3
// CHECK-SAME: -> tensor<2x20xf32>
// CHECK: %[[RB:.*]] = kiln.slice %arg3
// CHECK-SAME: -> tensor<2x20xf32>
// CHECK: %[[B:.*]] = kiln.add %[[WB]], %[[RB]]
// CHECK: %[[B1:.*]] = kiln.reshape %[[B]], %{{.*}} -> tensor<40xf32>
// CHECK: %[[MM:.*]] = kiln.matmul %arg0, %{{.*}} : (tensor<4x2x3xf32>, tensor<3x40xf32>) -> tensor<4x2x40xf32>
// CHECK: %[[XW:.*]] = kiln.add %[[MM]], %[[B1]]
// CHECK: %[[Y:.*]], %[[YH:.*]], %[[YC:.*]] = kiln.lstm_recurrence %[[XW]], %arg2, %arg6, %arg4, %arg5 {clip = 0.000000e+00 : f32, direction = "bidirectional", hidden_size = 5 : i64, input_forget = 0 : i64}
// CHECK-NOT: kiln.lstm %
// CHECK: return %[[Y]], %[[YH]], %[[YC]]
func.func @lstm(%x: tensor<4x2x3xf32>, %w: tensor<2x20x3xf32>, %r: tensor<2x20x5xf32>, %b: tensor<2x40xf32>, %h0: tensor<2x2x5xf32>, %c0: tensor<2x2x5xf32>, %p: tensor<2x15xf32>) -> (tensor<4x2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>) {
  %len = kiln.constant dense<4> : tensor<2xi32>
  %y, %yh, %yc = kiln.lstm %x, %w, %r, %b, %len, %h0, %c0, %p {clip = 0.000000e+00 : f32, direction = "bidirectional", hidden_size = 5 : i64, input_forget = 0 : i64, layout = 0 : i64} : (tensor<4x2x3xf32>, tensor<2x20x3xf32>, tensor<2x20x5xf32>, tensor<2x40xf32>, tensor<2xi32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x15xf32>) -> (tensor<4x2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  return %y, %yh, %yc : tensor<4x2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>
}

// -----

// An LSTM with run-time lengths passes them to its recurrence.
// CHECK-LABEL: func.func @lstm_lens(
// CHECK-NOT: kiln.lstm %
// CHECK: kiln.lstm_recurrence %{{.*}}, %arg2, %arg7, %arg5, %arg6, %arg4 {
func.func @lstm_lens(%x: tensor<4x2x3xf32>, %w: tensor<1x20x3xf32>, %r: tensor<1x20x5xf32>, %b: tensor<1x40xf32>, %lens: tensor<2xi32>, %h0: tensor<1x2x5xf32>, %c0: tensor<1x2x5xf32>, %p: tensor<1x15xf32>) -> tensor<4x1x2x5xf32> {
  %y, %yh, %yc = kiln.lstm %x, %w, %r, %b, %lens, %h0, %c0, %p {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, input_forget = 0 : i64, layout = 0 : i64} : (tensor<4x2x3xf32>, tensor<1x20x3xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>, tensor<2xi32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x15xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return %y : tensor<4x1x2x5xf32>
}

// -----

// An f16 GRU is split, except with f32-only (the CPU target: its oneDNN
// recurrence is f32, so a split would only round the projection to f16).
// CHECK-LABEL: func.func @half(
// CHECK: kiln.gru_recurrence
// F32-LABEL: func.func @half(
// F32-NOT: kiln.gru_recurrence
// F32: kiln.gru %arg0
func.func @half(%x: tensor<4x2x3xf16>, %w: tensor<1x15x3xf16>, %r: tensor<1x15x5xf16>, %b: tensor<1x30xf16>, %h0: tensor<1x2x5xf16>) -> tensor<4x1x2x5xf16> {
  %len = kiln.constant dense<4> : tensor<2xi32>
  %y, %yh = kiln.gru %x, %w, %r, %b, %len, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 0 : i64, linear_before_reset = 1 : i64} : (tensor<4x2x3xf16>, tensor<1x15x3xf16>, tensor<1x15x5xf16>, tensor<1x30xf16>, tensor<2xi32>, tensor<1x2x5xf16>) -> (tensor<4x1x2x5xf16>, tensor<1x2x5xf16>)
  return %y : tensor<4x1x2x5xf16>
}
