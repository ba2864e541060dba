//===- GraphBreaks.h - Where a traced program breaks -------------*- C++ -*-===//
//
// This file declares the graph-break planner (`kiln-plan-graph-breaks`,
// PlanGraphBreaks.cpp), which splits a traced `@main` into compiled graphs,
// eager regions and control flow, and the classification it uses: which op
// breaks the graph on a target, and why. docs/graph-breaks.md explains the
// reasons to users.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_GRAPHBREAKS_H
#define KILN_PASSES_GRAPHBREAKS_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <functional>
#include <optional>
#include <string>

namespace kiln {

/// Why an op breaks the graph.
struct GraphBreakReason {
  /// "unsupported-op", "data-dependent-shape" or "dynamic-shape"
  /// (EagerOp::k*).
  std::string reason;
  /// What exactly: the output, operand or op, with types and origins.
  std::string detail;
  /// What a user can do about it.
  std::string hint;
};

/// The model node an op or location comes from.
struct GraphBreakSource {
  std::string node;   ///< ONNX node name ("" when unknown).
  std::string opType; ///< ONNX op type ("" when unknown).
  std::string file;   ///< model file name.
  int line = 0;       ///< node index + 1 in the model file.
};

/// The node recorded in a location (fused<"OpType">["name"("file":line)]).
GraphBreakSource getGraphBreakSource(mlir::Location loc);

/// What graph-break planning asks of a code generation target
/// (codegen/Target.h's Target::compilesOp fills it in the pipeline).
struct GraphBreakTarget {
  /// The target's name, for messages.
  std::string name = "cpu";
  /// Whether a code generator of the target compiles `op` (static shapes
  /// given); unset: every op but the `EagerOnly` ones.
  std::function<bool(mlir::Operation *)> compilesOp;

  /// compilesOp, or its default.
  bool compiles(mlir::Operation *op) const;
};

/// Whether `op` breaks the graph on `target`, and why; std::nullopt when a
/// code generator of the target compiles it. Constants, control flow, calls
/// and terminators never break.
std::optional<GraphBreakReason>
classifyGraphBreak(mlir::Operation *op, const GraphBreakTarget &target);

/// A tensor type as users read it: "f32[2, ?]".
std::string graphBreakTypeString(mlir::Type type);

/// Creates `kiln-plan-graph-breaks` (on the module) for `target`.
std::unique_ptr<mlir::Pass>
createPlanGraphBreaksPass(GraphBreakTarget target = {});

/// Registers `kiln-plan-graph-breaks` with MLIR's pass registry.
void registerGraphBreakPasses();

} // namespace kiln

#endif // KILN_PASSES_GRAPHBREAKS_H
