//===- GradientRulesPool.cpp - Gradients of pooling -----------------------===//
//
// This file implements the gradient rules of avg_pool and max_pool:
//
//   * avg_pool: g spread evenly over each window — a transposed depthwise
//     convolution of g by a kernel of 1 / window size (any strides and pads
//     counted in the average; no dilation or ceil mode);
//   * max_pool with windows that tile the input (strides equal to the
//     window, no pads or dilation, sizes divisible): g goes to the elements
//     equal to their window's maximum (shared evenly on ties), by viewing x
//     as [N, C, H / kh, kh, W / kw, kw].
//
// Other pooling configurations are reported as not differentiated yet.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientRules.h"
#include "ir/KilnOps.h"

using namespace mlir;

namespace kiln::grad {

namespace {
ArrayRef<int64_t> ints(Operation *op, StringRef name) {
  return op->getAttrOfType<DenseI64ArrayAttr>(name).asArrayRef();
}
bool allEqual(ArrayRef<int64_t> v, int64_t x) {
  return llvm::all_of(v, [&](int64_t e) { return e == x; });
}
} // namespace

KILN_GRADIENT_RULE(avgPool) {
  Operation *op = gb.forward();
  ArrayRef<int64_t> kernel = ints(op, "kernel_shape"),
                    strides = ints(op, "strides"), pads = ints(op, "pads");
  bool padded = !allEqual(pads, 0);
  if (!allEqual(ints(op, "dilations"), 1) ||
      op->getAttrOfType<IntegerAttr>("ceil_mode").getInt() != 0 ||
      (padded &&
       op->getAttrOfType<IntegerAttr>("count_include_pad").getInt() == 0))
    return gb.unsupported("average pooling with dilations, ceil_mode or "
                          "padding left out of the count is not "
                          "differentiated yet");
  RankedTensorType xType = GradientBuilder::typeOf(gb.operand(0)),
                   gType = GradientBuilder::typeOf(g[0]);
  int64_t channels = xType.getDimSize(1), window = 1;
  SmallVector<int64_t> weightShape = {channels, 1};
  for (int64_t k : kernel) {
    weightShape.push_back(k);
    window *= k;
  }
  size_t spatial = kernel.size();
  SmallVector<int64_t> outputPadding, dilations(spatial, 1);
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = strides[i] * (gType.getDimSize(2 + i) - 1) + kernel[i] -
                   pads[i] - pads[spatial + i];
    outputPadding.push_back(xType.getDimSize(2 + i) - size);
  }
  Value weight = gb.expand(
      gb.reshape(gb.scalar(1.0 / window, g[0]),
                 SmallVector<int64_t>(weightShape.size(), 1)),
      weightShape);
  OpBuilder b(op->getContext());
  out[0] = gb.create(
      "kiln.conv_transpose", {g[0], weight},
      {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides)),
       b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(dilations)),
       b.getNamedAttr("pads", b.getDenseI64ArrayAttr(pads)),
       b.getNamedAttr("output_padding", b.getDenseI64ArrayAttr(outputPadding)),
       b.getNamedAttr("group", b.getI64IntegerAttr(channels))});
  return gb.status();
}

KILN_GRADIENT_RULE(maxPool) {
  Operation *op = gb.forward();
  ArrayRef<int64_t> kernel = ints(op, "kernel_shape");
  RankedTensorType xType = GradientBuilder::typeOf(gb.operand(0));
  ArrayRef<int64_t> shape = xType.getShape();
  bool tiles = ints(op, "strides") == kernel &&
               allEqual(ints(op, "dilations"), 1) &&
               allEqual(ints(op, "pads"), 0);
  for (size_t i = 0; tiles && i < kernel.size(); ++i)
    tiles = shape[2 + i] % kernel[i] == 0;
  if (!tiles)
    return gb.unsupported("max pooling is differentiated only when its "
                          "windows tile the input (strides equal to the "
                          "window, no pads or dilation)");
  // x as [N, C, H / kh, kh, ...], y and g as [N, C, H / kh, 1, ...].
  SmallVector<int64_t> split = {shape[0], shape[1]}, pooled = split, axes;
  for (size_t i = 0; i < kernel.size(); ++i) {
    split.push_back(shape[2 + i] / kernel[i]);
    split.push_back(kernel[i]);
    pooled.push_back(shape[2 + i] / kernel[i]);
    pooled.push_back(1);
    axes.push_back(static_cast<int64_t>(split.size()) - 1);
  }
  Value x = gb.reshape(gb.operand(0), split);
  Value y = gb.reshape(gb.result(), pooled);
  Value hit = gb.castTo(gb.compare("kiln.equal", x, y), xType.getElementType());
  Value count = gb.reduceSum(hit, axes, /*keepdims=*/true);
  Value share = gb.div(gb.mul(gb.reshape(g[0], pooled), hit), count);
  out[0] = gb.reshape(share, shape);
  return gb.status();
}

} // namespace kiln::grad
