//===- Autodiff.cpp - Reverse-mode differentiation of a forward graph -----===//
//
// This file implements `kiln-autodiff`: it turns the forward graph @main
// (tagged kiln.graph; its first result a scalar loss; the parameters to
// train tagged kiln.trainable) into the joint graph — the forward ops, then
// the backward ops that the ops' gradient rules (GradientOpInterface,
// ir/GradientRules.cpp) build in reverse order, seeded by a constant 1
// tagged kiln.grad_seed — returning the loss and one gradient per trainable
// parameter (named "<param>.grad", tagged kiln.gradient_of), like the joint
// graph AOTAutograd traces. Backward ops carry the location of the forward
// op they come from, so dumps and diagnostics name the model node.
//
// What it checks: the loss is a float tensor of one element; the graph is
// one block without control flow; every op a gradient flows through has a
// rule (every op on a path from a parameter to the loss without one is
// reported, naming its node, before failing).
// What it leaves alone: ops no gradient flows through (they stay, for the
// partitioner and DCE to decide); integer and bool values (no gradients).
//
//===----------------------------------------------------------------------===//

#include "passes/GraphBreaks.h"
#include "passes/TrainingPasses.h"

#include "ir/GradientBuilder.h"
#include "ir/GradientInterface.h"
#include "ir/KilnOpBuilder.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace kiln {

std::string gradientName(StringRef name) { return name.str() + ".grad"; }
std::string nextName(StringRef name) { return name.str() + ".next"; }

namespace {

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// "node '/fc1/Gemm' (Gemm)" for diagnostics; empty when unknown.
std::string nodeOf(Operation *op) {
  GraphBreakSource source = getGraphBreakSource(op->getLoc());
  if (source.node.empty())
    return "";
  std::string s = "node '" + source.node + "'";
  if (!source.opType.empty())
    s += " (" + source.opType + ")";
  return s;
}

/// The graph to differentiate: the function tagged kiln.graph, else @main.
func::FuncOp findForwardGraph(ModuleOp module) {
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr("kiln.graph"))
      return f;
  return module.lookupSymbol<func::FuncOp>("main");
}

class Differentiator {
public:
  Differentiator(func::FuncOp f, double initialLossScale)
      : f(f), builder(f.getContext()), initialLossScale(initialLossScale) {}
  LogicalResult run();

private:
  LogicalResult checkGraph(Value &loss);
  void markRequiresGrad();
  LogicalResult checkRules(Value loss);
  LogicalResult differentiate(Operation *op);
  void accumulate(Value v, Value grad, Location loc);

  /// S0 * 2^exponent of type `type` (whose shape broadcasts with []).
  Value lossScale(Value exponent, RankedTensorType type, Location loc);

  func::FuncOp f;
  OpBuilder builder;
  double initialLossScale;
  llvm::DenseSet<Value> requiresGrad;
  llvm::DenseMap<Value, Value> grads;
};

LogicalResult Differentiator::checkGraph(Value &loss) {
  if (!f.getBody().hasOneBlock())
    return f.emitError("the graph to train has control flow (")
           << f.getBody().getBlocks().size() << " blocks)";
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  if (ret.getNumOperands() == 0)
    return f.emitError("the graph to train has no outputs; its first output "
                       "must be the scalar loss");
  loss = ret.getOperand(0);
  auto type = cast<RankedTensorType>(loss.getType());
  if (!isa<FloatType>(type.getElementType()) || !type.hasStaticShape() ||
      type.getNumElements() != 1) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return f.emitError("the first output of the graph to train must be a "
                       "scalar float loss, but it is ")
           << os.str()
           << "; reduce it to one element (e.g. ReduceMean) in the model";
  }
  bool anyTrainable = false;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    anyTrainable |= static_cast<bool>(f.getArgAttr(i, kTrainableAttr));
  if (!anyTrainable)
    return f.emitError("the graph has no trainable parameters (float "
                       "initializers that are not frozen)");
  for (Operation &op : f.getBody().front())
    if (op.getNumRegions() != 0 && !isa<ConstantOp>(op))
      return op.emitError("training graphs cannot hold control flow or "
                          "graph breaks yet: ")
             << op.getName() << " " << nodeOf(&op);
  return success();
}

void Differentiator::markRequiresGrad() {
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (f.getArgAttr(i, kTrainableAttr) && isFloatTensor(f.getArgument(i)))
      requiresGrad.insert(f.getArgument(i));
  for (Operation &op : f.getBody().front()) {
    bool any = llvm::any_of(op.getOperands(),
                            [&](Value v) { return requiresGrad.contains(v); });
    if (any)
      for (Value r : op.getResults())
        if (isFloatTensor(r))
          requiresGrad.insert(r);
  }
}

void Differentiator::accumulate(Value v, Value grad, Location loc) {
  auto [it, inserted] = grads.try_emplace(v, grad);
  if (inserted)
    return;
  FailureOr<Operation *> sum =
      createKilnOp(builder, loc, "kiln.add", {it->second, grad}, {});
  assert(succeeded(sum) && "adding two gradients of one type failed");
  it->second = (*sum)->getResult(0);
}

/// Every op on a path from a trainable parameter to the loss needs a rule:
/// each one without is reported (naming its node), all before failing.
LogicalResult Differentiator::checkRules(Value loss) {
  llvm::DenseSet<Operation *> reachesLoss;
  SmallVector<Value> work = {loss};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !reachesLoss.insert(def).second)
      continue;
    for (Value v : def->getOperands())
      if (requiresGrad.contains(v))
        work.push_back(v);
  }
  bool ok = true;
  for (Operation &op : f.getBody().front()) {
    if (!reachesLoss.contains(&op) || isa<GradientOpInterface>(op) ||
        llvm::none_of(op.getOperands(),
                      [&](Value v) { return requiresGrad.contains(v); }))
      continue;
    std::string node = nodeOf(&op);
    op.emitError("no gradient rule for '")
        << op.getName() << "'" << (node.empty() ? "" : " at " + node)
        << ": the loss depends on trainable parameters through it; freeze "
           "the parameters before it (--freeze) or express it with ops "
           "that have rules (docs/training.md lists them)";
    ok = false;
  }
  return success(ok);
}

LogicalResult Differentiator::differentiate(Operation *op) {
  SmallVector<Value> resultGrads;
  bool anyGrad = false;
  for (Value r : op->getResults()) {
    resultGrads.push_back(grads.lookup(r));
    anyGrad |= static_cast<bool>(resultGrads.back());
  }
  SmallVector<bool> needed;
  bool anyNeeded = false;
  for (Value v : op->getOperands()) {
    needed.push_back(requiresGrad.contains(v));
    anyNeeded |= needed.back();
  }
  if (!anyGrad || !anyNeeded)
    return success();
  // checkRules found every op without a rule before this runs.
  auto rule = cast<GradientOpInterface>(op);
  GradientBuilder gb(builder, op, needed);
  SmallVector<Value> operandGrads(op->getNumOperands());
  if (failed(rule.buildGradients(gb, resultGrads, operandGrads)))
    return failure();
  for (auto [i, grad] : llvm::enumerate(operandGrads)) {
    if (!grad || !needed[i])
      continue;
    Value operand = op->getOperand(i);
    if (grad.getType() != operand.getType())
      return op->emitError("internal error: the gradient rule of '")
             << op->getName() << "' built a " << grad.getType()
             << " gradient for operand #" << i << " of type "
             << operand.getType();
    accumulate(operand, grad, op->getLoc());
  }
  return success();
}

Value Differentiator::lossScale(Value exponent, RankedTensorType type,
                                Location loc) {
  Type et = type.getElementType();
  auto constant = [&](RankedTensorType t, double v) {
    return builder
        .create<ConstantOp>(
            loc, t,
            DenseElementsAttr::get(t, FloatAttr::get(t.getElementType(), v)))
        .getResult();
  };
  auto scalarF32 = RankedTensorType::get({}, builder.getF32Type());
  auto build = [&](StringRef name, ValueRange operands) {
    FailureOr<Operation *> op = createKilnOp(builder, loc, name, operands, {});
    assert(succeeded(op) && "a loss-scale op failed to build");
    return (*op)->getResult(0);
  };
  Value power = build("kiln.pow", {constant(scalarF32, 2.0), exponent});
  if (!et.isF32())
    power = (*createKilnOp(builder, loc, "kiln.cast", {power},
                           {builder.getNamedAttr("to", TypeAttr::get(et))}))
                ->getResult(0);
  return build("kiln.mul", {constant(type, initialLossScale), power});
}

LogicalResult Differentiator::run() {
  Value loss;
  if (failed(checkGraph(loss)))
    return failure();
  markRequiresGrad();
  if (failed(checkRules(loss)))
    return failure();
  Block &body = f.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  builder.setInsertionPoint(ret);

  // The seed: d loss / d loss = 1 (or the loss scale S, the exponent a new
  // argument).
  auto lossType = cast<RankedTensorType>(loss.getType());
  Value exponent;
  if (initialLossScale > 0) {
    auto scalar = RankedTensorType::get({}, builder.getF32Type());
    unsigned at = f.getNumArguments();
    f.insertArgument(
        at, scalar,
        builder.getDictionaryAttr(builder.getNamedAttr(
            "kiln.name", builder.getStringAttr(kLossScaleExponentName))),
        ret.getLoc());
    exponent = f.getArgument(at);
  }
  Operation *seed =
      exponent
          ? lossScale(exponent, lossType, ret.getLoc()).getDefiningOp()
          : builder.create<ConstantOp>(
                ret.getLoc(), lossType,
                DenseElementsAttr::get(
                    lossType, FloatAttr::get(lossType.getElementType(), 1.0)));
  seed->setAttr(kGradSeedAttr, builder.getUnitAttr());
  grads[loss] = seed->getResult(0);

  // Reverse mode over the forward ops, last to first.
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    if (&op != seed)
      forwardOps.push_back(&op);
  for (Operation *op : llvm::reverse(forwardOps))
    if (failed(differentiate(op)))
      return failure();

  // The joint graph returns the loss, then each parameter's gradient.
  SmallVector<Value> results = {loss};
  SmallVector<Type> resultTypes = {loss.getType()};
  SmallVector<std::pair<std::string, std::string>> names;
  for (BlockArgument arg : f.getArguments()) {
    if (!f.getArgAttr(arg.getArgNumber(), kTrainableAttr))
      continue;
    Value grad = grads.lookup(arg);
    if (!grad) { // The loss does not depend on it: a zero gradient.
      auto type = cast<RankedTensorType>(arg.getType());
      grad = builder.create<ConstantOp>(
          arg.getLoc(), type,
          DenseElementsAttr::get(type,
                                 FloatAttr::get(type.getElementType(), 0.0)));
    }
    if (exponent && grad.getDefiningOp<ConstantOp>() == nullptr) {
      // The loss's gradient: the scaled one divided by S.
      auto type = cast<RankedTensorType>(grad.getType());
      FailureOr<Operation *> unscaled = createKilnOp(
          builder, arg.getLoc(), "kiln.div",
          {grad,
           lossScale(exponent, RankedTensorType::get({}, type.getElementType()),
                     arg.getLoc())},
          {});
      if (failed(unscaled))
        return f.emitError("internal error: unscaling a gradient failed");
      grad = (*unscaled)->getResult(0);
    }
    auto name = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name");
    std::string param = name ? name.getValue().str()
                             : "arg" + std::to_string(arg.getArgNumber());
    results.push_back(grad);
    resultTypes.push_back(grad.getType());
    names.push_back({param, gradientName(param)});
  }
  auto lossName = f.getResultAttrOfType<StringAttr>(0, "kiln.name");
  builder.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  f.setType(builder.getFunctionType(f.getArgumentTypes(), resultTypes));
  f.setResultAttr(0, "kiln.name",
                  lossName ? lossName : builder.getStringAttr("loss"));
  for (auto [i, n] : llvm::enumerate(names)) {
    f.setResultAttr(i + 1, "kiln.name", builder.getStringAttr(n.second));
    f.setResultAttr(i + 1, kGradientOfAttr, builder.getStringAttr(n.first));
  }
  f->removeAttr("kiln.graph");
  f->setAttr(kJointAttr, builder.getUnitAttr());
  return success();
}

struct AutodiffPass
    : public PassWrapper<AutodiffPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AutodiffPass)
  StringRef getArgument() const final { return "kiln-autodiff"; }
  StringRef getDescription() const final {
    return "Derive the joint forward + backward graph of a graph with a "
           "loss (reverse mode, by the ops' gradient rules)";
  }
  void runOnOperation() final {
    func::FuncOp f = findForwardGraph(getOperation());
    if (!f) {
      getOperation().emitError("no graph to differentiate (@main)");
      return signalPassFailure();
    }
    if (failed(Differentiator(f, lossScale).run()))
      signalPassFailure();
  }
  AutodiffPass() = default;
  AutodiffPass(const AutodiffPass &other) : PassWrapper(other) {}
  Option<double> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("Dynamic loss scaling from this initial scale (0: off)"),
      llvm::cl::init(0.0)};
};

} // namespace

std::unique_ptr<Pass> createAutodiffPass(double initialLossScale) {
  auto pass = std::make_unique<AutodiffPass>();
  pass->lossScale = initialLossScale;
  return pass;
}

} // namespace kiln
