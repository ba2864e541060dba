//===- KilnImageOps.td - Sampling, image-layout and box ops --*- tablegen -*-===//
//
// This file declares the kiln ops that sample or rearrange images by
// computed positions and that select boxes: grid_sample (ONNX GridSample),
// col2im (ONNX Col2Im), roi_align (ONNX RoiAlign), deform_conv (ONNX
// DeformConv) and non_max_suppression (ONNX NonMaxSuppression). The CPU
// target prints kernels of grid_sample, roi_align and deform_conv
// (targets/cpu/CppIndexKernels.cpp, CppImageKernels.cpp); otherwise all but
// non_max_suppression run as reference steps of a compiled graph,
// non_max_suppression (a size that depends on the values) as an eager
// region. See docs/op-semantics.md for the contract.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IMAGE_OPS_TD
#define KILN_IMAGE_OPS_TD

include "ir/KilnDialect.td"
include "ir/KilnProgramOps.td" // Kiln_EagerOnly

def Kiln_GridSampleOp : Kiln_Op<"grid_sample", "gridSample"> {
  let summary = "samples an N-D image at the normalized positions of a grid";
  let description = [{
    ONNX GridSample (versions 16 and 20): `x` is `N x C x D1 ... Dn` and
    `grid` is `N x O1 ... Om x n`, the normalized positions (in [-1, 1],
    the last entry the first spatial dim of `x`, as ONNX orders them); the
    result `N x C x O1 ... Om` (m = n) holds `x` interpolated there.
    `mode` is "linear", "nearest" (ties to even) or "cubic" (Keys, alpha
    -0.75); `padding_mode` "zeros", "border" or "reflection";
    `align_corners` 0 or 1. Both operands have the same float dtype.

    Example:

    ```mlir
    %0 = kiln.grid_sample %x, %grid {align_corners = 0 : i64, mode = "linear", padding_mode = "zeros"} : (tensor<1x1x4x4xf32>, tensor<1x6x6x2xf32>) -> tensor<1x1x6x6xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$grid,
                   StrAttr:$mode, StrAttr:$padding_mode,
                   I64Attr:$align_corners);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_Col2ImOp : Kiln_Op<"col2im", "col2im"> {
  let summary = "sums sliding-window columns back into an image";
  let description = [{
    ONNX Col2Im: `x` is `N x (C * prod(block_shape)) x L`, column `l` the
    window at the l-th position (row-major) of the sliding grid over the
    padded image; the result `N x C x image_shape...` is the sum of every
    window element at its image position (positions in the padding are
    dropped). `pads` is `[begin..., end...]`.

    Example:

    ```mlir
    %0 = kiln.col2im %x {block_shape = array<i64: 1, 5>, dilations = array<i64: 1, 1>, image_shape = array<i64: 5, 5>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x5x5xf32>) -> tensor<1x1x5x5xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, DenseI64ArrayAttr:$image_shape,
                   DenseI64ArrayAttr:$block_shape,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$strides);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_NonMaxSuppressionOp :
    Kiln_Op<"non_max_suppression", "nonMaxSuppression", [Kiln_EagerOnly]> {
  let summary = "greedy non-maximum suppression of boxes per batch and class";
  let description = [{
    ONNX NonMaxSuppression: `boxes` is `B x K x 4` (corners `[y1, x1, y2,
    x2]`, or `[xc, yc, w, h]` with `center_point_box = 1`), `scores`
    `B x C x K`; `max_output` (i64, one element; at most that many boxes
    per batch and class, none when <= 0), `iou_threshold` and
    `score_threshold` (f32, one element each; a box is a candidate when
    its score is greater than the threshold, the tracer passes -inf for
    none). The result `S x 3` (i64) lists `[batch, class, box]` of the
    selected boxes, by batch, class and falling score. Its size depends on
    the values, so only the reference runtime implements it (EagerOnly).

    Example:

    ```mlir
    %0 = kiln.non_max_suppression %boxes, %scores, %max, %iou, %threshold {center_point_box = 0 : i64} : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$boxes, Kiln_FloatTensor:$scores,
                   Kiln_I64Tensor:$max_output, Kiln_F32Tensor:$iou_threshold,
                   Kiln_F32Tensor:$score_threshold, I64Attr:$center_point_box);
  let results = (outs Kiln_I64Tensor:$output);
}

def Kiln_RoiAlignOp : Kiln_Op<"roi_align", "roiAlign"> {
  let summary = "bilinear average or max pooling of regions of interest";
  let description = [{
    ONNX RoiAlign (versions 10 and 16): `x` is `N x C x H x W`, `rois`
    `R x 4` (`[x1, y1, x2, y2]` in the input's coordinates, scaled by
    `spatial_scale`) and `batch_indices` (i64, `R`) the image of each
    region. Each region is cut into `output_height x output_width` bins;
    each bin samples `sampling_ratio` points per axis (`ceil(bin size)` when
    0) bilinearly and takes their mean (`mode` "avg") or the maximum of the
    weighted corner values (`mode` "max", as ONNX's reference). With
    `half_pixel` 1 the regions are shifted by -0.5 pixel (ONNX's
    `coordinate_transformation_mode` "half_pixel"); with 0 they are at
    least one pixel wide ("output_half_pixel", RoiAlign-10). The result is
    `R x C x output_height x output_width`.

    Example:

    ```mlir
    %0 = kiln.roi_align %x, %rois, %batch {half_pixel = 1 : i64, mode = "avg", output_height = 5 : i64, output_width = 5 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.000000e+00 : f32} : (tensor<1x1x10x10xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x1x5x5xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$rois,
                   Kiln_I64Tensor:$batch_indices, StrAttr:$mode,
                   I64Attr:$output_height, I64Attr:$output_width,
                   I64Attr:$sampling_ratio, F32Attr:$spatial_scale,
                   I64Attr:$half_pixel);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_DeformConvOp : Kiln_Op<"deform_conv", "deformConv"> {
  let summary = "2-D convolution sampled at learned offsets";
  let description = [{
    ONNX DeformConv (2-D): `x` is `N x C x H x W`, `w` `M x C/group x kH x
    kW`, `offset` `N x (offset_group * kH * kW * 2) x oH x oW` (per kernel
    position a row and a column displacement), `bias` `M` and `mask` `N x
    (offset_group * kH * kW) x oH x oW` (the tracer passes zeros and ones
    when ONNX omits them). Every kernel tap reads `x` bilinearly at its
    displaced position (zero outside the image), is scaled by its mask and
    multiplied by its weight. `pads` is `[top, left, bottom, right]`.

    Example:

    ```mlir
    %0 = kiln.deform_conv %x, %w, %offset, %b, %mask {dilations = array<i64: 1, 1>, group = 1 : i64, offset_group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x8x2x2xf32>, tensor<1xf32>, tensor<1x4x2x2xf32>) -> tensor<1x1x2x2xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$w,
                   Kiln_FloatTensor:$offset, Kiln_FloatTensor:$bias,
                   Kiln_FloatTensor:$mask, DenseI64ArrayAttr:$dilations,
                   I64Attr:$group, I64Attr:$offset_group,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$strides);
  let results = (outs Kiln_FloatTensor:$output);
}

#endif // KILN_IMAGE_OPS_TD
