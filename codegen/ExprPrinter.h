//===- ExprPrinter.h - Scalar ops as C expressions --------------*- C++ -*-===//
//
// This file declares the one expression printer that the C++ printer and the
// CUDA printer share: it turns one scalar op of the kernel IR into a C
// expression with exactly the reference runtime's semantics
// (docs/op-semantics.md), calling the small helpers of the kernel prelude
// (kiln_max, kiln_idiv, kiln_sigmoid, kiln_round_f16, ...). Values of f16 and
// bf16 type are computed in float and rounded once per op, as the runtime's
// kernels round on every store.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_EXPRPRINTER_H
#define KILN_CODEGEN_EXPRPRINTER_H

#include "codegen/KernelIR.h"

#include <string>

namespace kiln {
namespace codegen {

/// True when the kiln op `op` is a scalar op of the kernel IR: an op of the
/// elementwise family (trait Kiln_Elementwise: binary, comparisons, unary,
/// activations, cast, where). Each has an entry in printScalarOp
/// (test/unit/compiler/OpCompletenessTest.cpp checks).
bool isScalarOp(mlir::OperationName op);

/// True when printScalarOp has an entry for `op`.
bool hasScalarPrinterEntry(mlir::OperationName op);

/// The C type temps of `t` are computed in: float for f32/f16/bf16, double,
/// int64_t, int32_t, int8_t, uint8_t, bool.
std::string computeCType(ScalarType t);
/// The C type buffers of `t` are stored in: as computeCType, but kiln_f16
/// and kiln_bf16 for the half types.
std::string storageCType(ScalarType t);

/// A literal of type `t` (computed type), e.g. `0.5f`, `INFINITY`, `(int8_t)3`.
std::string printLiteral(ScalarType t, double floatValue, int64_t intValue);

/// The C expression of the scalar op `op` (an elementwise kiln op, e.g.
/// kiln::AddOp) whose arguments are the C expressions `args` of types
/// `argTypes`; the result has computeCType(resultType) and, for the half
/// types, is already rounded to that type.
std::string printScalarOp(mlir::OperationName op, ScalarType resultType,
                          llvm::ArrayRef<ScalarType> argTypes,
                          llvm::ArrayRef<std::string> args,
                          const ScalarAttrs &attrs);

/// printScalarOp's expression before its rounding to `resultType`: for the
/// half types, the float value that the rounding narrows.
std::string printScalarOpUnrounded(mlir::OperationName op,
                                   ScalarType resultType,
                                   llvm::ArrayRef<ScalarType> argTypes,
                                   llvm::ArrayRef<std::string> args,
                                   const ScalarAttrs &attrs);

/// One step of an argmax/argmin walk along an axis, for both printers: with
/// the candidate `v` at position `r` and the best so far `kiln_best` at
/// `kiln_arg` (both of the computed type), moves the best to `v` when it
/// wins: strictly larger (smaller), or equal with `selectLast`; for floats
/// the reference's rule that a NaN beats any number and a NaN best stays
/// (or, with `selectLast`, moves to a later NaN). Each line starts with
/// `indent`.
std::string printArgReduceStep(bool isMax, bool selectLast, bool isFloat,
                               llvm::StringRef indent);

/// Rounds a float expression to the half type `t` (identity for other types).
std::string roundTo(ScalarType t, const std::string &expr);

/// The scalar helpers printScalarOp calls (kiln_f16/kiln_bf16 arithmetic,
/// kiln_max, kiln_idiv, kiln_sigmoid, ...), shared by every target's kernel
/// prelude; `fnQualifier` replaces KILN_FN ("static inline",
/// "__device__ __forceinline__") and `hostDeviceQualifier` KILN_HD. The
/// target's prelude defines kiln_expf, kiln_erff, kiln_float_bits and the
/// f16/bf16 conversions before it.
std::string scalarHelperPrelude(llvm::StringRef fnQualifier,
                                llvm::StringRef hostDeviceQualifier);

/// `text` with KILN_FN and KILN_HD replaced by the target's qualifiers.
std::string markQualifiers(llvm::StringRef text, llvm::StringRef fnQualifier,
                           llvm::StringRef hostDeviceQualifier);

} // namespace codegen
} // namespace kiln

#endif // KILN_CODEGEN_EXPRPRINTER_H
