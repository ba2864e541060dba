//===- FoldEmbeddingProjection.cpp - Project an embedding table once ------===//
//
// This file implements `kiln-fold-embedding-projection`. A row of a matrix
// product depends on one row of its left operand only, so projecting the
// rows an embedding lookup gathered is gathering rows of the projected
// table:
//
//   %e = kiln.gather %table, %ids {axis = 0}     table [V, D], weights
//   %x = views of %e that keep the last dim      [..., D]
//   %y = kiln.add (kiln.matmul %x, %w), %bias    w [D, N], bias [N], weights
//   =>
//   %t = kiln.add (kiln.matmul %table, %w), %bias      [V, N], weights only
//   %y = kiln.gather %t, (the same views of %ids) {axis = 0}
//
// The views (transposes that leave the last dim in place, reshapes that keep
// it) move onto the indices, and the add is taken along when its other
// operand is a weight broadcast along the last dim only. %t reads weights
// only, so kiln-mark-load-time makes it a step of model creation: a run
// gathers rows of N values instead of multiplying [rows, D] by [D, N]. A
// token tagger's recurrent layer is this shape after kiln-split-recurrent
// (the input projection of an embedding: lstm_tagger's first layer, 128 x
// 128 x 1024 per run: 244 us of a 2,609-us profiled run on one thread).
// Each row of %t is the same dot products as before (summed in the GEMM's
// order at load instead of the run's GEMM's), for any index, negative ones
// included.
//
// The table takes V·N elements of the model's memory for as long as it is
// loaded, so the pass folds only when that is at most kMaxTableBytes and at
// most kMaxGrowth times what the table and the weight it replaces hold;
// larger vocabularies keep their matmul.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace kiln {
namespace {

/// The most bytes a projected table may take (the model's memory grows by
/// at most this much per folded lookup).
constexpr int64_t kMaxTableBytes = 16 << 20;
/// The most a projected table may hold, as a multiple of the elements of
/// the table and the weight it replaces.
constexpr int64_t kMaxGrowth = 8;
/// How many ops deep isWeightDerived looks.
constexpr int kMaxWeightDepth = 16;

/// True when `v` is computed from weights only (kiln ops of weights, at most
/// `depth` ops deep): what kiln-mark-load-time runs once, at load.
bool isWeightDerived(Value v, int depth = kMaxWeightDepth) {
  if (passes::isWeight(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth == 0 || def->getNumRegions() != 0 ||
      !isa<KilnDialect>(def->getDialect()) || def->getNumOperands() == 0)
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return isWeightDerived(operand, depth - 1);
  });
}

RankedTensorType staticType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

/// A view between the lookup and the product that keeps the last dim where
/// it is: a transpose whose perm ends with the last dim, or a reshape whose
/// input and result end with the same dim. False when `op` is neither.
bool keepsLastDim(Operation *op) {
  auto in = staticType(op->getOperand(0)), out = staticType(op->getResult(0));
  if (!in || !out || in.getRank() < 2 || out.getRank() < 2 ||
      in.getShape().back() != out.getShape().back())
    return false;
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return transpose.getPerm().back() == in.getRank() - 1;
  return isa<ReshapeOp>(op);
}

struct FoldEmbeddingProjection : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern<MatMulOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp mm,
                                PatternRewriter &rewriter) const override {
    auto wt = staticType(mm.getB()), yt = staticType(mm.getOutput());
    if (!wt || !yt || wt.getRank() != 2 || !isWeightDerived(mm.getB()))
      return failure();
    // The views from the product's left operand up to the lookup, the
    // product's first.
    SmallVector<Operation *> views;
    Value x = mm.getA();
    GatherOp gather;
    while (!(gather = x.getDefiningOp<GatherOp>())) {
      Operation *def = x.getDefiningOp();
      if (!def || !x.hasOneUse() || !keepsLastDim(def))
        return failure();
      views.push_back(def);
      x = def->getOperand(0);
    }
    auto tableType = staticType(gather.getX());
    auto idsType = staticType(gather.getIndices());
    if (gather.getAxis() != 0 || !tableType || !idsType ||
        tableType.getRank() != 2 || idsType.getRank() < 1 ||
        tableType.getElementType() != wt.getElementType() ||
        !isWeightDerived(gather.getX()))
      return failure();
    const int64_t vocab = tableType.getDimSize(0), dim = wt.getDimSize(0),
                  width = wt.getDimSize(1);
    const int64_t elementBytes =
        std::max<int64_t>(1, wt.getElementTypeBitWidth() / 8);
    // (Divisions: the sizes come from the model file.)
    if (vocab < 1 || dim < 1 || width < 1 ||
        width > kMaxTableBytes / elementBytes / vocab ||
        vocab * width > kMaxGrowth * (vocab * dim + dim * width))
      return failure();

    // The bias taken along: an add of a weight that broadcasts along the
    // last dim only ([N], [1, .., 1, N]).
    AddOp add;
    Value bias;
    if (mm->hasOneUse())
      if (auto user = dyn_cast<AddOp>(*mm->getUsers().begin())) {
        Value other =
            user.getLhs() == mm.getOutput() ? user.getRhs() : user.getLhs();
        auto bt = staticType(other);
        if (bt && user.getType() == yt && bt.getNumElements() == width &&
            bt.getShape().back() == width && isWeightDerived(other))
          add = user, bias = other;
      }

    Location loc = mm.getLoc();
    // allowzero: a 0 in a reshape's shape is a zero-size dim, not a copied
    // one (the shapes built here are the exact static ones).
    auto allowZero =
        rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(1));
    Operation *anchor = add ? add.getOperation() : mm.getOperation();
    rewriter.setInsertionPoint(anchor);
    passes::BuildScope scope(rewriter, anchor);
    Value table = passes::buildKilnValue(rewriter, loc, "kiln.matmul",
                                         {gather.getX(), mm.getB()});
    if (table && bias) {
      Value row =
          staticType(bias).getRank() == 1
              ? bias
              : passes::buildKilnValue(
                    rewriter, loc, "kiln.reshape",
                    {bias, passes::buildI64Vector(rewriter, loc, {width})},
                    {allowZero});
      table = row ? passes::buildKilnValue(rewriter, add.getLoc(), "kiln.add",
                                           {table, row})
                  : Value();
    }
    // The views, last dim dropped, on the indices.
    Value ids = gather.getIndices();
    for (Operation *view : llvm::reverse(views)) {
      if (!ids)
        break;
      if (auto transpose = dyn_cast<TransposeOp>(view)) {
        ArrayRef<int64_t> perm = transpose.getPerm().drop_back();
        ids = passes::buildKilnValue(
            rewriter, view->getLoc(), "kiln.transpose", {ids},
            {rewriter.getNamedAttr("perm",
                                   rewriter.getDenseI64ArrayAttr(perm))});
      } else {
        auto shape = staticType(view->getResult(0)).getShape().drop_back();
        ids = passes::buildKilnValue(
            rewriter, view->getLoc(), "kiln.reshape",
            {ids, passes::buildI64Vector(rewriter, view->getLoc(), shape)},
            {allowZero});
      }
    }
    Value y = table && ids
                  ? passes::buildKilnValue(
                        rewriter, gather.getLoc(), "kiln.gather", {table, ids},
                        {rewriter.getNamedAttr("axis",
                                               rewriter.getI64IntegerAttr(0))})
                  : Value();
    if (!y || y.getType() != yt)
      return scope.fail(mm, "the projected lookup did not build");
    if (add)
      rewriter.replaceOp(add, y);
    else
      rewriter.replaceOp(mm, y);
    return success();
  }
};

struct FoldEmbeddingProjectionPass
    : public PassWrapper<FoldEmbeddingProjectionPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FoldEmbeddingProjectionPass)

  StringRef getArgument() const final {
    return "kiln-fold-embedding-projection";
  }
  StringRef getDescription() const final {
    return "A matmul (and bias add) of rows gathered from a weight table by "
           "a weight as a gather from the projected table, which is computed "
           "once, at load";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<KilnDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldEmbeddingProjection>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    passes::applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> createFoldEmbeddingProjectionPass() {
  return std::make_unique<FoldEmbeddingProjectionPass>();
}

} // namespace kiln
