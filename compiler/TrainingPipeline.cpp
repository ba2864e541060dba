//===- TrainingPipeline.cpp - Compiling a train step ----------------------===//
//
// This file implements the training pipeline of `kiln compile --train` as
// one readable function per half, with a comment per step: deriving the
// graphs (deriveTrainingGraphs) and compiling them into a training package
// (runTrainingPipeline).
//
//===----------------------------------------------------------------------===//

#include "compiler/TrainingPipeline.h"
#include "codegen/Packager.h"
#include "passes/GraphBreaks.h"
#include "passes/LoweringPasses.h"
#include "passes/Passes.h"
#include "passes/TensorConversion.h"
#include "targets/TargetRegistry.h"

#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

using namespace mlir;

namespace kiln {

namespace {

/// Every op of the graph that breaks it on `target`: an error each.
LogicalResult checkNoGraphBreaks(ModuleOp module, const Target &target) {
  GraphBreakTarget breaks{target.name().str(),
                          [&](Operation *op) { return target.compilesOp(op); }};
  bool ok = true;
  module.walk([&](Operation *op) {
    if (isa<func::FuncOp, ModuleOp>(op))
      return;
    if (std::optional<GraphBreakReason> reason =
            classifyGraphBreak(op, breaks)) {
      op->emitError("training graphs compile whole, but this op breaks the "
                    "graph (")
          << reason->reason << "): " << reason->detail;
      ok = false;
    }
  });
  return success(ok);
}

/// The module's function named `name`.
func::FuncOp graphNamed(ModuleOp module, StringRef name) {
  return module.lookupSymbol<func::FuncOp>(name);
}

/// The manifest entry of a value of type `type` named by `name`.
ManifestValue manifestValueOf(Type type, StringAttr name) {
  ManifestValue v;
  auto tensor = cast<RankedTensorType>(type);
  v.name = name ? name.getValue().str() : "";
  v.dtype = *fromMlirElementType(tensor.getElementType());
  v.shape = Shape(tensor.getShape().begin(), tensor.getShape().end());
  v.bytes = static_cast<uint64_t>(tensor.getNumElements() * dtypeSize(v.dtype));
  return v;
}

ManifestValue valueOf(func::FuncOp f, unsigned result) {
  return manifestValueOf(
      f.getResultTypes()[result],
      f.getResultAttrOfType<StringAttr>(result, "kiln.name"));
}

ManifestValue argumentOf(func::FuncOp f, unsigned arg) {
  return manifestValueOf(f.getArgumentTypes()[arg],
                         f.getArgAttrOfType<StringAttr>(arg, "kiln.name"));
}

/// The training section of the manifest, from the three graphs.
ManifestTraining describeTraining(func::FuncOp forward, func::FuncOp backward,
                                  const TrainOptions &train) {
  ManifestTraining t;
  t.loss = valueOf(forward, 0).name;
  for (unsigned i = 1; i < forward.getNumResults(); ++i)
    t.saved.push_back(valueOf(forward, i));
  if (auto bytes = forward->getAttrOfType<IntegerAttr>(kSavedBytesAttr))
    t.savedBytes = bytes.getInt();
  if (auto ops = forward->getAttrOfType<IntegerAttr>(kRecomputedOpsAttr))
    t.recomputedOps = ops.getInt();
  if (auto flops = forward->getAttrOfType<IntegerAttr>(kRecomputeFlopsAttr))
    t.recomputeFlops = flops.getInt();
  if (auto all =
          forward->getAttrOfType<IntegerAttr>(kSavedBytesNoRecomputeAttr))
    t.savedBytesNoRecompute = all.getInt();
  std::vector<std::string> suffixes =
      optimizerStateSuffixes(train.optimizer.kind);
  for (unsigned i = 0; i < backward.getNumResults(); ++i) {
    ManifestValue grad = valueOf(backward, i);
    std::string param =
        backward.getResultAttrOfType<StringAttr>(i, kGradientOfAttr)
            .getValue()
            .str();
    ManifestValue p = grad;
    p.name = param;
    t.parameters.push_back(p);
    t.gradients.push_back({param, grad.name});
    t.updates.push_back({nextName(param), param});
    for (const std::string &suffix : suffixes) {
      ManifestValue s = p;
      s.name = param + suffix;
      t.state.push_back(s);
      t.updates.push_back({nextName(s.name), s.name});
    }
  }
  // Dynamic loss scaling's state: two scalars the runtime keeps like an
  // optimizer's (zero at the start: the scale is S0 * 2^0).
  if (train.optimizer.initialLossScale > 0)
    for (const char *name : {kLossScaleExponentName, kLossScaleGoodStepsName}) {
      ManifestValue s;
      s.name = name;
      s.dtype = DType::F32;
      s.shape = {};
      s.bytes = 4;
      t.state.push_back(s);
      t.updates.push_back({nextName(name), name});
    }
  const OptimizerOptions &o = train.optimizer;
  t.optimizer = ManifestOptimizer{o.kind,  train.lr, o.momentum,   o.beta1,
                                  o.beta2, o.eps,    o.weightDecay};
  return t;
}

} // namespace

LogicalResult deriveTrainingGraphs(ModuleOp module, const std::string &target,
                                   const TrainOptions &train,
                                   TrainingStage stage) {
  const Target *t = lookupTarget(target);
  if (!t)
    return emitError(module.getLoc())
           << "unknown --target '" << target
           << "' (supported: " << targetNameList() << ")";
  // 1. Static shapes, and no graph breaks: a train step compiles whole.
  if (failed(checkStaticShapes(module)) ||
      failed(checkNoGraphBreaks(module, *t)))
    return failure();

  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  // 2. Clean up the export (folds, identities, duplicates) before
  //    differentiating, so no gradient is built for what folds away.
  OpPassManager &cleanup = pm.nest<func::FuncOp>();
  cleanup.addPass(createFoldConstantsPass());
  cleanup.addPass(createSimplifyPass());
  cleanup.addPass(createCSEPass());
  // 2b. The target's forward passes (CUDA: attention as kiln.attention,
  //     whose gradient is flash attention's backward kernel).
  t->addTrainingForwardPasses(cleanup);
  // 3. Reverse mode: the joint graph (loss, gradients), by the ops'
  //    gradient rules; CSE shares what forward and backward both compute.
  pm.addPass(createAutodiffPass(train.optimizer.initialLossScale));
  pm.nest<func::FuncOp>().addPass(createCSEPass());
  if (stage != TrainingStage::Joint) {
    // 4. The min-cut partition: @forward saves what @backward reads,
    //    cheap elementwise chains are recomputed instead.
    pm.addPass(createPartitionPass(
        PartitionOptions{train.recompute, train.memoryBudget}));
  }
  if (stage == TrainingStage::Complete) {
    // 5. The parameter update as a graph (@optimizer), and the gradient
    //    sums over micro-batches (@accumulate).
    pm.addPass(createBuildOptimizerPass(train.optimizer));
  }
  return pm.run(module);
}

LogicalResult
runTrainingPipeline(ModuleOp module, const CompileOptions &options,
                    const TrainOptions &train,
                    const std::map<std::string, Tensor> &initialValues) {
  Location loc = module.getLoc();
  auto start = std::chrono::steady_clock::now();
  // 1-5. The forward, backward, optimizer and accumulate graphs.
  if (failed(deriveTrainingGraphs(module, options.target, train,
                                  TrainingStage::Complete)))
    return failure();
  func::FuncOp forward = graphNamed(module, "forward"),
               backward = graphNamed(module, "backward"),
               optimizer = graphNamed(module, "optimizer"),
               accumulate = graphNamed(module, "accumulate");

  // 6. A temporary folder, renamed into place at the end.
  StagedPackage staged(loc, options.outputDir);
  if (failed(staged.begin()))
    return failure();
  const std::string &tmp = staged.path();

  // 7. The saved activations stay in the scratch arena the three graphs
  //    share (kiln::Trainer runs them one after another in one buffer):
  //    @backward's memory plan places them, as arena values that die at
  //    their last use there, so the backward graph reuses their memory;
  //    @forward then writes each at the offset @backward chose.
  std::set<std::string> savedNames;
  for (unsigned i = 1; i < forward.getNumResults(); ++i)
    savedNames.insert(valueOf(forward, i).name);
  Builder b(module.getContext());
  for (unsigned i = 0; i < backward.getNumArguments(); ++i)
    if (savedNames.count(argumentOf(backward, i).name))
      backward.setArgAttr(i, kArenaValueAttr, b.getUnitAttr());

  // 8. Each graph through the ordinary pipeline (graph passes, fusion,
  //    lowering, kernels, memory plan, wrapper, build): one package each,
  //    @backward first for the offsets of the saved activations.
  PackageManifest manifest;
  manifest.kind = PackageKind::Training;
  manifest.source = options.modelPath;
  manifest.target = options.target;
  ManifestCounts &counts = manifest.counts.emplace();
  std::map<std::string, int64_t> savedOffsets;
  for (func::FuncOp graph : {backward, forward, optimizer, accumulate}) {
    std::string name = graph.getName().str();
    if (graph == forward)
      for (unsigned i = 1; i < forward.getNumResults(); ++i) {
        auto found = savedOffsets.find(valueOf(forward, i).name);
        if (found != savedOffsets.end())
          forward.setResultAttr(i, kArenaValueAttr,
                                b.getI64IntegerAttr(found->second));
      }
    OwningOpRef<ModuleOp> graphModule = extractGraph(module, graph);
    StepCounts steps;
    std::map<std::string, int64_t> offsets;
    if (failed(compileGraph(*graphModule, options, name,
                            tmp + "/graphs/" + name, &steps, &offsets)))
      return failure();
    if (graph == backward)
      savedOffsets = offsets;
    counts.fused += steps.fused;
    counts.library += steps.library;
    counts.fallback += steps.fallback;
    // One scratch arena of the largest graph's size.
    manifest.memoryPlan.arenaBytes =
        std::max(manifest.memoryPlan.arenaBytes, steps.arenaBytes);
  }

  // 9. The initial parameters, in safetensors (a format other tools read).
  ManifestTraining training = describeTraining(forward, backward, train);
  training.graphs.accumulate = "graphs/accumulate";
  // Parameters whose data the model does not carry (an absent external
  // data file) are left out: the trainer needs a weights file for them
  // (TrainerOptions::weightsPath, kiln train --load-weights).
  NamedTensors params;
  std::vector<std::string> missing;
  for (const ManifestValue &p : training.parameters) {
    auto it = initialValues.find(p.name);
    if (it == initialValues.end())
      missing.push_back(p.name);
    else
      params.emplace_back(p.name, it->second);
  }
  if (!missing.empty())
    emitWarning(loc) << missing.size() << " of " << training.parameters.size()
                     << " parameters have no data in the model (e.g. '"
                     << missing.front()
                     << "'); give their values when training starts "
                        "(kiln train --load-weights FILE.safetensors)";
  if (Status written = writeSafeTensors(
          tmp + "/" + training.weightsFile, params,
          {{"format", "kiln-training"}, {"source", options.modelPath}});
      !written) {
    emitError(loc) << written.message();
    return failure();
  }

  // 10. The manifest: the model's inputs and loss, the training section.
  // (Dynamic loss scaling's exponent is state the runtime keeps.)
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, "kiln.name");
    if (!forward.getArgAttr(i, kTrainableAttr) &&
        !(name && name.getValue() == kLossScaleExponentName))
      manifest.inputs.push_back(argumentOf(forward, i));
  }
  manifest.outputs.push_back(valueOf(forward, 0));
  manifest.training = std::move(training);
  manifest.compileTimes.trace = options.traceSeconds;
  manifest.compileTimes.graphs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return staged.install(manifest);
}

} // namespace kiln
