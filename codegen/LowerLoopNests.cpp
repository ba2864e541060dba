//===- LowerLoopNests.cpp - The loop nests of a lowered fusion region -----===//
//
// This file implements the loop-nest half of the lowering of a kiln.fusion
// region to kernel IR (the values are LowerToKernelIR.cpp's): one loop nest
// per result shape for a region without reductions; for one with
// reductions, the reduction domain, a parallel loop over the kept dims
// holding one reduce loop per dependency level (the first also storing the
// full-shape results that read no reduction), the epilogue loop and the
// stores of the reduced-shape results; then the kernel IR cleanups
// (KernelIRSimplify.cpp) and the entry points lowerToKernelIR and
// lowerFusionToKernelIR.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelLowering.h"

namespace kiln {
namespace codegen {
namespace lowering {

int Lowering::dependencyLevel(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return 0;
  if (isReduceOp(def))
    return levelOf(def);
  auto known = opLevels.find(def);
  if (known != opLevels.end())
    return known->second;
  int level = 0;
  for (Value operand : def->getOperands())
    level = std::max(level, dependencyLevel(operand));
  opLevels[def] = level;
  return level;
}

int Lowering::levelOf(Operation *reduceOp) {
  auto it = levels.find(reduceOp);
  if (it != levels.end())
    return it->second;
  int level = 1 + dependencyLevel(reduceOp->getOperand(0));
  levels[reduceOp] = level;
  return level;
}

mlir::LogicalResult
Lowering::setUpReductionDomain(llvm::ArrayRef<Operation *> reduces) {
  for (Operation *op : reduces) {
    FailureOr<std::vector<int64_t>> shape = staticShape(op->getOperand(0), op);
    if (failed(shape))
      return failure();
    std::optional<std::vector<int64_t>> axes = constantInts(op->getOperand(1));
    if (!axes)
      return op->emitError("fusion '")
             << kernel.name
             << "': the reduction axes must be a kiln.constant inside the "
                "region";
    auto noop = op->getAttrOfType<mlir::IntegerAttr>("noop_with_empty_axes");
    if (axes->empty() && noop && noop.getInt() != 0)
      return op->emitError("fusion '")
             << kernel.name
             << "': a reduction with empty axes and noop_with_empty_axes = 1 "
                "is an identity; simplify it before fusion";
    int64_t rank = static_cast<int64_t>(shape->size());
    std::vector<bool> mask(shape->size(), axes->empty());
    for (int64_t a : *axes) {
      int64_t axis = a < 0 ? a + rank : a;
      if (axis < 0 || axis >= rank)
        return op->emitError("reduction axis ") << a << " out of range";
      mask[axis] = true;
    }
    if (fullShape.empty() && reducedMask.empty()) {
      fullShape = *shape;
      reducedMask = mask;
    } else if (*shape != fullShape || mask != reducedMask) {
      return op->emitError("fusion '")
             << kernel.name << "': reductions over " << shapeStr(*shape)
             << " and " << shapeStr(fullShape)
             << " (or over different axes) cannot share one kernel";
    }
  }
  return mlir::success();
}

Stmt Lowering::closeLoop(Stmt::LoopKind kind, std::vector<int> vars) {
  Stmt loop;
  loop.kind = Stmt::Kind::Loop;
  loop.loopKind = kind;
  loop.vars = std::move(vars);
  loop.body = std::move(scopes.back().body);
  scopes.pop_back();
  return loop;
}

mlir::LogicalResult Lowering::store(unsigned result,
                                    llvm::ArrayRef<IndexExpr> idx) {
  Operation *yield = block.getTerminator();
  Value v = yield->getOperand(result);
  FailureOr<int> t = lower(v, idx);
  if (failed(t))
    return failure();
  const Buffer &buf = kernel.buffers[numInputs + result];
  Stmt s;
  s.kind = Stmt::Kind::Store;
  s.buffer = numInputs + static_cast<int>(result);
  s.value = *t;
  s.index = builder.linearize(idx, buf.shape);
  scopes.back().body.push_back(std::move(s));
  return mlir::success();
}

mlir::LogicalResult
Lowering::lowerReduction(llvm::ArrayRef<Operation *> reduces) {
  if (failed(setUpReductionDomain(reduces)))
    return failure();
  // Loop variables: kept dims at depth 1, reduced dims at depth 2; dims of
  // extent 1 index with 0.
  std::vector<int> keptVars, reducedVars;
  for (size_t d = 0; d < fullShape.size(); ++d) {
    if (fullShape[d] == 1) {
      fullIndex.push_back(IndexExpr::constant(0));
      continue;
    }
    bool red = reducedMask[d];
    std::string varName =
        (red ? "j" : "i") +
        std::to_string(red ? reducedVars.size() : keptVars.size());
    int id = newVar(varName, fullShape[d], red ? 2 : 1);
    (red ? reducedVars : keptVars).push_back(id);
    fullIndex.push_back(IndexExpr::var(id));
  }
  for (size_t d = 0; d < fullShape.size(); ++d)
    (reducedMask[d] ? kernel.reducedDomain : kernel.parallelDomain)
        .push_back(fullShape[d]);
  for (size_t d = 0; d < fullShape.size(); ++d) {
    if (!reducedMask[d])
      continue;
    reducedCount *= fullShape[d];
    reducedShape.push_back(fullShape[d]);
    reducedIdx.push_back(fullIndex[d]);
  }

  int maxLevel = 0;
  for (Operation *op : reduces)
    maxLevel = std::max(maxLevel, levelOf(op));

  Operation *yield = block.getTerminator();
  std::set<unsigned> storedEarly; ///< results stored by the first loop
  scopes.emplace_back(); // the parallel loop over the kept dims
  for (int level = 1; level <= maxLevel; ++level) {
    scopes.emplace_back();
    std::vector<Reduction> reductions;
    for (Operation *op : reduces) {
      if (levelOf(op) != level)
        continue;
      FailureOr<int> input = lower(op->getOperand(0), fullIndex);
      FailureOr<ScalarType> type = scalarType(op->getResult(0), op);
      if (failed(input) || failed(type))
        return failure();
      Reduction r;
      r.kind = mlir::isa<ReduceSumOp>(op)    ? ReduceKind::Sum
               : mlir::isa<ReduceMeanOp>(op) ? ReduceKind::Mean
               : mlir::isa<ReduceProdOp>(op) ? ReduceKind::Prod
               : mlir::isa<ReduceMaxOp>(op)  ? ReduceKind::Max
                                             : ReduceKind::Min;
      if (*type == ScalarType::Bool &&
          (r.kind == ReduceKind::Sum || r.kind == ReduceKind::Mean ||
           r.kind == ReduceKind::Prod))
        return op->emitError("sums and products of bools are not defined");
      r.type = *type;
      r.input = *input;
      r.count = 1;
      for (size_t d = 0; d < fullShape.size(); ++d)
        if (reducedMask[d])
          r.count *= fullShape[d];
      reductions.push_back(r);
    }
    // Remember what this loop computed per element (for row caching).
    lastReduceMemo.clear();
    for (auto &[key, temp] : scopes.back().memo)
      if (tempDepth[temp] == 2)
        lastReduceMemo[key] = temp;
    // Loads are as cheap as cache reads: re-read the input instead.
    for (const Stmt &st : scopes.back().body)
      if (st.kind == Stmt::Kind::Load)
        for (auto it = lastReduceMemo.begin(); it != lastReduceMemo.end();)
          it = it->second == st.result ? lastReduceMemo.erase(it)
                                       : std::next(it);
    // Full-shape results that read no reduction are stored by the first
    // reduce loop, beside the reductions' inputs: the epilogue would
    // otherwise cache or recompute them after the reductions (a gradient's
    // elementwise result beside its bias-gradient column sum).
    if (level == 1)
      for (unsigned r = 0; r < yield->getNumOperands(); ++r)
        if (kernel.buffers[numInputs + r].shape == fullShape &&
            dependencyLevel(yield->getOperand(r)) == 0) {
          if (failed(store(r, fullIndex)))
            return failure();
          storedEarly.insert(r);
        }
    lastReduceLoop = scopes[1].body.size();
    Stmt loop = closeLoop(Stmt::LoopKind::Reduce, reducedVars);
    for (size_t i = 0, n = 0; i < reduces.size(); ++i) {
      if (levelOf(reduces[i]) != level)
        continue;
      reductions[n].result = newTemp(reductions[n].type, 1);
      reductionResult[reduces[i]] = reductions[n].result;
      ++n;
    }
    loop.reductions = std::move(reductions);
    scopes.back().body.push_back(std::move(loop));
  }

  // The epilogue: full-shape results per element, then reduced-shape ones.
  std::vector<unsigned> reducedResults;
  bool anyFull = false;
  for (unsigned r = 0; r < yield->getNumOperands(); ++r) {
    const Buffer &buf = kernel.buffers[numInputs + r];
    if (storedEarly.count(r))
      continue;
    if (buf.shape == fullShape) {
      if (!anyFull)
        scopes.emplace_back();
      anyFull = true;
      inEpilogue = true;
      if (failed(store(r, fullIndex)))
        return failure();
    } else {
      reducedResults.push_back(r);
    }
  }
  inEpilogue = false;
  if (anyFull) {
    Stmt epilogue = closeLoop(Stmt::LoopKind::Serial, reducedVars);
    scopes.back().body.push_back(std::move(epilogue));
  }
  for (unsigned r : reducedResults) {
    const Buffer &buf = kernel.buffers[numInputs + r];
    std::optional<std::vector<IndexExpr>> idx = reducedIndex(buf.shape);
    if (!idx)
      return mlir::emitError(yield->getLoc())
             << "fusion '" << kernel.name << "': result " << r << " has shape "
             << shapeStr(buf.shape) << ", neither the reduction's full shape "
             << shapeStr(fullShape) << " nor its reduced shape";
    if (failed(store(r, *idx)))
      return failure();
  }
  Stmt outer = closeLoop(Stmt::LoopKind::Parallel, keptVars);
  scopes[0].body.push_back(std::move(outer));
  return mlir::success();
}

mlir::LogicalResult Lowering::lowerPointwise() {
  // One loop nest per distinct result shape, in result order.
  std::vector<std::vector<int64_t>> shapes;
  for (unsigned r = numInputs; r < kernel.buffers.size(); ++r)
    if (std::find(shapes.begin(), shapes.end(), kernel.buffers[r].shape) ==
        shapes.end())
      shapes.push_back(kernel.buffers[r].shape);
  for (const std::vector<int64_t> &shape : shapes) {
    if (kernel.parallelDomain.empty())
      kernel.parallelDomain = shape;
    std::vector<IndexExpr> idx;
    std::vector<int> vars;
    for (int64_t extent : shape) {
      if (extent == 1) {
        idx.push_back(IndexExpr::constant(0));
        continue;
      }
      vars.push_back(newVar("i" + std::to_string(vars.size()), extent, 1));
      idx.push_back(IndexExpr::var(vars.back()));
    }
    scopes.emplace_back();
    for (unsigned r = 0; r + numInputs < kernel.buffers.size(); ++r)
      if (kernel.buffers[numInputs + r].shape == shape && failed(store(r, idx)))
        return failure();
    Stmt nest = closeLoop(Stmt::LoopKind::Parallel, vars);
    scopes[0].body.push_back(std::move(nest));
  }
  return mlir::success();
}

void Lowering::collectSourceNodes() {
  llvm::SetVector<llvm::StringRef> names;
  for (Operation &op : block) {
    op.getLoc()->walk([&](mlir::Location l) {
      if (auto nameLoc = mlir::dyn_cast<mlir::NameLoc>(l))
        names.insert(nameLoc.getName().strref());
      return mlir::WalkResult::advance();
    });
  }
  for (llvm::StringRef n : names)
    kernel.sourceNodes.push_back(n.str());
}

FailureOr<Kernel> Lowering::run() {
  Operation *yield = block.empty() ? nullptr : &block.back();
  if (!yield || !mlir::isa<YieldOp>(yield)) {
    mlir::emitError(loc) << "fusion '" << kernel.name
                         << "': the region must end with kiln.yield";
    return failure();
  }
  numInputs = static_cast<int>(block.getNumArguments());
  for (mlir::BlockArgument arg : block.getArguments()) {
    FailureOr<std::vector<int64_t>> shape = staticShape(arg, nullptr);
    FailureOr<ScalarType> type = scalarType(arg, nullptr);
    if (failed(shape) || failed(type))
      return failure();
    kernel.buffers.push_back(
        {"in" + std::to_string(arg.getArgNumber()), *type, *shape, false});
  }
  for (unsigned r = 0; r < yield->getNumOperands(); ++r) {
    FailureOr<std::vector<int64_t>> shape =
        staticShape(yield->getOperand(r), yield);
    FailureOr<ScalarType> type = scalarType(yield->getOperand(r), yield);
    if (failed(shape) || failed(type))
      return failure();
    kernel.buffers.push_back({"out" + std::to_string(r), *type, *shape, true});
  }
  if (inPlace) {
    int in = static_cast<int>(inPlace->second);
    int out = numInputs + static_cast<int>(inPlace->first);
    assert(in < numInputs && out < (int)kernel.buffers.size() &&
           "kiln.in_place names no operand or result");
    kernel.buffers[in].sharesWith = out;
    kernel.buffers[out].sharesWith = in;
  }

  std::vector<Operation *> reduces;
  for (Operation &op : block)
    if (isReduceOp(&op))
      reduces.push_back(&op);

  scopes.emplace_back(); // the kernel's top level
  if (failed(reduces.empty() ? lowerPointwise() : lowerReduction(reduces)))
    return failure();
  if (!reduces.empty())
    kernel.kind = "reduction";
  kernel.body = std::move(scopes[0].body);
  hoistInvariantDivisors(kernel);
  multiplyByReciprocals(kernel);
  expandSmallPowers(kernel);
  markNonPositiveExps(kernel);
  markPlusOneErfs(kernel);
  placeRowCachesInOutputs(kernel);
  collectSourceNodes();
  return std::move(kernel);
}

} // namespace lowering

using lowering::Lowering;
using mlir::FailureOr;
using mlir::Operation;

FailureOr<Kernel>
lowerToKernelIR(mlir::Block &body, llvm::StringRef name, llvm::StringRef kind,
                mlir::Location loc,
                std::optional<std::pair<unsigned, unsigned>> inPlace) {
  Lowering lowering(body, name, kind, loc, inPlace);
  return lowering.run();
}

FailureOr<Kernel> lowerFusionToKernelIR(Operation *fusionOp) {
  auto name = fusionOp->getAttrOfType<mlir::StringAttr>("name");
  auto kind = fusionOp->getAttrOfType<mlir::StringAttr>("kind");
  if (fusionOp->getNumRegions() != 1 ||
      !llvm::hasSingleElement(fusionOp->getRegion(0)) || !name || !kind)
    return fusionOp->emitError(
        "expected a kiln.fusion op: one region with one block and string "
        "attributes 'name' and 'kind'");
  return lowerToKernelIR(fusionOp->getRegion(0).front(), name.getValue(),
                         kind.getValue(), fusionOp->getLoc(),
                         inPlacePair(fusionOp));
}

} // namespace codegen
} // namespace kiln
