//===- TrainingFlags.cpp - The training flags of the kiln tool ------------===//
//
// This file implements what `kiln compile --train`, `kiln dump --train` and
// `kiln explain --train` share: tracing for training (float initializers
// become trainable parameters unless a --freeze pattern matches them) and
// the pipeline's TrainOptions from the flags.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include <fnmatch.h>

namespace kiln {

void setUpTrainingTrace(const TrainFlags &flags, TraceOptions &trace,
                        std::map<std::string, Tensor> *initialValues) {
  trace.trainable = true;
  trace.initialValues = initialValues;
  std::vector<std::string> patterns = flags.freeze;
  trace.frozen = [patterns](const std::string &name) {
    for (const std::string &p : patterns)
      if (fnmatch(p.c_str(), name.c_str(), 0) == 0)
        return true;
    return false;
  };
}

Status trainOptionsOf(const TrainFlags &flags, TrainOptions &options,
                      const std::string &precision) {
  if (flags.optimizer != "sgd" && flags.optimizer != "momentum" &&
      flags.optimizer != "adamw")
    return Status::error("--optimizer '" + flags.optimizer +
                         "': expected sgd, momentum or adamw");
  if (!(flags.lr > 0))
    return Status::error("--lr must be positive");
  if (flags.momentum < 0 || flags.beta1 < 0 || flags.beta1 >= 1 ||
      flags.beta2 < 0 || flags.beta2 >= 1 || !(flags.eps > 0) ||
      flags.weightDecay < 0)
    return Status::error("optimizer hyperparameters out of range: need "
                         "--momentum >= 0, 0 <= --beta1/--beta2 < 1, --eps > "
                         "0, --weight-decay >= 0");
  options.optimizer.kind = flags.optimizer;
  options.optimizer.momentum = flags.momentum;
  options.optimizer.beta1 = flags.beta1;
  options.optimizer.beta2 = flags.beta2;
  options.optimizer.eps = flags.eps;
  options.optimizer.weightDecay = flags.weightDecay;
  options.lr = flags.lr;
  options.recompute = !flags.noRecompute;
  if (!(flags.memoryBudget > 0.0 && flags.memoryBudget <= 1.0))
    return Status::error(strCat("--memory-budget ", flags.memoryBudget,
                                ": expected a fraction in (0, 1] of the "
                                "activations the no-recompute plan saves"));
  if (flags.noRecompute && flags.memoryBudget < 1.0)
    return Status::error("--memory-budget needs recomputation: drop "
                         "--no-recompute");
  options.memoryBudget = flags.memoryBudget;
  if (flags.lossScale != "auto" && flags.lossScale != "dynamic" &&
      flags.lossScale != "none")
    return Status::error(strCat("--loss-scale '", flags.lossScale,
                                "': expected auto, dynamic or none"));
  if (!(flags.lossScaleInit >= 1) || flags.lossScaleGrowthInterval < 1)
    return Status::error("--loss-scale-init must be at least 1 and "
                         "--loss-scale-growth-interval at least 1");
  bool dynamic = flags.lossScale == "dynamic" ||
                 (flags.lossScale == "auto" && precision == "f16");
  options.optimizer.initialLossScale = dynamic ? flags.lossScaleInit : 0;
  options.optimizer.lossScaleGrowthInterval = flags.lossScaleGrowthInterval;
  return Status::ok();
}

} // namespace kiln
