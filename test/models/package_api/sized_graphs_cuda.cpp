//===- sized_graphs_cuda.cpp - A CUDA range package's graphs, by size -----===//
//
// This file implements the GPU test of a CUDA package compiled for a range of
// batch sizes (the tiny MLP without --dim, docs/dynamic-shapes.md) run
// through kiln::Model with CUDA graphs on, the batch changing from run to
// run: each size's runs warm up, capture and then replay their own graph
// (the graph cache keys on the sizes as well as the addresses), and every
// run's output matches the reference runtime's for its batch.
//
//   usage: sized_graphs_cuda PACKAGE X1.npy REF1.npy [Xn.npy REFn.npy]...
//
//===----------------------------------------------------------------------===//

#include "PackageFiles.h"

#include "kiln/runtime/Model.h"

#include <map>

using namespace package_api;

int main(int argc, char **argv) {
  if (argc < 4 || argc % 2 != 0)
    fail("usage: sized_graphs_cuda PACKAGE X1.npy REF1.npy [Xn.npy "
         "REFn.npy]...");
  kiln::Expected<kiln::Model> model = kiln::Model::load(argv[1]);
  if (!model)
    fail(model.status().message());
  struct Case {
    kiln::Tensor x, reference;
  };
  std::vector<Case> cases;
  for (int a = 2; a + 1 < argc; a += 2) {
    kiln::Expected<kiln::Tensor> x = kiln::readNpy(argv[a]);
    kiln::Expected<kiln::Tensor> ref = kiln::readNpy(argv[a + 1]);
    if (!x || !ref)
      fail(std::string("cannot read ") + argv[a] + " or " + argv[a + 1]);
    cases.push_back({x.take(), ref.take()});
  }
  // Sizes interleaved, three rounds: each size's third run onwards
  // replays its graph while the other sizes keep theirs.
  std::map<int64_t, int> replayed;
  for (int round = 0; round < 3; ++round)
    for (const Case &c : cases) {
      kiln::GraphUse use = kiln::GraphUse::Off;
      kiln::RunOptions options;
      options.graphUse = &use;
      kiln::Expected<kiln::NamedTensors> out =
          model->run({{"x", c.x}}, options);
      if (!out)
        fail(out.status().message());
      int64_t batch = c.x.shape()[0];
      kiln::Status same = kiln::compareTensors(
          out->front().second, c.reference,
          kiln::defaultTolerance(kiln::DType::F32));
      if (!same)
        fail("batch " + std::to_string(batch) + ", round " +
             std::to_string(round) + " (" + kiln::graphUseName(use) +
             "): " + same.message());
      replayed[batch] += use == kiln::GraphUse::Replayed;
      std::printf("batch %lld, round %d: %s, matches the reference runtime\n",
                  static_cast<long long>(batch), round,
                  kiln::graphUseName(use));
    }
  for (const auto &[batch, count] : replayed)
    if (count == 0)
      fail("batch " + std::to_string(batch) +
           " never replayed a CUDA graph in three runs");
  return 0;
}
