//===- KilnDialect.cpp - The kiln dialect ---------------------------------===//
//
// This file implements the kiln dialect: registration of its ops, the
// materialization of constants (folders produce ElementsAttr values, which
// become kiln.constant ops) and the inliner interface (every kiln op is pure
// and may be inlined).
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "ir/GradientInterface.h"

#include "mlir/Transforms/InliningUtils.h"

#include "ir/KilnDialect.cpp.inc"

using namespace mlir;

namespace {
/// Kiln ops have no regions and no side effects: inlining them is legal.
struct KilnInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void kiln::KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/KilnOps.cpp.inc"
      >();
  addInterfaces<KilnInlinerInterface>();
  // The gradient rules (ir/GradientRules.cpp) of the differentiable ops.
  registerGradientRules(getContext());
}

Operation *kiln::KilnDialect::materializeConstant(OpBuilder &builder,
                                                  Attribute value, Type type,
                                                  Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}
