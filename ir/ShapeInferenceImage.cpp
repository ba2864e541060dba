//===- ShapeInferenceImage.cpp - Image, box and signal op result types ----===//
//
// This file implements result-type inference for the ops of
// KilnImageOps.td and KilnSignalOps.td: grid_sample, col2im, roi_align,
// deform_conv, non_max_suppression, dft and stft. Attributes that the kernels
// index with (modes, window geometry, the DFT axis and length) are checked
// here, so a malformed model is a diagnostic at the node, never a kernel
// reading out of bounds.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeInference.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace kiln::infer;

static constexpr int64_t kDyn = ShapedType::kDynamic;

static bool isDyn(int64_t dim) { return ShapedType::isDynamic(dim); }

/// Merges two dims that must agree; false when both are static and differ.
static bool agree(int64_t a, int64_t b) {
  return isDyn(a) || isDyn(b) || a == b;
}

//===----------------------------------------------------------------------===//
// grid_sample
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::gridSample(const InferContext &ctx,
                                      Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0), grid = ctx.tensor(1);
  if (failed(x) || failed(grid))
    return failure();
  if (failed(ctx.enumAttr("mode", {"linear", "nearest", "cubic"})) ||
      failed(ctx.enumAttr("padding_mode", {"zeros", "border", "reflection"})))
    return failure();
  FailureOr<int64_t> align = ctx.i64Attr("align_corners");
  if (failed(align))
    return failure();
  if (*align != 0 && *align != 1)
    return ctx.emitError("attribute 'align_corners' must be 0 or 1, got ",
                         *align);
  int64_t rank = x->getRank();
  if (rank < 3)
    return ctx.emitError("operand 'x' must have rank >= 3 (N, C, spatial...), "
                         "got ",
                         *x);
  if (grid->getRank() != rank)
    return ctx.emitError("operand 'grid' must have rank ", rank,
                         " (N, spatial..., ", rank - 2, "), got ", *grid);
  if (!agree(grid->getDimSize(rank - 1), rank - 2))
    return ctx.emitError("the last dim of 'grid' must be ", rank - 2,
                         " (one coordinate per spatial dim of x), got ",
                         *grid);
  if (!agree(x->getDimSize(0), grid->getDimSize(0)))
    return ctx.emitError("'x' and 'grid' disagree on the batch: ", *x, " vs ",
                         *grid);
  if (x->getElementType() != grid->getElementType())
    return ctx.emitError("'x' and 'grid' must have the same dtype, got ", *x,
                         " and ", *grid);
  SmallVector<int64_t> shape = {
      isDyn(x->getDimSize(0)) ? grid->getDimSize(0) : x->getDimSize(0),
      x->getDimSize(1)};
  for (int64_t d = 1; d < rank - 1; ++d)
    shape.push_back(grid->getDimSize(d));
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// col2im
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::col2im(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<SmallVector<int64_t>> image = ctx.i64ArrayAttr("image_shape"),
                                  block = ctx.i64ArrayAttr("block_shape"),
                                  dilations = ctx.i64ArrayAttr("dilations"),
                                  pads = ctx.i64ArrayAttr("pads"),
                                  strides = ctx.i64ArrayAttr("strides");
  if (failed(x) || failed(image) || failed(block) || failed(dilations) ||
      failed(pads) || failed(strides))
    return failure();
  size_t n = image->size();
  if (n == 0 || block->size() != n || dilations->size() != n ||
      strides->size() != n || pads->size() != 2 * n)
    return ctx.emitError("image_shape, block_shape, dilations and strides "
                         "must have one entry per spatial dim and pads two, "
                         "got ",
                         n, ", ", block->size(), ", ", dilations->size(), ", ",
                         strides->size(), " and ", pads->size());
  if (x->getRank() != 3)
    return ctx.emitError("operand must have rank 3 (N, C * prod(block), L), "
                         "got ",
                         *x);
  int64_t blockSize = 1, windows = 1;
  for (size_t i = 0; i < n; ++i) {
    int64_t img = (*image)[i], blk = (*block)[i], dil = (*dilations)[i],
            str = (*strides)[i], pb = (*pads)[i], pe = (*pads)[i + n];
    if (img < 1 || blk < 1 || dil < 1 || str < 1 || pb < 0 || pe < 0 ||
        img > kiln::kMaxTensorElements || blk > kiln::kMaxTensorElements ||
        dil > kiln::kMaxTensorElements || str > kiln::kMaxTensorElements ||
        pb > kiln::kMaxTensorElements || pe > kiln::kMaxTensorElements)
      return ctx.emitError("image_shape, block_shape, dilations and strides "
                           "must be in [1, 2^40] and pads in [0, 2^40]");
    int64_t span = saturatingAdd(saturatingMul(blk - 1, dil), 1);
    int64_t padded = img + pb + pe;
    if (span > padded)
      return ctx.emitError("the block (", span, " with dilation) is larger "
                           "than the padded image (",
                           padded, ") in spatial dim ", i);
    blockSize = saturatingMul(blockSize, blk);
    windows = saturatingMul(windows, (padded - span) / str + 1);
  }
  int64_t channels = x->getDimSize(1);
  if (!isDyn(channels) && channels % blockSize != 0)
    return ctx.emitError("dim 1 of the operand (", channels,
                         ") must be a multiple of prod(block_shape) = ",
                         blockSize);
  if (!agree(x->getDimSize(2), windows))
    return ctx.emitError("dim 2 of the operand must be the number of "
                         "windows, ",
                         windows, ", got ", *x);
  SmallVector<int64_t> shape = {
      x->getDimSize(0), isDyn(channels) ? kDyn : channels / blockSize};
  shape.append(image->begin(), image->end());
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// non_max_suppression
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::nonMaxSuppression(const InferContext &ctx,
                                             Results &results) {
  if (failed(ctx.expectOperands(5)))
    return failure();
  FailureOr<RankedTensorType> boxes = ctx.tensor(0), scores = ctx.tensor(1);
  FailureOr<int64_t> center = ctx.i64Attr("center_point_box");
  if (failed(boxes) || failed(scores) || failed(center))
    return failure();
  if (*center != 0 && *center != 1)
    return ctx.emitError("attribute 'center_point_box' must be 0 or 1, got ",
                         *center);
  if (boxes->getRank() != 3 || !agree(boxes->getDimSize(2), 4))
    return ctx.emitError("operand 'boxes' must have shape [B, K, 4], got ",
                         *boxes);
  if (scores->getRank() != 3 ||
      !agree(scores->getDimSize(0), boxes->getDimSize(0)) ||
      !agree(scores->getDimSize(2), boxes->getDimSize(1)))
    return ctx.emitError("operand 'scores' must have shape [B, C, K] for "
                         "boxes ",
                         *boxes, ", got ", *scores);
  for (unsigned i = 2; i < 5; ++i)
    if (failed(ctx.paramLength(i, /*requireStatic=*/false)))
      return failure();
  results.push_back(RankedTensorType::get(
      {kDyn, 3}, IntegerType::get(ctx.getContext(), 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// dft
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::dft(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> axis = ctx.i64Attr("axis"), length = ctx.i64Attr("length"),
                     inverse = ctx.i64Attr("inverse"),
                     onesided = ctx.i64Attr("onesided");
  if (failed(x) || failed(axis) || failed(length) || failed(inverse) ||
      failed(onesided))
    return failure();
  int64_t rank = x->getRank();
  if (rank < 2 || !(agree(x->getDimSize(rank - 1), 1) ||
                    agree(x->getDimSize(rank - 1), 2)))
    return ctx.emitError("operand must have shape [..., 1] or [..., 2] "
                         "(real, or real and imaginary parts), got ",
                         *x);
  if (*axis < 0 || *axis >= rank - 1)
    return ctx.emitError("attribute 'axis' (", *axis,
                         ") must name a signal dim, in [0, ", rank - 1,
                         ") for ", *x);
  if (*length < 1 || *length > kiln::kMaxTensorElements)
    return ctx.emitError("the DFT length must be in [1, 2^40], got ",
                         *length);
  if ((*inverse != 0 && *inverse != 1) || (*onesided != 0 && *onesided != 1))
    return ctx.emitError("attributes 'inverse' and 'onesided' must be 0 or 1");
  SmallVector<int64_t> shape(x->getShape());
  bool irfft = *inverse && *onesided;
  shape[*axis] = (*onesided && !*inverse) ? *length / 2 + 1 : *length;
  shape.back() = irfft ? 1 : 2;
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// roi_align
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::roiAlign(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(3)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0), rois = ctx.tensor(1),
                              batch = ctx.tensor(2);
  FailureOr<int64_t> height = ctx.i64Attr("output_height"),
                     width = ctx.i64Attr("output_width"),
                     ratio = ctx.i64Attr("sampling_ratio"),
                     halfPixel = ctx.i64Attr("half_pixel");
  if (failed(x) || failed(rois) || failed(batch) || failed(height) ||
      failed(width) || failed(ratio) || failed(halfPixel) ||
      failed(ctx.f32Attr("spatial_scale")) ||
      failed(ctx.enumAttr("mode", {"avg", "max"})))
    return failure();
  if (x->getRank() != 4)
    return ctx.emitError("operand 'x' must have rank 4 (N, C, H, W), got ", *x);
  if (rois->getRank() != 2 || !agree(rois->getDimSize(1), 4))
    return ctx.emitError("operand 'rois' must be [R, 4], got ", *rois);
  if (batch->getRank() != 1 ||
      !agree(batch->getDimSize(0), rois->getDimSize(0)))
    return ctx.emitError("operand 'batch_indices' must be [R] for rois ", *rois,
                         ", got ", *batch);
  if (rois->getElementType() != x->getElementType())
    return ctx.emitError("'x' and 'rois' must have the same dtype, got ", *x,
                         " and ", *rois);
  // Bounded so that every bin's sample grid stays a small loop.
  constexpr int64_t kMaxBins = int64_t(1) << 20;
  if (*height < 1 || *width < 1 || *height > kMaxBins || *width > kMaxBins)
    return ctx.emitError("output_height and output_width must be in [1, 2^20],"
                         " got ",
                         *height, " and ", *width);
  if (*ratio < 0 || *ratio > 1024)
    return ctx.emitError("sampling_ratio must be in [0, 1024], got ", *ratio);
  if (*halfPixel != 0 && *halfPixel != 1)
    return ctx.emitError("attribute 'half_pixel' must be 0 or 1");
  int64_t r =
      isDyn(rois->getDimSize(0)) ? batch->getDimSize(0) : rois->getDimSize(0);
  results.push_back(RankedTensorType::get(
      {r, x->getDimSize(1), *height, *width}, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// deform_conv
//===----------------------------------------------------------------------===//

/// The output size of one spatial dim of deform_conv; kDyn when the input
/// is dynamic, failure (with a diagnostic) when the window does not fit.
static FailureOr<int64_t> deformOutDim(const InferContext &ctx, int64_t in,
                                       int64_t kernel, int64_t stride,
                                       int64_t dilation, int64_t padSum) {
  if (isDyn(in) || isDyn(kernel))
    return kDyn;
  int64_t span = saturatingAdd(saturatingMul(kernel - 1, dilation), 1);
  int64_t padded = saturatingAdd(in, padSum);
  if (padded < span)
    return ctx.emitError("the dilated kernel (", span,
                         ") is larger than the padded input (", padded, ")");
  return (padded - span) / stride + 1;
}

LogicalResult kiln::infer::deformConv(const InferContext &ctx,
                                      Results &results) {
  if (failed(ctx.expectOperands(5)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0), w = ctx.tensor(1),
                              offset = ctx.tensor(2), bias = ctx.tensor(3),
                              mask = ctx.tensor(4);
  FailureOr<SmallVector<int64_t>> dil = ctx.i64ArrayAttr("dilations"),
                                  pads = ctx.i64ArrayAttr("pads"),
                                  strides = ctx.i64ArrayAttr("strides");
  FailureOr<int64_t> group = ctx.i64Attr("group"),
                     offsetGroup = ctx.i64Attr("offset_group");
  if (failed(x) || failed(w) || failed(offset) || failed(bias) ||
      failed(mask) || failed(dil) || failed(pads) || failed(strides) ||
      failed(group) || failed(offsetGroup))
    return failure();
  if (x->getRank() != 4 || w->getRank() != 4 || offset->getRank() != 4 ||
      mask->getRank() != 4 || bias->getRank() != 1)
    return ctx.emitError("Kiln supports 2-D deform_conv only: x, w, offset "
                         "and mask of rank 4, bias of rank 1; got ",
                         *x, ", ", *w, ", ", *offset, ", ", *mask, ", ", *bias);
  for (RankedTensorType t : {*w, *offset, *bias, *mask})
    if (t.getElementType() != x->getElementType())
      return ctx.emitError("every operand must have x's dtype ", *x, ", got ",
                           t);
  if (dil->size() != 2 || strides->size() != 2 || pads->size() != 4)
    return ctx.emitError("dilations and strides need 2 values and pads 4");
  for (int64_t v : {(*dil)[0], (*dil)[1], (*strides)[0], (*strides)[1]})
    if (v < 1 || v > kiln::kMaxTensorElements)
      return ctx.emitError("dilations and strides must be positive, got ", v);
  for (int64_t p : *pads)
    if (p < 0 || p > kiln::kMaxTensorElements)
      return ctx.emitError("pads must be non-negative, got ", p);
  if (*group < 1 || *offsetGroup < 1 || *group > kiln::kMaxTensorElements ||
      *offsetGroup > kiln::kMaxTensorElements)
    return ctx.emitError("group and offset_group must be positive, got ",
                         *group, " and ", *offsetGroup);
  int64_t c = x->getDimSize(1), m = w->getDimSize(0), kh = w->getDimSize(2),
          kw = w->getDimSize(3);
  if (!isDyn(c) && (c % *group != 0 || c % *offsetGroup != 0 ||
                    !agree(w->getDimSize(1), c / *group)))
    return ctx.emitError("x's ", c, " channels do not fit group ", *group,
                         ", offset_group ", *offsetGroup, " and w ", *w);
  if (!isDyn(m) && m % *group != 0)
    return ctx.emitError("w's ", m,
                         " output channels are not divisible by "
                         "group ",
                         *group);
  if (!agree(bias->getDimSize(0), m))
    return ctx.emitError("bias ", *bias, " must have w's ", m, " channels");
  FailureOr<int64_t> oh = deformOutDim(ctx, x->getDimSize(2), kh, (*strides)[0],
                                       (*dil)[0], (*pads)[0] + (*pads)[2]);
  FailureOr<int64_t> ow = deformOutDim(ctx, x->getDimSize(3), kw, (*strides)[1],
                                       (*dil)[1], (*pads)[1] + (*pads)[3]);
  if (failed(oh) || failed(ow))
    return failure();
  int64_t taps = isDyn(kh) || isDyn(kw)
                     ? kDyn
                     : saturatingMul(saturatingMul(kh, kw), *offsetGroup);
  int64_t n = x->getDimSize(0);
  auto fits = [&](RankedTensorType t, int64_t channels) {
    return agree(t.getDimSize(0), n) &&
           (isDyn(channels) || agree(t.getDimSize(1), channels)) &&
           agree(t.getDimSize(2), *oh) && agree(t.getDimSize(3), *ow);
  };
  if (!fits(*offset, isDyn(taps) ? kDyn : saturatingMul(taps, 2)))
    return ctx.emitError("offset ", *offset,
                         " must be [N, offset_group * kH "
                         "* kW * 2, oH, oW] = [",
                         n, ", ", isDyn(taps) ? kDyn : 2 * taps, ", ", *oh,
                         ", ", *ow, "]");
  if (!fits(*mask, taps))
    return ctx.emitError("mask ", *mask,
                         " must be [N, offset_group * kH * kW, oH, oW]");
  results.push_back(
      RankedTensorType::get({n, m, *oh, *ow}, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// stft
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::stft(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(3)))
    return failure();
  FailureOr<RankedTensorType> signal = ctx.tensor(0), window = ctx.tensor(2);
  FailureOr<int64_t> onesided = ctx.i64Attr("onesided");
  if (failed(signal) || failed(window) || failed(onesided) ||
      failed(ctx.paramLength(1, /*requireStatic=*/false)))
    return failure();
  if (signal->getRank() != 3 ||
      !(agree(signal->getDimSize(2), 1) || agree(signal->getDimSize(2), 2)))
    return ctx.emitError("operand 'signal' must be [batch, length, 1 or 2], "
                         "got ",
                         *signal);
  if (window->getRank() != 1 ||
      window->getElementType() != signal->getElementType())
    return ctx.emitError("operand 'window' must be 1-D of the signal's "
                         "dtype, got ",
                         *window);
  if (*onesided != 0 && *onesided != 1)
    return ctx.emitError("attribute 'onesided' must be 0 or 1");
  std::optional<SmallVector<int64_t>> step = ctx.constInts(1);
  if (step && (step->size() != 1 || (*step)[0] < 1))
    return ctx.emitError("frame_step must be one positive value");
  int64_t length = signal->getDimSize(1), frame = window->getDimSize(0);
  if (!isDyn(frame) && frame < 1)
    return ctx.emitError("the window (the frame length) must not be empty");
  if (!isDyn(length) && !isDyn(frame) && frame > length)
    return ctx.emitError("the frame length ", frame,
                         " is longer than the signal (", length, ")");
  int64_t frames = isDyn(length) || isDyn(frame) || !step
                       ? kDyn
                       : 1 + (length - frame) / (*step)[0];
  int64_t bins = isDyn(frame) ? kDyn : *onesided ? frame / 2 + 1 : frame;
  results.push_back(RankedTensorType::get(
      {signal->getDimSize(0), frames, bins, 2}, signal->getElementType()));
  return success();
}
