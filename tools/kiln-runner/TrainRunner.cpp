//===- TrainRunner.cpp - kiln-runner's training mode ----------------------===//
//
// This file implements what kiln-runner does with a training package
// (manifest kind "training", kiln compile --train): it loads it with
// kiln::Trainer on the package's device, optionally writes the gradients
// of the batch before the first step (--gradients DIR, one PARAM.npy
// each), runs --steps train steps printing "step N loss X", writes the
// losses as a JSON list (--losses FILE), and with --iterations times that
// many more steps after --warmup, printing one JSON line with the median
// wall-clock time of a step (forward, backward and update, the loss read
// back each step).
//
//===----------------------------------------------------------------------===//

#include "TrainRunner.h"

#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/TensorIO.h"
#include "kiln/runtime/Trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace kiln {

int runTrainingPackage(const TrainRun &run) {
  auto fail = [](const std::string &msg) {
    std::cerr << "kiln-runner: error: " << msg << "\n";
    return 1;
  };
  TrainerOptions options;
  options.weightsPath = run.loadWeights;
  Expected<Trainer> trainer = Trainer::load(run.dir, options);
  if (!trainer)
    return fail(trainer.status().message());
  NamedTensors inputs;
  for (const auto &[name, file] : run.inputFiles) {
    Expected<Tensor> t = readNpy(file);
    if (!t)
      return fail("--input " + name + ": " + t.status().message());
    inputs.emplace_back(name, t.take());
  }
  if (!run.gradientsDir.empty()) {
    Expected<NamedTensors> grads = trainer->gradients(inputs);
    if (!grads)
      return fail(run.dir + ": gradients: " + grads.status().message());
    std::error_code ec;
    std::filesystem::create_directories(run.gradientsDir, ec);
    for (const auto &[name, g] : *grads)
      if (Status s = writeNpy(run.gradientsDir + "/" + name + ".npy", g); !s)
        return fail(s.message());
  }
  std::vector<double> losses;
  for (int i = 0; i < run.steps; ++i) {
    Expected<double> loss = trainer->trainStep(inputs);
    if (!loss)
      return fail(run.dir + ": step " + std::to_string(i + 1) + ": " +
                  loss.status().message());
    losses.push_back(*loss);
    std::printf("step %lld loss %.9g\n", (long long)trainer->step(), *loss);
  }
  if (!run.lossesFile.empty()) {
    std::ofstream out(run.lossesFile);
    out << "[";
    for (size_t i = 0; i < losses.size(); ++i) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.9g", losses[i]);
      out << (i ? ", " : "") << buf;
    }
    out << "]\n";
  }
  if (run.iterations <= 0)
    return 0;
  // Timing: the inputs on the package's device.
  for (auto &entry : inputs) {
    Expected<Tensor> moved = entry.second.to(trainer->device());
    if (!moved)
      return fail("input '" + entry.first + "': " + moved.status().message());
    entry.second = moved.take();
  }
  std::vector<double> ms, deviceMs;
  if (trainer->device() == Device::CUDA)
    cuda::resetPeakBytesInUse();
  for (int i = 0; i < run.warmup + run.iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    Expected<double> loss = trainer->trainStep(inputs);
    auto end = std::chrono::steady_clock::now();
    if (!loss)
      return fail(run.dir + ": " + loss.status().message());
    if (i >= run.warmup) {
      ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
      if (std::optional<double> d = trainer->lastStepDeviceMilliseconds())
        deviceMs.push_back(*d);
    }
  }
  std::sort(ms.begin(), ms.end());
  std::sort(deviceMs.begin(), deviceMs.end());
  std::string where = trainer->device() == Device::CUDA
                          ? cuda::deviceDescription()
                          : std::string("cpu");
  // Peak device memory of the steps: parameters, state, arenas, saved
  // activations, gradients (the caching allocator's peak in use, what
  // torch.cuda.max_memory_allocated measures).
  char peak[128] = "";
  if (trainer->device() == Device::CUDA)
    std::snprintf(peak, sizeof(peak), ", \"peak_mem_mb\": %.1f",
                  cuda::allocatorStats().peakBytesInUse / 1048576.0);
  // The device time of a step (CUDA events on the trainer's stream, as
  // PyTorch's torch.cuda.Event timing), next to the wall-clock time
  // around trainStep (which also holds the host's launch of the first
  // graph and the wait for the loss).
  if (deviceMs.size() == ms.size() && !deviceMs.empty())
    std::snprintf(peak + std::strlen(peak), sizeof(peak) - std::strlen(peak),
                  ", \"device_median_ms\": %.4f",
                  deviceMs[deviceMs.size() / 2]);
  std::printf("{\"package\": \"%s\", \"device\": \"%s\", \"train_steps\": %d, "
              "\"median_ms\": %.4f, \"min_ms\": %.4f, \"max_ms\": %.4f%s}\n",
              run.dir.c_str(), where.c_str(), run.iterations, ms[ms.size() / 2],
              ms.front(), ms.back(), peak);
  return 0;
}

} // namespace kiln
