//===- TensorConversion.cpp - MLIR attributes <-> runtime values ----------===//
//
// This file implements the conversions between MLIR element types, elements
// attributes and op attributes on one side and the runtime's DType, Tensor
// and AttrValue on the other. Elements are copied through raw little-endian
// buffers; i1 goes element by element because MLIR packs it into bits.
//
//===----------------------------------------------------------------------===//

#include "passes/TensorConversion.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace kiln {

Type toMlirElementType(MLIRContext *ctx, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return Float32Type::get(ctx);
  case DType::F16:
    return Float16Type::get(ctx);
  case DType::BF16:
    return BFloat16Type::get(ctx);
  case DType::F64:
    return Float64Type::get(ctx);
  case DType::I64:
    return IntegerType::get(ctx, 64);
  case DType::I32:
    return IntegerType::get(ctx, 32);
  case DType::I8:
    return IntegerType::get(ctx, 8);
  case DType::U8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case DType::Bool:
    return IntegerType::get(ctx, 1);
  case DType::U16:
    return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case DType::U32:
    return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case DType::U64:
    return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  case DType::I16:
    return IntegerType::get(ctx, 16);
  case DType::F8E4M3FN:
    return Float8E4M3FNType::get(ctx);
  case DType::F8E4M3FNUZ:
    return Float8E4M3FNUZType::get(ctx);
  case DType::F8E5M2:
    return Float8E5M2Type::get(ctx);
  case DType::F8E5M2FNUZ:
    return Float8E5M2FNUZType::get(ctx);
  case DType::I4:
    return IntegerType::get(ctx, 4);
  case DType::U4:
    return IntegerType::get(ctx, 4, IntegerType::Unsigned);
  case DType::I2:
    return IntegerType::get(ctx, 2);
  case DType::U2:
    return IntegerType::get(ctx, 2, IntegerType::Unsigned);
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> fromMlirElementType(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF64())
    return DType::F64;
  if (type.isFloat8E4M3FN())
    return DType::F8E4M3FN;
  if (type.isFloat8E4M3FNUZ())
    return DType::F8E4M3FNUZ;
  if (type.isFloat8E5M2())
    return DType::F8E5M2;
  if (type.isFloat8E5M2FNUZ())
    return DType::F8E5M2FNUZ;
  auto intType = dyn_cast<IntegerType>(type);
  if (!intType)
    return std::nullopt;
  switch (intType.getWidth()) {
  case 1:
    return DType::Bool;
  case 2:
    return intType.isUnsigned() ? DType::U2 : DType::I2;
  case 4:
    return intType.isUnsigned() ? DType::U4 : DType::I4;
  case 8:
    return intType.isUnsigned() ? DType::U8 : DType::I8;
  case 16:
    return intType.isUnsigned() ? DType::U16 : DType::I16;
  case 32:
    return intType.isUnsigned() ? DType::U32 : DType::I32;
  case 64:
    return intType.isUnsigned() ? DType::U64 : DType::I64;
  default:
    return std::nullopt;
  }
}

RankedTensorType toMlirTensorType(MLIRContext *ctx, const Tensor &tensor) {
  return RankedTensorType::get(tensor.shape(),
                               toMlirElementType(ctx, tensor.dtype()));
}

DenseElementsAttr toElementsAttr(MLIRContext *ctx, const Tensor &tensor) {
  RankedTensorType type = toMlirTensorType(ctx, tensor);
  Tensor data = tensor.contiguous();
  if (data.dtype() == DType::Bool) {
    const bool *p = data.data<bool>();
    SmallVector<bool> values(p, p + data.numel());
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  ArrayRef<char> raw(static_cast<const char *>(data.rawData()), data.nbytes());
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

std::optional<Tensor> toTensor(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<DType> dtype = fromMlirElementType(type.getElementType());
  if (!dtype || !type.hasStaticShape())
    return std::nullopt;
  Tensor result = Tensor::empty(*dtype, Shape(type.getShape()));
  int64_t n = result.numel();
  if (n == 0)
    return result;
  if (*dtype == DType::Bool) {
    bool *out = result.data<bool>();
    int64_t i = 0;
    for (bool v : attr.getValues<bool>())
      out[i++] = v;
    return result;
  }
  size_t elemBytes = dtypeSize(*dtype);
  ArrayRef<char> raw;
  bool splat = false;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr)) {
    raw = dense.getRawData();
    splat = dense.isSplat();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    raw = blob->getData();
  } else {
    return std::nullopt;
  }
  char *out = static_cast<char *>(result.rawData());
  if (splat || raw.size() == elemBytes) {
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out + i * elemBytes, raw.data(), elemBytes);
  } else {
    if (raw.size() != n * elemBytes)
      return std::nullopt;
    std::memcpy(out, raw.data(), raw.size());
  }
  if (isSubByteInteger(*dtype)) {
    // MLIR keeps only the low bits of each byte: extend them as the runtime
    // holds sub-byte integers.
    int bits = packedBits(*dtype);
    bool isSigned = *dtype == DType::I4 || *dtype == DType::I2;
    auto *p = reinterpret_cast<uint8_t *>(out);
    for (int64_t i = 0; i < n; ++i) {
      unsigned v = p[i] & ((1u << bits) - 1u);
      if (isSigned && (v & (1u << (bits - 1))))
        v |= ~((1u << bits) - 1u);
      p[i] = static_cast<uint8_t>(v);
    }
  }
  return result;
}

std::optional<AttrValue> toAttrValue(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return AttrValue(int64_t(b.getValue()));
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return AttrValue(int64_t(i.getValue().getSExtValue()));
  if (auto f = dyn_cast<FloatAttr>(attr))
    return AttrValue(f.getValueAsDouble());
  if (auto s = dyn_cast<StringAttr>(attr))
    return AttrValue(s.getValue().str());
  if (isa<UnitAttr>(attr))
    return AttrValue(int64_t(1));
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return AttrValue(std::vector<int64_t>(a.asArrayRef()));
  if (auto a = dyn_cast<DenseI32ArrayAttr>(attr))
    return AttrValue(
        std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end()));
  if (auto a = dyn_cast<DenseF32ArrayAttr>(attr))
    return AttrValue(
        std::vector<double>(a.asArrayRef().begin(), a.asArrayRef().end()));
  if (auto a = dyn_cast<DenseF64ArrayAttr>(attr))
    return AttrValue(std::vector<double>(a.asArrayRef()));
  if (auto t = dyn_cast<TypeAttr>(attr)) {
    Type type = t.getValue();
    if (auto shaped = dyn_cast<ShapedType>(type))
      type = shaped.getElementType();
    if (std::optional<DType> d = fromMlirElementType(type))
      return AttrValue(*d);
    return std::nullopt;
  }
  if (auto e = dyn_cast<ElementsAttr>(attr)) {
    if (std::optional<Tensor> t = toTensor(e))
      return AttrValue(*t);
    return std::nullopt;
  }
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    if (llvm::all_of(array, [](Attribute a) { return isa<IntegerAttr>(a); })) {
      std::vector<int64_t> values;
      for (Attribute a : array)
        values.push_back(cast<IntegerAttr>(a).getValue().getSExtValue());
      return AttrValue(values);
    }
    if (llvm::all_of(array, [](Attribute a) { return isa<FloatAttr>(a); })) {
      std::vector<double> values;
      for (Attribute a : array)
        values.push_back(cast<FloatAttr>(a).getValueAsDouble());
      return AttrValue(values);
    }
  }
  return std::nullopt;
}

Attributes toAttributes(DictionaryAttr attrs) {
  Attributes result;
  if (!attrs)
    return result;
  for (NamedAttribute named : attrs)
    if (std::optional<AttrValue> value = toAttrValue(named.getValue()))
      result.set(named.getName().str(), std::move(*value));
  return result;
}

} // namespace kiln
