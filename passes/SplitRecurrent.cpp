//===- SplitRecurrent.cpp - A GRU or LSTM as one GEMM and its recurrence --===//
//
// This file implements `kiln-split-recurrent`, a layout pass of the CPU and
// CUDA targets: a kiln.gru or kiln.lstm is two parts of very different
// shape, the input projection W x + Wb of every step, which does not depend
// on the state, and the recurrence. The pass rewrites
//
//   %y, %yh = kiln.gru %x, %w, %r, %b, %lens, %h0
//
// into the projection of all steps and directions as one matmul, a GEMM of
// [seq·batch, input] by [input, num_directions·3·hidden] (the weight's
// transpose runs once, at load or compile time, as every weight transform),
// plus the input bias, then a kiln.gru_recurrence of that projection with
// the recurrence weights, the recurrence half of the bias and the initial
// state (on CUDA CudaRecurrenceKernel.cpp runs it, a launch per step; on
// the CPU kiln-lower-cpu makes it an onednn.gru_recurrence call). A kiln.lstm
// likewise becomes a matmul with both halves of its bias (Wb + Rb) and a
// kiln.lstm_recurrence of the projection, the recurrence weights, the
// peepholes and both initial states. A batch-first op (layout 1) gets
// transposes of x and the initial states to the recurrence's order and of
// its results back (kernels of their own). The sequence lengths go to the
// recurrence unless they are constants that are all the full length (what
// PyTorch's exported GRUs and LSTMs have): the projection of the steps past
// an entry's length is computed and unused. It takes recurrent ops with
// static shapes (on the CPU, of f32: the only recurrences oneDNN runs
// there); others keep their kiln.gru / kiln.lstm, which run on the host (the
// runtime's reference kernels).
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "passes/Passes.h"

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

/// The checks and the input projection shared by the GRU and LSTM splits.
struct Projection {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batchFirst = false; ///< layout 1: x [batch, seq, input]
  /// The sequence lengths the recurrence takes; null when every sequence is
  /// known to be full length.
  Value lens;
};

/// The dims of a recurrent op that the split takes (static shapes), or
/// nullopt.
std::optional<Projection> splittable(Operation *op, bool f32Only, Value x,
                                     Value lens, int64_t layout, int64_t hidden,
                                     StringRef direction) {
  if ((layout != 0 && layout != 1) ||
      (f32Only &&
       !cast<RankedTensorType>(x.getType()).getElementType().isF32()) ||
      !llvm::all_of(op->getOperands(), hasStaticShape) ||
      !llvm::all_of(op->getResults(), hasStaticShape))
    return std::nullopt;
  auto xt = cast<RankedTensorType>(x.getType());
  Projection p{xt.getDimSize(layout),
               xt.getDimSize(1 - layout),
               xt.getDimSize(2),
               hidden,
               direction == "bidirectional" ? 2 : 1,
               layout == 1,
               lens};
  if (p.seq < 1 || p.batch < 1)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> values = passes::getConstantInts(lens);
  if (values && llvm::all_of(*values, [&](int64_t l) { return l == p.seq; }))
    p.lens = Value();
  return p;
}

/// x [seq, batch, input] · W^T [input, D·gates·H] + `bias` [D·gates·H]:
/// every step's input projection [seq, batch, D·gates·H], one GEMM (a
/// batch of row-major matrices times one matrix; the weight's transpose runs
/// once, at load or compile time) whose bias add a library folds; null when
/// an op does not build.
Value buildProjection(PatternRewriter &rewriter, Location loc,
                      const Projection &p, int64_t gates, Value x, Value w,
                      Value bias) {
  auto build = [&](StringRef name, ValueRange operands,
                   ArrayRef<NamedAttribute> attrs = {}) {
    return passes::buildKilnValue(rewriter, loc, name, operands, attrs);
  };
  auto vec = [&](ArrayRef<int64_t> values) {
    return passes::buildI64Vector(rewriter, loc, values);
  };
  auto allowZero =
      rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0));
  int64_t width = p.dirs * gates * p.hidden;
  Value w2 = build("kiln.reshape", {w, vec({width, p.input})}, {allowZero});
  Value wt = w2 ? build("kiln.transpose", {w2},
                        {rewriter.getNamedAttr(
                            "perm", rewriter.getDenseI64ArrayAttr({1, 0}))})
                : Value();
  Value xw = x && wt ? build("kiln.matmul", {x, wt}) : Value();
  return xw && bias ? build("kiln.add", {xw, bias}) : Value();
}

/// `v` with its first two dims swapped when the op is batch first (x
/// [batch, seq, input] and the states [batch, D, H] to the recurrence's
/// order), or `v`.
Value seqFirst(PatternRewriter &rewriter, Location loc, const Projection &p,
               Value v) {
  if (!p.batchFirst || !v)
    return v;
  return passes::buildKilnValue(
      rewriter, loc, "kiln.transpose", {v},
      {rewriter.getNamedAttr("perm",
                             rewriter.getDenseI64ArrayAttr({1, 0, 2}))});
}

/// The recurrence's result types (y [seq, D, batch, H], then `states` of
/// [D, batch, H]) for the op's `element` type.
SmallVector<Type> recurrenceTypes(const Projection &p, Type element,
                                  unsigned states) {
  SmallVector<Type> types = {
      RankedTensorType::get({p.seq, p.dirs, p.batch, p.hidden}, element)};
  for (unsigned i = 0; i < states; ++i)
    types.push_back(
        RankedTensorType::get({p.dirs, p.batch, p.hidden}, element));
  return types;
}

/// Replaces `op` by the recurrence's results, transposed back to batch first
/// (y to [batch, seq, D, H], the states to [batch, D, H]) when it is; a
/// transpose that does not build erases what `scope` built.
LogicalResult replaceWithResults(PatternRewriter &rewriter,
                                 passes::BuildScope &scope, Operation *op,
                                 const Projection &p, ValueRange results) {
  SmallVector<Value> values(results.begin(), results.end());
  if (p.batchFirst) {
    for (auto [i, v] : llvm::enumerate(values)) {
      SmallVector<int64_t> perm = i == 0 ? SmallVector<int64_t>{2, 0, 1, 3}
                                         : SmallVector<int64_t>{1, 0, 2};
      v = passes::buildKilnValue(
          rewriter, op->getLoc(), "kiln.transpose", {v},
          {rewriter.getNamedAttr("perm", rewriter.getDenseI64ArrayAttr(perm))});
      if (!v || v.getType() != op->getResult(i).getType())
        return scope.fail(op, "the results did not build");
    }
  }
  rewriter.replaceOp(op, values);
  return success();
}

/// `count` values of each direction's row of the bias `b` [D, n], from
/// `start`: [D, count].
Value biasColumns(PatternRewriter &rewriter, Location loc, Value b,
                  int64_t start, int64_t count) {
  auto vec = [&](ArrayRef<int64_t> values) {
    return passes::buildI64Vector(rewriter, loc, values);
  };
  return passes::buildKilnValue(
      rewriter, loc, "kiln.slice",
      {b, vec({start}), vec({start + count}), vec({1}), vec({1})});
}

Value flatten(PatternRewriter &rewriter, Location loc, Value v, int64_t n) {
  if (!v)
    return v;
  return passes::buildKilnValue(
      rewriter, loc, "kiln.reshape",
      {v, passes::buildI64Vector(rewriter, loc, {n})},
      {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0))});
}

struct SplitGRU : public OpRewritePattern<GRUOp> {
  SplitGRU(MLIRContext *ctx, bool f32Only)
      : OpRewritePattern(ctx), f32Only(f32Only) {}
  bool f32Only;

  LogicalResult matchAndRewrite(GRUOp gru,
                                PatternRewriter &rewriter) const override {
    std::optional<Projection> p =
        splittable(gru, f32Only, gru.getX(), gru.getSequenceLens(),
                   gru.getLayout(), gru.getHiddenSize(), gru.getDirection());
    if (!p)
      return failure();
    Location loc = gru.getLoc();
    passes::BuildScope scope(rewriter, gru);
    int64_t H = p->hidden;
    // The bias [D, 6H]: its first 3H of each direction for the input, the
    // last 3H for the recurrence (inside the reset gate's product).
    Value wb =
        flatten(rewriter, loc, biasColumns(rewriter, loc, gru.getB(), 0, 3 * H),
                p->dirs * 3 * H);
    Value rb = biasColumns(rewriter, loc, gru.getB(), 3 * H, 3 * H);
    Value xw = buildProjection(rewriter, loc, *p, 3,
                               seqFirst(rewriter, loc, *p, gru.getX()),
                               gru.getW(), wb);
    Value h0 = seqFirst(rewriter, loc, *p, gru.getInitialH());
    if (!xw || !rb || !h0)
      return scope.fail(gru, "the projection did not build");
    auto recurrence = rewriter.create<GRURecurrenceOp>(
        loc, recurrenceTypes(*p, gru.getY().getType().getElementType(), 1), xw,
        gru.getR(), rb, h0, p->lens, gru.getDirectionAttr(),
        gru.getHiddenSizeAttr(), gru.getClipAttr(),
        gru.getLinearBeforeResetAttr());
    return replaceWithResults(rewriter, scope, gru, *p,
                              recurrence->getResults());
  }
};

struct SplitLSTM : public OpRewritePattern<LSTMOp> {
  SplitLSTM(MLIRContext *ctx, bool f32Only)
      : OpRewritePattern(ctx), f32Only(f32Only) {}
  bool f32Only;

  LogicalResult matchAndRewrite(LSTMOp lstm,
                                PatternRewriter &rewriter) const override {
    std::optional<Projection> p =
        splittable(lstm, f32Only, lstm.getX(), lstm.getSequenceLens(),
                   lstm.getLayout(), lstm.getHiddenSize(), lstm.getDirection());
    if (!p)
      return failure();
    Location loc = lstm.getLoc();
    passes::BuildScope scope(rewriter, lstm);
    int64_t H = p->hidden;
    // Both halves of the bias [D, 8H] (Wb, Rb) add to the projection.
    Value wb = biasColumns(rewriter, loc, lstm.getB(), 0, 4 * H);
    Value rb = biasColumns(rewriter, loc, lstm.getB(), 4 * H, 4 * H);
    Value sum =
        wb && rb ? passes::buildKilnValue(rewriter, loc, "kiln.add", {wb, rb})
                 : Value();
    Value bias = flatten(rewriter, loc, sum, p->dirs * 4 * H);
    Value x = seqFirst(rewriter, loc, *p, lstm.getX());
    Value xw = buildProjection(rewriter, loc, *p, 4, x, lstm.getW(), bias);
    Value h0 = seqFirst(rewriter, loc, *p, lstm.getInitialH());
    Value c0 = seqFirst(rewriter, loc, *p, lstm.getInitialC());
    if (!xw || !h0 || !c0)
      return scope.fail(lstm, "the projection did not build");
    auto recurrence = rewriter.create<LSTMRecurrenceOp>(
        loc, recurrenceTypes(*p, lstm.getY().getType().getElementType(), 2), xw,
        lstm.getR(), lstm.getP(), h0, c0, p->lens, lstm.getDirectionAttr(),
        lstm.getHiddenSizeAttr(), lstm.getClipAttr(),
        lstm.getInputForgetAttr());
    return replaceWithResults(rewriter, scope, lstm, *p,
                              recurrence->getResults());
  }
};

struct SplitRecurrentPass
    : public PassWrapper<SplitRecurrentPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitRecurrentPass)

  SplitRecurrentPass() = default;
  SplitRecurrentPass(const SplitRecurrentPass &other) : PassWrapper(other) {}

  /// Only recurrences of f32 (the CPU target, whose oneDNN recurrence is
  /// f32: splitting a 16-bit one would round its projection for nothing).
  Option<bool> f32Only{*this, "f32-only",
                       llvm::cl::desc("Split only f32 GRUs and LSTMs (the "
                                      "CPU target)"),
                       llvm::cl::init(false)};

  StringRef getArgument() const final { return "kiln-split-recurrent"; }
  StringRef getDescription() const final {
    return "Split a kiln.gru or kiln.lstm into its input projection (one "
           "matmul over all steps) and its recurrence "
           "(kiln.gru_recurrence, kiln.lstm_recurrence), a layout pass of "
           "the CPU and CUDA targets";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<KilnDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitGRU, SplitLSTM>(&getContext(), f32Only);
    FrozenRewritePatternSet frozen(std::move(patterns));
    passes::applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> createSplitRecurrentPass(bool f32Only) {
  auto pass = std::make_unique<SplitRecurrentPass>();
  pass->f32Only = f32Only;
  return pass;
}

} // namespace kiln
