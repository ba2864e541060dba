//===- ShapeInferenceConv.cpp - Convolution and pooling result types -----===//
//
// This file implements result-type inference and verification for conv,
// conv_transpose and the pooling ops: the window attributes (strides,
// dilations, pads, kernel_shape), the output size of a sliding window, the
// channel and group structure, and the channels-last layout (`layout =
// "nhwc"`, read by moving the last dim to position 1 and back).
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeInference.h"

#include <algorithm>

using namespace mlir;
using namespace kiln::infer;

static constexpr int64_t kDyn = ShapedType::kDynamic;

static bool isDyn(int64_t dim) { return ShapedType::isDynamic(dim); }

namespace {
/// The window attributes of a convolution or pooling op.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
};
} // namespace

/// Whether the op's optional `layout` is "nhwc" (channels last); failure for
/// any other value.
static FailureOr<bool> isChannelsLast(const InferContext &ctx) {
  if (!ctx.hasAttr("layout"))
    return false;
  FailureOr<StringRef> layout = ctx.enumAttr("layout", {"nhwc"});
  if (failed(layout))
    return failure();
  return true;
}

/// `type` with its last dim moved to position 1 (channels last to channels
/// first); `toLast` moves dim 1 to the end instead.
static RankedTensorType moveChannels(RankedTensorType type, bool toLast) {
  SmallVector<int64_t> shape(type.getShape());
  if (shape.size() >= 2) {
    if (toLast)
      std::rotate(shape.begin() + 1, shape.begin() + 2, shape.end());
    else
      std::rotate(shape.begin() + 1, shape.end() - 1, shape.end());
  }
  return RankedTensorType::get(shape, type.getElementType());
}

/// Reads and checks strides, dilations, pads (and kernel_shape when
/// `hasKernel`) for `n` spatial dims.
static FailureOr<Window> readWindow(const InferContext &ctx, RankedTensorType x,
                                    bool hasKernel) {
  if (x.getRank() < 3 || x.getRank() > 5)
    return ctx.emitError("operand must be N x C x D1 ... Dn with 1 to 3 "
                         "spatial dims, got ",
                         x);
  size_t n = x.getRank() - 2;
  Window window;
  auto read = [&](StringRef name, size_t length, int64_t minimum,
                  SmallVector<int64_t> &out) -> LogicalResult {
    FailureOr<SmallVector<int64_t>> values = ctx.i64ArrayAttr(name);
    if (failed(values))
      return failure();
    if (values->size() != length)
      return ctx.emitError("attribute '", name, "' must have ", length,
                           " values for ", n, " spatial dims, got ",
                           values->size());
    for (int64_t v : *values)
      if (v < minimum || v > kiln::kMaxTensorElements)
        return ctx.emitError("attribute '", name, "' values must be in [",
                             minimum, ", 2^40], got ", v);
    out = std::move(*values);
    return success();
  };
  if ((hasKernel && failed(read("kernel_shape", n, 1, window.kernel))) ||
      failed(read("strides", n, 1, window.strides)) ||
      failed(read("dilations", n, 1, window.dilations)) ||
      failed(read("pads", 2 * n, 0, window.pads)))
    return failure();
  return window;
}

/// The output size of a sliding window; kDynamic when unknown.
static FailureOr<int64_t> windowOutput(const InferContext &ctx, int64_t in,
                                       int64_t kernel, const Window &w,
                                       size_t i, bool ceilMode) {
  if (isDyn(in) || isDyn(kernel))
    return kDyn;
  size_t n = w.strides.size();
  // Every term is at most 2^40 (readWindow, checkResultSizes); products
  // saturate, and a saturated extent is larger than any padded dim.
  int64_t extent = saturatingAdd(saturatingMul(kernel - 1, w.dilations[i]), 1);
  int64_t padded = in + w.pads[i] + w.pads[n + i];
  if (padded < extent)
    return ctx.emitError("window of extent ", extent, " (kernel ", kernel,
                         ", dilation ", w.dilations[i],
                         ") is larger than padded spatial dim ", i, " (",
                         padded, ")");
  int64_t stride = w.strides[i];
  int64_t out = (padded - extent) / stride + 1;
  if (ceilMode) {
    out = (padded - extent + stride - 1) / stride + 1;
    // The last window must start inside the input or its begin padding.
    if (saturatingMul(out - 1, stride) >= in + w.pads[i])
      --out;
  }
  return out;
}

LogicalResult kiln::infer::conv(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0), w = ctx.tensor(1);
  FailureOr<bool> channelsLast = isChannelsLast(ctx);
  if (failed(x) || failed(w) || failed(channelsLast))
    return failure();
  if (*channelsLast) {
    x = moveChannels(*x, /*toLast=*/false);
    w = moveChannels(*w, /*toLast=*/false);
  }
  FailureOr<Window> window = readWindow(ctx, *x, /*hasKernel=*/false);
  FailureOr<int64_t> group = ctx.i64Attr("group");
  if (failed(window) || failed(group))
    return failure();
  if (w->getRank() != x->getRank())
    return ctx.emitError("weight must have the input's rank, got ", *x, " and ",
                         *w);
  if (*group < 1 || *group > kiln::kMaxTensorElements)
    return ctx.emitError("attribute 'group' must be in [1, 2^40], got ",
                         *group);
  SmallVector<int64_t> shape = {x->getDimSize(0), w->getDimSize(0)};
  for (size_t i = 0; i + 2 < static_cast<size_t>(x->getRank()); ++i) {
    FailureOr<int64_t> out = windowOutput(ctx, x->getDimSize(i + 2),
                                          w->getDimSize(i + 2), *window, i,
                                          /*ceilMode=*/false);
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  auto result = RankedTensorType::get(shape, x->getElementType());
  results.push_back(*channelsLast ? moveChannels(result, /*toLast=*/true)
                                  : result);
  return success();
}

LogicalResult kiln::infer::depthwiseConv(const InferContext &ctx,
                                         Results &results) {
  if (failed(conv(ctx, results)))
    return failure();
  for (StringRef name : {"input_activation", "activation"})
    if (failed(ctx.enumAttr(name,
                            {"none", "relu", "relu6", "silu", "hard_swish"})))
      return failure();
  // Channels first: x [N, C, ...], w [M, 1, ...] with group = C.
  RankedTensorType x = *ctx.tensor(0), w = *ctx.tensor(1);
  if (*isChannelsLast(ctx)) {
    x = moveChannels(x, /*toLast=*/false);
    w = moveChannels(w, /*toLast=*/false);
  }
  int64_t group = *ctx.i64Attr("group");
  if (!x.isDynamicDim(1) && x.getDimSize(1) != group)
    return ctx.emitError("a depthwise convolution's group must be its input "
                         "channels (",
                         x.getDimSize(1), "), got ", group);
  if (!w.isDynamicDim(1) && w.getDimSize(1) != 1)
    return ctx.emitError("a depthwise convolution's weight must have one "
                         "input channel per group, got ",
                         w);
  return success();
}

LogicalResult kiln::infer::convTranspose(const InferContext &ctx,
                                         Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0), w = ctx.tensor(1);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<Window> window = readWindow(ctx, *x, /*hasKernel=*/false);
  FailureOr<int64_t> group = ctx.i64Attr("group");
  FailureOr<SmallVector<int64_t>> outputPadding =
      ctx.i64ArrayAttr("output_padding");
  if (failed(window) || failed(group) || failed(outputPadding))
    return failure();
  size_t n = x->getRank() - 2;
  if (w->getRank() != x->getRank())
    return ctx.emitError("weight must have the input's rank, got ", *x, " and ",
                         *w);
  if (*group < 1 || *group > kiln::kMaxTensorElements)
    return ctx.emitError("attribute 'group' must be in [1, 2^40], got ",
                         *group);
  if (outputPadding->size() != n)
    return ctx.emitError("attribute 'output_padding' must have ", n,
                         " values, got ", outputPadding->size());
  int64_t channels = w->getDimSize(1);
  SmallVector<int64_t> shape = {
      x->getDimSize(0),
      isDyn(channels) ? kDyn : saturatingMul(channels, *group)};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x->getDimSize(i + 2), k = w->getDimSize(i + 2);
    if (isDyn(in) || isDyn(k)) {
      shape.push_back(kDyn);
      continue;
    }
    if (in < 1)
      return ctx.emitError("spatial dim ", i, " of the input is 0");
    if ((*outputPadding)[i] < 0 ||
        (*outputPadding)[i] > kiln::kMaxTensorElements)
      return ctx.emitError("attribute 'output_padding' values must be in "
                           "[0, 2^40], got ",
                           (*outputPadding)[i]);
    // Terms are at most 2^40 each; a saturated sum is rejected as too large
    // by checkResultSizes.
    int64_t grown = saturatingAdd(
        saturatingAdd(saturatingMul(window->strides[i], in - 1),
                      (*outputPadding)[i]),
        saturatingAdd(saturatingMul(k - 1, window->dilations[i]), 1));
    int64_t out = grown == INT64_MAX
                      ? grown
                      : grown - window->pads[i] - window->pads[n + i];
    if (out < 0)
      return ctx.emitError("output spatial dim ", i, " would be negative (",
                           out, ")");
    shape.push_back(out);
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::pool(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<bool> channelsLast = isChannelsLast(ctx);
  if (failed(x) || failed(channelsLast))
    return failure();
  if (*channelsLast)
    x = moveChannels(*x, /*toLast=*/false);
  FailureOr<Window> window = readWindow(ctx, *x, /*hasKernel=*/true);
  FailureOr<int64_t> ceilMode = ctx.i64Attr("ceil_mode");
  if (failed(window) || failed(ceilMode))
    return failure();
  SmallVector<int64_t> shape = {x->getDimSize(0), x->getDimSize(1)};
  for (size_t i = 0; i < window->kernel.size(); ++i) {
    FailureOr<int64_t> out =
        windowOutput(ctx, x->getDimSize(i + 2), window->kernel[i], *window, i,
                     *ceilMode != 0);
    if (failed(out))
      return failure();
    shape.push_back(*out);
  }
  auto result = RankedTensorType::get(shape, x->getElementType());
  results.push_back(*channelsLast ? moveChannels(result, /*toLast=*/true)
                                  : result);
  return success();
}

/// Checks the channel and group structure shared by conv and conv_transpose:
/// x's channels equal `inChannels` (group * w[1] for conv, w[0] for
/// conv_transpose) and group divides the channel counts.
static LogicalResult verifyGroups(Operation *op, bool transposed) {
  InferContext ctx(op);
  auto x = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  auto w = llvm::cast<RankedTensorType>(op->getOperand(1).getType());
  FailureOr<bool> channelsLast = isChannelsLast(ctx);
  if (failed(channelsLast))
    return failure();
  if (*channelsLast) {
    x = moveChannels(x, /*toLast=*/false);
    w = moveChannels(w, /*toLast=*/false);
  }
  FailureOr<int64_t> group = ctx.i64Attr("group");
  if (failed(group) || *group < 1)
    return failure();
  int64_t c = x.getDimSize(1);
  int64_t w0 = w.getDimSize(0), w1 = w.getDimSize(1);
  if (!isDyn(c) && c % *group != 0)
    return ctx.emitError("group ", *group, " does not divide the ", c,
                         " input channels of ", x);
  if (!isDyn(w0) && w0 % *group != 0)
    return ctx.emitError("group ", *group, " does not divide weight dim 0 (",
                         w0, ") of ", w);
  if (!transposed && !isDyn(c) && !isDyn(w1) && c != w1 * *group)
    return ctx.emitError("input channels (", c, ") must equal group (", *group,
                         ") times weight dim 1 (", w1, "): ", x, " and ", w);
  if (transposed && !isDyn(c) && !isDyn(w0) && c != w0)
    return ctx.emitError("input channels (", c, ") must equal weight dim 0 (",
                         w0, "): ", x, " and ", w);
  if (x.getElementType() != w.getElementType())
    return ctx.emitError("input and weight must have the same element type, "
                         "got ",
                         x, " and ", w);
  return success();
}

LogicalResult kiln::verifiers::conv(Operation *op) {
  return verifyGroups(op, /*transposed=*/false);
}

LogicalResult kiln::verifiers::convTranspose(Operation *op) {
  return verifyGroups(op, /*transposed=*/true);
}
