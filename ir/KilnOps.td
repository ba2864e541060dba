//===- KilnOps.td - The ops of the kiln dialect --------------*- tablegen -*-===//
//
// This file is the one ODS table of the kiln ops. It includes the op families
// (elementwise, linear algebra / convolution / normalization / reductions,
// shapes / data movement / recurrent), each declaring its ops once, with the
// names, operands and attributes of docs/op-semantics.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "ir/KilnDialect.td"
include "ir/KilnElementwiseOps.td"
include "ir/KilnNNOps.td"
include "ir/KilnDataOps.td"
include "ir/KilnImageOps.td"
include "ir/KilnSignalOps.td"
include "ir/KilnRandomOps.td"
include "ir/KilnFusionOps.td"
include "ir/KilnLibraryOps.td"
include "ir/KilnProgramOps.td"
include "ir/KilnCustomOps.td"

#endif // KILN_OPS_TD
