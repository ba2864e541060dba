//===- WrapperSupport.cpp - Helpers of the wrapper emitters ---------------===//
//
// This file implements the small helpers that the wrapper emitter and the
// targets' step emitters share (WrapperSupport.h): the kind of step an op
// is, C type names of dtypes, identifiers and quoted strings for generated
// C++, number and shape formatting, ONNX node lists and op types for
// comments, a value's planned dtype and shape, and the attributes of
// reference steps as C++ initializers.
//
//===----------------------------------------------------------------------===//

#include "codegen/WrapperSupport.h"
#include "codegen/SymbolicShapes.h"
#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"
#include "passes/TensorConversion.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace kiln {

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

StepKind classifyStep(Operation *op) {
  if (isa<func::ReturnOp>(op))
    return StepKind::Return;
  if (isa<ConstantOp>(op))
    return StepKind::Constant;
  if (isa<FusionOp>(op) || op->hasAttr(kKernelAttr))
    return StepKind::Kernel;
  if (isa<LibraryCallOp>(op))
    return StepKind::Library;
  if (op->hasAttr(kAliasAttr))
    return StepKind::Alias;
  assert(op->hasAttr(kReferenceAttr) &&
         "a step the target's lowering did not decide");
  return StepKind::Reference;
}

const char *kernelCType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float";
  case DType::F16:
    return "kiln_f16";
  case DType::BF16:
    return "kiln_bf16";
  case DType::F64:
    return "double";
  case DType::I64:
    return "int64_t";
  case DType::I32:
    return "int32_t";
  case DType::I8:
    return "int8_t";
  case DType::U8:
    return "uint8_t";
  case DType::Bool:
    return "bool";
  case DType::U16:
    return "uint16_t";
  case DType::U32:
    return "uint32_t";
  case DType::U64:
    return "uint64_t";
  case DType::I16:
    return "int16_t";
  case DType::F8E4M3FN:
    return "kiln_f8e4m3fn";
  case DType::F8E4M3FNUZ:
    return "kiln_f8e4m3fnuz";
  case DType::F8E5M2:
    return "kiln_f8e5m2";
  case DType::F8E5M2FNUZ:
    return "kiln_f8e5m2fnuz";
  case DType::I4:
  case DType::I2:
    return "int8_t";
  case DType::U4:
  case DType::U2:
    return "uint8_t";
  }
  return "float";
}

/// The C type of a dtype in package headers (f16/bf16/float8 as their bits).
const char *publicCType(DType dtype) {
  if (dtype == DType::F16 || dtype == DType::BF16)
    return "uint16_t";
  if (isFloat8(dtype))
    return "uint8_t";
  return kernelCType(dtype);
}

std::string toIdentifier(StringRef name) {
  std::string id;
  for (char c : name)
    id += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0])))
    id = "v" + id;
  return id;
}

namespace wrapper {

std::string dtypeEnum(DType dtype) {
  // In the order of kiln::DType's enumerators (DType.h).
  static const char *names[] = {
      "F32",        "F16",    "BF16",       "F64", "I64", "I32", "I8",
      "U8",         "Bool",   "U16",        "U32", "U64", "I16", "F8E4M3FN",
      "F8E4M3FNUZ", "F8E5M2", "F8E5M2FNUZ", "I4",  "U4",  "I2",  "U2"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumDTypes,
                "a DType enumerator is missing from this table");
  return std::string("kiln::DType::") + names[static_cast<int>(dtype)];
}

std::string quote(StringRef s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

} // namespace wrapper

/// Text safe inside a // comment (no line breaks).
std::string commentSafe(StringRef s) {
  std::string out;
  for (char c : s)
    out += (c == '\n' || c == '\r') ? ' ' : c;
  return out;
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "{";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "}";
}

/// "f32[4, 16]".
std::string typeString(DType dtype, ArrayRef<int64_t> shape) {
  std::string s = std::string(dtypeName(dtype)) + "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

namespace wrapper {

std::string nodeList(const std::vector<std::string> &names) {
  if (names.empty())
    return "(no ONNX node)";
  std::string s;
  for (auto [i, n] : llvm::enumerate(names))
    s += (i ? ", '" : "'") + commentSafe(n) + "'";
  return s;
}

std::string sourceOpType(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (auto op = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      return op.getValue().str();
  return "";
}

ValueType valueType(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  ValueType vt{*fromMlirElementType(t.getElementType()),
               SmallVector<int64_t>(t.getShape()), dimCExprs(v), false};
  vt.symbolic = !symbolicDimsOf(v).empty();
  return vt;
}

std::string shapeExpr(const ValueType &t) {
  if (!t.symbolic)
    return formatShape(t.shape);
  std::string s = "{";
  for (auto [i, d] : llvm::enumerate(t.dims))
    s += (i ? ", " : "") + d;
  return s + "}";
}

std::string bytesExpr(const ValueType &t) {
  if (!t.symbolic) {
    int64_t n = static_cast<int64_t>(dtypeSize(t.dtype));
    for (int64_t d : t.shape)
      n *= d;
    return std::to_string(n);
  }
  std::string s = std::to_string(dtypeSize(t.dtype));
  for (const std::string &d : t.dims)
    s += " * " + d;
  return "size_t(" + s + ")";
}

std::string kernelSizeArguments(Operation *op) {
  std::string s;
  for (const std::string &symbol : kernelSizeSymbols(op))
    s += ", " + sizeSymbolCName(symbol);
  return s;
}

} // namespace wrapper

//===----------------------------------------------------------------------===//
// Attributes of reference steps
//===----------------------------------------------------------------------===//

namespace wrapper {

static std::string formatInt(int64_t v) {
  if (v == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + (v > INT32_MAX || v < INT32_MIN ? "LL" : "");
}

static std::string formatDouble(double v) {
  if (std::isnan(v))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v))
    return v > 0 ? "std::numeric_limits<double>::infinity()"
                 : "-std::numeric_limits<double>::infinity()";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}


/// Emits `a.set(...)` lines for `attrs` into `os`; tensor data goes to
/// `globals` as byte arrays named after `prefix`.
static void emitAttributes(const Attributes &attrs, StringRef prefix,
                           llvm::raw_ostream &os, llvm::raw_ostream &globals) {
  int tensorIndex = 0;
  for (const auto &[name, value] : attrs.all()) {
    os << "  a.set(" << quote(name) << ", ";
    if (auto *i = std::get_if<int64_t>(&value)) {
      os << "int64_t(" << formatInt(*i) << ")";
    } else if (auto *d = std::get_if<double>(&value)) {
      os << "double(" << formatDouble(*d) << ")";
    } else if (auto *s = std::get_if<std::string>(&value)) {
      os << "std::string(" << quote(*s) << ", " << s->size() << ")";
    } else if (auto *is = std::get_if<std::vector<int64_t>>(&value)) {
      os << "std::vector<int64_t>{";
      for (auto [k, v] : llvm::enumerate(*is))
        os << (k ? ", " : "") << formatInt(v);
      os << "}";
    } else if (auto *ds = std::get_if<std::vector<double>>(&value)) {
      os << "std::vector<double>{";
      for (auto [k, v] : llvm::enumerate(*ds))
        os << (k ? ", " : "") << formatDouble(v);
      os << "}";
    } else if (auto *dt = std::get_if<DType>(&value)) {
      os << dtypeEnum(*dt);
    } else if (auto *t = std::get_if<Tensor>(&value)) {
      Tensor c = t->contiguous();
      std::string array =
          (prefix + "_tensor" + std::to_string(tensorIndex++)).str();
      const auto *bytes = static_cast<const unsigned char *>(c.rawData());
      globals << "alignas(64) const unsigned char " << array << "["
              << std::max<size_t>(c.nbytes(), 1) << "] = {";
      for (size_t k = 0; k < c.nbytes(); ++k)
        globals << (k % 16 ? " " : "\n    ") << unsigned(bytes[k]) << ",";
      if (c.nbytes() == 0)
        globals << "0";
      globals << "};\n";
      os << "tensorAttr(" << dtypeEnum(c.dtype()) << ", "
         << formatShape(c.shape()) << ", " << array << ", " << c.nbytes()
         << ")";
    }
    os << ");\n";
  }
}


Attributes referenceAttributes(Operation *op) {
  if (auto call = dyn_cast<LibraryCallOp>(op))
    return toAttributes(call.getParams());
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute a : op->getAttrs())
    if (!isLoweringAttr(a.getName().getValue()))
      kept.push_back(a);
  return toAttributes(DictionaryAttr::get(op->getContext(), kept));
}

void emitAttributeBuilder(Operation *op, StringRef builder, size_t index,
                          llvm::raw_ostream &attrs,
                          llvm::raw_ostream &globals) {
  StringRef opName = op->getName().getStringRef();
  attrs << "/// Attributes of " << opName << " (step " << index
        << ", ONNX node '" << commentSafe(firstNode(op)) << "').\n";
  attrs << "kiln::Attributes " << builder << "() {\n  kiln::Attributes a;\n";
  emitAttributes(referenceAttributes(op), builder, attrs, globals);
  attrs << "  return a;\n}\n\n";
}

std::string firstNode(Operation *op) {
  std::vector<std::string> nodes = sourceNodeNames(op);
  if (!nodes.empty())
    return nodes.front();
  StringRef name = op->getName().getStringRef();
  name.consume_front("kiln.");
  return name.str();
}

std::vector<KernelParameter> kernelParameters(Operation *op,
                                              const BufferNames &buffers) {
  std::vector<KernelParameter> params;
  auto add = [&](Value v, bool isInput, unsigned i) {
    ValueType t = valueType(v);
    std::string name = (isInput ? "in" : "out") + std::to_string(i);
    params.push_back(
        {std::string(isInput ? "const " : "") + publicCType(t.dtype) + " *" +
             name,
         name + ": " + typeString(t.dtype, t.shape) + ", " +
             (buffers.hasBuffer(v) ? buffers.describe(v)
                                   : std::string("not read by the model"))});
  };
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    add(v, /*isInput=*/true, i);
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    add(v, /*isInput=*/false, i);
  for (const std::string &symbol : kernelSizeSymbols(op))
    params.push_back(
        {"int64_t " + sizeSymbolCName(symbol),
         sizeSymbolCName(symbol) + ": the size '" + symbol + "' of this run"});
  return params;
}

std::vector<std::string> kernelDoc(Operation *op, StringRef kernelName,
                                   StringRef kind) {
  return {"Kernel " + kernelName.str() + " (" + kind.str() + "), ONNX nodes " +
              commentSafe(nodeList(sourceNodeNames(op))) + ".",
          "Buffers are contiguous and row-major, of the types below."};
}

} // namespace wrapper
} // namespace kiln
