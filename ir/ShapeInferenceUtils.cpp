//===- ShapeInferenceUtils.cpp - Helpers for result-type inference --------===//
//
// This file implements the pieces every inference function shares: reading
// operands and attributes with diagnostics instead of assertions, reading
// the values of constant parameter operands, NumPy broadcasting with dynamic
// dims, the compatibility of inferred and declared result types, and the
// size-limit check every inferred result passes.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeInference.h"

#include "kiln/runtime/SizeLimits.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kiln::infer;

//===----------------------------------------------------------------------===//
// InferContext
//===----------------------------------------------------------------------===//

LogicalResult InferContext::expectOperands(unsigned count, bool atLeast) const {
  if (operands.size() == count || (atLeast && operands.size() > count))
    return success();
  return emitError("expected ", atLeast ? "at least " : "", count,
                   " operands, got ", operands.size());
}

FailureOr<RankedTensorType> InferContext::tensor(unsigned index) const {
  if (index >= operands.size())
    return emitError("expected an operand #", index, ", got ", operands.size(),
                     " operands");
  Value value = operands[index];
  if (!value)
    return emitError("operand #", index, " is null");
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return emitError("operand #", index, " must be a ranked tensor, got ",
                     value.getType());
  return type;
}

/// Looks up an attribute, reporting a missing one.
static FailureOr<Attribute> lookup(const InferContext &ctx,
                                   DictionaryAttr attrs, StringRef name) {
  Attribute attr = attrs ? attrs.get(name) : Attribute();
  if (!attr)
    return ctx.emitError("requires attribute '", name, "'");
  return attr;
}

FailureOr<int64_t> InferContext::i64Attr(StringRef name) const {
  FailureOr<Attribute> attr = lookup(*this, attributes, name);
  if (failed(attr))
    return failure();
  auto intAttr = llvm::dyn_cast<IntegerAttr>(*attr);
  if (!intAttr || !intAttr.getType().isInteger(64))
    return emitError("attribute '", name, "' must be a 64-bit integer, got ",
                     *attr);
  return intAttr.getInt();
}

FailureOr<double> InferContext::f32Attr(StringRef name) const {
  FailureOr<Attribute> attr = lookup(*this, attributes, name);
  if (failed(attr))
    return failure();
  auto floatAttr = llvm::dyn_cast<FloatAttr>(*attr);
  if (!floatAttr)
    return emitError("attribute '", name, "' must be a float, got ", *attr);
  return floatAttr.getValueAsDouble();
}

FailureOr<StringRef> InferContext::strAttr(StringRef name) const {
  FailureOr<Attribute> attr = lookup(*this, attributes, name);
  if (failed(attr))
    return failure();
  auto strAttr = llvm::dyn_cast<StringAttr>(*attr);
  if (!strAttr)
    return emitError("attribute '", name, "' must be a string, got ", *attr);
  return strAttr.getValue();
}

FailureOr<StringRef> InferContext::enumAttr(StringRef name,
                                            ArrayRef<StringRef> allowed) const {
  FailureOr<StringRef> value = strAttr(name);
  if (failed(value))
    return failure();
  if (llvm::is_contained(allowed, *value))
    return value;
  std::string list;
  for (StringRef option : allowed)
    list += (list.empty() ? "\"" : ", \"") + option.str() + "\"";
  return emitError("attribute '", name, "' must be one of ", list, ", got \"",
                   *value, "\"");
}

FailureOr<SmallVector<int64_t>>
InferContext::i64ArrayAttr(StringRef name) const {
  FailureOr<Attribute> attr = lookup(*this, attributes, name);
  if (failed(attr))
    return failure();
  auto array = llvm::dyn_cast<DenseI64ArrayAttr>(*attr);
  if (!array)
    return emitError("attribute '", name, "' must be an array<i64>, got ",
                     *attr);
  return SmallVector<int64_t>(array.asArrayRef());
}

FailureOr<SmallVector<double>>
InferContext::f32ArrayAttr(StringRef name) const {
  FailureOr<Attribute> attr = lookup(*this, attributes, name);
  if (failed(attr))
    return failure();
  auto array = llvm::dyn_cast<DenseF32ArrayAttr>(*attr);
  if (!array)
    return emitError("attribute '", name, "' must be an array<f32>, got ",
                     *attr);
  return SmallVector<double>(array.asArrayRef().begin(),
                             array.asArrayRef().end());
}

FailureOr<Type> InferContext::typeAttr(StringRef name) const {
  FailureOr<Attribute> attr = lookup(*this, attributes, name);
  if (failed(attr))
    return failure();
  auto type = llvm::dyn_cast<TypeAttr>(*attr);
  if (!type)
    return emitError("attribute '", name, "' must be a type, got ", *attr);
  return type.getValue();
}

FailureOr<ElementsAttr> InferContext::elementsAttr(StringRef name) const {
  FailureOr<Attribute> attr = lookup(*this, attributes, name);
  if (failed(attr))
    return failure();
  auto elements = llvm::dyn_cast<ElementsAttr>(*attr);
  if (!elements)
    return emitError("attribute '", name,
                     "' must be an elements attribute, "
                     "got ",
                     *attr);
  return elements;
}

FailureOr<int64_t> InferContext::paramLength(unsigned index,
                                             bool requireStatic) const {
  FailureOr<RankedTensorType> type = tensor(index);
  if (failed(type))
    return failure();
  if (type->getRank() == 0)
    return 1;
  if (type->getRank() != 1)
    return emitError("operand #", index,
                     " must be a 1-D or rank-0 tensor, "
                     "got ",
                     *type);
  int64_t length = type->getDimSize(0);
  if (requireStatic && ShapedType::isDynamic(length))
    return emitError("operand #", index,
                     " must have a static length (it "
                     "fixes the result rank), got ",
                     *type);
  // Parameters are shapes, axes, pads, repeats and split sizes: a handful of
  // values, never more than a node can have results.
  if (!ShapedType::isDynamic(length) && length > kiln::kMaxNodeOutputs)
    return emitError("operand #", index, " has ", length,
                     " values, more than the limit of ", kiln::kMaxNodeOutputs,
                     " for a shape, axes or sizes parameter");
  return length;
}

/// The elements of the constant that produces `value`, if any.
static DenseElementsAttr constantElements(Value value) {
  DenseElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return {};
  return attr;
}

std::optional<SmallVector<int64_t>>
InferContext::constInts(unsigned index) const {
  if (index >= operands.size())
    return std::nullopt;
  DenseElementsAttr attr = constantElements(operands[index]);
  if (!attr || !attr.getElementType().isIntOrIndex())
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(attr.getElementType().isUnsignedInteger()
                         ? static_cast<int64_t>(v.getZExtValue())
                         : v.getSExtValue());
  return values;
}

std::optional<SmallVector<double>>
InferContext::constFloats(unsigned index) const {
  if (index >= operands.size())
    return std::nullopt;
  DenseElementsAttr attr = constantElements(operands[index]);
  if (!attr)
    return std::nullopt;
  SmallVector<double> values;
  if (llvm::isa<FloatType>(attr.getElementType())) {
    for (const APFloat &v : attr.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    return values;
  }
  std::optional<SmallVector<int64_t>> ints = constInts(index);
  if (!ints)
    return std::nullopt;
  for (int64_t v : *ints)
    values.push_back(static_cast<double>(v));
  return values;
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::string kiln::infer::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleave(
      shape, os,
      [&](int64_t dim) {
        if (ShapedType::isDynamic(dim))
          os << "?";
        else
          os << dim;
      },
      "x");
  return out;
}

FailureOr<SmallVector<int64_t>>
kiln::infer::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t b = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    bool aDyn = ShapedType::isDynamic(a), bDyn = ShapedType::isDynamic(b);
    if (aDyn && bDyn)
      result[i] = ShapedType::kDynamic;
    else if (aDyn)
      result[i] = b == 1 ? ShapedType::kDynamic : b;
    else if (bDyn)
      result[i] = a == 1 ? ShapedType::kDynamic : a;
    else if (a == b || b == 1)
      result[i] = a;
    else if (a == 1)
      result[i] = b;
    else
      return failure();
  }
  return result;
}

bool kiln::infer::areCompatibleResultTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [a, b] : llvm::zip(lhs, rhs)) {
    if (a == b)
      continue;
    auto ta = llvm::dyn_cast<RankedTensorType>(a);
    auto tb = llvm::dyn_cast<RankedTensorType>(b);
    if (!ta || !tb || ta.getElementType() != tb.getElementType() ||
        failed(verifyCompatibleShape(ta.getShape(), tb.getShape())))
      return false;
  }
  return true;
}

LogicalResult kiln::infer::checkAxis(const InferContext &ctx, StringRef name,
                                     int64_t value, int64_t limit,
                                     RankedTensorType type, bool inclusive) {
  if (value >= 0 && (value < limit || (inclusive && value == limit)))
    return success();
  return ctx.emitError("attribute '", name, "' = ", value,
                       " is out of range [0, ", limit, inclusive ? "]" : ")",
                       " for operand of type ", type);
}

/// A result shape given by parameter operand `index` (i64[R], R static):
/// the values when constant (checked >= 0), else R dynamic dims.
FailureOr<SmallVector<int64_t>> kiln::infer::shapeParam(const InferContext &ctx,
                                                       unsigned index) {
  FailureOr<int64_t> rank = ctx.paramLength(index, /*requireStatic=*/true);
  if (failed(rank))
    return failure();
  std::optional<SmallVector<int64_t>> values = ctx.constInts(index);
  if (!values)
    return SmallVector<int64_t>(*rank, ShapedType::kDynamic);
  for (int64_t v : *values)
    if (v < 0)
      return ctx.emitError("shape operand has negative dim ", v);
  return *values;
}

std::optional<int64_t> kiln::infer::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult kiln::infer::checkResultSizes(const InferContext &ctx,
                                            LogicalResult inferred,
                                            Results &results) {
  if (failed(inferred))
    return failure();
  for (auto [index, type] : llvm::enumerate(results)) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor)
      continue;
    if (tensor.getRank() > kiln::kMaxTensorRank)
      return ctx.emitError("result #", index, " would have rank ",
                           tensor.getRank(), ", more than the limit of ",
                           kiln::kMaxTensorRank);
    SmallVector<int64_t> staticDims;
    for (int64_t d : tensor.getShape()) {
      if (ShapedType::isDynamic(d))
        continue;
      if (d < 0)
        return ctx.emitError("result #", index, " would have a negative dim ",
                             d,
                             " (an attribute or shape operand is out of "
                             "range)");
      staticDims.push_back(d);
    }
    if (!kiln::checkedElementCount(staticDims))
      return ctx.emitError(
          "result #", index, " would have shape ",
          formatShape(tensor.getShape()),
          ": more than the limit of 2^40 elements per tensor "
          "(docs/reliability.md); an input dimension or attribute is too "
          "large");
  }
  return success();
}
