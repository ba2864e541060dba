//===- KilnOpBuilder.cpp - Generic creation of kiln ops -------------------===//
//
// This file implements createKilnOp: look the op up in the context, infer its
// result types from the operands and the attribute dictionary, create it
// through an OperationState and verify it; erase it again on failure.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOpBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

FailureOr<Operation *> kiln::createKilnOp(OpBuilder &b, Location loc,
                                          StringRef opName, ValueRange operands,
                                          ArrayRef<NamedAttribute> attrs) {
  MLIRContext *context = b.getContext();
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(opName, context);
  if (!name)
    return emitError(loc) << "unknown op '" << opName
                          << "' (not registered in the context)";
  auto *inferType = name->getInterface<InferTypeOpInterface>();
  if (!inferType)
    return emitError(loc) << "op '" << opName
                          << "' does not infer its result types";
  for (auto [i, operand] : llvm::enumerate(operands))
    if (!operand)
      return emitError(loc)
             << "'" << opName << "' op operand #" << i << " is null";

  DictionaryAttr dictionary = DictionaryAttr::get(context, attrs);
  SmallVector<Type> resultTypes;
  if (failed(inferType->inferReturnTypes(context, loc, operands, dictionary,
                                         /*properties=*/nullptr,
                                         /*regions=*/{}, resultTypes)))
    return failure();

  OperationState state(loc, *name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(resultTypes);
  Operation *op = b.create(state);
  if (failed(mlir::verify(op, /*verifyRecursively=*/false))) {
    op->erase();
    return failure();
  }
  return op;
}
