//===- OnnxGraphTracer.h - The ONNX graph tracer ----------------*- C++ -*-===//
//
// This file declares GraphTracer, which traces one ONNX ModelProto into a
// module of kiln ops. Its methods are split over two files: OnnxTracer.cpp
// (the model, its inputs and initializers, and the nodes translated through
// the mapping registry) and OnnxControlFlow.cpp (If, Loop and Scan, whose
// subgraphs the tracer itself traces). It is internal to compiler/onnx/.
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
};

} // namespace tracer
} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXGRAPHTRACER_H
