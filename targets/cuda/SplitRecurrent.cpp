//===- SplitRecurrent.cpp - A GRU as one GEMM and its recurrence ----------===//
//
// This file implements `kiln-cuda-split-recurrent`, a layout pass of the
// CUDA target: a kiln.gru is two parts of very different shape, the input
// projection W x + Wb of every step, which does not depend on the state,
// and the recurrence. The pass rewrites
//
//   %y, %yh = kiln.gru %x, %w, %r, %b, %lens, %h0
//
// into the projection of all steps and directions as one matmul, a GEMM of
// [seq·batch, input] by [input, num_directions·3·hidden] (the weight's
// transpose runs once, at load or compile time, as every weight transform),
// plus the input bias, then a kiln.gru_recurrence of that projection with
// the recurrence weights, the recurrence half of the bias and the initial
// state (CudaRecurrenceKernel.cpp runs it, a launch per step). It takes a
// GRU with layout 0, linear_before_reset = 1 (the form the recurrence
// kernel computes), static shapes and constant sequence lengths that are
// all the full length (what PyTorch's exported GRUs have); others keep
// their kiln.gru, which runs on the host.
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaTarget.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace kiln {

namespace {

bool hasStaticShape(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape();
}

struct SplitGRU : public OpRewritePattern<GRUOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GRUOp gru,
                                PatternRewriter &rewriter) const override {
    if (gru.getLayout() != 0 || gru.getLinearBeforeReset() != 1 ||
        !llvm::all_of(gru->getOperands(), hasStaticShape) ||
        !llvm::all_of(gru->getResults(), hasStaticShape))
      return failure();
    auto xt = cast<RankedTensorType>(gru.getX().getType());
    int64_t seq = xt.getDimSize(0), batch = xt.getDimSize(1);
    int64_t input = xt.getDimSize(2), hidden = gru.getHiddenSize();
    int64_t dirs = gru.getDirection() == "bidirectional" ? 2 : 1;
    std::optional<SmallVector<int64_t>> lens =
        passes::getConstantInts(gru.getSequenceLens());
    if (!lens || llvm::any_of(*lens, [&](int64_t l) { return l != seq; }) ||
        seq < 1 || batch < 1)
      return failure();
    Location loc = gru.getLoc();
    auto build = [&](StringRef name, ValueRange operands,
                     ArrayRef<NamedAttribute> attrs = {}) {
      return passes::buildKilnValue(rewriter, loc, name, operands, attrs);
    };
    auto vec = [&](ArrayRef<int64_t> values) {
      return passes::buildI64Vector(rewriter, loc, values);
    };
    auto allowZero =
        rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0));
    int64_t gates = dirs * 3 * hidden;
    // xw = x [seq·batch, input] · W^T [input, D·3H] + Wb, as [seq, batch,
    // D·3H].
    Value x2 = build("kiln.reshape", {gru.getX(), vec({seq * batch, input})},
                     {allowZero});
    Value w2 =
        build("kiln.reshape", {gru.getW(), vec({gates, input})}, {allowZero});
    Value wt = build(
        "kiln.transpose", {w2},
        {rewriter.getNamedAttr("perm", rewriter.getDenseI64ArrayAttr({1, 0}))});
    Value xw = build("kiln.matmul", {x2, wt});
    // The bias [D, 6H]: its first 3H of each direction for the input, the
    // last 3H for the recurrence.
    auto half = [&](int64_t start) {
      return build("kiln.slice",
                   {gru.getB(), vec({start}), vec({start + 3 * hidden}),
                    vec({1}), vec({1})});
    };
    Value wb = build("kiln.reshape", {half(0), vec({gates})}, {allowZero});
    Value rb = half(3 * hidden);
    Value biased = build("kiln.add", {xw, wb});
    Value xw3 =
        build("kiln.reshape", {biased, vec({seq, batch, gates})}, {allowZero});
    if (!x2 || !w2 || !wt || !xw || !wb || !rb || !biased || !xw3)
      return rewriter.notifyMatchFailure(gru, "the projection did not build");
    auto recurrence = rewriter.create<GRURecurrenceOp>(
        loc, gru->getResultTypes(), xw3, gru.getR(), rb, gru.getInitialH(),
        gru.getDirectionAttr(), gru.getHiddenSizeAttr(), gru.getClipAttr(),
        gru.getLinearBeforeResetAttr());
    rewriter.replaceOp(gru, recurrence->getResults());
    return success();
  }
};

struct SplitRecurrentPass
    : public PassWrapper<SplitRecurrentPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitRecurrentPass)

  StringRef getArgument() const final { return "kiln-cuda-split-recurrent"; }
  StringRef getDescription() const final {
    return "Split a kiln.gru into its input projection (one matmul over all "
           "steps) and a kiln.gru_recurrence, for the CUDA target";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<KilnDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitGRU>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    passes::applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> createSplitRecurrentPass() {
  return std::make_unique<SplitRecurrentPass>();
}

} // namespace kiln
