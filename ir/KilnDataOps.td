//===- KilnDataOps.td - Shape, data movement and recurrent ops -*- td -*-===//
//
// This file declares the kiln ops that move data or compute shapes
// (reshape, transpose, concat, slice, gather, scatter, pad, resize, ...),
// the constants and the recurrent ops. See docs/op-semantics.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DATA_OPS_TD
#define KILN_DATA_OPS_TD

include "ir/KilnDialect.td"
include "ir/KilnProgramOps.td" // Kiln_EagerOnly

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant", "constant", [ConstantLike]> {
  let summary = "a constant tensor";
  let description = [{
    Produces the tensor `value` (any ElementsAttr: dense, splat or
    dense_resource). The executor materializes it; it is not dispatched.

    Example:

    ```mlir
    %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Kiln_ConstantOfShapeOp : Kiln_Op<"constant_of_shape", "constantOfShape",
                                     [], "constantOfShape"> {
  let summary = "a tensor of the given shape filled with one value";
  let description = [{
    Fills a tensor of shape `shape` (i64[R]) with the single element of
    `value`, whose dtype is the result's.

    Example:

    ```mlir
    %0 = kiln.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Kiln_I64Tensor:$shape, ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_RangeOp : Kiln_Op<"range", "range"> {
  let summary = "a 1-D arithmetic sequence";
  let description = [{
    Produces `start, start + delta, ...` below `limit`:
    `max(ceil((limit - start) / delta), 0)` elements. The operands are
    rank-0 tensors of one numeric dtype.

    Example:

    ```mlir
    %0 = kiln.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$start, Kiln_NumericTensor:$limit,
                   Kiln_NumericTensor:$delta);
  let results = (outs Kiln_NumericTensor:$output);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_Op<"reshape", "reshape", [Kiln_View]> {
  let summary = "gives a tensor a new shape";
  let description = [{
    ONNX Reshape-14: `shape` is i64[R]; 0 copies the input dim (unless
    `allowzero = 1`) and one -1 is inferred. The result has rank R.

    Example:

    ```mlir
    %s = kiln.constant dense<[0, -1]> : tensor<2xi64>
    %0 = kiln.reshape %x, %s {allowzero = 0 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$shape,
                   I64Attr:$allowzero);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_FlattenOp : Kiln_Op<"flatten", "flatten", [Kiln_View]> {
  let summary = "flattens a tensor into a matrix";
  let description = [{
    The result is `[prod(dims < axis), prod(dims >= axis)]`, `axis` in
    `[0, rank]`.

    Example:

    ```mlir
    %0 = kiln.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_SqueezeOp : Kiln_Op<"squeeze", "squeeze", [Kiln_View]> {
  let summary = "removes size-1 dims";
  let description = [{
    Removes the dims listed in `axes` (i64[K], negative allowed), which must
    have size 1. K = 0 removes every size-1 dim; the rank is then known only
    when x is static.

    Example:

    ```mlir
    %a = kiln.constant dense<1> : tensor<1xi64>
    %0 = kiln.squeeze %x, %a : (tensor<2x1x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$axes);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_UnsqueezeOp : Kiln_Op<"unsqueeze", "unsqueeze", [Kiln_View]> {
  let summary = "inserts size-1 dims";
  let description = [{
    Inserts size-1 dims at `axes` (i64[K]), which refer to the output
    (rank = rank(x) + K).

    Example:

    ```mlir
    %a = kiln.constant dense<[0, 3]> : tensor<2xi64>
    %0 = kiln.unsqueeze %x, %a : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<1x2x3x1xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$axes);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_TransposeOp : Kiln_Op<"transpose", "transpose", [Kiln_View]> {
  let summary = "permutes the dims";
  let description = [{
    Result dim `i` is input dim `perm[i]`; `perm` is a permutation of
    `[0, rank)` (always explicit).

    Example:

    ```mlir
    %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_ConcatOp : Kiln_Op<"concat", "concat"> {
  let summary = "joins tensors along one axis";
  let description = [{
    The inputs have one rank and dtype and agree on every dim but `axis`.

    Example:

    ```mlir
    %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_SplitOp : Kiln_Op<"split", "split"> {
  let summary = "splits a tensor along one axis";
  let description = [{
    `sizes` is i64[N] (static N): result `i` has `sizes[i]` elements along
    `axis`.

    Example:

    ```mlir
    %s = kiln.constant dense<[2, 4]> : tensor<2xi64>
    %0:2 = kiln.split %x, %s {axis = 1 : i64} : (tensor<3x6xf32>, tensor<2xi64>) -> (tensor<3x2xf32>, tensor<3x4xf32>)
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$sizes, I64Attr:$axis);
  let results = (outs Variadic<Kiln_Tensor>:$outputs);
}

def Kiln_SliceOp : Kiln_Op<"slice", "slice", [Kiln_View]> {
  let summary = "strided slice";
  let description = [{
    ONNX Slice-13: `starts`, `ends`, `axes` and `steps` are i64[K]; starts
    and ends clamp to the dim, negative values count from the end.

    Example:

    ```mlir
    %0 = kiln.slice %x, %starts, %ends, %axes, %steps : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x?xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$starts,
                   Kiln_I64Tensor:$ends, Kiln_I64Tensor:$axes,
                   Kiln_I64Tensor:$steps);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_ExpandOp : Kiln_Op<"expand", "expand", [Kiln_View]> {
  let summary = "broadcasts a tensor to a shape";
  let description = [{
    ONNX Expand: `x` and `shape` (i64[R]) broadcast bidirectionally.

    Example:

    ```mlir
    %s = kiln.constant dense<[2, 3]> : tensor<2xi64>
    %0 = kiln.expand %x, %s : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$shape);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_TileOp : Kiln_Op<"tile", "tile"> {
  let summary = "repeats a tensor along each dim";
  let description = [{
    Dim `i` is repeated `repeats[i]` times; `repeats` is i64[rank].

    Example:

    ```mlir
    %r = kiln.constant dense<[2, 1]> : tensor<2xi64>
    %0 = kiln.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$repeats);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_PadOp : Kiln_Op<"pad", "pad", [], "pad"> {
  let summary = "pads a tensor";
  let description = [{
    `pads` is i64[2 * rank] (`[begin..., end...]`), `value` a rank-0 tensor
    of x's dtype used by `mode = "constant"`; `mode` is `constant`,
    `reflect`, `edge` or `wrap`.

    Example:

    ```mlir
    %0 = kiln.pad %x, %pads, %v {mode = "constant"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$pads, Kiln_Tensor:$value,
                   StrAttr:$mode);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_TriluOp : Kiln_Op<"trilu", "sameAsFirst", [], "trilu"> {
  let summary = "upper or lower triangle of the last two dims";
  let description = [{
    Keeps the elements on and above (`upper = 1`) or on and below
    (`upper = 0`) diagonal `k` (a rank-0 i64 operand) and zeroes the rest.

    Example:

    ```mlir
    %0 = kiln.trilu %x, %k {upper = 1 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_I64Tensor:$k, I64Attr:$upper);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_ShapeOp : Kiln_Op<"shape", "shapeOf"> {
  let summary = "the dims of a tensor";
  let description = [{
    Returns dims `[start, end)` of `x` as i64[end - start]; `start` and `end`
    are normalized and clamped to `[0, rank]` by the tracer. The op folds to
    a constant when those dims are static.

    Example:

    ```mlir
    %0 = kiln.shape %x {end = 2 : i64, start = 0 : i64} : (tensor<?x3xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, I64Attr:$start, I64Attr:$end);
  let results = (outs Kiln_I64Tensor:$output);
  let hasFolder = 1;
}

def Kiln_SizeOp : Kiln_Op<"size", "sizeOf"> {
  let summary = "the number of elements of a tensor";
  let description = [{
    Returns the element count of `x` as a rank-0 i64 tensor; folds to a
    constant when `x` has a static shape.

    Example:

    ```mlir
    %0 = kiln.size %x : (tensor<?x3xf32>) -> tensor<i64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x);
  let results = (outs Kiln_I64Tensor:$output);
  let hasFolder = 1;
}

def Kiln_NonZeroOp : Kiln_Op<"non_zero", "nonZero", [Kiln_EagerOnly]> {
  let summary = "the indices of the non-zero elements";
  let description = [{
    ONNX NonZero: the indices of the elements of `x` that are not zero
    (not false), as i64[rank(x), nnz] in row-major order of the elements
    (column j holds the coordinates of the j-th non-zero element). A rank-0
    `x` gives i64[0, nnz] with nnz 0 or 1. The size nnz depends on the
    values, so the op only runs on the reference runtime (EagerOnly).

    Example:

    ```mlir
    %0 = kiln.non_zero %x : (tensor<2x3xf32>) -> tensor<2x?xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x);
  let results = (outs Kiln_I64Tensor:$output);
}

def Kiln_BitCastOp : Kiln_Op<"bitcast", "bitcast"> {
  let summary = "reinterprets the bits of each element as another dtype";
  let description = [{
    ONNX BitCast: every element of `x` keeps its bit pattern (little
    endian) and is read as dtype `to`, of the same width (bool counts as 8
    bits; i4/ui4 and i2/ui2 as their 4 or 2 bits). A bool result is true
    where the byte is not zero. Same shape as `x`.

    Example:

    ```mlir
    %0 = kiln.bitcast %x {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, TypeAttr:$to);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_UniqueOp : Kiln_Op<"unique", "unique", [Kiln_EagerOnly]> {
  let summary = "the unique elements or slices of a tensor";
  let description = [{
    ONNX Unique: with `axis` -1 the unique elements of `x` flattened, else
    its unique slices along `axis` (non-negative). `sorted` 1 orders them
    ascending (slices lexicographically, as NumPy's unique), 0 by first
    occurrence. The results: the unique values (`[U]`, or `x`'s shape with
    `U` along `axis`), the index of each one's first occurrence (i64
    `[U]`), the position in the unique values of every element or slice of
    `x` (i64, `[numel(x)]` or `[dim(x, axis)]`) and each one's count (i64
    `[U]`). U depends on the values, so the op only runs on the reference
    runtime (EagerOnly).

    Example:

    ```mlir
    %y, %indices, %inverse, %counts = kiln.unique %x {axis = -1 : i64, sorted = 1 : i64} : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, I64Attr:$axis, I64Attr:$sorted);
  let results = (outs Kiln_Tensor:$y, Kiln_I64Tensor:$indices,
                 Kiln_I64Tensor:$inverse_indices, Kiln_I64Tensor:$counts);
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

def Kiln_GatherOp : Kiln_Op<"gather", "gather"> {
  let summary = "gathers slices along one axis";
  let description = [{
    Result shape is `x.shape[:axis] + indices.shape + x.shape[axis+1:]`;
    indices are i32 or i64, negative allowed.

    Example:

    ```mlir
    %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_GatherElementsOp : Kiln_Op<"gather_elements", "gatherElements"> {
  let summary = "gathers elements along one axis";
  let description = [{
    `indices` has x's rank; the result has the shape of `indices`.

    Example:

    ```mlir
    %0 = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_GatherNDOp : Kiln_Op<"gather_nd", "gatherND"> {
  let summary = "gathers slices by N-D indices";
  let description = [{
    ONNX GatherND with `batch_dims`; the last dim of `indices` must be static.

    Example:

    ```mlir
    %0 = kiln.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_IndexTensor:$indices,
                   I64Attr:$batch_dims);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_ScatterElementsOp : Kiln_Op<"scatter_elements", "sameAsFirstWithAxis",
                                     [], "scatter"> {
  let summary = "scatters elements along one axis";
  let description = [{
    Writes `updates` into a copy of `x` at `indices` along `axis`,
    combining with `reduction` (`none`, `add`, `mul`, `max`, `min`).

    Example:

    ```mlir
    %0 = kiln.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_IndexTensor:$indices,
                   Kiln_Tensor:$updates, I64Attr:$axis, StrAttr:$reduction);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_ScatterNDOp : Kiln_Op<"scatter_nd", "sameAsFirst", [], "scatter"> {
  let summary = "scatters slices by N-D indices";
  let description = [{
    ONNX ScatterND with `reduction` (`none`, `add`, `mul`, `max`, `min`).

    Example:

    ```mlir
    %0 = kiln.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, Kiln_IndexTensor:$indices,
                   Kiln_Tensor:$updates, StrAttr:$reduction);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_OneHotOp : Kiln_Op<"one_hot", "oneHot"> {
  let summary = "one-hot encoding";
  let description = [{
    Inserts a new dim of size `depth` (rank-0) at `axis` (in `[0, rank]`);
    `values` is `[off, on]` and gives the result dtype.

    Example:

    ```mlir
    %0 = kiln.one_hot %i, %depth, %values {axis = 1 : i64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf32>
    ```
  }];
  let arguments = (ins Kiln_IndexTensor:$indices, Kiln_NumericTensor:$depth,
                   Kiln_Tensor:$values, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
}

def Kiln_ResizeOp : Kiln_Op<"resize", "resize", [], "resize"> {
  let summary = "resizes (interpolates) a tensor";
  let description = [{
    ONNX Resize-19. `scales` (f32[rank]) and `sizes` (i64[rank]): exactly one
    is empty (`[0]`). `mode` is `nearest`, `linear` or `cubic`; `roi` is empty
    or `2 * rank` long. The optional `axes` names the dimensions that
    `keep_aspect_ratio_policy` applies to (the model's ONNX `axes`; absent:
    every dimension).

    Example:

    ```mlir
    %0 = kiln.resize %x, %scales, %sizes {antialias = 0 : i64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", roi = array<f32>} : (tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x1x4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_F32Tensor:$scales,
                   Kiln_I64Tensor:$sizes, StrAttr:$mode,
                   StrAttr:$coordinate_transformation_mode,
                   StrAttr:$nearest_mode, F32Attr:$cubic_coeff_a,
                   I64Attr:$exclude_outside, F32Attr:$extrapolation_value,
                   I64Attr:$antialias, DenseF32ArrayAttr:$roi,
                   StrAttr:$keep_aspect_ratio_policy,
                   OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs Kiln_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Recurrent
//===----------------------------------------------------------------------===//

def Kiln_LSTMOp : Kiln_Op<"lstm", "lstm", [], "recurrent"> {
  let summary = "LSTM (ONNX LSTM-14)";
  let description = [{
    Every operand is present (the tracer builds zeros and full lengths).
    Activations are the defaults (sigmoid, tanh, tanh). With `layout = 0`,
    `y` is `[seq, num_directions, batch, hidden]` and `y_h`, `y_c` are
    `[num_directions, batch, hidden]`; `layout = 1` puts batch first.
    `direction` is `forward`, `reverse` or `bidirectional`; `clip = 0` means
    no clipping.

    Example:

    ```mlir
    %y, %yh, %yc = kiln.lstm %x, %w, %r, %b, %len, %h0, %c0, %p {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, input_forget = 0 : i64, layout = 0 : i64} : (tensor<4x2x3xf32>, tensor<1x20x3xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>, tensor<2xi32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x15xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$w,
                   Kiln_FloatTensor:$r, Kiln_FloatTensor:$b,
                   Kiln_I32Tensor:$sequence_lens,
                   Kiln_FloatTensor:$initial_h, Kiln_FloatTensor:$initial_c,
                   Kiln_FloatTensor:$p, StrAttr:$direction,
                   I64Attr:$hidden_size, F32Attr:$clip,
                   I64Attr:$input_forget, I64Attr:$layout);
  let results = (outs Kiln_FloatTensor:$y, Kiln_FloatTensor:$y_h,
                  Kiln_FloatTensor:$y_c);
}

def Kiln_GRUOp : Kiln_Op<"gru", "gru", [], "recurrent"> {
  let summary = "GRU (ONNX GRU-14)";
  let description = [{
    Every operand is present. Shapes follow `kiln.lstm` without `y_c`.

    Example:

    ```mlir
    %y, %yh = kiln.gru %x, %w, %r, %b, %len, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, layout = 0 : i64, linear_before_reset = 0 : i64} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>, tensor<1x30xf32>, tensor<2xi32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$w,
                   Kiln_FloatTensor:$r, Kiln_FloatTensor:$b,
                   Kiln_I32Tensor:$sequence_lens,
                   Kiln_FloatTensor:$initial_h, StrAttr:$direction,
                   I64Attr:$hidden_size, F32Attr:$clip,
                   I64Attr:$linear_before_reset, I64Attr:$layout);
  let results = (outs Kiln_FloatTensor:$y, Kiln_FloatTensor:$y_h);
}

def Kiln_GRURecurrenceOp : Kiln_Op<"gru_recurrence", "gruRecurrence"> {
  let summary = "the recurrence of a GRU whose input projection is done";
  let description = [{
    The sequential part of `kiln.gru` (linear_before_reset or not, default
    activations, `layout = 0`): `xw` is
    `[seq, batch, num_directions·3·hidden]`, `W x + Wb` of every step and
    direction (gates z, r, h), computed beforehand as one GEMM; `r` is
    `[num_directions, 3·hidden, hidden]`, `rb` `[num_directions,
    3·hidden]` (the recurrence bias), `initial_h` `[num_directions, batch,
    hidden]`, and `sequence_lens` `[batch]` when the sequences are not all
    full length (absent: every one is). Results as `kiln.gru`'s: `y` `[seq,
    num_directions, batch, hidden]` (zero beyond an entry's length), `y_h`
    `[num_directions, batch, hidden]`. The tracer does not
    produce it: the CPU and CUDA targets' `kiln-split-recurrent` pass
    splits a `kiln.gru` into its input projection (a matmul over all steps)
    and this op (CUDA: one device kernel launch per step; CPU: a oneDNN
    matmul of the state and the gates per step).

    Example:

    ```mlir
    %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, linear_before_reset = 1 : i64} : (tensor<4x2x15xf32>, tensor<1x15x5xf32>, tensor<1x15xf32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$xw, Kiln_FloatTensor:$r,
                   Kiln_FloatTensor:$rb, Kiln_FloatTensor:$initial_h,
                   Optional<Kiln_I32Tensor>:$sequence_lens,
                   StrAttr:$direction, I64Attr:$hidden_size, F32Attr:$clip,
                   I64Attr:$linear_before_reset);
  let results = (outs Kiln_FloatTensor:$y, Kiln_FloatTensor:$y_h);
}

def Kiln_LSTMRecurrenceOp : Kiln_Op<"lstm_recurrence", "lstmRecurrence"> {
  let summary = "the recurrence of an LSTM whose input projection is done";
  let description = [{
    The sequential part of `kiln.lstm` (default activations, `layout = 0`):
    `xw` is `[seq, batch,
    num_directions·4·hidden]`, `W x + Wb + Rb` of every step and direction
    (gates i, o, f, c; both biases), computed beforehand as one GEMM; `r` is
    `[num_directions, 4·hidden, hidden]`, `p` `[num_directions, 3·hidden]`
    (the peepholes i, o, f), `initial_h` and `initial_c` `[num_directions,
    batch, hidden]`, and `sequence_lens` `[batch]` when the sequences are
    not all full length (absent: every one is). Results as `kiln.lstm`'s:
    `y` `[seq, num_directions, batch, hidden]` (zero beyond an entry's
    length), `y_h` and `y_c` `[num_directions, batch, hidden]`. The
    tracer does not produce it: the CPU and CUDA targets'
    `kiln-split-recurrent` pass splits a `kiln.lstm` into its input
    projection (a matmul over all steps) and this op (CUDA: one device
    kernel launch per step; CPU: a oneDNN matmul of the state and the gates
    per step).

    Example:

    ```mlir
    %y, %yh, %yc = kiln.lstm_recurrence %xw, %r, %p, %h0, %c0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 5 : i64, input_forget = 0 : i64} : (tensor<4x2x20xf32>, tensor<1x20x5xf32>, tensor<1x15xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$xw, Kiln_FloatTensor:$r,
                   Kiln_FloatTensor:$p, Kiln_FloatTensor:$initial_h,
                   Kiln_FloatTensor:$initial_c,
                   Optional<Kiln_I32Tensor>:$sequence_lens,
                   StrAttr:$direction, I64Attr:$hidden_size, F32Attr:$clip,
                   I64Attr:$input_forget);
  let results = (outs Kiln_FloatTensor:$y, Kiln_FloatTensor:$y_h,
                  Kiln_FloatTensor:$y_c);
}

#endif // KILN_DATA_OPS_TD
