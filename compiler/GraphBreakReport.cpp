//===- GraphBreakReport.cpp - What broke, for users -----------------------===//
//
// This file implements the graph-break report: it walks a planned module in
// program order (main's block, then the regions of its control flow, depth
// first), lists each kiln.eager region and each kiln.if / kiln.loop as a
// break, and each called graph with its op counts, and prints them for
// `kiln explain`.
//
//===----------------------------------------------------------------------===//

#include "compiler/GraphBreakReport.h"

#include "compiler/ProgramBuilder.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln {

namespace {

GraphBreakOp describeOp(Operation *op) {
  return GraphBreakOp{getGraphBreakSource(op->getLoc()),
                      op->getName().getStringRef().str()};
}

std::string nodeLabel(const GraphBreakOp &op) {
  std::string s = op.source.node.empty() ? "(unnamed)"
                                         : "'" + op.source.node + "'";
  if (!op.source.opType.empty())
    s += " (" + op.source.opType + ")";
  return s;
}

/// The other ops of a break's eager region, each node once (a node that
/// became several kiln ops is listed once): up to kListedNodes by name,
/// then, for longer regions, the count of each ONNX op type; lines wrap
/// at about 100 columns.
void printEagerCompanions(llvm::raw_ostream &os, const GraphBreakEntry &entry) {
  constexpr size_t kListedNodes = 8;
  std::vector<const GraphBreakOp *> nodes;
  std::set<std::string> seen = {nodeLabel(entry.op)};
  for (size_t k = 1; k < entry.ops.size(); ++k)
    if (seen.insert(nodeLabel(entry.ops[k])).second)
      nodes.push_back(&entry.ops[k]);
  if (nodes.empty())
    return;
  const std::string indent = "       ";
  size_t column = 0;
  auto item = [&](const std::string &text, bool first) {
    if (!first && column + text.size() + 2 > 100) {
      os << ",\n" << indent << text;
      column = indent.size() + text.size();
      return;
    }
    os << (first ? " " : ", ") << text;
    column += text.size() + 2;
  };
  if (nodes.size() <= kListedNodes) {
    os << "     runs eagerly with it:";
    column = 29;
    for (size_t k = 0; k < nodes.size(); ++k)
      item(nodeLabel(*nodes[k]), k == 0);
    os << "\n";
    return;
  }
  // Many nodes: how many of each op type, most frequent first.
  std::map<std::string, size_t> counts;
  for (const GraphBreakOp *n : nodes)
    ++counts[n->source.opType.empty() ? "(unknown)" : n->source.opType];
  std::vector<std::pair<std::string, size_t>> sorted(counts.begin(),
                                                     counts.end());
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const auto &a, const auto &b) { return a.second > b.second; });
  os << "     runs eagerly with it: " << nodes.size() << " more nodes,";
  column = 45;
  for (size_t k = 0; k < sorted.size(); ++k)
    item(sorted[k].first + (sorted[k].second > 1
                                ? " x" + std::to_string(sorted[k].second)
                                : ""),
         k == 0);
  os << "\n"
     << indent << "the first: " << nodeLabel(*nodes.front())
     << "; the last: " << nodeLabel(*nodes.back()) << "\n";
}

/// A graph's op counts (constants and the return excluded).
GraphSummary summarizeGraph(func::FuncOp graph, const std::string &name,
                            const std::string &where) {
  GraphSummary summary;
  summary.name = name;
  summary.where = where;
  graph.walk([&](Operation *op) {
    if (op == graph.getOperation() || isa<func::ReturnOp, ConstantOp>(op))
      return;
    ++summary.numOps;
    ++summary.opCounts[op->getName().stripDialect().str()];
  });
  return summary;
}

class Collector {
public:
  Collector(ModuleOp module, StringRef target, GraphBreakReport &report)
      : module(module), target(target), report(report) {}

  void visitBlock(Block &block, const std::string &where);

private:
  ModuleOp module;
  StringRef target;
  GraphBreakReport &report;
};

void Collector::visitBlock(Block &block, const std::string &where) {
  for (Operation &op : block) {
    if (auto call = dyn_cast<func::CallOp>(&op)) {
      if (auto graph = module.lookupSymbol<func::FuncOp>(call.getCallee()))
        report.graphs.push_back(
            summarizeGraph(graph, call.getCallee().str(), where));
      continue;
    }
    if (auto eager = dyn_cast<EagerOp>(&op)) {
      GraphBreakEntry entry;
      entry.kind = "eager";
      entry.reason = {eager.getReason().str(), eager.getDetail().str(),
                      eager.getHint().str()};
      entry.where = where;
      for (Operation &inner : eager.getBody().without_terminator())
        if (!isa<ConstantOp>(inner))
          entry.ops.push_back(describeOp(&inner));
      entry.op = entry.ops.empty() ? describeOp(eager) : entry.ops.front();
      report.breaks.push_back(std::move(entry));
      continue;
    }
    if (isa<IfOp, LoopOp>(&op)) {
      bool isIf = isa<IfOp>(&op);
      GraphBreakEntry entry;
      entry.kind = isIf ? "if" : "loop";
      entry.op = describeOp(&op);
      entry.where = where;
      if (isIf)
        entry.reason = {"control-flow",
                        "the condition is computed at run time; both "
                        "branches are compiled and the runtime runs one per "
                        "call",
                        "a condition that depends only on shapes or constants "
                        "folds when the model is traced (give sizes with "
                        "--dim NAME=SIZE); torch.cond exports an If"};
      else
        entry.reason = {"control-flow",
                        "the trip count or condition is only known at run "
                        "time (or the loop runs more iterations than the "
                        "unroll limit); its body is compiled and the runtime "
                        "runs it once per iteration",
                        "a loop whose trip count and condition are constants "
                        "is unrolled when the model is traced"};
      report.breaks.push_back(entry);
      std::string name = entry.op.source.node;
      if (auto ifOp = dyn_cast<IfOp>(&op)) {
        visitBlock(ifOp.getThenRegion().front(),
                   "then branch of '" + name + "'");
        visitBlock(ifOp.getElseRegion().front(),
                   "else branch of '" + name + "'");
      } else {
        visitBlock(cast<LoopOp>(&op).getBody().front(),
                   "body of '" + name + "'");
      }
    }
  }
}

} // namespace

GraphBreakReport collectGraphBreaks(ModuleOp module, StringRef target) {
  GraphBreakReport report;
  report.target = target.str();
  if (auto source = module->getAttrOfType<StringAttr>("kiln.source"))
    report.model = source.getValue().str();
  func::FuncOp main = findProgramFunction(module);
  if (main && main->hasAttr("kiln.program")) {
    Collector collector(module, target, report);
    collector.visitBlock(main.getBody().front(), "main");
  } else if (main) {
    report.graphs.push_back(summarizeGraph(main, "main", "main"));
  }
  return report;
}

void collectReferenceSteps(ModuleOp lowered, GraphBreakReport &report) {
  lowered.walk([&](Operation *op) {
    if (op->hasAttr("kiln.reference"))
      report.referenceSteps.push_back({getGraphBreakSource(op->getLoc()),
                                  op->getName().getStringRef().str()});
  });
}

std::string formatGraphBreakLine(const GraphBreakEntry &entry) {
  std::string s = "node " + nodeLabel(entry.op) + ": " + entry.reason.reason +
                  ": " + entry.reason.detail;
  if (entry.where != "main")
    s += " [in the " + entry.where + "]";
  return s;
}

void printGraphBreakReport(const GraphBreakReport &report,
                           llvm::raw_ostream &os) {
  size_t n = report.breaks.size();
  os << report.model << " (target " << report.target
     << "): " << report.graphs.size()
     << (report.graphs.size() == 1 ? " graph, " : " graphs, ") << n
     << (n == 1 ? " graph break\n" : " graph breaks\n");
  if (n) {
    os << "\nGraph breaks:\n";
    for (auto [i, entry] : llvm::enumerate(report.breaks)) {
      os << "  " << i + 1 << ". node " << nodeLabel(entry.op) << " -> "
         << entry.op.kilnOp;
      if (!entry.op.source.file.empty())
        // 1-based, as the locations of dumps and diagnostics count.
        os << ", " << entry.op.source.file << " node #" << entry.op.source.line;
      if (entry.where != "main")
        os << ", in the " << entry.where;
      os << "\n     reason: " << entry.reason.reason << ": "
         << entry.reason.detail << "\n     hint:   " << entry.reason.hint
         << "\n";
      if (entry.ops.size() > 1)
        printEagerCompanions(os, entry);
    }
  }
  if (report.loweringFailed) {
    os << "\nThe graphs could not be lowered for " << report.target
       << " (`kiln compile` reports why): their steps are unknown.\n";
  } else if (!report.referenceSteps.empty()) {
    if (report.target == "cpu")
      os << "\nReference-kernel steps (no generated kernel for these ops: "
            "each calls the runtime's reference kernel, a copy into the "
            "arena):\n";
    else
      os << "\nHost steps (" << report.target
         << " has no kernel for these ops: each runs the reference CPU "
            "kernel, its operands and results copied through host "
            "memory):\n";
    for (auto [i, step] : llvm::enumerate(report.referenceSteps)) {
      os << "  " << i + 1 << ". node " << nodeLabel(step) << " -> "
         << step.kilnOp;
      if (!step.source.file.empty())
        os << ", " << step.source.file << " node #" << step.source.line;
      os << "\n";
    }
  }
  os << "\nGraphs:\n";
  for (const GraphSummary &graph : report.graphs) {
    os << "  " << graph.name;
    if (graph.where != "main")
      os << " (" << graph.where << ")";
    os << ": " << graph.numOps << (graph.numOps == 1 ? " op" : " ops");
    if (!graph.opCounts.empty()) {
      os << " (";
      bool first = true;
      for (const auto &[op, count] : graph.opCounts) {
        os << (first ? "" : ", ") << count << " " << op;
        first = false;
      }
      os << ")";
    }
    os << "\n";
  }
}

} // namespace kiln
