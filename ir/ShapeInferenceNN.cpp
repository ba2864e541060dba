//===- ShapeInferenceNN.cpp - Linear algebra and NN op result types -------===//
//
// This file implements result-type inference and verification for matmul,
// attention, einsum, normalization, reductions, arg-reductions, scans, top-k,
// the recurrent ops and det (convolution and pooling:
// ShapeInferenceConv.cpp).
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeInference.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace kiln::infer;

static constexpr int64_t kDyn = ShapedType::kDynamic;

static bool isDyn(int64_t dim) { return ShapedType::isDynamic(dim); }

/// Merges two sizes of one dim that must agree: the static one wins.
static std::optional<int64_t> mergeDim(int64_t a, int64_t b) {
  if (isDyn(a))
    return b;
  if (isDyn(b) || a == b)
    return a;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::matmul(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> a = ctx.tensor(0), b = ctx.tensor(1);
  if (failed(a) || failed(b))
    return failure();
  if (a->getElementType() != b->getElementType())
    return ctx.emitError("operands must have the same element type, got ", *a,
                         " and ", *b);
  if (a->getRank() == 0 || b->getRank() == 0)
    return ctx.emitError("operands must have rank >= 1, got ", *a, " and ", *b);
  SmallVector<int64_t> sa(a->getShape()), sb(b->getShape());
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA)
    sa.insert(sa.begin(), 1);
  if (vecB)
    sb.push_back(1);
  int64_t ka = sa.back(), kb = sb[sb.size() - 2];
  if (!mergeDim(ka, kb))
    return ctx.emitError(
        "contracting dims differ: ", formatShape(a->getShape()), " and ",
        formatShape(b->getShape()));
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
      ArrayRef<int64_t>(sa).drop_back(2), ArrayRef<int64_t>(sb).drop_back(2));
  if (failed(batch))
    return ctx.emitError(
        "batch dims do not broadcast: ", formatShape(a->getShape()), " and ",
        formatShape(b->getShape()));
  SmallVector<int64_t> shape = *batch;
  if (!vecA)
    shape.push_back(sa[sa.size() - 2]);
  if (!vecB)
    shape.push_back(sb.back());
  results.push_back(RankedTensorType::get(shape, a->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// The statistic type of an attention over `element` (lse, delta): f64 for
/// f64, f32 otherwise.
static Type attentionRowType(Type element) {
  return element.isF64() ? Type(Float64Type::get(element.getContext()))
                         : Type(Float32Type::get(element.getContext()));
}

/// The result types of kiln.attention over q, k and v (operands 0-2):
/// [B, H, Tq, Dv] and lse [B, H, Tq].
static LogicalResult inferAttention(const InferContext &ctx, Results &results) {
  FailureOr<RankedTensorType> q = ctx.tensor(0), k = ctx.tensor(1),
                              v = ctx.tensor(2);
  FailureOr<int64_t> causal = ctx.i64Attr("causal");
  if (failed(q) || failed(k) || failed(v) || failed(causal) ||
      failed(ctx.f32Attr("scale")))
    return failure();
  if (q->getRank() != 4 || k->getRank() != 4 || v->getRank() != 4)
    return ctx.emitError("q, k and v must be B x H x T x D, got ", *q, ", ",
                         *k, " and ", *v);
  if (q->getElementType() != k->getElementType() ||
      q->getElementType() != v->getElementType())
    return ctx.emitError("q, k and v must have one element type, got ", *q,
                         ", ", *k, " and ", *v);
  auto same = [](int64_t a, int64_t b) {
    return isDyn(a) || isDyn(b) || a == b;
  };
  if (!same(q->getDimSize(0), k->getDimSize(0)) ||
      !same(q->getDimSize(1), k->getDimSize(1)) ||
      !same(k->getDimSize(0), v->getDimSize(0)) ||
      !same(k->getDimSize(1), v->getDimSize(1)) ||
      !same(q->getDimSize(3), k->getDimSize(3)) ||
      !same(k->getDimSize(2), v->getDimSize(2)))
    return ctx.emitError("q, k and v disagree on B, H, Tk or D: ", *q, ", ",
                         *k, " and ", *v);
  if (*causal != 0 && *causal != 1)
    return ctx.emitError("attribute 'causal' must be 0 or 1, got ", *causal);
  results.push_back(RankedTensorType::get(
      {q->getDimSize(0), q->getDimSize(1), q->getDimSize(2), v->getDimSize(3)},
      q->getElementType()));
  results.push_back(RankedTensorType::get(
      {q->getDimSize(0), q->getDimSize(1), q->getDimSize(2)},
      attentionRowType(q->getElementType())));
  return success();
}

/// Checks the operands `index` (grad: `output`'s type) and `index` + 1,
/// `index` + 2 (lse and delta: `rows`' type) of an attention gradient.
static LogicalResult checkAttentionGradOperands(const InferContext &ctx,
                                                unsigned index,
                                                RankedTensorType output,
                                                RankedTensorType rows) {
  FailureOr<RankedTensorType> grad = ctx.tensor(index),
                              lse = ctx.tensor(index + 1),
                              delta = ctx.tensor(index + 2);
  if (failed(grad) || failed(lse) || failed(delta))
    return failure();
  if (!areCompatibleResultTypes(TypeRange{*grad}, TypeRange{output}))
    return ctx.emitError("'grad' must have the attention result's type ",
                         output, ", got ", *grad);
  for (auto [row, what] :
       {std::make_pair(*lse, "lse"), std::make_pair(*delta, "delta")})
    if (!areCompatibleResultTypes(TypeRange{row}, TypeRange{rows}))
      return ctx.emitError("'", what, "' must be B x H x Tq ", rows, ", got ",
                           row);
  return success();
}

LogicalResult kiln::infer::attention(const InferContext &ctx,
                                     Results &results) {
  if (failed(ctx.expectOperands(3)))
    return failure();
  return inferAttention(ctx, results);
}

LogicalResult kiln::infer::attentionGrad(const InferContext &ctx,
                                         Results &results) {
  if (failed(ctx.expectOperands(6)))
    return failure();
  SmallVector<Type, 2> forward;
  if (failed(inferAttention(ctx, forward)) ||
      failed(checkAttentionGradOperands(ctx, 3,
                                        cast<RankedTensorType>(forward[0]),
                                        cast<RankedTensorType>(forward[1]))))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    results.push_back(*ctx.tensor(i));
  return success();
}

/// The result types of kiln.packed_attention over qkv (operand 0):
/// [B, T, H, D] and lse [B, H, T] ([T, B, H, D] and [B, H, T] with
/// `layout = "seq_first"`).
static LogicalResult inferPackedAttention(const InferContext &ctx,
                                          Results &results) {
  FailureOr<RankedTensorType> qkv = ctx.tensor(0);
  FailureOr<int64_t> heads = ctx.i64Attr("heads"), causal = ctx.i64Attr("causal");
  if (failed(qkv) || failed(heads) || failed(causal) ||
      failed(ctx.f32Attr("scale")))
    return failure();
  // The optional layout: "seq_first" reads [T, B, 3*H*D] and writes
  // [T, B, H, D] (nn.MultiheadAttention's in-projection).
  bool seqFirst = false;
  if (ctx.hasAttr("layout")) {
    FailureOr<StringRef> layout =
        ctx.enumAttr("layout", {"batch_first", "seq_first"});
    if (failed(layout))
      return failure();
    seqFirst = *layout == "seq_first";
  }
  if (qkv->getRank() != 3)
    return ctx.emitError(seqFirst ? "qkv must be T x B x 3*H*D, got "
                                  : "qkv must be B x T x 3*H*D, got ",
                         *qkv);
  if (*heads <= 0)
    return ctx.emitError("attribute 'heads' must be positive, got ", *heads);
  if (*causal != 0 && *causal != 1)
    return ctx.emitError("attribute 'causal' must be 0 or 1, got ", *causal);
  int64_t packed = qkv->getDimSize(2), d = kDyn;
  if (!isDyn(packed)) {
    if (packed % 3 != 0 || (packed / 3) % *heads != 0)
      return ctx.emitError("qkv's last dimension (", packed,
                           ") must be 3 * heads * D with heads = ", *heads);
    d = packed / 3 / *heads;
  }
  results.push_back(RankedTensorType::get(
      {qkv->getDimSize(0), qkv->getDimSize(1), *heads, d},
      qkv->getElementType()));
  int64_t batch = qkv->getDimSize(seqFirst ? 1 : 0),
          seq = qkv->getDimSize(seqFirst ? 0 : 1);
  results.push_back(RankedTensorType::get(
      {batch, *heads, seq}, attentionRowType(qkv->getElementType())));
  return success();
}

LogicalResult kiln::infer::packedAttention(const InferContext &ctx,
                                           Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  return inferPackedAttention(ctx, results);
}

LogicalResult kiln::infer::packedAttentionGrad(const InferContext &ctx,
                                               Results &results) {
  if (failed(ctx.expectOperands(4)))
    return failure();
  // The backward kernels read the batch-first layout only (the gradient
  // rule of a seq-first kiln.packed_attention transposes around it).
  if (ctx.hasAttr("layout"))
    return ctx.emitError("kiln.packed_attention_grad takes no 'layout' "
                         "(qkv is B x T x 3*H*D)");
  SmallVector<Type, 2> forward;
  if (failed(inferPackedAttention(ctx, forward)) ||
      failed(checkAttentionGradOperands(ctx, 1,
                                        cast<RankedTensorType>(forward[0]),
                                        cast<RankedTensorType>(forward[1]))))
    return failure();
  results.push_back(*ctx.tensor(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

namespace {
/// One term of an einsum equation: letters, with -1 marking the ellipsis.
using Term = SmallVector<int, 8>;
} // namespace

/// Parses one term ("bij", "...ij"); nullopt when malformed.
static std::optional<Term> parseTerm(StringRef text) {
  Term term;
  bool sawEllipsis = false;
  text = text.trim();
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ')
      continue;
    if (c == '.') {
      if (sawEllipsis || !text.substr(i).starts_with("..."))
        return std::nullopt;
      sawEllipsis = true;
      term.push_back(-1);
      i += 2;
    } else if (llvm::isAlpha(c)) {
      term.push_back(c);
    } else {
      return std::nullopt;
    }
  }
  return term;
}

LogicalResult kiln::infer::einsum(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1, /*atLeast=*/true)))
    return failure();
  FailureOr<StringRef> equation = ctx.strAttr("equation");
  if (failed(equation))
    return failure();
  auto [lhs, rhs] = equation->split("->");
  bool explicitOutput = equation->contains("->");
  SmallVector<StringRef> inputTerms;
  lhs.split(inputTerms, ',');
  if (inputTerms.size() != ctx.getOperands().size())
    return ctx.emitError("equation \"", *equation, "\" has ", inputTerms.size(),
                         " input terms but the op has ",
                         ctx.getOperands().size(), " operands");
  std::map<int, int64_t> letterDims;
  std::map<int, int> letterCount;
  SmallVector<int64_t> ellipsis;
  Type elementType;
  for (auto [i, text] : llvm::enumerate(inputTerms)) {
    FailureOr<RankedTensorType> type = ctx.tensor(i);
    if (failed(type))
      return failure();
    if (!elementType)
      elementType = type->getElementType();
    else if (elementType != type->getElementType())
      return ctx.emitError("operands must have one element type, got ",
                           ctx.getOperands()[0].getType(), " and ", *type);
    std::optional<Term> term = parseTerm(text);
    if (!term)
      return ctx.emitError("malformed einsum term \"", text, "\"");
    int64_t letters = llvm::count_if(*term, [](int c) { return c >= 0; });
    bool hasEllipsis = letters != static_cast<int64_t>(term->size());
    int64_t ellipsisRank = type->getRank() - letters;
    if (ellipsisRank < 0 || (!hasEllipsis && ellipsisRank != 0))
      return ctx.emitError("term \"", text, "\" does not match operand #", i,
                           " of type ", *type);
    int64_t dim = 0;
    for (int c : *term) {
      if (c < 0) {
        FailureOr<SmallVector<int64_t>> merged = broadcastShapes(
            ellipsis, type->getShape().slice(dim, ellipsisRank));
        if (failed(merged))
          return ctx.emitError("ellipsis dims do not broadcast in \"",
                               *equation, "\"");
        ellipsis = std::move(*merged);
        dim += ellipsisRank;
        continue;
      }
      int64_t size = type->getDimSize(dim++);
      ++letterCount[c];
      auto [it, inserted] = letterDims.emplace(c, size);
      if (!inserted) {
        std::optional<int64_t> merged = mergeDim(it->second, size);
        if (!merged)
          return ctx.emitError("dim '", std::string(1, static_cast<char>(c)),
                               "' has sizes ", it->second, " and ", size);
        it->second = *merged;
      }
    }
  }
  Term output;
  if (explicitOutput) {
    std::optional<Term> term = parseTerm(rhs);
    if (!term)
      return ctx.emitError("malformed einsum output \"", rhs, "\"");
    output = *term;
  } else {
    output.push_back(-1);
    for (auto [c, count] : letterCount)
      if (count == 1)
        output.push_back(c);
  }
  SmallVector<int64_t> shape;
  for (int c : output) {
    if (c < 0) {
      shape.append(ellipsis.begin(), ellipsis.end());
      continue;
    }
    auto it = letterDims.find(c);
    if (it == letterDims.end())
      return ctx.emitError("output letter '",
                           std::string(1, static_cast<char>(c)),
                           "' does not occur in the inputs");
    shape.push_back(it->second);
  }
  results.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::layerNorm(const InferContext &ctx,
                                     Results &results) {
  if (failed(ctx.expectOperands(3)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  if (failed(x) || failed(axis) ||
      failed(checkAxis(ctx, "axis", *axis, x->getRank(), *x)))
    return failure();
  SmallVector<int64_t> statShape(x->getShape());
  for (int64_t i = *axis; i < x->getRank(); ++i)
    statShape[i] = 1;
  Type statType = x->getElementType().isF64()
                      ? Type(Float64Type::get(ctx.getContext()))
                      : Type(Float32Type::get(ctx.getContext()));
  auto stats = RankedTensorType::get(statShape, statType);
  results.append({*x, stats, stats});
  return success();
}

/// Checks that operands [first, last) are 1-D with `channels` elements.
static LogicalResult verifyPerChannel(Operation *op, unsigned first,
                                      unsigned last) {
  InferContext ctx(op);
  auto x = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  if (x.getRank() < 2)
    return ctx.emitError("operand must be N x C x ..., got ", x);
  int64_t channels = x.getDimSize(1);
  for (unsigned i = first; i < last; ++i) {
    auto type = llvm::cast<RankedTensorType>(op->getOperand(i).getType());
    if (type.getRank() != 1 || !mergeDim(type.getDimSize(0), channels))
      return ctx.emitError("operand #", i, " must be 1-D with ",
                           formatShape({channels}), " (channel) elements, got ",
                           type, " for input ", x);
  }
  return success();
}

LogicalResult kiln::verifiers::batchNorm(Operation *op) {
  return verifyPerChannel(op, 1, 5);
}

LogicalResult kiln::verifiers::instanceNorm(Operation *op) {
  return verifyPerChannel(op, 1, 3);
}

LogicalResult kiln::verifiers::groupNorm(Operation *op) {
  if (failed(verifyPerChannel(op, 1, 3)))
    return failure();
  InferContext ctx(op);
  FailureOr<int64_t> groups = ctx.i64Attr("num_groups");
  if (failed(groups))
    return failure();
  auto x = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  if (*groups < 1)
    return ctx.emitError("attribute 'num_groups' must be >= 1, got ", *groups);
  if (!isDyn(x.getDimSize(1)) && x.getDimSize(1) % *groups != 0)
    return ctx.emitError("num_groups ", *groups, " does not divide the ",
                         x.getDimSize(1), " channels of ", x);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, scans, top-k
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::reduction(const InferContext &ctx,
                                     Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> keepdims = ctx.i64Attr("keepdims");
  FailureOr<int64_t> noop = ctx.i64Attr("noop_with_empty_axes");
  if (failed(x) || failed(keepdims) || failed(noop))
    return failure();
  FailureOr<int64_t> count = ctx.paramLength(1, /*requireStatic=*/false);
  if (failed(count))
    return failure();
  int64_t rank = x->getRank();
  ArrayRef<int64_t> in = x->getShape();
  SmallVector<bool> reduced(rank, false);
  if (*count == 0) {
    if (*noop) {
      results.push_back(*x);
      return success();
    }
    reduced.assign(rank, true);
  } else if (std::optional<SmallVector<int64_t>> axes = ctx.constInts(1)) {
    for (int64_t axis : *axes) {
      std::optional<int64_t> norm = normalizeAxis(axis, rank);
      if (!norm)
        return ctx.emitError("axis ", axis, " is out of range for ", *x);
      if (reduced[*norm])
        return ctx.emitError("axis ", axis, " is repeated in axes");
      reduced[*norm] = true;
    }
  } else {
    // Unknown axes: any dim may be reduced.
    SmallVector<int64_t> shape;
    if (*keepdims) {
      for (int64_t d : in)
        shape.push_back(d == 1 ? 1 : kDyn);
    } else {
      if (isDyn(*count))
        return ctx.emitError("axes of dynamic length give an unknown rank "
                             "with keepdims = 0");
      if (*count > rank)
        return ctx.emitError("cannot reduce ", *count, " axes of ", *x);
      shape.assign(rank - *count, kDyn);
    }
    results.push_back(RankedTensorType::get(shape, x->getElementType()));
    return success();
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      shape.push_back(in[i]);
    else if (*keepdims)
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::argReduction(const InferContext &ctx,
                                        Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  FailureOr<int64_t> keepdims = ctx.i64Attr("keepdims");
  if (failed(x) || failed(axis) || failed(keepdims) ||
      failed(checkAxis(ctx, "axis", *axis, x->getRank(), *x)))
    return failure();
  SmallVector<int64_t> shape(x->getShape());
  if (*keepdims)
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  results.push_back(
      RankedTensorType::get(shape, IntegerType::get(ctx.getContext(), 64)));
  return success();
}

LogicalResult kiln::infer::scan(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> length = ctx.paramLength(1, /*requireStatic=*/false);
  if (failed(x) || failed(length))
    return failure();
  if (*length != 1 && !isDyn(*length))
    return ctx.emitError("axis operand must have one element, got ",
                         ctx.getOperands()[1].getType());
  if (std::optional<SmallVector<int64_t>> axis = ctx.constInts(1))
    if (!axis->empty() && !normalizeAxis((*axis)[0], x->getRank()))
      return ctx.emitError("axis ", (*axis)[0], " is out of range for ", *x);
  results.push_back(*x);
  return success();
}

LogicalResult kiln::infer::topk(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  FailureOr<int64_t> length = ctx.paramLength(1, /*requireStatic=*/false);
  if (failed(x) || failed(axis) || failed(length) ||
      failed(checkAxis(ctx, "axis", *axis, x->getRank(), *x)))
    return failure();
  if (*length != 1 && !isDyn(*length))
    return ctx.emitError("k must have one element, got ",
                         ctx.getOperands()[1].getType());
  SmallVector<int64_t> shape(x->getShape());
  shape[*axis] = kDyn;
  if (std::optional<SmallVector<int64_t>> k = ctx.constInts(1)) {
    int64_t dim = x->getDimSize(*axis);
    if (k->empty() || (*k)[0] < 0 || (!isDyn(dim) && (*k)[0] > dim))
      return ctx.emitError("k = ", k->empty() ? -1 : (*k)[0],
                           " is out of range for axis ", *axis, " of ", *x);
    shape[*axis] = (*k)[0];
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  results.push_back(
      RankedTensorType::get(shape, IntegerType::get(ctx.getContext(), 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// Recurrent
//===----------------------------------------------------------------------===//

namespace {
/// The attributes and dims shared by LSTM and GRU.
struct Recurrent {
  RankedTensorType x;
  int64_t directions, hidden, layout, seq, batch;
};
} // namespace

static FailureOr<Recurrent> readRecurrent(const InferContext &ctx,
                                          unsigned operands) {
  if (failed(ctx.expectOperands(operands)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<StringRef> direction =
      ctx.enumAttr("direction", {"forward", "reverse", "bidirectional"});
  FailureOr<int64_t> hidden = ctx.i64Attr("hidden_size");
  FailureOr<int64_t> layout = ctx.i64Attr("layout");
  if (failed(x) || failed(direction) || failed(hidden) || failed(layout))
    return failure();
  if (x->getRank() != 3)
    return ctx.emitError("input must be 3-D, got ", *x);
  if (*hidden < 1)
    return ctx.emitError("attribute 'hidden_size' must be >= 1, got ", *hidden);
  if (*layout != 0 && *layout != 1)
    return ctx.emitError("attribute 'layout' must be 0 or 1, got ", *layout);
  Recurrent r{*x,
              *direction == "bidirectional" ? 2 : 1,
              *hidden,
              *layout,
              x->getDimSize(*layout ? 1 : 0),
              x->getDimSize(*layout ? 0 : 1)};
  return r;
}

/// Appends `y` and `count` state results (y_h, y_c).
static void appendRecurrentResults(const Recurrent &r, unsigned count,
                                   Results &results) {
  Type element = r.x.getElementType();
  if (r.layout == 0) {
    results.push_back(RankedTensorType::get(
        {r.seq, r.directions, r.batch, r.hidden}, element));
  } else {
    results.push_back(RankedTensorType::get(
        {r.batch, r.seq, r.directions, r.hidden}, element));
  }
  SmallVector<int64_t> state =
      r.layout == 0 ? SmallVector<int64_t>{r.directions, r.batch, r.hidden}
                    : SmallVector<int64_t>{r.batch, r.directions, r.hidden};
  for (unsigned i = 0; i < count; ++i)
    results.push_back(RankedTensorType::get(state, element));
}

LogicalResult kiln::infer::lstm(const InferContext &ctx, Results &results) {
  FailureOr<Recurrent> r = readRecurrent(ctx, 8);
  if (failed(r))
    return failure();
  appendRecurrentResults(*r, 2, results);
  return success();
}

LogicalResult kiln::infer::gru(const InferContext &ctx, Results &results) {
  FailureOr<Recurrent> r = readRecurrent(ctx, 6);
  if (failed(r))
    return failure();
  appendRecurrentResults(*r, 1, results);
  return success();
}

/// The recurrence half of a split GRU (3 gates) or LSTM (4 gates): xw
/// [seq, batch, D·gates·H], then `operands` with their shapes' forms
/// ("gates": [D, gates·H, H], "peepholes": [D, 3·H], "state": [D, B, H]),
/// optionally sequence_lens [B], then y and `states` state results.
static LogicalResult
inferRecurrence(const InferContext &ctx, int64_t gates,
                ArrayRef<std::pair<StringRef, StringRef>> operands,
                unsigned states, Results &results) {
  if (failed(ctx.expectOperands(operands.size() + 1, /*atLeast=*/true)))
    return failure();
  bool hasLens = ctx.getOperands().size() == operands.size() + 2;
  if (!hasLens && failed(ctx.expectOperands(operands.size() + 1)))
    return failure();
  FailureOr<RankedTensorType> xw = ctx.tensor(0);
  FailureOr<StringRef> direction =
      ctx.enumAttr("direction", {"forward", "reverse", "bidirectional"});
  FailureOr<int64_t> hidden = ctx.i64Attr("hidden_size");
  if (failed(xw) || failed(direction) || failed(hidden))
    return failure();
  if (xw->getRank() != 3)
    return ctx.emitError("operand 'xw' must be 3-D ([seq, batch, ",
                         "num_directions * ", gates, " * hidden]), got ", *xw);
  if (*hidden < 1)
    return ctx.emitError("attribute 'hidden_size' must be >= 1, got ", *hidden);
  int64_t nd = *direction == "bidirectional" ? 2 : 1, h = *hidden;
  int64_t seq = xw->getDimSize(0), batch = xw->getDimSize(1);
  SmallVector<std::pair<StringRef, SmallVector<int64_t>>> expected = {
      {"xw", {seq, batch, saturatingMul(gates * nd, h)}}};
  for (auto [name, form] : operands) {
    SmallVector<int64_t> shape =
        form == "gates"       ? SmallVector<int64_t>{nd, saturatingMul(gates, h), h}
        : form == "peepholes" ? SmallVector<int64_t>{nd, saturatingMul(3, h)}
        : form == "bias"      ? SmallVector<int64_t>{nd, saturatingMul(gates, h)}
                              : SmallVector<int64_t>{nd, batch, h};
    expected.push_back({name, shape});
  }
  if (hasLens)
    expected.push_back({"sequence_lens", {batch}});
  for (auto [i, entry] : llvm::enumerate(expected)) {
    FailureOr<RankedTensorType> type = ctx.tensor(i);
    if (failed(type))
      return failure();
    if (failed(verifyCompatibleShape(type->getShape(), entry.second)))
      return ctx.emitError("operand '", entry.first, "' must have shape ",
                           formatShape(entry.second), ", got ", *type);
  }
  Type element = xw->getElementType();
  results.push_back(RankedTensorType::get({seq, nd, batch, h}, element));
  for (unsigned i = 0; i < states; ++i)
    results.push_back(RankedTensorType::get({nd, batch, h}, element));
  return success();
}

LogicalResult kiln::infer::gruRecurrence(const InferContext &ctx,
                                         Results &results) {
  return inferRecurrence(
      ctx, 3, {{"r", "gates"}, {"rb", "bias"}, {"initial_h", "state"}}, 1,
      results);
}

LogicalResult kiln::infer::lstmRecurrence(const InferContext &ctx,
                                          Results &results) {
  return inferRecurrence(ctx, 4,
                         {{"r", "gates"},
                          {"p", "peepholes"},
                          {"initial_h", "state"},
                          {"initial_c", "state"}},
                         2, results);
}

LogicalResult kiln::verifiers::recurrent(Operation *op) {
  InferContext ctx(op);
  bool isLSTM = op->getNumOperands() == 8;
  FailureOr<Recurrent> r = readRecurrent(ctx, op->getNumOperands());
  if (failed(r))
    return failure();
  int64_t gates = isLSTM ? 4 : 3, nd = r->directions, h = r->hidden;
  int64_t input = r->x.getDimSize(2);
  SmallVector<int64_t> state = r->layout == 0
                                   ? SmallVector<int64_t>{nd, r->batch, h}
                                   : SmallVector<int64_t>{r->batch, nd, h};
  SmallVector<std::pair<StringRef, SmallVector<int64_t>>> expected = {
      {"w", {nd, saturatingMul(gates, h), input}},
      {"r", {nd, saturatingMul(gates, h), h}},
      {"b", {nd, saturatingMul(2 * gates, h)}},
      {"sequence_lens", {r->batch}},
      {"initial_h", state}};
  if (isLSTM) {
    expected.push_back({"initial_c", state});
    expected.push_back({"p", {nd, saturatingMul(3, h)}});
  }
  for (auto [i, entry] : llvm::enumerate(expected)) {
    auto type = llvm::cast<RankedTensorType>(op->getOperand(i + 1).getType());
    if (failed(verifyCompatibleShape(type.getShape(), entry.second)))
      return ctx.emitError("operand '", entry.first, "' must have shape ",
                           formatShape(entry.second), ", got ", type);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Determinant
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::det(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  if (failed(x))
    return failure();
  if (x->getRank() < 2)
    return ctx.emitError("operand must have rank >= 2 ([..., M, M]), got ", *x);
  ArrayRef<int64_t> shape = x->getShape();
  if (!mergeDim(shape[shape.size() - 2], shape.back()))
    return ctx.emitError("operand must hold square matrices ([..., M, M]), "
                         "got ",
                         *x);
  results.push_back(
      RankedTensorType::get(shape.drop_back(2), x->getElementType()));
  return success();
}
