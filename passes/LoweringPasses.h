//===- LoweringPasses.h - What the back half of the pipeline marks -*- C++ -*-===//
//
// This file declares the IR contract between the target lowering passes
// (targets/<name>/Lower*.cpp), the load-time pass (MarkLoadTimeSteps.cpp) and
// the code emitters. After lowering, every top-level op of a graph says how it
// runs, and the emitters decide nothing:
//
//   kiln.constant            a weight (weights.bin or bound at load)
//   kiln.fusion              a generated kernel
//   kiln.library_call        a vendor-library call, its folds in the op
//   op {kiln.kernel = "N"}   a generated kernel named N for a single op
//   op {kiln.reference = P}  the runtime's reference kernel, run on P
//                            ("cpu": in place; "host": a round trip
//                            through host memory from a device target)
//   ... {kiln.load_time}     runs once, when the model is created
//   kiln.fusion {kiln.in_place = array<i64: R, O>}
//                            stores result R over operand O's buffer
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_LOWERINGPASSES_H
#define KILN_PASSES_LOWERINGPASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace kiln {

/// Unit attribute: the step reads only weights and runs once, in
/// kiln_model_create, into memory the model owns.
constexpr llvm::StringLiteral kLoadTimeAttr = "kiln.load_time";
/// String attribute: the generated kernel of a single (non-fusion) op.
constexpr llvm::StringLiteral kKernelAttr = "kiln.kernel";
/// String attribute: the step is a call of the runtime's reference kernel,
/// run on the named place ("cpu", "host"), or of a custom op's CUDA kernel
/// on the device buffers ("device", kiln.custom_call only).
constexpr llvm::StringLiteral kReferenceAttr = "kiln.reference";

/// Unit attribute: the op (a reshape, flatten, squeeze or unsqueeze) is its
/// operand's bytes under another shape: no step runs, its result lives in
/// the operand's buffer (the memory planner extends that buffer's life).
constexpr llvm::StringLiteral kAliasAttr = "kiln.alias";

/// Dense i64 array attribute (R, O) on a kiln.fusion, or on a
/// kiln.library_call with O its residual: its result R is stored over the
/// buffer of its operand O, which dies there (kiln-mark-in-place).
constexpr llvm::StringLiteral kInPlaceAttr = "kiln.in_place";

/// On a graph function's argument or result: the value is handed from one
/// graph to the next in the scratch arena the caller shares between them
/// (a training package's saved activations; codegen/MemoryPlanner.h). A
/// unit attribute lets the memory planner place it; an i64 attribute pins
/// it at that byte offset. Such values are not in the package's signature.
constexpr llvm::StringLiteral kArenaValueAttr = "kiln.arena_value";

/// True for names of the attributes above, and of the symbolic sizes of a
/// graph compiled for ranges of sizes (codegen/SymbolicShapes.h: kiln.sym_*)
/// (the wrapper does not pass them to reference kernels).
inline bool isLoweringAttr(llvm::StringRef name) {
  return name == kLoadTimeAttr || name == kKernelAttr ||
         name == kReferenceAttr || name == kAliasAttr || name == kInPlaceAttr ||
         name.starts_with("kiln.sym_");
}

/// Whether `op` may become an alias of its operand (kAliasAttr): a view
/// that keeps the bytes in order (reshape, flatten, squeeze, unsqueeze). A
/// view that is a graph output costs a copy into the caller's buffer at the
/// return, or nothing when the memory planner can compute its operand into
/// that buffer (MemoryPlanner.cpp).
bool isAliasingView(mlir::Operation *op);

/// The top-level ops of `graph` whose operands are all weights (weight
/// arguments, top-level constants) or results of such ops, and whose results
/// are not graph outputs (outputs are the caller's, written on every run):
/// the steps that can run once, at load.
llvm::DenseSet<mlir::Operation *> collectLoadTimeOps(mlir::func::FuncOp graph);

/// True when `v` is a weight or computed from weights only, in `graph`
/// (`loadTime` from collectLoadTimeOps): it lives as long as the model.
bool isPersistentValue(mlir::Value v,
                       const llvm::DenseSet<mlir::Operation *> &loadTime);

/// kiln-mark-load-time: tags the ops of collectLoadTimeOps with
/// kiln.load_time.
std::unique_ptr<mlir::Pass> createMarkLoadTimeStepsPass();

/// kiln-mark-in-place: tags the fusions that may store a result over an
/// operand that dies there with kiln.in_place (MarkInPlace.cpp says when),
/// and the library calls of `residualCallees` (callee names: libraries that
/// add a residual found in their destination) whose residual dies there.
std::unique_ptr<mlir::Pass> createMarkInPlacePass();
std::unique_ptr<mlir::Pass>
createMarkInPlacePass(llvm::ArrayRef<std::string> residualCallees);

/// The (result, operand) pair of `op`'s kiln.in_place, if it has one.
std::optional<std::pair<unsigned, unsigned>> inPlacePair(mlir::Operation *op);

} // namespace kiln

#endif // KILN_PASSES_LOWERINGPASSES_H
