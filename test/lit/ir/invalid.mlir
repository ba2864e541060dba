// Verifier and inference errors name the problem and the shapes, at the op.
// When result-type inference fails during verification, MLIR adds "failed to
// infer returned types" after the op's own message.

// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.add' op operands do not broadcast: 2x3 and 4}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.mul' op operands #0 and #1 must have the same element type, got 'tensor<3xf32>' and 'tensor<3xf16>'}}
  %0 = kiln.mul %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

func.func @wrong_dtype(%a: tensor<3xi64>) {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = kiln.exp %a : (tensor<3xi64>) -> tensor<3xi64>
  return
}

// -----

func.func @wrong_result_type(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.add' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @comparison_result_is_bool(%a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.less' op result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = kiln.less %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @perm_not_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.transpose' op attribute 'perm' = [0x0] is not a permutation of [0, 2) for 'tensor<2x3xf32>'}}
  %0 = kiln.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @axis_out_of_range(%x: tensor<2x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.softmax' op attribute 'axis' = 2 is out of range [0, 2) for operand of type 'tensor<2x5xf32>'}}
  %0 = kiln.softmax %x {axis = 2 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @conv_pads_length(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.conv' op attribute 'pads' must have 4 values for 2 spatial dims, got 2}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  return
}

// -----

func.func @conv_layout(%x: tensor<1x8x8x3xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op attribute 'layout' must be one of "nhwc", got "nwhc"}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nwhc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<16x3x3x3xf32>) -> tensor<1x8x8x16xf32>
  return
}

// -----

func.func @conv_channels_last_channels(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op input channels (4) must equal group (1) times weight dim 1 (3): 'tensor<1x4x8x8xf32>' and 'tensor<16x3x3x3xf32>'}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x3xf32>) -> tensor<1x8x8x16xf32>
  return
}

// -----

func.func @conv_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op group 3 does not divide the 4 input channels of 'tensor<1x4x8x8xf32>'}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op input channels (4) must equal group (1) times weight dim 1 (3)}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @pool_window_too_large(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.max_pool' op window of extent 3 (kernel 3, dilation 1) is larger than padded spatial dim 0 (2)}}
  %0 = kiln.max_pool %x {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  return
}

// -----

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.matmul' op contracting dims differ: 2x3 and 4x5}}
  %0 = kiln.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  %s = kiln.constant dense<[4, 2]> : tensor<2xi64>
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.reshape' op cannot reshape 'tensor<2x3xf32>' (6 elements) to 4x2 (8 elements)}}
  %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return
}

// -----

func.func @reshape_dynamic_length(%x: tensor<2x3xf32>, %s: tensor<?xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.reshape' op operand #1 must have a static length (it fixes the result rank), got 'tensor<?xi64>'}}
  %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x3xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.concat' op operand #1 ('tensor<4x5xf32>') differs from the others in dim 0 (2)}}
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @split_sum(%x: tensor<3x6xf32>) {
  %s = kiln.constant dense<[2, 3]> : tensor<2xi64>
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.split' op split sizes [2x3] sum to 5, but dim 1 of 'tensor<3x6xf32>' is 6}}
  %0:2 = kiln.split %x, %s {axis = 1 : i64} : (tensor<3x6xf32>, tensor<2xi64>) -> (tensor<3x2xf32>, tensor<3x3xf32>)
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.layer_norm' op attribute 'axis' = 2 is out of range [0, 2)}}
  %y, %m, %i = kiln.layer_norm %x, %s, %s {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return
}

// -----

func.func @group_norm_groups(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op num_groups 3 does not divide the 4 channels of 'tensor<2x4x3x3xf32>'}}
  %0 = kiln.group_norm %x, %s, %s {epsilon = 1.0e-5 : f32, num_groups = 3 : i64} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<2x3x4x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op operand #1 must be 1-D with 3 (channel) elements, got 'tensor<4xf32>' for input 'tensor<2x3x4x4xf32>'}}
  %0 = kiln.batch_norm %x, %s, %s, %s, %s {epsilon = 1.0e-5 : f32} : (tensor<2x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @missing_attribute(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{'kiln.softmax' op requires attribute 'axis'}}
  %0 = kiln.softmax %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @bad_enum(%x: tensor<2x3xf32>, %p: tensor<4xi64>, %v: tensor<f32>) {
  // expected-error @+1 {{'kiln.pad' op attribute 'mode' must be one of "constant", "reflect", "edge", "wrap", got "mirror"}}
  %0 = kiln.pad %x, %p, %v {mode = "mirror"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @pad_value_dtype(%x: tensor<2x3xf32>, %p: tensor<4xi64>, %v: tensor<i64>) {
  // expected-error @+1 {{'kiln.pad' op value must be a rank-0 tensor of 'f32', got 'tensor<i64>'}}
  %0 = kiln.pad %x, %p, %v {mode = "constant"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<i64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<5x4xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.gather' op attribute 'axis' = 2 is out of range [0, 2) for operand of type 'tensor<5x4xf32>'}}
  %0 = kiln.gather %x, %i {axis = 2 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<5x4xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<2x3xf32>) {
  %a = kiln.constant dense<2> : tensor<1xi64>
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.reduce_sum' op axis 2 is out of range for 'tensor<2x3xf32>'}}
  %0 = kiln.reduce_sum %x, %a {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @constant_of_shape_value(%s: tensor<2xi64>) {
  // expected-error @+1 {{'kiln.constant_of_shape' op attribute 'value' must have one element, got 'tensor<2xf32>'}}
  %0 = kiln.constant_of_shape %s {value = dense<0.0> : tensor<2xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @lstm_weights(%x: tensor<4x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x20x5xf32>, %b: tensor<1x40xf32>, %len: tensor<2xi32>, %h0: tensor<1x2x5xf32>, %p: tensor<1x15xf32>) {
  // expected-error @+1 {{'kiln.lstm' op operand 'w' must have shape 1x20x3, got 'tensor<1x16x3xf32>'}}
  %y, %yh, %yc = kiln.lstm %x, %w, %r, %b, %len, %h0, %h0, %p {clip = 0.0 : f32, direction = "forward", hidden_size = 5 : i64, input_forget = 0 : i64, layout = 0 : i64} : (tensor<4x2x3xf32>, tensor<1x16x3xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>, tensor<2xi32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x15xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

func.func @einsum_terms(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.einsum' op equation "ij,jk->ik" has 2 input terms but the op has 1 operands}}
  %0 = kiln.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @constant_dtype() {
  // expected-error @+1 {{'kiln.constant' op result #0 must be ranked tensor of}}
  %0 = kiln.constant dense<1> : tensor<2xi128>
  return
}

// -----

func.func @wrong_operand_count(%a: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.add' op expected 2 operands, but found 1}}
  %0 = "kiln.add"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @attribute_kind(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{'kiln.softmax' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = "kiln.softmax"(%x) {axis = 1.0 : f32} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return
}
