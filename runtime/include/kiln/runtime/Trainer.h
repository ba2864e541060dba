//===- Trainer.h - Training with a compiled training package --*- C++ -*-===//
//
// This file declares kiln::Trainer, the C++ API of a training package (the
// folder the compiler writes for a model with a loss; manifest "kind":
// "training", PackageManifest.h): manifest.json, weights.safetensors (the
// initial parameters) and three or four graph packages, each an ordinary
// package that kiln::Model loads:
//
//   graphs/forward    model inputs + parameters -> the loss, then the
//                     activations the backward graph reads ("saved")
//   graphs/backward   saved activations, model inputs, parameters -> one
//                     gradient per parameter
//   graphs/optimizer  parameters, gradients, optimizer state, "kiln.lr" and
//                     "kiln.step" (f32 rank 0; the 1-based number of the
//                     step being taken) -> the updated parameters and state
//   graphs/accumulate gradients, their sums, "kiln.accumulate_scale" and
//                     "kiln.accumulate_first" -> the new sums (gradient
//                     accumulation; absent in packages made before it)
//
// The Trainer owns the parameters and the optimizer state and keeps them on
// the package's device between steps (CUDA for a cuda package); a step runs
// the graphs (forward and backward once per micro-batch) and writes the optimizer's outputs into the parameter
// and state tensors in place (RunOptions::outputsInto).
// docs/runtime-api.md, "Training packages", describes the package, the
// checkpoint format and the C ABI (TrainerABI.h).
//
// Thread safety: a Trainer is move-only and must be driven by one thread at
// a time: trainStep, loadState and setLearningRate change it, and the
// const members read what they change. Different Trainers are independent.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TRAINER_H
#define KILN_RUNTIME_TRAINER_H

#include "kiln/runtime/Executor.h"
#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// How Trainer::load starts.
struct TrainerOptions {
  /// A safetensors file to start from instead of the package's
  /// weights.safetensors: a weights file (every parameter) or a checkpoint
  /// written by Trainer::save (parameters, optimizer state and
  /// "kiln.step"), read as Trainer::loadState reads it. Empty: the
  /// package's weights, zero state, step 0.
  std::string weightsPath;
  /// The learning rate, overriding the manifest's training.optimizer.lr.
  std::optional<double> lr;
  /// Where the parameters and state live and the graphs run. Unset: the
  /// package's target (Device::CUDA for a cuda package). A package runs
  /// only on its own target: another device is an error.
  std::optional<Device> device;
  /// True: the optimizer writes its outputs into the parameter and state
  /// tensors (RunOptions::outputsInto; no allocation per step). This relies
  /// on the compiled optimizer graph reading each element of a tensor
  /// before writing that element of its update, which holds for the
  /// elementwise optimizers the compiler writes. False: the optimizer's
  /// outputs are fresh tensors that replace the parameters and state after
  /// the step (safe for any optimizer graph; one allocation per tensor and
  /// step).
  bool inPlaceUpdates = true;
};

/// A model being trained: a loaded training package with its parameters,
/// optimizer state and step count. Move-only; driven by one thread at a
/// time (see the file comment).
class Trainer {
public:
  /// Loads the training package in `dir`: its manifest, its three graph
  /// packages (each checked against the manifest: every graph input is a
  /// model input, parameter, state tensor, gradient or forward output of
  /// the declared dtype and shape), and the initial parameters. Errors name
  /// the package, the graph and the value.
  static Expected<Trainer> load(const std::string &dir,
                                const TrainerOptions &options = {});

  Trainer(Trainer &&other) noexcept;
  Trainer &operator=(Trainer &&other) noexcept;
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;
  ~Trainer();

  /// The model inputs (the manifest's signature inputs), as trainStep,
  /// gradients and forward take them.
  const std::vector<ValueSignature> &inputs() const;
  /// The trainable parameters, in manifest order.
  const std::vector<ValueSignature> &parameters() const;
  /// The optimizer state tensors, in manifest order.
  const std::vector<ValueSignature> &state() const;
  /// The package's manifest.
  const PackageManifest &manifest() const;
  /// The package folder.
  const std::string &directory() const;
  /// Where the parameters live and the graphs run.
  Device device() const;

  /// One training step: forward, backward, then the optimizer with
  /// "kiln.step" = step() + 1, updating the parameters and state in place;
  /// increments step(). `inputs` are matched by name against inputs()
  /// (unknown, repeated or missing names are errors naming them; CPU
  /// tensors, or CUDA ones for a cuda package, of the declared dtype and
  /// shape). Inputs whose first dim is k times the declared one (the rest
  /// as declared) are k micro-batches: gradient accumulation, the step on
  /// the mean of their gradients (the package's accumulate graph). Returns
  /// the loss computed before the update (the micro-batches' mean). When
  /// the optimizer graph fails the parameters may be partly updated.
  Expected<double> trainStep(const NamedTensors &inputs);
  /// Forward and backward without an update: {parameter name -> gradient}
  /// as CPU tensors, in parameter order (parameters without a gradient in
  /// the manifest are left out).
  Expected<NamedTensors> gradients(const NamedTensors &inputs);
  /// The loss, without an update.
  Expected<double> forward(const NamedTensors &inputs);

  /// CPU copies of the parameters, in parameter order.
  Expected<NamedTensors> parameterValues() const;
  /// CPU copies of the optimizer state, in state order.
  Expected<NamedTensors> stateValues() const;

  /// The device time of the last trainStep's work on a cuda trainer: CUDA
  /// events recorded on its stream before the first graph and after the
  /// optimizer, what PyTorch's torch.cuda.Event timing of a step measures
  /// (not the host's time to enqueue the first graph or to wait and read
  /// the loss back); nullopt on the CPU or before the first step.
  std::optional<double> lastStepDeviceMilliseconds() const;

  /// Steps taken (0 after loading a weights file; a checkpoint's
  /// "kiln.step" after loading one).
  int64_t step() const;
  double learningRate() const;
  void setLearningRate(double lr);

  /// Writes a checkpoint: a safetensors file holding the parameters, the
  /// optimizer state and "kiln.step" (i64, rank 0), with metadata
  /// {"format": "kiln-training", "optimizer": KIND}. Written under a
  /// temporary name and renamed.
  Status save(const std::string &path) const;
  /// Reads a checkpoint (the inverse of save) or a weights file. Every
  /// parameter must be in it, of the declared dtype and shape (missing ones
  /// are an error naming them all). A file with "kiln.step" is a
  /// checkpoint: it must hold every state tensor too, and sets step(). A
  /// file without it is a weights file: state tensors it holds are read,
  /// the others are zeros, and step() becomes 0. Names that are neither
  /// parameters, state nor "kiln.step" are errors. Nothing changes on
  /// error.
  Status loadState(const std::string &path);

private:
  struct Impl;
  explicit Trainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln

#endif // KILN_RUNTIME_TRAINER_H
