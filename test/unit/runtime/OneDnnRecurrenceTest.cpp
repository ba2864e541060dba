//===- OneDnnRecurrenceTest.cpp - The CPU's GRU and LSTM recurrences ------===//
//
// This file implements the unit tests of the recurrences of
// kiln::OneDnnPrimitives (what a cpu package's onednn.gru_recurrence and
// onednn.lstm_recurrence calls run): each case runs the same operands through
// the runtime's reference kernels of kiln.gru_recurrence and
// kiln.lstm_recurrence (the oracle, in double precision) and through
// OneDnnPrimitives, with packed and run-time recurrence weights, at one and
// two OpenMP threads: GRUs with and without linear_before_reset, reverse,
// clipped, with sequence lengths (one of them 0); LSTMs bidirectional, with
// peepholes, input_forget and lengths, among them hidden sizes that take the
// fused path (products and gates in blocks of 16 units).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/OneDnn.h"

#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

using namespace kiln;

namespace {

/// Values in [-scale, scale) from a small linear congruential generator.
std::vector<float> noise(size_t n, unsigned seed, float scale) {
  std::vector<float> v(n);
  unsigned s = seed * 2654435761u + 1;
  for (float &x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / float(1 << 24) * 2.f - 1.f);
  }
  return v;
}

/// One recurrence case: sizes and options.
struct Case {
  bool lstm = false;
  int64_t seq = 5, batch = 3, hidden = 7;
  std::string direction = "forward";
  float clip = 0.f;
  bool linearBeforeReset = false, inputForget = false;
  std::vector<int32_t> lengths; ///< empty: all full length
};

void check(const Case &c) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  const int64_t gates = c.lstm ? 4 : 3, H = c.hidden, B = c.batch;
  std::vector<float> xw = noise(c.seq * B * D * gates * H, 1, 1.5f),
                     r = noise(D * gates * H * H, 2, 0.5f),
                     bias = noise(D * 3 * H, 3, 0.5f),
                     h0 = noise(D * B * H, 4, 0.8f),
                     c0 = noise(D * B * H, 5, 0.8f);
  // The reference kernel.
  std::vector<Tensor> in = {Tensor::fromVector(xw, {c.seq, B, D * gates * H}),
                            Tensor::fromVector(r, {D, gates * H, H}),
                            Tensor::fromVector(bias, {D, 3 * H}),
                            Tensor::fromVector(h0, {D, B, H})};
  if (c.lstm)
    in.push_back(Tensor::fromVector(c0, {D, B, H}));
  if (!c.lengths.empty())
    in.push_back(Tensor::fromVector(c.lengths, {B}));
  Attributes attrs;
  attrs.set("direction", c.direction);
  attrs.set("hidden_size", int64_t(H));
  attrs.set("clip", double(c.clip));
  attrs.set(c.lstm ? "input_forget" : "linear_before_reset",
            int64_t(c.lstm ? c.inputForget : c.linearBeforeReset));
  std::vector<Tensor> want(c.lstm ? 3 : 2);
  Status s = Dispatcher::global().call(
      c.lstm ? "lstm_recurrence" : "gru_recurrence", in, attrs, want);
  INFO(s.message());
  REQUIRE(s.isOk());

  OneDnnRecurrenceDesc d;
  d.lstm = c.lstm, d.seq = c.seq, d.batch = B, d.hidden = H, d.directions = D;
  d.reverse = c.direction == "reverse", d.clip = c.clip;
  d.linearBeforeReset = c.linearBeforeReset, d.inputForget = c.inputForget;
  d.hasLengths = !c.lengths.empty();
  int saved = omp_get_max_threads();
  for (bool packed : {true, false}) {
    d.packR = packed;
    OneDnnPrimitives p;
    REQUIRE(p.addRecurrence(d, packed ? r.data() : nullptr).isOk());
    for (int threads : {1, 2}) {
      INFO("packed " << packed << ", threads " << threads);
      omp_set_num_threads(threads);
      std::vector<float> y(c.seq * D * B * H, -99.f), yh(D * B * H, -99.f),
          yc(D * B * H, -99.f);
      OneDnnRecurrenceArgs a;
      a.xw = xw.data(), a.bias = bias.data(), a.h0 = h0.data();
      a.c0 = c.lstm ? c0.data() : nullptr;
      a.r = packed ? nullptr : r.data();
      a.lengths = c.lengths.empty() ? nullptr : c.lengths.data();
      a.y = y.data(), a.yh = yh.data(), a.yc = c.lstm ? yc.data() : nullptr;
      Status run = p.runRecurrence(0, a);
      INFO(run.message());
      REQUIRE(run.isOk());
      for (size_t k = 0; k < want.size(); ++k) {
        const std::vector<float> &got = k == 0 ? y : k == 1 ? yh : yc;
        REQUIRE(want[k].numel() == int64_t(got.size()));
        const float *expected = want[k].data<float>();
        for (size_t i = 0; i < got.size(); ++i) {
          INFO("result " << k << ", element " << i);
          REQUIRE(got[i] == Approx(expected[i]).margin(2e-5).epsilon(1e-4));
        }
      }
    }
  }
  omp_set_num_threads(saved);
}

} // namespace

TEST_CASE("oneDNN GRU recurrence matches the reference kernel",
          "[onednn][recurrent]") {
  Case c;
  SECTION("linear_before_reset, as PyTorch exports") {
    c.linearBeforeReset = true;
    check(c);
  }
  SECTION("the reset gate before the product, reverse, clipped") {
    c.direction = "reverse", c.clip = 1.25f;
    check(c);
  }
  SECTION("bidirectional with sequence lengths, one of them 0") {
    c.direction = "bidirectional", c.lengths = {5, 0, 3};
    check(c);
  }
  // linear_before_reset and hidden sizes that are multiples of 16: packed,
  // the product and gates fused in blocks of 16 units.
  SECTION("fused blocks: linear_before_reset, 5 rows, clipped") {
    c.linearBeforeReset = true, c.hidden = 48, c.batch = 5, c.clip = 1.5f;
    check(c);
  }
  SECTION("fused blocks: bidirectional, lengths") {
    c.linearBeforeReset = true, c.hidden = 32, c.direction = "bidirectional";
    c.lengths = {5, 0, 3};
    check(c);
  }
  SECTION("without linear_before_reset a multiple of 16 is not fused") {
    c.hidden = 32, c.direction = "reverse";
    check(c);
  }
}

TEST_CASE("oneDNN LSTM recurrence matches the reference kernel",
          "[onednn][recurrent]") {
  Case c;
  c.lstm = true;
  SECTION("forward, peepholes") { check(c); }
  SECTION("bidirectional, lengths, input_forget, clipped") {
    c.direction = "bidirectional", c.lengths = {2, 5, 0};
    c.inputForget = true, c.clip = 2.f;
    check(c);
  }
  SECTION("reverse, a larger state") {
    c.direction = "reverse", c.hidden = 40, c.batch = 2;
    check(c);
  }
  // Hidden sizes that are multiples of 16: packed, the products and gates
  // fused in blocks of 16 units (two blocks, three for two threads to
  // split unevenly; 5 rows: one block of 4 and a padded one).
  SECTION("fused blocks: forward, peepholes, 5 rows") {
    c.hidden = 32, c.batch = 5;
    check(c);
  }
  SECTION("fused blocks: bidirectional, lengths, input_forget, clipped") {
    c.hidden = 48, c.batch = 5, c.direction = "bidirectional";
    c.lengths = {2, 5, 0, 1, 5};
    c.inputForget = true, c.clip = 2.f;
    check(c);
  }
  SECTION("fused blocks: reverse, one row") {
    c.hidden = 16, c.batch = 1, c.direction = "reverse", c.seq = 7;
    check(c);
  }
}

TEST_CASE("oneDNN: a recurrence that was not created is an error",
          "[onednn][recurrent]") {
  OneDnnPrimitives p;
  OneDnnRecurrenceArgs a;
  Status s = p.runRecurrence(0, a);
  REQUIRE_FALSE(s.isOk());
  REQUIRE(s.message().find("was not created") != std::string::npos);
}
