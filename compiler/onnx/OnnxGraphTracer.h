//===- OnnxGraphTracer.h - The ONNX graph tracer ----------------*- C++ -*-===//
//
// This file declares GraphTracer, which traces one ONNX ModelProto into a
// module of kiln ops. Its methods are split over two files: OnnxTracer.cpp
// (the model, its inputs and initializers, and the nodes translated through
// the mapping registry), OnnxControlFlow.cpp (If, Loop and Scan, whose
// subgraphs the tracer itself traces) and OnnxIfSinking.cpp (the walk over a
// graph's nodes, and the nodes after an If traced once per branch). It is
// internal to compiler/onnx/.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_ONNXGRAPHTRACER_H
#define KILN_COMPILER_ONNX_ONNXGRAPHTRACER_H

#include "OnnxTraceContext.h"
#include "OnnxTracer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace tracer {

/// Ops with subgraphs that the tracer itself translates (not mappings).
inline bool isControlFlowOp(llvm::StringRef op) {
  return op == "If" || op == "Loop" || op == "Scan";
}

/// Traces one ModelProto into a module.
class GraphTracer {
public:
  GraphTracer(mlir::MLIRContext &ctx, const std::string &path,
              const TraceOptions &options);

  Expected<mlir::OwningOpRef<mlir::ModuleOp>>
  trace(const onnx::ModelProto &model);

private:
  Status error(const std::string &msg) const {
    return Status::error(path_ + ": " + msg);
  }
  mlir::Location nameLoc(const std::string &name, int line) {
    return mlir::NameLoc::get(
        builder_.getStringAttr(name),
        mlir::FileLineColLoc::get(builder_.getStringAttr(file_), line, 0));
  }
  Expected<mlir::RankedTensorType>
  inputType(const onnx::ValueInfoProto &info,
            llvm::SmallVector<std::string> &dimNames, bool &hasDynamic);
  Status traceNode(const onnx::NodeProto &node, int index);

  /// The nodes of one graph as the tracer walks them: a graph's nodes, or a
  /// continuation (the nodes after an If that are traced inside each of its
  /// branches, OnnxIfSinking.cpp).
  struct NodeWalk {
    const onnx::GraphProto *graph = nullptr;
    /// Indices of `graph`'s nodes, in the order they are traced.
    std::vector<int> order;
    /// Per position of `order`: moved into the branches of an earlier If.
    std::vector<bool> moved;
    /// The position being traced.
    size_t pos = 0;
    /// The names the walk must produce: the graph's outputs, or the values a
    /// continuation gives its If.
    std::vector<std::string> needed;
    /// Nodes of the top-level graph (also when moved into a branch): each
    /// gets its own line in locations.
    bool topLevel = false;
  };
  /// What tail sinking moves into the branches of one If (OnnxIfSinking.cpp).
  struct SinkPlan {
    /// Positions, in the walk of the If, of the nodes to move, in order.
    std::vector<size_t> moved;
    /// The values that leave the If: its outputs that are needed or read by
    /// nodes that stay, and the needed outputs of moved nodes.
    std::vector<std::string> leaving;
  };
  /// Traces the nodes of `walk` in order, skipping those moved into an If.
  Status traceNodes(NodeWalk &walk);
  /// A walk over all nodes of `graph`, which must produce its outputs.
  static NodeWalk walkOf(const onnx::GraphProto &graph, bool topLevel);
  /// The plan for the If `node` (the current node of the innermost walk)
  /// whose outputs flagged in `unranked` have no fixed rank: null when no
  /// later node reads them (nothing to move).
  std::optional<SinkPlan> planSinking(const onnx::NodeProto &node,
                                      llvm::ArrayRef<bool> unranked) const;
  /// Traces, at the builder's insertion point (the end of a branch's block),
  /// the moved nodes of `plan` with the If's outputs bound to `branchOuts`,
  /// and returns the values of `plan.leaving`. `scope` names the branch for
  /// errors; `where` names the If.
  Expected<llvm::SmallVector<Value>>
  traceContinuation(const onnx::NodeProto &node, const SinkPlan &plan,
                    llvm::ArrayRef<Value> branchOuts, const std::string &scope,
                    const std::string &where);
  /// Marks the nodes of `plan` as moved in the innermost walk.
  void markMoved(const SinkPlan &plan);
  /// Fails, listing them all, when more than one node of `graph` (or of its
  /// subgraphs) has an operator the tracer cannot translate
  /// (OnnxUnknownOps.cpp).
  Status checkOperatorsKnown(const onnx::GraphProto &graph) const;

  // Control flow (If, Loop, Scan). `where` names the node for errors.
  Status nodeErrorAt(const std::string &where, const std::string &msg) const {
    return error(where + "): " + msg);
  }
  Status traceControlFlow(NodeContext &nc, const std::string &name,
                          const std::string &where);
  Status traceIf(NodeContext &nc, const std::string &name,
                 const std::string &where);
  /// Merges the types the two branches give each output (`names` name them
  /// for errors) into `types`; an error when they disagree on an element
  /// type.
  Status mergeOutputTypes(const std::string &where,
                          llvm::ArrayRef<std::string> names,
                          const llvm::SmallVector<Value> (&outs)[2],
                          llvm::SmallVector<mlir::Type> &types);
  Status traceLoop(NodeContext &nc, const std::string &name,
                   const std::string &where);
  /// Unrolls a Loop whose trip count and conditions fold; false (and nothing
  /// created) when a condition does not fold.
  Expected<bool> unrollLoop(NodeContext &nc, const std::string &name,
                            const std::string &where,
                            const onnx::GraphProto &body, int64_t tripCount,
                            bool cond, llvm::ArrayRef<Value> initial,
                            size_t numScans);
  Status traceScan(NodeContext &nc, const std::string &name,
                   const std::string &where);
  /// Traces a node that a loaded custom-op library provides as one
  /// kiln.custom_call typed by the library's shape function
  /// (OnnxCustomOps.cpp); `where` names the node for errors.
  Status traceCustomOp(const onnx::NodeProto &node, const std::string &name,
                       const std::string &where, const std::string &domain);
  /// Traces the nodes of a subgraph at the builder's insertion point, its
  /// inputs bound to `inputs` (names of the enclosing scopes stay visible,
  /// names it defines do not leak out), and returns its outputs. `scope`
  /// names it in errors ("body of node 'loop'").
  Expected<llvm::SmallVector<Value>>
  traceSubgraph(const onnx::GraphProto &graph, llvm::ArrayRef<Value> inputs,
                const std::string &scope);

  mlir::MLIRContext &ctx_;
  std::string path_;
  std::string file_;
  TraceOptions options_;
  mlir::OpBuilder builder_;
  TraceState state_;
  std::string modelDir_;
  int64_t opset_ = 0;
  /// The opset the model imports for each domain ("" for ai.onnx aside).
  std::map<std::string, int64_t> domainOpsets_;
  /// The subgraphs being traced, innermost last ("body of node 'loop'").
  std::vector<std::string> scopes_;
  /// Index of the top-level node being traced: nodes of its subgraphs get
  /// its line in their locations.
  int topIndex_ = 0;
  /// The walks being traced, innermost last (OnnxIfSinking.cpp).
  std::vector<NodeWalk *> walks_;
  /// Nodes traced so far inside continuations (bounded: each If doubles
  /// what follows it).
  int64_t continuationNodes_ = 0;
};

} // namespace tracer
} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXGRAPHTRACER_H
