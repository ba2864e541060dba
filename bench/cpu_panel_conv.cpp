//===- cpu_panel_conv.cpp - The panel convolution against oneDNN ----------===//
//
// This file implements the harness behind kiln-lower-cpu's choice of the
// runtime's panel convolution (runtime/lib/PanelConv.cpp,
// `runsConvOnPanels` in targets/cpu/LowerCpuLibraryCalls.cpp) over oneDNN's
// direct convolution for few output pixels by large constant weights
// (BENCHMARKS.md, issue 20): ResNet-50's 7x7-stage shapes (NHWC, batch 1,
// ReLU after, weights OHWI; two of them strided from 14x14), each by the
// runtime's PanelConv (compiled in from its source) and by a oneDNN
// convolution with its weights packed once in the primitive's layout (as
// OneDnnPrimitives makes them, on huge pages too), in alternating runs on
// the same buffers. Before each timed run 64 MB are written and the input
// read again, so that the weights come from memory and the activations
// from the caches, as in a model of 100 MB of weights. Prints the median
// of 30 runs of each (ms, GFLOP/s) and the largest difference between the
// two results; then the machine's one-core read bandwidth over 256 MB with
// and without huge pages (the bound on streaming the weights).
//
//   g++ -O3 -std=c++17 -fopenmp -Iruntime/lib bench/cpu_panel_conv.cpp \
//     runtime/lib/PanelConv.cpp runtime/lib/HugePageMemory.cpp -ldnnl \
//     -o /tmp/panel_conv
//   OMP_NUM_THREADS=1 /tmp/panel_conv
//
//===----------------------------------------------------------------------===//

#include "HugePageMemory.h"
#include "PanelConv.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

using namespace dnnl;
using dt = memory::data_type;
using tag = memory::format_tag;

namespace {

std::vector<float> junk(size_t(16) << 20);

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

/// The median of `runs` timed runs of each of `fs`, alternating, each after
/// 64 MB written and `hot` read.
std::vector<double> medians(const std::vector<std::function<void()>> &fs,
                            const std::vector<float> &hot, int runs) {
  std::vector<std::vector<double>> times(fs.size());
  for (auto &f : fs)
    f();
  for (int r = 0; r < runs; ++r)
    for (size_t i = 0; i < fs.size(); ++i) {
      for (size_t j = 0; j < junk.size(); j += 16)
        junk[j] += 1.f;
      volatile float sink = 0;
      for (size_t j = 0; j < hot.size(); j += 16)
        sink = sink + hot[j];
      auto t0 = std::chrono::steady_clock::now();
      fs[i]();
      times[i].push_back(msSince(t0));
    }
  std::vector<double> out;
  for (auto &t : times) {
    std::sort(t.begin(), t.end());
    out.push_back(t[t.size() / 2]);
  }
  return out;
}

/// One-core read bandwidth over 256 MB, GB/s (best of 5).
double readBandwidth(bool huge) {
  size_t n = size_t(64) << 20;
  std::unique_ptr<float, decltype(&std::free)> p(
      static_cast<float *>(huge ? kiln::allocateHugePageMemory(n * 4)
                                : std::aligned_alloc(64, n * 4)),
      std::free);
  std::fill(p.get(), p.get() + n, 1.f);
  double best = 1e9;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i < n; i += 4) {
      s0 += p.get()[i], s1 += p.get()[i + 1];
      s2 += p.get()[i + 2], s3 += p.get()[i + 3];
    }
    volatile float sink = s0 + s1 + s2 + s3;
    (void)sink;
    best = std::min(best, msSince(t0));
  }
  return n * 4 / best / 1e6;
}

} // namespace

int main() {
  engine eng(engine::kind::cpu, 0);
  stream st(eng);
  struct Shape {
    int64_t h, c, o, k, stride;
  } shapes[] = {{7, 2048, 512, 1, 1}, {7, 512, 2048, 1, 1},
                {14, 1024, 2048, 1, 2}, {7, 512, 512, 3, 1},
                {14, 512, 512, 3, 2}};
  std::printf("shape | oneDNN ms (GFLOP/s) | panels ms (GFLOP/s) | panels / "
              "oneDNN | max difference\n");
  for (const Shape &s : shapes) {
    const int64_t pad = s.k / 2, oh = (s.h + 2 * pad - s.k) / s.stride + 1;
    const int64_t depth = s.c * s.k * s.k;
    std::vector<float> x(s.h * s.h * s.c), w(s.o * depth), b(s.o),
        y1(oh * oh * s.o), y2(oh * oh * s.o);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i * 7 % 13) / 13.f;
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5) / 500.f;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = 0.01f * static_cast<float>(i % 7);
    post_ops po;
    po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
    primitive_attr attr;
    attr.set_post_ops(po);
    memory::desc xd({1, s.c, s.h, s.h}, dt::f32, tag::nhwc),
        wd({s.o, s.c, s.k, s.k}, dt::f32, tag::any), bd({s.o}, dt::f32, tag::a),
        yd({1, s.o, oh, oh}, dt::f32, tag::nhwc);
    auto pd = convolution_forward::primitive_desc(
        convolution_forward::desc(prop_kind::forward_inference,
                                  algorithm::convolution_direct, xd, wd, bd, yd,
                                  {s.stride, s.stride}, {pad, pad}, {pad, pad}),
        attr, eng);
    std::unique_ptr<void, decltype(&std::free)> packed(
        kiln::allocateHugePageMemory(pd.weights_desc().get_size()), std::free);
    memory wPlain({{s.o, s.c, s.k, s.k}, dt::f32, tag::ohwi}, eng, w.data()),
        wPacked(pd.weights_desc(), eng, packed.get());
    reorder(wPlain, wPacked).execute(st, wPlain, wPacked);
    memory xm(xd, eng, x.data()), bm(bd, eng, b.data()),
        ym(yd, eng, y1.data());
    convolution_forward conv(pd);
    kiln::PanelConv::Geometry g;
    g.batch = 1, g.channels = s.c, g.outChannels = s.o;
    g.inH = g.inW = s.h, g.outH = g.outW = oh;
    g.kernelH = g.kernelW = s.k, g.strideH = g.strideW = s.stride;
    g.padH = g.padW = pad;
    kiln::PanelConv panels(g, w.data(), /*weightsChannelsFirst=*/false,
                           /*relu=*/true);
    std::vector<double> t = medians(
        {[&] {
           conv.execute(st, {{DNNL_ARG_SRC, xm},
                             {DNNL_ARG_WEIGHTS, wPacked},
                             {DNNL_ARG_BIAS, bm},
                             {DNNL_ARG_DST, ym}});
         },
         [&] { panels.run(x.data(), b.data(), nullptr, y2.data()); }},
        x, 30);
    double diff = 0;
    for (size_t i = 0; i < y1.size(); ++i)
      diff = std::max(diff, static_cast<double>(std::fabs(y1[i] - y2[i])));
    const double mflop = 2.0 * oh * oh * depth * s.o / 1e6;
    std::printf("%ldx%ld %ld->%ld %ldx%ld/%ld | %.3f (%.0f) | %.3f (%.0f) | "
                "%.2f | %.1e\n",
                s.h, s.h, s.c, s.o, s.k, s.k, s.stride, t[0], mflop / t[0],
                t[1], mflop / t[1], t[1] / t[0], diff);
  }
  std::printf("read bandwidth, one core, 256 MB: %.1f GB/s (4 KB pages), "
              "%.1f GB/s (huge pages)\n",
              readBandwidth(false), readBandwidth(true));
}
