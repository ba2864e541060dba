//===- OnnxTracer.cpp - ONNX models to the kiln dialect
//--------------------===//
//
// This file implements traceOnnxFile: it reads the model, checks its opsets,
// turns graph inputs and initializers into the arguments and constants of
// `func.func @main`, translates every node through the mapping registry
// (after resolving the node's effective operator version against the
// generated OnnxOpVersions.inc table), returns the graph outputs and
// verifies the module. Every failure becomes a Status naming the file and,
// for node errors, the node.
//
//===----------------------------------------------------------------------===//

#include "OnnxTracer.h"
#include "OnnxTraceContext.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/TensorConversion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace kiln {
namespace tracer {

//===----------------------------------------------------------------------===//
// Operator versions and the registry
//===----------------------------------------------------------------------===//

namespace {
struct OpVersionEntry {
  const char *name;
  std::vector<int> versions;
};
#define KILN_ONNX_OP(name, ...) {name, {__VA_ARGS__}},
const OpVersionEntry kOpVersions[] = {
#include "OnnxOpVersions.inc"
};
#undef KILN_ONNX_OP
} // namespace

llvm::ArrayRef<int> onnxOpVersions(llvm::StringRef opType) {
  static const llvm::StringMap<const std::vector<int> *> index = [] {
    llvm::StringMap<const std::vector<int> *> m;
    for (const OpVersionEntry &e : kOpVersions)
      m[e.name] = &e.versions;
    return m;
  }();
  auto it = index.find(opType);
  if (it == index.end())
    return {};
  return *it->second;
}

const MappingRegistry &mappingRegistry() {
  static const MappingRegistry registry = [] {
    MappingRegistry r;
    addElementwiseMappings(r);
    addNNMappings(r);
    addShapeMappings(r);
    addReductionMappings(r);
    addRecurrentMappings(r);
    addAttentionMappings(r);
    addLossMappings(r);
    addQuantizeMappings(r);
    return r;
  }();
  return registry;
}

namespace {

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dirName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string joinInts(llvm::ArrayRef<int> values) {
  std::string s;
  for (int v : values)
    s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

/// Ops with subgraphs that the tracer itself translates (not mappings).
bool isControlFlowOp(llvm::StringRef op) {
  return op == "If" || op == "Loop" || op == "Scan";
}

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
/// become dynamic; null when the element types or ranks differ.
mlir::RankedTensorType mergeBranchTypes(mlir::RankedTensorType a,
                                        mlir::RankedTensorType b) {
  if (!a || !b || a.getElementType() != b.getElementType() ||
      a.getRank() != b.getRank())
    return {};
  llvm::SmallVector<int64_t> dims;
  for (int64_t d = 0; d < a.getRank(); ++d)
    dims.push_back(a.getDimSize(d) == b.getDimSize(d)
                       ? a.getDimSize(d)
                       : mlir::ShapedType::kDynamic);
  return mlir::RankedTensorType::get(dims, a.getElementType());
}

//===----------------------------------------------------------------------===//
// GraphTracer
//===----------------------------------------------------------------------===//

/// Traces one ModelProto into a module.
class GraphTracer {
public:
  GraphTracer(mlir::MLIRContext &ctx, const std::string &path,
              const TraceOptions &options)
      : ctx_(ctx), path_(path), file_(baseName(path)), options_(options),
        builder_(&ctx) {}

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
  /// The subgraphs being traced, innermost last ("body of node 'loop'").
  std::vector<std::string> scopes_;
  /// Index of the top-level node being traced: nodes of its subgraphs get
  /// its line in their locations.
  int topIndex_ = 0;
};

Expected<mlir::RankedTensorType>
GraphTracer::inputType(const onnx::ValueInfoProto &info,
                       llvm::SmallVector<std::string> &dimNames,
                       bool &hasDynamic) {
  const std::string &name = info.name();
  if (!info.has_type() || !info.type().has_tensor_type())
    return error(strCat("graph input '", name,
                        "' is not a tensor (sequences, maps and optionals "
                        "are not supported)"));
  const onnx::TypeProto::Tensor &tt = info.type().tensor_type();
  std::optional<DType> dtype = dtypeFromOnnx(tt.elem_type());
  if (!dtype)
    return error(strCat("graph input '", name, "' has unsupported dtype ",
                        onnxTypeName(tt.elem_type()),
                        " (Kiln supports float, float16, bfloat16, double, "
                        "int64, int32, int8, uint8, bool)"));
  if (!tt.has_shape())
    return error(strCat("graph input '", name,
                        "' has no shape: Kiln needs the rank of every input; "
                        "re-export the model with input shapes"));
  llvm::SmallVector<int64_t> dims;
  for (const auto &d : tt.shape().dim()) {
    auto sized = d.has_dim_param() ? options_.dimSizes.find(d.dim_param())
                                   : options_.dimSizes.end();
    if (d.has_dim_value() && d.dim_value() >= 0) {
      dims.push_back(d.dim_value());
      dimNames.push_back("");
    } else if (sized != options_.dimSizes.end()) {
      // Specialized by the caller (`--dim NAME=SIZE`).
      dims.push_back(sized->second);
      dimNames.push_back("");
    } else {
      dims.push_back(mlir::ShapedType::kDynamic);
      dimNames.push_back(d.has_dim_param() ? d.dim_param() : "");
      hasDynamic = true;
    }
  }
  return mlir::RankedTensorType::get(dims, toMlirElementType(&ctx_, *dtype));
}

Status GraphTracer::traceNode(const onnx::NodeProto &node, int index) {
  const std::string &opType = node.op_type();
  std::string name =
      node.name().empty() ? strCat(opType, "_", index) : node.name();
  std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
  if (scopes_.empty())
    topIndex_ = index;
  std::string where = strCat("node '", name, "' (", opType, ", domain ", domain,
                             ", opset ", opset_);
  // Nodes of subgraphs say where they are after the operator version.
  std::string scope =
      scopes_.empty() ? "" : strCat(", in the ", scopes_.back());
  auto nodeError = [&](const std::string &msg) {
    return error(where + scope + "): " + msg);
  };
  if (domain != "ai.onnx")
    return nodeError(strCat("operators of domain '", domain,
                            "' are not supported; Kiln supports the default "
                            "ONNX domain (ai.onnx) only"));
  llvm::ArrayRef<int> versions = onnxOpVersions(opType);
  if (versions.empty())
    return nodeError(strCat("'", opType,
                            "' is not an operator of the ONNX default "
                            "domain (as of onnx 1.22)"));
  int version = 0;
  for (int v : versions)
    if (v <= opset_)
      version = v;
  if (version == 0)
    return nodeError(strCat(opType, " does not exist in opset ", opset_,
                            " (it was introduced in opset ", versions.front(),
                            "); fix the model's opset_import"));
  where += strCat(" \xe2\x86\x92 ", opType, "-", version);

  if (isControlFlowOp(opType)) {
    for (int i = 0; i < node.input_size(); ++i) {
      const std::string &in = node.input(i);
      if (!in.empty() && !state_.values.count(in))
        return nodeError(strCat("input '", in,
                                "' is not produced by an earlier node, a "
                                "graph input or an initializer (the graph "
                                "must be topologically sorted)"));
    }
    if (opType == "Scan" && version < 9)
      return nodeError("Kiln supports Scan versions 9 and newer (Scan-8 has "
                       "a batch axis); re-export the model with opset 9 or "
                       "newer");
    mlir::Location loc = mlir::FusedLoc::get(
        &ctx_, {nameLoc(name, topIndex_ + 1)}, builder_.getStringAttr(opType));
    NodeContext nc(state_, node, version, builder_, loc);
    return traceControlFlow(nc, name, where + scope);
  }

  const MappingRegistry &registry = mappingRegistry();
  auto it = registry.find(opType);
  if (it == registry.end()) {
    if (opType == "SequenceMap")
      return nodeError("SequenceMap (a subgraph over sequences) is not "
                       "supported by Kiln: sequences are not supported");
    return nodeError(strCat("operator ", opType,
                            " is not supported by Kiln; replace it in the "
                            "model or export it differently"));
  }
  const OpMapping &mapping = it->second;
  if (version < mapping.minVersion || version > mapping.maxVersion) {
    std::vector<int> supported;
    for (int v : versions)
      if (v >= mapping.minVersion && v <= mapping.maxVersion)
        supported.push_back(v);
    return nodeError(
        strCat("Kiln supports ", opType, " versions ", joinInts(supported),
               "; re-export the model with an opset in which ", opType,
               " is one of those versions (or convert "
               "it with onnx.version_converter)"));
  }
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string &in = node.input(i);
    if (!in.empty() && !state_.values.count(in))
      return nodeError(strCat("input '", in,
                              "' is not produced by an earlier node, a graph "
                              "input or an initializer (the graph must be "
                              "topologically sorted)"));
  }
  if (node.attribute_size())
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.type() == onnx::AttributeProto::GRAPH ||
          a.type() == onnx::AttributeProto::GRAPHS)
        return nodeError(strCat("attribute '", a.name(),
                                "' holds a subgraph; subgraphs are not "
                                "supported except in If, Loop and Scan"));

  // Nodes of subgraphs carry the line of the enclosing top-level node.
  mlir::Location loc = mlir::FusedLoc::get(
      &ctx_, {nameLoc(name, topIndex_ + 1)}, builder_.getStringAttr(opType));
  NodeContext nc(state_, node, version, builder_, loc);
  LogicalResult result = mlir::failure();
  result = mapping.fn(nc);
  if (mlir::failed(result) || nc.failed())
    return nodeError(nc.failed() ? nc.errorMessage()
                                 : std::string("translation failed"));
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &out = node.output(i);
    if (!out.empty() && !state_.values.count(out))
      return nodeError(strCat("Kiln does not compute output #", i, " ('", out,
                              "') of ", opType));
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Control flow: If, Loop, Scan
//===----------------------------------------------------------------------===//

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
  for (int i = 0; i < graph.node_size(); ++i)
    KILN_RETURN_IF_ERROR(traceNode(graph.node(i), i));
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
    builder_.create<YieldOp>(nc.loc(), outs[b]);
  }
  llvm::SmallVector<mlir::Type> types;
  for (int i = 0; i < node.output_size(); ++i) {
    mlir::RankedTensorType merged =
        mergeBranchTypes(nc.typeOf(outs[0][i]), nc.typeOf(outs[1][i]));
    if (!merged)
      return nodeErrorAt(
          where,
          strCat("the branches disagree on output #", i, ": then_branch gives ",
                 formatType(nc.typeOf(outs[0][i])), ", else_branch gives ",
                 formatType(nc.typeOf(outs[1][i])),
                 "; Kiln supports If only when the branches agree on each "
                 "output's element type and rank"));
    types.push_back(merged);
  }
  mlir::OperationState state(nc.loc(), IfOp::getOperationName());
  state.addOperands(cond);
  state.addTypes(types);
  for (int b = 0; b < 2; ++b)
    state.addRegion()->push_back(blocks[b].release());
  mlir::Operation *op = builder_.create(state);
  return bindOutputs(llvm::SmallVector<Value>(op->getResults()));
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
      mlir::RankedTensorType merged = mergeBranchTypes(carriedTypes[j], got);
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

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
GraphTracer::trace(const onnx::ModelProto &model) {
  modelDir_ = dirName(path_);
  state_.modelDir = modelDir_;
  mlir::ScopedDiagnosticHandler handler(&ctx_, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      state_.diagnostics.push_back(diag.str());
    return mlir::success();
  });
  // Opsets.
  bool found = false;
  for (const auto &imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") {
      opset_ = imp.version();
      found = true;
    }
  if (!found)
    for (const onnx::NodeProto &node : model.graph().node())
      if (!node.domain().empty() && node.domain() != "ai.onnx")
        return error(strCat("node '", node.name(), "' (", node.op_type(),
                            ", domain ", node.domain(),
                            "): operators of domain '", node.domain(),
                            "' are not supported; Kiln supports the default "
                            "ONNX domain (ai.onnx) only"));
  if (!found)
    return error("the model declares no opset of the default ONNX domain "
                 "(opset_import); re-export it with opset 7 or newer");
  if (opset_ < 7)
    return error(strCat("the model uses opset ", opset_,
                        "; Kiln supports opset 7 and newer: convert it with "
                        "onnx.version_converter.convert_version(model, 17)"));

  const onnx::GraphProto &graph = model.graph();
  if (graph.sparse_initializer_size())
    return error(strCat("sparse initializer '",
                        graph.sparse_initializer(0).values().name(),
                        "' is not supported; store it dense"));

  auto module = mlir::ModuleOp::create(
      mlir::FileLineColLoc::get(builder_.getStringAttr(file_), 0, 0));
  mlir::OwningOpRef<mlir::ModuleOp> owned(module);
  module->setAttr("kiln.source", builder_.getStringAttr(file_));
  module->setAttr("kiln.opset", builder_.getI64IntegerAttr(opset_));
  if (!model.producer_name().empty()) {
    std::string producer = model.producer_name();
    if (!model.producer_version().empty())
      producer += " " + model.producer_version();
    module->setAttr("kiln.producer", builder_.getStringAttr(producer));
  }

  // Initializers: constants or weight parameters.
  std::set<std::string> initNames;
  struct Param {
    std::string name;
    mlir::RankedTensorType type;
    mlir::DictionaryAttr externalData;
  };
  std::vector<Param> params;
  std::vector<std::pair<std::string, Tensor>> constants;
  for (const onnx::TensorProto &init : graph.initializer()) {
    initNames.insert(init.name());
    Expected<ProtoTensor> t = readProtoTensor(init, modelDir_);
    if (!t)
      return error(t.status().message());
    bool external = init.data_location() == onnx::TensorProto::EXTERNAL;
    bool asParam = t->externalMissing ||
                   (options_.externalDataAsParameters && external) ||
                   (options_.weightsAsParameters &&
                    numElements(t->shape) > options_.weightThreshold);
    if (asParam) {
      params.push_back(
          {init.name(), mlir::RankedTensorType::get(
                            t->shape, toMlirElementType(&ctx_, t->dtype))});
      if (external && options_.externalDataAsParameters) {
        // Where the data lives, for packages that reference it.
        llvm::SmallVector<mlir::NamedAttribute> entries;
        for (const auto &kv : init.external_data()) {
          if (kv.key() == "location")
            entries.push_back(builder_.getNamedAttr(
                "location", builder_.getStringAttr(kv.value())));
          else if (kv.key() == "offset" || kv.key() == "length")
            entries.push_back(builder_.getNamedAttr(
                kv.key(), builder_.getI64IntegerAttr(std::stoll(kv.value()))));
        }
        params.back().externalData = builder_.getDictionaryAttr(entries);
      }
    } else {
      constants.emplace_back(init.name(), t->tensor);
    }
  }

  // Arguments: runtime inputs, then weights.
  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<std::string> argNames;
  llvm::SmallVector<llvm::SmallVector<std::string>> argDimNames;
  llvm::SmallVector<bool> argDynamic;
  std::set<std::string> boundInputs;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initNames.count(in.name()))
      continue;
    if (auto bound = options_.inputValues.find(in.name());
        bound != options_.inputValues.end()) {
      // A value given for this input: a constant of the declared type.
      llvm::SmallVector<std::string> dimNames;
      bool dynamic = false;
      Expected<mlir::RankedTensorType> type = inputType(in, dimNames, dynamic);
      if (!type)
        return type.status();
      const Tensor &t = bound->second;
      bool match =
          toMlirElementType(&ctx_, t.dtype()) == type->getElementType() &&
          t.rank() == type->getRank();
      for (int64_t d = 0; match && d < t.rank(); ++d)
        match = type->isDynamicDim(d) || type->getDimSize(d) == t.dim(d);
      if (!match)
        return error(strCat("the value given for input '", in.name(), "' is ",
                            t.typeString(),
                            ", which does not match its "
                            "declared type"));
      constants.emplace_back(in.name(), t);
      boundInputs.insert(in.name());
      continue;
    }
    llvm::SmallVector<std::string> dimNames;
    bool dynamic = false;
    Expected<mlir::RankedTensorType> type = inputType(in, dimNames, dynamic);
    if (!type)
      return type.status();
    argTypes.push_back(*type);
    argNames.push_back(in.name());
    argDimNames.push_back(dimNames);
    argDynamic.push_back(dynamic);
  }
  for (const auto &entry : options_.inputValues)
    if (!boundInputs.count(entry.first))
      return error(strCat("a value is given for '", entry.first,
                          "', which is not an input of the graph"));
  size_t numRuntimeInputs = argTypes.size();
  for (const Param &p : params) {
    argTypes.push_back(p.type);
    argNames.push_back(p.name);
  }

  builder_.setInsertionPointToEnd(module.getBody());
  auto func = builder_.create<mlir::func::FuncOp>(
      nameLoc(graph.name().empty() ? "main" : graph.name(), 0), "main",
      builder_.getFunctionType(argTypes, {}));
  func->setAttr("kiln.graph", builder_.getUnitAttr());
  mlir::Block *body = func.addEntryBlock();
  for (size_t i = 0; i < argTypes.size(); ++i) {
    func.setArgAttr(i, "kiln.name", builder_.getStringAttr(argNames[i]));
    if (i >= numRuntimeInputs) {
      func.setArgAttr(i, "kiln.weight", builder_.getUnitAttr());
      if (auto ext = params[i - numRuntimeInputs].externalData)
        func.setArgAttr(i, "kiln.external_data", ext);
    } else if (argDynamic[i]) {
      llvm::SmallVector<mlir::Attribute> names;
      for (const std::string &n : argDimNames[i])
        names.push_back(builder_.getStringAttr(n));
      func.setArgAttr(i, "kiln.dim_names", builder_.getArrayAttr(names));
    }
    body->getArgument(i).setLoc(nameLoc(argNames[i], 0));
    state_.values[argNames[i]] = body->getArgument(i);
  }
  builder_.setInsertionPointToEnd(body);

  for (const auto &c : constants) {
    onnx::NodeProto dummy;
    NodeContext nc(state_, dummy, 0, builder_, nameLoc(c.first, 0));
    Value v = nc.constant(c.second);
    if (!v)
      return error(strCat("initializer '", c.first, "': ", nc.errorMessage()));
    state_.values[c.first] = v;
  }
  constants.clear();

  for (int i = 0; i < graph.node_size(); ++i)
    KILN_RETURN_IF_ERROR(traceNode(graph.node(i), i));

  // Results.
  llvm::SmallVector<Value> results;
  llvm::SmallVector<mlir::Type> resultTypes;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    Value v = state_.values.lookup(out.name());
    if (!v)
      return error(strCat("graph output '", out.name(),
                          "' is not produced by any node, input or "
                          "initializer"));
    results.push_back(v);
    resultTypes.push_back(v.getType());
  }
  builder_.create<mlir::func::ReturnOp>(nameLoc("return", 0), results);
  // Constants left without uses (folded operands, unused initializers),
  // also inside the regions of kiln.if and kiln.loop.
  llvm::SmallVector<mlir::Operation *> unused;
  func.walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == "kiln.constant" && op->use_empty())
      unused.push_back(op);
  });
  for (mlir::Operation *op : unused)
    op->erase();
  func.setType(builder_.getFunctionType(argTypes, resultTypes));
  for (int i = 0; i < graph.output_size(); ++i)
    func.setResultAttr(i, "kiln.name",
                       builder_.getStringAttr(graph.output(i).name()));

  state_.diagnostics.clear();
  if (mlir::failed(mlir::verify(module))) {
    std::string msg;
    for (const std::string &d : state_.diagnostics)
      msg += (msg.empty() ? "" : "; ") + d;
    return error("the traced module does not verify (a Kiln bug): " + msg);
  }
  return std::move(owned);
}

} // namespace
} // namespace tracer

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
traceOnnxFile(mlir::MLIRContext &ctx, const std::string &path,
              const TraceOptions &options) {
  ctx.loadDialect<mlir::func::FuncDialect, kiln::KilnDialect>();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(strCat("cannot open model file '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return Status::error(strCat("cannot read model file '", path, "'"));
  std::string bytes = ss.str();
  if (bytes.empty())
    return Status::error(strCat(path, ": the file is empty, not an ONNX "
                                      "model"));
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromString(bytes))
    return Status::error(
        strCat(path, ": not a valid ONNX model (the protobuf does not parse: "
                     "truncated or corrupt file?)"));
  if (!model.has_graph() || model.ir_version() <= 0)
    return Status::error(strCat(path, ": not an ONNX model (no ",
                                model.has_graph() ? "ir_version" : "graph",
                                "); is this the right file?"));

  tracer::GraphTracer tracer(ctx, path, options);
  try {
    return tracer.trace(model);
  } catch (const std::exception &e) {
    return Status::error(
        strCat(path, ": internal error while tracing: ", e.what()));
  }
}

} // namespace kiln
