// The kiln.fusion verifier: block arguments mirror the operands, the yield
// matches the results, only allowed ops are inside, parameters are
// constants inside the region, and `kind` matches the contents.

// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 has type 'tensor<4xf32>' but block argument #0 has type 'tensor<4xf16>'}}
  %r = kiln.fusion "k0" ins(%a : tensor<4xf32>) kind("pointwise") {
  ^bb0(%x: tensor<4xf16>):
    %n = kiln.neg %x : (tensor<4xf16>) -> tensor<4xf16>
    kiln.yield %n : tensor<4xf16>
  } -> (tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----

func.func @arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 1 operands but its block has 0 arguments}}
  %r = kiln.fusion "k0" ins(%a : tensor<4xf32>) kind("pointwise") {
    %c = kiln.constant dense<1.0> : tensor<4xf32>
    kiln.yield %c : tensor<4xf32>
  } -> (tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----

func.func @yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{yields ('tensor<2x2xf32>') but its results are ('tensor<4xf32>')}}
  %r = kiln.fusion "k0" ins(%a : tensor<4xf32>) kind("pointwise") {
  ^bb0(%x: tensor<4xf32>):
    %s = kiln.constant dense<2> : tensor<2xi64>
    %v = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
    %n = kiln.neg %v : (tensor<2x2xf32>) -> tensor<2x2xf32>
    kiln.yield %n : tensor<2x2xf32>
  } -> (tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----

func.func @matmul_inside(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = kiln.fusion "k0" ins(%a : tensor<4x4xf32>) kind("pointwise") {
  ^bb0(%x: tensor<4x4xf32>):
    // expected-error @+1 {{'kiln.matmul' op is not allowed inside a kiln.fusion region}}
    %m = kiln.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    kiln.yield %m : tensor<4x4xf32>
  } -> (tensor<4x4xf32>)
  return %r : tensor<4x4xf32>
}

// -----

func.func @weight_constant_inside(%a: tensor<3xf32>) -> tensor<3xf32> {
  %r = kiln.fusion "k0" ins(%a : tensor<3xf32>) kind("pointwise") {
  ^bb0(%x: tensor<3xf32>):
    // expected-error @+1 {{'kiln.constant' op is not allowed inside a kiln.fusion region}}
    %c = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %m = kiln.mul %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    kiln.yield %m : tensor<3xf32>
  } -> (tensor<3xf32>)
  return %r : tensor<3xf32>
}

// -----

func.func @parameter_operand(%a: tensor<4xf32>, %s: tensor<2xi64>) -> tensor<2x2xf32> {
  %r = kiln.fusion "k0" ins(%a, %s : tensor<4xf32>, tensor<2xi64>) kind("pointwise") {
  ^bb0(%x: tensor<4xf32>, %shape: tensor<2xi64>):
    // expected-error @+1 {{parameter operand #1 must be a kiln.constant inside the kiln.fusion region}}
    %v = kiln.reshape %x, %shape {allowzero = 0 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
    %n = kiln.neg %v : (tensor<2x2xf32>) -> tensor<2x2xf32>
    kiln.yield %n : tensor<2x2xf32>
  } -> (tensor<2x2xf32>)
  return %r : tensor<2x2xf32>
}

// -----

func.func @kind_mismatch(%a: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{of kind "pointwise" contains a reduction}}
  %r = kiln.fusion "k0" ins(%a : tensor<4xf32>) kind("pointwise") {
  ^bb0(%x: tensor<4xf32>):
    %axes = kiln.constant dense<0> : tensor<1xi64>
    %s = kiln.reduce_sum %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4xf32>, tensor<1xi64>) -> tensor<1xf32>
    kiln.yield %s : tensor<1xf32>
  } -> (tensor<1xf32>)
  return %r : tensor<1xf32>
}

// -----

func.func @no_reduction(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{of kind "reduction" contains no reduction}}
  %r = kiln.fusion "k0" ins(%a : tensor<4xf32>) kind("reduction") {
  ^bb0(%x: tensor<4xf32>):
    %n = kiln.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %n : tensor<4xf32>
  } -> (tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----

func.func @bad_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kind must be "pointwise" or "reduction", got "fancy"}}
  %r = kiln.fusion "k0" ins(%a : tensor<4xf32>) kind("fancy") {
  ^bb0(%x: tensor<4xf32>):
    %n = kiln.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %n : tensor<4xf32>
  } -> (tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----

func.func @isolated(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %r = kiln.fusion "k0" kind("pointwise") {
    // expected-error @+1 {{using value defined outside the region}}
    %n = kiln.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %n : tensor<4xf32>
  } -> (tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----

func.func @yield_outside(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.yield' op expects parent op to be one of 'kiln.fusion, kiln.eager, kiln.if, kiln.loop'}}
  kiln.yield %a : tensor<4xf32>
}
