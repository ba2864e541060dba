//===- ConcurrentRunner.cpp - kiln-runner's concurrency check -------------===//
//
// This file implements kiln-runner --threads N --iterations M: N threads
// share one kiln::Model (its arenas come from the model's pool, one per
// concurrent run) and each runs it M times on the same inputs; every output
// of every run is compared byte for byte with the reference run's. Generated
// kernels are deterministic (no atomics in reductions), so any difference
// is a race: two runs sharing scratch memory, a weight written during a
// run, a library handle used by two threads at once.
//
//===----------------------------------------------------------------------===//

#include "ConcurrentRunner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

namespace {

/// True when `a` and `b` hold the same bytes (both contiguous CPU tensors).
bool bitIdentical(const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return false;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return a.nbytes() == 0 ||
         std::memcmp(ca.rawData(), cb.rawData(), ca.nbytes()) == 0;
}

} // namespace

int runConcurrently(Model &model, const std::string &dir,
                    const NamedTensors &inputs, const NamedTensors &reference,
                    int threads, int runs) {
  std::atomic<long long> mismatches{0}, failures{0};
  std::mutex report;
  std::vector<std::vector<double>> times(threads);
  auto worker = [&](int index) {
    for (int r = 0; r < runs; ++r) {
      auto start = std::chrono::steady_clock::now();
      Expected<NamedTensors> out = model.run(inputs);
      times[index].push_back(std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - start)
                                 .count());
      if (!out) {
        if (failures++ == 0) {
          std::lock_guard<std::mutex> lock(report);
          std::cerr << "kiln-runner: thread " << index << ", run " << r << ": "
                    << out.status().message() << "\n";
        }
        continue;
      }
      for (size_t i = 0; i < out->size() && i < reference.size(); ++i)
        if (!bitIdentical((*out)[i].second, reference[i].second) &&
            mismatches++ == 0) {
          std::lock_guard<std::mutex> lock(report);
          std::cerr << "kiln-runner: thread " << index << ", run " << r
                    << ": output '" << (*out)[i].first
                    << "' differs from the single-threaded run\n";
        }
    }
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(worker, t);
  for (std::thread &t : pool)
    t.join();
  double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::vector<double> all;
  for (const std::vector<double> &t : times)
    all.insert(all.end(), t.begin(), t.end());
  std::sort(all.begin(), all.end());
  bool identical = mismatches == 0 && failures == 0;
  std::printf("{\"package\": \"%s\", \"threads\": %d, \"runs_per_thread\": "
              "%d, \"identical\": %s, \"mismatches\": %lld, \"failures\": "
              "%lld, \"median_run_ms\": %.4f, \"wall_s\": %.3f}\n",
              dir.c_str(), threads, runs, identical ? "true" : "false",
              (long long)mismatches, (long long)failures,
              all.empty() ? 0.0 : all[all.size() / 2], wall);
  return identical ? 0 : 4;
}

} // namespace kiln
