//===- TrainingPipeline.h - Compiling a train step --------------*- C++ -*-===//
//
// This file declares the training pipeline of `kiln compile --train`
// (docs/training.md): the traced forward graph with its loss is
// differentiated (kiln-autodiff), split into a forward and a backward graph
// (kiln-partition), given an optimizer graph (kiln-build-optimizer), and the
// three are compiled by the ordinary pipeline (compileGraph) into one
// training package that kiln::Trainer runs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRAININGPIPELINE_H
#define KILN_COMPILER_TRAININGPIPELINE_H

#include "compiler/Pipeline.h"
#include "passes/TrainingPasses.h"

#include "kiln/runtime/Tensor.h"

#include <map>
#include <string>

namespace kiln {

/// Options of `kiln compile --train`.
struct TrainOptions {
  OptimizerOptions optimizer;
  /// The learning rate the package starts with (`--lr`).
  double lr = 0.01;
  /// Recompute cheap forward ops in the backward graph (`--no-recompute`
  /// turns it off).
  bool recompute = true;
  /// `--memory-budget` (PartitionOptions::memoryBudget).
  double memoryBudget = 1.0;
};

/// How far deriveTrainingGraphs goes (`kiln dump --train --stage`).
enum class TrainingStage {
  /// The joint forward + backward graph.
  Joint,
  /// @forward and @backward.
  Partitioned,
  /// @forward, @backward and @optimizer.
  Complete,
};

/// Derives the graphs of a train step from the traced `module` in place:
/// checks that it compiles whole for `target` (a graph break is an error
/// naming the node and the reason), cleans it up (fold, simplify, CSE),
/// differentiates, partitions and builds the optimizer, stopping after
/// `stage`. Diagnostics name the model nodes.
mlir::LogicalResult deriveTrainingGraphs(mlir::ModuleOp module,
                                         const std::string &target,
                                         const TrainOptions &train,
                                         TrainingStage stage);

/// `kiln compile --train`: deriveTrainingGraphs, then each graph compiled
/// into graphs/<name>/ of a training package in `options.outputDir` with
/// `initialValues` (the trainable parameters' data) in
/// weights.safetensors and its manifest (kind "training"). Nothing is left
/// in the output folder on failure.
mlir::LogicalResult
runTrainingPipeline(mlir::ModuleOp module, const CompileOptions &options,
                    const TrainOptions &train,
                    const std::map<std::string, Tensor> &initialValues);

} // namespace kiln

#endif // KILN_COMPILER_TRAININGPIPELINE_H
