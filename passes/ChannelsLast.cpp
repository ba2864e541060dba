//===- ChannelsLast.cpp - Run convolution networks channels last ----------===//
//
// This file implements `kiln-channels-last`, the layout assignment of the
// CUDA target: 2-D convolutions run in NHWC, where cuDNN's tensor-core
// kernels read and write their operands directly (in NCHW cuDNN transposes
// around every convolution itself: 330 such kernels per ResNet-50 run).
//
//   1. Each top-level f16/bf16 kiln.conv of rank 4 with static shapes (f32
//      too with `include-f32`) becomes
//        transpose<0,3,1,2>(conv {layout = "nhwc"}(transpose<0,2,3,1>(x),
//                                                 transpose<0,2,3,1>(w)))
//      — the same value, computed channels last. The weight's transpose is
//      a constant folded at compile time (kiln-layout-cleanup), or a step run
//      once at load (kiln-mark-load-time) for weights bound at load.
//   2. The transposes back to channels first (perm [0, 3, 1, 2]) then move
//      down the graph, past every op that computes the same thing in either
//      layout:
//        * elementwise ops whose other operands are rank 0, transposes back
//          too, or cheap to transpose: constants (they fold), weights (their
//          transposes run once at load), graph inputs (one transpose at the
//          entry, like a convolution's input) and views of those
//          (isBoundaryValue); one of lower rank is padded with leading 1s
//          first (the tracer's conv bias [C, 1, 1] becomes [1, 1, 1, C]);
//        * kiln.max_pool (it takes layout = "nhwc" itself);
//        * reductions over constant axes with keepdims = 1 (axes remapped).
//      One transpose after such an op replaces those before it, so in a
//      chain conv -> add -> relu -> conv the transpose reaches the next
//      convolution's transpose to channels last (kiln-layout-cleanup cancels
//      the pair).
//   3. A transpose that keeps the order of the dims of size > 1 moves no
//      data and becomes a reshape (ResNet's pooled [N, 1, 1, C] before its
//      classifier, the weights of 1x1 convolutions); a constant's transpose
//      is left to fold.
//
// So a ResNet runs channels last from its first convolution to its pooling,
// with one transpose of the input and none between. f32 convolutions stay
// channels first by default: without TF32 cuDNN runs them on FMA kernels,
// which are slower in NHWC (H200, ResNet-50 batch 64: 22.8 ms NHWC vs 15.8 ms
// NCHW; bf16 2.13 vs 5.84 ms; BENCHMARKS.md). What it leaves alone:
// convolutions of other ranks, dynamic shapes, ops inside kiln.fusion
// regions, elementwise ops with an operand computed per run (the pass adds
// no transpose between two computed values except around a convolution). It is
// a CUDA target pass (Target::addLayoutPasses); the CPU's convolutions stay
// channels first. Run kiln-layout-cleanup and cse after it to fold the weights'
// transposes and cancel the pairs.
//
//===----------------------------------------------------------------------===//

#include "passes/PassDetail.h"
#include "passes/Passes.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace kiln::passes;

namespace {

/// The permutation from channels first to channels last ([0, 2, 3, 1]) and
/// back ([0, 3, 1, 2]), for rank 4.
constexpr int64_t kToLast[] = {0, 2, 3, 1};
constexpr int64_t kToFirst[] = {0, 3, 1, 2};

RankedTensorType rankedType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// True when `v` is a transpose back to channels first (of a rank-4
/// channels-last value) outside fusions.
kiln::TransposeOp backToFirst(Value v) {
  auto t = v.getDefiningOp<kiln::TransposeOp>();
  if (!t || isInsideFusion(t) || t.getPerm() != ArrayRef<int64_t>(kToFirst))
    return nullptr;
  return t;
}

/// True when a transpose of `v` costs nothing per run, or no more than the
/// convolution's own input transpose: a constant (it folds), a graph input
/// or weight (a function argument: weights' transposes run once at load, an
/// input's is one transpose at the graph's entry), or a view (reshape,
/// unsqueeze, ...) of such values (a conv bias [C] reshaped to [1, C, 1, 1]
/// of a model with --weights external).
bool isBoundaryValue(Value v, int depth = 4) {
  if (isa<BlockArgument>(v))
    return isa<func::FuncOp>(v.getParentBlock()->getParentOp());
  Operation *def = v.getDefiningOp();
  if (!def || isInsideFusion(def))
    return false;
  if (isa<kiln::ConstantOp>(def))
    return true;
  return depth > 0 && def->hasTrait<kiln::OpTrait::View>() &&
         llvm::all_of(def->getOperands(), [&](Value operand) {
           return isBoundaryValue(operand, depth - 1);
         });
}

Value buildTranspose(PatternRewriter &rewriter, Location loc, Value x,
                     ArrayRef<int64_t> perm) {
  return buildKilnValue(
      rewriter, loc, "kiln.transpose", {x},
      {rewriter.getNamedAttr("perm", rewriter.getDenseI64ArrayAttr(perm))});
}

/// `v` (of rank 1 to 4, cheap to transpose: isBoundaryValue) as the
/// channels-last operand of a rank-4 elementwise op: a lower rank is first
/// padded with leading 1s (broadcasting aligns it with the trailing dims), a
/// constant reshaped at compile time. Null on failure.
Value operandToChannelsLast(PatternRewriter &rewriter, Location loc, Value v,
                            SmallVectorImpl<Operation *> &created) {
  RankedTensorType t = rankedType(v);
  if (t.getRank() < 4) {
    SmallVector<int64_t> shape(4 - t.getRank(), 1);
    llvm::append_range(shape, t.getShape());
    auto full = RankedTensorType::get(shape, t.getElementType());
    auto dense = dyn_cast_or_null<DenseElementsAttr>(getConstantValue(v));
    if (dense) {
      v = buildConstant(rewriter, loc, dense.reshape(full));
    } else {
      Value s = buildI64Vector(rewriter, loc, shape);
      created.push_back(s.getDefiningOp());
      v = buildKilnValue(
          rewriter, loc, "kiln.reshape", {v, s},
          {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0))});
      if (!v)
        return Value();
    }
    created.push_back(v.getDefiningOp());
  }
  Value last = buildTranspose(rewriter, loc, v, kToLast);
  if (last)
    created.push_back(last.getDefiningOp());
  return last;
}

/// Creates op `name` on `operands` with `attrs` and replaces `op` with
/// transpose<0,3,1,2> of its result; failure (nothing left behind) when the
/// new op does not build or does not give `op`'s type back.
LogicalResult replaceChannelsLast(PatternRewriter &rewriter, Operation *op,
                                  StringRef name, ValueRange operands,
                                  ArrayRef<NamedAttribute> attrs) {
  FailureOr<Operation *> last =
      buildKilnOp(rewriter, op->getLoc(), name, operands, attrs);
  if (failed(last))
    return failure();
  Value back =
      buildTranspose(rewriter, op->getLoc(), (*last)->getResult(0), kToFirst);
  if (!back || back.getType() != op->getResult(0).getType()) {
    if (back)
      rewriter.eraseOp(back.getDefiningOp());
    rewriter.eraseOp(*last);
    return failure();
  }
  rewriter.replaceOp(op, back);
  return success();
}

/// Step 1: conv(x, w) -> back(conv_nhwc(toLast(x), toLast(w))).
struct ConvToChannelsLast : public OpRewritePattern<kiln::ConvOp> {
  ConvToChannelsLast(MLIRContext *ctx, bool includeF32)
      : OpRewritePattern(ctx), includeF32(includeF32) {}
  LogicalResult matchAndRewrite(kiln::ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (conv.getLayout() || isInsideFusion(conv))
      return failure();
    for (Value v : {conv.getX(), conv.getW(), conv.getResult()}) {
      RankedTensorType t = rankedType(v);
      if (!t || t.getRank() != 4 || !t.hasStaticShape())
        return failure();
      Type e = t.getElementType();
      if (!e.isF16() && !e.isBF16() && !(includeF32 && e.isF32()))
        return failure();
    }
    Location loc = conv.getLoc();
    Value x = buildTranspose(rewriter, loc, conv.getX(), kToLast);
    Value w = x ? buildTranspose(rewriter, loc, conv.getW(), kToLast) : Value();
    if (!x || !w)
      return failure();
    SmallVector<NamedAttribute> attrs(conv->getAttrs());
    attrs.push_back(
        rewriter.getNamedAttr("layout", rewriter.getStringAttr("nhwc")));
    if (succeeded(
            replaceChannelsLast(rewriter, conv, "kiln.conv", {x, w}, attrs)))
      return success();
    rewriter.eraseOp(w.getDefiningOp());
    rewriter.eraseOp(x.getDefiningOp());
    return failure();
  }
  bool includeF32;
};

/// Step 2: elementwise(back(a), c, back(b), ...) ->
/// back(elementwise(a, toLast(c), b, ...)).
struct SinkPastElementwise : public RewritePattern {
  SinkPastElementwise(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1 ||
        !op->hasTrait<kiln::OpTrait::Elementwise>() || isInsideFusion(op))
      return failure();
    RankedTensorType resultType = rankedType(op->getResult(0));
    if (!resultType || resultType.getRank() != 4)
      return failure();
    bool anyBack = false;
    for (Value operand : op->getOperands()) {
      RankedTensorType t = rankedType(operand);
      if (!t)
        return failure();
      if (t.getRank() == 0)
        continue;
      if (t.getRank() > 4 || !t.hasStaticShape())
        return failure();
      if (backToFirst(operand))
        anyBack = true;
      else if (!isBoundaryValue(operand))
        return failure();
    }
    if (!anyBack)
      return failure();
    SmallVector<Value> operands;
    SmallVector<Operation *> created;
    for (Value operand : op->getOperands()) {
      if (rankedType(operand).getRank() == 0) {
        operands.push_back(operand);
      } else if (kiln::TransposeOp back = backToFirst(operand)) {
        operands.push_back(back.getX());
      } else {
        Value t =
            operandToChannelsLast(rewriter, op->getLoc(), operand, created);
        if (!t)
          break;
        operands.push_back(t);
      }
    }
    if (operands.size() == op->getNumOperands() &&
        succeeded(replaceChannelsLast(rewriter, op,
                                      op->getName().getStringRef(), operands,
                                      op->getAttrs())))
      return success();
    for (Operation *c : llvm::reverse(created))
      rewriter.eraseOp(c);
    return failure();
  }
};

/// Step 2: max_pool(back(y)) -> back(max_pool_nhwc(y)).
struct SinkPastMaxPool : public OpRewritePattern<kiln::MaxPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(kiln::MaxPoolOp pool,
                                PatternRewriter &rewriter) const override {
    kiln::TransposeOp back = backToFirst(pool.getX());
    if (!back || pool.getLayout() || isInsideFusion(pool) ||
        !isa<FloatType>(rankedType(pool.getX()).getElementType()))
      return failure();
    SmallVector<NamedAttribute> attrs(pool->getAttrs());
    attrs.push_back(
        rewriter.getNamedAttr("layout", rewriter.getStringAttr("nhwc")));
    return replaceChannelsLast(rewriter, pool, "kiln.max_pool", {back.getX()},
                               attrs);
  }
};

/// Step 2: reduce(back(y), axes, keepdims = 1) -> back(reduce(y, axes')).
struct SinkPastReduction : public RewritePattern {
  SinkPastReduction(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasTrait<kiln::OpTrait::Reduction>() || isInsideFusion(op) ||
        op->getNumOperands() != 2 || op->getNumResults() != 1)
      return failure();
    kiln::TransposeOp back = backToFirst(op->getOperand(0));
    auto keepdims = op->getAttrOfType<IntegerAttr>("keepdims");
    std::optional<SmallVector<int64_t>> axes =
        getConstantInts(op->getOperand(1));
    if (!back || !keepdims || keepdims.getInt() != 1 || !axes || axes->empty())
      return failure();
    // Axis a of the channels-first value is axis kToFirst[a] of y.
    SmallVector<int64_t> mapped;
    for (int64_t a : *axes) {
      if (a < -4 || a >= 4)
        return failure();
      mapped.push_back(kToFirst[a < 0 ? a + 4 : a]);
    }
    llvm::sort(mapped);
    Value newAxes = buildI64Vector(rewriter, op->getLoc(), mapped);
    if (succeeded(replaceChannelsLast(rewriter, op,
                                      op->getName().getStringRef(),
                                      {back.getX(), newAxes}, op->getAttrs())))
      return success();
    rewriter.eraseOp(newAxes.getDefiningOp());
    return failure();
  }
};

/// Step 3: a transpose that keeps the order of the dims of size > 1 is a
/// reshape.
struct TransposeOfUnitDimsToReshape
    : public OpRewritePattern<kiln::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(kiln::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType in = rankedType(op.getX()), out = rankedType(op);
    // A constant's transpose folds instead (kiln-layout-cleanup).
    if (isInsideFusion(op) || isKilnConstant(op.getX()) || !in || !out ||
        !in.hasStaticShape() || !out.hasStaticShape())
      return failure();
    int64_t last = -1;
    for (int64_t p : op.getPerm()) {
      if (in.getDimSize(p) == 1)
        continue;
      if (p < last)
        return failure();
      last = p;
    }
    Value shape = buildI64Vector(rewriter, op.getLoc(), out.getShape());
    Value reshaped = buildKilnValue(
        rewriter, op.getLoc(), "kiln.reshape", {op.getX(), shape},
        {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0))});
    if (!reshaped || reshaped.getType() != out) {
      if (reshaped)
        rewriter.eraseOp(reshaped.getDefiningOp());
      rewriter.eraseOp(shape.getDefiningOp());
      return failure();
    }
    rewriter.replaceOp(op, reshaped);
    return success();
  }
};

struct ChannelsLastPass
    : public PassWrapper<ChannelsLastPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ChannelsLastPass)

  ChannelsLastPass() = default;
  ChannelsLastPass(const ChannelsLastPass &other) : PassWrapper(other) {}
  explicit ChannelsLastPass(bool f32) { includeF32 = f32; }

  StringRef getArgument() const final { return "kiln-channels-last"; }
  StringRef getDescription() const final {
    return "Run 2-D convolutions channels last (NHWC) and move the "
           "transposes back to channels first down the graph, past "
           "elementwise ops, max pooling and reductions, until they cancel";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<kiln::KilnDialect>();
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<ConvToChannelsLast>(ctx, includeF32.getValue());
    patterns.add<SinkPastElementwise, SinkPastMaxPool, SinkPastReduction,
                 TransposeOfUnitDimsToReshape>(ctx);
    FrozenRewritePatternSet frozen(std::move(patterns));
    applyPatternsOutsideFusions(getOperation(), frozen);
  }

  Option<bool> includeF32{
      *this, "include-f32",
      llvm::cl::desc("Also run f32 convolutions channels last (slower with "
                     "cuDNN's FMA kernels, which f32 uses without TF32)"),
      llvm::cl::init(false)};
};

} // namespace

std::unique_ptr<Pass> kiln::createChannelsLastPass() {
  return std::make_unique<ChannelsLastPass>();
}

std::unique_ptr<Pass> kiln::createChannelsLastPass(bool includeF32) {
  return std::make_unique<ChannelsLastPass>(includeF32);
}
