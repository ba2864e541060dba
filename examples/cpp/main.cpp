//===- main.cpp - Calling a compiled Kiln model from C++ ------------------===//
//
// This file is the C++ example of a Kiln package: it includes the header
// tiny_mlp.h that `kiln compile examples/tiny_mlp.onnx -o DIR --dim batch=4`
// writes, links DIR/libtiny_mlp.so (-ltiny_mlp) and libkiln_runtime.so, reads
// DIR/weights.bin, runs the model on an input read with the runtime's readNpy
// (the bundled examples/tiny_mlp_x.npy), prints the output and, given the
// reference runtime's output (`kiln run ... -o REFDIR` writes REFDIR/y.npy),
// checks that both agree; given a fourth path, it writes the output there as
// .npy (scripts/demo.sh compares it with ONNX Runtime's).
//
//   usage: kiln-example-tiny-mlp PACKAGE_DIR INPUT.npy [REFERENCE.npy|-]
//                                [OUTPUT.npy]
//
//===----------------------------------------------------------------------===//

#include "tiny_mlp.h"

#include "kiln/runtime/TensorCompare.h"
#include "kiln/runtime/TensorIO.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "kiln-example: error: %s\n", message.c_str());
  return 1;
}

/// Reads a whole file into 64-byte aligned memory.
bool readFile(const std::string &path, std::vector<char> &storage,
              char *&aligned) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  storage.assign(bytes.size() + 64, 0);
  aligned = storage.data() +
            (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  std::copy(bytes.begin(), bytes.end(), aligned);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return fail("usage: kiln-example-tiny-mlp PACKAGE_DIR INPUT.npy "
                "[REFERENCE.npy|-] [OUTPUT.npy]");
  std::string package = argv[1];

  // The weights: weights.bin as the package wrote it.
  std::vector<char> weightStorage;
  char *weights = nullptr;
  if (!readFile(package + "/weights.bin", weightStorage, weights))
    return fail("cannot read " + package + "/weights.bin");
  char err[512] = {0};
  kiln_model *model = nullptr;
  if (tiny_mlp::createFromWeightsFile(weights, &model, err, sizeof(err)))
    return fail(err);

  // The input, checked against the model's static shape.
  kiln::Expected<kiln::Tensor> x = kiln::readNpy(argv[2]);
  if (!x)
    return fail(x.status().message());
  kiln::Tensor input = x->contiguous();
  if (input.dtype() != kiln::DType::F32 ||
      input.numel() != tiny_mlp::kInputNumel_x)
    return fail("input must be f32[4, 16], got " + input.typeString());

  // Run: typed inputs and outputs, a caller-owned arena.
  std::vector<float> y(tiny_mlp::kOutputNumel_y);
  alignas(64) static unsigned char arena[tiny_mlp::kArenaBytes + 64];
  tiny_mlp::Inputs in;
  in.x = input.data<float>();
  tiny_mlp::Outputs out;
  out.y = y.data();
  if (tiny_mlp::run(model, in, out, arena, err, sizeof(err)))
    return fail(err);

  std::printf("y: f32[%lld, %lld]\n",
              static_cast<long long>(tiny_mlp::kOutputShape_y[0]),
              static_cast<long long>(tiny_mlp::kOutputShape_y[1]));
  for (int64_t r = 0; r < tiny_mlp::kOutputShape_y[0]; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < tiny_mlp::kOutputShape_y[1]; ++c) {
      float v = y[r * tiny_mlp::kOutputShape_y[1] + c];
      sum += v;
      std::printf("%s%.5f", c ? " " : "  ", v);
    }
    std::printf("   (row sum %.5f)\n", sum);
  }

  kiln::Tensor actual = kiln::Tensor::fromVector<float>(
      y, {tiny_mlp::kOutputShape_y[0], tiny_mlp::kOutputShape_y[1]});
  if (argc > 4) {
    kiln::Status written = kiln::writeNpy(argv[4], actual);
    if (!written)
      return fail(written.message());
  }
  // Against the reference runtime.
  if (argc > 3 && std::string(argv[3]) != "-") {
    kiln::Expected<kiln::Tensor> ref = kiln::readNpy(argv[3]);
    if (!ref)
      return fail(ref.status().message());
    kiln::Status same = kiln::compareTensors(
        actual, *ref, kiln::defaultTolerance(kiln::DType::F32));
    if (!same)
      return fail("the compiled output differs from the reference: " +
                  same.message());
    std::printf("matches the reference runtime\n");
  }
  tiny_mlp_destroy(model);
  return 0;
}
