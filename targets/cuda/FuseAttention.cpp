//===- FuseAttention.cpp - Scaled dot-product attention as one op ---------===//
//
// This file implements `kiln-cuda-attention`, a layout pass of the CUDA
// target (Target::addLayoutPasses, before fusion): it recognizes attention
// written out as ops,
//
//   s = matmul(q, kT)                       q [B,H,T,D], kT [B,H,D,T]
//                                           (each optionally times a scalar)
//   z = mul(s, scale)                       optional, scale a scalar constant
//   y = where(causal, -inf, z)              optional, causal[i][j] = j > i
//   x = cast(y, f32)                        optional (a bf16/f16 softmax)
//   p = div(e, reduce_sum(e)),  e = exp(sub(x, reduce_max(x)))   (last axis)
//   p' = cast(p, dtype)                     optional
//   o = matmul(p', v)                       v [B,H,T,D]
//
// and replaces `o` with `kiln.attention(q, transpose(kT), v) {scale,
// causal}`, which kiln-lower-cuda runs as one flash-attention kernel
// (CudaAttentionKernel.cpp): the [B, H, T, T] scores never reach memory.
// Every intermediate value must have no other user (x and e exactly their
// two), so a training graph's forward, which saves the probabilities for the
// backward pass, keeps its ops. What the kernel takes, and so what the pass
// matches: f16/bf16 with D a multiple of 16 up to 128, or f32 (the CUDA-core
// kernel, CudaAttentionF32Kernel.cpp) with D up to 64; static shapes, Tq = Tk
// (any length). Other attention (other masks, other shapes) keeps its ops
// and runs as before. kiln-layout-cleanup after it merges the new
// transpose of kT with the one that made it.
//
// With `training` (kiln-cuda-attention{training=1}, the CUDA target's
// Target::addTrainingForwardPasses) it runs on a training graph before
// autodiff, where the softmax is still kiln.softmax and the forward's
// values have no backward users yet, and forms only attention whose
// gradient kernel exists (f16/bf16, D up to 64): kiln-autodiff's rule then
// builds kiln.attention_grad from q, k, v and the result's lse, so neither
// pass stores the [B, H, T, T] probabilities.
//
// A second pattern packs an attention whose q, k and v are the heads of
// three slices of one [B, T, 3·H·D] tensor (a fused q/k/v projection split,
// reshaped to [B, T, H, D] and transposed to [B, H, T, D], as GPT-2 writes
// it) and whose result is transposed back to [B, T, H, D]:
// `kiln.packed_attention(X) {heads}` reads the heads out of X in place and
// writes the result in [B, T, H, D], so neither the three slices nor the
// four transposes are copies.
//
// A third packs the seq-first form nn.MultiheadAttention exports: q, k and
// v views (through reshapes, transposes, squeezes and slices, followed as
// offsets) of its in-projection's [T, B, 3·H·D] result, and the result
// transposed to [T, B, H, D] for the out-projection:
// `kiln.packed_attention(X) {heads, layout = "seq_first"}`
// (KILN_CUDA_SEQ_FIRST_ATTENTION=0 at compile time leaves it unpacked).
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "targets/cuda/CudaAttentionKernel.h"
#include "targets/cuda/CudaTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <tuple>

using namespace mlir;
using namespace kiln::passes;

namespace kiln {
namespace {

RankedTensorType rankedType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// The op of type OpT defining `v` when `v` has exactly `uses` uses; null
/// otherwise.
template <typename OpT> OpT defOnly(Value v, unsigned uses = 1) {
  auto op = v.getDefiningOp<OpT>();
  if (!op || isInsideFusion(op) ||
      static_cast<unsigned>(std::distance(v.use_begin(), v.use_end())) != uses)
    return nullptr;
  return op;
}

/// True when a reduction `op` reduces the last axis of a rank-4 value,
/// keeping it.
bool reducesLastAxis(Operation *op) {
  auto keep = op->getAttrOfType<IntegerAttr>("keepdims");
  std::optional<SmallVector<int64_t>> axes = getConstantInts(op->getOperand(1));
  return keep && keep.getInt() == 1 && axes && axes->size() == 1 &&
         ((*axes)[0] == 3 || (*axes)[0] == -1);
}

/// True when `mask` is a constant [.., T, T] boolean whose element (i, j)
/// is `j > i` (`above`) or `j <= i` (!`above`), broadcast over the leading
/// dims.
bool isCausalMask(Value mask, int64_t t, bool above) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(getConstantValue(mask));
  RankedTensorType type = rankedType(mask);
  if (!dense || !type || !type.getElementType().isInteger(1) ||
      type.getRank() < 2 || type.getNumElements() != t * t ||
      type.getDimSize(type.getRank() - 1) != t)
    return false;
  if (dense.isSplat())
    return false;
  int64_t index = 0;
  for (bool value : dense.getValues<bool>()) {
    int64_t i = index / t, j = index % t;
    if (value != (above ? j > i : j <= i))
      return false;
    ++index;
  }
  return true;
}

bool isNegativeInfinity(Value v) {
  std::optional<double> value = getSplatValue(v);
  return value && std::isinf(*value) && *value < 0;
}

/// `mul`'s other operand and the factor when one of its operands is a
/// one-element constant (a scale) and the other has the result's type.
std::optional<std::pair<Value, double>> scalarFactor(MulOp mul) {
  for (unsigned i = 0; i < 2; ++i) {
    Value c = mul.getOperand(i), x = mul.getOperand(1 - i);
    std::optional<double> value = getSplatValue(c);
    if (value && rankedType(c) && rankedType(c).getNumElements() == 1 &&
        x.getType() == mul.getType())
      return std::make_pair(x, *value);
  }
  return std::nullopt;
}

/// o = matmul(p, v) of written-out attention -> kiln.attention.
struct FormAttention : public OpRewritePattern<MatMulOp> {
  FormAttention(MLIRContext *context, bool training)
      : OpRewritePattern(context), training(training) {}
  /// Whether the graph is a training graph's forward, before autodiff.
  bool training;

  LogicalResult matchAndRewrite(MatMulOp pv,
                                PatternRewriter &rewriter) const override {
    if (isInsideFusion(pv))
      return failure();
    RankedTensorType ot = rankedType(pv.getResult());
    RankedTensorType vt = rankedType(pv.getOperand(1));
    if (!ot || !vt || ot.getRank() != 4 || !ot.hasStaticShape() ||
        vt.getRank() != 4 || !vt.hasStaticShape())
      return failure();
    Type dtype = ot.getElementType();
    if (!dtype.isBF16() && !dtype.isF16() && !dtype.isF32())
      return failure();
    int64_t t = ot.getDimSize(2), d = ot.getDimSize(3);
    if (d % 16 != 0 || d > (dtype.isF32() ? kMaxF32AttentionHeadDim : 128) ||
        vt.getDimSize(2) != t)
      return failure();
    // A training graph's attention is differentiated next: only what the
    // backward kernel (kiln.attention_grad) takes.
    if (training && (dtype.isF32() || d > kMaxAttentionGradHeadDim))
      return failure();

    // The probabilities: kiln.softmax over the last axis (before
    // kiln-decompose: a training graph's forward) or written out,
    // div(e, reduce_sum(e)), e = exp(x - reduce_max(x)).
    Value p = pv.getOperand(0);
    if (auto cast = defOnly<CastOp>(p))
      p = cast.getOperand();
    Value x;
    Location softmaxLoc = pv.getLoc();
    if (auto softmax = defOnly<SoftmaxOp>(p)) {
      if (softmax.getAxis() != 3)
        return failure();
      x = softmax.getOperand();
      softmaxLoc = softmax.getLoc();
      if (!x.hasOneUse())
        return failure();
    } else {
      auto div = defOnly<DivOp>(p);
      auto sum = div ? defOnly<ReduceSumOp>(div.getOperand(1)) : nullptr;
      auto exp = div ? defOnly<ExpOp>(div.getOperand(0), 2) : nullptr;
      if (!div || !sum || !exp || sum.getOperand(0) != exp.getResult() ||
          !reducesLastAxis(sum))
        return failure();
      auto sub = defOnly<SubOp>(exp.getOperand());
      auto max = sub ? defOnly<ReduceMaxOp>(sub.getOperand(1)) : nullptr;
      if (!sub || !max || max.getOperand(0) != sub.getOperand(0) ||
          !reducesLastAxis(max))
        return failure();
      x = sub.getOperand(0);
      softmaxLoc = sub.getLoc();
      if (std::distance(x.use_begin(), x.use_end()) != 2)
        return failure();
    }
    // x: an optional cast (bf16/f16 softmax in f32) of the masked scores.
    Value y = x;
    if (auto cast = x.getDefiningOp<CastOp>()) {
      if (isInsideFusion(cast) || !cast.getOperand().hasOneUse())
        return failure();
      y = cast.getOperand();
    } else if (rankedType(x).getElementType() != dtype) {
      return failure();
    }
    // y: an optional causal mask.
    bool causal = false;
    Value z = y;
    if (auto where = y.getDefiningOp<WhereOp>()) {
      if (isInsideFusion(where))
        return failure();
      Value c = where.getOperand(0), a = where.getOperand(1),
            b = where.getOperand(2);
      if (isNegativeInfinity(a) && isCausalMask(c, t, /*above=*/true))
        z = b;
      else if (isNegativeInfinity(b) && isCausalMask(c, t, /*above=*/false))
        z = a;
      else
        return failure();
      if (!z.hasOneUse())
        return failure();
      causal = true;
    }
    // z: an optional scale.
    double scale = 1.0;
    Value s = z;
    if (auto mul = z.getDefiningOp<MulOp>()) {
      std::optional<std::pair<Value, double>> factor = scalarFactor(mul);
      if (isInsideFusion(mul) || !factor)
        return failure();
      std::tie(s, scale) = *factor;
      if (!s.hasOneUse())
        return failure();
    }
    auto qk = s.getDefiningOp<MatMulOp>();
    if (!qk || isInsideFusion(qk))
      return failure();
    Value q = qk.getOperand(0), kT = qk.getOperand(1);
    // q and k scaled before their product (PyTorch's exported
    // scaled_dot_product_attention multiplies each by sqrt(scale)).
    for (Value *operand : {&q, &kT})
      if (auto mul = defOnly<MulOp>(*operand))
        if (std::optional<std::pair<Value, double>> factor =
                scalarFactor(mul)) {
          *operand = factor->first;
          scale *= factor->second;
        }
    RankedTensorType qt = rankedType(q), kt = rankedType(kT);
    if (!qt || !kt || qt.getShape() != ot.getShape() ||
        qt.getElementType() != dtype || kt.getRank() != 4 ||
        kt.getDimSize(0) != qt.getDimSize(0) ||
        kt.getDimSize(1) != qt.getDimSize(1) || kt.getDimSize(2) != d ||
        kt.getDimSize(3) != t || vt.getDimSize(0) != qt.getDimSize(0) ||
        vt.getDimSize(1) != qt.getDimSize(1) || vt.getDimSize(3) != d)
      return failure();

    Location loc =
        FusedLoc::get(getContext(), {qk.getLoc(), softmaxLoc, pv.getLoc()});
    Value k = buildKilnValue(
        rewriter, loc, "kiln.transpose", {kT},
        {rewriter.getNamedAttr("perm",
                               rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}))});
    if (!k)
      return failure();
    FailureOr<Operation *> attention = buildKilnOp(
        rewriter, loc, "kiln.attention", {q, k, pv.getOperand(1)},
        {rewriter.getNamedAttr(
             "scale", rewriter.getF32FloatAttr(static_cast<float>(scale))),
         rewriter.getNamedAttr("causal",
                               rewriter.getI64IntegerAttr(causal ? 1 : 0))});
    if (failed(attention) ||
        (*attention)->getResult(0).getType() != pv.getType()) {
      if (succeeded(attention))
        rewriter.eraseOp(*attention);
      rewriter.eraseOp(k.getDefiningOp());
      return failure();
    }
    // The written-out ops are dead now; cse erases them.
    rewriter.replaceOp(pv, (*attention)->getResult(0));
    return success();
  }
};

/// `v` as transpose(source, perm): the permutations of a chain of
/// kiln.transpose ops composed (the identity when `v` is not a transpose).
Value throughTransposes(Value v, SmallVector<int64_t> &perm) {
  RankedTensorType type = rankedType(v);
  perm.clear();
  for (int64_t i = 0; type && i < type.getRank(); ++i)
    perm.push_back(i);
  while (auto transpose = v.getDefiningOp<TransposeOp>()) {
    if (isInsideFusion(transpose))
      break;
    ArrayRef<int64_t> inner = transpose.getPerm();
    if (inner.size() != perm.size())
      break;
    // v[i] = t[perm[i]] and t[j] = src[inner[j]]: v[i] = src[inner[perm[i]]].
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner[p]);
    perm = composed;
    v = transpose.getOperand();
  }
  return v;
}

/// For q, k or v (`part` 0, 1, 2) of an attention [B, H, T, D]: the packed
/// tensor X [B, T, 3 * H * D] when the operand is
/// transpose(reshape(slice(X, part * H * D, (part + 1) * H * D, last axis)),
/// [0, 2, 1, 3]), or the same of result `part` of an equal three-way split
/// of X along its last axis; null otherwise. The slice's (split's) and
/// reshape's locations are added to `locs`.
Value packedSource(Value operand, int64_t part,
                   SmallVectorImpl<Location> &locs) {
  SmallVector<int64_t> perm;
  Value heads = throughTransposes(operand, perm);
  if (perm != ArrayRef<int64_t>{0, 2, 1, 3})
    return nullptr;
  auto reshape = heads.getDefiningOp<ReshapeOp>();
  if (!reshape || isInsideFusion(reshape))
    return nullptr;
  Value part3 = reshape.getOperand(0);
  // Result `part` of a three-way split along the last axis (a training
  // graph's forward, before kiln-decompose makes it slices).
  if (auto split = part3.getDefiningOp<SplitOp>()) {
    RankedTensorType xt = rankedType(split.getX()), pt = rankedType(part3);
    if (isInsideFusion(split) || split.getNumResults() != 3 ||
        static_cast<int64_t>(cast<OpResult>(part3).getResultNumber()) != part ||
        !xt || !pt || xt.getRank() != 3 ||
        (split.getAxis() != 2 && split.getAxis() != -1))
      return nullptr;
    for (Value out : split.getResults())
      if (out.getType() != pt)
        return nullptr;
    RankedTensorType ht = rankedType(heads);
    if (!ht || !ht.hasStaticShape() || !pt.hasStaticShape() ||
        ht.getRank() != 4 || ht.getDimSize(0) != pt.getDimSize(0) ||
        ht.getDimSize(1) != pt.getDimSize(1) ||
        ht.getDimSize(2) * ht.getDimSize(3) != pt.getDimSize(2))
      return nullptr;
    locs.push_back(split.getLoc());
    locs.push_back(reshape.getLoc());
    return split.getX();
  }
  auto slice = part3.getDefiningOp<SliceOp>();
  if (!slice || isInsideFusion(slice))
    return nullptr;
  RankedTensorType ht = rankedType(heads), st = rankedType(slice.getResult()),
                   xt = rankedType(slice.getOperand(0));
  if (!ht || !st || !xt || !ht.hasStaticShape() || !st.hasStaticShape() ||
      !xt.hasStaticShape() || ht.getRank() != 4 || st.getRank() != 3 ||
      xt.getRank() != 3)
    return nullptr;
  int64_t c = st.getDimSize(2);
  if (ht.getDimSize(0) != st.getDimSize(0) ||
      ht.getDimSize(1) != st.getDimSize(1) ||
      ht.getDimSize(2) * ht.getDimSize(3) != c ||
      xt.getDimSize(0) != st.getDimSize(0) ||
      xt.getDimSize(1) != st.getDimSize(1) || xt.getDimSize(2) != 3 * c)
    return nullptr;
  std::optional<SmallVector<int64_t>> starts =
                                          getConstantInts(slice.getStarts()),
                                      ends = getConstantInts(slice.getEnds()),
                                      axes = getConstantInts(slice.getAxes()),
                                      steps = getConstantInts(slice.getSteps());
  if (!starts || !ends || !axes || !steps || starts->size() != 1 ||
      ends->size() != 1 || axes->size() != 1 || steps->size() != 1)
    return nullptr;
  int64_t start = (*starts)[0], end = (*ends)[0];
  bool lastAxis = (*axes)[0] == 2 || (*axes)[0] == -1;
  // The last part's end may be any value past the dim (slices clamp it).
  bool endOk = end == (part + 1) * c || (part == 2 && end > 3 * c);
  if (!lastAxis || (*steps)[0] != 1 || start != part * c || !endOk)
    return nullptr;
  locs.push_back(slice.getLoc());
  locs.push_back(reshape.getLoc());
  return slice.getOperand(0);
}

/// kiln.attention whose q, k and v are heads of slices of one tensor and
/// whose result is transposed back to [B, T, H, D] ->
/// kiln.packed_attention: the kernel reads the heads where the projection
/// wrote them, so the slices and transposes are not copies.
/// Replaces `attention` and the transpose `back` of its result by one
/// kiln.packed_attention of `x` (`heads`, the attention's scale and
/// causality, `layout` when not empty); fails, creating nothing, when the
/// packed op's result types are not those of `back` and the lse.
LogicalResult replaceWithPacked(PatternRewriter &rewriter, Location loc,
                                AttentionOp attention, TransposeOp back,
                                Value x, int64_t heads, StringRef layout) {
  SmallVector<NamedAttribute> attrs = {
      rewriter.getNamedAttr("heads", rewriter.getI64IntegerAttr(heads)),
      rewriter.getNamedAttr("scale", attention.getScaleAttr()),
      rewriter.getNamedAttr("causal", attention.getCausalAttr())};
  if (!layout.empty())
    attrs.push_back(
        rewriter.getNamedAttr("layout", rewriter.getStringAttr(layout)));
  FailureOr<Operation *> packed =
      buildKilnOp(rewriter, loc, "kiln.packed_attention", {x}, attrs);
  if (failed(packed) || (*packed)->getResult(0).getType() != back.getType() ||
      (*packed)->getResult(1).getType() != attention.getLse().getType()) {
    if (succeeded(packed))
      rewriter.eraseOp(*packed);
    return failure();
  }
  // lse is [B, H, T] in every form.
  rewriter.replaceAllUsesWith(attention.getLse(), (*packed)->getResult(1));
  rewriter.replaceOp(back, (*packed)->getResult(0));
  rewriter.eraseOp(attention);
  return success();
}

struct PackAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp attention,
                                PatternRewriter &rewriter) const override {
    if (isInsideFusion(attention) || !attention.getOutput().hasOneUse())
      return failure();
    SmallVector<Location> locs = {attention.getLoc()};
    Value x = packedSource(attention.getQ(), 0, locs);
    if (!x || packedSource(attention.getK(), 1, locs) != x ||
        packedSource(attention.getV(), 2, locs) != x)
      return failure();
    auto back = dyn_cast<TransposeOp>(*attention.getOutput().user_begin());
    if (!back || isInsideFusion(back) ||
        back.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3})
      return failure();
    locs.push_back(back.getLoc());
    RankedTensorType qt = rankedType(attention.getQ());
    return replaceWithPacked(rewriter, FusedLoc::get(getContext(), locs),
                             attention, back, x, qt.getDimSize(1), {});
  }
};

/// One factor of a view's dimension: `size` indices `stride` elements apart.
struct Mode {
  int64_t size, stride;
};

/// A view of a row-major tensor `base` in the manner of a hierarchical
/// layout: each dimension of the viewed value is a row-major product of
/// modes (outermost first; none for a dimension of size 1), and element
/// (i0, i1, ...) of the value is element `offset` plus, over the
/// dimensions, each index split into its modes times their strides, of
/// `base`. Unlike one stride per dimension, this follows a reshape that
/// merges dims which are not contiguous and a later one that splits them
/// again ([T, B, E] with E = H * D through [T, B * H, D] to [B, H, T, D]).
struct ModeView {
  Value base;
  int64_t offset = 0;
  SmallVector<SmallVector<Mode, 2>> dims;

  /// The modes of every dimension, outermost first, in one list.
  SmallVector<Mode> flattened() const {
    SmallVector<Mode> modes;
    for (const SmallVector<Mode, 2> &dim : dims)
      modes.append(dim.begin(), dim.end());
    return modes;
  }
  /// Dimension `i`'s one stride (0 for size 1); nullopt when its modes do
  /// not merge into one.
  std::optional<int64_t> stride(size_t i) const {
    SmallVector<Mode, 2> merged;
    for (Mode m : dims[i]) {
      if (!merged.empty() && merged.back().stride == m.size * m.stride)
        merged.back() = {merged.back().size * m.size, m.stride};
      else
        merged.push_back(m);
    }
    if (merged.size() > 1)
      return std::nullopt;
    return merged.empty() ? 0 : merged[0].stride;
  }
};

/// `view` reshaped (row-major) to `shape`: the modes, innermost first, are
/// regrouped into the new dimensions, a mode split where a new dimension
/// takes a divisor of it; false when a dimension would need part of a mode
/// that does not divide (the reshape would need a copy).
bool reshapeModes(ModeView &view, ArrayRef<int64_t> shape) {
  SmallVector<Mode> modes = view.flattened();
  SmallVector<SmallVector<Mode, 2>> dims(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    int64_t need = shape[i];
    while (need > 1) {
      if (modes.empty())
        return false;
      Mode &m = modes.back();
      if (need % m.size == 0) {
        dims[i].insert(dims[i].begin(), m);
        need /= m.size;
        modes.pop_back();
      } else if (m.size % need == 0) {
        dims[i].insert(dims[i].begin(), Mode{need, m.stride});
        m = {m.size / need, m.stride * need};
        need = 1;
      } else {
        return false;
      }
    }
  }
  if (!modes.empty())
    return false;
  view.dims = std::move(dims);
  return true;
}

/// `v` as a view of the furthest value reachable through kiln.transpose,
/// kiln.reshape, kiln.squeeze, kiln.unsqueeze and kiln.slice (positive
/// steps, along a dimension of one mode) ops outside fusions that need no
/// copy: the ops a kernel reading `base` at these offsets makes
/// unnecessary. `v` itself (contiguous) when it is not such an op; nullopt
/// for a dynamic shape.
std::optional<ModeView> modeView(Value v, int depth = 0) {
  RankedTensorType type = rankedType(v);
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  Operation *def = v.getDefiningOp();
  if (def && !isInsideFusion(def) && depth < 32) {
    if (auto transpose = dyn_cast<TransposeOp>(def)) {
      if (std::optional<ModeView> in =
              modeView(transpose.getOperand(), depth + 1)) {
        ModeView out{in->base, in->offset, {}};
        for (int64_t p : transpose.getPerm())
          out.dims.push_back(in->dims[p]);
        return out;
      }
    } else if (isa<ReshapeOp, SqueezeOp, UnsqueezeOp>(def)) {
      if (std::optional<ModeView> in = modeView(def->getOperand(0), depth + 1))
        if (reshapeModes(*in, shape))
          return in;
    } else if (auto slice = dyn_cast<SliceOp>(def)) {
      std::optional<SmallVector<int64_t>> starts =
          getConstantInts(slice.getStarts());
      std::optional<SmallVector<int64_t>> axes =
          getConstantInts(slice.getAxes());
      std::optional<SmallVector<int64_t>> steps =
          getConstantInts(slice.getSteps());
      std::optional<ModeView> in = modeView(slice.getOperand(0), depth + 1);
      RankedTensorType inType = rankedType(slice.getOperand(0));
      int64_t rank = static_cast<int64_t>(shape.size());
      bool ok =
          starts && axes && steps && in && starts->size() == axes->size() &&
          steps->size() == axes->size() && in->dims.size() == shape.size();
      for (size_t i = 0; ok && i < axes->size(); ++i) {
        int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
        if (axis < 0 || axis >= rank || (*steps)[i] <= 0) {
          ok = false;
          break;
        }
        int64_t dim = inType.getDimSize(axis), start = (*starts)[i];
        start = std::clamp<int64_t>(start < 0 ? start + dim : start, 0, dim);
        if (start == 0 && (*steps)[i] == 1 && shape[axis] == dim)
          continue; // the whole dimension
        std::optional<int64_t> stride = in->stride(axis);
        if (!stride) {
          ok = false;
          break;
        }
        in->offset += start * *stride;
        in->dims[axis].clear();
        if (shape[axis] > 1)
          in->dims[axis].push_back(Mode{shape[axis], *stride * (*steps)[i]});
      }
      if (ok)
        return in;
    }
  }
  ModeView self{v, 0, SmallVector<SmallVector<Mode, 2>>(shape.size())};
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] > 1)
      self.dims[i].push_back(Mode{shape[i], stride});
    stride *= shape[i];
  }
  return self;
}

/// kiln.attention whose q, k and v [B, H, T, D] are views of one [T, B,
/// 3·H·D] tensor X (q's head h of position t and batch b at X[t, b, h·D],
/// k's at X[t, b, H·D + h·D], v's at X[t, b, 2·H·D + h·D]: the fused
/// in-projection of nn.MultiheadAttention, whose split into q, k and v and
/// into heads an exporter writes as a reshape, a transpose, slices or
/// gathers and more reshapes and transposes) and whose result is
/// transposed to [T, B, H, D] (the out-projection's operand) ->
/// kiln.packed_attention(X) {layout = "seq_first"}: none of those ops is a
/// copy any more.
struct PackSeqFirstAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp attention,
                                PatternRewriter &rewriter) const override {
    if (isInsideFusion(attention) || !attention.getOutput().hasOneUse())
      return failure();
    RankedTensorType qt = rankedType(attention.getQ());
    if (!qt || !qt.hasStaticShape() || qt.getRank() != 4)
      return failure();
    int64_t b = qt.getDimSize(0), h = qt.getDimSize(1), t = qt.getDimSize(2),
            d = qt.getDimSize(3), c = h * d;
    auto back = dyn_cast<TransposeOp>(*attention.getOutput().user_begin());
    if (!back || isInsideFusion(back) ||
        back.getPerm() != ArrayRef<int64_t>{2, 0, 1, 3})
      return failure();
    Value base;
    const Value operands[3] = {attention.getQ(), attention.getK(),
                               attention.getV()};
    // [B, H, T, D] at X[t, b, part * H * D + h * D + d]: strides 3·H·D,
    // D, B·3·H·D and 1 (any for a dimension of size 1).
    const int64_t strides[4] = {3 * c, d, b * 3 * c, 1};
    const int64_t sizes[4] = {b, h, t, d};
    for (int64_t part = 0; part < 3; ++part) {
      std::optional<ModeView> view = modeView(operands[part]);
      if (!view || (base && view->base != base) || view->offset != part * c ||
          view->dims.size() != 4)
        return failure();
      for (size_t i = 0; i < 4; ++i) {
        std::optional<int64_t> stride = view->stride(i);
        if (!stride || (sizes[i] > 1 && *stride != strides[i]))
          return failure();
      }
      base = view->base;
    }
    RankedTensorType xt = rankedType(base);
    if (!xt || xt.getElementType() != qt.getElementType() ||
        xt.getNumElements() != t * b * 3 * c)
      return failure();
    Location loc =
        FusedLoc::get(getContext(), {attention.getLoc(), back.getLoc()});
    Value x = base;
    SmallVector<int64_t> packedShape = {t, b, 3 * c};
    if (xt.getShape() != ArrayRef<int64_t>(packedShape)) {
      x = buildKilnValue(
          rewriter, loc, "kiln.reshape",
          {base, buildI64Vector(rewriter, loc, packedShape)},
          {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0))});
      if (!x)
        return failure();
    }
    return replaceWithPacked(rewriter, loc, attention, back, x, h,
                             "seq_first");
  }
};

struct FuseAttentionPass
    : public PassWrapper<FuseAttentionPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseAttentionPass)

  FuseAttentionPass() = default;
  FuseAttentionPass(const FuseAttentionPass &other) : PassWrapper(other) {}
  explicit FuseAttentionPass(bool trainingForward) {
    training = trainingForward;
  }

  Option<bool> training{
      *this, "training",
      llvm::cl::desc("The graph is a training graph's forward, before "
                     "autodiff: form only the attention kiln.attention_grad "
                     "takes (f16/bf16, D up to 64)"),
      llvm::cl::init(false)};

  StringRef getArgument() const final { return "kiln-cuda-attention"; }
  StringRef getDescription() const final {
    return "Form kiln.attention from matmul, scale, causal mask, softmax and "
           "matmul (f16/bf16), for the CUDA target's flash-attention kernel";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<KilnDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FormAttention>(&getContext(), training.getValue());
    patterns.add<PackAttention>(&getContext());
    // KILN_CUDA_SEQ_FIRST_ATTENTION=0 at compile time leaves seq-first
    // attention unpacked (its q/k/v copies kept, for comparisons).
    const char *seqFirst = std::getenv("KILN_CUDA_SEQ_FIRST_ATTENTION");
    if (!seqFirst || std::string_view(seqFirst) != "0")
      patterns.add<PackSeqFirstAttention>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> createFuseAttentionPass(bool trainingForward) {
  return std::make_unique<FuseAttentionPass>(trainingForward);
}

} // namespace kiln
