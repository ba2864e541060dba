//===- Executor.cpp - The reference executor of a Program -----------------===//
//
// This file implements runProgram: it checks the caller's inputs and weights
// against the Program's signature (names, dtypes, static dimensions, named
// dynamic dimensions agreeing across inputs), binds constants, runs each node
// through the global Dispatcher in order, releases every value after its
// last use, and returns the outputs in signature order. A malformed Program
// (a value used before it is defined, an id out of range) is an error, not a
// crash.
//
// Programs with graph breaks add structural nodes, run here by a small
// interpreter over one value table (all regions share the program's value
// ids): "if" runs one of its two regions, "loop" runs its body with ONNX Loop
// semantics and stacks the scan values, "eager" runs its region's ops on the
// reference runtime, and "call" hands a compiled graph to
// ProgramHooks::callGraph. Early release happens at the top level only: a
// value read anywhere inside a structural node's regions counts as read by
// that node, values defined inside its regions are dropped when it finishes,
// and nothing is released inside a region (a loop body runs many times).
//
// Statistics: eagerOps and eagerSeconds count every kernel the reference
// runtime runs through the Dispatcher, inside eager regions or not (a plain
// traced program run on the reference runtime counts all its ops there);
// eagerRegions counts "eager" nodes run, graphCalls and graphSeconds the
// "call" nodes and the time spent in callGraph.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Executor.h"
#include "kiln/runtime/NonFinite.h"
#include "kiln/runtime/Trace.h"

#include "SignatureCheck.h"
#include "kiln/runtime/Dispatcher.h"

#include <chrono>
#include <cstring>

#include <unistd.h>

namespace kiln {

namespace {

/// A named dynamic dimension's first binding, for agreement checks.
struct DimBinding {
  int64_t value;
  std::string where; ///< "input 'x' dim 0".
};

/// Checks one tensor against its signature; `kind` is "input" or "weight".
Status checkAgainstSignature(const ValueSignature &sig, const Tensor &t,
                             const char *kind,
                             std::map<std::string, DimBinding> &dims) {
  std::string prefix = strCat(kind, " '", sig.name, "'");
  if (!t.defined())
    return Status::error(strCat(prefix, ": no tensor given (expected ",
                                signatureTypeString(sig), ")"));
  if (t.device() != Device::CPU)
    return Status::error(strCat(prefix,
                                ": the reference executor runs on "
                                "the cpu but the tensor is on ",
                                deviceName(t.device())));
  bool match = t.dtype() == sig.dtype && t.rank() == (int64_t)sig.shape.size();
  for (size_t i = 0; match && i < sig.shape.size(); ++i)
    if (sig.shape[i] >= 0 && sig.shape[i] != t.dim(i))
      match = false;
  if (!match)
    return Status::error(strCat(prefix, ": expected ", signatureTypeString(sig),
                                " but got ", t.typeString()));
  for (size_t i = 0; i < sig.shape.size(); ++i) {
    if (sig.shape[i] >= 0 || i >= sig.dimNames.size() ||
        sig.dimNames[i].empty())
      continue;
    const std::string &name = sig.dimNames[i];
    std::string where = strCat(kind, " '", sig.name, "' dim ", i);
    auto it = dims.find(name);
    if (it == dims.end()) {
      dims[name] = DimBinding{t.dim(i), where};
      continue;
    }
    if (it->second.value != t.dim(i))
      return Status::error(strCat(
          prefix, ": dynamic dimension '", name, "' is ", t.dim(i), " (", where,
          ") but ", it->second.value, " (", it->second.where, ")"));
  }
  return Status::ok();
}

std::string nodeContext(const ProgramNode &node, size_t index) {
  std::string name =
      node.sourceName.empty() ? strCat("#", index) : node.sourceName;
  std::string src = node.sourceOp.empty() ? std::string("?") : node.sourceOp;
  return strCat("node '", name, "' (", src, ", kiln.", node.op, ")");
}

/// A node's description for messages (nodeContext), built only when an
/// error needs it: a loop body's nodes run many times.
class NodeContext {
public:
  NodeContext(const ProgramNode &node, size_t index)
      : node_(node), index_(index) {}
  const std::string &str() const {
    if (text_.empty())
      text_ = nodeContext(node_, index_);
    return text_;
  }

private:
  const ProgramNode &node_;
  size_t index_;
  mutable std::string text_;
};

/// Which region of a structural node runs: "then branch", "body
/// (iteration 3)".
struct RegionLabel {
  const char *name;
  int64_t iteration = -1;
  std::string str() const {
    return iteration < 0 ? std::string(name)
                         : strCat(name, " (iteration ", iteration, ")");
  }
};

/// Adds every value id read inside `regions` (inner operands and region
/// results, at any depth) to `reads`, and every id defined there (region
/// arguments and inner results) to `defs`.
void collectRegionIds(const std::vector<ProgramRegion> &regions,
                      std::vector<int> &reads, std::vector<int> &defs) {
  for (const ProgramRegion &region : regions) {
    defs.insert(defs.end(), region.arguments.begin(), region.arguments.end());
    for (const ProgramNode &inner : region.nodes) {
      reads.insert(reads.end(), inner.operands.begin(), inner.operands.end());
      defs.insert(defs.end(), inner.results.begin(), inner.results.end());
      collectRegionIds(inner.regions, reads, defs);
    }
    reads.insert(reads.end(), region.results.begin(), region.results.end());
  }
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Runs nodes over one value table.
class ProgramRunner {
public:
  ProgramRunner(const Program &program, const ProgramHooks *hooks,
                ProgramStats *stats, bool checkNan, Trace *trace)
      : program_(program), hooks_(hooks), stats_(stats), checkNan_(checkNan),
        trace_(trace), values_(program.numValues) {}

  bool validId(int id) const {
    return id >= 0 && id < static_cast<int>(values_.size());
  }
  std::vector<Tensor> &values() { return values_; }

  /// Runs one node (a kernel or a structural node) and stores its results.
  /// Errors start with `context` (the node's description).
  Status runNode(const ProgramNode &node, const NodeContext &context);

private:
  Status gatherOperands(const ProgramNode &node, const NodeContext &context,
                        std::vector<Tensor> &operands) const;
  Status checkResultIds(const ProgramNode &node,
                        const NodeContext &context) const;
  /// Runs the nodes of `region` (no release); errors are prefixed with
  /// "<context> <label>: ".
  Status runRegion(const ProgramRegion &region, const NodeContext &context,
                   const RegionLabel &label);
  /// Reads region results into `out`.
  Status readRegionResults(const ProgramRegion &region,
                           const NodeContext &context, const RegionLabel &label,
                           std::vector<Tensor> &out) const;
  /// Stores `results` (one per node result) into the value table.
  Status storeResults(const ProgramNode &node, const NodeContext &context,
                      std::vector<Tensor> &results, const char *producer);

  Status runKernel(const ProgramNode &node, const NodeContext &context);
  Status runIf(const ProgramNode &node, const NodeContext &context);
  Status runLoop(const ProgramNode &node, const NodeContext &context);
  Status runEager(const ProgramNode &node, const NodeContext &context);
  Status runCall(const ProgramNode &node, const NodeContext &context);
  /// RunOptions::trace: a span of `node` from `start` to now.
  void addSpan(const ProgramNode &node, const char *category,
               std::chrono::steady_clock::time_point start);

  const Program &program_;
  const ProgramHooks *hooks_;
  ProgramStats *stats_;
  bool checkNan_;
  Trace *trace_;
  std::vector<Tensor> values_;
};

Status ProgramRunner::gatherOperands(const ProgramNode &node,
                                     const NodeContext &context,
                                     std::vector<Tensor> &operands) const {
  operands.clear();
  for (size_t i = 0; i < node.operands.size(); ++i) {
    int id = node.operands[i];
    if (!validId(id))
      return Status::error(strCat(context.str(),
                                  ": malformed program: operand ", i,
                                  " has value id ", id));
    if (!values_[id].defined())
      return Status::error(
          strCat(context.str(), ": malformed program: operand ", i, " (value %",
                 id, ") is used before it is defined"));
    operands.push_back(values_[id]);
  }
  return Status::ok();
}

Status ProgramRunner::checkResultIds(const ProgramNode &node,
                                     const NodeContext &context) const {
  for (int id : node.results)
    if (!validId(id))
      return Status::error(strCat(
          context.str(), ": malformed program: result has value id ", id));
  return Status::ok();
}

Status ProgramRunner::storeResults(const ProgramNode &node,
                                   const NodeContext &context,
                                   std::vector<Tensor> &results,
                                   const char *producer) {
  if (results.size() != node.results.size())
    return Status::error(strCat(context.str(), ": ", producer, " returned ",
                                results.size(), " results, expected ",
                                node.results.size()));
  for (size_t r = 0; r < results.size(); ++r) {
    if (!results[r].defined())
      return Status::error(strCat(context.str(), ": ", producer,
                                  " did not produce result ", r, " of ",
                                  node.results.size()));
    if (checkNan_)
      KILN_RETURN_IF_ERROR(checkFinite(
          results[r], strCat("--check-nan: ", context.str(), ": result ", r)));
    values_[node.results[r]] = std::move(results[r]);
  }
  return Status::ok();
}

Status ProgramRunner::runNode(const ProgramNode &node,
                              const NodeContext &context) {
  if (node.op == "constant")
    return Status::error(strCat(context.str(), ": malformed program: constants "
                                               "belong in Program::constants"));
  KILN_RETURN_IF_ERROR(checkResultIds(node, context));
  if (node.op == "if")
    return runIf(node, context);
  if (node.op == "loop")
    return runLoop(node, context);
  if (node.op == "eager")
    return runEager(node, context);
  if (node.op == "call")
    return runCall(node, context);
  if (!node.regions.empty())
    return Status::error(strCat(context.str(), ": malformed program: kiln.",
                                node.op,
                                " has regions but is not a structural node"));
  return runKernel(node, context);
}

Status ProgramRunner::runKernel(const ProgramNode &node,
                                const NodeContext &context) {
  std::vector<Tensor> operands;
  KILN_RETURN_IF_ERROR(gatherOperands(node, context, operands));
  std::vector<Tensor> results(node.results.size());
  auto start = std::chrono::steady_clock::now();
  Status status =
      Dispatcher::global().call(node.op, operands, node.attrs, results);
  if (stats_) {
    stats_->eagerOps += 1;
    stats_->eagerSeconds += secondsSince(start);
  }
  if (trace_)
    addSpan(node, "eager", start);
  if (!status)
    return status.withContext(context.str());
  return storeResults(node, context, results, "the kernel");
}

Status ProgramRunner::runRegion(const ProgramRegion &region,
                                const NodeContext &context,
                                const RegionLabel &label) {
  for (size_t n = 0; n < region.nodes.size(); ++n) {
    const ProgramNode &inner = region.nodes[n];
    Status status = runNode(inner, NodeContext(inner, n));
    if (!status)
      return status.withContext(strCat(context.str(), " ", label.str()));
  }
  return Status::ok();
}

Status ProgramRunner::readRegionResults(const ProgramRegion &region,
                                        const NodeContext &context,
                                        const RegionLabel &label,
                                        std::vector<Tensor> &out) const {
  out.clear();
  for (size_t i = 0; i < region.results.size(); ++i) {
    int id = region.results[i];
    if (!validId(id))
      return Status::error(strCat(context.str(), " ", label.str(),
                                  ": malformed program: result ", i,
                                  " has value id ", id));
    if (!values_[id].defined())
      return Status::error(strCat(context.str(), " ", label.str(),
                                  ": malformed program: result ", i,
                                  " (value %", id, ") is never defined"));
    out.push_back(values_[id]);
  }
  return Status::ok();
}

/// Reads a one-element boolean (the condition of an If or a Loop); `label`
/// names the region that yielded it, if any.
Expected<bool> readCondition(const Tensor &t, const NodeContext &context,
                             const RegionLabel *label, const char *what) {
  auto where = [&] {
    return label ? strCat(context.str(), " ", label->str()) : context.str();
  };
  if (t.dtype() != DType::Bool || t.numel() != 1)
    return Status::error(strCat(where(), ": ", what,
                                " must hold exactly one bool, got ",
                                t.typeString()));
  if (t.device() != Device::CPU)
    return Status::error(strCat(where(), ": ", what, " is on ",
                                deviceName(t.device()),
                                "; the executor reads conditions on the cpu"));
  return t.getInt(0) != 0;
}

Status ProgramRunner::runIf(const ProgramNode &node,
                            const NodeContext &context) {
  if (node.operands.size() != 1 || node.regions.size() != 2)
    return Status::error(strCat(context.str(),
                                ": malformed program: kiln.if needs one "
                                "operand and two regions, got ",
                                node.operands.size(), " and ",
                                node.regions.size()));
  std::vector<Tensor> operands;
  KILN_RETURN_IF_ERROR(gatherOperands(node, context, operands));
  Expected<bool> cond =
      readCondition(operands[0], context, nullptr, "the condition");
  if (!cond)
    return cond.status();
  if (stats_)
    stats_->branches += 1;
  const ProgramRegion &region = node.regions[*cond ? 0 : 1];
  const char *label = *cond ? "then branch" : "else branch";
  KILN_RETURN_IF_ERROR(runRegion(region, context, RegionLabel{label}));
  std::vector<Tensor> results;
  KILN_RETURN_IF_ERROR(
      readRegionResults(region, context, RegionLabel{label}, results));
  if (results.size() != node.results.size())
    return Status::error(strCat(context.str(), ": the ", label, " yields ",
                                results.size(), " values, expected ",
                                node.results.size()));
  return storeResults(node, context, results, label);
}

/// Stacks `slices` (equal shapes and dtypes) along a new first axis.
Expected<Tensor> stackSlices(const std::vector<Tensor> &slices) {
  const Tensor &first = slices.front();
  Shape shape = first.shape();
  shape.insert(shape.begin(), static_cast<int64_t>(slices.size()));
  Tensor out = Tensor::empty(first.dtype(), shape);
  size_t bytes = first.nbytes();
  char *dst = static_cast<char *>(out.rawData());
  for (size_t i = 0; i < slices.size(); ++i) {
    Tensor c = slices[i].contiguous();
    if (bytes)
      std::memcpy(dst + i * bytes, c.rawData(), bytes);
  }
  return out;
}

Status ProgramRunner::runLoop(const ProgramNode &node,
                              const NodeContext &context) {
  if (node.operands.size() < 2 || node.regions.size() != 1)
    return Status::error(strCat(context.str(),
                                ": malformed program: kiln.loop needs at "
                                "least two operands and one region, got ",
                                node.operands.size(), " and ",
                                node.regions.size()));
  const size_t numCarried = node.operands.size() - 2;
  if (node.results.size() < numCarried)
    return Status::error(
        strCat(context.str(), ": malformed program: kiln.loop has ", numCarried,
               " carried values but only ", node.results.size(), " results"));
  const size_t numScan = node.results.size() - numCarried;
  const ProgramRegion &body = node.regions[0];
  if (body.arguments.size() != 2 + numCarried ||
      body.results.size() != 1 + numCarried + numScan)
    return Status::error(strCat(
        context.str(), ": malformed program: the loop body has ",
        body.arguments.size(), " arguments and ", body.results.size(),
        " results; expected ", 2 + numCarried, " (iteration, condition, ",
        numCarried, " carried) and ", 1 + numCarried + numScan, " (condition, ",
        numCarried, " carried, ", numScan, " scan)"));
  for (size_t i = 0; i < body.arguments.size(); ++i)
    if (!validId(body.arguments[i]))
      return Status::error(strCat(context.str(),
                                  ": malformed program: body argument ", i,
                                  " has value id ", body.arguments[i]));

  std::vector<Tensor> operands;
  KILN_RETURN_IF_ERROR(gatherOperands(node, context, operands));
  const Tensor &tripTensor = operands[0];
  if (tripTensor.numel() != 1 || isFloatingPoint(tripTensor.dtype()) ||
      tripTensor.dtype() == DType::Bool)
    return Status::error(strCat(context.str(),
                                ": the trip count must hold exactly one "
                                "integer (i64), got ",
                                tripTensor.typeString()));
  if (tripTensor.device() != Device::CPU)
    return Status::error(strCat(context.str(), ": the trip count is on ",
                                deviceName(tripTensor.device()),
                                "; the executor reads it on the cpu"));
  const int64_t maxTrips = tripTensor.getInt(0);
  Expected<bool> initialCond =
      readCondition(operands[1], context, nullptr, "the initial condition");
  if (!initialCond)
    return initialCond.status();
  bool cond = *initialCond;
  std::vector<Tensor> carried(operands.begin() + 2, operands.end());
  std::vector<std::vector<Tensor>> scans(numScan);

  std::vector<Tensor> yielded;
  int64_t iteration = 0;
  for (; iteration < maxTrips && cond; ++iteration) {
    RegionLabel label{"body", iteration};
    values_[body.arguments[0]] = Tensor::scalar<int64_t>(iteration);
    values_[body.arguments[1]] = Tensor::scalar<bool>(cond);
    for (size_t c = 0; c < numCarried; ++c)
      values_[body.arguments[2 + c]] = carried[c];
    if (stats_)
      stats_->loopIterations += 1;
    KILN_RETURN_IF_ERROR(runRegion(body, context, label));
    KILN_RETURN_IF_ERROR(readRegionResults(body, context, label, yielded));
    Expected<bool> next =
        readCondition(yielded[0], context, &label, "the yielded condition");
    if (!next)
      return next.status();
    cond = *next;
    for (size_t c = 0; c < numCarried; ++c)
      carried[c] = yielded[1 + c];
    for (size_t k = 0; k < numScan; ++k) {
      const Tensor &v = yielded[1 + numCarried + k];
      if (v.device() != Device::CPU)
        return Status::error(strCat(
            context.str(), " ", label.str(), ": scan output ", k, " is on ",
            deviceName(v.device()), "; the executor stacks them on the cpu"));
      if (!scans[k].empty()) {
        const Tensor &first = scans[k].front();
        if (first.dtype() != v.dtype() || first.shape() != v.shape())
          return Status::error(strCat(
              context.str(), " ", label.str(), ": scan output ", k, " is ",
              v.typeString(), " but was ", first.typeString(),
              " in iteration 0; every iteration must yield the same shape"));
      }
      scans[k].push_back(v);
    }
  }

  std::vector<Tensor> results = std::move(carried);
  std::vector<int64_t> scanDTypes = node.attrs.getInts("scan_dtypes");
  // "scan_shapes": per scan output, the rank of one iteration's value, then
  // its sizes (-1 when dynamic, taken as 0 in an empty result).
  std::vector<int64_t> scanShapes = node.attrs.getInts("scan_shapes");
  size_t shapeAt = 0;
  for (size_t k = 0; k < numScan; ++k) {
    Shape emptyShape{0};
    if (shapeAt < scanShapes.size()) {
      int64_t rank = scanShapes[shapeAt++];
      for (int64_t d = 0; d < rank && shapeAt < scanShapes.size(); ++d)
        emptyShape.push_back(std::max<int64_t>(scanShapes[shapeAt++], 0));
    }
    if (!scans[k].empty()) {
      Expected<Tensor> stacked = stackSlices(scans[k]);
      if (!stacked)
        return stacked.status().withContext(context.str());
      results.push_back(stacked.take());
      continue;
    }
    if (k >= scanDTypes.size() || scanDTypes[k] < 0 ||
        scanDTypes[k] >= kNumDTypes)
      return Status::error(strCat(
          context.str(), ": the loop ran zero times and scan output ", k,
          " has no valid dtype in the attribute 'scan_dtypes' (malformed "
          "program)"));
    results.push_back(
        Tensor::empty(static_cast<DType>(scanDTypes[k]), emptyShape));
  }
  return storeResults(node, context, results, "the loop");
}

Status ProgramRunner::runEager(const ProgramNode &node,
                               const NodeContext &context) {
  if (node.regions.size() != 1)
    return Status::error(strCat(context.str(),
                                ": malformed program: kiln.eager needs one "
                                "region, got ",
                                node.regions.size()));
  const ProgramRegion &region = node.regions[0];
  if (region.arguments.size() != node.operands.size())
    return Status::error(
        strCat(context.str(), ": malformed program: the eager region has ",
               region.arguments.size(), " arguments but the node has ",
               node.operands.size(), " operands"));
  std::vector<Tensor> operands;
  KILN_RETURN_IF_ERROR(gatherOperands(node, context, operands));
  for (size_t i = 0; i < region.arguments.size(); ++i) {
    if (!validId(region.arguments[i]))
      return Status::error(strCat(context.str(),
                                  ": malformed program: region argument ", i,
                                  " has value id ", region.arguments[i]));
    values_[region.arguments[i]] = operands[i];
  }
  if (stats_)
    stats_->eagerRegions += 1;
  auto start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(runRegion(region, context, RegionLabel{"eager region"}));
  if (trace_)
    addSpan(node, "graph_break", start);
  std::vector<Tensor> results;
  KILN_RETURN_IF_ERROR(
      readRegionResults(region, context, RegionLabel{"eager region"}, results));
  return storeResults(node, context, results, "the eager region");
}

Status ProgramRunner::runCall(const ProgramNode &node,
                              const NodeContext &context) {
  auto it = node.attrs.all().find("graph");
  const int64_t *index = it == node.attrs.all().end()
                             ? nullptr
                             : std::get_if<int64_t>(&it->second);
  if (!index || *index < 0 ||
      *index >= static_cast<int64_t>(program_.graphs.size()))
    return Status::error(
        strCat(context.str(),
               ": malformed program: the attribute 'graph' must be an "
               "index into the program's ",
               program_.graphs.size(), " compiled graphs"));
  const std::string &graph = program_.graphs[*index];
  if (!hooks_ || !hooks_->callGraph)
    return Status::error(strCat(context.str(), ": compiled graph '", graph,
                                "' called without a runner (run the program "
                                "through a package, which runs its compiled "
                                "graphs)"));
  std::vector<Tensor> operands;
  KILN_RETURN_IF_ERROR(gatherOperands(node, context, operands));
  auto start = std::chrono::steady_clock::now();
  Expected<std::vector<Tensor>> results =
      hooks_->callGraph(static_cast<int>(*index), operands);
  if (stats_) {
    stats_->graphCalls += 1;
    stats_->graphSeconds += secondsSince(start);
  }
  if (!results)
    return results.status().withContext(
        strCat(context.str(), ": compiled graph '", graph, "'"));
  return storeResults(node, context, *results,
                      strCat("compiled graph '", graph, "'").c_str());
}

void ProgramRunner::addSpan(const ProgramNode &node, const char *category,
                            std::chrono::steady_clock::time_point start) {
  TraceEvent span;
  span.name = "kiln." + node.op;
  span.category = category;
  span.startUs = trace_->microsecondsAt(start);
  span.durationUs = trace_->nowMicroseconds() - span.startUs;
  span.pid = static_cast<int>(getpid());
  span.tid = Trace::threadId();
  if (!node.sourceName.empty())
    span.args.emplace_back("nodes", node.sourceName);
  if (!node.sourceOp.empty())
    span.args.emplace_back("op_type", node.sourceOp);
  trace_->add(std::move(span));
}

} // namespace

Expected<NamedTensors>
runProgram(const Program &program, const NamedTensors &inputs,
           const NamedTensors &weights, const ProgramHooks *hooks,
           ProgramStats *stats, bool checkNan, Trace *trace) {
  const int numValues = program.numValues;
  if (numValues < 0)
    return Status::error("malformed program: negative value count");
  ProgramRunner runner(program, hooks, stats, checkNan, trace);
  std::vector<Tensor> &values = runner.values();
  auto validId = [&](int id) { return id >= 0 && id < numValues; };

  // Inputs and weights.
  KILN_RETURN_IF_ERROR(
      checkNames(program.inputs, inputs, "input", "program", false));
  std::map<std::string, DimBinding> dims;
  for (const auto &sig : program.inputs) {
    const Tensor *t = findNamed(inputs, sig.name);
    if (!t)
      return Status::error(strCat(
          "missing input '", sig.name, "' (expected ", signatureTypeString(sig),
          "; the program's inputs are ", joinNames(program.inputs), ")"));
    KILN_RETURN_IF_ERROR(checkAgainstSignature(sig, *t, "input", dims));
    if (!validId(sig.valueId))
      return Status::error(strCat("malformed program: input '", sig.name,
                                  "' has value id ", sig.valueId));
    values[sig.valueId] = *t;
  }
  for (const auto &sig : program.weights) {
    const Tensor *t = findNamed(weights, sig.name);
    if (!t)
      return Status::error(strCat("missing weight '", sig.name, "' (expected ",
                                  signatureTypeString(sig), ")"));
    std::map<std::string, DimBinding> weightDims = dims;
    KILN_RETURN_IF_ERROR(checkAgainstSignature(sig, *t, "weight", weightDims));
    if (!validId(sig.valueId))
      return Status::error(strCat("malformed program: weight '", sig.name,
                                  "' has value id ", sig.valueId));
    values[sig.valueId] = *t;
  }
  for (const auto &entry : program.constants) {
    if (!validId(entry.first))
      return Status::error(
          strCat("malformed program: constant has value id ", entry.first));
    if (!entry.second.defined())
      return Status::error(
          strCat("malformed program: constant %", entry.first, " is empty"));
    values[entry.first] = entry.second;
  }

  // Last use of each value: index of the last top-level node reading it (a
  // read anywhere inside a structural node's regions counts as a read by
  // that node); outputs are kept to the end.
  const size_t numNodes = program.nodes.size();
  std::vector<std::vector<int>> reads(numNodes), innerDefs(numNodes);
  std::vector<int64_t> lastUse(numValues, -1);
  for (size_t n = 0; n < numNodes; ++n) {
    const ProgramNode &node = program.nodes[n];
    reads[n] = node.operands;
    collectRegionIds(node.regions, reads[n], innerDefs[n]);
    for (int id : reads[n])
      if (validId(id))
        lastUse[id] = static_cast<int64_t>(n);
  }
  for (const auto &sig : program.outputs)
    if (validId(sig.valueId))
      lastUse[sig.valueId] = INT64_MAX;

  for (size_t n = 0; n < numNodes; ++n) {
    const ProgramNode &node = program.nodes[n];
    const int64_t index = static_cast<int64_t>(n);
    KILN_RETURN_IF_ERROR(runner.runNode(node, NodeContext(node, n)));
    // Release values whose last reader was this node.
    for (int id : reads[n])
      if (validId(id) && lastUse[id] == index)
        values[id] = Tensor();
    // Values of the node's regions are dead once it is done.
    for (int id : innerDefs[n])
      if (validId(id) && lastUse[id] <= index)
        values[id] = Tensor();
    // Results nobody reads are dropped at once.
    for (int id : node.results)
      if (lastUse[id] < index)
        values[id] = Tensor();
  }

  NamedTensors outputs;
  outputs.reserve(program.outputs.size());
  for (const auto &sig : program.outputs) {
    if (!validId(sig.valueId) || !values[sig.valueId].defined())
      return Status::error(strCat("malformed program: output '", sig.name,
                                  "' (value %", sig.valueId,
                                  ") is never defined"));
    const Tensor &t = values[sig.valueId];
    if (t.dtype() != sig.dtype)
      return Status::error(strCat("output '", sig.name, "': expected ",
                                  signatureTypeString(sig), " but computed ",
                                  t.typeString()));
    outputs.emplace_back(sig.name, t);
  }
  return outputs;
}

} // namespace kiln
