//===- KilnNNOps.td - Linear algebra, conv, norm and reduction ops -*- td -*-===//
//
// This file declares the kiln ops for linear algebra and convolution,
// pooling, normalization, softmax, reductions, arg-reductions, scans and
// top-k. See docs/op-semantics.md for the contract.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_NN_OPS_TD
#define KILN_NN_OPS_TD

include "ir/KilnDialect.td"
include "ir/KilnProgramOps.td" // Kiln_EagerOnly

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

def Kiln_MatMulOp : Kiln_Op<"matmul", "matmul", [Kiln_Library]> {
  let summary = "NumPy matrix product";
  let description = [{
    NumPy `matmul`: 1-D operands are promoted to matrices and the added dim is
    removed from the result; batch dims broadcast. Both operands have the
    same numeric dtype.

    Example:

    ```mlir
    %0 = kiln.matmul %a, %b : (tensor<8x2x3xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$a, Kiln_NumericTensor:$b);
  let results = (outs Kiln_NumericTensor:$output);
}

def Kiln_DetOp : Kiln_Op<"det", "det", [Kiln_EagerOnly]> {
  let summary = "the determinant of square matrices";
  let description = [{
    ONNX Det: `x` is `[..., M, M]` (rank >= 2, the last two dims equal); the
    result `[...]` holds the determinant of each M x M matrix, in the dtype
    of `x`. Only the reference runtime implements it (EagerOnly).

    Example:

    ```mlir
    %0 = kiln.det %x : (tensor<2x3x3xf32>) -> tensor<2xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_ConvOp : Kiln_Op<"conv", "conv", [Kiln_Library], "conv"> {
  let summary = "N-D cross-correlation (NCHW), without bias";
  let description = [{
    Convolves `x` (`N x C x D1 ... Dn`, n = 1, 2 or 3) with `w`
    (`M x C/group x k1 ... kn`). `pads` is `[begin..., end...]`; output dim
    `i` is `floor((D + pad_begin + pad_end - ((k - 1) * dilation + 1)) /
    stride) + 1`. The tracer adds the bias with `kiln.add`.

    With `layout = "nhwc"` (channels last, set by the CUDA target's
    `kiln-channels-last` pass) the channel dim is the last one instead:
    `x` is `N x D1 ... Dn x C`, `w` is `M x k1 ... kn x C/group` and the
    result `N x D1' ... Dn' x M`; the arithmetic is the same.

    Example:

    ```mlir
    %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$w,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads, I64Attr:$group,
                   OptionalAttr<StrAttr>:$layout);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_DepthwiseConvOp : Kiln_Op<"depthwise_conv", "depthwiseConv"> {
  let summary = "a depthwise convolution with activations on its input and output";
  let description = [{
    `activation(conv(input_activation(x), w))`: a `kiln.conv` (same operands
    and attributes) whose `group` is the input channels, each output channel
    reading one input channel, with an activation applied to every element
    of `x` as it is read (`input_activation`) and to every element of the
    result as it is written (`activation`). An activation is `"none"`,
    `"relu"`, `"relu6"` (`min(max(v, 0), 6)`), `"silu"` (`v * sigmoid(v)`)
    or `"hard_swish"` (`v * min(max(v / 6 + 0.5, 0), 1)`). The reference
    rounds the activated input and the convolution's result to the dtype,
    as the ops it replaces; the CUDA kernel computes both activations in f32
    on the loaded element and the accumulator. The tracer does not produce
    it: the CUDA target's `kiln-cuda-fuse-depthwise` pass forms it from a
    depthwise convolution and the activations next to it (MobileNet's
    ReLU6, EfficientNet's SiLU), so that they are not kernels of their own.

    Example:

    ```mlir
    %0 = kiln.depthwise_conv %x, %w {activation = "relu6", dilations = array<i64: 1, 1>, group = 4 : i64, input_activation = "none", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$w,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads, I64Attr:$group,
                   OptionalAttr<StrAttr>:$layout, StrAttr:$input_activation,
                   StrAttr:$activation);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_ConvTransposeOp : Kiln_Op<"conv_transpose", "convTranspose",
                                   [Kiln_Library],
                                   "convTranspose"> {
  let summary = "N-D transposed convolution (NCHW), without bias";
  let description = [{
    The transpose of `kiln.conv`: `w` is `C x M/group x k1 ... kn`; output
    dim `i` is `stride * (D - 1) + output_padding + ((k - 1) * dilation + 1)
    - pad_begin - pad_end`. The tracer resolves `output_shape` and
    `auto_pad` into `pads` and `output_padding`.

    Example:

    ```mlir
    %0 = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x6x6xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$w,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$output_padding, I64Attr:$group);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_MaxPoolOp : Kiln_Op<"max_pool", "pool"> {
  let summary = "N-D max pooling (NCHW)";
  let description = [{
    Takes the maximum over each window; padding is -inf. With
    `ceil_mode = 1` the output size rounds up, but a window must start inside
    the input or its begin padding. With `layout = "nhwc"` (channels last,
    as `kiln.conv`) `x` and the result are `N x D1 ... Dn x C`.

    Example:

    ```mlir
    %0 = kiln.max_pool %x {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$x, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads, I64Attr:$ceil_mode,
                   OptionalAttr<StrAttr>:$layout);
  let results = (outs Kiln_NumericTensor:$output);
}

def Kiln_AvgPoolOp : Kiln_Op<"avg_pool", "pool"> {
  let summary = "N-D average pooling (NCHW)";
  let description = [{
    Averages each window (ONNX AveragePool-19 semantics). With
    `count_include_pad = 1` padded elements count in the divisor.

    Example:

    ```mlir
    %0 = kiln.avg_pool %x {ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   DenseI64ArrayAttr:$pads, I64Attr:$ceil_mode,
                   I64Attr:$count_include_pad);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_EinsumOp : Kiln_Op<"einsum", "einsum"> {
  let summary = "Einstein summation";
  let description = [{
    ONNX Einsum over any number of operands of one dtype, including `...`
    and the implicit output (ellipsis dims, then the letters that occur once,
    in alphabetical order).

    Example:

    ```mlir
    %0 = kiln.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_NumericTensor>:$inputs,
                   StrAttr:$equation);
  let results = (outs Kiln_NumericTensor:$output);
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def Kiln_BatchNormOp : Kiln_Op<"batch_norm", "sameAsFirst", [],
                               "batchNorm"> {
  let summary = "batch normalization (inference)";
  let description = [{
    Computes `(x - mean) / sqrt(var + epsilon) * scale + bias` over the
    channel axis 1; `scale`, `bias`, `mean` and `var` have C elements.

    Example:

    ```mlir
    %0 = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$scale,
                   Kiln_FloatTensor:$bias, Kiln_FloatTensor:$mean,
                   Kiln_FloatTensor:$var, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_LayerNormOp : Kiln_Op<"layer_norm", "layerNorm"> {
  let summary = "layer normalization over the trailing dims";
  let description = [{
    Normalizes over dims `[axis, rank)`; `scale` and `bias` broadcast against
    those dims. Results: `y` (dtype of x), and `mean` and `inv_std_dev`
    (f32, or f64 for f64 input; shape of x with dims >= axis set to 1).

    Example:

    ```mlir
    %y, %mean, %inv = kiln.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$scale,
                   Kiln_FloatTensor:$bias, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$y, Kiln_FloatTensor:$mean,
                  Kiln_FloatTensor:$inv_std_dev);
}

def Kiln_RMSNormOp : Kiln_Op<"rms_norm", "sameAsFirstWithAxis"> {
  let summary = "RMS normalization over the trailing dims";
  let description = [{
    Computes `x / sqrt(mean(x^2, dims >= axis) + epsilon) * scale`.

    Example:

    ```mlir
    %0 = kiln.rms_norm %x, %s {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$scale,
                   I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_InstanceNormOp : Kiln_Op<"instance_norm", "sameAsFirst", [],
                                  "instanceNorm"> {
  let summary = "instance normalization";
  let description = [{
    Normalizes each (n, c) over the spatial dims, then scales and shifts by
    the per-channel `scale` and `bias` (C elements each).

    Example:

    ```mlir
    %0 = kiln.instance_norm %x, %s, %b {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$scale,
                   Kiln_FloatTensor:$bias, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_GroupNormOp : Kiln_Op<"group_norm", "sameAsFirst", [],
                               "groupNorm"> {
  let summary = "group normalization";
  let description = [{
    Splits the C channels into `num_groups` groups and normalizes each group
    of each sample; `scale` and `bias` have C elements
    (ONNX GroupNormalization-21).

    Example:

    ```mlir
    %0 = kiln.group_norm %x, %s, %b {epsilon = 9.99999974E-6 : f32, num_groups = 2 : i64} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$scale,
                   Kiln_FloatTensor:$bias, I64Attr:$num_groups,
                   F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
}

class Kiln_SoftmaxLikeOp<string mnemonic, string semantics> :
    Kiln_Op<mnemonic, "sameAsFirstWithAxis"> {
  let summary = mnemonic # " along one axis";
  let description = [{
    }] # semantics # [{ (ONNX opset-13 semantics: along the one
    axis `axis`, normalized to `[0, rank)`.)

    Example:

    ```mlir
    %0 = kiln.}] # mnemonic # [{ %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_AttentionOp : Kiln_Op<"attention", "attention"> {
  let summary = "scaled dot-product attention";
  let description = [{
    Computes `softmax(scale * q k^T + mask) v` per batch and head: `q` is
    `B x H x Tq x D`, `k` is `B x H x Tk x D`, `v` is `B x H x Tk x Dv`, all
    of one float type; the result is `B x H x Tq x Dv`. With `causal = 1`
    key `j` is masked (-inf) for query `i` when `j > i`. The second result,
    `lse` (`B x H x Tq`, f32, f64 for f64 operands), is each query row's
    log-sum-exp `log(sum_j exp(scale * q k_j^T + mask))`, what
    `kiln.attention_grad` needs to rebuild the probabilities without the
    `Tq x Tk` scores ever reaching memory. The reference computes the
    scores, the softmax and the weighted sum in f32 (f64 for f64) and rounds
    the result once. The tracer does not produce it: the CUDA target's
    `kiln-cuda-attention` pass recognizes the matmul, scale, causal mask,
    softmax, matmul chain and runs it as one flash-attention kernel (for a
    training graph before autodiff, so the backward pass gets
    `kiln.attention_grad`).

    Example:

    ```mlir
    %0, %lse = kiln.attention %q, %k, %v {causal = 1 : i64, scale = 1.250000e-01 : f32} : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$q, Kiln_FloatTensor:$k,
                   Kiln_FloatTensor:$v, F32Attr:$scale, I64Attr:$causal);
  let results = (outs Kiln_FloatTensor:$output, Kiln_FloatTensor:$lse);
}

def Kiln_AttentionGradOp : Kiln_Op<"attention_grad", "attentionGrad"> {
  let summary = "the gradients of scaled dot-product attention";
  let description = [{
    The backward pass of `kiln.attention` (flash attention's): with `q`,
    `k`, `v` and the attributes of the forward op, `grad` the gradient of
    its result (`B x H x Tq x Dv`), `lse` its second result and `delta`
    (`B x H x Tq`, `lse`'s type) each query row's `sum_e grad * output`,
    it rebuilds the probabilities `P = exp(scale * q k^T + mask - lse)` and
    computes `dv = P^T grad`, `dS = P * (grad v^T - delta)`,
    `dq = scale * dS k` and `dk = scale * dS^T q`: three results with the
    types of `q`, `k` and `v`. The reference works in f32 (f64 for f64).
    kiln-autodiff's rule for `kiln.attention` creates it; the CUDA target
    runs it as one kernel (a block per key tile for `dk` and `dv`, one per
    query tile for `dq`).

    Example:

    ```mlir
    %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %g, %lse, %delta {causal = 1 : i64, scale = 5.000000e-01 : f32} : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$q, Kiln_FloatTensor:$k,
                   Kiln_FloatTensor:$v, Kiln_FloatTensor:$grad,
                   Kiln_FloatTensor:$lse, Kiln_FloatTensor:$delta,
                   F32Attr:$scale, I64Attr:$causal);
  let results = (outs Kiln_FloatTensor:$dq, Kiln_FloatTensor:$dk,
                  Kiln_FloatTensor:$dv);
}

def Kiln_PackedAttentionOp : Kiln_Op<"packed_attention", "packedAttention"> {
  let summary = "scaled dot-product attention reading q, k and v packed";
  let description = [{
    `kiln.attention` over one `B x T x 3·H·D` tensor `qkv`, the output of a
    fused q/k/v projection: along the last axis, its first `H·D` elements
    are q, the next k, the last v, each `H` heads of `D` (the layout
    FlashAttention's `qkvpacked` functions take). The result is `B x T x H
    x D`, the heads of each position next to each other, so a reshape to
    `B x T x H·D` is a view; `lse` is `B x H x T` as `kiln.attention`'s.
    `heads` is `H`; `scale` and `causal` are as in `kiln.attention`. The
    tracer does not produce it: the CUDA target's `kiln-cuda-attention`
    pass forms it when the q, k and v of a `kiln.attention` are slices of
    one tensor, reshaped into heads and transposed, and its result is
    transposed back, so the slices and the transposes are not copies.

    With `layout = "seq_first"` the positions come first, as
    nn.MultiheadAttention's in-projection writes them: `qkv` is `T x B x
    3·H·D` (the same split of the last axis) and the result `T x B x H x D`,
    so a reshape to `T·B x H·D` is the out-projection's operand; `lse` is
    still `B x H x T`. Without `layout` (or with `"batch_first"`) it is the
    layout above.

    Example:

    ```mlir
    %0, %lse = kiln.packed_attention %qkv {causal = 1 : i64, heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<1x8x24xbf16>) -> (tensor<1x8x2x4xbf16>, tensor<1x2x8xf32>)
    %1, %lse1 = kiln.packed_attention %x {causal = 0 : i64, heads = 2 : i64, layout = "seq_first", scale = 5.000000e-01 : f32} : (tensor<8x3x24xf32>) -> (tensor<8x3x2x4xf32>, tensor<3x2x8xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$qkv, I64Attr:$heads, F32Attr:$scale,
                   I64Attr:$causal, OptionalAttr<StrAttr>:$layout);
  let results = (outs Kiln_FloatTensor:$output, Kiln_FloatTensor:$lse);
}

def Kiln_PackedAttentionGradOp
    : Kiln_Op<"packed_attention_grad", "packedAttentionGrad"> {
  let summary = "the gradients of attention reading q, k and v packed";
  let description = [{
    `kiln.attention_grad` of a `kiln.packed_attention`: `qkv` is its
    operand, `grad` the gradient of its result (`B x T x H x D`), `lse` its
    second result and `delta` (`B x H x T`) each query row's
    `sum_e grad * output`. The result is the gradient of `qkv`, `B x T x
    3·H·D`, with dq, dk and dv of each head where q, k and v were read, so
    the gradient of the fused q/k/v projection needs no concatenation.

    Example:

    ```mlir
    %0 = kiln.packed_attention_grad %qkv, %g, %lse, %delta {causal = 1 : i64, heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<1x8x24xbf16>, tensor<1x8x2x4xbf16>, tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<1x8x24xbf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$qkv, Kiln_FloatTensor:$grad,
                   Kiln_FloatTensor:$lse, Kiln_FloatTensor:$delta,
                   I64Attr:$heads, F32Attr:$scale, I64Attr:$causal);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_SoftmaxOp : Kiln_SoftmaxLikeOp<"softmax",
    "Computes `exp(x) / sum(exp(x))`.">;
def Kiln_LogSoftmaxOp : Kiln_SoftmaxLikeOp<"log_softmax",
    "Computes `x - log(sum(exp(x)))`.">;
def Kiln_HardmaxOp : Kiln_SoftmaxLikeOp<"hardmax",
    "Puts 1 at the first maximum and 0 elsewhere.">;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Kiln_ReduceSumOp : Kiln_ReductionOp<"reduce_sum", Kiln_NumericTensor,
    "Sums `x` over `axes`.">;
def Kiln_ReduceMeanOp : Kiln_ReductionOp<"reduce_mean", Kiln_NumericTensor,
    "Averages `x` over `axes`.">;
def Kiln_ReduceMaxOp : Kiln_ReductionOp<"reduce_max", Kiln_Tensor,
    "Takes the maximum of `x` over `axes` (bool too).">;
def Kiln_ReduceMinOp : Kiln_ReductionOp<"reduce_min", Kiln_Tensor,
    "Takes the minimum of `x` over `axes` (bool too).">;
def Kiln_ReduceProdOp : Kiln_ReductionOp<"reduce_prod", Kiln_NumericTensor,
    "Multiplies `x` over `axes`.">;

class Kiln_ArgReductionOp<string mnemonic, string semantics> :
    Kiln_Op<mnemonic, "argReduction"> {
  let summary = "index of the " # semantics # " along one axis";
  let description = [{
    Returns the i64 index of the }] # semantics # [{ along `axis`; ties give
    the first index, or the last with `select_last_index = 1`. With
    `keepdims = 0` the axis is removed, otherwise it becomes 1.

    Example:

    ```mlir
    %0 = kiln.}] # mnemonic # [{ %x {axis = 1 : i64, keepdims = 0 : i64, select_last_index = 0 : i64} : (tensor<2x5xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, I64Attr:$axis, I64Attr:$keepdims,
                   I64Attr:$select_last_index);
  let results = (outs Kiln_I64Tensor:$output);
}

def Kiln_ArgMaxOp : Kiln_ArgReductionOp<"argmax", "maximum">;
def Kiln_ArgMinOp : Kiln_ArgReductionOp<"argmin", "minimum">;

class Kiln_ScanOp<string mnemonic, string semantics> :
    Kiln_Op<mnemonic, "scan"> {
  let summary = semantics # " along one axis";
  let description = [{
    Computes the }] # semantics # [{ of `x` along the axis given by the
    rank-0 (or one-element) i64 operand `axis` (negative counts from the
    end). `exclusive = 1` leaves out the current element, `reverse = 1`
    scans from the end.

    Example:

    ```mlir
    %axis = kiln.constant dense<0> : tensor<i64>
    %0 = kiln.}] # mnemonic # [{ %x, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$x, Kiln_IndexTensor:$axis,
                   I64Attr:$exclusive, I64Attr:$reverse);
  let results = (outs Kiln_NumericTensor:$output);
}

def Kiln_CumSumOp : Kiln_ScanOp<"cumsum", "cumulative sum">;
def Kiln_CumProdOp : Kiln_ScanOp<"cumprod", "cumulative product">;

def Kiln_TopKOp : Kiln_Op<"topk", "topk"> {
  let summary = "the k largest or smallest elements along one axis";
  let description = [{
    Returns the `k` (an i64[1] operand) largest (`largest = 1`) or smallest
    elements along `axis` and their i64 indices; ties give the lower index
    first. `sorted = 1` orders them.

    Example:

    ```mlir
    %k = kiln.constant dense<2> : tensor<1xi64>
    %v, %i = kiln.topk %x, %k {axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$x, Kiln_I64Tensor:$k,
                   I64Attr:$axis, I64Attr:$largest, I64Attr:$sorted);
  let results = (outs Kiln_NumericTensor:$values, Kiln_I64Tensor:$indices);
}

#endif // KILN_NN_OPS_TD
