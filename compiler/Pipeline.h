//===- Pipeline.h - The compile pipeline, in one place ----------*- C++ -*-===//
//
// This file declares the options of `kiln compile` and the pipeline that
// turns a traced kiln module into a package: Kiln's graph passes in order
// (fold, simplify, CSE, decompose, layout cleanup, fuse), then code
// generation and packaging (codegen/Packager.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINE_H
#define KILN_COMPILER_PIPELINE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"

#include "codegen/Packager.h"
#include "codegen/Target.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/SymbolicDim.h"
#include "passes/Passes.h"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

namespace kiln {

/// What the pipeline tells a progress display (`kiln compile`'s progress
/// line, tools/kiln/ProgressLine.cpp) as it goes. Every member may be empty.
struct CompileProgress {
  /// The number of graphs to compile, once known (1 without graph breaks).
  std::function<void(int count)> graphs;
  /// A stage begins: `graph` names the graph ("main", "graph_1", ...), or
  /// is empty for a stage of the whole model.
  std::function<void(const std::string &graph, const std::string &stage)> stage;
  /// Called before the pipeline writes a KILN_LOGS artifact to stderr, so
  /// that the display can end its line first.
  std::function<void()> beforeLog;

  void enter(const std::string &graph, const std::string &what) const {
    if (stage)
      stage(graph, what);
  }
  void pauseForLog() const {
    if (beforeLog)
      beforeLog();
  }
};

/// Options of `kiln compile`.
struct CompileOptions {
  /// Code generation target: a name of the target registry
  /// (targets/TargetRegistry.h).
  std::string target = "cpu";
  /// "embed" (weights in weights.bin) or "external" (initializers stored as
  /// ONNX external data stay there; see codegen/Packager.cpp).
  std::string weights = "embed";
  /// Sizes of named dynamic dimensions (`--dim NAME=SIZE`), applied when
  /// tracing.
  std::map<std::string, int64_t> dimSizes;
  /// Ranges of named dynamic dimensions (`--dim NAME=LO..HI`): the package
  /// serves every size in them (compiler/SizeRangeCompile.h); a dynamic
  /// dimension with neither a size nor a range gets [1, kDefaultSizeMax].
  std::map<std::string, SizeSymbol> dimRanges;
  /// Host C++ compiler (empty: $KILN_CXX or the configured compiler).
  std::string cxx;
  /// x86-64 level of CPU kernels (`--cpu-isa`; empty: the host's).
  std::string cpuIsa;
  /// The package folder.
  std::string outputDir;
  /// The model file (for messages and the manifest).
  std::string modelPath;
  /// `--name`: the package's name, a C identifier (lib<name>.so, <name>.h,
  /// <name>_run; codegen/PackageNames.h); empty: from the model file's
  /// stem.
  std::string packageName;
  /// Seconds spent tracing (for the manifest).
  double traceSeconds = 0;
  /// `--fullgraph`: a graph break is an error listing every break.
  bool fullgraph = false;
  /// `--dump-ir DIR`: the IR after each stage, one file per stage and graph
  /// (`00-traced.mlir`, `01-planned.mlir`, `02-optimized.<graph>.mlir`,
  /// `03-fused.<graph>.mlir`, `04-lowered.<graph>.mlir`, and for a package
  /// for ranges of sizes `05-sized.main.mlir`, the lowered bound graph with
  /// its symbolic sizes); empty: none.
  std::string dumpIrDir;
  /// `--print-constants`: --dump-ir prints every constant's values instead
  /// of eliding the large ones (compiler/IrPrinting.h).
  bool printConstants = false;
  /// `--precision bf16|f16`: kiln-autocast runs on the traced graphs
  /// (passes/Autocast.cpp), with these options.
  bool autocastEnabled = false;
  AutocastOptions autocast;
  /// Artifacts printed to stderr during compile (KILN_LOGS, parsed by
  /// tools/kiln/KilnLogs.cpp): any of "graph_breaks", "fusion",
  /// "output_code".
  std::set<std::string> logs;
  /// Notified of the stages (for a progress line).
  CompileProgress progress;
};

/// Writes `op` to `<options.dumpIrDir>/<file>` (`--dump-ir`; nothing
/// without it); a diagnostic on failure.
mlir::LogicalResult dumpIr(mlir::Operation *op, const CompileOptions &options,
                           const std::string &file);

/// KILN_LOGS=graph_breaks: the graph-break report of a planned `module`
/// for `target`, to stderr.
void logGraphBreaks(mlir::ModuleOp module, const std::string &target);

/// KILN_LOGS=fusion: each kernel of each fused graph of `module` (the
/// functions tagged `kiln.graph`) with the ONNX nodes in it, to stderr.
void logFusedGraphs(mlir::ModuleOp module);

/// True when every graph input has a static shape (checkStaticShapes would
/// pass), without diagnostics.
bool hasStaticInputs(mlir::ModuleOp module);

/// Runs kiln-autocast with `options` on each function of `module` tagged
/// `kiln.graph` (`--precision bf16|f16`, before graph-break planning).
mlir::LogicalResult applyAutocast(mlir::ModuleOp module,
                                  const AutocastOptions &options);

/// How far runGraphPasses goes.
enum class PipelineStage {
  Optimized, ///< after the graph passes, before fusion.
  Fused,     ///< after fusion.
};

/// Checks that every graph input has a static shape. A dynamic dimension is
/// an error naming the input, the dimension's name and `--dim NAME=SIZE`.
mlir::LogicalResult checkStaticShapes(mlir::ModuleOp module);

/// Runs Kiln's graph passes up to `stage` on each function of `module`
/// tagged `kiln.graph` (a program's @main is glue and is left alone), with
/// `target`'s layout passes (Target::addLayoutPasses) when one is given;
/// `seconds` (optional) receives the time spent.
mlir::LogicalResult runGraphPasses(mlir::ModuleOp module, PipelineStage stage,
                                   const Target *target = nullptr,
                                   double *seconds = nullptr);

/// Runs `target`'s lowering passes, then kiln-mark-load-time and
/// kiln-mark-in-place, on each fused graph of `module` (after runGraphPasses
/// up to Fused).
mlir::LogicalResult lowerGraphs(mlir::ModuleOp module, const Target &target);

/// Splits `module`'s @main at its graph breaks for `target`
/// (kiln-plan-graph-breaks): afterwards @main is either still one graph
/// (tagged `kiln.graph`: no breaks) or a program (tagged `kiln.program`).
mlir::LogicalResult planGraphBreaks(mlir::ModuleOp module,
                                    const std::string &target);

/// True when `module` was planned into a program (it has graph breaks).
bool isProgramModule(mlir::ModuleOp module);

/// Steps 1-3 of compileGraph: the graph passes, fusion and the target's
/// lowering of the graph of `module` (after this the IR says what runs).
mlir::LogicalResult lowerGraph(mlir::ModuleOp module,
                               const CompileOptions &options,
                               const std::string &graph);

/// Steps 4-9 of compileGraph on a graph lowerGraph lowered: kernels, memory
/// plan, wrapper, weights, the build and the manifest; `passSeconds` is
/// the time the passes took (for the manifest).
mlir::LogicalResult
emitGraphPackage(mlir::ModuleOp module, const CompileOptions &options,
                 const std::string &graph, const std::string &outputDir,
                 double passSeconds, StepCounts *counts = nullptr,
                 std::map<std::string, int64_t> *arenaOffsets = nullptr);

/// Compiles one graph (a module whose one function is tagged `kiln.graph`):
/// the graph passes up to fusion, then the package in `outputDir`. `graph`
/// names it in IR dumps and logs ("main" for a model without breaks);
/// `counts` (optional) receives the package's step counts, `arenaOffsets`
/// (optional) the offset of each value it hands over in the arena, by name
/// (kArenaValueAttr, codegen/MemoryPlanner.h).
mlir::LogicalResult
compileGraph(mlir::ModuleOp module, const CompileOptions &options,
             const std::string &graph, const std::string &outputDir,
             StepCounts *counts = nullptr,
             std::map<std::string, int64_t> *arenaOffsets = nullptr);

/// The whole pipeline: static-shape check, graph-break planning (an error
/// under --fullgraph when anything breaks), then for each graph the passes
/// up to fusion, kernels, memory plan, wrapper, weights, manifest and
/// lib<name>.so; a program package around them when there are breaks
/// (compiler/ProgramPackager.h). Errors are MLIR diagnostics naming the
/// node, file or flag.
mlir::LogicalResult runCompilePipeline(mlir::ModuleOp module,
                                       const CompileOptions &options);

/// A module holding a copy of `graph` and the `kiln.*` attributes of
/// `module`: what compileGraph takes for one graph of a program or a
/// training package.
mlir::OwningOpRef<mlir::ModuleOp> extractGraph(mlir::ModuleOp module,
                                               mlir::func::FuncOp graph);

} // namespace kiln

#endif // KILN_COMPILER_PIPELINE_H
