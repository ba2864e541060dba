//===- PlanGraphBreaks.cpp - Split a traced program at its graph breaks ---===//
//
// This file implements `kiln-plan-graph-breaks`, which turns a traced module
// whose `@main` cannot be compiled whole into a program: compiled graphs
// (`func.func @graph_<N>` tagged `kiln.graph`, called with `func.call`),
// graph breaks (`kiln.eager` regions, each with a reason, a detail and a
// hint) and the control flow between them (`kiln.if`, `kiln.loop`, whose
// regions are planned the same way). `@main` is then tagged `kiln.program`.
//
// An op breaks the graph (classifyGraphBreak) when
//  - no code generator of the target compiles it (`EagerOnly` ops):
//    "unsupported-op";
//  - an output's size depends on tensor values (NonZero; a Reshape whose
//    shape is computed at run time): "data-dependent-shape";
//  - an operand's size is only known at run time (it comes from such an
//    op): "dynamic-shape".
// Constants never break; they are cloned into every graph or region that
// reads them.
//
// Each block (main's, and each region of an if or loop) is scheduled
// greedily so that breaks group together: ops of the current kind (compiled
// or eager) are taken in program order while any is ready; then the kind of
// the earliest ready op is next. Control-flow ops stand alone. Each run of
// compiled ops is outlined into a graph whose inputs are the values it reads
// from outside and whose outputs are the values read after it; each run of
// eager ops becomes one kiln.eager region named after its first op's
// reason. A module without breaks or control flow is left unchanged (one
// graph: the fast path).
//
//===----------------------------------------------------------------------===//

#include "passes/GraphBreaks.h"
#include "passes/PassDetail.h"
#include "passes/TensorConversion.h"

#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <set>

using namespace mlir;

namespace kiln {

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

GraphBreakSource getGraphBreakSource(Location loc) {
  GraphBreakSource source;
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto type = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      source.opType = type.getValue().str();
    for (Location inner : fused.getLocations()) {
      GraphBreakSource innerSource = getGraphBreakSource(inner);
      if (!innerSource.node.empty()) {
        source.node = innerSource.node;
        source.file = innerSource.file;
        source.line = innerSource.line;
        break;
      }
    }
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    source.node = name.getName().str();
    if (auto file = dyn_cast<FileLineColLoc>(name.getChildLoc())) {
      source.file = file.getFilename().str();
      source.line = file.getLine();
    }
  } else if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    source.file = file.getFilename().str();
    source.line = file.getLine();
  }
  return source;
}

std::string graphBreakTypeString(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return "?";
  std::optional<DType> dtype = fromMlirElementType(tensor.getElementType());
  std::string s = dtype ? dtypeName(*dtype) : "?";
  s += "[";
  for (auto [i, d] : llvm::enumerate(tensor.getShape()))
    s += (i ? ", " : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s + "]";
}

namespace {

bool isStatic(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape();
}

/// "node 'x'" or "input 'x'" for where a value comes from.
std::string describeOrigin(Value value) {
  if (Operation *def = value.getDefiningOp()) {
    GraphBreakSource source = getGraphBreakSource(def->getLoc());
    if (!source.node.empty())
      return "node '" + source.node + "'";
    return def->getName().getStringRef().str();
  }
  auto arg = cast<BlockArgument>(value);
  if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
    if (auto name =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name"))
      return "input '" + name.getValue().str() + "'";
  if (isa<LoopOp>(arg.getOwner()->getParentOp()))
    return "loop body argument #" + std::to_string(arg.getArgNumber());
  return "block argument #" + std::to_string(arg.getArgNumber());
}

std::string kilnName(Operation *op) {
  return op->getName().getStringRef().str();
}

} // namespace

bool GraphBreakTarget::compiles(Operation *op) const {
  return compilesOp ? compilesOp(op) : !op->hasTrait<OpTrait::EagerOnly>();
}

std::optional<GraphBreakReason>
classifyGraphBreak(Operation *op, const GraphBreakTarget &target) {
  if (isa<ConstantOp, IfOp, LoopOp, EagerOp, YieldOp, func::CallOp,
          func::ReturnOp>(op))
    return std::nullopt;
  GraphBreakSource source = getGraphBreakSource(op->getLoc());
  std::string what =
      kilnName(op) + (source.opType.empty() ? "" : " (ONNX " + source.opType +
                                                       ")");
  // An operand whose size is only known at run time.
  for (OpOperand &operand : op->getOpOperands()) {
    if (isStatic(operand.get().getType()))
      continue;
    auto arg = dyn_cast<BlockArgument>(operand.get());
    if (arg && isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      return GraphBreakReason{
          EagerOp::kDynamicShape.str(),
          "operand #" + std::to_string(operand.getOperandNumber()) + " is " +
              graphBreakTypeString(operand.get().getType()) + ", " +
              describeOrigin(operand.get()) + " of dynamic size",
          "compiled graphs need static shapes: give the input's dynamic "
          "sizes with --dim NAME=SIZE"};
    return GraphBreakReason{
        EagerOp::kDynamicShape.str(),
        "operand #" + std::to_string(operand.getOperandNumber()) + " is " +
            graphBreakTypeString(operand.get().getType()) +
            ", whose size is only known at run time (it comes from " +
            describeOrigin(operand.get()) + ")",
        "ops that read a data-dependent size run eagerly until the shape "
        "is static again (e.g. after a reduction to a fixed size); do the "
        "data-dependent part as late in the model as possible"};
  }

  // An output whose size depends on tensor values.
  for (OpResult result : op->getResults()) {
    if (isStatic(result.getType()))
      continue;
    std::string detail = "output #" +
                         std::to_string(result.getResultNumber()) + " is " +
                         graphBreakTypeString(result.getType());
    // A parameter operand (shape, sizes, k, ...) computed at run time.
    for (OpOperand &operand : op->getOpOperands()) {
      if (operand.getOperandNumber() == 0 ||
          passes::isKilnConstant(operand.get()))
        continue;
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || !type.getElementType().isInteger(64))
        continue;
      return GraphBreakReason{
          EagerOp::kDataDependentShape.str(),
          detail + ": its size depends on the values of operand #" +
              std::to_string(operand.getOperandNumber()) + " (from " +
              describeOrigin(operand.get()) + "), computed at run time",
          "if that operand is really fixed, make it an initializer, or "
          "bind the graph input it comes from with `kiln compile "
          "--input-value NAME=FILE`"};
    }
    return GraphBreakReason{
        EagerOp::kDataDependentShape.str(),
        detail + ": its size depends on the values of the data",
        "the size is only known after the op runs (like torch.nonzero); "
        "where a fixed size suffices, use a mask with Where, or TopK with "
        "a constant k"};
  }
  if (!target.compiles(op))
    return GraphBreakReason{
        EagerOp::kUnsupportedOp.str(),
        "no code generator of the " + target.name + " target compiles " +
            what + " yet",
        "it runs on the reference runtime between compiled graphs; "
        "expressing it with other ops (docs/op-semantics.md lists what "
        "compiles) removes the break"};

  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

namespace {

enum class Kind { Constant, Compiled, Eager, ControlFlow };

/// A run of ops of one kind, in schedule order.
struct Group {
  Kind kind;
  SmallVector<Operation *> ops;
};

class Planner {
public:
  Planner(ModuleOp module, const GraphBreakTarget &target)
      : module(module), target(target) {}

  LogicalResult planBlock(Block &block);
  int numGraphs() const { return graphIndex; }

private:
  Kind kindOf(Operation *op) {
    if (isa<ConstantOp>(op))
      return Kind::Constant;
    if (isa<IfOp, LoopOp>(op))
      return Kind::ControlFlow;
    return classifyGraphBreak(op, target) ? Kind::Eager : Kind::Compiled;
  }
  SmallVector<Group> schedule(Block &block);
  void collectBoundary(Block &block, ArrayRef<Operation *> ops,
                       SetVector<Value> &inputs, SetVector<Value> &outputs,
                       SetVector<Operation *> &constants);
  LogicalResult outlineGraph(Block &block, ArrayRef<Operation *> ops);
  LogicalResult wrapEager(Block &block, ArrayRef<Operation *> ops);
  LogicalResult checkNoWeightUse(ArrayRef<Operation *> ops, StringRef where);
  std::string nameOf(Value value);
  static std::string uniqueName(std::string name, std::set<std::string> &used);

  ModuleOp module;
  const GraphBreakTarget &target;
  int graphIndex = 0;
  /// Names of values produced by graphs and eager regions (their outputs).
  llvm::DenseMap<Value, std::string> names;
};

SmallVector<Group> Planner::schedule(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = i;
  // Dependencies within the block, including values read in nested regions.
  std::vector<llvm::SmallDenseSet<unsigned>> deps(ops.size());
  for (auto [i, op] : llvm::enumerate(ops))
    op->walk([&, i = i, op = op](Operation *inner) {
      for (Value v : inner->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (!def)
          continue;
        Operation *ancestor = block.findAncestorOpInBlock(*def);
        if (ancestor && ancestor != op)
          deps[i].insert(position.lookup(ancestor));
      }
    });
  std::vector<Kind> kinds;
  for (Operation *op : ops)
    kinds.push_back(kindOf(op));

  std::vector<bool> done(ops.size(), false);
  auto ready = [&](unsigned i) {
    return !done[i] && llvm::all_of(deps[i], [&](unsigned d) { return done[d]; });
  };
  SmallVector<Group> groups;
  size_t remaining = ops.size();
  // Constants first: they have no operands.
  Group constants{Kind::Constant, {}};
  for (unsigned i = 0; i < ops.size(); ++i)
    if (kinds[i] == Kind::Constant && ready(i)) {
      done[i] = true;
      constants.ops.push_back(ops[i]);
      --remaining;
    }
  groups.push_back(std::move(constants));
  while (remaining) {
    unsigned first = 0;
    while (first < ops.size() && !ready(first))
      ++first;
    assert(first < ops.size() && "a cycle in a block of a traced graph");
    Kind kind = kinds[first];
    Group group{kind, {}};
    if (kind == Kind::ControlFlow || kind == Kind::Constant) {
      done[first] = true;
      group.ops.push_back(ops[first]);
      --remaining;
    } else {
      // Take ready ops of this kind (and constants) until none is left.
      for (bool progress = true; progress;) {
        progress = false;
        for (unsigned i = 0; i < ops.size(); ++i) {
          if (!ready(i) || (kinds[i] != kind && kinds[i] != Kind::Constant))
            continue;
          done[i] = true;
          group.ops.push_back(ops[i]);
          --remaining;
          progress = true;
        }
      }
    }
    groups.push_back(std::move(group));
  }
  // Reorder the block to the schedule.
  Operation *terminator = block.getTerminator();
  for (Group &group : groups)
    for (Operation *op : group.ops)
      op->moveBefore(terminator);
  return groups;
}

void Planner::collectBoundary(Block &block, ArrayRef<Operation *> ops,
                              SetVector<Value> &inputs,
                              SetVector<Value> &outputs,
                              SetVector<Operation *> &constants) {
  llvm::DenseSet<Operation *> inGroup(ops.begin(), ops.end());
  for (Operation *op : ops) {
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && inGroup.count(def))
        continue;
      if (def && isa<ConstantOp>(def))
        constants.insert(def);
      else
        inputs.insert(v);
    }
    for (Value r : op->getResults())
      for (OpOperand &use : r.getUses()) {
        Operation *user = block.findAncestorOpInBlock(*use.getOwner());
        if (!user || !inGroup.count(user)) {
          outputs.insert(r);
          break;
        }
      }
  }
}

std::string Planner::nameOf(Value value) {
  if (auto it = names.find(value); it != names.end())
    return it->second;
  if (Operation *def = value.getDefiningOp()) {
    GraphBreakSource source = getGraphBreakSource(def->getLoc());
    std::string base = source.node.empty()
                           ? def->getName().stripDialect().str()
                           : source.node;
    if (def->getNumResults() > 1)
      base += "_" + std::to_string(cast<OpResult>(value).getResultNumber());
    return base;
  }
  auto arg = cast<BlockArgument>(value);
  if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
    if (auto name =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name"))
      return name.getValue().str();
  if (isa<LoopOp>(arg.getOwner()->getParentOp())) {
    unsigned n = arg.getArgNumber();
    return n == 0 ? "iteration" : n == 1 ? "cond"
                                         : "carried_" + std::to_string(n - 2);
  }
  return "arg_" + std::to_string(arg.getArgNumber());
}

std::string Planner::uniqueName(std::string name,
                                std::set<std::string> &used) {
  if (used.insert(name).second)
    return name;
  for (int i = 1;; ++i) {
    std::string candidate = name + "_" + std::to_string(i);
    if (used.insert(candidate).second)
      return candidate;
  }
}

LogicalResult Planner::checkNoWeightUse(ArrayRef<Operation *> ops,
                                        StringRef where) {
  for (Operation *op : ops)
    for (Value v : op->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg)
        continue;
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!func || !func.getArgAttr(arg.getArgNumber(), "kiln.weight"))
        continue;
      return op->emitError()
             << "weight '" << nameOf(v) << "' is read by " << where
             << ", which runs on the reference runtime; graph breaks need "
                "the weights in the package: compile with --weights embed";
    }
  return success();
}

LogicalResult Planner::outlineGraph(Block &block, ArrayRef<Operation *> ops) {
  SetVector<Value> inputs, outputs;
  SetVector<Operation *> constants;
  collectBoundary(block, ops, inputs, outputs, constants);
  if (outputs.empty()) {
    // Nothing after it reads the group: dead code.
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    return success();
  }
  MLIRContext *ctx = module.getContext();
  OpBuilder builder(ctx);
  std::string name = "graph_" + std::to_string(graphIndex++);

  // The graph function.
  SmallVector<Type> inputTypes, outputTypes;
  for (Value v : inputs)
    inputTypes.push_back(v.getType());
  for (Value v : outputs)
    outputTypes.push_back(v.getType());
  builder.setInsertionPointToEnd(module.getBody());
  auto graph = builder.create<func::FuncOp>(
      ops.front()->getLoc(), name,
      builder.getFunctionType(inputTypes, outputTypes));
  graph->setAttr("kiln.graph", builder.getUnitAttr());
  Block *body = graph.addEntryBlock();
  IRMapping mapping;
  // Weights keep their names (the loader binds them by name); the other
  // inputs get unique names around them.
  std::set<std::string> usedNames;
  auto weightOf = [](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                    : func::FuncOp();
    if (func && func.getArgAttr(arg.getArgNumber(), "kiln.weight"))
      return arg.getArgNumber();
    return std::nullopt;
  };
  for (Value v : inputs)
    if (weightOf(v))
      usedNames.insert(nameOf(v));
  for (auto [i, v] : llvm::enumerate(inputs)) {
    mapping.map(v, body->getArgument(i));
    std::string name = weightOf(v) ? nameOf(v) : uniqueName(nameOf(v), usedNames);
    graph.setArgAttr(i, "kiln.name", builder.getStringAttr(name));
    if (auto arg = dyn_cast<BlockArgument>(v))
      if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
        for (StringRef attr : {"kiln.weight", "kiln.external_data",
                               "kiln.dim_names"})
          if (Attribute a = func.getArgAttr(arg.getArgNumber(), attr))
            graph.setArgAttr(i, attr, a);
  }
  builder.setInsertionPointToEnd(body);
  for (Operation *c : constants)
    builder.clone(*c, mapping);
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  SmallVector<Value> returned;
  for (Value v : outputs)
    returned.push_back(mapping.lookup(v));
  builder.create<func::ReturnOp>(ops.back()->getLoc(), returned);
  usedNames.clear();
  for (auto [i, v] : llvm::enumerate(outputs))
    graph.setResultAttr(
        i, "kiln.name",
        builder.getStringAttr(uniqueName(nameOf(v), usedNames)));

  // The call, where the group was.
  builder.setInsertionPoint(ops.front());
  auto call = builder.create<func::CallOp>(ops.front()->getLoc(), graph,
                                           inputs.getArrayRef());
  llvm::DenseSet<Operation *> inGroup(ops.begin(), ops.end());
  for (auto [i, r] : llvm::enumerate(call.getResults())) {
    Value v = outputs[i];
    names[r] = graph.getResultAttrOfType<StringAttr>(
                        cast<OpResult>(r).getResultNumber(), "kiln.name")
                   .getValue()
                   .str();
    v.replaceUsesWithIf(r, [&](OpOperand &use) {
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      return !user || !inGroup.count(user);
    });
  }
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return success();
}

LogicalResult Planner::wrapEager(Block &block, ArrayRef<Operation *> ops) {
  SetVector<Value> inputs, outputs;
  SetVector<Operation *> constants;
  collectBoundary(block, ops, inputs, outputs, constants);
  Operation *first = ops.front();
  std::optional<GraphBreakReason> reason = classifyGraphBreak(first, target);
  assert(reason && "an eager group starts with an op that does not break");
  GraphBreakSource source = getGraphBreakSource(first->getLoc());
  if (failed(checkNoWeightUse(
          ops, source.node.empty() ? "a graph break"
                                   : "node '" + source.node + "'")))
    return failure();

  OpBuilder builder(first);
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  auto eager = builder.create<EagerOp>(
      first->getLoc(), resultTypes, inputs.getArrayRef(),
      builder.getStringAttr(reason->reason),
      builder.getStringAttr(reason->detail),
      builder.getStringAttr(reason->hint));
  Block *body = new Block();
  eager.getRegion().push_back(body);
  IRMapping mapping;
  for (Value v : inputs)
    mapping.map(v, body->addArgument(v.getType(), v.getLoc()));
  builder.setInsertionPointToEnd(body);
  for (Operation *c : constants)
    builder.clone(*c, mapping);
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  builder.create<YieldOp>(ops.back()->getLoc(), yielded);

  llvm::DenseSet<Operation *> inGroup(ops.begin(), ops.end());
  for (auto [i, r] : llvm::enumerate(eager.getResults())) {
    Value v = outputs[i];
    names[r] = nameOf(v);
    v.replaceUsesWithIf(r, [&](OpOperand &use) {
      Operation *user = block.findAncestorOpInBlock(*use.getOwner());
      return !user || !inGroup.count(user);
    });
  }
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return success();
}

LogicalResult Planner::planBlock(Block &block) {
  SmallVector<Group> groups = schedule(block);
  for (Group &group : groups) {
    switch (group.kind) {
    case Kind::Constant:
      break;
    case Kind::ControlFlow: {
      Operation *op = group.ops.front();
      GraphBreakSource source = getGraphBreakSource(op->getLoc());
      if (failed(checkNoWeightUse(
              group.ops, source.node.empty()
                             ? std::string("control flow")
                             : "control flow node '" + source.node + "'")))
        return failure();
      for (Region &region : op->getRegions())
        for (Block &inner : region)
          if (failed(planBlock(inner)))
            return failure();
      break;
    }
    case Kind::Compiled:
    case Kind::Eager: {
      // Constants taken along are cloned where they are read.
      SmallVector<Operation *> ops;
      for (Operation *op : group.ops)
        if (!isa<ConstantOp>(op))
          ops.push_back(op);
      if (ops.empty())
        break;
      if (failed(group.kind == Kind::Compiled ? outlineGraph(block, ops)
                                              : wrapEager(block, ops)))
        return failure();
      break;
    }
    }
  }
  // A weight returned as it is (a model output, a branch's or loop body's
  // result) would have to be bound by the glue.
  if (failed(checkNoWeightUse(block.getTerminator(),
                              "a model output or a region's result")))
    return failure();
  // Constants nobody reads any more (they were cloned into graphs).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isa<ConstantOp>(op) && op.use_empty())
      op.erase();
  return success();
}

/// True when `main` needs a program: control flow, or an op that breaks.
bool needsProgram(func::FuncOp main, const GraphBreakTarget &target) {
  bool needed = false;
  main.walk([&](Operation *op) {
    if (isa<IfOp, LoopOp>(op) || classifyGraphBreak(op, target))
      needed = true;
    return needed ? WalkResult::interrupt() : WalkResult::advance();
  });
  return needed;
}

struct PlanGraphBreaksPass
    : public PassWrapper<PlanGraphBreaksPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PlanGraphBreaksPass)

  PlanGraphBreaksPass() = default;
  PlanGraphBreaksPass(const PlanGraphBreaksPass &other)
      : PassWrapper(other), breakTarget(other.breakTarget) {}
  explicit PlanGraphBreaksPass(GraphBreakTarget target)
      : breakTarget(std::move(target)) {
    targetName = breakTarget.name;
  }

  StringRef getArgument() const final { return "kiln-plan-graph-breaks"; }
  StringRef getDescription() const final {
    return "Split @main into compiled graphs, graph breaks (kiln.eager) and "
           "control flow";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<func::FuncDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp main;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr("kiln.graph")) {
        main = func;
        break;
      }
    // From kiln-opt, the option names the target and the default question
    // stands in for the target's own.
    if (breakTarget.name != targetName)
      breakTarget = GraphBreakTarget{targetName, nullptr};
    if (!main || main.isExternal() || !needsProgram(main, breakTarget))
      return;
    Planner planner(module, breakTarget);
    if (failed(planner.planBlock(main.getBody().front())))
      return signalPassFailure();
    main->removeAttr("kiln.graph");
    main->setAttr("kiln.program", UnitAttr::get(&getContext()));
  }

  Option<std::string> targetName{*this, "target",
                                 llvm::cl::desc("Code generation target: cpu "
                                                "or cuda"),
                                 llvm::cl::init("cpu")};
  GraphBreakTarget breakTarget;
};

} // namespace

std::unique_ptr<Pass> createPlanGraphBreaksPass(GraphBreakTarget target) {
  return std::make_unique<PlanGraphBreaksPass>(std::move(target));
}

void registerGraphBreakPasses() {
  PassRegistration<PlanGraphBreaksPass>();
}

} // namespace kiln
