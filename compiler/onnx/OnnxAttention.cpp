//===- OnnxAttention.cpp - ONNX Attention as kiln primitives --------------===//
//
// This file implements the mapping of ONNX Attention (opset 23/24) as a
// composition of kiln ops, following the operator's definition: 3-D inputs
// split into heads, the KV cache (past_key/past_value) concatenated, the
// boolean or additive mask padded to the KV length, the causal mask and the
// non-padding KV lengths added as -inf biases, grouped-query heads repeated,
// scaled Q.K^T, optional softcap, softmax (optionally in another precision)
// and the product with V. The optional outputs (present key/value, the QK
// matmul output in any of its modes) are produced on request. It also maps
// RotaryEmbedding (rotation of the head features by the cos/sin caches).
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

#include "passes/TensorConversion.h"

#include <cmath>
#include <limits>

namespace kiln {
namespace tracer {
namespace {

/// [B, S, H*D] -> [B, H, S, D].
Value splitHeads(NodeContext &nc, Value t, int64_t heads) {
  mlir::RankedTensorType ty = nc.typeOf(t);
  if (!ty)
    return Value();
  if (ty.isDynamicDim(2) || heads <= 0 || ty.getDimSize(2) % heads != 0) {
    nc.setError(strCat("the hidden size of a 3-D input must be static and "
                       "divisible by the number of heads (",
                       heads, ")"));
    return Value();
  }
  Value r = nc.op("kiln.reshape",
                  {t, nc.constI64({0, 0, heads, ty.getDimSize(2) / heads})},
                  {nc.aInt("allowzero", 0)});
  return nc.transpose(r, {0, 2, 1, 3});
}

/// Repeats each of the KV heads `reps` times (interleaved: h0, h0, h1, ...).
Value repeatHeads(NodeContext &nc, Value t, int64_t reps) {
  mlir::RankedTensorType ty = nc.typeOf(t);
  if (!ty)
    return Value();
  if (ty.isDynamicDim(1) || ty.isDynamicDim(3)) {
    nc.setError("grouped-query attention needs static head counts and sizes");
    return Value();
  }
  Value u = nc.unsqueeze(t, {2});
  u = nc.op("kiln.expand", {u, nc.constI64({1, 1, reps, 1, 1})});
  return nc.op(
      "kiln.reshape",
      {u, nc.constI64({0, ty.getDimSize(1) * reps, -1, ty.getDimSize(3)})},
      {nc.aInt("allowzero", 0)});
}

LogicalResult mapAttention(NodeContext &nc) {
  Value q = nc.input(0), k = nc.input(1), v = nc.input(2);
  int64_t rank = nc.rankOf(q);
  if ((rank != 3 && rank != 4) || nc.rankOf(k) != rank || nc.rankOf(v) != rank)
    return nc.fail("Q, K and V must all be 3-D or all 4-D");
  mlir::Type fe = nc.elemOf(q);
  if (rank == 3) {
    int64_t qHeads = nc.attrInt("q_num_heads", 0);
    int64_t kvHeads = nc.attrInt("kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0)
      return nc.fail("q_num_heads and kv_num_heads are required for 3-D "
                     "inputs");
    q = splitHeads(nc, q, qHeads);
    k = splitHeads(nc, k, kvHeads);
    v = splitHeads(nc, v, kvHeads);
  }
  if (nc.hasInput(4))
    k = nc.op("kiln.concat", {nc.cast(nc.input(4), fe), k},
              {nc.aInt("axis", 2)});
  if (nc.hasInput(5))
    v = nc.op("kiln.concat", {nc.cast(nc.input(5), fe), v},
              {nc.aInt("axis", 2)});
  Value presentK = k, presentV = v;
  mlir::RankedTensorType qt = nc.typeOf(q), kt = nc.typeOf(k);
  if (!qt || !kt || !nc.typeOf(v))
    return mlir::failure();

  double scale;
  if (nc.hasAttr("scale")) {
    scale = nc.attrFloat("scale", 1.0f);
  } else {
    if (qt.isDynamicDim(3))
      return nc.fail("the head size must be static when 'scale' is absent");
    scale = 1.0 / std::sqrt(static_cast<double>(qt.getDimSize(3)));
  }
  double rootScale = std::sqrt(scale);
  const double inf = std::numeric_limits<double>::infinity();

  // The additive bias: mask, causal mask, non-padding lengths.
  int64_t qLen = qt.getDimSize(2), kvLen = kt.getDimSize(2);
  Value bias;
  auto addBias = [&](Value b) {
    bias = bias ? nc.op("kiln.add", {bias, b}) : b;
  };
  if (nc.hasInput(3)) {
    Value mask = nc.input(3);
    mlir::RankedTensorType mt = nc.typeOf(mask);
    bool isBool = mt.getElementType().isInteger(1);
    int64_t mr = mt.getRank();
    if (mr < 1 || mt.isDynamicDim(mr - 1) || mlir::ShapedType::isDynamic(kvLen))
      return nc.fail("the mask's last dim and the KV length must be static");
    int64_t padWidth = kvLen - mt.getDimSize(mr - 1);
    if (padWidth > 0) {
      std::vector<int64_t> pads(2 * mr, 0);
      pads[2 * mr - 1] = padWidth;
      Value padValue = isBool ? nc.constFill(0, mt.getElementType())
                              : nc.constFill(-inf, mt.getElementType());
      mask = nc.op("kiln.pad", {mask, nc.constI64(pads), padValue},
                   {nc.aStr("mode", "constant")});
    }
    addBias(isBool ? nc.op("kiln.where",
                           {mask, nc.constFill(0, fe), nc.constFill(-inf, fe)})
                   : nc.cast(mask, fe));
  }
  if (nc.attrInt("is_causal", 0)) {
    if (mlir::ShapedType::isDynamic(qLen) || mlir::ShapedType::isDynamic(kvLen))
      return nc.fail("is_causal needs static sequence lengths");
    int64_t past = 0;
    if (nc.hasInput(4)) {
      mlir::RankedTensorType pt = nc.typeOf(nc.input(4));
      if (pt.isDynamicDim(2))
        return nc.fail("is_causal needs a static past length");
      past = pt.getDimSize(2);
    }
    Tensor causal = Tensor::empty(DType::F64, {qLen, kvLen});
    double *p = causal.data<double>();
    for (int64_t i = 0; i < qLen; ++i)
      for (int64_t j = 0; j < kvLen; ++j)
        p[i * kvLen + j] = j > i + past ? -inf : 0.0;
    std::optional<DType> d = fromMlirElementType(fe);
    if (!d)
      return nc.fail("unsupported dtype");
    addBias(nc.constant(causal.to(*d)));
  }
  if (nc.hasInput(6)) {
    if (mlir::ShapedType::isDynamic(kvLen))
      return nc.fail("nonpad_kv_seqlen needs a static KV length");
    std::vector<int64_t> range(kvLen);
    for (int64_t i = 0; i < kvLen; ++i)
      range[i] = i;
    Value lens =
        nc.unsqueeze(nc.cast(nc.input(6), nc.builder().getI64Type()), {1});
    Value keep = nc.op("kiln.less", {nc.constI64(range), lens});
    keep = nc.unsqueeze(keep, {1, 2});
    addBias(nc.op("kiln.where",
                  {keep, nc.constFill(0, fe), nc.constFill(-inf, fe)}));
  }

  // Grouped-query attention.
  int64_t hq = qt.getDimSize(1), hk = kt.getDimSize(1);
  if (hq != hk) {
    if (mlir::ShapedType::isDynamic(hq) || mlir::ShapedType::isDynamic(hk) ||
        hk <= 0 || hq % hk != 0)
      return nc.fail(strCat("the Q heads (", hq,
                            ") must be a multiple of the KV heads (", hk, ")"));
    k = repeatHeads(nc, k, hq / hk);
    v = repeatHeads(nc, v, hq / hk);
  }

  Value s = nc.constFill(rootScale, fe);
  Value qk = nc.op("kiln.matmul",
                   {nc.op("kiln.mul", {q, s}),
                    nc.transpose(nc.op("kiln.mul", {k, s}), {0, 1, 3, 2})});
  float softcap = nc.attrFloat("softcap", 0.0f);
  if (softcap > 0) {
    Value c = nc.constFill(softcap, fe);
    qk = nc.op("kiln.mul",
               {nc.op("kiln.tanh", {nc.op("kiln.div", {qk, c})}), c});
  }
  Value qkOut = qk;
  Value withBias = bias ? nc.op("kiln.add", {qk, bias}) : qk;
  int64_t mode = nc.attrInt("qk_matmul_output_mode", 0);
  if (mode == 2)
    qkOut = withBias;
  Value logits = withBias;
  if (nc.hasAttr("softmax_precision")) {
    int32_t t = static_cast<int32_t>(nc.attrInt("softmax_precision", 1));
    std::optional<DType> d = dtypeFromOnnx(t);
    if (!d)
      return nc.fail("unsupported softmax_precision " + onnxTypeName(t));
    logits = nc.cast(logits, toMlirElementType(nc.ctx(), *d));
  }
  Value probs = nc.op("kiln.softmax", {logits}, {nc.aInt("axis", 3)});
  if (mode == 3)
    qkOut = probs;
  Value y = nc.op("kiln.matmul", {nc.cast(probs, fe), v});
  if (rank == 3) {
    y = nc.transpose(y, {0, 2, 1, 3});
    y = nc.op("kiln.reshape", {y, nc.constI64({0, 0, -1})},
              {nc.aInt("allowzero", 0)});
  }
  if (failed(nc.setOutput(0, y)))
    return mlir::failure();
  if (nc.wantsOutput(1) && failed(nc.setOutput(1, presentK)))
    return mlir::failure();
  if (nc.wantsOutput(2) && failed(nc.setOutput(2, presentV)))
    return mlir::failure();
  if (nc.wantsOutput(3))
    return nc.setOutput(3, nc.cast(qkOut, fe));
  return mlir::success();
}

/// x[..., start:end:step] along the last axis of a 4-D value.
Value sliceLast(NodeContext &nc, Value x, int64_t start, int64_t end,
                int64_t step = 1) {
  return nc.op("kiln.slice", {x, nc.constI64({start}), nc.constI64({end}),
                              nc.constI64({3}), nc.constI64({step})});
}

LogicalResult mapRotaryEmbedding(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  if (rank != 3 && rank != 4)
    return nc.fail("the input must be 3-D or 4-D");
  // Work on [batch, seq, heads, head_size].
  if (rank == 4) {
    x = nc.transpose(x, {0, 2, 1, 3});
  } else {
    int64_t heads = nc.attrInt("num_heads", 0);
    if (heads <= 0)
      return nc.fail("attribute 'num_heads' is required for 3-D inputs");
    x = splitHeads(nc, x, heads);
    x = nc.transpose(x, {0, 2, 1, 3});
  }
  mlir::RankedTensorType t = nc.typeOf(x);
  if (!t)
    return mlir::failure();
  if (t.isDynamicDim(3))
    return nc.fail("the head size must be static");
  int64_t headSize = t.getDimSize(3);
  int64_t rd = nc.attrInt("rotary_embedding_dim", 0);
  if (rd <= 0)
    rd = headSize;
  if (rd > headSize || rd % 2 != 0)
    return nc.fail("rotary_embedding_dim must be even and at most the head "
                   "size");
  int64_t half = rd / 2;
  mlir::Type fe = nc.elemOf(x);
  Value cosC = nc.cast(nc.input(1), fe), sinC = nc.cast(nc.input(2), fe);
  if (nc.hasInput(3)) {
    Value pos = nc.input(3);
    cosC = nc.op("kiln.gather", {cosC, pos}, {nc.aInt("axis", 0)});
    sinC = nc.op("kiln.gather", {sinC, pos}, {nc.aInt("axis", 0)});
  }
  cosC = nc.unsqueeze(cosC, {2});
  sinC = nc.unsqueeze(sinC, {2});
  Value rot = rd == headSize ? x : sliceLast(nc, x, 0, rd);
  bool interleaved = nc.attrInt("interleaved", 0) != 0;
  Value x1 =
      interleaved ? sliceLast(nc, rot, 0, rd, 2) : sliceLast(nc, rot, 0, half);
  Value x2 =
      interleaved ? sliceLast(nc, rot, 1, rd, 2) : sliceLast(nc, rot, half, rd);
  Value real = nc.op("kiln.sub", {nc.op("kiln.mul", {cosC, x1}),
                                  nc.op("kiln.mul", {sinC, x2})});
  Value imag = nc.op("kiln.add", {nc.op("kiln.mul", {sinC, x1}),
                                  nc.op("kiln.mul", {cosC, x2})});
  if (interleaved) {
    rot =
        nc.op("kiln.concat", {nc.unsqueeze(real, {4}), nc.unsqueeze(imag, {4})},
              {nc.aInt("axis", 4)});
    rot = nc.op("kiln.reshape", {rot, nc.constI64({0, 0, 0, rd})},
                {nc.aInt("allowzero", 0)});
  } else {
    rot = nc.op("kiln.concat", {real, imag}, {nc.aInt("axis", 3)});
  }
  Value y = rd == headSize
                ? rot
                : nc.op("kiln.concat", {rot, sliceLast(nc, x, rd, headSize)},
                        {nc.aInt("axis", 3)});
  if (rank == 4)
    return nc.setOutput(0, nc.transpose(y, {0, 2, 1, 3}));
  return nc.setOutput(0, nc.op("kiln.reshape", {y, nc.constI64({0, 0, -1})},
                               {nc.aInt("allowzero", 0)}));
}

} // namespace

void addAttentionMappings(MappingRegistry &r) {
  addMapping(r, "Attention", mapAttention);
  addMapping(r, "RotaryEmbedding", mapRotaryEmbedding);
}

} // namespace tracer
} // namespace kiln
