//===- cpu_conv1x1_vs_matmul.cpp - A 1x1 convolution as a matmul ----------===//
//
// This file implements a comparison behind BENCHMARKS.md's twenty-third
// session: oneDNN 2.6's 1x1 convolution over NHWC activations (ResNet-50's
// bottleneck shapes, 7x7 to 56x56) against the same product as a matmul
// [H*W, C] x [C, O], both with bias + ReLU post-ops and weights packed once.
// Best of 40 runs after one, one thread, printed twice (the first pass is
// colder). On the Ice Lake machine the second pass: the two within 10% of
// each other everywhere, 7x7 at 126-147 GFLOP/s, the others 147-167: with
// hot weights the 7x7 stage is not slow, in the model (weights from memory)
// it runs at 79-100.
//
//   g++ -O2 -std=c++17 bench/cpu_conv1x1_vs_matmul.cpp -ldnnl -o /tmp/convmm
//   OMP_NUM_THREADS=1 /tmp/convmm
//
//===----------------------------------------------------------------------===//
#include <oneapi/dnnl/dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <functional>
using namespace dnnl;
using dt = memory::data_type; using tag = memory::format_tag;
double bestMs(const std::function<void()> &f, int it) {
  f(); double best = 1e9;
  for (int i = 0; i < it; ++i) { auto t0 = std::chrono::steady_clock::now(); f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()); }
  return best;
}
int main() {
  engine eng(engine::kind::cpu, 0); stream st(eng);
  struct S { int64_t hw, c, o; } shapes[] = {{7, 2048, 512}, {7, 512, 2048}, {14, 1024, 256}, {14, 256, 1024}, {28, 512, 128}, {28, 128, 512}, {56, 256, 64}};
  for (int rep = 0; rep < 2; ++rep)
  for (auto s : shapes) {
    int64_t M = s.hw * s.hw;
    std::vector<float> x(M * s.c, 0.5f), w(s.o * s.c, 0.01f), b(s.o, 0.1f), y(M * s.o);
    post_ops po; po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f); primitive_attr attr; attr.set_post_ops(po);
    // conv
    memory::desc xd({1, s.c, s.hw, s.hw}, dt::f32, tag::nhwc), wd({s.o, s.c, 1, 1}, dt::f32, tag::any), bd({s.o}, dt::f32, tag::a), yd({1, s.o, s.hw, s.hw}, dt::f32, tag::nhwc);
    auto cpd = convolution_forward::primitive_desc(convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct, xd, wd, bd, yd, {1, 1}, {0, 0}, {0, 0}), attr, eng);
    memory wplain({{s.o, s.c, 1, 1}, dt::f32, tag::oihw}, eng, w.data()), wp(cpd.weights_desc(), eng);
    reorder(wplain, wp).execute(st, wplain, wp);
    memory xm(xd, eng, x.data()), bm(bd, eng, b.data()), ym(yd, eng, y.data());
    convolution_forward conv(cpd);
    double tc = bestMs([&] { conv.execute(st, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wp}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, ym}}); }, 40);
    // matmul
    memory::desc ad({M, s.c}, dt::f32, tag::ab), bwd({s.c, s.o}, dt::f32, tag::any), mbd({1, s.o}, dt::f32, tag::ab), myd({M, s.o}, dt::f32, tag::ab);
    auto mpd = matmul::primitive_desc(matmul::desc(ad, bwd, mbd, myd), attr, eng);
    memory bplain({{s.c, s.o}, dt::f32, tag::ba}, eng, w.data()), bp(mpd.weights_desc(), eng);
    reorder(bplain, bp).execute(st, bplain, bp);
    memory am(ad, eng, x.data()), mbm(mbd, eng, b.data()), mym(myd, eng, y.data());
    matmul mm(mpd);
    double tm = bestMs([&] { mm.execute(st, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bp}, {DNNL_ARG_BIAS, mbm}, {DNNL_ARG_DST, mym}}); }, 40);
    double gf = 2.0 * M * s.c * s.o / 1e6;
    printf("%3ldx%-3ld %4ld->%-4ld conv %.3f ms (%3.0f GF/s) %-22s matmul %.3f ms (%3.0f GF/s) %s\n", s.hw, s.hw, s.c, s.o, tc, gf / tc, cpd.impl_info_str(), tm, gf / tm, mpd.impl_info_str());
  }
}
