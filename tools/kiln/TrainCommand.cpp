//===- TrainCommand.cpp - `kiln train`: run train steps of a package ------===//
//
// This file implements `kiln train PACKAGE --input NAME=FILE ... --steps N`:
// it loads a training package (kiln compile --train) with kiln::Trainer,
// runs N train steps on the same batch, prints "step N loss X" for each
// (X with 9 significant digits), and optionally writes the losses as a JSON
// list, the gradients of the batch before the first step as .npy files,
// and the weights, optimizer state and step count as safetensors.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "TensorFiles.h"

#include "kiln/runtime/Trainer.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace kiln {

namespace {

/// Writes `losses` as a JSON list to `path` (a temporary file, renamed).
Status writeLosses(const std::string &path, const std::vector<double> &losses) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << "[";
    char buf[64];
    for (size_t i = 0; i < losses.size(); ++i) {
      std::snprintf(buf, sizeof(buf), "%.9g", losses[i]);
      out << (i ? ", " : "") << buf;
    }
    out << "]\n";
    if (!out)
      return Status::error("--losses: cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::error("--losses: cannot rename '" + tmp + "' to '" + path +
                         "'");
  return Status::ok();
}

} // namespace

int runTrainCommand(const TrainCommandOptions &options) {
  TrainerOptions load;
  load.lr = options.lr;
  load.weightsPath = options.loadWeights;
  Expected<Trainer> trainer = Trainer::load(options.package, load);
  if (!trainer)
    return reportError(trainer.status().message());
  Expected<NamedTensors> inputs =
      readInputArguments(trainer->inputs(), options.inputs);
  if (!inputs)
    return reportError(inputs.status().message());
  if (!options.gradientsDir.empty()) {
    Expected<NamedTensors> grads = trainer->gradients(*inputs);
    if (!grads)
      return reportError("--gradients: " + grads.status().message());
    std::error_code ec;
    std::filesystem::create_directories(options.gradientsDir, ec);
    if (ec)
      return reportError("--gradients: cannot create '" +
                         options.gradientsDir + "': " + ec.message());
    for (const auto &[name, grad] : *grads)
      if (Status s = writeTensorFile(options.gradientsDir + "/" + name +
                                         ".npy",
                                     grad, name);
          !s)
        return reportError("--gradients: " + s.message());
  }
  std::vector<double> losses;
  for (int i = 0; i < options.steps; ++i) {
    Expected<double> loss = trainer->trainStep(*inputs);
    if (!loss)
      return reportError("step " + std::to_string(trainer->step() + 1) +
                         ": " + loss.status().message());
    losses.push_back(*loss);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", *loss);
    std::cout << "step " << trainer->step() << " loss " << buf << std::endl;
  }
  if (!options.losses.empty())
    if (Status s = writeLosses(options.losses, losses); !s)
      return reportError(s.message());
  if (!options.saveWeights.empty())
    if (Status s = trainer->save(options.saveWeights); !s)
      return reportError("--save-weights: " + s.message());
  return 0;
}

} // namespace kiln
