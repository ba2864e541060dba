//===- SplitReductions.cpp - Two-stage reductions of few outputs ----------===//
//
// This file implements `kiln-split-reductions` (Inductor's split
// reductions): a reduction with few outputs and many inputs per output —
// a loss's mean over a whole batch, a bias gradient's sum over every row —
// gives a kernel too little parallel work (one warp or one thread per
// output walks millions of elements). It becomes two reductions of the same
// kind (sum, mean, max, min, prod: each associative, the mean's parts of
// equal size):
//
//   * over several axes: first the innermost reduced axes (at least 1024
//     elements, some reduced axes left), keeping the dims, then all of the
//     original axes;
//   * over one axis of size S: that axis split as [S / f, f] (f the largest
//     divisor of S up to sqrt(S), at least 16), first over the f part, then
//     over the rest.
//
// It applies when an output has many inputs and there are few outputs: at
// least 512 inputs and fewer than 16384 outputs when the reduced axes are
// strided (a column sum: a thread per output), at least 4096 inputs and
// fewer than 256 outputs when they are the innermost ones (a
// row reduction takes a block per row, so 8192 softmax rows of 8192 already
// fill the GPU: split, they ran at a third of the copy bandwidth); static
// shapes and constant axes given. The first
// stage then has many outputs and fuses with the reduction's prologue. It
// leaves every other reduction alone, and ops inside kiln.fusion regions.
//
//===----------------------------------------------------------------------===//

#include "passes/PassDetail.h"
#include "passes/Passes.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace kiln::passes;

namespace {

constexpr int64_t kMinInputsPerOutput = 4096;
/// Strided reductions take a thread per output: a few thousand outputs of
/// a few thousand inputs each (a channels-last global average pool,
/// [8, 56, 56, 96] over H and W) leave most of the GPU idle.
constexpr int64_t kMinStridedInputsPerOutput = 512;
constexpr int64_t kMaxOutputs = 16384;
constexpr int64_t kMaxContiguousRows = 256;

/// `op`'s kind over `axes` of `x` with `keepdims`.
Value reduce(PatternRewriter &rewriter, Operation *op, Value x,
             ArrayRef<int64_t> axes, bool keepdims) {
  return buildKilnValue(
      rewriter, op->getLoc(), op->getName().getStringRef(),
      {x, buildI64Vector(rewriter, op->getLoc(), axes)},
      {rewriter.getNamedAttr("keepdims",
                             rewriter.getI64IntegerAttr(keepdims ? 1 : 0)),
       rewriter.getNamedAttr("noop_with_empty_axes",
                             rewriter.getI64IntegerAttr(0))});
}

struct SplitReduction : public RewritePattern {
  SplitReduction(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasTrait<kiln::OpTrait::Reduction>() || isInsideFusion(op))
      return failure();
    auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    std::optional<SmallVector<int64_t>> given =
        getConstantInts(op->getOperand(1));
    auto keep = op->getAttrOfType<IntegerAttr>("keepdims");
    auto noop = op->getAttrOfType<IntegerAttr>("noop_with_empty_axes");
    if (!type || !type.hasStaticShape() || !given || !keep || !noop ||
        type.getNumElements() == 0)
      return failure();
    int64_t rank = type.getRank();
    SmallVector<int64_t> axes;
    if (given->empty()) {
      if (noop.getInt())
        return failure();
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    } else {
      for (int64_t a : *given)
        axes.push_back(a < 0 ? a + rank : a);
    }
    llvm::sort(axes);
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    ArrayRef<int64_t> shape = type.getShape();
    int64_t perOutput = 1;
    for (int64_t a : axes) {
      if (a < 0 || a >= rank)
        return failure();
      perOutput *= shape[a];
    }
    int64_t outputs = type.getNumElements() / perOutput;
    // The reduced axes are the innermost ones (size-1 dims aside): each
    // output's inputs are one contiguous row.
    bool contiguousRows = true;
    for (int64_t d = rank - 1, seen = 0;
         d >= 0 && seen < static_cast<int64_t>(axes.size()); --d) {
      bool reduced = llvm::is_contained(axes, d);
      if (reduced)
        ++seen;
      else if (shape[d] != 1)
        contiguousRows = false;
    }
    if (perOutput < (contiguousRows ? kMinInputsPerOutput
                                    : kMinStridedInputsPerOutput) ||
        outputs >= kMaxOutputs ||
        (contiguousRows && outputs >= kMaxContiguousRows))
      return failure();
    bool keepdims = keep.getInt() != 0;
    // Size-1 axes reduce nothing: the split is decided on the others (and
    // a reduction already split has one of those left).
    SmallVector<int64_t> real;
    for (int64_t a : axes)
      if (shape[a] > 1)
        real.push_back(a);
    if (real.empty())
      return failure();
    Value result =
        real.size() > 1
            ? splitAxes(rewriter, op, real, axes, shape, keepdims)
            : splitAxis(rewriter, op, real[0], axes, shape, keepdims);
    if (!result || result.getType() != op->getResult(0).getType())
      return failure();
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Several axes (`real`, each of size > 1; `axes` the op's): the
  /// innermost ones first.
  Value splitAxes(PatternRewriter &rewriter, Operation *op,
                  ArrayRef<int64_t> real, ArrayRef<int64_t> axes,
                  ArrayRef<int64_t> shape, bool keepdims) const {
    SmallVector<int64_t> inner;
    int64_t product = 1;
    for (size_t i = real.size(); i-- > 1 && product < 1024;) {
      inner.insert(inner.begin(), real[i]);
      product *= shape[real[i]];
    }
    Value partial = reduce(rewriter, op, op->getOperand(0), inner, true);
    return partial ? reduce(rewriter, op, partial, axes, keepdims) : Value();
  }

  /// One axis (of size S > 1; `axes` the op's, the others of size 1):
  /// [S / f, f], the f part first.
  Value splitAxis(PatternRewriter &rewriter, Operation *op, int64_t axis,
                  ArrayRef<int64_t> axes, ArrayRef<int64_t> shape,
                  bool keepdims) const {
    // f: the largest divisor of S up to sqrt(S) (both stages then reduce
    // about as many elements), at least 16.
    int64_t size = shape[axis], factor = 0;
    for (int64_t f = 16; f * f <= size; ++f)
      if (size % f == 0)
        factor = f;
    if (!factor)
      return {};
    SmallVector<int64_t> split(shape.begin(), shape.end());
    split[axis] = size / factor;
    split.insert(split.begin() + axis + 1, factor);
    Value reshaped = buildKilnValue(
        rewriter, op->getLoc(), "kiln.reshape",
        {op->getOperand(0), buildI64Vector(rewriter, op->getLoc(), split)},
        {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0))});
    Value partial =
        reshaped ? reduce(rewriter, op, reshaped, {axis + 1}, false) : Value();
    return partial ? reduce(rewriter, op, partial, axes, keepdims) : Value();
  }
};

struct SplitReductionsPass
    : public PassWrapper<SplitReductionsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitReductionsPass)
  StringRef getArgument() const final { return "kiln-split-reductions"; }
  StringRef getDescription() const final {
    return "Split reductions with few outputs and many inputs per output "
           "into two stages";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<kiln::KilnDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitReduction>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> kiln::createSplitReductionsPass() {
  return std::make_unique<SplitReductionsPass>();
}
