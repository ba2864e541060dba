//===- TrainingPasses.h - Passes that derive training graphs ----*- C++ -*-===//
//
// This file declares the passes that turn a forward graph with a loss into
// the graphs of a train step (docs/training.md), in the order the training
// pipeline (compiler/TrainingPipeline.cpp) runs them:
//
//   kiln-autodiff          @main (kiln.graph, loss first, parameters tagged
//                          kiln.trainable) becomes the joint graph
//                          (kiln.joint): loss, then one gradient per
//                          parameter, by the ops' gradient rules
//                          (ir/GradientInterface.h)
//   kiln-partition         the joint graph becomes @forward (the loss and
//                          the saved activations) and @backward (the
//                          gradients from them), what to save and what to
//                          recompute chosen by a min-cut
//   kiln-build-optimizer   @optimizer: the parameter update (sgd, momentum,
//                          adamw) as kiln ops, from @backward's gradients
//
// and the names the three graphs use for their values.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_TRAININGPASSES_H
#define KILN_PASSES_TRAININGPASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// Argument attribute of a trainable parameter of a forward graph.
inline constexpr const char *kTrainableAttr = "kiln.trainable";
/// Function attribute of the joint forward + backward graph.
inline constexpr const char *kJointAttr = "kiln.joint";
/// Attribute of the constant 1 that seeds reverse mode (d loss / d loss) in
/// the joint graph: the ops that depend on it are the backward ops.
inline constexpr const char *kGradSeedAttr = "kiln.grad_seed";
/// Result attribute naming the parameter a gradient belongs to.
inline constexpr const char *kGradientOfAttr = "kiln.gradient_of";
/// Function attributes kiln-partition leaves on @forward and @backward.
inline constexpr const char *kSavedBytesAttr = "kiln.saved_bytes";
inline constexpr const char *kRecomputedOpsAttr = "kiln.recomputed_ops";
/// The estimated cost of the recomputed ops (floating-point operations of
/// one step: 2 M N K a matmul, 2 per multiply-add of a convolution, one per
/// element read or written of any other op).
inline constexpr const char *kRecomputeFlopsAttr = "kiln.recompute_flops";
/// The no-recompute plan's saved bytes, which a memory budget is a fraction
/// of.
inline constexpr const char *kSavedBytesNoRecomputeAttr =
    "kiln.saved_bytes_no_recompute";
/// The names of the optimizer's run-time scalars (f32, rank 0).
inline constexpr const char *kLearningRateName = "kiln.lr";
inline constexpr const char *kStepName = "kiln.step";
/// Dynamic loss scaling's state (f32, rank 0), kept by the runtime like an
/// optimizer's: the scale is S0 * 2^exponent (0 at the start, so a
/// weights file without it starts at S0), and the steps since the last
/// change without an overflow.
inline constexpr const char *kLossScaleExponentName =
    "kiln.loss_scale_exponent";
inline constexpr const char *kLossScaleGoodStepsName =
    "kiln.loss_scale_good_steps";
/// Gradient accumulation (@accumulate): the running sum's name suffix
/// ("P.grad.sum") and the graph's run-time scalars (f32, rank 0): the weight
/// of each micro-batch (1 / micro-batches) and whether it is the first (1:
/// the sum starts from this micro-batch's gradient).
inline constexpr const char *kGradSumSuffix = ".sum";
inline constexpr const char *kAccumulateScaleName = "kiln.accumulate_scale";
inline constexpr const char *kAccumulateFirstName = "kiln.accumulate_first";

/// The name of the gradient of parameter `name` ("fc1.weight.grad").
std::string gradientName(llvm::StringRef name);
/// The name of an updated parameter or state tensor ("fc1.weight.next").
std::string nextName(llvm::StringRef name);

/// `kiln-autodiff` (Autodiff.cpp). With `initialLossScale` S0 > 0, dynamic
/// loss scaling: the joint graph takes kLossScaleExponentName, seeds the
/// backward pass with S = S0 * 2^exponent instead of 1 and divides each
/// gradient by S (so gradients are the loss's; f16 intermediate gradients
/// are scaled up past f16's underflow).
std::unique_ptr<mlir::Pass> createAutodiffPass(double initialLossScale = 0);

/// What kiln-partition may recompute in the backward graph.
struct PartitionOptions {
  /// Recompute cheap ops (elementwise, views) where that saves memory;
  /// false saves every forward value the backward graph reads.
  bool recompute = true;
  /// The saved activations' limit, a fraction (0, 1] of what the
  /// no-recompute plan saves (`--memory-budget`, as torch's
  /// activation_memory_budget): below what the cheap recomputations reach,
  /// expensive forward ops (matmuls, convolutions) become
  /// recomputable too, cheapest recompute cost per saved byte first, until
  /// the plan fits (or nothing more can be recomputed).
  double memoryBudget = 1.0;
};
/// `kiln-partition` (PartitionJoint.cpp).
std::unique_ptr<mlir::Pass> createPartitionPass(PartitionOptions options = {});

/// The update rule and hyperparameters of kiln-build-optimizer.
struct OptimizerOptions {
  /// "sgd", "momentum" or "adamw".
  std::string kind = "sgd";
  double momentum = 0.9;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0.0;
  /// Dynamic loss scaling (the joint graph was made with a loss scale,
  /// createAutodiffPass): S0 > 0, and the steps without an overflow after
  /// which the scale doubles. A step whose gradients are not all finite
  /// updates nothing and halves the scale.
  double initialLossScale = 0;
  int64_t lossScaleGrowthInterval = 2000;
};
/// The optimizer state tensors of one parameter, as suffixes of its name
/// (".momentum"; ".m", ".v"), for `kind`.
std::vector<std::string> optimizerStateSuffixes(llvm::StringRef kind);
/// `kiln-build-optimizer` (BuildOptimizer.cpp).
std::unique_ptr<mlir::Pass>
createBuildOptimizerPass(OptimizerOptions options = {});

/// Registers the training passes with MLIR's pass registry (for kiln-opt).
void registerTrainingPasses();

} // namespace kiln

#endif // KILN_PASSES_TRAININGPASSES_H
