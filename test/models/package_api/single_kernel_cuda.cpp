//===- single_kernel_cuda.cpp - A CUDA package's kernel called from C++ --===//
//
// This file implements the GPU test of a CUDA package used as a library
// (scripts/gpu/pack.sh builds it against `kiln compile --target cuda` of the
// tiny MLP; gpu-pack/run.sh package-api runs it). First one generated
// kernel alone: tiny_mlp_k0_layer_normalization, its CUfunction loaded with
// kiln_cuda_load_kernel from the package's kernels.cubin, launched on
// device copies of the input and of ln.weight / ln.bias, checked against the
// runtime's reference kernel on the host. Then the whole model through the
// header's helpers, without kiln::Model: tiny_mlp::create (device weights,
// kernels loaded from the cubin) and tiny_mlp::run on the default stream,
// checked against the reference runtime's output.
//
//   usage: single_kernel_cuda MLP_DIR MLP_X.npy MLP_REF.npy
//
//===----------------------------------------------------------------------===//

#include "PackageFiles.h"
#include "tiny_mlp.h"

#include "kiln/runtime/Cuda.h"

using namespace package_api;

namespace {

/// `bytes` bytes of device memory (freed when the process exits).
void *deviceBuffer(size_t bytes) {
  kiln::Expected<void *> d = kiln::cuda::allocate(bytes ? bytes : 1);
  if (!d)
    fail(d.status().message());
  return *d;
}

/// A device copy of `bytes` host bytes.
void *toDevice(const void *host, size_t bytes) {
  void *d = deviceBuffer(bytes);
  if (kiln::Status s =
          kiln::cuda::copy(d, host, bytes, kiln::cuda::CopyKind::HostToDevice);
      !s)
    fail(s.message());
  return d;
}

/// `count` floats copied back from the device.
std::vector<float> fromDevice(const void *device, size_t count) {
  std::vector<float> host(count);
  if (kiln::Status s =
          kiln::cuda::copy(host.data(), device, count * sizeof(float),
                           kiln::cuda::CopyKind::DeviceToHost);
      !s)
    fail(s.message());
  return host;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4)
    fail("usage: single_kernel_cuda MLP_DIR MLP_X.npy MLP_REF.npy");
  std::string package = argv[1], cubin = package + "/kernels.cubin";
  char err[512] = {0};
  if (std::string(tiny_mlp_target()) != "cuda")
    fail(package + " is not a CUDA package");
  WeightsFile weights(package);
  kiln::Tensor x =
      readInput(argv[2], kiln::DType::F32, tiny_mlp::kInputNumel_x);
  kiln::Shape shape = {tiny_mlp::kInputShape_x[0], tiny_mlp::kInputShape_x[1]};
  size_t xBytes = x.numel() * sizeof(float);

  // 1. One kernel, alone.
  const float *scale =
      weightNamed(weights, tiny_mlp_weight_name, tiny_mlp::kWeightOffsets,
                  tiny_mlp::kNumWeights, "ln.weight");
  const float *bias =
      weightNamed(weights, tiny_mlp_weight_name, tiny_mlp::kWeightOffsets,
                  tiny_mlp::kNumWeights, "ln.bias");
  void *function = nullptr;
  if (kiln_cuda_load_kernel(cubin.c_str(), "k0_layer_normalization", &function,
                            err, sizeof(err)))
    fail(err);
  void *dx = toDevice(x.data<float>(), xBytes);
  void *dscale = toDevice(scale, shape[1] * sizeof(float));
  void *dbias = toDevice(bias, shape[1] * sizeof(float));
  void *dy = deviceBuffer(xBytes);
  if (tiny_mlp_k0_layer_normalization(function, static_cast<const float *>(dx),
                                      static_cast<const float *>(dscale),
                                      static_cast<const float *>(dbias),
                                      static_cast<float *>(dy),
                                      /*stream=*/nullptr, err, sizeof(err)) ||
      kiln_cuda_stream_synchronize(nullptr, err, sizeof(err)))
    fail(err);
  expectLayerNorm("tiny_mlp_k0_layer_normalization (CUDA)",
                  fromDevice(dy, x.numel()), x, scale, bias, shape);
  // A kernel the cubin lacks is an error naming it.
  void *missing = nullptr;
  if (!kiln_cuda_load_kernel(cubin.c_str(), "no_such_kernel", &missing, err,
                             sizeof(err)) ||
      std::string(err).find("no_such_kernel") == std::string::npos)
    fail("loading a missing kernel did not fail with its name: " +
         std::string(err));

  // 2. The whole model through the header, without kiln::Model.
  std::vector<const void *> deviceWeights(tiny_mlp::kNumWeights);
  for (int i = 0; i < tiny_mlp::kNumWeights; ++i) {
    if (tiny_mlp::kWeightOffsets[i] < 0)
      fail("weight " + std::to_string(i) + " is not in weights.bin");
    const int64_t *dims = tiny_mlp_weight_shape(i);
    int64_t numel = 1;
    for (int d = 0; d < tiny_mlp_weight_rank(i); ++d)
      numel *= dims[d];
    deviceWeights[i] = toDevice(weights.data + tiny_mlp::kWeightOffsets[i],
                                numel * sizeof(float));
  }
  kiln_model *model = nullptr;
  if (tiny_mlp::create(cubin.c_str(), deviceWeights.data(), &model, err,
                       sizeof(err)))
    fail(err);
  void *arena = deviceBuffer(tiny_mlp::kArenaBytes);
  void *out = deviceBuffer(tiny_mlp::kOutputNumel_y * sizeof(float));
  tiny_mlp::Inputs in;
  in.x = static_cast<const float *>(dx);
  tiny_mlp::Outputs outs;
  outs.y = static_cast<float *>(out);
  if (tiny_mlp::run(model, in, outs, arena, /*stream=*/nullptr, err,
                    sizeof(err)) ||
      kiln_cuda_stream_synchronize(nullptr, err, sizeof(err)))
    fail(err);
  expectReference("tiny_mlp y (CUDA, through tiny_mlp.h)",
                  fromDevice(out, tiny_mlp::kOutputNumel_y).data(),
                  {tiny_mlp::kOutputShape_y[0], tiny_mlp::kOutputShape_y[1]},
                  argv[3]);
  tiny_mlp_destroy(model);
  return 0;
}
