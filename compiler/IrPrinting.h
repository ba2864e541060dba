//===- IrPrinting.h - How kiln prints IR for people -------------*- C++ -*-===//
//
// This file declares printIr, the one way `kiln dump` and `--dump-ir` print
// a module: locations inline (every op names its ONNX node), local scope,
// and large constants elided unless asked for.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IRPRINTING_H
#define KILN_COMPILER_IRPRINTING_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Constants with more elements than this are elided when printed for people.
constexpr int64_t kElidedConstantElements = 16;

/// Prints `op` with its locations inline. Unless `printConstants`, every
/// kiln.constant of more than kElidedConstantElements elements prints as
/// `dense_resource<__elided__>` with a `kiln.elided` attribute summarising
/// it (element count, first values, smallest and largest, an xxh3 hash of
/// its bytes): a resnet50 dump is kilobytes instead of 200 MB, but it cannot
/// be compiled again (`--print-constants` prints the values, which
/// round-trips through kiln-opt).
void printIr(mlir::Operation *op, llvm::raw_ostream &os, bool printConstants);

} // namespace kiln

#endif // KILN_COMPILER_IRPRINTING_H
