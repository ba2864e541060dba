//===- PackageFiles.h - What the package API tests share --------*- C++ -*-===//
//
// This file implements the helpers of the package API test programs
// (two_packages.cpp, single_kernel.cpp, single_kernel_cuda.cpp): reading a
// package's weights.bin into aligned memory, reading .npy files, comparing
// with the reference runtime's output and with its layer_norm kernel, with
// messages that name the file.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_PACKAGE_API_PACKAGEFILES_H
#define KILN_TEST_PACKAGE_API_PACKAGEFILES_H

#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/TensorCompare.h"
#include "kiln/runtime/TensorIO.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace package_api {

/// Prints `message` and exits with status 1.
[[noreturn]] inline void fail(const std::string &message) {
  std::fprintf(stderr, "package-api test: error: %s\n", message.c_str());
  std::exit(1);
}

/// A package's weights.bin in 64-byte aligned memory.
struct WeightsFile {
  std::vector<char> storage;
  const char *data = nullptr;

  explicit WeightsFile(const std::string &package) {
    std::string path = package + "/weights.bin";
    std::ifstream in(path, std::ios::binary);
    if (!in)
      fail("cannot read " + path);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    storage.resize(bytes.size() + 64);
    char *aligned = storage.data();
    aligned += (64 - reinterpret_cast<uintptr_t>(aligned) % 64) % 64;
    std::copy(bytes.begin(), bytes.end(), aligned);
    data = aligned;
  }
};

/// The f32 weight `wanted` inside `file`, found by the package's
/// <name>_weight_name (`nameOf`) and the header's kWeightOffsets.
inline const float *weightNamed(const WeightsFile &file,
                                const char *(*nameOf)(int),
                                const int64_t *offsets, int count,
                                const std::string &wanted) {
  for (int i = 0; i < count; ++i)
    if (nameOf(i) && wanted == nameOf(i) && offsets[i] >= 0)
      return reinterpret_cast<const float *>(file.data + offsets[i]);
  fail("the package has no weight '" + wanted + "' in weights.bin");
}

/// A .npy file as a contiguous tensor of `dtype` and `numel` elements.
inline kiln::Tensor readInput(const std::string &path, kiln::DType dtype,
                              int64_t numel) {
  kiln::Expected<kiln::Tensor> t = kiln::readNpy(path);
  if (!t)
    fail(t.status().message());
  kiln::Tensor c = t->contiguous();
  if (c.dtype() != dtype || c.numel() != numel)
    fail(path + ": is " + c.typeString() + ", not the " +
         std::to_string(numel) + " elements the package takes");
  return c;
}

/// Checks `actual` (`numel` floats of shape `shape`) against the reference
/// runtime's output in `referencePath`.
inline void expectReference(const char *what, const float *actual,
                            const kiln::Shape &shape,
                            const std::string &referencePath) {
  kiln::Tensor expected =
      readInput(referencePath, kiln::DType::F32, kiln::numElements(shape));
  kiln::Tensor got = kiln::Tensor::empty(kiln::DType::F32, shape);
  std::copy(actual, actual + got.numel(), got.data<float>());
  kiln::Status s = kiln::compareTensors(
      got, expected.reshape(shape), kiln::defaultTolerance(kiln::DType::F32));
  if (!s)
    fail(std::string(what) + " differs from " + referencePath + ": " +
         s.message());
  std::printf("%s: %s matches the reference runtime\n", what,
              got.typeString().c_str());
}

/// Checks `y` (the output of the tiny MLP's layer-norm kernel, `what`)
/// against the runtime's reference kernel on the same operands: x of
/// `shape`, ln.weight `scale` and ln.bias `bias` of its last dim, epsilon
/// 1e-5 as the model says.
inline void expectLayerNorm(const char *what, const std::vector<float> &y,
                            const kiln::Tensor &x, const float *scale,
                            const float *bias, const kiln::Shape &shape) {
  int64_t width = shape.back();
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
    fail(std::string(what) + " differs from the reference: " + s.message());
  std::printf("%s: %s matches the reference kernel\n", what,
              got.typeString().c_str());
}

} // namespace package_api

#endif // KILN_TEST_PACKAGE_API_PACKAGEFILES_H
