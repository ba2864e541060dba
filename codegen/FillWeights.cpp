//===- FillWeights.cpp - Constants a package stores as one element --------===//
//
// This file implements fillWeightElement: whether a weight of a compiled
// graph is a splat constant, and its element's bytes. A DenseElementsAttr
// knows whether it is a splat (MLIR stores a uniform buffer as one element
// when the attribute is created, so the tracer's folded ConstantOfShape is
// one); a dense_resource is scanned, stopping at the first element that
// differs from the first, so a real weight costs a few comparisons.
//
//===----------------------------------------------------------------------===//

#include "codegen/FillWeights.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Operation.h"

#include <cstring>

using namespace mlir;

namespace kiln {

std::optional<std::vector<uint8_t>> fillWeightElement(const SignatureEntry &w) {
  if (!w.constantOp || w.bytes < kMinFillWeightBytes)
    return std::nullopt;
  auto attr = w.constantOp->getAttrOfType<ElementsAttr>("value");
  if (!attr)
    return std::nullopt;
  size_t elementBytes = dtypeSize(w.dtype);
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr)) {
    if (!dense.isSplat())
      return std::nullopt;
    if (w.dtype == DType::Bool)
      return std::vector<uint8_t>{dense.getSplatValue<bool>() ? uint8_t(1)
                                                              : uint8_t(0)};
    ArrayRef<char> raw = dense.getRawData();
    if (raw.size() < elementBytes)
      return std::nullopt;
    return std::vector<uint8_t>(raw.begin(), raw.begin() + elementBytes);
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  ArrayRef<char> raw = blob->getData();
  if (raw.size() != static_cast<size_t>(w.bytes) || raw.size() < elementBytes ||
      (w.dtype == DType::Bool && static_cast<uint8_t>(raw[0]) > 1))
    return std::nullopt;
  for (size_t at = elementBytes; at < raw.size(); at += elementBytes)
    if (std::memcmp(raw.data(), raw.data() + at, elementBytes) != 0)
      return std::nullopt;
  return std::vector<uint8_t>(raw.begin(), raw.begin() + elementBytes);
}

} // namespace kiln
