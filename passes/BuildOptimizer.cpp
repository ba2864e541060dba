//===- BuildOptimizer.cpp - The parameter update as a graph ---------------===//
//
// This file implements `kiln-build-optimizer`: from the gradients @backward
// returns (results tagged kiln.gradient_of), it builds @optimizer
// (kiln.graph), the update of every parameter written with kiln ops so that
// fusion makes one elementwise kernel of each parameter's update:
//
//   sgd       p' = p - lr (g + wd p)
//   momentum  b' = mu b + g + wd p;  p' = p - lr b'        (PyTorch's SGD)
//   adamw     p1 = p (1 - lr wd);  m' = b1 m + (1 - b1) g;
//             v' = b2 v + (1 - b2) g^2;
//             p' = p1 - lr (m' / (1 - b1^t)) / (sqrt(v' / (1 - b2^t)) + eps)
//
// Arguments, per parameter P in @backward's order: P, "P.grad", then its
// state ("P.momentum"; "P.m", "P.v"); then the run-time scalars "kiln.lr"
// and "kiln.step" (f32, rank 0; t is the 1-based step). Results: "P.next",
// then each state's ".next". The runtime writes them back into P and its
// state (every op is elementwise: reading and writing one buffer is safe).
// Locations name the parameter ("P.update"), so kernels say what they
// update.
//
// With dynamic loss scaling (OptimizerOptions::initialLossScale), two state
// scalars follow kiln.step, kiln.loss_scale_exponent e and
// kiln.loss_scale_good_steps n (results: their ".next"), and the step is
// guarded in the graph, without a host round trip: ok = every gradient is
// finite (the sum of g * 0 over all gradients is 0, not NaN); each update is
// where(ok, update, unchanged); e' = ok ? (n + 1 >= N ? e + 1 : e) : e - 1,
// n' = ok && n + 1 < N ? n + 1 : 0 (N the growth interval): an overflow
// skips the step and halves the scale, N good steps double it.
//
// It also builds @accumulate, gradient accumulation over micro-batches:
// per parameter "P.grad" (a micro-batch's gradient) and "P.grad.sum" (the
// running sum), then kiln.accumulate_scale w and kiln.accumulate_first f;
// results "P.grad.sum.next" = (f > 0.5 ? 0 : sum) + w g, a select rather
// than a product so that the first micro-batch ignores whatever the sum's
// memory held. kiln::Trainer runs it after each micro-batch's backward
// graph and hands the sums to @optimizer as the gradients.
//
//===----------------------------------------------------------------------===//

#include "passes/TrainingPasses.h"

#include "ir/KilnOpBuilder.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace kiln {

std::vector<std::string> optimizerStateSuffixes(StringRef kind) {
  if (kind == "momentum")
    return {".momentum"};
  if (kind == "adamw")
    return {".m", ".v"};
  return {};
}

namespace {

/// Creates the update ops of one parameter.
class UpdateBuilder {
public:
  UpdateBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}
  Value op(StringRef name, ValueRange operands) {
    FailureOr<Operation *> created = createKilnOp(b, loc, name, operands, {});
    assert(succeeded(created) && "an optimizer op failed to build");
    return (*created)->getResult(0);
  }
  Value add(Value x, Value y) { return op("kiln.add", {x, y}); }
  Value sub(Value x, Value y) { return op("kiln.sub", {x, y}); }
  Value mul(Value x, Value y) { return op("kiln.mul", {x, y}); }
  Value div(Value x, Value y) { return op("kiln.div", {x, y}); }
  Value where(Value c, Value x, Value y) { return op("kiln.where", {c, x, y}); }
  /// The sum of every element of `x`, rank 0.
  Value sumAll(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> axes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      axes.push_back(i);
    if (axes.empty())
      return x;
    auto axesType = RankedTensorType::get({type.getRank()}, b.getI64Type());
    Value a = b.create<ConstantOp>(
        loc, axesType, DenseElementsAttr::get(axesType, ArrayRef(axes)));
    FailureOr<Operation *> created = createKilnOp(
        b, loc, "kiln.reduce_sum", {x, a},
        {b.getNamedAttr("keepdims", b.getI64IntegerAttr(0)),
         b.getNamedAttr("noop_with_empty_axes", b.getI64IntegerAttr(0))});
    assert(succeeded(created) && "an optimizer reduction failed to build");
    return (*created)->getResult(0);
  }
  Value scalar(double v, Type elementType) {
    auto type = RankedTensorType::get({}, elementType);
    return b.create<ConstantOp>(
        loc, type,
        DenseElementsAttr::get(type, FloatAttr::get(elementType, v)));
  }

private:
  OpBuilder &b;
  Location loc;
};

struct Parameter {
  std::string name;
  RankedTensorType type;
};

class OptimizerBuilder {
public:
  OptimizerBuilder(ModuleOp module, OptimizerOptions options)
      : module(module), options(std::move(options)) {}
  LogicalResult run();

private:
  SmallVector<Value> update(UpdateBuilder &u, Value p, Value g,
                            ArrayRef<Value> state, Value lr, Value step);
  /// @accumulate, the gradient sums over micro-batches.
  void buildAccumulate(OpBuilder &b, ArrayRef<Parameter> params);
  /// A new function @`name` (kiln.graph) at the module's end, its arguments
  /// and results named (kiln.name); `b` left at the start of its body.
  Block *createGraph(OpBuilder &b, StringRef name, ArrayRef<Type> argTypes,
                     ArrayRef<std::string> argNames, ArrayRef<Type> resultTypes,
                     ArrayRef<std::string> resultNames);

  ModuleOp module;
  OptimizerOptions options;
};

SmallVector<Value> OptimizerBuilder::update(UpdateBuilder &u, Value p, Value g,
                                            ArrayRef<Value> state, Value lr,
                                            Value step) {
  Type et = cast<RankedTensorType>(p.getType()).getElementType();
  auto s = [&](double v) { return u.scalar(v, et); };
  double wd = options.weightDecay;
  if (options.kind == "momentum") {
    Value d = wd != 0 ? u.add(g, u.mul(s(wd), p)) : g;
    Value b = u.add(u.mul(s(options.momentum), state[0]), d);
    return {u.sub(p, u.mul(lr, b)), b};
  }
  if (options.kind == "adamw") {
    double b1 = options.beta1, b2 = options.beta2;
    Value p1 = wd != 0 ? u.sub(p, u.mul(u.mul(lr, s(wd)), p)) : p;
    // One builder call per statement: ops created inside one argument list
    // come out in the host compiler's order of evaluating arguments.
    Value g1 = u.mul(s(1 - b1), g);
    Value m = u.add(u.mul(s(b1), state[0]), g1);
    Value gg = u.mul(g, g);
    Value g2 = u.mul(s(1 - b2), gg);
    Value v = u.add(u.mul(s(b2), state[1]), g2);
    Value p1Power = u.op("kiln.pow", {s(b1), step});
    Value c1 = u.sub(s(1), p1Power);
    Value p2Power = u.op("kiln.pow", {s(b2), step});
    Value c2 = u.sub(s(1), p2Power);
    Value eps = s(options.eps);
    Value denom = u.add(u.op("kiln.sqrt", {u.div(v, c2)}), eps);
    Value next = u.sub(p1, u.div(u.mul(lr, u.div(m, c1)), denom));
    return {next, m, v};
  }
  Value d = wd != 0 ? u.add(g, u.mul(s(wd), p)) : g;
  return {u.sub(p, u.mul(lr, d))};
}

LogicalResult OptimizerBuilder::run() {
  auto backward = module.lookupSymbol<func::FuncOp>("backward");
  if (!backward)
    return module.emitError("no @backward graph to build the optimizer "
                            "from; run kiln-partition first");
  if (options.kind != "sgd" && options.kind != "momentum" &&
      options.kind != "adamw")
    return module.emitError("unknown optimizer '")
           << options.kind << "' (known: sgd, momentum, adamw)";
  MLIRContext *ctx = module.getContext();
  SmallVector<Parameter> params;
  for (unsigned i = 0; i < backward.getNumResults(); ++i) {
    auto of = backward.getResultAttrOfType<StringAttr>(i, kGradientOfAttr);
    if (!of)
      return backward.emitError("result #")
             << i << " of @backward is not a gradient (kiln.gradient_of)";
    auto type = cast<RankedTensorType>(backward.getResultTypes()[i]);
    if (!type.getElementType().isF32())
      return backward.emitError("parameter '")
             << of.getValue() << "' is " << type.getElementType()
             << "; training updates float32 parameters only (mixed "
                "precision is not supported yet): freeze it (--freeze) or "
                "export the model in float32";
    params.push_back({of.getValue().str(), type});
  }
  std::vector<std::string> suffixes = optimizerStateSuffixes(options.kind);
  auto scalarType = RankedTensorType::get({}, Float32Type::get(ctx));

  // The signature: per parameter P, P.grad, its state; then lr and step.
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<std::string> argNames, resultNames;
  for (const Parameter &p : params) {
    argTypes.append(2 + suffixes.size(), p.type);
    argNames.push_back(p.name);
    argNames.push_back(gradientName(p.name));
    resultTypes.append(1 + suffixes.size(), p.type);
    resultNames.push_back(nextName(p.name));
    for (const std::string &suffix : suffixes) {
      argNames.push_back(p.name + suffix);
      resultNames.push_back(nextName(p.name + suffix));
    }
  }
  argTypes.append({scalarType, scalarType});
  argNames.push_back(kLearningRateName);
  argNames.push_back(kStepName);
  bool scaling = options.initialLossScale > 0;
  if (scaling) {
    for (const char *name : {kLossScaleExponentName, kLossScaleGoodStepsName}) {
      argTypes.push_back(scalarType);
      argNames.push_back(name);
      resultTypes.push_back(scalarType);
      resultNames.push_back(nextName(name));
    }
  }

  OpBuilder b(ctx);
  Location fileLoc = FileLineColLoc::get(ctx, "optimizer", 0, 0);
  Block *entry =
      createGraph(b, "optimizer", argTypes, argNames, resultTypes, resultNames);
  entry->getParentOp()->setAttr("kiln.optimizer",
                                b.getStringAttr(options.kind));
  size_t perParam = 2 + suffixes.size();
  size_t scalars = params.size() * perParam;
  Value lr = entry->getArgument(scalars);
  Value step = entry->getArgument(scalars + 1);
  // Loss scaling's guard: are all gradients finite?
  Value ok;
  if (scaling) {
    Location loc = NameLoc::get(b.getStringAttr("loss_scale.check"), fileLoc);
    UpdateBuilder u(b, loc);
    Type f32 = Float32Type::get(ctx);
    Value total = u.scalar(0, f32);
    for (size_t i = 0; i < params.size(); ++i)
      total = u.add(total, u.sumAll(u.mul(entry->getArgument(i * perParam + 1),
                                          u.scalar(0, f32))));
    ok = u.op("kiln.not", {u.op("kiln.is_nan", {total})});
  }
  SmallVector<Value> results;
  for (auto [i, p] : llvm::enumerate(params)) {
    Location loc = FusedLoc::get(
        ctx, {NameLoc::get(b.getStringAttr(p.name + ".update"), fileLoc)},
        b.getStringAttr("Optimizer"));
    UpdateBuilder u(b, loc);
    auto args = entry->getArguments().slice(i * perParam, perParam);
    SmallVector<Value> state(args.begin() + 2, args.end());
    SmallVector<Value> next = update(u, args[0], args[1], state, lr, step);
    if (ok) // an overflow leaves the parameter and its state as they were
      for (auto [j, v] : llvm::enumerate(next))
        v = u.where(ok, v, j == 0 ? args[0] : state[j - 1]);
    llvm::append_range(results, next);
  }
  if (scaling) {
    Location loc = NameLoc::get(b.getStringAttr("loss_scale.update"), fileLoc);
    UpdateBuilder u(b, loc);
    Type f32 = Float32Type::get(ctx);
    Value e = entry->getArgument(scalars + 2);
    Value n = entry->getArgument(scalars + 3);
    Value n1 = u.add(n, u.scalar(1, f32));
    Value grow = u.op(
        "kiln.not",
        {u.op("kiln.less", {n1, u.scalar(static_cast<double>(
                                             options.lossScaleGrowthInterval),
                                         f32)})});
    Value one = u.scalar(1, f32), zero = u.scalar(0, f32);
    Value lower = u.sub(e, one);
    Value raised = u.where(grow, u.add(e, one), e);
    results.push_back(u.where(ok, raised, lower));
    results.push_back(u.where(ok, u.where(grow, zero, n1), zero));
  }
  b.create<func::ReturnOp>(fileLoc, results);
  buildAccumulate(b, params);
  return success();
}

Block *OptimizerBuilder::createGraph(OpBuilder &b, StringRef name,
                                     ArrayRef<Type> argTypes,
                                     ArrayRef<std::string> argNames,
                                     ArrayRef<Type> resultTypes,
                                     ArrayRef<std::string> resultNames) {
  b.setInsertionPointToEnd(module.getBody());
  Location fileLoc = FileLineColLoc::get(b.getContext(), name, 0, 0);
  auto f =
      b.create<func::FuncOp>(NameLoc::get(b.getStringAttr(name), fileLoc), name,
                             b.getFunctionType(argTypes, resultTypes));
  f->setAttr("kiln.graph", b.getUnitAttr());
  Block *entry = f.addEntryBlock();
  for (auto [i, n] : llvm::enumerate(argNames))
    f.setArgAttr(i, "kiln.name", b.getStringAttr(n));
  for (auto [i, n] : llvm::enumerate(resultNames))
    f.setResultAttr(i, "kiln.name", b.getStringAttr(n));
  b.setInsertionPointToEnd(entry);
  return entry;
}

void OptimizerBuilder::buildAccumulate(OpBuilder &b,
                                       ArrayRef<Parameter> params) {
  MLIRContext *ctx = module.getContext();
  auto scalarType = RankedTensorType::get({}, Float32Type::get(ctx));
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<std::string> argNames, resultNames;
  for (const Parameter &p : params) {
    argTypes.append({p.type, p.type});
    argNames.push_back(gradientName(p.name));
    argNames.push_back(gradientName(p.name) + kGradSumSuffix);
    resultTypes.push_back(p.type);
    resultNames.push_back(nextName(gradientName(p.name) + kGradSumSuffix));
  }
  argTypes.append({scalarType, scalarType});
  argNames.push_back(kAccumulateScaleName);
  argNames.push_back(kAccumulateFirstName);
  Location fileLoc = FileLineColLoc::get(ctx, "accumulate", 0, 0);
  Block *entry = createGraph(b, "accumulate", argTypes, argNames, resultTypes,
                             resultNames);
  Value w = entry->getArgument(2 * params.size());
  Value first = entry->getArgument(2 * params.size() + 1);
  SmallVector<Value> results;
  for (auto [i, p] : llvm::enumerate(params)) {
    Location loc = FusedLoc::get(
        ctx, {NameLoc::get(b.getStringAttr(p.name + ".accumulate"), fileLoc)},
        b.getStringAttr("Optimizer"));
    UpdateBuilder u(b, loc);
    Type et = p.type.getElementType();
    Value isFirst = u.op("kiln.greater", {first, u.scalar(0.5, et)});
    Value base =
        u.where(isFirst, u.scalar(0, et), entry->getArgument(2 * i + 1));
    results.push_back(u.add(base, u.mul(w, entry->getArgument(2 * i))));
  }
  b.create<func::ReturnOp>(fileLoc, results);
}

struct BuildOptimizerPass
    : public PassWrapper<BuildOptimizerPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BuildOptimizerPass)
  BuildOptimizerPass() = default;
  BuildOptimizerPass(const BuildOptimizerPass &other) : PassWrapper(other) {}
  explicit BuildOptimizerPass(const OptimizerOptions &o) {
    kind = o.kind;
    momentum = o.momentum;
    beta1 = o.beta1;
    beta2 = o.beta2;
    eps = o.eps;
    weightDecay = o.weightDecay;
    lossScale = o.initialLossScale;
    growthInterval = o.lossScaleGrowthInterval;
  }
  StringRef getArgument() const final { return "kiln-build-optimizer"; }
  StringRef getDescription() const final {
    return "Build @optimizer, the parameter update (sgd, momentum, adamw), "
           "from @backward's gradients";
  }
  void runOnOperation() final {
    OptimizerOptions o{kind, momentum,    beta1,     beta2,
                       eps,  weightDecay, lossScale, growthInterval};
    if (failed(OptimizerBuilder(getOperation(), o).run()))
      signalPassFailure();
  }
  Option<std::string> kind{*this, "kind",
                           llvm::cl::desc("sgd, momentum or adamw"),
                           llvm::cl::init("sgd")};
  Option<double> momentum{*this, "momentum", llvm::cl::init(0.9)};
  Option<double> beta1{*this, "beta1", llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::init(0.999)};
  Option<double> eps{*this, "eps", llvm::cl::init(1e-8)};
  Option<double> weightDecay{*this, "weight-decay", llvm::cl::init(0.0)};
  Option<double> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("Dynamic loss scaling's initial scale (0: off)"),
      llvm::cl::init(0.0)};
  Option<int64_t> growthInterval{
      *this, "loss-scale-growth-interval",
      llvm::cl::desc("Good steps after which the loss scale doubles"),
      llvm::cl::init(2000)};
};

} // namespace

std::unique_ptr<Pass> createBuildOptimizerPass(OptimizerOptions options) {
  return std::make_unique<BuildOptimizerPass>(options);
}

void registerTrainingPasses() {
  registerPass([] { return createAutodiffPass(); });
  registerPass([] { return createPartitionPass(); });
  registerPass([] { return createBuildOptimizerPass(); });
}

} // namespace kiln
