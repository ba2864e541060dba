//===- single_kernel.cpp - One generated kernel called from C++ ----------===//
//
// This file implements the test that calls one generated CPU kernel of a
// package on its own, without a model handle: the tiny MLP's layer
// normalisation, tiny_mlp_k0_layer_normalization, declared in tiny_mlp.h
// with its parameters (the input, ln.weight and ln.bias from weights.bin,
// the output). Its result is checked against the runtime's reference
// kernel (kiln::Dispatcher's "layer_norm", epsilon 1e-5 as the model says).
//
//   usage: single_kernel MLP_DIR MLP_X.npy
//
//===----------------------------------------------------------------------===//

#include "PackageFiles.h"
#include "tiny_mlp.h"

using namespace package_api;

int main(int argc, char **argv) {
  if (argc != 3)
    fail("usage: single_kernel MLP_DIR MLP_X.npy");
  WeightsFile weights(argv[1]);
  kiln::Tensor x =
      readInput(argv[2], kiln::DType::F32, tiny_mlp::kInputNumel_x);
  const float *scale =
      weightNamed(weights, tiny_mlp_weight_name, tiny_mlp::kWeightOffsets,
                  tiny_mlp::kNumWeights, "ln.weight");
  const float *bias =
      weightNamed(weights, tiny_mlp_weight_name, tiny_mlp::kWeightOffsets,
                  tiny_mlp::kNumWeights, "ln.bias");

  kiln::Shape shape = {tiny_mlp::kInputShape_x[0], tiny_mlp::kInputShape_x[1]};
  std::vector<float> y(x.numel());
  tiny_mlp_k0_layer_normalization(x.data<float>(), scale, bias, y.data());

  expectLayerNorm("tiny_mlp_k0_layer_normalization", y, x, scale, bias,
                  shape);
  return 0;
}
