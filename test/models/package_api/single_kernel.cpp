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

#include "kiln/runtime/Dispatcher.h"

using namespace package_api;

int main(int argc, char **argv) {
  if (argc != 3)
    fail("usage: single_kernel MLP_DIR MLP_X.npy");
  WeightsFile weights(argv[1]);
  kiln::Tensor x =
      readInput(argv[2], kiln::DType::F32, tiny_mlp::kInputNumel_x);
  // Weights 0 and 1 are ln.weight and ln.bias (tiny_mlp.h lists them).
  if (std::string(tiny_mlp_weight_name(0)) != "ln.weight" ||
      std::string(tiny_mlp_weight_name(1)) != "ln.bias")
    fail("the package's first weights are not ln.weight and ln.bias");
  const float *scale = reinterpret_cast<const float *>(
      weights.data + tiny_mlp::kWeightOffsets[0]);
  const float *bias = reinterpret_cast<const float *>(
      weights.data + tiny_mlp::kWeightOffsets[1]);

  kiln::Shape shape = {tiny_mlp::kInputShape_x[0], tiny_mlp::kInputShape_x[1]};
  std::vector<float> y(x.numel());
  tiny_mlp_k0_layer_normalization(x.data<float>(), scale, bias, y.data());

  // The reference kernel on the same operands.
  int64_t width = shape[1];
  kiln::Tensor scaleT = kiln::Tensor::empty(kiln::DType::F32, {width});
  kiln::Tensor biasT = kiln::Tensor::empty(kiln::DType::F32, {width});
  std::copy(scale, scale + width, scaleT.data<float>());
  std::copy(bias, bias + width, biasT.data<float>());
  kiln::Attributes attrs;
  attrs.set("axis", int64_t(-1));
  attrs.set("epsilon", 1e-5);
  std::vector<kiln::Tensor> out(1);
  if (kiln::Status s = kiln::Dispatcher::global().call(
          "layer_norm", {x.reshape(shape), scaleT, biasT}, attrs, out);
      !s)
    fail("the reference layer_norm: " + s.message());
  kiln::Tensor got = kiln::Tensor::empty(kiln::DType::F32, shape);
  std::copy(y.begin(), y.end(), got.data<float>());
  if (kiln::Status s = kiln::compareTensors(
          got, out[0].contiguous(), kiln::defaultTolerance(kiln::DType::F32));
      !s)
    fail("tiny_mlp_k0_layer_normalization differs from the reference: " +
         s.message());
  std::printf("tiny_mlp_k0_layer_normalization: %s matches the reference "
              "kernel\n",
              got.typeString().c_str());
  return 0;
}
