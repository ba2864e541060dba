//===- KilnOpBuilder.h - Generic creation of kiln ops ------------*- C++
//-*-===//
//
// This file declares createKilnOp, the one entry point through which the
// tracer creates kiln ops by name: it infers the result types, creates the
// op and verifies it, turning every problem into a diagnostic instead of a
// crash.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_KILNOPBUILDER_H
#define KILN_IR_KILNOPBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/Support/LogicalResult.h"

namespace kiln {

/// Creates the registered op `opName` (e.g. "kiln.add") at the builder's
/// insertion point with `operands` and `attrs`, its result types inferred
/// through InferTypeOpInterface, and verifies it. On failure (unknown or
/// unregistered op, no type inference, inference or verifier errors) the
/// diagnostics are emitted at `loc`, nothing is left in the IR and failure
/// is returned.
mlir::FailureOr<mlir::Operation *>
createKilnOp(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef opName,
             mlir::ValueRange operands,
             llvm::ArrayRef<mlir::NamedAttribute> attrs);

} // namespace kiln

#endif // KILN_IR_KILNOPBUILDER_H
