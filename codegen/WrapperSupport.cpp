//===- WrapperSupport.cpp - Helpers of the wrapper emitters ---------------===//
//
// This file implements the small helpers that the CPU and CUDA wrapper
// emitters share (WrapperSupport.h): the kind of step an op is, C type names
// of dtypes, identifiers and quoted strings for generated C++, number and
// shape formatting, ONNX node lists and op types for comments, and a value's
// planned dtype and shape. Moved out of WrapperEmitter.cpp unchanged.
//
//===----------------------------------------------------------------------===//

#include "codegen/WrapperSupport.h"
#include "passes/FusionRules.h"
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
  StringRef name = op->getName().getStringRef();
  if (isa<func::ReturnOp>(op))
    return StepKind::Return;
  if (name == "kiln.constant")
    return StepKind::Constant;
  if (name == "kiln.fusion")
    return StepKind::Kernel;
  if (isLibraryOp(op))
    return StepKind::Library;
  return StepKind::Fallback;
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
  }
  return "float";
}

/// The C type of a dtype in model.h (f16/bf16 as their bits).
const char *publicCType(DType dtype) {
  if (dtype == DType::F16 || dtype == DType::BF16)
    return "uint16_t";
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

std::string modelNameOf(ModuleOp module) {
  auto source = module->getAttrOfType<StringAttr>("kiln.source");
  StringRef stem = source ? source.getValue() : StringRef("model");
  stem = stem.rsplit('/').second.empty() ? stem : stem.rsplit('/').second;
  stem = stem.rsplit('.').first;
  return stem.empty() ? "model" : stem.str();
}

namespace wrapper {

std::string dtypeEnum(DType dtype) {
  // In the order of kiln::DType's enumerators (DType.h).
  static const char *names[] = {"F32", "F16", "BF16", "F64", "I64",
                                "I32", "I8",  "U8",   "Bool"};
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
  return {*fromMlirElementType(t.getElementType()),
          SmallVector<int64_t>(t.getShape())};
}

} // namespace wrapper

} // namespace kiln
