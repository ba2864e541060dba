//===- OnnxUnknownOps.cpp - Every operator a model uses that Kiln lacks ---===//
//
// This file implements the tracer's survey of unknown operators: before the
// first node is traced, every node of the graph and of its subgraphs (If,
// Loop and Scan bodies) is checked against what the tracer can translate (the
// mapping registry, control flow, loaded custom-op libraries). When more than
// one node is unknown, the error lists all of them at once, grouped by
// operator with counts and node names, so a user learns in one run what a
// custom-op library or a re-export has to provide (`kiln explain`, `dump`,
// `run` and `compile` all trace first). A single unknown node is left to
// traceNode, whose message says more about that one node.
//
//===----------------------------------------------------------------------===//

#include "OnnxGraphTracer.h"
#include "OnnxTraceContext.h"

#include "kiln/runtime/CustomOps.h"

#include <map>

namespace kiln {
namespace tracer {

namespace {

/// The unknown nodes of one operator (domain and type), in graph order.
struct UnknownOp {
  int64_t count = 0;
  std::vector<std::string> nodeNames;
};

/// Whether the tracer can translate a node of `domain`:`opType`.
bool isKnownOperator(const std::string &domain, const std::string &opType) {
  if (findCustomOp(domain, opType).op)
    return true;
  if (domain != "ai.onnx")
    return false;
  return isControlFlowOp(opType) || mappingRegistry().count(opType);
}

/// Adds the unknown nodes of `graph` and of its subgraphs to `unknown`.
void collectUnknownOps(const onnx::GraphProto &graph,
                       std::map<std::string, UnknownOp> &unknown,
                       int64_t &numNodes) {
  constexpr size_t kNamesShown = 3;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
    if (!isKnownOperator(domain, node.op_type())) {
      UnknownOp &op = unknown[strCat(node.op_type(), " (", domain, ")")];
      ++op.count;
      ++numNodes;
      if (op.nodeNames.size() < kNamesShown)
        op.nodeNames.push_back(node.name().empty()
                                   ? strCat(node.op_type(), "_", i)
                                   : node.name());
    }
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH)
        collectUnknownOps(a.g(), unknown, numNodes);
      for (const onnx::GraphProto &g : a.graphs())
        collectUnknownOps(g, unknown, numNodes);
    }
  }
}

} // namespace

Status GraphTracer::checkOperatorsKnown(const onnx::GraphProto &graph) const {
  std::map<std::string, UnknownOp> unknown;
  int64_t numNodes = 0;
  collectUnknownOps(graph, unknown, numNodes);
  if (numNodes < 2)
    return Status::ok();
  std::string list;
  for (const auto &[op, entry] : unknown) {
    std::string names;
    for (const std::string &n : entry.nodeNames)
      names += strCat(names.empty() ? "" : ", ", "'", n, "'");
    if (entry.count > static_cast<int64_t>(entry.nodeNames.size()))
      names += ", ...";
    list += strCat("\n  ", op, ": ", entry.count,
                   entry.count == 1 ? " node (" : " nodes (", names, ")");
  }
  return error(strCat(
      numNodes, " nodes use ", unknown.size(),
      unknown.size() == 1 ? " operator" : " operators",
      " that Kiln does not support and no custom-op library provides:", list,
      "\nprovide them in a custom-op library loaded with --custom-ops "
      "libNAME.so (docs/custom-ops.md), or replace them in the model"));
}

} // namespace tracer
} // namespace kiln
