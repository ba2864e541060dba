// Every op's documented example (from ODS) parses, verifies, prints and
// round-trips; print -> parse -> print is identical, in the custom and the
// generic form. Generated once from the ODS examples.

// RUN: kiln-opt %s | FileCheck %s
// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s
// RUN: kiln-opt %s > %t.1 && kiln-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK-LABEL: func.func @abs(
// CHECK: kiln.abs {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @abs(%x: tensor<2x3xf32>) {
  %0 = kiln.abs %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @acos(
// CHECK: kiln.acos {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @acos(%x: tensor<2x3xf32>) {
  %0 = kiln.acos %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @acosh(
// CHECK: kiln.acosh {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @acosh(%x: tensor<2x3xf32>) {
  %0 = kiln.acosh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @add(
// CHECK: kiln.add {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @add(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @and(
// CHECK: kiln.and {{.*}} : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
func.func @and(%a: tensor<2x3xi1>, %b: tensor<3xi1>) {
  %0 = kiln.and %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @argmax(
// CHECK: kiln.argmax {{.*}} : (tensor<2x5xf32>) -> tensor<2xi64>
func.func @argmax(%x: tensor<2x5xf32>) {
  %0 = kiln.argmax %x {axis = 1 : i64, keepdims = 0 : i64, select_last_index = 0 : i64} : (tensor<2x5xf32>) -> tensor<2xi64>
  return
}

// CHECK-LABEL: func.func @argmin(
// CHECK: kiln.argmin {{.*}} : (tensor<2x5xf32>) -> tensor<2xi64>
func.func @argmin(%x: tensor<2x5xf32>) {
  %0 = kiln.argmin %x {axis = 1 : i64, keepdims = 0 : i64, select_last_index = 0 : i64} : (tensor<2x5xf32>) -> tensor<2xi64>
  return
}

// CHECK-LABEL: func.func @asin(
// CHECK: kiln.asin {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @asin(%x: tensor<2x3xf32>) {
  %0 = kiln.asin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @asinh(
// CHECK: kiln.asinh {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @asinh(%x: tensor<2x3xf32>) {
  %0 = kiln.asinh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @attention(
// CHECK: kiln.attention {{.*}} : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
func.func @attention(%q: tensor<1x2x8x4xbf16>, %k: tensor<1x2x8x4xbf16>, %v: tensor<1x2x8x4xbf16>) {
  %0:2 = kiln.attention %q, %k, %v {causal = 1 : i64, scale = 1.250000e-01 : f32} : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
  return
}

// CHECK-LABEL: func.func @atan(
// CHECK: kiln.atan {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @atan(%x: tensor<2x3xf32>) {
  %0 = kiln.atan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @atanh(
// CHECK: kiln.atanh {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @atanh(%x: tensor<2x3xf32>) {
  %0 = kiln.atanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @avg_pool(
// CHECK: kiln.avg_pool {{.*}} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
func.func @avg_pool(%x: tensor<1x3x8x8xf32>) {
  %0 = kiln.avg_pool %x {ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  return
}

// CHECK-LABEL: func.func @batch_norm(
// CHECK: kiln.batch_norm {{.*}} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) {
  %0 = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return
}

// CHECK-LABEL: func.func @bit_shift(
// CHECK: kiln.bit_shift {{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
func.func @bit_shift(%a: tensor<2x3xi64>, %b: tensor<3xi64>) {
  %0 = kiln.bit_shift %a, %b {direction = "left"} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return
}

// CHECK-LABEL: func.func @bitwise_and(
// CHECK: kiln.bitwise_and {{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
func.func @bitwise_and(%a: tensor<2x3xi64>, %b: tensor<3xi64>) {
  %0 = kiln.bitwise_and %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return
}

// CHECK-LABEL: func.func @bitwise_not(
// CHECK: kiln.bitwise_not {{.*}} : (tensor<2x3xi64>) -> tensor<2x3xi64>
func.func @bitwise_not(%x: tensor<2x3xi64>) {
  %0 = kiln.bitwise_not %x : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return
}

// CHECK-LABEL: func.func @bitwise_or(
// CHECK: kiln.bitwise_or {{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
func.func @bitwise_or(%a: tensor<2x3xi64>, %b: tensor<3xi64>) {
  %0 = kiln.bitwise_or %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return
}

// CHECK-LABEL: func.func @bitwise_xor(
// CHECK: kiln.bitwise_xor {{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
func.func @bitwise_xor(%a: tensor<2x3xi64>, %b: tensor<3xi64>) {
  %0 = kiln.bitwise_xor %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return
}

// CHECK-LABEL: func.func @cast(
// CHECK: kiln.cast {{.*}} : (tensor<4xf32>) -> tensor<4xi64>
func.func @cast(%x: tensor<4xf32>) {
  %0 = kiln.cast %x {to = i64} : (tensor<4xf32>) -> tensor<4xi64>
  return
}

// CHECK-LABEL: func.func @ceil(
// CHECK: kiln.ceil {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @ceil(%x: tensor<2x3xf32>) {
  %0 = kiln.ceil %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @celu(
// CHECK: kiln.celu {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @celu(%x: tensor<2x3xf32>) {
  %0 = kiln.celu %x {alpha = 1.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @concat(
// CHECK: kiln.concat {{.*}} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) {
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return
}

// CHECK-LABEL: func.func @constant(
func.func @constant() {
  %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @constant_of_shape(
// CHECK: kiln.constant_of_shape {{.*}} : (tensor<2xi64>) -> tensor<?x?xf32>
func.func @constant_of_shape(%s: tensor<2xi64>) {
  %0 = kiln.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// CHECK-LABEL: func.func @conv(
// CHECK: kiln.conv {{.*}} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  return
}

// CHECK-LABEL: func.func @conv_transpose(
// CHECK: kiln.conv_transpose {{.*}} : (tensor<1x4x3x3xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x6x6xf32>
func.func @conv_transpose(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x2x2xf32>) {
  %0 = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x6x6xf32>
  return
}

// CHECK-LABEL: func.func @cos(
// CHECK: kiln.cos {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @cos(%x: tensor<2x3xf32>) {
  %0 = kiln.cos %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @cosh(
// CHECK: kiln.cosh {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @cosh(%x: tensor<2x3xf32>) {
  %0 = kiln.cosh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @cumprod(
// CHECK: kiln.cumprod {{.*}} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
func.func @cumprod(%x: tensor<5xf32>) {
  %axis = kiln.constant dense<0> : tensor<i64>
  %0 = kiln.cumprod %x, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
  return
}

// CHECK-LABEL: func.func @cumsum(
// CHECK: kiln.cumsum {{.*}} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
func.func @cumsum(%x: tensor<5xf32>) {
  %axis = kiln.constant dense<0> : tensor<i64>
  %0 = kiln.cumsum %x, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
  return
}

// CHECK-LABEL: func.func @div(
// CHECK: kiln.div {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @div(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @einsum(
// CHECK: kiln.einsum {{.*}} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
func.func @einsum(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) {
  %0 = kiln.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return
}

// CHECK-LABEL: func.func @elu(
// CHECK: kiln.elu {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @elu(%x: tensor<2x3xf32>) {
  %0 = kiln.elu %x {alpha = 1.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @equal(
// CHECK: kiln.equal {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @equal(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @erf(
// CHECK: kiln.erf {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @erf(%x: tensor<2x3xf32>) {
  %0 = kiln.erf %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @exp(
// CHECK: kiln.exp {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @exp(%x: tensor<2x3xf32>) {
  %0 = kiln.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @expand(
// CHECK: kiln.expand {{.*}} : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
func.func @expand(%x: tensor<3xf32>) {
  %s = kiln.constant dense<[2, 3]> : tensor<2xi64>
  %0 = kiln.expand %x, %s : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @flatten(
// CHECK: kiln.flatten {{.*}} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
func.func @flatten(%x: tensor<2x3x4xf32>) {
  %0 = kiln.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  return
}

// CHECK-LABEL: func.func @floor(
// CHECK: kiln.floor {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @floor(%x: tensor<2x3xf32>) {
  %0 = kiln.floor %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @gather(
// CHECK: kiln.gather {{.*}} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
func.func @gather(%x: tensor<5x4xf32>, %i: tensor<2x3xi64>) {
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return
}

// CHECK-LABEL: func.func @gather_elements(
// CHECK: kiln.gather_elements {{.*}} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
func.func @gather_elements(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>) {
  %0 = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return
}

// CHECK-LABEL: func.func @gather_nd(
// CHECK: kiln.gather_nd {{.*}} : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2xf32>
func.func @gather_nd(%x: tensor<2x2xf32>, %i: tensor<2x2xi64>) {
  %0 = kiln.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @gelu(
// CHECK: kiln.gelu {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @gelu(%x: tensor<2x3xf32>) {
  %0 = kiln.gelu %x {approximate = "none"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @greater(
// CHECK: kiln.greater {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @greater(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @greater_equal(
// CHECK: kiln.greater_equal {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @greater_equal(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @group_norm(
// CHECK: kiln.group_norm {{.*}} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
func.func @group_norm(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) {
  %0 = kiln.group_norm %x, %s, %b {epsilon = 9.99999974E-6 : f32, num_groups = 2 : i64} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  return
}

// CHECK-LABEL: func.func @gru(
// CHECK: kiln.gru {{.*}} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
func.func @gru(%x: tensor<4x2x3xf32>, %w: tensor<1x15x3xf32>, %r: tensor<1x15x5xf32>, %b: tensor<1x30xf32>, %len: tensor<2xi32>, %h0: tensor<1x2x5xf32>) {
  %y, %yh = kiln.gru %x, %w, %r, %b, %len, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 0 : i64, linear_before_reset = 0 : i64} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// CHECK-LABEL: func.func @gru_recurrence(
// CHECK: kiln.gru_recurrence {{.*}} : (tensor<4x2x15xf32>, tensor<1x15x5xf32>, tensor<1x15xf32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
func.func @gru_recurrence(%xw: tensor<4x2x15xf32>, %r: tensor<1x15x5xf32>, %rb: tensor<1x15xf32>, %h0: tensor<1x2x5xf32>) {
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, linear_before_reset = 1 : i64} : (tensor<4x2x15xf32>, tensor<1x15x5xf32>, tensor<1x15xf32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// CHECK-LABEL: func.func @lstm_recurrence(
// CHECK: kiln.lstm_recurrence {{.*}} : (tensor<4x2x20xf32>, tensor<1x20x5xf32>, tensor<1x15xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
func.func @lstm_recurrence(%xw: tensor<4x2x20xf32>, %r: tensor<1x20x5xf32>, %p: tensor<1x15xf32>, %h0: tensor<1x2x5xf32>, %c0: tensor<1x2x5xf32>) {
  %y, %yh, %yc = kiln.lstm_recurrence %xw, %r, %p, %h0, %c0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, input_forget = 0 : i64} : (tensor<4x2x20xf32>, tensor<1x20x5xf32>, tensor<1x15xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// CHECK-LABEL: func.func @hard_sigmoid(
// CHECK: kiln.hard_sigmoid {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @hard_sigmoid(%x: tensor<2x3xf32>) {
  %0 = kiln.hard_sigmoid %x {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @hard_swish(
// CHECK: kiln.hard_swish {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @hard_swish(%x: tensor<2x3xf32>) {
  %0 = kiln.hard_swish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @hardmax(
// CHECK: kiln.hardmax {{.*}} : (tensor<2x5xf32>) -> tensor<2x5xf32>
func.func @hardmax(%x: tensor<2x5xf32>) {
  %0 = kiln.hardmax %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return
}

// CHECK-LABEL: func.func @instance_norm(
// CHECK: kiln.instance_norm {{.*}} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
func.func @instance_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.instance_norm %x, %s, %b {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return
}

// CHECK-LABEL: func.func @is_inf(
// CHECK: kiln.is_inf {{.*}} : (tensor<4xf32>) -> tensor<4xi1>
func.func @is_inf(%x: tensor<4xf32>) {
  %0 = kiln.is_inf %x {detect_negative = 1 : i64, detect_positive = 1 : i64} : (tensor<4xf32>) -> tensor<4xi1>
  return
}

// CHECK-LABEL: func.func @is_nan(
// CHECK: kiln.is_nan {{.*}} : (tensor<4xf32>) -> tensor<4xi1>
func.func @is_nan(%x: tensor<4xf32>) {
  %0 = kiln.is_nan %x : (tensor<4xf32>) -> tensor<4xi1>
  return
}

// CHECK-LABEL: func.func @layer_norm(
// CHECK: kiln.layer_norm {{.*}} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
func.func @layer_norm(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) {
  %y, %mean, %inv = kiln.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return
}

// CHECK-LABEL: func.func @leaky_relu(
// CHECK: kiln.leaky_relu {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @leaky_relu(%x: tensor<2x3xf32>) {
  %0 = kiln.leaky_relu %x {alpha = 0.00999999977 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @less(
// CHECK: kiln.less {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @less(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @less_equal(
// CHECK: kiln.less_equal {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
func.func @less_equal(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @log(
// CHECK: kiln.log {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @log(%x: tensor<2x3xf32>) {
  %0 = kiln.log %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @log_softmax(
// CHECK: kiln.log_softmax {{.*}} : (tensor<2x5xf32>) -> tensor<2x5xf32>
func.func @log_softmax(%x: tensor<2x5xf32>) {
  %0 = kiln.log_softmax %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return
}

// CHECK-LABEL: func.func @lstm(
// CHECK: kiln.lstm {{.*}} : (tensor<4x2x3xf32>, tensor<1x20x3xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>, tensor<2xi32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x15xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
func.func @lstm(%x: tensor<4x2x3xf32>, %w: tensor<1x20x3xf32>, %r: tensor<1x20x5xf32>, %b: tensor<1x40xf32>, %len: tensor<2xi32>, %h0: tensor<1x2x5xf32>, %c0: tensor<1x2x5xf32>, %p: tensor<1x15xf32>) {
  %y, %yh, %yc = kiln.lstm %x, %w, %r, %b, %len, %h0, %c0, %p {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, input_forget = 0 : i64, layout = 0 : i64} : (tensor<4x2x3xf32>, tensor<1x20x3xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>, tensor<2xi32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x15xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// CHECK-LABEL: func.func @matmul(
// CHECK: kiln.matmul {{.*}} : (tensor<8x2x3xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
func.func @matmul(%a: tensor<8x2x3xf32>, %b: tensor<3x4xf32>) {
  %0 = kiln.matmul %a, %b : (tensor<8x2x3xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
  return
}

// CHECK-LABEL: func.func @max(
// CHECK: kiln.max {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @max(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @max_pool(
// CHECK: kiln.max_pool {{.*}} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
func.func @max_pool(%x: tensor<1x3x8x8xf32>) {
  %0 = kiln.max_pool %x {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// CHECK-LABEL: func.func @min(
// CHECK: kiln.min {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @min(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.min %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @mish(
// CHECK: kiln.mish {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @mish(%x: tensor<2x3xf32>) {
  %0 = kiln.mish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @mod(
// CHECK: kiln.mod {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @mod(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.mod %a, %b {fmod = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @mul(
// CHECK: kiln.mul {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @mul(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @neg(
// CHECK: kiln.neg {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @neg(%x: tensor<2x3xf32>) {
  %0 = kiln.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @not(
// CHECK: kiln.not {{.*}} : (tensor<2x3xi1>) -> tensor<2x3xi1>
func.func @not(%x: tensor<2x3xi1>) {
  %0 = kiln.not %x : (tensor<2x3xi1>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @one_hot(
// CHECK: kiln.one_hot {{.*}} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf32>
func.func @one_hot(%i: tensor<3xi64>, %depth: tensor<i64>, %values: tensor<2xf32>) {
  %0 = kiln.one_hot %i, %depth, %values {axis = 1 : i64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf32>
  return
}

// CHECK-LABEL: func.func @or(
// CHECK: kiln.or {{.*}} : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
func.func @or(%a: tensor<2x3xi1>, %b: tensor<3xi1>) {
  %0 = kiln.or %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @packed_attention(
// CHECK: kiln.packed_attention {{.*}} : (tensor<1x8x24xbf16>) -> (tensor<1x8x2x4xbf16>, tensor<1x2x8xf32>)
func.func @packed_attention(%qkv: tensor<1x8x24xbf16>) {
  %0:2 = kiln.packed_attention %qkv {causal = 1 : i64, heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<1x8x24xbf16>) -> (tensor<1x8x2x4xbf16>, tensor<1x2x8xf32>)
  return
}

// CHECK-LABEL: func.func @packed_attention_seq_first(
// CHECK: kiln.packed_attention {{.*}}layout = "seq_first"{{.*}} : (tensor<8x3x24xf32>) -> (tensor<8x3x2x4xf32>, tensor<3x2x8xf32>)
func.func @packed_attention_seq_first(%x: tensor<8x3x24xf32>) {
  %1:2 = kiln.packed_attention %x {causal = 0 : i64, heads = 2 : i64, layout = "seq_first", scale = 5.000000e-01 : f32} : (tensor<8x3x24xf32>) -> (tensor<8x3x2x4xf32>, tensor<3x2x8xf32>)
  return
}

// CHECK-LABEL: func.func @pad(
// CHECK: kiln.pad {{.*}} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
func.func @pad(%x: tensor<2x3xf32>, %pads: tensor<4xi64>, %v: tensor<f32>) {
  %0 = kiln.pad %x, %pads, %v {mode = "constant"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
  return
}

// CHECK-LABEL: func.func @pow(
// CHECK: kiln.pow {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @pow(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @prelu(
// CHECK: kiln.prelu {{.*}} : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
func.func @prelu(%x: tensor<1x3x4x4xf32>, %slope: tensor<3x1x1xf32>) {
  %0 = kiln.prelu %x, %slope : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  return
}

// CHECK-LABEL: func.func @range(
// CHECK: kiln.range {{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
func.func @range(%start: tensor<i64>, %limit: tensor<i64>, %delta: tensor<i64>) {
  %0 = kiln.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return
}

// CHECK-LABEL: func.func @reciprocal(
// CHECK: kiln.reciprocal {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @reciprocal(%x: tensor<2x3xf32>) {
  %0 = kiln.reciprocal %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @reduce_max(
// CHECK: kiln.reduce_max {{.*}} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
func.func @reduce_max(%x: tensor<2x3xf32>) {
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.reduce_max %x, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @reduce_mean(
// CHECK: kiln.reduce_mean {{.*}} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
func.func @reduce_mean(%x: tensor<2x3xf32>) {
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.reduce_mean %x, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @reduce_min(
// CHECK: kiln.reduce_min {{.*}} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
func.func @reduce_min(%x: tensor<2x3xf32>) {
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.reduce_min %x, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @reduce_prod(
// CHECK: kiln.reduce_prod {{.*}} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
func.func @reduce_prod(%x: tensor<2x3xf32>) {
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.reduce_prod %x, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @reduce_sum(
// CHECK: kiln.reduce_sum {{.*}} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
func.func @reduce_sum(%x: tensor<2x3xf32>) {
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.reduce_sum %x, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
  return
}

// CHECK-LABEL: func.func @relu(
// CHECK: kiln.relu {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @relu(%x: tensor<2x3xf32>) {
  %0 = kiln.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @reshape(
// CHECK: kiln.reshape {{.*}} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
func.func @reshape(%x: tensor<2x3x4xf32>) {
  %s = kiln.constant dense<[0, -1]> : tensor<2xi64>
  %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return
}

// CHECK-LABEL: func.func @resize(
// CHECK: kiln.resize {{.*}} : (tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x1x4x4xf32>
func.func @resize(%x: tensor<1x1x2x2xf32>, %scales: tensor<4xf32>, %sizes: tensor<0xi64>) {
  %0 = kiln.resize %x, %scales, %sizes {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", roi = array<f32>} : (tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x1x4x4xf32>
  return
}

// CHECK-LABEL: func.func @rms_norm(
// CHECK: kiln.rms_norm {{.*}} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
func.func @rms_norm(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  %0 = kiln.rms_norm %x, %s {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// CHECK-LABEL: func.func @round(
// CHECK: kiln.round {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @round(%x: tensor<2x3xf32>) {
  %0 = kiln.round %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @scatter_elements(
// CHECK: kiln.scatter_elements {{.*}} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
func.func @scatter_elements(%x: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) {
  %0 = kiln.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return
}

// CHECK-LABEL: func.func @scatter_nd(
// CHECK: kiln.scatter_nd {{.*}} : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
func.func @scatter_nd(%x: tensor<8xf32>, %i: tensor<4x1xi64>, %u: tensor<4xf32>) {
  %0 = kiln.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
  return
}

// CHECK-LABEL: func.func @selu(
// CHECK: kiln.selu {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @selu(%x: tensor<2x3xf32>) {
  %0 = kiln.selu %x {alpha = 1.67326319 : f32, gamma = 1.05070102 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @shape(
// CHECK: kiln.shape {{.*}} : (tensor<?x3xf32>) -> tensor<2xi64>
func.func @shape(%x: tensor<?x3xf32>) {
  %0 = kiln.shape %x {end = 2 : i64, start = 0 : i64} : (tensor<?x3xf32>) -> tensor<2xi64>
  return
}

// CHECK-LABEL: func.func @shrink(
// CHECK: kiln.shrink {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @shrink(%x: tensor<2x3xf32>) {
  %0 = kiln.shrink %x {bias = 0.000000e+00 : f32, lambd = 5.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @sigmoid(
// CHECK: kiln.sigmoid {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @sigmoid(%x: tensor<2x3xf32>) {
  %0 = kiln.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @sign(
// CHECK: kiln.sign {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @sign(%x: tensor<2x3xf32>) {
  %0 = kiln.sign %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @sin(
// CHECK: kiln.sin {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @sin(%x: tensor<2x3xf32>) {
  %0 = kiln.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @sinh(
// CHECK: kiln.sinh {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @sinh(%x: tensor<2x3xf32>) {
  %0 = kiln.sinh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @size(
// CHECK: kiln.size {{.*}} : (tensor<?x3xf32>) -> tensor<i64>
func.func @size(%x: tensor<?x3xf32>) {
  %0 = kiln.size %x : (tensor<?x3xf32>) -> tensor<i64>
  return
}

// CHECK-LABEL: func.func @slice(
// CHECK: kiln.slice {{.*}} : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x?xf32>
func.func @slice(%x: tensor<4x6xf32>, %starts: tensor<1xi64>, %ends: tensor<1xi64>, %axes: tensor<1xi64>, %steps: tensor<1xi64>) {
  %0 = kiln.slice %x, %starts, %ends, %axes, %steps : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x?xf32>
  return
}

// CHECK-LABEL: func.func @softmax(
// CHECK: kiln.softmax {{.*}} : (tensor<2x5xf32>) -> tensor<2x5xf32>
func.func @softmax(%x: tensor<2x5xf32>) {
  %0 = kiln.softmax %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return
}

// CHECK-LABEL: func.func @softplus(
// CHECK: kiln.softplus {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @softplus(%x: tensor<2x3xf32>) {
  %0 = kiln.softplus %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @softsign(
// CHECK: kiln.softsign {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @softsign(%x: tensor<2x3xf32>) {
  %0 = kiln.softsign %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @split(
// CHECK: kiln.split {{.*}} : (tensor<3x6xf32>, tensor<2xi64>) -> (tensor<3x2xf32>, tensor<3x4xf32>)
func.func @split(%x: tensor<3x6xf32>) {
  %s = kiln.constant dense<[2, 4]> : tensor<2xi64>
  %0:2 = kiln.split %x, %s {axis = 1 : i64} : (tensor<3x6xf32>, tensor<2xi64>) -> (tensor<3x2xf32>, tensor<3x4xf32>)
  return
}

// CHECK-LABEL: func.func @sqrt(
// CHECK: kiln.sqrt {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @sqrt(%x: tensor<2x3xf32>) {
  %0 = kiln.sqrt %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @squeeze(
// CHECK: kiln.squeeze {{.*}} : (tensor<2x1x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
func.func @squeeze(%x: tensor<2x1x3xf32>) {
  %a = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.squeeze %x, %a : (tensor<2x1x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @sub(
// CHECK: kiln.sub {{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @sub(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = kiln.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @swish(
// CHECK: kiln.swish {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @swish(%x: tensor<2x3xf32>) {
  %0 = kiln.swish %x {alpha = 1.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @tan(
// CHECK: kiln.tan {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @tan(%x: tensor<2x3xf32>) {
  %0 = kiln.tan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @tanh(
// CHECK: kiln.tanh {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @tanh(%x: tensor<2x3xf32>) {
  %0 = kiln.tanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @thresholded_relu(
// CHECK: kiln.thresholded_relu {{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @thresholded_relu(%x: tensor<2x3xf32>) {
  %0 = kiln.thresholded_relu %x {alpha = 1.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @tile(
// CHECK: kiln.tile {{.*}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
func.func @tile(%x: tensor<2x3xf32>) {
  %r = kiln.constant dense<[2, 1]> : tensor<2xi64>
  %0 = kiln.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return
}

// CHECK-LABEL: func.func @topk(
// CHECK: kiln.topk {{.*}} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
func.func @topk(%x: tensor<3x4xf32>) {
  %k = kiln.constant dense<2> : tensor<1xi64>
  %v, %i = kiln.topk %x, %k {axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return
}

// CHECK-LABEL: func.func @transpose(
// CHECK: kiln.transpose {{.*}} : (tensor<2x3xf32>) -> tensor<3x2xf32>
func.func @transpose(%x: tensor<2x3xf32>) {
  %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// CHECK-LABEL: func.func @trilu(
// CHECK: kiln.trilu {{.*}} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
func.func @trilu(%x: tensor<3x4xf32>, %k: tensor<i64>) {
  %0 = kiln.trilu %x, %k {upper = 1 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  return
}

// CHECK-LABEL: func.func @unsqueeze(
// CHECK: kiln.unsqueeze {{.*}} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<1x2x3x1xf32>
func.func @unsqueeze(%x: tensor<2x3xf32>) {
  %a = kiln.constant dense<[0, 3]> : tensor<2xi64>
  %0 = kiln.unsqueeze %x, %a : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<1x2x3x1xf32>
  return
}

// CHECK-LABEL: func.func @where(
// CHECK: kiln.where {{.*}} : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
func.func @where(%c: tensor<2x3xi1>, %x: tensor<3xf32>, %y: tensor<2x1xf32>) {
  %0 = kiln.where %c, %x, %y : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @xor(
// CHECK: kiln.xor {{.*}} : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
func.func @xor(%a: tensor<2x3xi1>, %b: tensor<3xi1>) {
  %0 = kiln.xor %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  return
}
