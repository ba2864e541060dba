//===- Decompose.cpp - Composites into fusible primitives -----------------===//
//
// This file implements `kiln-decompose`, which rewrites composite ops into
// the elementwise ops, reductions (constant axes, keepdims = 1) and views
// the kernel generator fuses. What it does, for f32 and f64 operands of
// static shape:
//   * softmax(x, axis): m = reduce_max(x); e = exp(x - m);
//     e / reduce_sum(e); log_softmax: s = x - m; s - log(reduce_sum(exp(s)));
//   * layer_norm(x, scale, bias, axis, eps): mean = reduce_mean(x);
//     d = x - mean; inv = reciprocal(sqrt(reduce_mean(d * d) + eps));
//     y = d * inv * scale + bias; the mean and inv_std_dev results are
//     produced too (they have x's dtype for f32/f64 inputs);
//   * rms_norm: x * reciprocal(sqrt(reduce_mean(x * x) + eps)) * scale;
//   * batch_norm (inference): (x - mean) * (scale / sqrt(var + eps)) + bias,
//     the per-channel vectors reshaped to [C, 1, ...];
//   * instance_norm, group_norm: the statistics over the spatial dims (per
//     group: x reshaped to [N, G, C/G * spatial] and back), then the
//     per-channel scale and bias;
//   * gelu: the erf form 0.5 * x * (1 + erf(x / sqrt(2))) and the tanh form
//     0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)));
//   * split (any dtype): one slice per result (views fuse into kernels).
// A composite of f16/bf16 operands is computed as the reference does: its
// half operands are cast to f32, the f32 composite is decomposed, and each
// result is cast back once (one rounding, not one per step).
// Afterwards the sub-expressions whose operands are all constants (e.g.
// batch_norm's scale / sqrt(var + eps) for a trained model) are folded with
// the runtime's kernels (ConstantEvaluator.h).
// What it leaves alone: library-call ops (matmul, conv, conv_transpose,
// pooling, gather, ...), hardmax, the elementwise activations the kernel
// generator supports directly (hard_sigmoid, hard_swish, softplus, mish,
// selu, celu, elu, leaky_relu, prelu, swish, softsign, thresholded_relu),
// dynamic or empty
// shapes, parameters of unexpected shape or dtype, ops inside kiln.fusion
// regions. A decomposition produces exactly the replaced results' types.
//
//===----------------------------------------------------------------------===//

#include "passes/ConstantEvaluator.h"
#include "passes/PassDetail.h"
#include "passes/Passes.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;
using namespace kiln::passes;

namespace {

/// Emits a decomposition op by op; any failure (a type that does not infer)
/// makes the whole rewrite a no-op: the ops created so far are erased.
struct Emitter {
  Emitter(PatternRewriter &rewriter, Operation *op)
      : rewriter(rewriter), loc(op->getLoc()),
        elem(cast<RankedTensorType>(op->getOperand(0).getType())
                 .getElementType()) {
    rewriter.setInsertionPoint(op);
  }

  Value op(StringRef name, ValueRange operands,
           ArrayRef<NamedAttribute> attrs = {}) {
    if (failed || llvm::any_of(operands, [](Value v) { return !v; })) {
      failed = true;
      return Value();
    }
    FailureOr<Operation *> created =
        buildKilnOp(rewriter, loc, name, operands, attrs);
    if (mlir::failed(created) || (*created)->getNumResults() != 1) {
      failed = true;
      return Value();
    }
    ops.push_back(*created);
    return (*created)->getResult(0);
  }
  Value binary(StringRef name, Value a, Value b) {
    return op(("kiln." + name).str(), {a, b});
  }
  Value unary(StringRef name, Value a) {
    return op(("kiln." + name).str(), {a});
  }
  /// A rank-0 constant of the op's element type.
  Value scalar(double value) {
    Value c = buildFloatScalar(rewriter, loc, elem, value);
    ops.push_back(c.getDefiningOp());
    return c;
  }
  Value i64s(ArrayRef<int64_t> values) {
    Value c = buildI64Vector(rewriter, loc, values);
    ops.push_back(c.getDefiningOp());
    return c;
  }
  /// reduce_<kind>(x, axes) with keepdims = 1.
  Value reduce(StringRef kind, Value x, ArrayRef<int64_t> axes) {
    return op(("kiln.reduce_" + kind).str(), {x, i64s(axes)},
              {rewriter.getNamedAttr("keepdims", rewriter.getI64IntegerAttr(1)),
               rewriter.getNamedAttr("noop_with_empty_axes",
                                     rewriter.getI64IntegerAttr(0))});
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    if (!x)
      return Value();
    if (cast<RankedTensorType>(x.getType()).getShape() == shape)
      return x;
    return op(
        "kiln.reshape", {x, i64s(shape)},
        {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(1))});
  }
  /// Normalizes x over `axes`: (x - mean) * inv, inv = 1 / sqrt(var + eps).
  /// Returns {normalized, mean, inv}.
  std::array<Value, 3> normalize(Value x, ArrayRef<int64_t> axes, double eps) {
    Value mean = reduce("mean", x, axes);
    Value d = binary("sub", x, mean);
    Value var = reduce("mean", binary("mul", d, d), axes);
    Value inv =
        unary("reciprocal", unary("sqrt", binary("add", var, scalar(eps))));
    return {binary("mul", d, inv), mean, inv};
  }

  /// Replaces `root` by `results` when every step succeeded and the types
  /// agree; otherwise erases what was created.
  LogicalResult finish(Operation *root, ArrayRef<Value> results) {
    bool ok = !failed && results.size() == root->getNumResults();
    for (size_t i = 0; ok && i < results.size(); ++i)
      ok = results[i] && results[i].getType() == root->getResult(i).getType();
    if (!ok) {
      for (Operation *o : llvm::reverse(ops))
        rewriter.eraseOp(o);
      return failure();
    }
    rewriter.replaceOp(root, results);
    return success();
  }

  PatternRewriter &rewriter;
  Location loc;
  Type elem;
  SmallVector<Operation *> ops;
  bool failed = false;
};

/// The first operand's type when it is a static, non-empty f32/f64 tensor.
RankedTensorType decomposableType(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() == 0 ||
      !(type.getElementType().isF32() || type.getElementType().isF64()))
    return {};
  for (Value v : op->getOperands())
    if (cast<ShapedType>(v.getType()).getElementType() != type.getElementType())
      return {};
  return type;
}

double epsilonOf(Operation *op) {
  return cast<FloatAttr>(op->getAttr("epsilon")).getValueAsDouble();
}
int64_t intAttr(Operation *op, StringRef name) {
  return cast<IntegerAttr>(op->getAttr(name)).getInt();
}
SmallVector<int64_t> range(int64_t begin, int64_t end) {
  SmallVector<int64_t> r;
  for (int64_t i = begin; i < end; ++i)
    r.push_back(i);
  return r;
}

/// A per-channel vector of C elements reshaped to [C, 1, ...] for a tensor
/// of rank `rank` with the channels on axis 1; null when it has another size.
Value channelVector(Emitter &e, Value v, int64_t c, int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.hasStaticShape() || type.getNumElements() != c) {
    e.failed = true;
    return Value();
  }
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = c;
  return e.reshape(v, shape);
}

struct DecomposePattern : public RewritePattern {
  DecomposePattern(StringRef name, MLIRContext *ctx)
      : RewritePattern(name, 1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const final {
    if (isInsideFusion(op))
      return failure();
    if (anyDtype()) {
      auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
      if (!type || !type.hasStaticShape())
        return failure();
      return decompose(op, type, rewriter);
    }
    if (RankedTensorType type = decomposableType(op))
      return decompose(op, type, rewriter);
    return decomposeInF32(op, rewriter);
  }
  virtual LogicalResult decompose(Operation *op, RankedTensorType type,
                                  PatternRewriter &rewriter) const = 0;
  /// True for decompositions that only move data (any dtype).
  virtual bool anyDtype() const { return false; }

private:
  /// f16/bf16: cast the half operands to f32, decompose the f32 op, cast the
  /// results back to their types. The f32 op replaces `op` first, so the
  /// decomposition (which replaces the f32 op) reaches `op`'s users; if it
  /// does not apply, the f32 op stays (same results, one rounding).
  LogicalResult decomposeInF32(Operation *op, PatternRewriter &rewriter) const {
    auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() == 0 ||
        !(type.getElementType().isF16() || type.getElementType().isBF16()))
      return failure();
    Type half = type.getElementType();
    rewriter.setInsertionPoint(op);
    SmallVector<Operation *> created;
    auto castTo = [&](Value v, Type to) -> Value {
      FailureOr<Operation *> c =
          buildKilnOp(rewriter, op->getLoc(), "kiln.cast", {v},
                      {rewriter.getNamedAttr("to", TypeAttr::get(to))});
      if (failed(c))
        return Value();
      created.push_back(*c);
      return (*c)->getResult(0);
    };
    auto undo = [&]() {
      for (Operation *o : llvm::reverse(created))
        rewriter.eraseOp(o);
      return failure();
    };
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      bool isHalf = cast<ShapedType>(v.getType()).getElementType() == half;
      operands.push_back(isHalf ? castTo(v, rewriter.getF32Type()) : v);
      if (!operands.back())
        return undo();
    }
    FailureOr<Operation *> wide =
        buildKilnOp(rewriter, op->getLoc(), op->getName().getStringRef(),
                    operands, op->getAttrs());
    if (failed(wide) || (*wide)->getNumResults() != op->getNumResults())
      return undo();
    created.push_back(*wide);
    SmallVector<Value> results;
    for (auto [r, w] : llvm::zip(op->getResults(), (*wide)->getResults())) {
      Type want = cast<ShapedType>(r.getType()).getElementType();
      Value v = cast<ShapedType>(w.getType()).getElementType() == want
                    ? Value(w)
                    : castTo(w, want);
      if (!v || v.getType() != r.getType())
        return undo();
      results.push_back(v);
    }
    rewriter.replaceOp(op, results);
    if (RankedTensorType wideType = decomposableType(*wide))
      (void)decompose(*wide, wideType, rewriter);
    return success();
  }
};

struct DecomposeSoftmax : public DecomposePattern {
  using DecomposePattern::DecomposePattern;
  LogicalResult decompose(Operation *op, RankedTensorType type,
                          PatternRewriter &rewriter) const override {
    int64_t axis = intAttr(op, "axis");
    if (axis < 0 || axis >= type.getRank())
      return failure();
    bool log = op->getName().getStringRef() == "kiln.log_softmax";
    Emitter e(rewriter, op);
    Value x = op->getOperand(0);
    Value shifted = e.binary("sub", x, e.reduce("max", x, {axis}));
    Value exp = e.unary("exp", shifted);
    Value sum = e.reduce("sum", exp, {axis});
    Value y = log ? e.binary("sub", shifted, e.unary("log", sum))
                  : e.binary("div", exp, sum);
    return e.finish(op, {y});
  }
};

struct DecomposeLayerNorm : public DecomposePattern {
  using DecomposePattern::DecomposePattern;
  LogicalResult decompose(Operation *op, RankedTensorType type,
                          PatternRewriter &rewriter) const override {
    int64_t axis = intAttr(op, "axis");
    if (axis < 0 || axis >= type.getRank())
      return failure();
    Emitter e(rewriter, op);
    auto [n, mean, inv] = e.normalize(
        op->getOperand(0), range(axis, type.getRank()), epsilonOf(op));
    Value y = e.binary("add", e.binary("mul", n, op->getOperand(1)),
                       op->getOperand(2));
    return e.finish(op, {y, mean, inv});
  }
};

struct DecomposeRMSNorm : public DecomposePattern {
  using DecomposePattern::DecomposePattern;
  LogicalResult decompose(Operation *op, RankedTensorType type,
                          PatternRewriter &rewriter) const override {
    int64_t axis = intAttr(op, "axis");
    if (axis < 0 || axis >= type.getRank())
      return failure();
    Emitter e(rewriter, op);
    Value x = op->getOperand(0);
    Value ms =
        e.reduce("mean", e.binary("mul", x, x), range(axis, type.getRank()));
    Value inv =
        e.unary("reciprocal",
                e.unary("sqrt", e.binary("add", ms, e.scalar(epsilonOf(op)))));
    Value y = e.binary("mul", e.binary("mul", x, inv), op->getOperand(1));
    return e.finish(op, {y});
  }
};

struct DecomposeBatchNorm : public DecomposePattern {
  using DecomposePattern::DecomposePattern;
  LogicalResult decompose(Operation *op, RankedTensorType type,
                          PatternRewriter &rewriter) const override {
    int64_t rank = type.getRank();
    if (rank < 2)
      return failure();
    int64_t c = type.getDimSize(1);
    Emitter e(rewriter, op);
    Value scale = channelVector(e, op->getOperand(1), c, rank);
    Value bias = channelVector(e, op->getOperand(2), c, rank);
    Value mean = channelVector(e, op->getOperand(3), c, rank);
    Value var = channelVector(e, op->getOperand(4), c, rank);
    Value a = e.binary(
        "div", scale,
        e.unary("sqrt", e.binary("add", var, e.scalar(epsilonOf(op)))));
    Value y = e.binary(
        "add", e.binary("mul", e.binary("sub", op->getOperand(0), mean), a),
        bias);
    return e.finish(op, {y});
  }
};

/// instance_norm and group_norm.
struct DecomposeGroupNorm : public DecomposePattern {
  using DecomposePattern::DecomposePattern;
  LogicalResult decompose(Operation *op, RankedTensorType type,
                          PatternRewriter &rewriter) const override {
    int64_t rank = type.getRank();
    if (rank < 3)
      return failure();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t n = shape[0], c = shape[1];
    int64_t groups = c;
    if (op->getName().getStringRef() == "kiln.group_norm")
      groups = intAttr(op, "num_groups");
    if (groups <= 0 || c % groups != 0)
      return failure();
    int64_t spatial = type.getNumElements() / (n * c);
    Emitter e(rewriter, op);
    Value x = op->getOperand(0);
    Value normalized;
    if (groups == c) {
      normalized = e.normalize(x, range(2, rank), epsilonOf(op))[0];
    } else {
      Value grouped = e.reshape(x, {n, groups, (c / groups) * spatial});
      normalized =
          e.reshape(e.normalize(grouped, {2}, epsilonOf(op))[0], shape);
    }
    Value scale = channelVector(e, op->getOperand(1), c, rank);
    Value bias = channelVector(e, op->getOperand(2), c, rank);
    Value y = e.binary("add", e.binary("mul", normalized, scale), bias);
    return e.finish(op, {y});
  }
};

/// split(x, sizes, axis) -> one slice per result: slices are views, which
/// fuse into their consumers' kernels as index arithmetic.
struct DecomposeSplit : public DecomposePattern {
  using DecomposePattern::DecomposePattern;
  bool anyDtype() const override { return true; }
  LogicalResult decompose(Operation *op, RankedTensorType type,
                          PatternRewriter &rewriter) const override {
    int64_t axis = intAttr(op, "axis");
    if (axis < 0 || axis >= type.getRank())
      return failure();
    Emitter e(rewriter, op);
    SmallVector<Value> slices;
    int64_t offset = 0;
    for (Value r : op->getResults()) {
      auto rt = dyn_cast<RankedTensorType>(r.getType());
      if (!rt || !rt.hasStaticShape())
        return e.finish(op, {});
      int64_t size = rt.getDimSize(axis);
      slices.push_back(e.op("kiln.slice", {op->getOperand(0), e.i64s({offset}),
                                           e.i64s({offset + size}),
                                           e.i64s({axis}), e.i64s({1})}));
      offset += size;
    }
    return e.finish(op, slices);
  }
};

struct DecomposeGelu : public DecomposePattern {
  using DecomposePattern::DecomposePattern;
  LogicalResult decompose(Operation *op, RankedTensorType type,
                          PatternRewriter &rewriter) const override {
    auto approximate = op->getAttrOfType<StringAttr>("approximate");
    if (!approximate ||
        (approximate.getValue() != "none" && approximate.getValue() != "tanh"))
      return failure();
    Emitter e(rewriter, op);
    Value x = op->getOperand(0);
    Value inner;
    if (approximate.getValue() == "tanh") {
      Value cube = e.binary("mul", e.binary("mul", x, x), x);
      Value poly =
          e.binary("add", x, e.binary("mul", e.scalar(0.044715), cube));
      inner =
          e.unary("tanh", e.binary("mul", e.scalar(0.7978845608028654), poly));
    } else {
      inner = e.unary("erf", e.binary("mul", x, e.scalar(0.7071067811865476)));
    }
    Value onePlus = e.binary("add", e.scalar(1.0), inner);
    Value y = e.binary("mul", e.binary("mul", e.scalar(0.5), x), onePlus);
    return e.finish(op, {y});
  }
};

struct DecomposePass
    : public PassWrapper<DecomposePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DecomposePass)

  StringRef getArgument() const final { return "kiln-decompose"; }
  StringRef getDescription() const final {
    return "Rewrite softmax, normalizations and gelu into elementwise ops, "
           "reductions and views";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<kiln::KilnDialect>();
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    llvm::StringMap<std::unique_ptr<DecomposePattern>> patterns;
    auto add = [&](StringRef name, auto *pattern) {
      patterns[name] = std::unique_ptr<DecomposePattern>(pattern);
    };
    add("kiln.softmax", new DecomposeSoftmax("kiln.softmax", ctx));
    add("kiln.log_softmax", new DecomposeSoftmax("kiln.log_softmax", ctx));
    add("kiln.layer_norm", new DecomposeLayerNorm("kiln.layer_norm", ctx));
    add("kiln.rms_norm", new DecomposeRMSNorm("kiln.rms_norm", ctx));
    add("kiln.batch_norm", new DecomposeBatchNorm("kiln.batch_norm", ctx));
    add("kiln.instance_norm",
        new DecomposeGroupNorm("kiln.instance_norm", ctx));
    add("kiln.group_norm", new DecomposeGroupNorm("kiln.group_norm", ctx));
    add("kiln.gelu", new DecomposeGelu("kiln.gelu", ctx));
    add("kiln.split", new DecomposeSplit("kiln.split", ctx));

    // Each composite once, in program order; nothing else is touched.
    SmallVector<Operation *> composites;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op->getName().getStringRef() == "kiln.fusion")
        return WalkResult::skip();
      if (patterns.count(op->getName().getStringRef()))
        composites.push_back(op);
      return WalkResult::advance();
    });
    PatternRewriter rewriter(ctx);
    for (Operation *op : composites)
      (void)patterns[op->getName().getStringRef()]->matchAndRewrite(op,
                                                                    rewriter);
    kiln::foldConstantOps(getOperation(), kiln::kMaxFoldElements);
  }
};
} // namespace

std::unique_ptr<Pass> kiln::createDecomposePass() {
  return std::make_unique<DecomposePass>();
}
