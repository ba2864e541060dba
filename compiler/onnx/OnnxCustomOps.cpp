//===- OnnxCustomOps.cpp - Nodes of custom-op libraries to kiln -----------===//
//
// This file implements the tracing of a node that a custom-op library
// (kiln/custom_op.h, loaded with --custom-ops) provides: one
// kiln.custom_call with the node's present inputs, its ONNX attributes as
// `attr.<name>`, and result types from the library's shape function, called
// with the inputs' static types. A custom op whose inputs are all constants
// is not evaluated at trace time (the kernel may have side effects).
//
//===----------------------------------------------------------------------===//

#include "OnnxGraphTracer.h"
#include "OnnxTraceContext.h"

#include "ir/KilnOps.h"
#include "passes/TensorConversion.h"

#include "kiln/runtime/CustomOps.h"

namespace kiln {
namespace tracer {

namespace {

/// The ONNX attribute `a` as an MLIR attribute; null for kinds a custom op
/// does not receive (tensors, graphs, types).
mlir::Attribute customAttribute(mlir::Builder &b, const onnx::AttributeProto &a) {
  switch (a.type()) {
  case onnx::AttributeProto::INT:
    return b.getI64IntegerAttr(a.i());
  case onnx::AttributeProto::FLOAT:
    return b.getF64FloatAttr(a.f());
  case onnx::AttributeProto::STRING:
    return b.getStringAttr(a.s());
  case onnx::AttributeProto::INTS:
    return b.getDenseI64ArrayAttr(
        llvm::SmallVector<int64_t>(a.ints().begin(), a.ints().end()));
  case onnx::AttributeProto::FLOATS:
    return b.getDenseF64ArrayAttr(
        llvm::SmallVector<double>(a.floats().begin(), a.floats().end()));
  default:
    return {};
  }
}

} // namespace

Status GraphTracer::traceCustomOp(const onnx::NodeProto &node,
                                  const std::string &name,
                                  const std::string &where,
                                  const std::string &domain) {
  CustomOpEntry entry = findCustomOp(domain, node.op_type());
  assert(entry.op && "traceCustomOp without a registered op");
  llvm::SmallVector<Value> inputs;
  std::vector<KilnTensorType> inputTypes;
  for (const std::string &in : node.input()) {
    if (in.empty())
      continue; // an omitted optional input: the op sees the others
    Value v = state_.values.lookup(in);
    if (!v)
      return nodeErrorAt(where, strCat("input '", in,
                                       "' is not produced by an earlier node, "
                                       "a graph input or an initializer"));
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
    std::optional<DType> dtype =
        type ? fromMlirElementType(type.getElementType()) : std::nullopt;
    if (!dtype || !type.hasStaticShape())
      return nodeErrorAt(
          where, strCat("input '", in, "' must have a static shape for the "
                                       "custom op's shape function (give "
                                       "sizes with --dim NAME=SIZE)"));
    Expected<KilnTensorType> t = customOpType(*dtype, type.getShape().vec());
    if (!t)
      return nodeErrorAt(where, t.status().message());
    inputs.push_back(v);
    inputTypes.push_back(*t);
  }
  mlir::OperationState state(
      mlir::FusedLoc::get(&ctx_, {nameLoc(name, topIndex_ + 1)},
                          builder_.getStringAttr(node.op_type())),
      CustomCallOp::getOperationName());
  state.addOperands(inputs);
  state.addAttribute("domain", builder_.getStringAttr(domain));
  state.addAttribute("op_type", builder_.getStringAttr(node.op_type()));
  state.addAttribute("library", builder_.getStringAttr(entry.library));
  for (const onnx::AttributeProto &a : node.attribute()) {
    mlir::Attribute attr = customAttribute(builder_, a);
    if (!attr)
      return nodeErrorAt(where, strCat("attribute '", a.name(),
                                       "' is a tensor, graph or type; custom "
                                       "ops receive ints, floats, strings and "
                                       "their lists"));
    state.addAttribute("attr." + a.name(), attr);
  }
  // The attributes as the runtime will pass them to the library.
  Attributes runtimeAttrs =
      toAttributes(mlir::DictionaryAttr::get(&ctx_, state.attributes));
  std::vector<KilnAttribute> attrs = customOpAttributes(runtimeAttrs);
  Expected<std::vector<KilnTensorType>> types = inferCustomOpTypes(
      entry, inputTypes, attrs, node.output_size(), where + ")");
  if (!types)
    return error(types.status().message());
  for (const KilnTensorType &t : *types)
    state.addTypes(mlir::RankedTensorType::get(
        llvm::ArrayRef<int64_t>(t.shape, t.rank),
        toMlirElementType(&ctx_, static_cast<DType>(t.dtype))));
  mlir::Operation *op = builder_.create(state);
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      state_.values[node.output(i)] = op->getResult(i);
  return Status::ok();
}

} // namespace tracer
} // namespace kiln
