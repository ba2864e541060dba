// Result-type inference through createKilnOp (the tracer's entry point):
// -test-kiln-infer re-creates each kiln op from its name, operands and
// attributes and reports the inferred types. Parameter operands produced by
// constants give static dims; other parameters give dynamic dims of a static
// rank; broadcasting keeps dynamic dims where they are not decided.

// RUN: kiln-opt %s -test-kiln-infer -split-input-file -verify-diagnostics -allow-unregistered-dialect

func.func @broadcast(%a: tensor<?x3xf32>, %b: tensor<1xf32>, %c: tensor<?xf32>, %d: tensor<4x1xf32>, %e: tensor<?x?xf32>) {
  // expected-remark @+1 {{inferred: tensor<?x3xf32>}}
  %0 = kiln.add %a, %b : (tensor<?x3xf32>, tensor<1xf32>) -> tensor<?x3xf32>
  // expected-remark @+1 {{inferred: tensor<4x?xf32>}}
  %1 = kiln.sub %d, %c : (tensor<4x1xf32>, tensor<?xf32>) -> tensor<4x?xf32>
  // expected-remark @+1 {{inferred: tensor<4x3xi1>}}
  %2 = kiln.less %d, %a : (tensor<4x1xf32>, tensor<?x3xf32>) -> tensor<4x3xi1>
  // expected-remark @+1 {{inferred: tensor<?x?xf32>}}
  %3 = kiln.mul %e, %b : (tensor<?x?xf32>, tensor<1xf32>) -> tensor<?x?xf32>
  // expected-remark @+1 {{inferred: tensor<4x3xf32>}}
  %4 = kiln.where %2, %d, %a : (tensor<4x3xi1>, tensor<4x1xf32>, tensor<?x3xf32>) -> tensor<4x3xf32>
  // expected-remark @+1 {{inferred: tensor<?x3xi64>}}
  %5 = kiln.cast %a {to = i64} : (tensor<?x3xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @reshape(%x: tensor<2x3x4xf32>, %y: tensor<?x3x4xf32>, %s: tensor<3xi64>) {
  %c = kiln.constant dense<[0, -1]> : tensor<2xi64>
  // expected-remark @+1 {{inferred: tensor<2x12xf32>}}
  %0 = kiln.reshape %x, %c {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  // expected-remark @+1 {{inferred: tensor<?x?xf32>}}
  %1 = kiln.reshape %y, %c {allowzero = 0 : i64} : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  // expected-remark @+1 {{inferred: tensor<?x?x?xf32>}}
  %2 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %d = kiln.constant dense<[-1, 4]> : tensor<2xi64>
  // expected-remark @+1 {{inferred: tensor<6x4xf32>}}
  %3 = kiln.reshape %x, %d {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  // expected-remark @+1 {{inferred: tensor<2x12xf32>}}
  %4 = kiln.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // expected-remark @+1 {{inferred: tensor<?x12xf32>}}
  %5 = kiln.flatten %y {axis = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  // expected-remark @+1 {{inferred: tensor<1x24xf32>}}
  %6 = kiln.flatten %x {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
  return
}

// -----

func.func @squeeze(%x: tensor<2x1x3xf32>, %a: tensor<1xi64>) {
  %c = kiln.constant dense<-2> : tensor<1xi64>
  // expected-remark @+1 {{inferred: tensor<2x3xf32>}}
  %0 = kiln.squeeze %x, %c : (tensor<2x1x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  // expected-remark @+1 {{inferred: tensor<?x?xf32>}}
  %1 = kiln.squeeze %x, %a : (tensor<2x1x3xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %e = kiln.constant dense<> : tensor<0xi64>
  // expected-remark @+1 {{inferred: tensor<2x3xf32>}}
  %2 = kiln.squeeze %x, %e : (tensor<2x1x3xf32>, tensor<0xi64>) -> tensor<2x3xf32>
  %u = kiln.constant dense<[0, -1]> : tensor<2xi64>
  // expected-remark @+1 {{inferred: tensor<1x2x1x3x1xf32>}}
  %3 = kiln.unsqueeze %x, %u : (tensor<2x1x3xf32>, tensor<2xi64>) -> tensor<1x2x1x3x1xf32>
  // expected-remark @+1 {{inferred: tensor<?x?x?x?xf32>}}
  %4 = kiln.unsqueeze %x, %a : (tensor<2x1x3xf32>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
  return
}

// -----

func.func @reductions(%x: tensor<2x1x4xf32>, %a: tensor<2xi64>) {
  %c = kiln.constant dense<[0, -1]> : tensor<2xi64>
  // expected-remark @+1 {{inferred: tensor<1xf32>}}
  %0 = kiln.reduce_sum %x, %c {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x1x4xf32>, tensor<2xi64>) -> tensor<1xf32>
  // expected-remark @+1 {{inferred: tensor<1x1x1xf32>}}
  %1 = kiln.reduce_max %x, %c {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x1x4xf32>, tensor<2xi64>) -> tensor<1x1x1xf32>
  // expected-remark @+1 {{inferred: tensor<?x1x?xf32>}}
  %2 = kiln.reduce_mean %x, %a {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x1x4xf32>, tensor<2xi64>) -> tensor<?x1x?xf32>
  // expected-remark @+1 {{inferred: tensor<?xf32>}}
  %3 = kiln.reduce_min %x, %a {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x1x4xf32>, tensor<2xi64>) -> tensor<?xf32>
  %e = kiln.constant dense<> : tensor<0xi64>
  // expected-remark @+1 {{inferred: tensor<f32>}}
  %4 = kiln.reduce_prod %x, %e {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x1x4xf32>, tensor<0xi64>) -> tensor<f32>
  // expected-remark @+1 {{inferred: tensor<2x1x4xf32>}}
  %5 = kiln.reduce_sum %x, %e {keepdims = 1 : i64, noop_with_empty_axes = 1 : i64} : (tensor<2x1x4xf32>, tensor<0xi64>) -> tensor<2x1x4xf32>
  // expected-remark @+1 {{inferred: tensor<2x4xi64>}}
  %6 = kiln.argmax %x {axis = 1 : i64, keepdims = 0 : i64, select_last_index = 0 : i64} : (tensor<2x1x4xf32>) -> tensor<2x4xi64>
  %k = kiln.constant dense<3> : tensor<1xi64>
  // expected-remark @+1 {{inferred: tensor<2x1x3xf32>, tensor<2x1x3xi64>}}
  %v, %i = kiln.topk %x, %k {axis = 2 : i64, largest = 1 : i64, sorted = 1 : i64} : (tensor<2x1x4xf32>, tensor<1xi64>) -> (tensor<2x1x3xf32>, tensor<2x1x3xi64>)
  return
}

// -----

func.func @slices(%x: tensor<4x6xf32>, %p: tensor<1xi64>) {
  %s = kiln.constant dense<1> : tensor<1xi64>
  %e = kiln.constant dense<-1> : tensor<1xi64>
  %a = kiln.constant dense<1> : tensor<1xi64>
  %t = kiln.constant dense<2> : tensor<1xi64>
  // expected-remark @+1 {{inferred: tensor<4x2xf32>}}
  %0 = kiln.slice %x, %s, %e, %a, %t : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x2xf32>
  %big = kiln.constant dense<-9223372036854775807> : tensor<1xi64>
  %m1 = kiln.constant dense<-1> : tensor<1xi64>
  // expected-remark @+1 {{inferred: tensor<4x6xf32>}}
  %1 = kiln.slice %x, %m1, %big, %a, %m1 : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x6xf32>
  // expected-remark @+1 {{inferred: tensor<4x?xf32>}}
  %2 = kiln.slice %x, %p, %e, %a, %t : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x?xf32>
  // expected-remark @+1 {{inferred: tensor<?x?xf32>}}
  %3 = kiln.slice %x, %s, %e, %p, %t : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %sz = kiln.constant dense<[2, 4]> : tensor<2xi64>
  // expected-remark @+1 {{inferred: tensor<4x2xf32>, tensor<4x4xf32>}}
  %4:2 = kiln.split %x, %sz {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2xi64>) -> (tensor<4x2xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func @movement(%x: tensor<3xf32>, %y: tensor<?x3xf32>, %z: tensor<2x5xf32>, %s: tensor<2xi64>) {
  // expected-remark @+1 {{inferred: tensor<?x3xf32>}}
  %0 = kiln.expand %x, %s : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  %c = kiln.constant dense<[2, 1]> : tensor<2xi64>
  // expected-remark @+1 {{inferred: tensor<2x3xf32>}}
  %1 = kiln.expand %x, %c : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  // expected-remark @+1 {{inferred: tensor<2x8xf32>}}
  %2 = kiln.concat %y, %z {axis = 1 : i64} : (tensor<?x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // expected-remark @+1 {{inferred: tensor<?x3xf32>}}
  %3 = kiln.tile %y, %c : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  // expected-remark @+1 {{inferred: tensor<?x?xf32>}}
  %4 = kiln.tile %z, %s : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %pads = kiln.constant dense<[1, 0, 1, 2]> : tensor<4xi64>
  %v = kiln.constant dense<0.0> : tensor<f32>
  // expected-remark @+1 {{inferred: tensor<4x7xf32>}}
  %5 = kiln.pad %z, %pads, %v {mode = "constant"} : (tensor<2x5xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x7xf32>
  // expected-remark @+1 {{inferred: tensor<5x2xf32>}}
  %6 = kiln.transpose %z {perm = array<i64: 1, 0>} : (tensor<2x5xf32>) -> tensor<5x2xf32>
  // expected-remark @+1 {{inferred: tensor<1xi64>}}
  %7 = kiln.shape %y {end = 2 : i64, start = 1 : i64} : (tensor<?x3xf32>) -> tensor<1xi64>
  // expected-remark @+1 {{inferred: tensor<i64>}}
  %8 = kiln.size %y : (tensor<?x3xf32>) -> tensor<i64>
  // expected-remark @+1 {{inferred: tensor<2x1xi32>}}
  %9 = kiln.constant_of_shape %c {value = dense<1> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<2x1xi32>
  return
}

// -----

func.func @gathers(%x: tensor<5x4xf32>, %i: tensor<2x3xi32>, %j: tensor<2x1xi64>, %n: tensor<3xi64>) {
  // expected-remark @+1 {{inferred: tensor<5x2x3xf32>}}
  %0 = kiln.gather %x, %i {axis = 1 : i64} : (tensor<5x4xf32>, tensor<2x3xi32>) -> tensor<5x2x3xf32>
  // expected-remark @+1 {{inferred: tensor<2x3xf32>}}
  %1 = kiln.gather_elements %x, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  // expected-remark @+1 {{inferred: tensor<2x4xf32>}}
  %2 = kiln.gather_nd %x, %j {batch_dims = 0 : i64} : (tensor<5x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  %d = kiln.constant dense<10> : tensor<i64>
  %v = kiln.constant dense<[0.0, 1.0]> : tensor<2xf32>
  // expected-remark @+1 {{inferred: tensor<3x10xf32>}}
  %3 = kiln.one_hot %n, %d, %v {axis = 1 : i64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x10xf32>
  %s = kiln.constant dense<0> : tensor<i64>
  %l = kiln.constant dense<10> : tensor<i64>
  %t = kiln.constant dense<3> : tensor<i64>
  // expected-remark @+1 {{inferred: tensor<4xi64>}}
  %4 = kiln.range %s, %l, %t : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  return
}

// -----

func.func @linalg(%v: tensor<3xf32>, %m: tensor<3x4xf32>, %b: tensor<5x1x2x3xf32>, %c: tensor<7x3x4xf32>) {
  // expected-remark @+1 {{inferred: tensor<4xf32>}}
  %0 = kiln.matmul %v, %m : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{inferred: tensor<5x7x2x4xf32>}}
  %1 = kiln.matmul %b, %c : (tensor<5x1x2x3xf32>, tensor<7x3x4xf32>) -> tensor<5x7x2x4xf32>
  // expected-remark @+1 {{inferred: tensor<5x1x2xf32>}}
  %2 = kiln.matmul %b, %v : (tensor<5x1x2x3xf32>, tensor<3xf32>) -> tensor<5x1x2xf32>
  // expected-remark @+1 {{inferred: tensor<7x4xf32>}}
  %3 = kiln.einsum %c {equation = "bij->bj"} : (tensor<7x3x4xf32>) -> tensor<7x4xf32>
  // expected-remark @+1 {{inferred: tensor<7x4xf32>}}
  %4 = kiln.einsum %c, %v {equation = "bij,i"} : (tensor<7x3x4xf32>, tensor<3xf32>) -> tensor<7x4xf32>
  // expected-remark @+1 {{inferred: tensor<5x1x4xf32>}}
  %5 = kiln.einsum %b, %m {equation = "...ij,jk->...k"} : (tensor<5x1x2x3xf32>, tensor<3x4xf32>) -> tensor<5x1x4xf32>
  return
}

// -----

func.func @conv_pool(%x: tensor<1x3x5x5xf32>, %w: tensor<8x3x3x3xf32>, %d: tensor<?x3x?x5xf32>, %t: tensor<8x2x3x3xf32>) {
  // expected-remark @+1 {{inferred: tensor<1x8x3x3xf32>}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x5x5xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x3x3xf32>
  // expected-remark @+1 {{inferred: tensor<?x8x?x1xf32>}}
  %1 = kiln.conv %d, %w {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x3x?x5xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x1xf32>
  // expected-remark @+1 {{inferred: tensor<1x8x2x2xf32>}}
  %2 = kiln.max_pool %0 {ceil_mode = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x8x3x3xf32>) -> tensor<1x8x2x2xf32>
  // expected-remark @+1 {{inferred: tensor<1x3x3x3xf32>}}
  %3 = kiln.max_pool %x {ceil_mode = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32>
  // expected-remark @+1 {{inferred: tensor<1x3x2x2xf32>}}
  %4 = kiln.avg_pool %x {ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x2x2xf32>
  // expected-remark @+1 {{inferred: tensor<1x2x10x10xf32>}}
  %5 = kiln.conv_transpose %0, %t {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 4, 4>} : (tensor<1x8x3x3xf32>, tensor<8x2x3x3xf32>) -> tensor<1x2x10x10xf32>
  return
}

// -----

func.func @norms_recurrent(%x: tensor<2x4xf64>, %s: tensor<4xf64>, %seq: tensor<2x4x3xf32>, %w: tensor<2x15x3xf32>, %r: tensor<2x15x5xf32>, %b: tensor<2x30xf32>, %len: tensor<2xi32>, %h: tensor<2x2x5xf32>) {
  // expected-remark @+1 {{inferred: tensor<2x4xf64>, tensor<2x1xf64>, tensor<2x1xf64>}}
  %y, %m, %i = kiln.layer_norm %x, %s, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x4xf64>, tensor<4xf64>, tensor<4xf64>) -> (tensor<2x4xf64>, tensor<2x1xf64>, tensor<2x1xf64>)
  // expected-remark @+1 {{inferred: tensor<2x4x2x5xf32>, tensor<2x2x5xf32>}}
  %gy, %gh = kiln.gru %seq, %w, %r, %b, %len, %h {clip = 0.0 : f32, direction = "bidirectional", hidden_size = 5 : i64, layout = 1 : i64, linear_before_reset = 0 : i64} : (tensor<2x4x3xf32>, tensor<2x15x3xf32>, tensor<2x15x5xf32>, tensor<2x30xf32>, tensor<2xi32>, tensor<2x2x5xf32>) -> (tensor<2x4x2x5xf32>, tensor<2x2x5xf32>)
  return
}

// -----

func.func @resize(%x: tensor<1x1x2x3xf32>, %sizes: tensor<4xi64>) {
  %scales = kiln.constant dense<[1.0, 1.0, 2.0, 1.5]> : tensor<4xf32>
  %none = kiln.constant dense<> : tensor<0xi64>
  %nos = kiln.constant dense<> : tensor<0xf32>
  // expected-remark @+1 {{inferred: tensor<1x1x4x4xf32>}}
  %0 = kiln.resize %x, %scales, %none {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", roi = array<f32>} : (tensor<1x1x2x3xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x1x4x4xf32>
  // expected-remark @+1 {{inferred: tensor<?x?x?x?xf32>}}
  %1 = kiln.resize %x, %nos, %sizes {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "linear", nearest_mode = "round_prefer_floor", roi = array<f32>} : (tensor<1x1x2x3xf32>, tensor<0xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  return
}

// -----

// createKilnOp reports unknown ops and inference errors at the op.
func.func @create_errors(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{unknown op 'foo.bar' (not registered in the context)}}
  %0 = "foo.bar"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}
