//===- FuseAttention.cpp - Scaled dot-product attention as one op ---------===//
//
// This file implements `kiln-cuda-attention`, a layout pass of the CUDA
// target (Target::addLayoutPasses, before fusion): it recognizes attention
// written out as ops,
//
//   s = matmul(q, kT)                       q [B,H,T,D], kT [B,H,D,T]
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
// matches: f16/bf16, static shapes, Tq = Tk a multiple of 64, D a multiple of
// 16 up to 128. Other attention (f32, other masks, other shapes) keeps its
// ops and runs as before. kiln-layout-cleanup after it merges the new
// transpose of kT with the one that made it.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "targets/cuda/CudaTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <cmath>

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

/// o = matmul(p, v) of written-out attention -> kiln.attention.
struct FormAttention : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

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
    if (!dtype.isBF16() && !dtype.isF16())
      return failure();
    int64_t t = ot.getDimSize(2), d = ot.getDimSize(3);
    if (t % 64 != 0 || d % 16 != 0 || d > 128 || vt.getDimSize(2) != t)
      return failure();

    // The probabilities: div(e, reduce_sum(e)), e = exp(x - reduce_max(x)).
    Value p = pv.getOperand(0);
    if (auto cast = defOnly<CastOp>(p))
      p = cast.getOperand();
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
    Value x = sub.getOperand(0);
    if (std::distance(x.use_begin(), x.use_end()) != 2)
      return failure();
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
      if (isInsideFusion(mul))
        return failure();
      std::optional<double> c0 = getSplatValue(mul.getOperand(0)),
                            c1 = getSplatValue(mul.getOperand(1));
      auto isScalar = [](Value v) {
        return rankedType(v) && rankedType(v).getNumElements() == 1;
      };
      if (c1 && isScalar(mul.getOperand(1))) {
        scale = *c1, s = mul.getOperand(0);
      } else if (c0 && isScalar(mul.getOperand(0))) {
        scale = *c0, s = mul.getOperand(1);
      } else {
        return failure();
      }
      if (!s.hasOneUse())
        return failure();
    }
    auto qk = s.getDefiningOp<MatMulOp>();
    if (!qk || isInsideFusion(qk))
      return failure();
    Value q = qk.getOperand(0), kT = qk.getOperand(1);
    RankedTensorType qt = rankedType(q), kt = rankedType(kT);
    if (!qt || !kt || qt.getShape() != ot.getShape() ||
        qt.getElementType() != dtype || kt.getRank() != 4 ||
        kt.getDimSize(0) != qt.getDimSize(0) ||
        kt.getDimSize(1) != qt.getDimSize(1) || kt.getDimSize(2) != d ||
        kt.getDimSize(3) != t || vt.getDimSize(0) != qt.getDimSize(0) ||
        vt.getDimSize(1) != qt.getDimSize(1) || vt.getDimSize(3) != d)
      return failure();

    Location loc =
        FusedLoc::get(getContext(), {qk.getLoc(), sub.getLoc(), pv.getLoc()});
    Value k = buildKilnValue(
        rewriter, loc, "kiln.transpose", {kT},
        {rewriter.getNamedAttr("perm",
                               rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}))});
    if (!k)
      return failure();
    Value attention = buildKilnValue(
        rewriter, loc, "kiln.attention", {q, k, pv.getOperand(1)},
        {rewriter.getNamedAttr(
             "scale", rewriter.getF32FloatAttr(static_cast<float>(scale))),
         rewriter.getNamedAttr("causal",
                               rewriter.getI64IntegerAttr(causal ? 1 : 0))});
    if (!attention || attention.getType() != pv.getType()) {
      if (attention)
        rewriter.eraseOp(attention.getDefiningOp());
      rewriter.eraseOp(k.getDefiningOp());
      return failure();
    }
    // The written-out ops are dead now; cse erases them.
    rewriter.replaceOp(pv, attention);
    return success();
  }
};

struct FuseAttentionPass
    : public PassWrapper<FuseAttentionPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseAttentionPass)

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
    patterns.add<FormAttention>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> createFuseAttentionPass() {
  return std::make_unique<FuseAttentionPass>();
}

} // namespace kiln
