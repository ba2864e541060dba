//===- GradientRulesNN.cpp - Gradients of linear algebra and norms --------===//
//
// This file implements the gradient rules of matmul (NumPy semantics: 1-D
// operands, batch broadcasting), conv and conv_transpose (each one's input
// gradient is the other op; weight gradients are correlations of the input
// with the output gradient, one per group), softmax and log_softmax,
// attention (kiln.attention_grad, flash attention's backward), layer,
// RMS and batch normalization (inference form: mean and variance are
// operands), and the reductions.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientRules.h"
#include "ir/KilnOps.h"

using namespace mlir;

namespace kiln::grad {

namespace {

/// `x` with its last two dims swapped.
Value swapLast(GradientBuilder &gb, Value x) {
  int64_t rank = GradientBuilder::typeOf(x).getRank();
  SmallVector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i)
    perm[i] = i;
  std::swap(perm[rank - 1], perm[rank - 2]);
  return gb.transpose(x, perm);
}

/// Axes [from, rank).
SmallVector<int64_t> trailingAxes(int64_t from, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t d = from; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

/// The number of elements over `axes` of `shape`.
int64_t countOver(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  int64_t n = 1;
  for (int64_t a : axes)
    n *= shape[a];
  return n;
}

/// The reduction axes of a reduce_* op, normalized; empty with
/// noop_with_empty_axes means none.
FailureOr<SmallVector<int64_t>> reductionAxes(GradientBuilder &gb) {
  FailureOr<SmallVector<int64_t>> axes = gb.constantIndices(gb.operand(1));
  if (failed(axes))
    return failure();
  int64_t rank = GradientBuilder::typeOf(gb.operand(0)).getRank();
  auto noop = gb.forward()->getAttrOfType<IntegerAttr>("noop_with_empty_axes");
  if (axes->empty() && !(noop && noop.getInt()))
    return trailingAxes(0, rank);
  SmallVector<int64_t> normalized;
  for (int64_t a : *axes)
    normalized.push_back(a < 0 ? a + rank : a);
  llvm::sort(normalized);
  return normalized;
}

/// `g` (the result gradient of a reduction over `axes`) broadcast back to
/// the operand's shape.
Value unreduce(GradientBuilder &gb, Value g, ArrayRef<int64_t> axes) {
  ArrayRef<int64_t> shape = GradientBuilder::typeOf(gb.operand(0)).getShape();
  SmallVector<int64_t> kept(shape);
  for (int64_t a : axes)
    kept[a] = 1;
  return gb.expand(gb.reshape(g, kept), shape);
}

} // namespace

KILN_GRADIENT_RULE(matmul) {
  Value a = gb.operand(0), b = gb.operand(1);
  RankedTensorType aType = GradientBuilder::typeOf(a),
                   bType = GradientBuilder::typeOf(b);
  // Promote 1-D operands to matrices, and the gradient with them.
  Value a2 = a, b2 = b;
  if (aType.getRank() == 1)
    a2 = gb.reshape(a, {1, aType.getDimSize(0)});
  if (bType.getRank() == 1)
    b2 = gb.reshape(b, {bType.getDimSize(0), 1});
  ArrayRef<int64_t> gShape = GradientBuilder::typeOf(g[0]).getShape();
  SmallVector<int64_t> g2Shape(gShape);
  if (aType.getRank() == 1)
    g2Shape.insert(g2Shape.end() - (bType.getRank() == 1 ? 0 : 1), 1);
  if (bType.getRank() == 1)
    g2Shape.push_back(1);
  Value g2 = gb.reshape(g[0], g2Shape);
  RankedTensorType a2Type = GradientBuilder::typeOf(a2),
                   b2Type = GradientBuilder::typeOf(b2);
  if (gb.needs(0)) {
    Value ga = gb.create("kiln.matmul", {g2, swapLast(gb, b2)});
    out[0] = gb.reshape(gb.sumToShape(ga, a2Type), aType.getShape());
  }
  if (gb.needs(1)) {
    Value gbv;
    if (b2Type.getRank() == 2 && a2Type.getRank() > 2) {
      // A weight times a batch of rows: one GEMM over all rows.
      int64_t k = a2Type.getShape().back(), n = b2Type.getShape().back();
      int64_t m = a2Type.getNumElements() / k;
      Value rows = gb.reshape(a2, {m, k});
      Value gRows = gb.reshape(g2, {m, n});
      gbv = gb.create("kiln.matmul", {swapLast(gb, rows), gRows});
    } else {
      gbv = gb.sumToShape(gb.create("kiln.matmul", {swapLast(gb, a2), g2}),
                          b2Type);
    }
    out[1] = gb.reshape(gbv, bType.getShape());
  }
  return gb.status();
}

namespace {

/// The attributes of a convolution (conv, conv_transpose).
struct ConvAttrs {
  ArrayRef<int64_t> strides, dilations, pads;
  int64_t group = 1;
  explicit ConvAttrs(Operation *op)
      : strides(op->getAttrOfType<DenseI64ArrayAttr>("strides").asArrayRef()),
        dilations(
            op->getAttrOfType<DenseI64ArrayAttr>("dilations").asArrayRef()),
        pads(op->getAttrOfType<DenseI64ArrayAttr>("pads").asArrayRef()),
        group(op->getAttrOfType<IntegerAttr>("group").getInt()) {}
};

/// r[o, c, k] = sum_{n, p} out[n, o, p] in[n, c, p * s + k * d - pad] for
/// in [N, C, H...] and out [N, O, P...], k over `kernel`: a convolution of
/// `in` (channels and batch swapped) by `out` (likewise), stride and
/// dilation exchanged, cut to the kernel's size. The weight gradient of a
/// convolution (in = x, out = g) and of a transposed one (in = g, out = x).
Value correlate(GradientBuilder &gb, Value in, Value out, const ConvAttrs &c,
                ArrayRef<int64_t> kernel) {
  size_t spatial = kernel.size();
  SmallVector<int64_t> swap01 = {1, 0};
  for (size_t i = 0; i < spatial; ++i)
    swap01.push_back(2 + i);
  OpBuilder b(gb.forward()->getContext());
  Value full = gb.create(
      "kiln.conv", {gb.transpose(in, swap01), gb.transpose(out, swap01)},
      {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(c.dilations)),
       b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(c.strides)),
       b.getNamedAttr("pads", b.getDenseI64ArrayAttr(c.pads)),
       b.getNamedAttr("group", b.getI64IntegerAttr(1))});
  if (!full)
    return {};
  RankedTensorType fullType = GradientBuilder::typeOf(full);
  SmallVector<int64_t> starts, ends, axes, steps;
  for (size_t i = 0; i < spatial; ++i)
    if (fullType.getDimSize(2 + i) != kernel[i]) {
      starts.push_back(0);
      ends.push_back(kernel[i]);
      axes.push_back(2 + i);
      steps.push_back(1);
    }
  if (!axes.empty())
    full = gb.create("kiln.slice", {full, gb.indices(starts), gb.indices(ends),
                                    gb.indices(axes), gb.indices(steps)});
  return gb.transpose(full, swap01);
}

/// Channels [from, from + n) of `v` (axis 1).
Value channels(GradientBuilder &gb, Value v, int64_t from, int64_t n) {
  return gb.create("kiln.slice", {v, gb.indices({from}),
                                  gb.indices({from + n}), gb.indices({1}),
                                  gb.indices({1})});
}

/// correlate() per group: `in`'s and `out`'s channels in `group` equal
/// parts, the results concatenated along dim 0.
Value correlateGroups(GradientBuilder &gb, Value in, Value out,
                      const ConvAttrs &c, ArrayRef<int64_t> kernel) {
  if (c.group == 1)
    return correlate(gb, in, out, c, kernel);
  int64_t inGroup = GradientBuilder::typeOf(in).getDimSize(1) / c.group;
  int64_t outGroup = GradientBuilder::typeOf(out).getDimSize(1) / c.group;
  SmallVector<Value> parts;
  for (int64_t j = 0; j < c.group; ++j) {
    Value outPart = channels(gb, out, j * outGroup, outGroup);
    Value inPart = channels(gb, in, j * inGroup, inGroup);
    parts.push_back(correlate(gb, inPart, outPart, c, kernel));
  }
  OpBuilder b(gb.forward()->getContext());
  return gb.create("kiln.concat", parts,
                   {b.getNamedAttr("axis", b.getI64IntegerAttr(0))});
}

/// Grouped weight gradients are one correlation per group: up to this many.
constexpr int64_t kMaxGradientGroups = 64;

} // namespace

KILN_GRADIENT_RULE(conv) {
  Value x = gb.operand(0), w = gb.operand(1);
  RankedTensorType xType = GradientBuilder::typeOf(x),
                   wType = GradientBuilder::typeOf(w),
                   gType = GradientBuilder::typeOf(g[0]);
  ConvAttrs c(gb.forward());
  size_t spatial = c.strides.size();
  OpBuilder b(gb.forward()->getContext());
  if (gb.needs(0)) {
    // conv_transpose of g by w gives x's shape with this output padding.
    SmallVector<int64_t> outputPadding;
    for (size_t i = 0; i < spatial; ++i) {
      int64_t in = gType.getDimSize(2 + i), k = wType.getDimSize(2 + i);
      int64_t size = c.strides[i] * (in - 1) + (k - 1) * c.dilations[i] + 1 -
                     c.pads[i] - c.pads[spatial + i];
      outputPadding.push_back(xType.getDimSize(2 + i) - size);
    }
    out[0] = gb.create(
        "kiln.conv_transpose", {g[0], w},
        {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(c.strides)),
         b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(c.dilations)),
         b.getNamedAttr("pads", b.getDenseI64ArrayAttr(c.pads)),
         b.getNamedAttr("output_padding",
                        b.getDenseI64ArrayAttr(outputPadding)),
         b.getNamedAttr("group", b.getI64IntegerAttr(c.group))});
  }
  if (gb.needs(1)) {
    if (c.group > kMaxGradientGroups)
      return gb.unsupported("the weight gradient of a convolution with more "
                            "than 64 groups is not implemented yet");
    out[1] = correlateGroups(gb, x, g[0], c, wType.getShape().drop_front(2));
  }
  return gb.status();
}

KILN_GRADIENT_RULE(convTranspose) {
  // The adjoint of a convolution: x's gradient is the convolution of g by
  // w; w's ([C, O / group, K]) the correlation of g with x.
  Value x = gb.operand(0), w = gb.operand(1);
  RankedTensorType wType = GradientBuilder::typeOf(w);
  ConvAttrs c(gb.forward());
  OpBuilder b(gb.forward()->getContext());
  if (gb.needs(0))
    out[0] = gb.create(
        "kiln.conv", {g[0], w},
        {b.getNamedAttr("strides", b.getDenseI64ArrayAttr(c.strides)),
         b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(c.dilations)),
         b.getNamedAttr("pads", b.getDenseI64ArrayAttr(c.pads)),
         b.getNamedAttr("group", b.getI64IntegerAttr(c.group))});
  if (out[0] && out[0].getType() != x.getType())
    return gb.unsupported("the input gradient of this transposed "
                          "convolution (output padding) is not a plain "
                          "convolution");
  if (gb.needs(1)) {
    if (c.group > kMaxGradientGroups)
      return gb.unsupported("the weight gradient of a transposed convolution "
                            "with more than 64 groups is not implemented yet");
    out[1] = correlateGroups(gb, g[0], x, c, wType.getShape().drop_front(2));
  }
  return gb.status();
}

KILN_GRADIENT_RULE(softmax) {
  // y (g - sum(g y))
  Value y = gb.result();
  int64_t axis = gb.forward()->getAttrOfType<IntegerAttr>("axis").getInt();
  Value dot = gb.reduceSum(gb.mul(g[0], y), {axis}, /*keepdims=*/true);
  out[0] = gb.mul(y, gb.sub(g[0], dot));
  return gb.status();
}

/// The attention rules' shared part: `delta` = each query row's
/// sum(grad * output) in lse's type, summed over the output's `axis`.
static Value attentionDelta(GradientBuilder &gb, Value grad, int64_t axis) {
  Type rowType = GradientBuilder::typeOf(gb.result(1)).getElementType();
  Value g = gb.castTo(grad, rowType);
  Value o = gb.castTo(gb.result(0), rowType);
  return gb.reduceSum(gb.mul(g, o), {axis}, /*keepdims=*/false);
}

KILN_GRADIENT_RULE(attention) {
  // Flash attention's backward: kiln.attention_grad rebuilds the
  // probabilities from q, k and lse.
  if (g[1])
    return gb.unsupported("the lse result reaches the loss; only the "
                          "attention result is differentiated");
  if (!g[0])
    return gb.status();
  Value delta = attentionDelta(gb, g[0], 3);
  SmallVector<Value> grads = gb.createMulti(
      "kiln.attention_grad",
      {gb.operand(0), gb.operand(1), gb.operand(2), g[0], gb.result(1), delta},
      gb.forward()->getAttrDictionary().getValue());
  for (unsigned i = 0; i < 3 && grads.size() == 3; ++i)
    if (gb.needs(i))
      out[i] = grads[i];
  return gb.status();
}

KILN_GRADIENT_RULE(packedAttention) {
  if (g[1])
    return gb.unsupported("the lse result reaches the loss; only the "
                          "attention result is differentiated");
  if (!g[0] || !gb.needs(0))
    return gb.status();
  // With layout = "seq_first" (qkv [T, B, 3*H*D], the result [T, B, H, D])
  // the backward kernel, which reads the batch-first layout, gets qkv and
  // the gradient transposed to it, and its result is transposed back.
  auto layout = gb.forward()->getAttrOfType<StringAttr>("layout");
  bool seqFirst = layout && layout.getValue() == "seq_first";
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : gb.forward()->getAttrDictionary())
    if (attr.getName() != "layout")
      attrs.push_back(attr);
  // The output is [B, T, H, D] ([T, B, H, D]): delta [B, T, H] ([T, B,
  // H]), transposed to lse's [B, H, T].
  Value delta = gb.transpose(attentionDelta(gb, g[0], 3),
                             seqFirst ? ArrayRef<int64_t>{1, 2, 0}
                                      : ArrayRef<int64_t>{0, 2, 1});
  Value qkv = gb.operand(0), grad = g[0];
  if (seqFirst) {
    qkv = gb.transpose(qkv, {1, 0, 2});
    grad = gb.transpose(grad, {1, 0, 2, 3});
  }
  Value dqkv = gb.create("kiln.packed_attention_grad",
                         {qkv, grad, gb.result(1), delta}, attrs);
  out[0] = seqFirst && dqkv ? gb.transpose(dqkv, {1, 0, 2}) : dqkv;
  return gb.status();
}

KILN_GRADIENT_RULE(logSoftmax) {
  // g - exp(y) sum(g)
  Value y = gb.result();
  int64_t axis = gb.forward()->getAttrOfType<IntegerAttr>("axis").getInt();
  Value sum = gb.reduceSum(g[0], {axis}, /*keepdims=*/true);
  out[0] = gb.sub(g[0], gb.mul(gb.unary("kiln.exp", y), sum));
  return gb.status();
}

KILN_GRADIENT_RULE(layerNorm) {
  if (g[1] || g[2])
    return gb.unsupported("the mean and inv_std_dev results reach the "
                          "loss; only the normalized result is "
                          "differentiated");
  Value x = gb.operand(0), scale = gb.operand(1);
  RankedTensorType xType = GradientBuilder::typeOf(x);
  int64_t axis = gb.forward()->getAttrOfType<IntegerAttr>("axis").getInt();
  SmallVector<int64_t> axes = trailingAxes(axis, xType.getRank());
  Type et = xType.getElementType();
  Value mean = gb.castTo(gb.result(1), et),
        invStd = gb.castTo(gb.result(2), et);
  Value xhat = gb.mul(gb.sub(x, mean), invStd);
  if (gb.needs(0)) {
    // inv_std (gxhat - mean(gxhat) - xhat mean(gxhat xhat))
    Value gxhat = gb.mul(g[0], scale);
    Value n = gb.scalar(1.0 / countOver(xType.getShape(), axes), x);
    Value meanG = gb.mul(gb.reduceSum(gxhat, axes, true), n);
    Value meanGX = gb.mul(gb.reduceSum(gb.mul(gxhat, xhat), axes, true), n);
    Value projected = gb.mul(xhat, meanGX);
    out[0] = gb.mul(invStd, gb.sub(gb.sub(gxhat, meanG), projected));
  }
  if (gb.needs(1))
    out[1] = gb.toOperand(gb.mul(g[0], xhat), 1);
  if (gb.needs(2))
    out[2] = gb.toOperand(g[0], 2);
  return gb.status();
}

KILN_GRADIENT_RULE(rmsNorm) {
  Value x = gb.operand(0), scale = gb.operand(1);
  RankedTensorType xType = GradientBuilder::typeOf(x);
  Operation *op = gb.forward();
  int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
  double eps = op->getAttrOfType<FloatAttr>("epsilon").getValueAsDouble();
  SmallVector<int64_t> axes = trailingAxes(axis, xType.getRank());
  Value n = gb.scalar(1.0 / countOver(xType.getShape(), axes), x);
  Value ms = gb.mul(gb.reduceSum(gb.mul(x, x), axes, true), n);
  Value r = gb.unary("kiln.reciprocal",
                     gb.unary("kiln.sqrt", gb.add(ms, gb.scalar(eps, x))));
  Value xn = gb.mul(x, r);
  if (gb.needs(0)) {
    // r (gxn - xn mean(gxn xn))
    Value gxn = gb.mul(g[0], scale);
    Value m = gb.mul(gb.reduceSum(gb.mul(gxn, xn), axes, true), n);
    out[0] = gb.mul(r, gb.sub(gxn, gb.mul(xn, m)));
  }
  if (gb.needs(1))
    out[1] = gb.toOperand(gb.mul(g[0], xn), 1);
  return gb.status();
}

KILN_GRADIENT_RULE(batchNorm) {
  // y = (x - mean) inv scale + bias, inv = 1 / sqrt(var + eps), per
  // channel (dim 1); mean and var are operands (inference form).
  Value x = gb.operand(0), scale = gb.operand(1), mean = gb.operand(3),
        var = gb.operand(4);
  RankedTensorType xType = GradientBuilder::typeOf(x);
  double eps =
      gb.forward()->getAttrOfType<FloatAttr>("epsilon").getValueAsDouble();
  SmallVector<int64_t> channelShape(xType.getRank(), 1);
  channelShape[1] = xType.getDimSize(1);
  auto perChannel = [&](Value v) { return gb.reshape(v, channelShape); };
  SmallVector<int64_t> others = {0};
  for (int64_t d = 2; d < xType.getRank(); ++d)
    others.push_back(d);
  auto sumOthers = [&](Value v) {
    return gb.reshape(gb.reduceSum(v, others, false), {xType.getDimSize(1)});
  };
  Value inv = gb.unary("kiln.reciprocal",
                       gb.unary("kiln.sqrt", gb.add(perChannel(var),
                                                    gb.scalar(eps, var))));
  Value centered = gb.sub(x, perChannel(mean));
  Value gs = gb.mul(g[0], perChannel(scale));
  if (gb.needs(0))
    out[0] = gb.mul(gs, inv);
  if (gb.needs(1))
    out[1] = sumOthers(gb.mul(g[0], gb.mul(centered, inv)));
  if (gb.needs(2))
    out[2] = sumOthers(g[0]);
  if (gb.needs(3))
    out[3] = gb.neg(sumOthers(gb.mul(gs, inv)));
  if (gb.needs(4)) // d inv / d var = -inv^3 / 2
  {
    Value inv3 = gb.mul(inv, gb.mul(inv, inv));
    Value dInv = gb.mul(gb.scalar(-0.5, x), inv3);
    out[4] = sumOthers(gb.mul(gb.mul(gs, centered), dInv));
  }
  return gb.status();
}

KILN_GRADIENT_RULE(reduceSumMean) {
  FailureOr<SmallVector<int64_t>> axes = reductionAxes(gb);
  if (failed(axes))
    return failure();
  Value gx = unreduce(gb, g[0], *axes);
  if (isa<ReduceMeanOp>(gb.forward())) {
    ArrayRef<int64_t> shape =
        GradientBuilder::typeOf(gb.operand(0)).getShape();
    gx = gb.mul(gx, gb.scalar(1.0 / countOver(shape, *axes), gx));
  }
  out[0] = gx;
  return gb.status();
}

KILN_GRADIENT_RULE(reduceMaxMin) {
  // The gradient is shared by the elements equal to the extremum.
  FailureOr<SmallVector<int64_t>> axes = reductionAxes(gb);
  if (failed(axes))
    return failure();
  Value x = gb.operand(0);
  Value y = unreduce(gb, gb.result(), *axes);
  Type et = GradientBuilder::typeOf(x).getElementType();
  Value hit = gb.castTo(gb.compare("kiln.equal", x, y), et);
  Value count = unreduce(gb, gb.reduceSum(hit, *axes, false), *axes);
  out[0] = gb.div(gb.mul(unreduce(gb, g[0], *axes), hit), count);
  return gb.status();
}

} // namespace kiln::grad
