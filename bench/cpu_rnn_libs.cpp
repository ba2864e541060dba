//===- cpu_rnn_libs.cpp - oneDNN's RNN primitives vs Kiln's split ---------===//
//
// This file implements a micro-benchmark behind the CPU target's recurrent
// layers (BENCHMARKS.md, "CPU: the added models"): one layer of the bench
// taggers (32 steps, batch 4, input and hidden 256) as oneDNN 2.6's own RNN
// primitive (lbr_gru, PyTorch's GRU; vanilla_lstm), its weights reordered
// once into the primitive's layout, against what Kiln compiles it to
// (kiln-split-recurrent): the input projection of all steps as one oneDNN
// matmul with the bias as post-op, then kiln::OneDnnPrimitives's recurrence
// (a oneDNN matmul of the state per step and the vectorized gates). The two
// run in alternating rounds; each figure is the median of the rounds'
// medians, in ms per layer.
//
//   g++ -O2 -std=c++17 -fopenmp bench/cpu_rnn_libs.cpp -Iruntime/include \
//       -Lbuild/runtime -lkiln_runtime -ldnnl -Wl,-rpath,build/runtime \
//       -o /tmp/rnn && OMP_NUM_THREADS=1 /tmp/rnn
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/OneDnn.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

const int64_t T = 32, N = 4, C = 256, H = 256;

double medianMs(const std::function<void()> &f, int iterations) {
  std::vector<double> t;
  for (int i = 0; i < iterations; ++i) {
    auto a = std::chrono::steady_clock::now();
    f();
    auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// oneDNN's own RNN primitive for one layer: a function that runs it.
std::function<void()> onednnLayer(bool lstm, engine &eng, stream &s,
                                  std::vector<float> &x,
                                  std::vector<float> &y) {
  int64_t G = lstm ? 4 : 3, biasGates = lstm ? 4 : 4; // lbr_gru: 4 biases
  auto src = memory::desc({T, N, C}, dt::f32, tag::tnc);
  auto dst = memory::desc({T, N, H}, dt::f32, tag::tnc);
  auto wl = memory::desc({1, 1, C, G, H}, dt::f32, tag::any);
  auto wi = memory::desc({1, 1, H, G, H}, dt::f32, tag::any);
  auto bias = memory::desc({1, 1, biasGates, H}, dt::f32, tag::ldgo);
  auto dir = rnn_direction::unidirectional_left2right;
  auto prop = prop_kind::forward_inference;
  primitive_desc_base pd;
  primitive p;
  if (lstm) {
    auto d =
        lstm_forward::desc(prop, dir, src, memory::desc(), memory::desc(), wl,
                           wi, bias, dst, memory::desc(), memory::desc());
    auto lpd = lstm_forward::primitive_desc(d, eng);
    pd = lpd;
    p = lstm_forward(lpd);
  } else {
    auto d = lbr_gru_forward::desc(prop, dir, src, memory::desc(), wl, wi, bias,
                                   dst, memory::desc());
    auto gpd = lbr_gru_forward::primitive_desc(d, eng);
    pd = gpd;
    p = lbr_gru_forward(gpd);
  }
  // The weights stay alive with the returned function.
  auto data = std::make_shared<std::vector<std::vector<float>>>(
      std::vector<std::vector<float>>{std::vector<float>(C * G * H, 0.01f),
                                      std::vector<float>(H * G * H, 0.01f),
                                      std::vector<float>(biasGates * H, 0.f)});
  std::vector<float> &wlData = (*data)[0], &wiData = (*data)[1],
                     &biasData = (*data)[2];
  auto reorderInto = [&](const memory::desc &want, int64_t in,
                         std::vector<float> &data) {
    memory user({{1, 1, in, G, H}, dt::f32, tag::ldigo}, eng, data.data());
    memory packed(want, eng);
    reorder(user, packed).execute(s, user, packed);
    s.wait();
    return packed;
  };
  memory wlm = reorderInto(pd.query_md(query::weights_md, 0), C, wlData);
  memory wim = reorderInto(pd.query_md(query::weights_md, 1), H, wiData);
  memory bm(bias, eng, biasData.data()), xm(src, eng, x.data()),
      ym(dst, eng, y.data());
  auto args = std::unordered_map<int, memory>{{DNNL_ARG_SRC_LAYER, xm},
                                              {DNNL_ARG_WEIGHTS_LAYER, wlm},
                                              {DNNL_ARG_WEIGHTS_ITER, wim},
                                              {DNNL_ARG_BIAS, bm},
                                              {DNNL_ARG_DST_LAYER, ym}};
  memory::desc scratch = pd.scratchpad_desc();
  if (scratch.get_size())
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratch, eng));
  return [p, args, data, &s] {
    p.execute(s, args);
    s.wait();
  };
}

} // namespace

int main() {
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  for (bool lstm : {false, true}) {
    int64_t G = lstm ? 4 : 3;
    std::vector<float> x(T * N * C, 0.1f), y(T * N * H), xw(T * N * G * H);
    std::vector<float> w(G * H * C, 0.01f), r(G * H * H, 0.01f), wb(G * H, 0.f),
        rb(3 * H, 0.f), h0(N * H, 0.f), yh(N * H), yc(N * H);
    std::function<void()> theirs = onednnLayer(lstm, eng, s, x, y);
    // Kiln: the projection [T * N, C] x W^T (+ bias), then the recurrence.
    kiln::OneDnnPrimitives p;
    kiln::OneDnnMatmulDesc m;
    m.m = T * N, m.k = C, m.n = G * H;
    m.transB = m.packB = true;
    m.epilogue.bias = true;
    kiln::OneDnnRecurrenceDesc d;
    d.lstm = lstm, d.seq = T, d.batch = N, d.hidden = H;
    d.linearBeforeReset = true;
    if (!p.addMatmul(m, w.data()) || !p.addRecurrence(d, r.data()))
      return 1;
    kiln::OneDnnRecurrenceArgs a;
    a.xw = xw.data(), a.bias = rb.data(), a.h0 = h0.data(), a.c0 = h0.data();
    a.y = y.data(), a.yh = yh.data(), a.yc = lstm ? yc.data() : nullptr;
    auto ours = [&] {
      (void)p.run(0, x.data(), nullptr, wb.data(), nullptr, xw.data());
      (void)p.runRecurrence(1, a);
    };
    std::vector<double> a1, b1;
    for (int round = 0; round < 5; ++round) {
      a1.push_back(medianMs(theirs, 30));
      b1.push_back(medianMs(ours, 30));
    }
    std::sort(a1.begin(), a1.end());
    std::sort(b1.begin(), b1.end());
    std::printf("%s layer (T %ld, N %ld, C %ld, H %ld): oneDNN %s primitive "
                "%.3f ms, Kiln's split %.3f ms (ratio %.2f)\n",
                lstm ? "LSTM" : "GRU", (long)T, (long)N, (long)C, (long)H,
                lstm ? "vanilla_lstm" : "lbr_gru", a1[2], b1[2], b1[2] / a1[2]);
  }
  return 0;
}
