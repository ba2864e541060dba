//===- GraphBreakReport.h - What broke, for users ----------------*- C++ -*-===//
//
// This file declares the graph-break report of a planned module (after
// `kiln-plan-graph-breaks`): its compiled graphs with their ops, and its
// breaks (kiln.eager regions and data-dependent control flow) with the
// node, op, reason, detail, hint and source location of each. `kiln explain`
// prints it, `kiln compile --fullgraph` turns it into an error, KILN_LOGS=
// graph_breaks prints it during compile, and the manifest of a program
// package records it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_GRAPHBREAKREPORT_H
#define KILN_COMPILER_GRAPHBREAKREPORT_H

#include "passes/GraphBreaks.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kiln {

/// One op of a break region.
struct GraphBreakOp {
  GraphBreakSource source;
  std::string kilnOp; ///< "kiln.non_zero".
};

/// One graph break.
struct GraphBreakEntry {
  /// "eager" (a kiln.eager region), "if" or "loop" (control flow decided
  /// at run time).
  std::string kind;
  /// For "eager": the reason of the region's first op; for control flow,
  /// reason "control-flow".
  GraphBreakReason reason;
  /// The node that breaks (the region's first op, or the If/Loop).
  GraphBreakOp op;
  /// Every op of an eager region, in order (the first is `op`).
  std::vector<GraphBreakOp> ops;
  /// Where it sits: "main", or e.g. "then branch of 'If_0'".
  std::string where;
};

/// One compiled graph.
struct GraphSummary {
  std::string name;  ///< "graph_0", or "main" for a model without breaks.
  std::string where; ///< "main", or e.g. "body of 'Loop_0'".
  int numOps = 0;    ///< kiln ops, constants excluded.
  std::map<std::string, int> opCounts; ///< by kiln op name.
};

/// The graphs and breaks of a planned module.
struct GraphBreakReport {
  std::string model;  ///< the model file.
  std::string target; ///< "cpu" or "cuda".
  std::vector<GraphSummary> graphs;
  std::vector<GraphBreakEntry> breaks;
  /// The ops of the compiled graphs that the target's lowering left to the
  /// runtime's reference kernels (tagged kiln.reference: "host" on the
  /// CUDA target, a round trip through host memory), in program order;
  /// filled by collectReferenceSteps from the lowered module.
  std::vector<GraphBreakOp> referenceSteps;
  /// Set when the graphs could not be lowered (the steps are unknown).
  bool loweringFailed = false;
};

/// Builds the report of `module` (planned by kiln-plan-graph-breaks for
/// `target`; an unplanned single graph reports one graph, no breaks).
GraphBreakReport collectGraphBreaks(mlir::ModuleOp module,
                                    llvm::StringRef target);

/// Adds to `report` the ops of `lowered` (after lowerGraphs) that run as
/// reference kernels.
void collectReferenceSteps(mlir::ModuleOp lowered, GraphBreakReport &report);

/// Prints the report as `kiln explain` does.
void printGraphBreakReport(const GraphBreakReport &report,
                           llvm::raw_ostream &os);

/// One line per break: "node 'nz' (NonZero): data-dependent-shape: ...".
std::string formatGraphBreakLine(const GraphBreakEntry &entry);

} // namespace kiln

#endif // KILN_COMPILER_GRAPHBREAKREPORT_H
