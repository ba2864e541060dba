//===- two_packages.cpp - Two packages linked into one program -----------===//
//
// This file implements the test that links two different packages, the
// tiny MLP and a small CNN, into one program through their headers
// (tiny_mlp.h, small_cnn.h; -ltiny_mlp -lsmall_cnn) and checks both outputs
// against the reference runtime. With one library name and one set of
// symbols for every package, the second model's calls bound to the first
// model's code; each package now exports only its own <name>_* symbols.
//
//   usage: two_packages MLP_DIR MLP_X.npy MLP_REF.npy CNN_DIR CNN_X.npy
//                       CNN_REF.npy
//
//===----------------------------------------------------------------------===//

#include "PackageFiles.h"
#include "small_cnn.h"
#include "tiny_mlp.h"

#include <cstring>

using namespace package_api;

int main(int argc, char **argv) {
  if (argc != 7)
    fail("usage: two_packages MLP_DIR MLP_X MLP_REF CNN_DIR CNN_X CNN_REF");
  char err[512] = {0};

  // Both models created first, then run: each keeps its own weights.
  WeightsFile mlpWeights(argv[1]), cnnWeights(argv[4]);
  kiln_model *mlp = nullptr, *cnn = nullptr;
  if (tiny_mlp::createFromWeightsFile(mlpWeights.data, &mlp, err,
                                      sizeof(err)) ||
      small_cnn::createFromWeightsFile(cnnWeights.data, &cnn, err, sizeof(err)))
    fail(err);
  // Each library reports its own signature through its own symbols.
  if (tiny_mlp_num_weights() != tiny_mlp::kNumWeights ||
      small_cnn_num_weights() != small_cnn::kNumWeights ||
      std::strcmp(small_cnn_output_name(0), "logits") != 0 ||
      std::strcmp(tiny_mlp_output_name(0), "y") != 0)
    fail("a package's signature queries answer for the other package");

  kiln::Tensor mlpX =
      readInput(argv[2], kiln::DType::F32, tiny_mlp::kInputNumel_x);
  std::vector<float> y(tiny_mlp::kOutputNumel_y);
  std::vector<unsigned char> mlpArena(tiny_mlp::kArenaBytes + 64);
  void *arena = mlpArena.data() +
                (64 - reinterpret_cast<uintptr_t>(mlpArena.data()) % 64) % 64;
  tiny_mlp::Inputs mlpIn;
  mlpIn.x = mlpX.data<float>();
  tiny_mlp::Outputs mlpOut;
  mlpOut.y = y.data();
  if (tiny_mlp::run(mlp, mlpIn, mlpOut, arena, err, sizeof(err)))
    fail(err);

  kiln::Tensor cnnX =
      readInput(argv[5], kiln::DType::F32, small_cnn::kInputNumel_x);
  std::vector<float> logits(small_cnn::kOutputNumel_logits);
  std::vector<unsigned char> cnnArena(small_cnn::kArenaBytes + 64);
  arena = cnnArena.data() +
          (64 - reinterpret_cast<uintptr_t>(cnnArena.data()) % 64) % 64;
  small_cnn::Inputs cnnIn;
  cnnIn.x = cnnX.data<float>();
  small_cnn::Outputs cnnOut;
  cnnOut.logits = logits.data();
  if (small_cnn::run(cnn, cnnIn, cnnOut, arena, err, sizeof(err)))
    fail(err);

  expectReference("tiny_mlp y", y.data(),
                  {tiny_mlp::kOutputShape_y[0], tiny_mlp::kOutputShape_y[1]},
                  argv[3]);
  expectReference(
      "small_cnn logits", logits.data(),
      {small_cnn::kOutputShape_logits[0], small_cnn::kOutputShape_logits[1]},
      argv[6]);
  tiny_mlp_destroy(mlp);
  small_cnn_destroy(cnn);
  return 0;
}
