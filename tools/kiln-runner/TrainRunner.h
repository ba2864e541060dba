//===- TrainRunner.h - kiln-runner's training mode --------------*- C++ -*-===//
//
// This file declares runTrainingPackage, what kiln-runner does with a
// training package (TrainRunner.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUNNER_TRAINRUNNER_H
#define KILN_TOOLS_KILNRUNNER_TRAINRUNNER_H

#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// The flags of kiln-runner for a training package.
struct TrainRun {
  std::string dir;
  std::vector<std::pair<std::string, std::string>> inputFiles;
  int steps = 1;
  std::string lossesFile, gradientsDir;
  int warmup = 5, iterations = 0;
  /// Safetensors to start from (TrainerOptions::weightsPath); empty: the
  /// package's weights.
  std::string loadWeights;
};

/// Runs train steps of the training package `run.dir`; the exit status.
int runTrainingPackage(const TrainRun &run);

} // namespace kiln

#endif // KILN_TOOLS_KILNRUNNER_TRAINRUNNER_H
