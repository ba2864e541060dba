//===- ProgramBuilder.cpp - A traced kiln graph as a runtime Program ------===//
//
// This file implements the bridge from a traced kiln graph to the runtime's
// Program: block arguments become inputs or weights (by their `kiln.name`,
// `kiln.weight` and `kiln.dim_names` attributes), `kiln.constant` ops become
// constant tensors, every other kiln op becomes a node keyed by its name
// without the dialect prefix, and the returned values become the outputs.
// kiln.if, kiln.loop and kiln.eager become structural nodes whose regions
// are built the same way, recursively; func.call becomes a "call" node.
//
//===----------------------------------------------------------------------===//

#include "compiler/ProgramBuilder.h"
#include "ir/KilnOps.h"
#include "passes/GraphBreaks.h"
#include "passes/TensorConversion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace kiln {

func::FuncOp findGraphFunction(ModuleOp module) {
  func::FuncOp found;
  module.walk([&](func::FuncOp f) {
    if (!found && f->hasAttr("kiln.graph"))
      found = f;
  });
  if (!found)
    found = module.lookupSymbol<func::FuncOp>("main");
  return found;
}

func::FuncOp findProgramFunction(ModuleOp module) {
  func::FuncOp found;
  module.walk([&](func::FuncOp f) {
    if (!found && f->hasAttr("kiln.program"))
      found = f;
  });
  return found ? found : findGraphFunction(module);
}

SourceInfo getSourceInfo(Location loc) {
  GraphBreakSource source = getGraphBreakSource(loc);
  return SourceInfo{source.node, source.opType};
}

/// The signature of a value of type `type` named `name`.
static Expected<ValueSignature>
makeSignature(Type type, const std::string &name, ArrayAttr dimNames, int id) {
  // An output whose rank the branch taken decides (kiln.if).
  if (auto unranked = dyn_cast<UnrankedTensorType>(type)) {
    std::optional<DType> dtype = fromMlirElementType(unranked.getElementType());
    if (!dtype)
      return Status::error(
          strCat("value '", name, "' has an unsupported element type"));
    ValueSignature sig;
    sig.name = name;
    sig.dtype = *dtype;
    sig.valueId = id;
    sig.anyRank = true;
    return sig;
  }
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return Status::error(strCat("value '", name, "' is not a tensor"));
  std::optional<DType> dtype = fromMlirElementType(tensorType.getElementType());
  if (!dtype)
    return Status::error(
        strCat("value '", name, "' has an unsupported element type"));
  ValueSignature sig;
  sig.name = name;
  sig.dtype = *dtype;
  sig.valueId = id;
  for (int64_t d : tensorType.getShape())
    sig.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  sig.dimNames.assign(sig.shape.size(), "");
  if (dimNames)
    for (auto [i, a] : llvm::enumerate(dimNames))
      if (auto s = dyn_cast<StringAttr>(a); s && i < sig.dimNames.size())
        sig.dimNames[i] = s.getValue().str();
  return sig;
}

namespace {

/// Builds the nodes of a program, region by region, in one value-id space.
class Builder {
public:
  explicit Builder(Program &program) : program_(program) {}

  /// A fresh id for a value defined here (a result or a block argument).
  int define(Value v) {
    auto [it, inserted] = ids_.try_emplace(v, program_.numValues);
    if (inserted)
      ++program_.numValues;
    return it->second;
  }

  /// The id of a value defined earlier (here or in an enclosing region).
  std::optional<int> lookup(Value v) const {
    auto it = ids_.find(v);
    if (it == ids_.end())
      return std::nullopt;
    return it->second;
  }

  /// Translates the ops of `block` into `nodes`; the operands of its
  /// terminator (func.return or kiln.yield) are stored in `terminator`.
  Status buildBlock(Block &block, std::vector<ProgramNode> &nodes,
                    std::vector<int> &terminator);

private:
  Status buildOp(Operation &op, std::vector<ProgramNode> &nodes);
  Status buildRegion(Region &region, ProgramRegion &out,
                     const SourceInfo &source);
  Status operandIds(Operation &op, const SourceInfo &source,
                    std::vector<int> &out) const;

  Program &program_;
  llvm::DenseMap<Value, int> ids_;
};

Status Builder::operandIds(Operation &op, const SourceInfo &source,
                           std::vector<int> &out) const {
  for (Value v : op.getOperands()) {
    std::optional<int> id = lookup(v);
    if (!id)
      return Status::error(strCat("node '", source.nodeName, "' (",
                                  op.getName().getStringRef().str(),
                                  ") uses a value defined outside the graph"));
    out.push_back(*id);
  }
  return Status::ok();
}

Status Builder::buildRegion(Region &region, ProgramRegion &out,
                            const SourceInfo &source) {
  if (region.empty())
    return Status::error(
        strCat("node '", source.nodeName, "' has an empty region"));
  Block &block = region.front();
  for (BlockArgument arg : block.getArguments())
    out.arguments.push_back(define(arg));
  return buildBlock(block, out.nodes, out.results);
}

Status Builder::buildBlock(Block &block, std::vector<ProgramNode> &nodes,
                           std::vector<int> &terminator) {
  for (Operation &op : block) {
    if (isa<func::ReturnOp, YieldOp>(op)) {
      SourceInfo source = getSourceInfo(op.getLoc());
      KILN_RETURN_IF_ERROR(operandIds(op, source, terminator));
      continue;
    }
    KILN_RETURN_IF_ERROR(buildOp(op, nodes));
  }
  return Status::ok();
}

Status Builder::buildOp(Operation &op, std::vector<ProgramNode> &nodes) {
  SourceInfo source = getSourceInfo(op.getLoc());
  ProgramNode node;
  node.sourceName = source.nodeName;
  node.sourceOp = source.opType;
  if (auto call = dyn_cast<func::CallOp>(op)) {
    // A compiled graph: its index in Program::graphs (first call first).
    std::string callee = call.getCallee().str();
    auto it = llvm::find(program_.graphs, callee);
    int64_t index = it - program_.graphs.begin();
    if (it == program_.graphs.end())
      program_.graphs.push_back(callee);
    node.op = "call";
    node.attrs.set("graph", index);
    std::vector<int> operands;
    KILN_RETURN_IF_ERROR(operandIds(op, source, operands));
    // The graph's package binds its weights itself (at load time): they are
    // not passed by the call.
    auto graph =
        SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(&op, call.getCalleeAttr());
    for (auto [i, id] : llvm::enumerate(operands))
      if (!graph || !graph.getArgAttr(i, "kiln.weight"))
        node.operands.push_back(id);
    for (Value r : op.getResults())
      node.results.push_back(define(r));
    nodes.push_back(std::move(node));
    return Status::ok();
  }

  StringRef opName = op.getName().getStringRef();
  if (!opName.consume_front("kiln."))
    return Status::error(strCat("op '", op.getName().getStringRef().str(),
                                "' (node '", source.nodeName,
                                "') is not a kiln op; the reference runtime "
                                "runs kiln graphs only"));
  if (opName == "constant") {
    auto value = op.getAttrOfType<ElementsAttr>("value");
    std::optional<Tensor> tensor = value ? toTensor(value) : std::nullopt;
    if (!tensor)
      return Status::error(strCat("constant of node '", source.nodeName,
                                  "' has an unsupported value"));
    program_.constants[define(op.getResult(0))] = *tensor;
    return Status::ok();
  }
  node.op = opName.str();
  node.attrs = toAttributes(op.getAttrDictionary());
  KILN_RETURN_IF_ERROR(operandIds(op, source, node.operands));
  if (auto loop = dyn_cast<LoopOp>(op)) {
    std::vector<int64_t> scanDTypes, scanShapes;
    for (unsigned k = 0; k < loop.getNumScanOutputs(); ++k) {
      auto type = dyn_cast<RankedTensorType>(
          loop.getResult(loop.getNumCarried() + k).getType());
      std::optional<DType> dtype =
          type ? fromMlirElementType(type.getElementType()) : std::nullopt;
      if (!dtype)
        return Status::error(strCat("scan output #", k, " of node '",
                                    source.nodeName,
                                    "' has an unsupported element type"));
      scanDTypes.push_back(static_cast<int64_t>(*dtype));
      // The shape of one iteration's value: its rank, then its dims (-1
      // dynamic).
      scanShapes.push_back(type.getRank() - 1);
      for (int64_t d : type.getShape().drop_front())
        scanShapes.push_back(ShapedType::isDynamic(d) ? -1 : d);
    }
    node.attrs.set("scan_dtypes", scanDTypes);
    node.attrs.set("scan_shapes", scanShapes);
  }
  // Regions (if, loop, eager) before the results: their values are
  // numbered first, like the ops in them.
  for (Region &region : op.getRegions()) {
    node.regions.emplace_back();
    KILN_RETURN_IF_ERROR(buildRegion(region, node.regions.back(), source));
  }
  for (Value r : op.getResults())
    node.results.push_back(define(r));
  nodes.push_back(std::move(node));
  return Status::ok();
}

} // namespace

Expected<Program> buildProgram(func::FuncOp graph) {
  Program program;
  if (!graph)
    return Status::error("no function to build a program from");
  Builder builder(program);

  for (BlockArgument arg : graph.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto nameAttr = graph.getArgAttrOfType<StringAttr>(i, "kiln.name");
    std::string name = nameAttr ? nameAttr.getValue().str() : strCat("arg", i);
    auto dims = graph.getArgAttrOfType<ArrayAttr>(i, "kiln.dim_names");
    Expected<ValueSignature> sig =
        makeSignature(arg.getType(), name, dims, builder.define(arg));
    if (!sig)
      return sig.status();
    // A weight that only compiled graphs read is bound by their packages.
    bool onlyGraphsRead =
        !arg.use_empty() && llvm::all_of(arg.getUsers(), [](Operation *user) {
          return isa<func::CallOp>(user);
        });
    if (graph.getArgAttr(i, "kiln.weight") && onlyGraphsRead)
      continue;
    if (graph.getArgAttr(i, "kiln.weight"))
      program.weights.push_back(sig.take());
    else
      program.inputs.push_back(sig.take());
  }

  std::vector<int> returned;
  KILN_RETURN_IF_ERROR(
      builder.buildBlock(graph.getBody().front(), program.nodes, returned));
  auto *ret = graph.getBody().front().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    auto nameAttr = graph.getResultAttrOfType<StringAttr>(i, "kiln.name");
    std::string name =
        nameAttr ? nameAttr.getValue().str() : strCat("output", i);
    Expected<ValueSignature> sig =
        makeSignature(v.getType(), name, nullptr, returned[i]);
    if (!sig)
      return sig.status();
    program.outputs.push_back(sig.take());
  }
  return program;
}

} // namespace kiln
