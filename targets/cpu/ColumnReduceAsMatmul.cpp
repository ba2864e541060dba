//===- ColumnReduceAsMatmul.cpp - Column sums and means as GEMMs ----------===//
//
// This file implements `kiln-cpu-column-reduce-as-matmul`, a pre-fusion pass
// of the CPU target. A sum or mean of an f32 tensor over a block of
// consecutive dims that leaves the innermost dim alone is a column
// reduction: channels-last convolution networks average over the spatial
// dims of [N, H, W, C] (global average pooling, squeeze-excite), and
// kiln-split-reductions cuts that into a mean over W, then over H. A fused
// C++ kernel runs such a reduction one kept element at a time, its reduced
// loop striding over the rows (EfficientNet-B0's first squeeze-excite mean,
// [1, 112, 112, 32] over W: 2.6 ms on one core). As a matmul it is a batch
// of GEMVs that oneDNN runs along the rows:
//
//   %y = kiln.reduce_mean %x, [axes]          x viewed [outer, R, inner]
//   =>
//   %y = reshape(kiln.matmul(splat 1/R : [1, R], reshape(%x, [outer, R,
//   inner])))
//
// (1 instead of 1/R for a sum). The reduction's producer then runs as a
// kernel of its own (or a oneDNN post-op) instead of inside the reduction's.
// Reductions with fewer than 8 inner elements, other dtypes, dynamic shapes
// or non-constant axes are left alone.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "targets/cpu/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace kiln {
namespace {

/// The fewest kept inner elements for which a column reduction becomes a
/// matmul (below, the fused kernel's strided loop reads whole cache lines).
constexpr int64_t kMinInner = 8;

template <typename ReduceOp>
struct ColumnReduceAsMatmul : public OpRewritePattern<ReduceOp> {
  using OpRewritePattern<ReduceOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    auto yt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!xt || !yt || !xt.hasStaticShape() || !yt.hasStaticShape() ||
        !xt.getElementType().isF32() || xt.getNumElements() == 0)
      return failure();
    std::optional<SmallVector<int64_t>> axes =
        passes::getConstantInts(op->getOperand(1));
    int64_t rank = xt.getRank();
    if (!axes || axes->empty())
      return failure();
    SmallVector<int64_t> sorted;
    for (int64_t a : *axes)
      sorted.push_back(a < 0 ? a + rank : a);
    llvm::sort(sorted);
    // One block of consecutive dims, not the last.
    for (size_t i = 1; i < sorted.size(); ++i)
      if (sorted[i] != sorted[i - 1] + 1)
        return failure();
    int64_t first = sorted.front(), last = sorted.back();
    if (first < 0 || last >= rank - 1)
      return failure();
    ArrayRef<int64_t> shape = xt.getShape();
    auto product = [](ArrayRef<int64_t> dims) {
      int64_t n = 1;
      for (int64_t d : dims)
        n *= d;
      return n;
    };
    int64_t outer = product(shape.take_front(first)),
            reduced = product(shape.slice(first, last - first + 1)),
            inner = product(shape.drop_front(last + 1));
    if (inner < kMinInner || reduced < 2)
      return failure();
    Location loc = op.getLoc();
    passes::BuildScope scope(rewriter, op);
    auto allowZero =
        rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0));
    float weight = isa<ReduceMeanOp>(op) ? 1.f / reduced : 1.f;
    auto wt = RankedTensorType::get({1, reduced}, rewriter.getF32Type());
    Value ones = passes::buildConstant(
        rewriter, loc,
        DenseElementsAttr::get(
            wt, rewriter.getFloatAttr(rewriter.getF32Type(), weight)));
    Value x3 = passes::buildKilnValue(
        rewriter, loc, "kiln.reshape",
        {op->getOperand(0),
         passes::buildI64Vector(rewriter, loc, {outer, reduced, inner})},
        {allowZero});
    Value mm =
        x3 ? passes::buildKilnValue(rewriter, loc, "kiln.matmul", {ones, x3})
           : Value();
    Value y =
        mm ? passes::buildKilnValue(
                 rewriter, loc, "kiln.reshape",
                 {mm, passes::buildI64Vector(rewriter, loc, yt.getShape())},
                 {allowZero})
           : Value();
    if (!y || y.getType() != yt)
      return scope.fail(op, "the matmul did not build");
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct ColumnReduceAsMatmulPass
    : public PassWrapper<ColumnReduceAsMatmulPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ColumnReduceAsMatmulPass)

  StringRef getArgument() const final {
    return "kiln-cpu-column-reduce-as-matmul";
  }
  StringRef getDescription() const final {
    return "An f32 sum or mean over dims before the innermost (a column "
           "reduction, e.g. spatial means of NHWC) as a matmul by a splat "
           "row, for the CPU target";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<KilnDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ColumnReduceAsMatmul<ReduceMeanOp>,
                 ColumnReduceAsMatmul<ReduceSumOp>>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    passes::applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> createColumnReduceAsMatmulPass() {
  return std::make_unique<ColumnReduceAsMatmulPass>();
}

} // namespace kiln
