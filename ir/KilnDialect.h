//===- KilnDialect.h - The kiln MLIR dialect ---------------------*- C++
//-*-===//
//
// This file declares the kiln dialect (KilnDialect), generated from
// KilnDialect.td. Include "ir/KilnOps.h" for the ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_KILNDIALECT_H
#define KILN_IR_KILNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/KilnDialect.h.inc"

#endif // KILN_IR_KILNDIALECT_H
