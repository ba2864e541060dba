//===- ShapeInferenceImage.cpp - Image, box and signal op result types ----===//
//
// This file implements result-type inference for the ops of
// KilnImageOps.td and KilnSignalOps.td: grid_sample, col2im,
// non_max_suppression and dft. Attributes that the kernels index with
// (modes, window geometry, the DFT axis and length) are checked here, so a
// malformed model is a diagnostic at the node, never a kernel reading out of
// bounds.
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
