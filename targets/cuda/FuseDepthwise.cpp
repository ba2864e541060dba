//===- FuseDepthwise.cpp - Activations into depthwise convolutions --------===//
//
// This file implements `kiln-cuda-fuse-depthwise`, the CUDA target's
// pre-fusion pass (Target::addPreFusionPasses: after the layout passes and
// their cleanup, right before kiln-fuse): a depthwise kiln.conv
// that the CUDA target runs as its own kernel (CudaDepthwiseConvKernel.cpp)
// takes the activation that produces its input and the one that consumes
// its result into one kiln.depthwise_conv,
//
//   a = relu6(e)          (min(max(e, 0), 6), MobileNet's)
//   d = conv(a, w)        group = channels
//   y = silu(d)           (d * sigmoid(d), EfficientNet's)
//
// becomes `y = kiln.depthwise_conv(e, w) {input_activation = "relu6",
// activation = "silu"}`: the kernel applies them to the elements it loads
// and to its accumulators, so neither activation is a kernel of its own
// and `a` and `d` never reach memory. The activations it recognizes:
// kiln.relu, min(max(v, 0), 6) and max(min(v, 6), 0) (ReLU6),
// kiln.hard_swish, v * sigmoid(v) and kiln.swish with alpha 1 (SiLU; on
// the output only: on the input the kernel would compute it per tap). An
// activation is taken only when no other op reads its intermediate values
// (nor `a`, nor the convolution's result: a training graph, which saves them
// for the backward pass, keeps its ops). `KILN_CUDA_DEPTHWISE_FUSION=0` at
// compile time switches the pass off (to compare).
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaKernel.h"
#include "targets/cuda/CudaTarget.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace kiln {

namespace {

/// An activation written out as ops: its kiln.depthwise_conv name, the
/// value it applies to, and its ops (the root, whose result is the
/// activated value, last).
struct Activation {
  StringRef name;
  Value input;
  SmallVector<Operation *> ops;
};

/// True when `v` is a scalar (rank-0 or splat) kiln.constant equal to
/// `value`.
bool isScalar(Value v, double value) {
  std::optional<double> splat = passes::getSplatValue(v);
  return splat && *splat == value;
}

/// The other operand of binary `op` when one of its operands is a scalar
/// constant equal to `value`; null otherwise.
Value otherThanScalar(Operation *op, double value) {
  if (op->getNumOperands() != 2)
    return Value();
  if (isScalar(op->getOperand(1), value))
    return op->getOperand(0);
  if (isScalar(op->getOperand(0), value))
    return op->getOperand(1);
  return Value();
}

/// ReLU6 as min(max(v, 0), 6) or max(min(v, 6), 0), rooted at `root`.
std::optional<Activation> matchRelu6(Operation *root) {
  auto inner = [&](double outerBound, double innerBound,
                   bool innerIsMax) -> std::optional<Activation> {
    Value mid = otherThanScalar(root, outerBound);
    Operation *def = mid ? mid.getDefiningOp() : nullptr;
    if (!def || (innerIsMax ? !isa<MaxOp>(def) : !isa<MinOp>(def)))
      return std::nullopt;
    Value v = otherThanScalar(def, innerBound);
    if (!v)
      return std::nullopt;
    return Activation{"relu6", v, {def, root}};
  };
  if (isa<MinOp>(root))
    return inner(6.0, 0.0, /*innerIsMax=*/true);
  if (isa<MaxOp>(root))
    return inner(0.0, 6.0, /*innerIsMax=*/false);
  return std::nullopt;
}

/// The activation whose activated value is `v`, or nullopt.
std::optional<Activation> matchActivation(Value v) {
  Operation *root = v.getDefiningOp();
  if (!root)
    return std::nullopt;
  std::optional<Activation> a;
  if (isa<ReluOp>(root))
    a = Activation{"relu", root->getOperand(0), {root}};
  else if (isa<HardSwishOp>(root))
    a = Activation{"hard_swish", root->getOperand(0), {root}};
  else if (auto swish = dyn_cast<SwishOp>(root);
           swish && swish.getAlpha().convertToDouble() == 1.0)
    a = Activation{"silu", root->getOperand(0), {root}};
  else if (isa<MulOp>(root)) {
    // v * sigmoid(v), either operand order.
    for (unsigned i = 0; i < 2 && !a; ++i) {
      auto sigmoid = root->getOperand(i).getDefiningOp<SigmoidOp>();
      if (sigmoid && sigmoid.getX() == root->getOperand(1 - i))
        a = Activation{"silu", root->getOperand(1 - i), {sigmoid, root}};
    }
  } else {
    a = matchRelu6(root);
  }
  // Elementwise on one value: the activated value has the input's type.
  if (!a || a->input.getType() != v.getType())
    return std::nullopt;
  return a;
}

/// True when nothing outside `a`'s ops reads its intermediate values (and,
/// with `closedInput`, its input).
bool isClosed(const Activation &a, bool closedInput) {
  llvm::SmallPtrSet<Operation *, 4> ops(a.ops.begin(), a.ops.end());
  auto usedInside = [&](Value v) {
    return llvm::all_of(v.getUsers(),
                        [&](Operation *user) { return ops.contains(user); });
  };
  for (Operation *op : ArrayRef<Operation *>(a.ops).drop_back())
    if (!llvm::all_of(op->getResults(), usedInside))
      return false;
  return !closedInput || usedInside(a.input);
}

/// The activation that consumes all of `d` (the root is a user of `d` or
/// its user's only user), or nullopt.
std::optional<Activation> findEpilogue(Value d) {
  for (Operation *user : d.getUsers()) {
    SmallVector<Operation *, 2> roots = {user};
    if (user->hasOneUse())
      roots.push_back(*user->getUsers().begin());
    for (Operation *root : roots) {
      if (root->getNumResults() != 1)
        continue;
      std::optional<Activation> a = matchActivation(root->getResult(0));
      if (a && a->input == d && isClosed(*a, /*closedInput=*/true))
        return a;
    }
  }
  return std::nullopt;
}

struct FuseDepthwiseActivations : public OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp conv,
                                PatternRewriter &rewriter) const override {
    if (!cudaDepthwiseConvQualifies(conv))
      return failure();
    // The kernel applies the input activation once per tap, up to 25 times
    // per element: SiLU's exponential costs more there than the pass over
    // memory it saves (efficientnet_b0 on the H200: 1.49 -> 1.61 ms), so
    // only the cheap ones are taken on the input.
    std::optional<Activation> prologue = matchActivation(conv.getX());
    if (prologue && (prologue->name == "silu" || !conv.getX().hasOneUse() ||
                     !isClosed(*prologue, /*closedInput=*/false)))
      prologue.reset();
    std::optional<Activation> epilogue = findEpilogue(conv.getResult());
    if (!prologue && !epilogue)
      return rewriter.notifyMatchFailure(conv, "no activation to take");

    SmallVector<Location> locs = {conv.getLoc()};
    for (const std::optional<Activation> &a : {prologue, epilogue})
      if (a)
        for (Operation *op : a->ops)
          locs.push_back(op->getLoc());
    Value x = prologue ? prologue->input : conv.getX();
    Operation *replaced = epilogue ? epilogue->ops.back() : conv;
    SmallVector<NamedAttribute> attrs(conv->getAttrs());
    attrs.push_back(rewriter.getNamedAttr(
        "input_activation",
        rewriter.getStringAttr(prologue ? prologue->name : "none")));
    attrs.push_back(rewriter.getNamedAttr(
        "activation",
        rewriter.getStringAttr(epilogue ? epilogue->name : "none")));
    rewriter.setInsertionPoint(replaced);
    auto fused = rewriter.create<DepthwiseConvOp>(
        rewriter.getFusedLoc(locs), TypeRange{conv.getType()},
        ValueRange{x, conv.getW()}, attrs);
    rewriter.replaceOp(replaced, fused->getResults());
    if (epilogue) {
      for (Operation *op : llvm::reverse(ArrayRef(epilogue->ops).drop_back()))
        rewriter.eraseOp(op);
      rewriter.eraseOp(conv);
    }
    if (prologue)
      for (Operation *op : llvm::reverse(prologue->ops))
        rewriter.eraseOp(op);
    return success();
  }
};

struct FuseDepthwisePass
    : public PassWrapper<FuseDepthwisePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseDepthwisePass)

  StringRef getArgument() const final { return "kiln-cuda-fuse-depthwise"; }
  StringRef getDescription() const final {
    return "Fold the activations around a depthwise convolution into one "
           "kiln.depthwise_conv, for the CUDA target's depthwise kernel";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<KilnDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseDepthwiseActivations>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    passes::applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> createFuseDepthwisePass() {
  return std::make_unique<FuseDepthwisePass>();
}

} // namespace kiln
