//===- Simplify.cpp - Algebraic and view simplifications ------------------===//
//
// This file implements `kiln-simplify`, greedy rewrite patterns over the kiln
// ops of a function. What it does:
//   * views that do not change the value disappear: reshape, flatten,
//     squeeze, unsqueeze, expand and tile whose result type equals the
//     operand's; transpose with the identity permutation; slice with
//     positive constant steps that keeps the whole tensor; pad with constant
//     all-zero pads; concat of one operand; cast to the operand's dtype;
//     gather by constant consecutive in-range indices (a slice, reshaped
//     when the index is a scalar);
//     reductions (trait Kiln_Reduction) whose result type equals the
//     operand's (every reduced dim has size 1, or empty axes with
//     noop_with_empty_axes);
//   * an op whose results all have no elements (static shapes) becomes
//     empty constants;
//   * a reduction over a run-time axes operand with no elements (ONNX's
//     "default axes") gets the constant axes [0, rank) it means;
//   * chains of views merge: transpose(transpose(x)) becomes one transpose
//     (or x), and a reshape, flatten, squeeze or unsqueeze of another one
//     becomes a single reshape of the original operand to the static result
//     shape;
//   * identities with splat constants: x + 0, 0 + x, x - 0, x * 1, 1 * x,
//     x / 1, pow(x, 1) become x when the result type equals x's (the constant
//     changes neither the shape nor the dtype);
//   * involutions: neg(neg(x)), not(not(x)), bitwise_not(bitwise_not(x));
//   * MLIR's greedy driver folds (kiln.shape, kiln.size of static operands)
//     and erases ops that became dead.
// What it leaves alone: ops inside kiln.fusion regions; every rewrite keeps
// the types of the values it replaces (a replacement must have exactly the
// replaced value's type), so function signatures never change; rewrites
// that would need a dynamic shape are skipped.
//
//===----------------------------------------------------------------------===//

#include "passes/PassDetail.h"
#include "passes/Passes.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace kiln::passes;

namespace {

/// Replaces the single result of `op` by `v` when the types agree exactly.
LogicalResult replaceIfSameType(PatternRewriter &rewriter, Operation *op,
                                Value v) {
  if (!v || op->getNumResults() != 1 ||
      v.getType() != op->getResult(0).getType())
    return failure();
  rewriter.replaceOp(op, v);
  return success();
}

bool hasStaticType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape();
}

bool isReshapeLike(Operation *op) {
  return op && isa<kiln::ReshapeOp, kiln::FlattenOp, kiln::SqueezeOp,
                   kiln::UnsqueezeOp>(op);
}

/// A pattern on the kiln op `name` that skips ops inside fusion regions.
struct KilnPattern : public RewritePattern {
  KilnPattern(StringRef name, MLIRContext *ctx, PatternBenefit benefit = 1)
      : RewritePattern(name, benefit, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const final {
    if (isInsideFusion(op))
      return failure();
    return apply(op, rewriter);
  }
  virtual LogicalResult apply(Operation *op,
                              PatternRewriter &rewriter) const = 0;
};

/// A view, cast, tile or reduction whose result type equals its operand's is
/// the identity.
struct SameTypeIsIdentity : public KilnPattern {
  using KilnPattern::KilnPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    Value x = op->getOperand(0);
    if (!hasStaticType(x))
      return failure();
    return replaceIfSameType(rewriter, op, x);
  }
};

/// transpose with the identity permutation is x; transpose(transpose(x))
/// is one transpose with the composed permutation (or x).
struct SimplifyTranspose : public KilnPattern {
  SimplifyTranspose(MLIRContext *ctx) : KilnPattern("kiln.transpose", ctx) {}
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    auto transpose = cast<kiln::TransposeOp>(op);
    ArrayRef<int64_t> perm = transpose.getPerm();
    auto isIdentity = [](ArrayRef<int64_t> p) {
      for (auto [i, v] : llvm::enumerate(p))
        if (v != static_cast<int64_t>(i))
          return false;
      return true;
    };
    if (isIdentity(perm))
      return replaceIfSameType(rewriter, op, transpose.getX());
    auto inner = transpose.getX().getDefiningOp<kiln::TransposeOp>();
    if (!inner)
      return failure();
    ArrayRef<int64_t> innerPerm = inner.getPerm();
    if (innerPerm.size() != perm.size())
      return failure();
    // out[i] = inner[perm[i]] = x[innerPerm[perm[i]]].
    SmallVector<int64_t> composed;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(innerPerm.size()))
        return failure();
      composed.push_back(innerPerm[p]);
    }
    if (isIdentity(composed))
      return replaceIfSameType(rewriter, op, inner.getX());
    Value merged =
        buildKilnValue(rewriter, op->getLoc(), "kiln.transpose", {inner.getX()},
                       {rewriter.getNamedAttr(
                           "perm", rewriter.getDenseI64ArrayAttr(composed))});
    if (!merged || merged.getType() != op->getResult(0).getType()) {
      if (merged)
        rewriter.eraseOp(merged.getDefiningOp());
      return failure();
    }
    rewriter.replaceOp(op, merged);
    return success();
  }
};

/// A reshape-like op of a reshape-like op is one reshape of the original
/// operand to the (static) result shape.
struct MergeReshapes : public KilnPattern {
  using KilnPattern::KilnPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    Operation *inner = op->getOperand(0).getDefiningOp();
    if (!isReshapeLike(inner) || isInsideFusion(inner))
      return failure();
    Value x = inner->getOperand(0);
    Value result = op->getResult(0);
    if (!hasStaticType(result) || !hasStaticType(x))
      return failure();
    if (x.getType() == result.getType())
      return replaceIfSameType(rewriter, op, x);
    auto type = cast<RankedTensorType>(result.getType());
    Value shape = buildI64Vector(rewriter, op->getLoc(), type.getShape());
    Value merged = buildKilnValue(
        rewriter, op->getLoc(), "kiln.reshape", {x, shape},
        {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(1))});
    if (!merged || merged.getType() != result.getType()) {
      if (merged)
        rewriter.eraseOp(merged.getDefiningOp());
      rewriter.eraseOp(shape.getDefiningOp());
      return failure();
    }
    rewriter.replaceOp(op, merged);
    return success();
  }
};

/// slice with positive constant steps keeping the whole tensor is x.
struct WholeSlice : public KilnPattern {
  WholeSlice(MLIRContext *ctx) : KilnPattern("kiln.slice", ctx) {}
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> steps =
        getConstantInts(op->getOperand(4));
    if (!steps || llvm::any_of(*steps, [](int64_t s) { return s <= 0; }))
      return failure();
    if (!hasStaticType(op->getOperand(0)))
      return failure();
    return replaceIfSameType(rewriter, op, op->getOperand(0));
  }
};

/// pad with constant all-zero pads is x.
struct ZeroPad : public KilnPattern {
  ZeroPad(MLIRContext *ctx) : KilnPattern("kiln.pad", ctx) {}
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> pads =
        getConstantInts(op->getOperand(1));
    if (!pads || llvm::any_of(*pads, [](int64_t p) { return p != 0; }))
      return failure();
    return replaceIfSameType(rewriter, op, op->getOperand(0));
  }
};

/// concat of one operand is the operand.
struct SingleConcat : public KilnPattern {
  SingleConcat(MLIRContext *ctx) : KilnPattern("kiln.concat", ctx) {}
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    if (op->getNumOperands() != 1)
      return failure();
    return replaceIfSameType(rewriter, op, op->getOperand(0));
  }
};

/// gather along one axis by constant indices that are one in-range index (a
/// scalar or a one-element vector) or a run of consecutive ones is a slice of
/// that axis (then a reshape for a scalar index, which drops the axis): a
/// view, which fusions read in place, where the gather is a copy. ViT's
/// q/k/v selection from its packed projection (`select` in PyTorch) and its
/// class-token read are such gathers. Out-of-range indices stay a gather
/// (whose kernel reports them).
struct ConstantIndexGather : public KilnPattern {
  ConstantIndexGather(MLIRContext *ctx) : KilnPattern("kiln.gather", ctx) {}
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    auto gather = cast<kiln::GatherOp>(op);
    Value x = gather.getX();
    if (!hasStaticType(x) || !hasStaticType(gather.getResult()))
      return failure();
    auto xt = cast<RankedTensorType>(x.getType());
    auto it = dyn_cast<RankedTensorType>(gather.getIndices().getType());
    std::optional<SmallVector<int64_t>> indices =
        getConstantInts(gather.getIndices());
    if (!it || it.getRank() > 1 || !indices || indices->empty())
      return failure();
    int64_t axis = gather.getAxis();
    if (axis < 0)
      axis += xt.getRank();
    if (axis < 0 || axis >= xt.getRank())
      return failure();
    int64_t size = xt.getDimSize(axis);
    int64_t first = (*indices)[0] < 0 ? (*indices)[0] + size : (*indices)[0];
    for (auto [k, index] : llvm::enumerate(*indices)) {
      int64_t i = index < 0 ? index + size : index;
      if (i < 0 || i >= size || i != first + static_cast<int64_t>(k))
        return failure();
    }
    Location loc = op->getLoc();
    int64_t count = static_cast<int64_t>(indices->size());
    SmallVector<Operation *> built;
    auto note = [&](Value v) {
      if (v)
        built.push_back(v.getDefiningOp());
      return v;
    };
    SmallVector<Value> operands = {x};
    for (int64_t v : {first, first + count, axis, int64_t(1)})
      operands.push_back(note(buildI64Vector(rewriter, loc, {v})));
    Value result = note(buildKilnValue(rewriter, loc, "kiln.slice", operands));
    auto type = cast<RankedTensorType>(gather.getResult().getType());
    if (result && result.getType() != type)
      result = note(buildKilnValue(
          rewriter, loc, "kiln.reshape",
          {result, note(buildI64Vector(rewriter, loc, type.getShape()))},
          {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(1))}));
    if (!result || result.getType() != type) {
      for (Operation *b : llvm::reverse(built))
        rewriter.eraseOp(b);
      return failure();
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A reduction whose axes operand has no elements but is not a constant (a
/// graph input of type tensor<0xi64>, as ONNX's "default axes" tests give
/// it) reduces over every axis unless noop_with_empty_axes: its axes become
/// the constant [0, rank), which fusion takes (it needs constant axes).
struct EmptyAxesReduction : public KilnPattern {
  using KilnPattern::KilnPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    if (op->getNumOperands() != 2)
      return failure();
    Value axes = op->getOperand(1);
    auto at = dyn_cast<RankedTensorType>(axes.getType());
    auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    auto noop = op->getAttrOfType<IntegerAttr>("noop_with_empty_axes");
    if (!at || !xt || !at.hasStaticShape() || at.getNumElements() != 0 ||
        !noop || noop.getInt() != 0 || getConstantInts(axes))
      return failure();
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < xt.getRank(); ++d)
      all.push_back(d);
    Value constant = buildI64Vector(rewriter, op->getLoc(), all);
    if (!constant)
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op->setOperand(1, constant); });
    return success();
  }
};

/// An op whose every result is a static tensor with no elements computes
/// nothing: its results become empty constants (ops are Pure; one that
/// would reject its operands has no element to reject them for). A kernel
/// for a 0-element output would be a launch of no threads.
struct EmptyResults : public KilnPattern {
  using KilnPattern::KilnPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    if (op->getNumResults() == 0 || op->getNumRegions() != 0)
      return failure();
    SmallVector<Value> constants;
    for (Value r : op->getResults()) {
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (!t || !t.hasStaticShape() || t.getNumElements() != 0)
        return failure();
      constants.push_back(buildConstant(
          rewriter, op->getLoc(), DenseElementsAttr::get(t, ArrayRef<Attribute>{})));
    }
    rewriter.replaceOp(op, constants);
    return success();
  }
};

/// Binary ops with a splat identity constant: x + 0, 0 + x, x - 0, x * 1,
/// 1 * x, x / 1, pow(x, 1).
struct BinaryIdentity : public KilnPattern {
  BinaryIdentity(StringRef name, MLIRContext *ctx, double identity,
                 bool commutative)
      : KilnPattern(name, ctx), identity(identity), commutative(commutative) {}
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    if (getSplatValue(rhs) == identity &&
        succeeded(replaceIfSameType(rewriter, op, lhs)))
      return success();
    if (commutative && getSplatValue(lhs) == identity)
      return replaceIfSameType(rewriter, op, rhs);
    return failure();
  }
  double identity;
  bool commutative;
};

/// f(f(x)) = x for neg, not and bitwise_not.
struct Involution : public KilnPattern {
  using KilnPattern::KilnPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    Operation *inner = op->getOperand(0).getDefiningOp();
    if (!inner || inner->getName() != op->getName())
      return failure();
    return replaceIfSameType(rewriter, op, inner->getOperand(0));
  }
};

struct SimplifyPass
    : public PassWrapper<SimplifyPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SimplifyPass)

  StringRef getArgument() const final { return "kiln-simplify"; }
  StringRef getDescription() const final {
    return "Remove identity views and arithmetic, merge view chains, fold "
           "and erase dead ops";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<kiln::KilnDialect>();
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    for (StringRef name :
         {kiln::ReshapeOp::getOperationName(),
          kiln::FlattenOp::getOperationName(),
          kiln::SqueezeOp::getOperationName(),
          kiln::UnsqueezeOp::getOperationName(),
          kiln::ExpandOp::getOperationName(), kiln::TileOp::getOperationName(),
          kiln::CastOp::getOperationName()})
      patterns.add<SameTypeIsIdentity>(name, ctx, /*benefit=*/2);
    for (RegisteredOperationName name : ctx->getRegisteredOperations())
      if (name.hasTrait<kiln::OpTrait::Reduction>()) {
        patterns.add<SameTypeIsIdentity>(name.getStringRef(), ctx,
                                         /*benefit=*/2);
        patterns.add<EmptyAxesReduction>(name.getStringRef(), ctx);
      }
    for (RegisteredOperationName name : ctx->getRegisteredOperations())
      if (name.getDialectNamespace() == kiln::KilnDialect::getDialectNamespace() &&
          !name.hasTrait<OpTrait::ConstantLike>() &&
          name.getStringRef() != kiln::ConstantOp::getOperationName() &&
          name.getStringRef() != kiln::FusionOp::getOperationName() &&
          name.getStringRef() != kiln::LibraryCallOp::getOperationName())
        patterns.add<EmptyResults>(name.getStringRef(), ctx);
    for (StringRef name : {kiln::ReshapeOp::getOperationName(),
                           kiln::FlattenOp::getOperationName(),
                           kiln::SqueezeOp::getOperationName(),
                           kiln::UnsqueezeOp::getOperationName()})
      patterns.add<MergeReshapes>(name, ctx);
    patterns.add<SimplifyTranspose, WholeSlice, ZeroPad, SingleConcat,
                 ConstantIndexGather>(ctx);
    patterns.add<BinaryIdentity>("kiln.add", ctx, 0.0, true);
    patterns.add<BinaryIdentity>("kiln.sub", ctx, 0.0, false);
    patterns.add<BinaryIdentity>("kiln.mul", ctx, 1.0, true);
    patterns.add<BinaryIdentity>("kiln.div", ctx, 1.0, false);
    patterns.add<BinaryIdentity>("kiln.pow", ctx, 1.0, false);
    for (StringRef name : {"kiln.neg", "kiln.not", "kiln.bitwise_not"})
      patterns.add<Involution>(name, ctx);
    FrozenRewritePatternSet frozen(std::move(patterns));

    applyPatternsOutsideFusions(getOperation(), frozen);
  }
};
} // namespace

std::unique_ptr<Pass> kiln::createSimplifyPass() {
  return std::make_unique<SimplifyPass>();
}
