//===- OnnxIfSinking.cpp - The nodes after an If, traced per branch -------===//
//
// This file implements the walk over a graph's nodes and tail sinking
// ("continuation duplication"). An If whose condition is computed at run
// time and whose branches give an output different ranks has an unranked
// result (tensor<*xf32>), which no kiln op can read. When later nodes of the
// same graph read such a result, traceIf asks planSinking which nodes to
// move: every node that depends on an unranked result, transitively (also
// through the outer-scope names its subgraphs capture). traceContinuation
// then traces those nodes a second time per branch, at the end of each
// branch's block, with the If's outputs bound to what that branch yields:
// there every value has the branch's rank, so the nodes trace (and later
// compile) as usual. The If then yields the values that leave: its own
// outputs that are graph outputs or still read by nodes that stay, and the
// graph outputs the moved nodes produce. The walk skips the moved nodes when
// it reaches them; the nodes that do not depend on the If stay outside.
//
// Design:
//  - The rewrite happens while tracing, not on the GraphProto: only the
//    tracer knows that a condition does not fold and that the branches
//    disagree on a rank. When traceIf reaches the If, the later nodes have
//    not been traced yet, so no restart is needed: the walk (NodeWalk, one
//    per graph being traced, innermost last in walks_) just marks them moved.
//  - Names: the moved nodes are traced in the names of the graph they come
//    from (the If's scope), with only the If's outputs rebound; the branch's
//    own names are out of scope by then, so nothing has to be renamed. What
//    the moved nodes define is dropped when each branch is done (like a
//    subgraph's names), so the two copies never collide with each other or
//    with outer names. Moved nodes keep their names, and at the top level
//    their own line, in locations.
//  - Nesting: a continuation is a walk of its own, so an If among the moved
//    nodes sinks what follows it within the continuation, and an If inside
//    a Loop body or a branch sinks the rest of that body or branch. What
//    still cannot work keeps the tracer's error naming the node ("not
//    supported"): a value of unknown rank that reaches its readers through a
//    branch's output, i.e. a nested If whose branches disagree returned by
//    the outer branch, or such an If inside the taken branch of an If whose
//    condition folded (inlined: its walk ends before the readers). An
//    unranked value carried by a Loop is traceLoop's error.
//  - Cost: the moved nodes are traced, and compiled, once per branch, and
//    each such If doubles what follows it. continuationNodes_ bounds the
//    copies (kMaxContinuationNodes) so that a chain of Ifs cannot blow up.
//
//===----------------------------------------------------------------------===//

#include "OnnxGraphTracer.h"
#include "OnnxTraceContext.h"

#include "kiln/runtime/SizeLimits.h"

#include "llvm/ADT/StringSet.h"

namespace kiln {
namespace tracer {

namespace {

/// The most node copies that continuations may trace in one model.
constexpr int64_t kMaxContinuationNodes = 100000;

void collectGraphReads(const onnx::GraphProto &graph, llvm::StringSet<> &reads,
                       int depth);

/// Adds to `reads` the names `node` reads: its inputs, and every name its
/// subgraphs mention as an input or output (a superset of what they capture
/// from outer scopes; moving a node that did not need it costs only a copy).
void collectReads(const onnx::NodeProto &node, llvm::StringSet<> &reads,
                  int depth = 0) {
  for (const std::string &in : node.input())
    if (!in.empty())
      reads.insert(in);
  if (depth >= kMaxSubgraphDepth)
    return; // deeper nesting is the subgraph tracer's error
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (a.has_g())
      collectGraphReads(a.g(), reads, depth + 1);
    for (const onnx::GraphProto &g : a.graphs())
      collectGraphReads(g, reads, depth + 1);
  }
}

void collectGraphReads(const onnx::GraphProto &graph, llvm::StringSet<> &reads,
                       int depth) {
  for (const onnx::NodeProto &n : graph.node())
    collectReads(n, reads, depth);
  for (const onnx::ValueInfoProto &out : graph.output())
    reads.insert(out.name());
}

} // namespace

GraphTracer::NodeWalk GraphTracer::walkOf(const onnx::GraphProto &graph,
                                          bool topLevel) {
  NodeWalk walk;
  walk.graph = &graph;
  for (int i = 0; i < graph.node_size(); ++i)
    walk.order.push_back(i);
  walk.moved.assign(walk.order.size(), false);
  for (const onnx::ValueInfoProto &out : graph.output())
    walk.needed.push_back(out.name());
  walk.topLevel = topLevel;
  return walk;
}

Status GraphTracer::traceNodes(NodeWalk &walk) {
  walks_.push_back(&walk);
  struct Pop {
    std::vector<NodeWalk *> &walks;
    ~Pop() { walks.pop_back(); }
  } pop{walks_};
  for (walk.pos = 0; walk.pos < walk.order.size(); ++walk.pos) {
    if (walk.moved[walk.pos])
      continue;
    int index = walk.order[walk.pos];
    if (walk.topLevel)
      topIndex_ = index;
    KILN_RETURN_IF_ERROR(traceNode(walk.graph->node(index), index));
  }
  return Status::ok();
}

std::optional<GraphTracer::SinkPlan>
GraphTracer::planSinking(const onnx::NodeProto &node,
                         llvm::ArrayRef<bool> unranked) const {
  // Only the If the innermost walk is at: its later nodes are known.
  if (walks_.empty())
    return std::nullopt;
  const NodeWalk &walk = *walks_.back();
  if (walk.pos >= walk.order.size() ||
      &walk.graph->node(walk.order[walk.pos]) != &node)
    return std::nullopt;
  llvm::StringSet<> tainted, readByStaying;
  for (int i = 0; i < node.output_size(); ++i)
    if (static_cast<size_t>(i) < unranked.size() && unranked[i] &&
        !node.output(i).empty())
      tainted.insert(node.output(i));
  if (tainted.empty())
    return std::nullopt;
  SinkPlan plan;
  for (size_t p = walk.pos + 1; p < walk.order.size(); ++p) {
    if (walk.moved[p])
      continue;
    const onnx::NodeProto &later = walk.graph->node(walk.order[p]);
    llvm::StringSet<> reads;
    collectReads(later, reads);
    bool depends = llvm::any_of(
        reads, [&](const auto &r) { return tainted.contains(r.getKey()); });
    if (!depends) {
      for (const auto &r : reads)
        readByStaying.insert(r.getKey());
      continue;
    }
    plan.moved.push_back(p);
    for (const std::string &out : later.output())
      if (!out.empty())
        tainted.insert(out);
  }
  if (plan.moved.empty())
    return std::nullopt;
  // What leaves: the If's outputs that are needed or read by nodes that
  // stay, then the needed values that moved nodes produce, each once.
  llvm::StringSet<> needed, leaving;
  for (const std::string &n : walk.needed)
    needed.insert(n);
  auto leave = [&](const std::string &name) {
    if (!name.empty() && leaving.insert(name).second)
      plan.leaving.push_back(name);
  };
  for (const std::string &out : node.output())
    if (needed.contains(out) || readByStaying.contains(out))
      leave(out);
  for (size_t p : plan.moved)
    for (const std::string &out : walk.graph->node(walk.order[p]).output())
      if (needed.contains(out))
        leave(out);
  return plan;
}

void GraphTracer::markMoved(const SinkPlan &plan) {
  NodeWalk &walk = *walks_.back();
  for (size_t p : plan.moved)
    walk.moved[p] = true;
}

Expected<llvm::SmallVector<Value>> GraphTracer::traceContinuation(
    const onnx::NodeProto &node, const SinkPlan &plan,
    llvm::ArrayRef<Value> branchOuts, const std::string &scope,
    const std::string &where) {
  const NodeWalk &outer = *walks_.back();
  continuationNodes_ += static_cast<int64_t>(plan.moved.size());
  if (continuationNodes_ > kMaxContinuationNodes)
    return nodeErrorAt(
        where, strCat("tracing the nodes after the If once per branch (its "
                      "branches disagree on the rank of an output that later "
                      "nodes read) would trace more than ",
                      kMaxContinuationNodes,
                      " node copies in this model; make the branches agree "
                      "on the rank, or bind the condition with "
                      "--input-value NAME=FILE (docs/graph-breaks.md)"));
  if (scopes_.size() >= static_cast<size_t>(kMaxSubgraphDepth))
    return nodeErrorAt(where, strCat("subgraphs (with the branches that the "
                                     "nodes after an If are traced in) are "
                                     "nested more than ",
                                     kMaxSubgraphDepth, " deep"));
  // The moved nodes see the names of the If's scope, the If's outputs bound
  // to this branch's values; what they define is dropped afterwards.
  llvm::StringMap<Value> savedValues = state_.values;
  llvm::StringMap<llvm::SmallVector<Value>> savedSequences = state_.sequences;
  scopes_.push_back(scope);
  struct Restore {
    GraphTracer &t;
    llvm::StringMap<Value> &values;
    llvm::StringMap<llvm::SmallVector<Value>> &sequences;
    int topIndex;
    ~Restore() {
      t.state_.values = std::move(values);
      t.state_.sequences = std::move(sequences);
      t.scopes_.pop_back();
      t.topIndex_ = topIndex;
    }
  } restore{*this, savedValues, savedSequences, topIndex_};

  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && static_cast<size_t>(i) < branchOuts.size())
      state_.values[node.output(i)] = branchOuts[i];
  NodeWalk walk;
  walk.graph = outer.graph;
  for (size_t p : plan.moved)
    walk.order.push_back(outer.order[p]);
  walk.moved.assign(walk.order.size(), false);
  walk.needed = plan.leaving;
  walk.topLevel = outer.topLevel;
  KILN_RETURN_IF_ERROR(traceNodes(walk));

  llvm::SmallVector<Value> leaving;
  for (const std::string &name : plan.leaving) {
    Value v = state_.values.lookup(name);
    if (!v)
      return nodeErrorAt(where, strCat("in the ", scope, ": value '", name,
                                       "' is not produced (a sequence "
                                       "leaving the If is not supported)"));
    leaving.push_back(v);
  }
  return leaving;
}

} // namespace tracer
} // namespace kiln
