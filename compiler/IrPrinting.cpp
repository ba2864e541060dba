//===- IrPrinting.cpp - How kiln prints IR for people ---------------------===//
//
// This file implements printIr (IrPrinting.h). Elision works on a clone of
// the op (attributes are shared, so the clone is cheap): each large
// constant gets a `kiln.elided` summary attribute, then MLIR's printer elides
// the values themselves (OpPrintingFlags::elideLargeElementsAttrs).
//
//===----------------------------------------------------------------------===//

#include "compiler/IrPrinting.h"

#include "ir/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <memory>

using namespace mlir;

namespace kiln {

namespace {

/// "9408 values, first [0.0127, -0.0412, 0.0033, 0.0291], min -0.312,
/// max 0.288, xxh3 0x5c0ffee..." for a dense constant; the element count
/// alone for other ElementsAttrs (resources, external data).
std::string summarize(ElementsAttr value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  int64_t n = value.getNumElements();
  os << n << " values";
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return s;
  Type e = dense.getElementType();
  auto number = [&](int64_t i) -> std::optional<double> {
    if (isa<FloatType>(e))
      return (*(dense.value_begin<APFloat>() + i)).convertToDouble();
    if (auto it = dyn_cast<IntegerType>(e))
      return it.isUnsigned() || it.getWidth() == 1
                 ? double((*(dense.value_begin<APInt>() + i)).getZExtValue())
                 : double((*(dense.value_begin<APInt>() + i)).getSExtValue());
    return std::nullopt;
  };
  if (number(0)) {
    os << ", first [";
    for (int64_t i = 0; i < std::min<int64_t>(n, 4); ++i)
      os << (i ? ", " : "") << llvm::format("%.6g", *number(i));
    os << "]";
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      double v = *number(i);
      lo = std::fmin(lo, v);
      hi = std::fmax(hi, v);
    }
    os << ", min " << llvm::format("%.6g", lo) << ", max "
       << llvm::format("%.6g", hi);
  }
  os << ", xxh3 0x" << llvm::utohexstr(llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
                    reinterpret_cast<const uint8_t *>(dense.getRawData().data()),
                    dense.getRawData().size())));
  return s;
}

} // namespace

void printIr(Operation *op, llvm::raw_ostream &os, bool printConstants) {
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  flags.useLocalScope();
  if (printConstants) {
    op->print(os, flags);
    return;
  }
  std::unique_ptr<Operation, void (*)(Operation *)> copy(
      op->clone(), [](Operation *o) { o->erase(); });
  copy->walk([&](ConstantOp constant) {
    ElementsAttr value = constant.getValue();
    if (value.getNumElements() > kElidedConstantElements &&
        !(isa<DenseElementsAttr>(value) &&
          cast<DenseElementsAttr>(value).isSplat()))
      constant->setAttr("kiln.elided",
                        StringAttr::get(op->getContext(), summarize(value)));
  });
  flags.elideLargeElementsAttrs(kElidedConstantElements);
  copy->print(os, flags);
}

} // namespace kiln
