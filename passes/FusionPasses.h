//===- FusionPasses.h - Kernel fusion (kiln-fuse) ---------------*- C++ -*-===//
//
// This file declares the fusion pass, which groups elementwise ops,
// reductions and views into kiln.fusion regions (one generated kernel
// each), and the statistics `kiln dump --stage fused` prints about a fused
// graph.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_FUSIONPASSES_H
#define KILN_PASSES_FUSIONPASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// What a target changes in kiln-fuse's grouping (Target::fuseOptions).
struct FuseOptions {
  /// Keeps an elementwise group with a transcendental op (ODS trait
  /// Kiln_Transcendental) out of a consumer that reads its result broadcast
  /// to at least 8 times its size, which would compute it per element (the
  /// CPU target: a C++ kernel does not hoist it; pass option
  /// `isolate-broadcast-transcendentals`).
  bool isolateBroadcastTranscendentals = false;
};

/// Creates the `kiln-fuse` pass (on func.func): greedy producer-consumer
/// fusion of elementwise ops, reductions and views into kiln.fusion regions,
/// named `k<N>_<op>` in program order. See FuseOps.cpp.
std::unique_ptr<mlir::Pass> createFuseOpsPass(const FuseOptions &options = {});

/// Registers `kiln-fuse` with MLIR's pass registry (registerKilnPasses
/// calls it, or registers createFuseOpsPass itself).
void registerFusionPasses();

/// What a fused graph is made of, for `kiln dump --stage fused` and
/// `kiln compile`.
struct FusionSummary {
  /// kiln.fusion regions (generated kernels) and, after a target's
  /// lowering, ops it prints a kernel for (kiln.kernel); how many of the
  /// regions are reductions.
  int kernels = 0;
  int reductionKernels = 0;
  /// Ops inside the regions, constants excluded.
  int fusedOps = 0;
  /// GEMMs and convolutions outside regions (library calls, or after
  /// lowering kiln.library_call).
  int libraryOps = 0;
  /// Views outside regions (reshape and friends, kiln.alias after lowering:
  /// no kernel).
  int viewOps = 0;
  /// Other kiln ops outside regions (the runtime's reference kernels),
  /// constants excluded; `fallbackNames` lists their op names once each.
  int fallbackOps = 0;
  std::vector<std::string> fallbackNames;
  /// Host ops that prepare weights once, at load (kiln.load_time): not
  /// part of a run.
  int loadTimeHostOps = 0;
};

/// The number of kiln.fusion regions at the top level of `func`.
int countKernels(mlir::func::FuncOp func);

/// Counts the kernels, library calls, views and fallback ops of `func`.
FusionSummary summarizeFusion(mlir::func::FuncOp func);

/// The summary as one line, e.g.
/// "12 kernels (3 reduction, 40 ops fused), 4 library calls, 2 views,
/// 1 fallback op (gather)".
std::string formatFusionSummary(const FusionSummary &summary);

} // namespace kiln

#endif // KILN_PASSES_FUSIONPASSES_H
