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

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <map>
#include <string>

namespace kiln {

/// Options of `kiln compile`.
struct CompileOptions {
  /// Code generation target; "cpu" only for now.
  std::string target = "cpu";
  /// "embed" (weights in weights.bin) or "external" (initializers stored as
  /// ONNX external data stay there; see codegen/Packager.cpp).
  std::string weights = "embed";
  /// Sizes of named dynamic dimensions (`--dim NAME=SIZE`), applied when
  /// tracing.
  std::map<std::string, int64_t> dimSizes;
  /// Host C++ compiler (empty: $KILN_CXX or the configured compiler).
  std::string cxx;
  /// x86-64 level of CPU kernels (`--cpu-isa`; empty: the host's).
  std::string cpuIsa;
  /// The package folder.
  std::string outputDir;
  /// The model file (for messages and the manifest).
  std::string modelPath;
  /// Seconds spent tracing (for the manifest).
  double traceSeconds = 0;
};

/// How far runGraphPasses goes.
enum class PipelineStage {
  Optimized, ///< after the graph passes, before fusion.
  Fused,     ///< after fusion.
};

/// Checks that every graph input has a static shape. A dynamic dimension is
/// an error naming the input, the dimension's name and `--dim NAME=SIZE`.
mlir::LogicalResult checkStaticShapes(mlir::ModuleOp module);

/// Runs Kiln's graph passes on `module` up to `stage`; `seconds` (optional)
/// receives the time spent.
mlir::LogicalResult runGraphPasses(mlir::ModuleOp module, PipelineStage stage,
                                   double *seconds = nullptr);

/// The whole pipeline: static-shape check, graph passes up to fusion, then
/// kernels, memory plan, wrapper, weights, manifest and model.so in
/// `options.outputDir`. Errors are MLIR diagnostics naming the node, file or
/// flag.
mlir::LogicalResult runCompilePipeline(mlir::ModuleOp module,
                                       const CompileOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_PIPELINE_H
