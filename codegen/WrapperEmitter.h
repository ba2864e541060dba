//===- WrapperEmitter.h - The generated host wrapper ------------*- C++ -*-===//
//
// This file declares the emitter of wrapper.cpp, which implements every
// function of the C ABI (runtime/include/kiln/runtime/ModelABI.h) for one
// lowered graph and runs its steps in program order without an interpreter.
// The skeleton (signature tables, create/run/destroy, the step loop) is
// shared; each step is printed by the target (codegen/Target.h) from what
// the IR says it is (passes/LoweringPasses.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_WRAPPEREMITTER_H
#define KILN_CODEGEN_WRAPPEREMITTER_H

#include "codegen/MemoryPlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln {

/// How the wrapper runs one top-level op of a lowered graph.
enum class StepKind {
  Constant,  ///< nothing to do: the value is a weight.
  Kernel,    ///< a generated kernel (kiln.fusion, or an op tagged
             ///< kiln.kernel).
  Library,   ///< a kiln.library_call.
  Reference, ///< the runtime's reference kernel (tagged kiln.reference).
  Alias,     ///< nothing to do: a view of its operand's buffer (kiln.alias).
  Return,    ///< copies of outputs that are not written in place.
};

/// The kind of a top-level op of a lowered graph.
StepKind classifyStep(mlir::Operation *op);

/// The C type of a dtype in generated kernels ("float", "kiln_f16", ...).
const char *kernelCType(DType dtype);

/// A C++ identifier made from `name` (other characters become '_').
std::string toIdentifier(llvm::StringRef name);

class GraphCodegen;

/// Emits wrapper.cpp for the lowered `graph`, its steps printed by
/// `codegen`, its symbols named by codegen.names(). Fails with a diagnostic
/// when an attribute of a reference step cannot be rebuilt or a step is of
/// a kind the target does not print.
mlir::FailureOr<std::string> emitWrapper(mlir::func::FuncOp graph,
                                         const MemoryPlan &plan,
                                         GraphCodegen &codegen);

// Formatting shared by the wrapper and package header emitters.

/// The C type of a dtype in public headers (f16/bf16 as uint16_t bits).
const char *publicCType(DType dtype);
/// `s` with comment terminators and newlines made harmless.
std::string commentSafe(llvm::StringRef s);
/// "{2, 3}".
std::string formatShape(llvm::ArrayRef<int64_t> shape);
/// "f32[2, 3]".
std::string typeString(DType dtype, llvm::ArrayRef<int64_t> shape);

} // namespace kiln

#endif // KILN_CODEGEN_WRAPPEREMITTER_H
