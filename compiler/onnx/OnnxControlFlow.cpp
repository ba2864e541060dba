//===- OnnxControlFlow.cpp - If, Loop and Scan to kiln --------------------===//
//
// This file implements the tracing of the ONNX control-flow operators, whose
// subgraphs the GraphTracer translates itself (they are not mappings). A
// subgraph is traced at the builder's insertion point with its inputs bound
// and its own names scoped. If with a condition that folds is inlined (only
// the taken branch); otherwise both branches become the regions of kiln.if,
// their output types merged (an output whose rank differs between them is
// unranked: it gets its rank at run time; the later nodes that read it are
// traced once per branch, OnnxIfSinking.cpp).
// Loop with a trip count and conditions that fold is unrolled up to
// TraceOptions::loopUnrollLimit iterations; otherwise it becomes kiln.loop,
// its body retraced with widened (dynamic) dims until the carried types
// hold. Scan is unrolled over its static number of iterations.
//
//===----------------------------------------------------------------------===//

#include "OnnxGraphTracer.h"
#include "OnnxTraceContext.h"

#include "ir/KilnOps.h"

#include <algorithm>
#include <limits>
#include <memory>

namespace kiln {
namespace tracer {

namespace {

/// A type as MLIR prints it ("tensor<2x?xf32>").
std::string formatType(mlir::Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (type)
    type.print(os);
  else
    os << "no tensor";
  return s;
}

/// The GRAPH attribute `name` of a node, null when absent.
const onnx::GraphProto *graphAttr(const onnx::NodeProto &node,
                                  const std::string &name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name && a.has_g())
      return &a.g();
  return nullptr;
}

/// The kind of a non-tensor ONNX type ("sequence", ...), "" for tensors and
/// values without a type.
std::string nonTensorKind(const onnx::ValueInfoProto &info) {
  if (!info.has_type())
    return "";
  const onnx::TypeProto &t = info.type();
  if (t.has_sequence_type())
    return "sequence";
  if (t.has_optional_type())
    return "optional";
  if (t.has_map_type())
    return "map";
  if (t.has_sparse_tensor_type())
    return "sparse tensor";
  return "";
}

/// Merges the types two branches give one output: equal dims stay, others
/// become dynamic; an unranked tensor when the ranks differ (the output
/// gets its rank when a branch runs); null when the element types differ.
mlir::TensorType mergeBranchTypes(mlir::Type typeA, mlir::Type typeB) {
  auto a = mlir::dyn_cast_or_null<mlir::TensorType>(typeA);
  auto b = mlir::dyn_cast_or_null<mlir::TensorType>(typeB);
  if (!a || !b || a.getElementType() != b.getElementType())
    return {};
  if (!a.hasRank() || !b.hasRank() || a.getRank() != b.getRank())
    return mlir::UnrankedTensorType::get(a.getElementType());
  llvm::SmallVector<int64_t> dims;
  for (int64_t d = 0; d < a.getRank(); ++d)
    dims.push_back(a.getDimSize(d) == b.getDimSize(d)
                       ? a.getDimSize(d)
                       : mlir::ShapedType::kDynamic);
  return mlir::RankedTensorType::get(dims, a.getElementType());
}

} // namespace

Expected<llvm::SmallVector<Value>>
GraphTracer::traceSubgraph(const onnx::GraphProto &graph,
                           llvm::ArrayRef<Value> inputs,
                           const std::string &scope) {
  auto fail = [&](const std::string &msg) {
    return error(strCat("the ", scope, ": ", msg));
  };
  if (static_cast<size_t>(graph.input_size()) != inputs.size())
    return fail(strCat("it has ", graph.input_size(), " inputs but ",
                       inputs.size(), " are expected"));
  for (const onnx::ValueInfoProto &info : graph.input())
    if (std::string kind = nonTensorKind(info); !kind.empty())
      return fail(strCat("input '", info.name(), "' is ",
                         kind == "optional" ? "an " : "a ", kind, "; ", kind,
                         "s are not supported by Kiln"));
  for (const onnx::ValueInfoProto &info : graph.output())
    if (std::string kind = nonTensorKind(info); !kind.empty())
      return fail(strCat("output '", info.name(), "' is ",
                         kind == "optional" ? "an " : "a ", kind, "; ", kind,
                         "s are not supported by Kiln"));
  if (graph.sparse_initializer_size())
    return fail("sparse initializers are not supported; store them dense");

  if (scopes_.size() >= static_cast<size_t>(kMaxSubgraphDepth))
    return fail(strCat("subgraphs are nested more than ", kMaxSubgraphDepth,
                       " deep (the limit, docs/reliability.md)"));
  // Names defined inside do not leak out: restore the map on every exit.
  llvm::StringMap<Value> saved = state_.values;
  scopes_.push_back(scope);
  struct Restore {
    GraphTracer &t;
    llvm::StringMap<Value> &saved;
    ~Restore() {
      t.state_.values = std::move(saved);
      t.scopes_.pop_back();
    }
  } restore{*this, saved};

  for (auto [i, v] : llvm::enumerate(inputs))
    state_.values[graph.input(static_cast<int>(i)).name()] = v;
  for (const onnx::TensorProto &init : graph.initializer()) {
    Expected<ProtoTensor> t = readProtoTensor(init, modelDir_);
    if (!t)
      return fail(t.status().message());
    if (t->externalMissing)
      return fail(strCat("the external data of initializer '", init.name(),
                         "' is missing"));
    onnx::NodeProto dummy;
    NodeContext nc(state_, dummy, 0, builder_,
                   nameLoc(init.name(), topIndex_ + 1));
    Value v = nc.constant(t->tensor);
    if (!v)
      return fail(
          strCat("initializer '", init.name(), "': ", nc.errorMessage()));
    state_.values[init.name()] = v;
  }
  NodeWalk walk = walkOf(graph, /*topLevel=*/false);
  KILN_RETURN_IF_ERROR(traceNodes(walk));
  llvm::SmallVector<Value> outputs;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    Value v = state_.values.lookup(out.name());
    if (!v)
      return fail(strCat("output '", out.name(),
                         "' is not produced by any node, input or "
                         "initializer"));
    outputs.push_back(v);
  }
  return outputs;
}

Status GraphTracer::traceControlFlow(NodeContext &nc, const std::string &name,
                                     const std::string &where) {
  const std::string &opType = nc.node().op_type();
  if (opType == "If")
    return traceIf(nc, name, where);
  if (opType == "Loop")
    return traceLoop(nc, name, where);
  return traceScan(nc, name, where);
}

Status GraphTracer::traceIf(NodeContext &nc, const std::string &name,
                            const std::string &where) {
  const onnx::NodeProto &node = nc.node();
  const onnx::GraphProto *branches[2] = {graphAttr(node, "then_branch"),
                                         graphAttr(node, "else_branch")};
  const char *branchNames[2] = {"then_branch", "else_branch"};
  if (!branches[0] || !branches[1])
    return nodeErrorAt(where, "If needs the graph attributes then_branch and "
                              "else_branch");
  Value cond = nc.input(0);
  if (!cond)
    return nodeErrorAt(where, "If needs its condition input");
  if (nc.typeOf(cond).hasStaticShape() && nc.typeOf(cond).getNumElements() != 1)
    return nodeErrorAt(where, strCat("the condition must hold one element, "
                                     "got ",
                                     formatType(nc.typeOf(cond))));
  auto scopeOf = [&](int b) {
    return strCat(branchNames[b], " of node '", name, "'");
  };
  auto bindOutputs = [&](llvm::ArrayRef<Value> values) -> Status {
    for (int i = 0; i < node.output_size(); ++i)
      if (!node.output(i).empty())
        state_.values[node.output(i)] = values[i];
    return Status::ok();
  };

  // A condition known at trace time: only the taken branch, inline.
  if (std::optional<Tensor> c = nc.constTensor(cond)) {
    if (c->numel() != 1)
      return nodeErrorAt(where, "the condition must hold one element");
    int taken = c->toDoubleVector()[0] != 0 ? 0 : 1;
    Expected<llvm::SmallVector<Value>> outs =
        traceSubgraph(*branches[taken], {}, scopeOf(taken));
    if (!outs)
      return outs.status();
    if (outs->size() != static_cast<size_t>(node.output_size()))
      return nodeErrorAt(where,
                         strCat(branchNames[taken], " has ", outs->size(),
                                " outputs but the node "
                                "has ",
                                node.output_size()));
    return bindOutputs(*outs);
  }

  // Otherwise kiln.if with both branches in its regions.
  std::unique_ptr<mlir::Block> blocks[2];
  llvm::SmallVector<Value> outs[2];
  for (int b = 0; b < 2; ++b) {
    blocks[b] = std::make_unique<mlir::Block>();
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToEnd(blocks[b].get());
    Expected<llvm::SmallVector<Value>> traced =
        traceSubgraph(*branches[b], {}, scopeOf(b));
    if (!traced)
      return traced.status();
    outs[b] = traced.take();
    if (outs[b].size() != static_cast<size_t>(node.output_size()))
      return nodeErrorAt(where, strCat(branchNames[b], " has ", outs[b].size(),
                                       " outputs but the node has ",
                                       node.output_size()));
  }
  llvm::SmallVector<std::string> names(node.output().begin(),
                                       node.output().end());
  llvm::SmallVector<mlir::Type> types;
  KILN_RETURN_IF_ERROR(mergeOutputTypes(where, names, outs, types));

  // Outputs whose rank the branch decides, read by later nodes of this
  // graph: those nodes are traced in both branches (OnnxIfSinking.cpp), and
  // the If gives the values that leave them.
  llvm::SmallVector<bool> unranked;
  for (mlir::Type t : types)
    unranked.push_back(mlir::isa<mlir::UnrankedTensorType>(t));
  if (std::optional<SinkPlan> plan = planSinking(node, unranked)) {
    for (int b = 0; b < 2; ++b) {
      mlir::OpBuilder::InsertionGuard guard(builder_);
      builder_.setInsertionPointToEnd(blocks[b].get());
      Expected<llvm::SmallVector<Value>> leaving = traceContinuation(
          node, *plan, outs[b],
          strCat(scopeOf(b), ", where the nodes after the If that read an "
                             "output of unknown rank are traced"),
          where);
      if (!leaving)
        return leaving.status();
      outs[b] = leaving.take();
    }
    names.assign(plan->leaving.begin(), plan->leaving.end());
    types.clear();
    KILN_RETURN_IF_ERROR(mergeOutputTypes(where, names, outs, types));
    markMoved(*plan);
  }
  for (int b = 0; b < 2; ++b) {
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToEnd(blocks[b].get());
    builder_.create<YieldOp>(nc.loc(), outs[b]);
  }
  mlir::OperationState state(nc.loc(), IfOp::getOperationName());
  state.addOperands(cond);
  state.addTypes(types);
  for (int b = 0; b < 2; ++b)
    state.addRegion()->push_back(blocks[b].release());
  mlir::Operation *op = builder_.create(state);
  for (auto [i, name] : llvm::enumerate(names))
    if (!name.empty())
      state_.values[name] = op->getResult(i);
  return Status::ok();
}

Status GraphTracer::mergeOutputTypes(const std::string &where,
                                     llvm::ArrayRef<std::string> names,
                                     const llvm::SmallVector<Value> (&outs)[2],
                                     llvm::SmallVector<mlir::Type> &types) {
  for (size_t i = 0; i < names.size(); ++i) {
    mlir::TensorType merged =
        mergeBranchTypes(outs[0][i].getType(), outs[1][i].getType());
    if (!merged)
      return nodeErrorAt(
          where,
          strCat("the branches disagree on output #", i, " ('", names[i],
                 "'): then_branch gives ", formatType(outs[0][i].getType()),
                 ", else_branch gives ", formatType(outs[1][i].getType()),
                 "; Kiln supports If only when the branches agree on each "
                 "output's element type"));
    types.push_back(merged);
  }
  return Status::ok();
}

Expected<bool> GraphTracer::unrollLoop(NodeContext &nc, const std::string &name,
                                       const std::string &where,
                                       const onnx::GraphProto &body,
                                       int64_t tripCount, bool cond,
                                       llvm::ArrayRef<Value> initial,
                                       size_t numScans) {
  // Traced into a scratch block, moved into place when every condition
  // folded (dropped otherwise).
  auto scratch = std::make_unique<mlir::Block>();
  llvm::SmallVector<Value> carried(initial.begin(), initial.end());
  std::vector<llvm::SmallVector<Value>> scans(numScans);
  mlir::Type i1 = builder_.getI1Type();
  int64_t iteration = 0;
  {
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToEnd(scratch.get());
    for (; iteration < tripCount && cond; ++iteration) {
      llvm::SmallVector<Value> inputs = {nc.scalarI64(iteration),
                                         nc.constFill(1, i1)};
      inputs.append(carried.begin(), carried.end());
      if (nc.failed())
        return nodeErrorAt(where, nc.errorMessage());
      Expected<llvm::SmallVector<Value>> outs = traceSubgraph(
          body, inputs,
          strCat("body of node '", name, "' (iteration ", iteration, ")"));
      if (!outs)
        return outs.status();
      std::optional<Tensor> next = nc.constTensor((*outs)[0]);
      if (!next || next->numel() != 1)
        return false;
      cond = next->toDoubleVector()[0] != 0;
      for (size_t j = 0; j < carried.size(); ++j)
        carried[j] = (*outs)[1 + j];
      for (size_t k = 0; k < numScans; ++k)
        scans[k].push_back((*outs)[1 + carried.size() + k]);
    }
    if (iteration == 0 && numScans)
      return false; // the scan outputs' types come from the body
    for (size_t k = 0; k < numScans; ++k) {
      llvm::SmallVector<Value> parts;
      for (Value v : scans[k])
        parts.push_back(nc.unsqueeze(v, {0}));
      Value stacked = parts.size() == 1
                          ? parts.front()
                          : nc.op("kiln.concat", parts, {nc.aInt("axis", 0)});
      carried.push_back(stacked);
    }
    if (nc.failed())
      return nodeErrorAt(where,
                         strCat("unrolling the loop: ", nc.errorMessage()));
  }
  mlir::Block *block = builder_.getInsertionBlock();
  block->getOperations().splice(builder_.getInsertionPoint(),
                                scratch->getOperations());
  const onnx::NodeProto &node = nc.node();
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && static_cast<size_t>(i) < carried.size())
      state_.values[node.output(i)] = carried[i];
  return true;
}

Status GraphTracer::traceLoop(NodeContext &nc, const std::string &name,
                              const std::string &where) {
  const onnx::NodeProto &node = nc.node();
  const onnx::GraphProto *body = graphAttr(node, "body");
  if (!body)
    return nodeErrorAt(where, "Loop needs the graph attribute body");
  size_t numCarried = node.input_size() < 2 ? 0 : node.input_size() - 2;
  llvm::SmallVector<Value> initial;
  for (size_t j = 0; j < numCarried; ++j) {
    if (!nc.hasInput(2 + j))
      return nodeErrorAt(where, strCat("loop-carried input #", j,
                                       " is absent; Kiln supports present "
                                       "loop-carried values only"));
    initial.push_back(nc.input(2 + j));
  }
  if (static_cast<size_t>(body->input_size()) != numCarried + 2 ||
      static_cast<size_t>(body->output_size()) < numCarried + 1)
    return nodeErrorAt(
        where, strCat("the body has ", body->input_size(), " inputs and ",
                      body->output_size(), " outputs; with ", numCarried,
                      " loop-carried values it needs ", numCarried + 2,
                      " inputs and at least ", numCarried + 1, " outputs"));
  size_t numScans = body->output_size() - 1 - numCarried;
  if (static_cast<size_t>(node.output_size()) > numCarried + numScans)
    return nodeErrorAt(where, strCat("the node has ", node.output_size(),
                                     " outputs but its body gives ", numCarried,
                                     " carried values and ", numScans,
                                     " scan outputs"));
  Value maxTrip = nc.hasInput(0) ? nc.input(0) : Value();
  Value cond = nc.hasInput(1) ? nc.input(1) : Value();

  // Unrolled when the trip count and every condition fold.
  std::optional<std::vector<int64_t>> trip =
      maxTrip ? nc.constInts(maxTrip) : std::nullopt;
  std::optional<Tensor> cond0 =
      cond ? nc.constTensor(cond)
           : std::optional<Tensor>(Tensor::scalar<bool>(true));
  if (trip && trip->size() == 1 && cond0 && cond0->numel() == 1 &&
      (*trip)[0] <= options_.loopUnrollLimit) {
    Expected<bool> unrolled =
        unrollLoop(nc, name, where, *body, (*trip)[0],
                   cond0->toDoubleVector()[0] != 0, initial, numScans);
    if (!unrolled)
      return unrolled.status();
    if (*unrolled)
      return Status::ok();
  }

  // Otherwise kiln.loop. Carried values whose size the body changes get
  // dynamic dims: trace the body, widen, trace again until the types hold.
  mlir::Type i1 = builder_.getI1Type(), i64 = builder_.getI64Type();
  if (!maxTrip)
    maxTrip = nc.scalarI64(std::numeric_limits<int64_t>::max());
  if (!cond)
    cond = nc.constFill(1, i1);
  if (nc.failed())
    return nodeErrorAt(where, nc.errorMessage());
  llvm::SmallVector<mlir::RankedTensorType> carriedTypes;
  for (Value v : initial)
    carriedTypes.push_back(nc.typeOf(v));
  std::string scope = strCat("body of node '", name, "'");
  std::unique_ptr<mlir::Block> done;
  llvm::SmallVector<mlir::Type> types;
  while (!done) {
    auto block = std::make_unique<mlir::Block>();
    block->addArgument(mlir::RankedTensorType::get({}, i64), nc.loc());
    block->addArgument(mlir::RankedTensorType::get({}, i1), nc.loc());
    for (mlir::RankedTensorType t : carriedTypes)
      block->addArgument(t, nc.loc());
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToEnd(block.get());
    llvm::SmallVector<Value> args(block->getArguments().begin(),
                                  block->getArguments().end());
    Expected<llvm::SmallVector<Value>> traced =
        traceSubgraph(*body, args, scope);
    if (!traced)
      return traced.status();
    llvm::SmallVector<Value> outs = traced.take();
    mlir::RankedTensorType condType = nc.typeOf(outs[0]);
    if (!condType || condType.getElementType() != i1)
      return nodeErrorAt(where, "the body's first output (the condition) "
                                "must be a bool tensor");
    if (!condType.hasStaticShape() || condType.getRank() != 0)
      outs[0] = nc.reshape(outs[0], {});
    bool widened = false;
    for (size_t j = 0; j < numCarried; ++j) {
      mlir::RankedTensorType got = nc.typeOf(outs[1 + j]);
      // A loop keeps each carried value's rank (no unranked merge here).
      auto merged = mlir::dyn_cast_or_null<mlir::RankedTensorType>(
          mergeBranchTypes(carriedTypes[j], got));
      if (!merged)
        return nodeErrorAt(
            where,
            strCat("the body turns loop-carried value #", j, " from ",
                   formatType(carriedTypes[j]), " into ", formatType(got),
                   "; Kiln supports Loop only when the body keeps the "
                   "element type and rank of each carried value"));
      if (merged != carriedTypes[j]) {
        carriedTypes[j] = merged;
        widened = true;
      }
    }
    if (widened)
      continue; // trace again with the dynamic dims
    if (nc.failed())
      return nodeErrorAt(where, nc.errorMessage());
    builder_.create<YieldOp>(nc.loc(), outs);
    types.assign(carriedTypes.begin(), carriedTypes.end());
    for (size_t k = 0; k < numScans; ++k) {
      mlir::RankedTensorType elem = nc.typeOf(outs[1 + numCarried + k]);
      llvm::SmallVector<int64_t> dims = {mlir::ShapedType::kDynamic};
      llvm::append_range(dims, elem.getShape());
      types.push_back(mlir::RankedTensorType::get(dims, elem.getElementType()));
    }
    done = std::move(block);
  }
  mlir::OperationState state(nc.loc(), LoopOp::getOperationName());
  state.addOperands({maxTrip, cond});
  state.addOperands(initial);
  state.addTypes(types);
  state.addRegion()->push_back(done.release());
  mlir::Operation *op = builder_.create(state);
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      state_.values[node.output(i)] = op->getResult(i);
  return Status::ok();
}

Status GraphTracer::traceScan(NodeContext &nc, const std::string &name,
                              const std::string &where) {
  const onnx::NodeProto &node = nc.node();
  const onnx::GraphProto *body = graphAttr(node, "body");
  if (!body)
    return nodeErrorAt(where, "Scan needs the graph attribute body");
  int64_t numScanIn = nc.attrInt("num_scan_inputs", 0);
  int64_t numIn = node.input_size();
  if (numScanIn <= 0 || numScanIn > numIn)
    return nodeErrorAt(where, strCat("num_scan_inputs is ", numScanIn,
                                     " but the node has ", numIn, " inputs"));
  int64_t numState = numIn - numScanIn;
  if (body->input_size() != numIn || body->output_size() < numState)
    return nodeErrorAt(
        where, strCat("the body has ", body->input_size(), " inputs and ",
                      body->output_size(), " outputs; the node has ", numIn,
                      " inputs of which ", numState, " are state variables"));
  int64_t numScanOut = body->output_size() - numState;
  auto listAttr = [&](const char *attr, int64_t count) {
    std::vector<int64_t> v = nc.attrInts(attr).value_or(std::vector<int64_t>());
    v.resize(count, 0);
    return v;
  };
  std::vector<int64_t> inAxes = listAttr("scan_input_axes", numScanIn);
  std::vector<int64_t> inDirs = listAttr("scan_input_directions", numScanIn);
  std::vector<int64_t> outAxes = listAttr("scan_output_axes", numScanOut);
  std::vector<int64_t> outDirs = listAttr("scan_output_directions", numScanOut);

  llvm::SmallVector<Value> states, scanIns;
  for (int64_t i = 0; i < numIn; ++i) {
    if (!nc.hasInput(i))
      return nodeErrorAt(where, strCat("input #", i, " is absent"));
    (i < numState ? states : scanIns).push_back(nc.input(i));
  }
  // The number of iterations: the scan axis of the scan inputs, static.
  int64_t iterations = -1;
  for (int64_t j = 0; j < numScanIn; ++j) {
    int64_t rank = nc.rankOf(scanIns[j]);
    std::optional<int64_t> axis = nc.normAxis(inAxes[j], rank);
    if (!axis)
      return nodeErrorAt(where, nc.errorMessage());
    inAxes[j] = *axis;
    int64_t size = nc.typeOf(scanIns[j]).getDimSize(*axis);
    if (mlir::ShapedType::isDynamic(size))
      return nodeErrorAt(
          where, strCat("scan input #", j,
                        " has a dynamic size along its "
                        "scan axis; Kiln supports Scan by unrolling it, "
                        "which needs a static number of iterations"));
    if (iterations >= 0 && size != iterations)
      return nodeErrorAt(where, "the scan inputs disagree on the number of "
                                "iterations");
    iterations = size;
  }
  if (iterations > options_.loopUnrollLimit)
    return nodeErrorAt(where,
                       strCat("Scan runs ", iterations,
                              " iterations; Kiln supports Scan by unrolling "
                              "it, up to ",
                              options_.loopUnrollLimit, " iterations"));
  if (iterations == 0 && numScanOut > 0)
    return nodeErrorAt(where, "a Scan of zero iterations with scan outputs is "
                              "not supported by Kiln");
  std::vector<llvm::SmallVector<Value>> scanOuts(numScanOut);
  for (int64_t t = 0; t < iterations; ++t) {
    llvm::SmallVector<Value> inputs(states.begin(), states.end());
    for (int64_t j = 0; j < numScanIn; ++j) {
      int64_t index = inDirs[j] ? iterations - 1 - t : t;
      inputs.push_back(nc.op("kiln.gather", {scanIns[j], nc.scalarI64(index)},
                             {nc.aInt("axis", inAxes[j])}));
    }
    if (nc.failed())
      return nodeErrorAt(where, nc.errorMessage());
    Expected<llvm::SmallVector<Value>> outs = traceSubgraph(
        *body, inputs, strCat("body of node '", name, "' (iteration ", t, ")"));
    if (!outs)
      return outs.status();
    for (int64_t i = 0; i < numState; ++i)
      states[i] = (*outs)[i];
    for (int64_t k = 0; k < numScanOut; ++k)
      scanOuts[k].push_back((*outs)[numState + k]);
  }
  llvm::SmallVector<Value> results(states.begin(), states.end());
  for (int64_t k = 0; k < numScanOut; ++k) {
    int64_t rank = nc.rankOf(scanOuts[k].front()) + 1;
    std::optional<int64_t> axis = nc.normAxis(outAxes[k], rank);
    if (!axis)
      return nodeErrorAt(where, nc.errorMessage());
    if (outDirs[k])
      std::reverse(scanOuts[k].begin(), scanOuts[k].end());
    llvm::SmallVector<Value> parts;
    for (Value v : scanOuts[k])
      parts.push_back(nc.unsqueeze(v, {*axis}));
    results.push_back(parts.size() == 1 ? parts.front()
                                        : nc.op("kiln.concat", parts,
                                                {nc.aInt("axis", *axis)}));
  }
  if (nc.failed())
    return nodeErrorAt(where, nc.errorMessage());
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && static_cast<size_t>(i) < results.size())
      state_.values[node.output(i)] = results[i];
  return Status::ok();
}

} // namespace tracer
} // namespace kiln
