//===- LayoutCleanup.cpp - Cancel transposes through elementwise ops ------===//
//
// This file implements `kiln-layout-cleanup`, greedy patterns that remove
// transposes. What it does:
//   * a transpose of a kiln.constant becomes a constant (evaluated with the
//     runtime's kernel, ConstantEvaluator.h);
//   * transpose(transpose(x)) becomes one transpose, or x when the
//     permutations cancel;
//   * a transpose of an elementwise op (trait Kiln_Elementwise: binary,
//     comparison, unary, cast, where) used only by that transpose moves onto
//     the op's operands when that costs no new transpose: every operand is
//     rank-0 (it stays), or has the full rank and is a transpose (they merge),
//     a constant (it folds) or again such an elementwise op. So transpose(p) ->
//     elementwise chain -> transpose(inverse p) becomes the chain on the
//     original value.
//   * transpose(matmul(a, b)) of the last two dims becomes
//     matmul(transpose(b), transpose(a)) when the matmul has no other user,
//     so those transposes cancel or fold into the GEMM.
// What it leaves alone: other transposes feeding or fed by library-call ops
// (matmul, conv, ...: the library call handles them), elementwise ops with
// other users, operands of lower non-zero rank (broadcasting aligns them to
// the trailing dims, so permuting would change their meaning), ops inside
// kiln.fusion regions. Replacements keep the replaced values' types.
//
//===----------------------------------------------------------------------===//

#include "passes/ConstantEvaluator.h"
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

/// Ops that apply one function per element position (after broadcasting):
/// the elementwise family.
bool isElementwise(Operation *op) {
  return op && op->getNumResults() == 1 &&
         op->hasTrait<kiln::OpTrait::Elementwise>();
}

int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// True when transposing `v` (of rank `rank`) costs no new transpose.
bool isFreeToTranspose(Value v, int64_t rank, int depth) {
  if (rankOf(v) != rank)
    return false;
  Operation *def = v.getDefiningOp();
  if (!def || isInsideFusion(def))
    return false;
  if (isa<kiln::TransposeOp>(def))
    return true;
  if (isa<kiln::ConstantOp>(def))
    return cast<ShapedType>(v.getType()).hasStaticShape() &&
           cast<ShapedType>(v.getType()).getNumElements() <=
               kiln::kMaxFoldElements;
  if (depth == 0 || !isElementwise(def) || !v.hasOneUse())
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return rankOf(operand) == 0 || isFreeToTranspose(operand, rank, depth - 1);
  });
}

struct LayoutPattern : public RewritePattern {
  LayoutPattern(MLIRContext *ctx, PatternBenefit benefit)
      : RewritePattern("kiln.transpose", benefit, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const final {
    if (isInsideFusion(op))
      return failure();
    return apply(cast<kiln::TransposeOp>(op), rewriter);
  }
  virtual LogicalResult apply(kiln::TransposeOp op,
                              PatternRewriter &rewriter) const = 0;
};

/// transpose(constant) -> constant.
struct FoldConstantTranspose : public LayoutPattern {
  FoldConstantTranspose(MLIRContext *ctx) : LayoutPattern(ctx, 3) {}
  LogicalResult apply(kiln::TransposeOp op,
                      PatternRewriter &rewriter) const override {
    if (!isKilnConstant(op.getX()))
      return failure();
    FailureOr<SmallVector<DenseElementsAttr>> value =
        kiln::evaluateOnConstants(op);
    if (failed(value))
      return failure();
    rewriter.replaceOp(op, buildConstant(rewriter, op.getLoc(), (*value)[0]));
    return success();
  }
};

/// transpose(transpose(x)) -> transpose(x) or x.
struct ComposeTransposes : public LayoutPattern {
  ComposeTransposes(MLIRContext *ctx) : LayoutPattern(ctx, 2) {}
  LogicalResult apply(kiln::TransposeOp op,
                      PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<kiln::TransposeOp>();
    if (!inner || isInsideFusion(inner))
      return failure();
    ArrayRef<int64_t> perm = op.getPerm(), innerPerm = inner.getPerm();
    SmallVector<int64_t> composed;
    bool identity = true;
    for (auto [i, p] : llvm::enumerate(perm)) {
      if (p < 0 || p >= static_cast<int64_t>(innerPerm.size()))
        return failure();
      composed.push_back(innerPerm[p]);
      identity &= composed.back() == static_cast<int64_t>(i);
    }
    Type type = op.getType();
    if (identity) {
      if (inner.getX().getType() != type)
        return failure();
      rewriter.replaceOp(op, inner.getX());
      return success();
    }
    Value merged =
        buildKilnValue(rewriter, op.getLoc(), "kiln.transpose", {inner.getX()},
                       {rewriter.getNamedAttr(
                           "perm", rewriter.getDenseI64ArrayAttr(composed))});
    if (!merged || merged.getType() != type) {
      if (merged)
        rewriter.eraseOp(merged.getDefiningOp());
      return failure();
    }
    rewriter.replaceOp(op, merged);
    return success();
  }
};

/// True for a transpose that swaps the last two dims and keeps the others.
static bool swapsLastTwo(ArrayRef<int64_t> perm) {
  int64_t r = static_cast<int64_t>(perm.size());
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2)
    return false;
  for (int64_t i = 0; i + 2 < r; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

/// transpose(matmul(a, b)) -> matmul(transpose(b), transpose(a)) (last two
/// dims; operands of the result's rank, the matmul used only here): the
/// transposes of the operands then cancel with theirs or fold into the GEMM
/// (a backward graph's weight gradient transpose(x^T g) becomes g^T x).
struct SwapTransposedMatmul : public LayoutPattern {
  SwapTransposedMatmul(MLIRContext *ctx) : LayoutPattern(ctx, 1) {}
  LogicalResult apply(kiln::TransposeOp op,
                      PatternRewriter &rewriter) const override {
    auto mm = op.getX().getDefiningOp<kiln::MatMulOp>();
    if (!mm || isInsideFusion(mm) || !mm->hasOneUse() ||
        !swapsLastTwo(op.getPerm()))
      return failure();
    int64_t rank = rankOf(mm.getResult());
    Value a = mm->getOperand(0), b = mm->getOperand(1);
    if (rankOf(a) != rank || rankOf(b) != rank)
      return failure();
    auto perm = rewriter.getNamedAttr("perm",
                                      rewriter.getDenseI64ArrayAttr(op.getPerm()));
    // The new product goes where the matmul was, not where its transpose
    // is: a weight gradient's transpose sits by the return, and a GEMM
    // there would keep its operands (activations) alive through the rest
    // of the backward graph.
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(mm);
    Value bt = buildKilnValue(rewriter, op.getLoc(), "kiln.transpose", {b},
                              {perm});
    Value at = buildKilnValue(rewriter, op.getLoc(), "kiln.transpose", {a},
                              {perm});
    Value product =
        bt && at ? buildKilnValue(rewriter, mm.getLoc(), "kiln.matmul",
                                  {bt, at})
                 : Value();
    if (!product || product.getType() != op.getType())
      return failure();
    rewriter.replaceOp(op, product);
    return success();
  }
};

/// transpose(elementwise(a, b, ...)) -> elementwise(transpose(a), ...).
struct SinkIntoElementwise : public LayoutPattern {
  SinkIntoElementwise(MLIRContext *ctx) : LayoutPattern(ctx, 1) {}
  LogicalResult apply(kiln::TransposeOp op,
                      PatternRewriter &rewriter) const override {
    Operation *producer = op.getX().getDefiningOp();
    int64_t rank = op.getPerm().size();
    if (!isElementwise(producer) || isInsideFusion(producer) ||
        !op.getX().hasOneUse() || rankOf(op.getX()) != rank ||
        !isFreeToTranspose(op.getX(), rank, /*depth=*/8))
      return failure();
    rewriter.setInsertionPoint(op);
    SmallVector<Operation *> created;
    SmallVector<Value> operands;
    bool ok = true;
    for (Value operand : producer->getOperands()) {
      if (rankOf(operand) == 0) {
        operands.push_back(operand);
        continue;
      }
      Value t = buildKilnValue(rewriter, producer->getLoc(), "kiln.transpose",
                               {operand}, op->getAttrs());
      ok &= static_cast<bool>(t);
      if (!t)
        break;
      created.push_back(t.getDefiningOp());
      operands.push_back(t);
    }
    FailureOr<Operation *> moved = failure();
    if (ok)
      moved = buildKilnOp(rewriter, producer->getLoc(),
                          producer->getName().getStringRef(), operands,
                          producer->getAttrs());
    if (failed(moved) || (*moved)->getResult(0).getType() != op.getType()) {
      if (succeeded(moved))
        rewriter.eraseOp(*moved);
      for (Operation *c : llvm::reverse(created))
        rewriter.eraseOp(c);
      return failure();
    }
    rewriter.replaceOp(op, (*moved)->getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

struct LayoutCleanupPass
    : public PassWrapper<LayoutCleanupPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LayoutCleanupPass)

  StringRef getArgument() const final { return "kiln-layout-cleanup"; }
  StringRef getDescription() const final {
    return "Cancel transposes through elementwise chains and fold "
           "transposes of constants";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<kiln::KilnDialect>();
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<FoldConstantTranspose, ComposeTransposes, SinkIntoElementwise,
                 SwapTransposedMatmul>(ctx);
    FrozenRewritePatternSet frozen(std::move(patterns));
    applyPatternsOutsideFusions(getOperation(), frozen);
  }
};
} // namespace

std::unique_ptr<Pass> kiln::createLayoutCleanupPass() {
  return std::make_unique<LayoutCleanupPass>();
}
