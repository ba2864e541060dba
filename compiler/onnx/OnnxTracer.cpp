//===- OnnxTracer.cpp - ONNX models to the kiln dialect -------------------===//
//
// This file implements traceOnnxFile: it reads the model, checks its opsets,
// turns graph inputs and initializers into the arguments and constants of
// `func.func @main`, translates every node through the mapping registry
// (after resolving the node's effective operator version against the
// generated OnnxOpVersions.inc table), returns the graph outputs and
// verifies the module. Every failure becomes a Status naming the file and,
// for node errors, the node. The control-flow operators (If, Loop, Scan) are
// traced in OnnxControlFlow.cpp; the walk over a graph's nodes, and the
// nodes after an If traced once per branch, in OnnxIfSinking.cpp.
//
//===----------------------------------------------------------------------===//

#include "OnnxTracer.h"
#include "OnnxGraphTracer.h"
#include "OnnxTraceContext.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/TensorConversion.h"

#include "kiln/runtime/CustomOps.h"
#include "kiln/runtime/SizeLimits.h"

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
    addSequenceMappings(r);
    addImageMappings(r);
    addRandomMappings(r);
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

} // namespace

//===----------------------------------------------------------------------===//
// GraphTracer
//===----------------------------------------------------------------------===//

GraphTracer::GraphTracer(mlir::MLIRContext &ctx, const std::string &path,
                         const TraceOptions &options)
    : ctx_(ctx), path_(path), file_(baseName(path)), options_(options),
      builder_(&ctx) {}

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
                        onnxTypeName(tt.elem_type()), " ",
                        supportedOnnxTypesNote()));
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
  if (dims.size() > static_cast<size_t>(kMaxTensorRank))
    return error(strCat("graph input '", name, "' has rank ", dims.size(),
                        ", more than the limit of ", kMaxTensorRank));
  llvm::SmallVector<int64_t> staticDims;
  std::string shape;
  for (int64_t d : dims) {
    bool dynamic = mlir::ShapedType::isDynamic(d);
    shape +=
        strCat(shape.empty() ? "" : "x", dynamic ? "?" : std::to_string(d));
    if (!dynamic)
      staticDims.push_back(d);
  }
  if (!checkedElementCount(staticDims))
    return error(strCat("graph input '", name, "' has shape ", shape,
                        ": more than the limit of 2^40 elements per tensor "
                        "(docs/reliability.md)"));
  return mlir::RankedTensorType::get(dims, toMlirElementType(&ctx_, *dtype));
}

Status GraphTracer::traceNode(const onnx::NodeProto &node, int index) {
  const std::string &opType = node.op_type();
  std::string name =
      node.name().empty() ? strCat(opType, "_", index) : node.name();
  std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
  if (scopes_.empty())
    topIndex_ = index;
  // The opset of the node's own domain (a custom domain's, if imported).
  std::string opsetText = std::to_string(opset_);
  if (domain != "ai.onnx") {
    auto imported = domainOpsets_.find(domain);
    opsetText = imported == domainOpsets_.end()
                    ? std::string("not imported")
                    : std::to_string(imported->second);
  }
  std::string where = strCat("node '", name, "' (", opType, ", domain ", domain,
                             ", opset ", opsetText);
  // Nodes of subgraphs say where they are after the operator version.
  std::string scope =
      scopes_.empty() ? "" : strCat(", in the ", scopes_.back());
  auto nodeError = [&](const std::string &msg) {
    return error(where + scope + "): " + msg);
  };
  // A custom-op library (--custom-ops) provides the op: it wins over a
  // mapping of the same name, so users can replace an ONNX op's kernel.
  if (findCustomOp(domain, opType).op)
    return traceCustomOp(node, name, where + scope, domain);
  if (domain != "ai.onnx")
    return nodeError(strCat(
        "operators of domain '", domain,
        "' are not supported by Kiln, which supports the default ONNX "
        "domain (ai.onnx), and no custom-op library provides ", domain, ":",
        opType, "; write one and load it with --custom-ops libNAME.so "
        "(docs/custom-ops.md)"));
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

  // A value whose rank is only known at run time (an output of an If whose
  // branches disagree on it): traceIf traces the nodes of the If's own graph
  // that read it once per branch, where it has a rank (OnnxIfSinking.cpp).
  // What remains reaches the node through a branch's output.
  for (const std::string &in : node.input())
    if (Value v = state_.values.lookup(in);
        v && mlir::isa<mlir::UnrankedTensorType>(v.getType()))
      return nodeError(strCat(
          "input '", in,
          "' has a rank known only at run time (an output of an If whose "
          "branches disagree on its rank); Kiln traces the nodes after such "
          "an If once per branch within the If's own graph, but a value that "
          "reaches them through a branch's output (a nested If returned by "
          "its branch, or an If in a branch that was inlined because its "
          "condition folded) is not supported: make the branches agree on "
          "the rank (e.g. Unsqueeze/Reshape inside the branch), or bind the "
          "condition with --input-value NAME=FILE so that only one branch "
          "is traced (docs/graph-breaks.md)"));
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
                            "model, export it differently, or provide it "
                            "in a custom-op library loaded with "
                            "--custom-ops libNAME.so (docs/custom-ops.md)"));
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
    if (!in.empty() && !state_.values.count(in) &&
        !state_.sequences.count(in))
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
    if (!out.empty() && !state_.values.count(out) &&
        !state_.sequences.count(out))
      return nodeError(strCat("Kiln does not compute output #", i, " ('", out,
                              "') of ", opType));
  }
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
    } else {
      domainOpsets_[imp.domain()] = imp.version();
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
  KILN_RETURN_IF_ERROR(checkOperatorsKnown(graph));
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
    bool trainable = false;
  };
  std::vector<Param> params;
  std::vector<std::pair<std::string, Tensor>> constants;
  for (const onnx::TensorProto &init : graph.initializer()) {
    initNames.insert(init.name());
    Expected<ProtoTensor> t = readProtoTensor(init, modelDir_);
    if (!t)
      return error(t.status().message());
    bool external = init.data_location() == onnx::TensorProto::EXTERNAL;
    bool trainable = options_.trainable && isFloatingPoint(t->dtype) &&
                     !(options_.frozen && options_.frozen(init.name()));
    if (trainable) {
      // Without its data (an absent external data file) a parameter gets
      // its initial value when the package is loaded.
      params.push_back(
          {init.name(), mlir::RankedTensorType::get(
                            t->shape, toMlirElementType(&ctx_, t->dtype)),
           {}, /*trainable=*/true});
      if (options_.initialValues && !t->externalMissing)
        (*options_.initialValues)[init.name()] = t->tensor;
      continue;
    }
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
  // Every size given (`--dim NAME=SIZE`) names a dimension of an input.
  std::set<std::string> dimParams;
  for (const onnx::ValueInfoProto &in : graph.input())
    if (!initNames.count(in.name()) && in.type().has_tensor_type())
      for (const auto &d : in.type().tensor_type().shape().dim())
        if (d.has_dim_param())
          dimParams.insert(d.dim_param());
  for (const auto &[dimName, size] : options_.dimSizes) {
    if (dimParams.count(dimName))
      continue;
    std::string known;
    for (const std::string &p : dimParams)
      known += (known.empty() ? "" : ", ") + p;
    return error(strCat("--dim ", dimName, "=", size,
                        ": the graph's inputs have no dimension named '",
                        dimName, "'; ",
                        known.empty() ? "they have no named dimensions"
                                      : "their dimension names: " + known));
  }
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
    if (i >= numRuntimeInputs && params[i - numRuntimeInputs].trainable) {
      func.setArgAttr(i, "kiln.trainable", builder_.getUnitAttr());
    } else if (i >= numRuntimeInputs) {
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

  NodeWalk walk = walkOf(graph, /*topLevel=*/true);
  KILN_RETURN_IF_ERROR(traceNodes(walk));

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
