//===- cpu_panel_rows.cpp - The panel GEMM against oneDNN, 1 to 8 rows ----===//
//
// This file implements the measurement behind kiln-lower-cpu's choice of
// the runtime's panel GEMM (runtime/lib/PanelMatmul.cpp, `runsOnPanels` in
// targets/cpu/LowerCpuLibraryCalls.cpp) over oneDNN's matmul for products of
// few rows by a constant matrix (BENCHMARKS.md, issue 20): for each weight
// shape [k, n] (the bench models' classifiers and MLP layers, and sizes
// around the 1 MB threshold) and each row count m = 1..8, the runtime's
// PanelMatmul (compiled in from its source) and a oneDNN matmul with its
// weights packed once in the primitive's layout (as OneDnnPrimitives makes
// them), both with a bias, timed in alternating rounds on the same buffers.
// With `cold` as the argument, 64 MB are written before each timed run, so
// the run reads its weights from memory, as in a model whose other layers
// pass through the caches between two runs of this one; with `l3`, 4 MB
// (more than the cores' L2 caches, less than the L3), as in a model that
// fits the L3; without either the weights stay in whatever cache holds
// them (the L2 when they fit). Prints the median time of each
// (us) and the ratio panels / oneDNN (below 1: the panels are faster), and
// checks that both give the same results.
//
//   g++ -O3 -std=c++17 -fopenmp -Iruntime/lib bench/cpu_panel_rows.cpp \
//     runtime/lib/PanelMatmul.cpp runtime/lib/HugePageMemory.cpp -ldnnl \
//     -o /tmp/panel_rows
//   OMP_NUM_THREADS=1 /tmp/panel_rows [cold|l3]; OMP_NUM_THREADS=2 /tmp/panel_rows [cold|l3]
//
//===----------------------------------------------------------------------===//

#include "PanelMatmul.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <unordered_map>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

double nowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  const bool cold = argc > 1 && std::strcmp(argv[1], "cold") == 0;
  const bool l3 = argc > 1 && std::strcmp(argv[1], "l3") == 0;
  std::vector<char> evict(cold ? 64 << 20 : l3 ? 4 << 20 : 0);
  char stamp = 0;
  // Writes every line of `evict` (nothing when warm).
  auto evictCaches = [&] {
    ++stamp;
    for (size_t i = 0; i < evict.size(); i += 64)
      evict[i] = stamp;
  };
  struct Shape {
    int64_t k, n;
    const char *what;
  };
  const Shape shapes[] = {
      {512, 512, "1 MB, the threshold"},
      {384, 1000, "vit_small's classifier"},
      {768, 768, "a 768 projection"},
      {1280, 1000, "mobilenet_v2/efficientnet_b0's classifier"},
      {2048, 1000, "resnet50's classifier"},
      {1024, 4096, "mlp's first layer"},
      {4096, 1024, "mlp's second layer"},
  };
  const int kRounds = 7, kRunsPerRound = cold ? 6 : 20;
  std::printf("weights %s\n", cold ? "in memory (cold)" : l3 ? "in the L3 (l3)" : "in any cache");
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::printf("%-44s %2s %10s %10s %7s\n", "weights [k, n]", "m", "panels us",
              "oneDNN us", "ratio");
  for (const Shape &shape : shapes) {
    const int64_t k = shape.k, n = shape.n;
    std::vector<float> b(k * n), bias(n), a(8 * k);
    for (float &x : b)
      x = dist(rng);
    for (float &x : bias)
      x = dist(rng);
    for (float &x : a)
      x = dist(rng);
    for (int64_t m = 1; m <= 8; ++m) {
      kiln::PanelMatmul panels(m, n, k, b.data(), /*transB=*/false,
                               /*relu=*/false);
      memory::desc aMd({m, k}, dt::f32, tag::ab),
          bAny({k, n}, dt::f32, tag::any), biasMd({1, n}, dt::f32, tag::ab),
          yMd({m, n}, dt::f32, tag::ab);
      matmul::primitive_desc pd(matmul::desc(aMd, bAny, biasMd, yMd), eng); // oneDNN 2.x
      memory bPlain({{k, n}, dt::f32, tag::ab}, eng, b.data());
      memory bPacked(pd.weights_desc(), eng);
      reorder(bPlain, bPacked).execute(s, bPlain, bPacked);
      memory aMem(aMd, eng, a.data()), biasMem(biasMd, eng, bias.data());
      std::vector<float> yPanels(m * n), yOneDnn(m * n);
      memory yMem(yMd, eng, yOneDnn.data());
      matmul mm(pd);
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, aMem},
                                           {DNNL_ARG_WEIGHTS, bPacked},
                                           {DNNL_ARG_BIAS, biasMem},
                                           {DNNL_ARG_DST, yMem}};
      std::vector<double> tPanels, tOneDnn;
      for (int round = 0; round < kRounds; ++round) {
        for (int i = 0; i < kRunsPerRound; ++i) {
          evictCaches();
          double t0 = nowUs();
          panels.run(a.data(), bias.data(), nullptr, yPanels.data());
          tPanels.push_back(nowUs() - t0);
        }
        for (int i = 0; i < kRunsPerRound; ++i) {
          evictCaches();
          double t0 = nowUs();
          mm.execute(s, args);
          s.wait();
          tOneDnn.push_back(nowUs() - t0);
        }
      }
      double worst = 0;
      for (int64_t i = 0; i < m * n; ++i)
        worst = std::max(worst, (double)std::fabs(yPanels[i] - yOneDnn[i]));
      if (worst > 1e-3) {
        std::printf("results differ by %g at [%ld, %ld], m = %ld\n", worst,
                    (long)k, (long)n, (long)m);
        return 1;
      }
      double p = median(tPanels), o = median(tOneDnn);
      char name[96];
      std::snprintf(name, sizeof(name), "[%ld, %ld] %s", (long)k, (long)n,
                    shape.what);
      std::printf("%-44s %2ld %10.1f %10.1f %7.2f\n", m == 1 ? name : "",
                  (long)m, p, o, p / o);
      std::fflush(stdout);
    }
  }
}
