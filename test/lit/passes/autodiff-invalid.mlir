// kiln-autodiff's errors: an op without a gradient rule on the way from a
// trainable parameter to the loss (every such op is reported, then the pass
// fails), a rule's unsupported case, a loss that
// is not a scalar, a graph without trainable parameters.

// RUN: kiln-opt %s -kiln-autodiff -split-input-file -verify-diagnostics

// Two ops without rules, on two paths to the loss: both are reported.
func.func @main(%x: tensor<5xf32> {kiln.name = "x"}, %w: tensor<5xf32> {kiln.name = "w", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %0 = kiln.mul %x, %w : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %axis = kiln.constant dense<0> : tensor<i64>
  // expected-error @+1 {{no gradient rule for 'kiln.cumsum': the loss depends on trainable parameters through it}}
  %1 = kiln.cumsum %0, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
  %axes = kiln.constant dense<0> : tensor<1xi64>
  // expected-error @+1 {{no gradient rule for 'kiln.reduce_prod'}}
  %2 = kiln.reduce_prod %0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<5xf32>, tensor<1xi64>) -> tensor<f32>
  %3 = kiln.reduce_sum %1, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<5xf32>, tensor<1xi64>) -> tensor<f32>
  %4 = kiln.add %2, %3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// Two ops without rules one behind the other: both are reported (the one
// nearer the parameter too, though no gradient reaches it).
func.func @main(%x: tensor<5xf32> {kiln.name = "x"}, %w: tensor<5xf32> {kiln.name = "w", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %0 = kiln.mul %x, %w : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %axis = kiln.constant dense<0> : tensor<i64>
  // expected-error @+1 {{no gradient rule for 'kiln.cumsum'}}
  %1 = kiln.cumsum %0, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
  %axes = kiln.constant dense<0> : tensor<1xi64>
  // expected-error @+1 {{no gradient rule for 'kiln.reduce_prod'}}
  %2 = kiln.reduce_prod %1, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<5xf32>, tensor<1xi64>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// Max pooling whose windows overlap is not differentiated yet (windows that
// tile the input are); the conv before it has a rule.
func.func @main(%x: tensor<1x3x8x8xf32> {kiln.name = "x"}, %w: tensor<3x3x1x1xf32> {kiln.name = "w", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x8x8xf32>
  // expected-error @+1 {{no gradient for 'kiln.max_pool': max pooling is differentiated only when its windows tile the input}}
  %1 = kiln.max_pool %0 {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x3x3xf32>
  %axes = kiln.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %2 = kiln.reduce_mean %1, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x3x3x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// An op with a rule that does not cover this case: a strided slice.
func.func @main(%x: tensor<4x6xf32> {kiln.name = "x"}, %w: tensor<4x6xf32> {kiln.name = "w", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %0 = kiln.mul %x, %w : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = kiln.constant dense<0> : tensor<1xi64>
  %e = kiln.constant dense<6> : tensor<1xi64>
  %a = kiln.constant dense<1> : tensor<1xi64>
  %st = kiln.constant dense<2> : tensor<1xi64>
  // expected-error @+1 {{no gradient for 'kiln.slice': slices with a step other than 1 are not differentiated yet}}
  %1 = kiln.slice %0, %s, %e, %a, %st : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x3xf32>
  %axes = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %2 = kiln.reduce_sum %1, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// The loss must be a float tensor of one element.
// expected-error @+1 {{the first output of the graph to train must be a scalar float loss, but it is tensor<4x5xf32>; reduce it to one element (e.g. ReduceMean) in the model}}
func.func @main(%x: tensor<4x3xf32> {kiln.name = "x"}, %w: tensor<3x5xf32> {kiln.name = "w", kiln.trainable}) -> (tensor<4x5xf32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %0 = kiln.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Nothing to train.
// expected-error @+1 {{the graph has no trainable parameters (float initializers that are not frozen)}}
func.func @main(%x: tensor<4x3xf32> {kiln.name = "x"}, %w: tensor<3x5xf32> {kiln.name = "w"}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %0 = kiln.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %axes = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %1 = kiln.reduce_mean %0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x5xf32>, tensor<2xi64>) -> tensor<f32>
  return %1 : tensor<f32>
}
