//===- OnnxNodeContext.cpp - Helpers the ONNX op mappings share -----------===//
//
// This file implements NodeContext: access to one ONNX node's inputs,
// attributes and outputs, and the helpers that create kiln ops through
// createKilnOp. Every op whose operands are all kiln.constant is evaluated at
// trace time with the runtime's kernels and replaced by constants.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

#include "passes/ConstantEvaluator.h"
#include "passes/PassDetail.h"
#include "passes/TensorConversion.h"
#include "ir/KilnOpBuilder.h"

#include "mlir/IR/Operation.h"

namespace kiln {
namespace tracer {

namespace {
using passes::isKilnConstant;

std::string joinDiagnostics(std::vector<std::string> &diags,
                            llvm::StringRef fallback) {
  if (diags.empty())
    return fallback.str();
  std::string msg;
  for (const std::string &d : diags) {
    if (!msg.empty())
      msg += "; ";
    msg += d;
  }
  diags.clear();
  return msg;
}
} // namespace

NodeContext::NodeContext(TraceState &state, const onnx::NodeProto &node,
                         int version, mlir::OpBuilder &builder,
                         mlir::Location loc)
    : state_(state), node_(node), version_(version), b_(builder), loc_(loc) {}

//===----------------------------------------------------------------------===//
// Inputs, outputs, attributes
//===----------------------------------------------------------------------===//

bool NodeContext::hasInput(size_t i) const {
  return i < numInputs() && !node_.input(static_cast<int>(i)).empty();
}

Value NodeContext::input(size_t i) const {
  if (!hasInput(i))
    return Value();
  return state_.values.lookup(node_.input(static_cast<int>(i)));
}

llvm::SmallVector<Value> NodeContext::inputs() const {
  llvm::SmallVector<Value> result;
  for (size_t i = 0; i < numInputs(); ++i)
    if (hasInput(i))
      result.push_back(input(i));
  return result;
}

bool NodeContext::wantsOutput(size_t i) const {
  return i < numOutputs() && !node_.output(static_cast<int>(i)).empty();
}

LogicalResult NodeContext::setOutput(size_t i, Value v) {
  if (!v) {
    if (!failed_)
      setError("internal error: no value for output " + std::to_string(i));
    return mlir::failure();
  }
  if (wantsOutput(i))
    state_.values[node_.output(static_cast<int>(i))] = v;
  return mlir::success();
}

LogicalResult NodeContext::setOutputSequence(size_t i,
                                             llvm::ArrayRef<Value> tensors) {
  for (Value v : tensors)
    if (!v) {
      if (!failed_)
        setError("internal error: a sequence element of output " +
                 std::to_string(i) + " is missing");
      return mlir::failure();
    }
  if (wantsOutput(i))
    state_.sequences[node_.output(static_cast<int>(i))] =
        llvm::SmallVector<Value>(tensors);
  return mlir::success();
}

std::optional<llvm::SmallVector<Value>>
NodeContext::inputSequence(size_t i) {
  if (!hasInput(i)) {
    setError("input " + std::to_string(i) + " (a sequence) is missing");
    return std::nullopt;
  }
  auto it = state_.sequences.find(node_.input(static_cast<int>(i)));
  if (it == state_.sequences.end()) {
    setError("input '" + node_.input(static_cast<int>(i)) +
             "' is a tensor, but a sequence is expected");
    return std::nullopt;
  }
  return it->second;
}

const onnx::AttributeProto *NodeContext::attr(const std::string &name) const {
  for (const onnx::AttributeProto &a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::attrInt(const std::string &name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() == onnx::AttributeProto::FLOAT)
    return static_cast<int64_t>(a->f());
  return a->i();
}

float NodeContext::attrFloat(const std::string &name, float dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() == onnx::AttributeProto::INT)
    return static_cast<float>(a->i());
  return a->f();
}

std::string NodeContext::attrString(const std::string &name,
                                    const std::string &dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : dflt;
}

std::optional<std::vector<int64_t>>
NodeContext::attrInts(const std::string &name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<float>>
NodeContext::attrFloats(const std::string &name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

LogicalResult NodeContext::fail(const std::string &message) {
  if (!failed_) {
    failed_ = true;
    error_ = message;
  }
  return mlir::failure();
}

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

mlir::RankedTensorType NodeContext::typeOf(Value v) const {
  return v ? mlir::dyn_cast<mlir::RankedTensorType>(v.getType())
           : mlir::RankedTensorType();
}

int64_t NodeContext::rankOf(Value v) const {
  mlir::RankedTensorType t = typeOf(v);
  return t ? t.getRank() : -1;
}

mlir::Type NodeContext::elemOf(Value v) const {
  mlir::RankedTensorType t = typeOf(v);
  return t ? t.getElementType() : mlir::Type();
}

std::optional<int64_t> NodeContext::normAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    setError(
        strCat("axis ", axis, " is out of range for an input of rank ", rank));
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

std::optional<Tensor> NodeContext::constTensor(Value v) const {
  if (!isKilnConstant(v))
    return std::nullopt;
  auto attr = v.getDefiningOp()->getAttrOfType<mlir::ElementsAttr>("value");
  if (!attr)
    return std::nullopt;
  return toTensor(attr);
}

std::optional<std::vector<int64_t>> NodeContext::constInts(Value v) const {
  std::optional<Tensor> t = constTensor(v);
  if (!t)
    return std::nullopt;
  return t->toIntVector();
}

std::optional<std::vector<double>> NodeContext::constFloats(Value v) const {
  std::optional<Tensor> t = constTensor(v);
  if (!t)
    return std::nullopt;
  return t->toDoubleVector();
}

Value NodeContext::constant(const Tensor &t) {
  if (failed_)
    return Value();
  mlir::DenseElementsAttr attr = toElementsAttr(ctx(), t);
  if (!attr) {
    setError("internal error: cannot convert a constant of type " +
             t.typeString());
    return Value();
  }
  llvm::SmallVector<Value> r =
      ops("kiln.constant", {}, {b_.getNamedAttr("value", attr)});
  return r.empty() ? Value() : r.front();
}

Value NodeContext::constI64(llvm::ArrayRef<int64_t> values) {
  return constant(Tensor::fromVector<int64_t>(
      std::vector<int64_t>(values.begin(), values.end()),
      {static_cast<int64_t>(values.size())}));
}

Value NodeContext::scalarI64(int64_t value) {
  return constant(Tensor::scalar<int64_t>(value));
}

Value NodeContext::constFill(double value, mlir::Type elem,
                             const Shape &shape) {
  if (failed_ || !elem)
    return Value();
  std::optional<DType> dtype = fromMlirElementType(elem);
  if (!dtype) {
    setError("internal error: unsupported element type for a constant");
    return Value();
  }
  Tensor t = Tensor::empty(*dtype, shape);
  visitDType(*dtype, [&](auto tag) {
    using T = decltype(tag);
    T *p = t.data<T>();
    for (int64_t i = 0, n = t.numel(); i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>)
        p[i] = value != 0;
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        p[i] = T(static_cast<float>(value));
      else
        p[i] = static_cast<T>(value);
    }
  });
  return constant(t);
}

//===----------------------------------------------------------------------===//
// Op creation and trace-time folding
//===----------------------------------------------------------------------===//

llvm::SmallVector<Value>
NodeContext::ops(llvm::StringRef name, mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attrs) {
  if (failed_)
    return {};
  for (Value v : operands)
    if (!v) {
      // Most often an absent input the operator requires (a hand-made or
      // damaged model); say which inputs the node has.
      std::string present;
      for (int i = 0; i < node_.input_size(); ++i)
        if (!node_.input(i).empty())
          present += (present.empty() ? "" : ", ") + std::to_string(i) +
                     " ('" + node_.input(i) + "')";
      setError(strCat("a required input is missing (", name.str(),
                      " has no operand for it); the node's inputs are ",
                      present.empty() ? std::string("none") : present,
                      ": check the model against the operator's definition"));
      return {};
    }
  state_.diagnostics.clear();
  mlir::FailureOr<mlir::Operation *> created =
      createKilnOp(b_, loc_, name, operands, attrs);
  if (mlir::failed(created) || !*created) {
    setError(
        joinDiagnostics(state_.diagnostics, ("cannot create " + name).str()));
    return {};
  }
  mlir::Operation *op = *created;
  llvm::SmallVector<Value> results(op->getResults().begin(),
                                   op->getResults().end());
  if (name == "kiln.constant" || operands.empty())
    return results;

  // Fold when every operand is a constant: evaluate with the runtime's
  // kernels (the oracle) and refine dynamic result types to the values'.
  mlir::FailureOr<llvm::SmallVector<mlir::DenseElementsAttr>> values =
      evaluateOnConstants(op, kMaxFoldElements, /*refineTypes=*/true);
  if (mlir::failed(values))
    return results;
  llvm::SmallVector<Value> folded;
  for (mlir::DenseElementsAttr attr : *values) {
    mlir::FailureOr<mlir::Operation *> c = createKilnOp(
        b_, loc_, "kiln.constant", {}, {b_.getNamedAttr("value", attr)});
    if (mlir::failed(c)) {
      setError(joinDiagnostics(state_.diagnostics,
                               "cannot create a folded constant"));
      return {};
    }
    folded.push_back((*c)->getResult(0));
  }
  op->erase();
  return folded;
}

Value NodeContext::op(llvm::StringRef name, mlir::ValueRange operands,
                      llvm::ArrayRef<mlir::NamedAttribute> attrs) {
  llvm::SmallVector<Value> r = ops(name, operands, attrs);
  if (r.empty()) {
    if (!failed_)
      setError(("internal error: " + name + " has no result").str());
    return Value();
  }
  return r.front();
}

mlir::NamedAttribute NodeContext::aInt(llvm::StringRef name, int64_t v) {
  return b_.getNamedAttr(name, b_.getI64IntegerAttr(v));
}
mlir::NamedAttribute NodeContext::aFloat(llvm::StringRef name, double v) {
  return b_.getNamedAttr(name, b_.getF32FloatAttr(static_cast<float>(v)));
}
mlir::NamedAttribute NodeContext::aStr(llvm::StringRef name,
                                       llvm::StringRef v) {
  return b_.getNamedAttr(name, b_.getStringAttr(v));
}
mlir::NamedAttribute NodeContext::aInts(llvm::StringRef name,
                                        llvm::ArrayRef<int64_t> v) {
  return b_.getNamedAttr(name, b_.getDenseI64ArrayAttr(v));
}
mlir::NamedAttribute NodeContext::aFloats(llvm::StringRef name,
                                          llvm::ArrayRef<float> v) {
  return b_.getNamedAttr(name, b_.getDenseF32ArrayAttr(v));
}
mlir::NamedAttribute NodeContext::aType(llvm::StringRef name, mlir::Type t) {
  return b_.getNamedAttr(name, mlir::TypeAttr::get(t));
}

//===----------------------------------------------------------------------===//
// Compositions
//===----------------------------------------------------------------------===//

Value NodeContext::cast(Value v, mlir::Type elem) {
  if (!v || !elem)
    return Value();
  if (elemOf(v) == elem)
    return v;
  return op("kiln.cast", {v}, {aType("to", elem)});
}

Value NodeContext::castSaturating(Value v, mlir::Type elem, bool saturate) {
  if (!v || !elem)
    return Value();
  std::optional<DType> to = fromMlirElementType(elem);
  if (!saturate || !to || !isFloat8(*to) || elemOf(v) == elem)
    return cast(v, elem);
  // Clip in a float type with arithmetic kernels (a float8 or an integer
  // source goes through f32: the bound, up to 57344, is not a value of
  // every integer type), then convert.
  std::optional<DType> from = fromMlirElementType(elemOf(v));
  if (from && (isStorageOnly(*from) || !isFloatingPoint(*from)))
    v = cast(v, builder().getF32Type());
  double hi = float8Max(float8FormatOf(*to));
  v = op("kiln.max", {v, scalarLike(-hi, v)});
  v = op("kiln.min", {v, scalarLike(hi, v)});
  return cast(v, elem);
}

Value NodeContext::reshape(Value v, llvm::ArrayRef<int64_t> shape) {
  if (!v)
    return Value();
  bool hasZero = llvm::is_contained(shape, 0);
  bool hasInfer = llvm::is_contained(shape, -1);
  return op("kiln.reshape", {v, constI64(shape)},
            {aInt("allowzero", hasZero && !hasInfer ? 1 : 0)});
}

Value NodeContext::shapeOf(Value v, int64_t start, std::optional<int64_t> end) {
  mlir::RankedTensorType t = typeOf(v);
  if (!t)
    return Value();
  int64_t rank = t.getRank();
  int64_t e = end ? *end : rank;
  if (start < 0)
    start += rank;
  if (e < 0)
    e += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  e = std::clamp<int64_t>(e, 0, rank);
  if (e < start)
    e = start;
  std::vector<int64_t> dims;
  bool isStatic = true;
  for (int64_t d = start; d < e; ++d) {
    if (t.isDynamicDim(d))
      isStatic = false;
    dims.push_back(t.getDimSize(d));
  }
  if (isStatic)
    return constI64(dims);
  return op("kiln.shape", {v}, {aInt("start", start), aInt("end", e)});
}

Value NodeContext::transpose(Value v, llvm::ArrayRef<int64_t> perm) {
  return op("kiln.transpose", {v}, {aInts("perm", perm)});
}

Value NodeContext::unsqueeze(Value v, llvm::ArrayRef<int64_t> axes) {
  if (!v)
    return Value();
  return op("kiln.unsqueeze", {v, constI64(axes)});
}

Value NodeContext::squeeze(Value v, llvm::ArrayRef<int64_t> axes) {
  if (!v)
    return Value();
  return op("kiln.squeeze", {v, constI64(axes)});
}

Value NodeContext::reduce(llvm::StringRef name, Value v,
                          llvm::ArrayRef<int64_t> axes, bool keepdims) {
  if (!v)
    return Value();
  return op(
      name, {v, constI64(axes)},
      {aInt("keepdims", keepdims ? 1 : 0), aInt("noop_with_empty_axes", 0)});
}

} // namespace tracer
} // namespace kiln
