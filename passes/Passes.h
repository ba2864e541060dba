//===- Passes.h - Kiln's graph passes --------------------------*- C++ -*-===//
//
// This file declares the constructors of Kiln's passes over the kiln dialect
// and registerKilnPasses(), which makes every one of them available to
// kiln-opt under its command-line name. Each pass works on one func.func and
// leaves the ops inside kiln.fusion regions alone.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringRef.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace kiln {

/// `kiln-fold-constants`: ops whose operands are all kiln.constant become
/// constants computed by the runtime's kernels (FoldConstants.cpp).
std::unique_ptr<mlir::Pass> createFoldConstantsPass();
/// `kiln-simplify`: algebraic and view simplifications (Simplify.cpp).
std::unique_ptr<mlir::Pass> createSimplifyPass();
/// `kiln-decompose`: composites (softmax, norms, gelu) into the primitives
/// the kernel generator fuses (Decompose.cpp).
std::unique_ptr<mlir::Pass> createDecomposePass();
/// `kiln-layout-cleanup`: cancels transposes through elementwise chains
/// (LayoutCleanup.cpp).
std::unique_ptr<mlir::Pass> createLayoutCleanupPass();
/// `kiln-split-reductions`: reductions with few outputs and many inputs per
/// output in two stages (SplitReductions.cpp).
std::unique_ptr<mlir::Pass> createSplitReductionsPass();

/// `kiln-split-recurrent`: a kiln.gru or kiln.lstm of static shapes as its
/// input projection (one matmul over all steps) and a kiln.gru_recurrence or
/// kiln.lstm_recurrence (SplitRecurrent.cpp; a layout pass of the CPU and
/// CUDA targets); with `f32Only` (the CPU), only f32 ones.
std::unique_ptr<mlir::Pass> createSplitRecurrentPass(bool f32Only = false);

/// `kiln-fold-embedding-projection`: a matmul (and bias add) of rows gathered
/// from a weight table by a weight as a gather from the projected table,
/// computed once, at load (FoldEmbeddingProjection.cpp).
std::unique_ptr<mlir::Pass> createFoldEmbeddingProjectionPass();

/// `kiln-channels-last`: 2-D f16/bf16 convolutions (f32 too with
/// `includeF32`) in NHWC, the transposes back to NCHW moved down the graph
/// until they cancel (ChannelsLast.cpp; the CUDA target's layout pass).
std::unique_ptr<mlir::Pass> createChannelsLastPass();
std::unique_ptr<mlir::Pass> createChannelsLastPass(bool includeF32);
/// A row of kiln-autocast's policy (Autocast.cpp): compute in the low
/// precision, in f32, or in the precision of the operands.
enum class PrecisionClass { Low, F32, Follow };
/// "low", "f32" or "follow"; nullopt otherwise.
std::optional<PrecisionClass> parsePrecisionClass(llvm::StringRef name);
/// The policy table: the class of `op` (a kiln op) before overrides.
PrecisionClass precisionClassOf(mlir::Operation *op);
/// Options of kiln-autocast.
struct AutocastOptions {
  /// "bf16" or "f16".
  std::string precision = "bf16";
  /// Op name (without `kiln.`) -> its class, replacing the table's.
  std::map<std::string, PrecisionClass> overrides;
  /// The graph's f32 inputs (not weights) and results become bf16/f16 too
  /// (`--io-precision low`: the package's signature changes).
  bool lowInterface = false;
};
/// `kiln-autocast`: mixed precision, GEMMs and convolutions in bf16/f16,
/// statistics in f32 (Autocast.cpp).
std::unique_ptr<mlir::Pass> createAutocastPass(const AutocastOptions &options);
std::unique_ptr<mlir::Pass> createAutocastPass();

/// Registers every Kiln pass with MLIR's pass registry (for kiln-opt).
void registerKilnPasses();

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
