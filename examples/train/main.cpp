//===- main.cpp - Training a compiled Kiln model from C++ -----------------===//
//
// This file is the C++ example of a Kiln training package (docs/training.md):
// it loads the package that `kiln compile MODEL.onnx --train -o DIR` writes
// with kiln::Trainer, reads the batch from a .npy file with the runtime's
// readNpy, takes five train steps on it printing the loss of each (the loss
// before that step's update), writes a checkpoint (parameters, optimizer
// state, step count) to a safetensors file, loads it back into a second
// Trainer and checks that it resumes at step 5 with the same parameters
// and the loss the first one would see next.
//
//   usage: kiln-example-train PACKAGE_DIR INPUT.npy CHECKPOINT.safetensors
//
// The input is bound to the package's one model input (its name comes from
// the manifest, Trainer::inputs()).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/TensorIO.h"
#include "kiln/runtime/Trainer.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "kiln-example-train: error: %s\n", message.c_str());
  return 1;
}

constexpr int kSteps = 5;

} // namespace

int main(int argc, char **argv) {
  if (argc != 4)
    return fail("usage: kiln-example-train PACKAGE_DIR INPUT.npy "
                "CHECKPOINT.safetensors");
  std::string package = argv[1], inputPath = argv[2], checkpoint = argv[3];

  // Load the package: manifest, the three graphs, weights.safetensors.
  kiln::Expected<kiln::Trainer> loaded = kiln::Trainer::load(package);
  if (!loaded)
    return fail(loaded.status().message());
  kiln::Trainer trainer = loaded.take();
  if (trainer.inputs().size() != 1)
    return fail("this example feeds one input; the package has " +
                std::to_string(trainer.inputs().size()));
  std::printf("package %s: %zu parameters, %zu state tensors, lr %g\n",
              package.c_str(), trainer.parameters().size(),
              trainer.state().size(), trainer.learningRate());

  // The batch, bound by the model input's name; the same batch every step.
  kiln::Expected<kiln::Tensor> x = kiln::readNpy(inputPath);
  if (!x)
    return fail(x.status().message());
  kiln::NamedTensors inputs = {{trainer.inputs()[0].name, x.take()}};

  // Train: each trainStep runs forward, backward and the optimizer and
  // returns the loss computed before the update.
  for (int i = 0; i < kSteps; ++i) {
    kiln::Expected<double> loss = trainer.trainStep(inputs);
    if (!loss)
      return fail(loss.status().message());
    std::printf("step %lld loss %.8f\n",
                static_cast<long long>(trainer.step()), *loss);
  }

  // Checkpoint: parameters, optimizer state and "kiln.step".
  if (kiln::Status s = trainer.save(checkpoint); !s)
    return fail(s.message());
  std::printf("saved %s\n", checkpoint.c_str());

  // Load it back into a fresh Trainer: it resumes at step 5 with the same
  // parameters.
  kiln::Expected<kiln::Trainer> again = kiln::Trainer::load(package);
  if (!again)
    return fail(again.status().message());
  if (kiln::Status s = again->loadState(checkpoint); !s)
    return fail(s.message());
  if (again->step() != kSteps)
    return fail("the checkpoint resumed at step " +
                std::to_string(again->step()) + ", not " +
                std::to_string(kSteps));
  kiln::Expected<kiln::NamedTensors> before = trainer.parameterValues(),
                                     after = again->parameterValues();
  if (!before || !after)
    return fail(!before ? before.status().message()
                        : after.status().message());
  for (size_t i = 0; i < before->size(); ++i) {
    kiln::Tensor a = (*before)[i].second.contiguous(),
                 b = (*after)[i].second.contiguous();
    if ((*before)[i].first != (*after)[i].first || a.nbytes() != b.nbytes() ||
        std::memcmp(a.rawData(), b.rawData(), a.nbytes()) != 0)
      return fail("parameter '" + (*before)[i].first +
                  "' differs after loading the checkpoint");
  }
  kiln::Expected<double> next = trainer.forward(inputs),
                         resumed = again->forward(inputs);
  if (!next || !resumed)
    return fail(!next ? next.status().message()
                      : resumed.status().message());
  if (*next != *resumed)
    return fail("the resumed trainer's loss differs");
  std::printf("loaded %s: step %lld, loss %.8f\n", checkpoint.c_str(),
              static_cast<long long>(again->step()), *resumed);
  return 0;
}
