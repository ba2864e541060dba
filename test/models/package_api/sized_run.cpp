//===- sized_run.cpp - A package for a range of sizes, from C++ ----------===//
//
// This file implements the test that runs the tiny MLP compiled without
// --dim (one package for batch 1..64, docs/dynamic-shapes.md) through its
// header alone: tiny_mlp::run with the batch of each input file, each
// output checked against the reference runtime's; a batch outside the
// range and a null `sizes` are refused with a message.
//
//   usage: sized_run MLP_DIR X1.npy REF1.npy [Xn.npy REFn.npy]...
//
//===----------------------------------------------------------------------===//

#include "PackageFiles.h"
#include "tiny_mlp.h"

#include <cstring>

using namespace package_api;

int main(int argc, char **argv) {
  if (argc < 4 || argc % 2 != 0)
    fail("usage: sized_run MLP_DIR X1.npy REF1.npy [Xn.npy REFn.npy]...");
  char err[512] = {0};
  if (tiny_mlp_num_size_symbols() != 1 ||
      std::strcmp(tiny_mlp_size_symbol_name(0), "batch") != 0 ||
      tiny_mlp_size_symbol_min(0) != 1 || tiny_mlp_size_symbol_max(0) != 64)
    fail("the package does not report the size symbol batch in 1..64");
  WeightsFile weights(argv[1]);
  kiln_model *model = nullptr;
  if (tiny_mlp::createFromWeightsFile(weights.data, &model, err, sizeof(err)))
    fail(err);
  // One arena of the bound's size serves every batch.
  std::vector<unsigned char> storage(tiny_mlp::kArenaBytes + 64);
  void *arena = storage.data() +
                (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  for (int a = 2; a + 1 < argc; a += 2) {
    kiln::Expected<kiln::Tensor> x = kiln::readNpy(argv[a]);
    if (!x)
      fail(x.status().message());
    int64_t batch = x->shape()[0];
    std::vector<float> y(batch * 16);
    tiny_mlp::Inputs in;
    kiln::Tensor xc = x->contiguous();
    in.x = xc.data<float>();
    tiny_mlp::Outputs out;
    out.y = y.data();
    if (tiny_mlp::run(model, &batch, in, out, arena, err, sizeof(err)))
      fail(err);
    std::string what = "tiny_mlp::run at batch " + std::to_string(batch);
    expectReference(what.c_str(), y.data(), {batch, 16}, argv[a + 1]);
  }

  // Refused: a batch outside 1..64, no sizes, and the unsized entry.
  int64_t tooLarge = 65;
  std::vector<float> buffer(65 * 16);
  tiny_mlp::Inputs in;
  in.x = buffer.data();
  tiny_mlp::Outputs out;
  out.y = buffer.data();
  const char *expected[] = {"the size 'batch' is 65, outside the range 1..64",
                            "sizes is null",
                            "the package is compiled for ranges of sizes"};
  for (int c = 0; c < 3; ++c) {
    err[0] = 0;
    const void *inputs[] = {buffer.data()};
    void *outputs[] = {buffer.data()};
    int rc = c == 0   ? tiny_mlp::run(model, &tooLarge, in, out, arena, err,
                                      sizeof(err))
             : c == 1 ? tiny_mlp::run(model, nullptr, in, out, arena, err,
                                      sizeof(err))
                      : tiny_mlp_run(model, inputs, outputs, arena, err,
                                     sizeof(err));
    if (rc == 0 || !std::strstr(err, expected[c]))
      fail(std::string("expected an error containing '") + expected[c] +
           "', got '" + err + "'");
    std::printf("refused: %s\n", err);
  }
  tiny_mlp_destroy(model);
  return 0;
}
