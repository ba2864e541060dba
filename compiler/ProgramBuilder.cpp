//===- ProgramBuilder.cpp - A traced kiln graph as a runtime Program ------===//
//
// This file implements the bridge from a traced kiln graph to the runtime's
// Program: block arguments become inputs or weights (by their `kiln.name`,
// `kiln.weight` and `kiln.dim_names` attributes), `kiln.constant` ops become
// constant tensors, every other kiln op becomes a node keyed by its name
// without the dialect prefix, and the returned values become the outputs.
//
//===----------------------------------------------------------------------===//

#include "compiler/ProgramBuilder.h"
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

SourceInfo getSourceInfo(Location loc) {
  SourceInfo info;
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto op = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      info.opType = op.getValue().str();
    for (Location inner : fused.getLocations()) {
      SourceInfo innerInfo = getSourceInfo(inner);
      if (!innerInfo.nodeName.empty()) {
        info.nodeName = innerInfo.nodeName;
        break;
      }
    }
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    info.nodeName = name.getName().str();
  }
  return info;
}

/// The signature of a value of type `type` named `name`.
static Expected<ValueSignature>
makeSignature(Type type, const std::string &name, ArrayAttr dimNames, int id) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return Status::error(strCat("value '", name, "' is not a ranked tensor"));
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

Expected<Program> buildProgram(func::FuncOp graph) {
  Program program;
  llvm::DenseMap<Value, int> ids;
  auto idOf = [&](Value v) {
    auto [it, inserted] = ids.try_emplace(v, program.numValues);
    if (inserted)
      ++program.numValues;
    return it->second;
  };

  for (BlockArgument arg : graph.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto nameAttr = graph.getArgAttrOfType<StringAttr>(i, "kiln.name");
    std::string name = nameAttr ? nameAttr.getValue().str() : strCat("arg", i);
    auto dims = graph.getArgAttrOfType<ArrayAttr>(i, "kiln.dim_names");
    Expected<ValueSignature> sig =
        makeSignature(arg.getType(), name, dims, idOf(arg));
    if (!sig)
      return sig.status();
    if (graph.getArgAttr(i, "kiln.weight"))
      program.weights.push_back(sig.take());
    else
      program.inputs.push_back(sig.take());
  }

  for (Operation &op : graph.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto nameAttr = graph.getResultAttrOfType<StringAttr>(i, "kiln.name");
        std::string name =
            nameAttr ? nameAttr.getValue().str() : strCat("output", i);
        Expected<ValueSignature> sig =
            makeSignature(v.getType(), name, nullptr, idOf(v));
        if (!sig)
          return sig.status();
        program.outputs.push_back(sig.take());
      }
      continue;
    }
    StringRef opName = op.getName().getStringRef();
    SourceInfo source = getSourceInfo(op.getLoc());
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
      program.constants[idOf(op.getResult(0))] = *tensor;
      continue;
    }
    ProgramNode node;
    node.op = opName.str();
    node.attrs = toAttributes(op.getAttrDictionary());
    for (Value v : op.getOperands()) {
      auto it = ids.find(v);
      if (it == ids.end())
        return Status::error(
            strCat("node '", source.nodeName,
                   "' uses a value defined outside the graph"));
      node.operands.push_back(it->second);
    }
    for (Value r : op.getResults())
      node.results.push_back(idOf(r));
    node.sourceName = source.nodeName;
    node.sourceOp = source.opType;
    program.nodes.push_back(std::move(node));
  }
  return program;
}

} // namespace kiln
