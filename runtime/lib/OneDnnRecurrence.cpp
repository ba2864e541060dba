//===- OneDnnRecurrence.cpp - GRU and LSTM recurrences on oneDNN ----------===//
//
// This file implements OneDnnRecurrence (OneDnnRecurrence.h), the CPU's
// kiln.gru_recurrence and kiln.lstm_recurrence: the input projection of
// every step is done (kiln-split-recurrent made it one GEMM), so what is
// left is sequential. Each step of each direction is one oneDNN matmul of
// the state [batch, H] by the transposed recurrence weights (reordered
// once, at load, into oneDNN's layout; a GRU without linear_before_reset
// needs a second one, of the reset state, for its h gate), then a loop over
// the batch and hidden units computing the gates in f32 with a rational
// tanh (and sigmoid(x) = (1 + tanh(x / 2)) / 2) that the compiler
// vectorizes. The gate arithmetic follows the reference kernels
// (runtime/kernels/Recurrent.cpp) step for step, sequence lengths and the
// reverse direction included: an entry's steps past its length leave its
// state alone and its y rows zero.
//
//===----------------------------------------------------------------------===//

#include "OneDnnRecurrence.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace kiln {
namespace {

/// tanh as a rational function of x (Eigen's fast float tanh: odd
/// polynomials of degree 13 over 6, inputs clamped to +-7.905, where it
/// reaches 1 in float); no branches, so loops of it vectorize.
inline float fastTanh(float x) {
  const float bound = 7.90531110763549805f;
  x = std::min(std::max(x, -bound), bound);
  float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return x * p / q;
}

inline float fastSigmoid(float x) { return 0.5f + 0.5f * fastTanh(0.5f * x); }

/// `v` clipped to [-limit, limit] (the op's clip, or FLT_MAX without one:
/// no branch in the loops).
inline float clipped(float v, float limit) {
  return std::min(std::max(v, -limit), limit);
}

/// The gate loops are compiled for AVX-512, AVX2 + FMA and baseline x86-64,
/// the best one chosen when the runtime loads (the runtime itself is built
/// for baseline x86-64).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KILN_GATE_CLONES                                                       \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KILN_GATE_CLONES
#endif

/// The calling thread's state and gate buffers, at least `floats` long.
float *threadBuffer(size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats)
    buffer.resize(floats);
  return buffer.data();
}

/// The work of one step of one direction, what its gate loops read.
struct Step {
  const OneDnnRecurrenceDesc &d;
  const OneDnnRecurrenceArgs &a;
  int64_t dir, step;
  bool reverse;

  /// The time entry `b` is at in this step, or -1 past its length.
  int64_t time(int64_t b) const {
    int64_t len = a.lengths ? a.lengths[b] : d.seq;
    if (step >= len)
      return -1;
    return reverse ? len - 1 - step : step;
  }
  /// The projection of entry `b` at time `t` (its gates * H values).
  const float *projection(int64_t t, int64_t b, int64_t gates) const {
    return a.xw + ((t * d.batch + b) * d.directions + dir) * gates * d.hidden;
  }
  /// Entry `b`'s row of y at time `t`, or null.
  float *yRow(int64_t t, int64_t b) const {
    return a.y ? a.y + ((t * d.directions + dir) * d.batch + b) * d.hidden
               : nullptr;
  }
};

/// The clip limit of `d` (FLT_MAX without a clip).
float clipLimit(const OneDnnRecurrenceDesc &d) {
  return d.clip > 0.f ? d.clip : std::numeric_limits<float>::max();
}

/// The z and r gates of a GRU step for entry b (hr: its state product,
/// [3H] or [2H]); z into `z`, the reset state r * h into `rh` (without
/// linear_before_reset) or r into `rh` (with it). The options are 0/1
/// factors, not branches, so the loop vectorizes.
KILN_GATE_CLONES void gruResetGates(const Step &s, const float *x,
                                    const float *hr, const float *rb,
                                    const float *h, float *z, float *rh) {
  const int64_t H = s.d.hidden;
  const float limit = clipLimit(s.d), lbr = s.d.linearBeforeReset;
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    z[j] = fastSigmoid(clipped(x[j] + hr[j] + rb[j], limit));
    float r = fastSigmoid(clipped(x[H + j] + hr[H + j] + rb[H + j], limit));
    rh[j] = r * (lbr + (1.f - lbr) * h[j]);
  }
}

/// The new state of a GRU entry: n = tanh(x_h + product) where product is
/// r * (Rh h + Rb_h) (linear_before_reset) or Rh (r h) + Rb_h; h = (1 - z) n
/// + z h.
KILN_GATE_CLONES void gruUpdate(const Step &s, const float *x, const float *hh,
                                const float *rb, const float *z,
                                const float *rh, float *h) {
  const int64_t H = s.d.hidden;
  const float limit = clipLimit(s.d), lbr = s.d.linearBeforeReset;
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    float product = (lbr * rh[j] + (1.f - lbr)) * (hh[j] + rb[2 * H + j]);
    float n = fastTanh(clipped(x[2 * H + j] + product, limit));
    h[j] = (1.f - z[j]) * n + z[j] * h[j];
  }
}

/// The new state (h, c) of an LSTM entry from its gates' pre-activations x
/// + R h (g, [4H]: i, o, f, c) and the peepholes p [3H].
KILN_GATE_CLONES void lstmUpdate(const Step &s, const float *x, const float *g,
                                 const float *p, float *h, float *c) {
  const int64_t H = s.d.hidden;
  const float limit = clipLimit(s.d), coupled = s.d.inputForget;
#pragma omp simd
  for (int64_t j = 0; j < H; ++j) {
    float gi = fastSigmoid(clipped(x[j] + g[j] + p[j] * c[j], limit));
    float gf = fastSigmoid(
        clipped(x[2 * H + j] + g[2 * H + j] + p[2 * H + j] * c[j], limit));
    gf = coupled * (1.f - gi) + (1.f - coupled) * gf;
    float gc = fastTanh(clipped(x[3 * H + j] + g[3 * H + j], limit));
    float cNew = gf * c[j] + gi * gc;
    float go =
        fastSigmoid(clipped(x[H + j] + g[H + j] + p[H + j] * cNew, limit));
    c[j] = cNew;
    h[j] = go * fastTanh(cNew);
  }
}

/// Hidden units per block of a fused recurrence (one vector of f32 per
/// gate).
constexpr int64_t kUnits = 16;
/// State rows a block's product handles at once (the accumulators: 4 rows x
/// 4 gates x 16 units, 16 AVX-512 registers).
constexpr int64_t kRows = 4;
/// Rows of a block's weights ahead of k that its product prefetches.
constexpr int64_t kPrefetchRows = 16;

/// The products of state rows [b0, b0 + kRows) of `h` (padded with zero
/// rows to a multiple of kRows) by a block's weights `w` ([H][Gates x 16]),
/// each sum over k in order.
template <int64_t Gates>
inline __attribute__((always_inline)) void
blockProduct(int64_t H, int64_t b0, const float *w, const float *h,
             float (&acc)[kRows][Gates * kUnits]) {
  constexpr int64_t G = Gates * kUnits;
  for (int64_t r = 0; r < kRows; ++r)
#pragma omp simd
    for (int64_t j = 0; j < G; ++j)
      acc[r][j] = 0.f;
  for (int64_t k = 0; k < H; ++k) {
    const float *wk = w + k * G;
    for (int64_t line = 0; line < G; line += 16)
      __builtin_prefetch(wk + kPrefetchRows * G + line);
    for (int64_t r = 0; r < kRows; ++r) {
      const float hk = h[(b0 + r) * H + k];
#pragma omp simd
      for (int64_t j = 0; j < G; ++j)
        acc[r][j] += hk * wk[j];
    }
  }
}

/// One block of a fused LSTM step: the products of state rows [b0, b0 +
/// kRows) by the block's weights `w` (gates i, o, f, c of units u0..), then
/// those rows' gates for the block's units (as lstmUpdate), the new state
/// into `hNew` and `c` and y. Rows past their length copy their state.
KILN_GATE_CLONES void lstmBlock(const Step &s, int64_t u0, int64_t b0,
                                const float *w, const float *h, float *hNew,
                                float *c) {
  const int64_t H = s.d.hidden;
  float acc[kRows][4 * kUnits];
  blockProduct<4>(H, b0, w, h, acc);
  const float limit = clipLimit(s.d), coupled = s.d.inputForget;
  const float *p = s.a.bias + s.dir * 3 * H + u0;
  for (int64_t r = 0; r < kRows && b0 + r < s.d.batch; ++r) {
    const int64_t b = b0 + r;
    float *hb = hNew + b * H + u0, *cb = c + b * H + u0;
    const int64_t t = s.time(b);
    if (t < 0) {
      std::memcpy(hb, h + b * H + u0, sizeof(float) * kUnits);
      continue;
    }
    const float *x = s.projection(t, b, 4) + u0;
    const float *g = acc[r];
#pragma omp simd
    for (int64_t j = 0; j < kUnits; ++j) {
      float gi = fastSigmoid(clipped(x[j] + g[j] + p[j] * cb[j], limit));
      float gf = fastSigmoid(clipped(
          x[2 * H + j] + g[2 * kUnits + j] + p[2 * H + j] * cb[j], limit));
      gf = coupled * (1.f - gi) + (1.f - coupled) * gf;
      float gc = fastTanh(clipped(x[3 * H + j] + g[3 * kUnits + j], limit));
      float cNew = gf * cb[j] + gi * gc;
      float go = fastSigmoid(
          clipped(x[H + j] + g[kUnits + j] + p[H + j] * cNew, limit));
      cb[j] = cNew;
      hb[j] = go * fastTanh(cNew);
    }
    if (float *y = s.yRow(t, b))
      std::memcpy(y + u0, hb, sizeof(float) * kUnits);
  }
}

/// One block of a fused GRU step with linear_before_reset (gates z, r, h
/// from one product, as gruResetGates and gruUpdate compute them): the new
/// state of the block's units into `hNew` and y.
KILN_GATE_CLONES void gruBlock(const Step &s, int64_t u0, int64_t b0,
                               const float *w, const float *h, float *hNew,
                               float *) {
  const int64_t H = s.d.hidden;
  float acc[kRows][3 * kUnits];
  blockProduct<3>(H, b0, w, h, acc);
  const float limit = clipLimit(s.d);
  const float *rb = s.a.bias + s.dir * 3 * H + u0;
  for (int64_t r = 0; r < kRows && b0 + r < s.d.batch; ++r) {
    const int64_t b = b0 + r;
    const float *hOld = h + b * H + u0;
    float *hb = hNew + b * H + u0;
    const int64_t t = s.time(b);
    if (t < 0) {
      std::memcpy(hb, hOld, sizeof(float) * kUnits);
      continue;
    }
    const float *x = s.projection(t, b, 3) + u0;
    const float *g = acc[r];
#pragma omp simd
    for (int64_t j = 0; j < kUnits; ++j) {
      float z = fastSigmoid(clipped(x[j] + g[j] + rb[j], limit));
      float rg =
          fastSigmoid(clipped(x[H + j] + g[kUnits + j] + rb[H + j], limit));
      float n = fastTanh(clipped(
          x[2 * H + j] + rg * (g[2 * kUnits + j] + rb[2 * H + j]), limit));
      hb[j] = (1.f - z) * n + z * hOld[j];
    }
    if (float *y = s.yRow(t, b))
      std::memcpy(y + u0, hb, sizeof(float) * kUnits);
  }
}

/// The end of direction `dir`: an entry of length 0 ends with zero states
/// (as the reference kernel); the final states h (and c) go to y_h (y_c).
void finishDirection(const OneDnnRecurrenceDesc &d,
                     const OneDnnRecurrenceArgs &a, int64_t dir, float *h,
                     float *c) {
  const int64_t B = d.batch, H = d.hidden, state = B * H;
  for (int64_t b = 0; d.hasLengths && b < B; ++b)
    if (a.lengths[b] == 0) {
      std::fill(h + b * H, h + (b + 1) * H, 0.f);
      std::fill(c + b * H, c + (b + 1) * H, 0.f);
    }
  if (a.yh)
    std::memcpy(a.yh + dir * state, h, sizeof(float) * state);
  if (a.yc && d.lstm)
    std::memcpy(a.yc + dir * state, c, sizeof(float) * state);
}

} // namespace

Status OneDnnRecurrence::create(const OneDnnRecurrenceDesc &d, const void *r,
                                std::unique_ptr<OneDnnRecurrence> &out) {
  if (d.seq < 1 || d.batch < 1 || d.hidden < 1 ||
      (d.directions != 1 && d.directions != 2))
    return Status::error("oneDNN recurrence: bad sizes");
  auto rec = std::unique_ptr<OneDnnRecurrence>(new OneDnnRecurrence());
  rec->desc_ = d;
  const int64_t H = d.hidden, gates = d.lstm ? 4 : 3;
  // R [D, gates * H, H] row major: each direction's product h R^T reads R
  // as B transposed ([n, k] = [gates * H, H]).
  auto product = [&](int64_t dir, int64_t firstGate, int64_t count) {
    OneDnnMatmulDesc m;
    m.m = d.batch, m.k = H, m.n = count * H;
    m.transB = true, m.packB = d.packR;
    const float *w = d.packR ? static_cast<const float *>(r) +
                                   (dir * gates + firstGate) * H * H
                             : nullptr;
    return rec->products_.addMatmul(m, w);
  };
  if ((d.lstm || d.linearBeforeReset) && d.packR && H % kUnits == 0) {
    // R [D, gates * H, H] into blocks of kUnits hidden units: block q's
    // element (k, gate * kUnits + u) is R[dir, gate * H + q * kUnits + u, k].
    const float *rw = static_cast<const float *>(r);
    rec->blocks_.resize(static_cast<size_t>(d.directions * gates * H * H));
    float *out = rec->blocks_.data();
    for (int64_t dir = 0; dir < d.directions; ++dir)
      for (int64_t q = 0; q < H / kUnits; ++q)
        for (int64_t k = 0; k < H; ++k)
          for (int64_t gate = 0; gate < gates; ++gate)
            for (int64_t u = 0; u < kUnits; ++u)
              *out++ = rw[((dir * gates + gate) * H + q * kUnits + u) * H + k];
  }
  bool twoProducts = !d.lstm && !d.linearBeforeReset;
  for (int64_t dir = 0; dir < d.directions && rec->blocks_.empty(); ++dir) {
    Status s = twoProducts ? product(dir, 0, 2) : product(dir, 0, gates);
    if (s && twoProducts)
      s = product(dir, 2, 1);
    if (!s)
      return s;
  }
  out = std::move(rec);
  return Status::ok();
}

Status OneDnnRecurrence::run(const OneDnnRecurrenceArgs &a) const {
  const OneDnnRecurrenceDesc &d = desc_;
  const int64_t B = d.batch, H = d.hidden, gates = d.lstm ? 4 : 3;
  if (!a.xw || !a.bias || !a.h0 || (d.lstm && !a.c0) || (!d.packR && !a.r) ||
      (d.hasLengths && !a.lengths))
    return Status::error("oneDNN recurrence: an operand is missing");
  for (int64_t b = 0; d.hasLengths && b < B; ++b)
    if (a.lengths[b] < 0 || a.lengths[b] > d.seq)
      return Status::error("sequence_lens[" + std::to_string(b) +
                           "] = " + std::to_string(a.lengths[b]) +
                           " is outside [0, " + std::to_string(d.seq) + "]");
  if (!blocks_.empty())
    return runFused(a);
  // The state h (and c), the products g [B, gates * H], the GRU's z and
  // reset values [B, H] and its h gate's product [B, H].
  const int64_t state = B * H;
  float *buffer = threadBuffer(static_cast<size_t>(state * (5 + gates)));
  float *h = buffer, *c = h + state, *g = c + state, *z = g + gates * state,
        *rh = z + state, *hh = rh + state;
  if (a.y && d.hasLengths)
    std::memset(a.y, 0, sizeof(float) * d.seq * d.directions * state);
  bool twoProducts = !d.lstm && !d.linearBeforeReset;
  size_t perDirection = twoProducts ? 2 : 1;
  for (int64_t dir = 0; dir < d.directions; ++dir) {
    std::memcpy(h, a.h0 + dir * state, sizeof(float) * state);
    if (d.lstm)
      std::memcpy(c, a.c0 + dir * state, sizeof(float) * state);
    const float *bias = a.bias + dir * 3 * H;
    size_t first = dir * perDirection;
    // The direction's weights of each product, when they are not packed.
    const float *r = d.packR ? nullptr : a.r + dir * gates * H * H;
    const float *rhWeights = r ? r + 2 * H * H : nullptr;
    for (int64_t step = 0; step < d.seq; ++step) {
      Step s{d, a, dir, step, d.reverse || dir == 1};
      Status st = products_.run(first, h, r, nullptr, nullptr, g);
      if (!st)
        return st;
      const int64_t width = twoProducts ? 2 * H : gates * H;
      if (!d.lstm) {
        for (int64_t b = 0; b < B; ++b)
          if (int64_t t = s.time(b); t >= 0)
            gruResetGates(s, s.projection(t, b, 3), g + b * width, bias,
                          h + b * H, z + b * H, rh + b * H);
        if (twoProducts) {
          st = products_.run(first + 1, rh, rhWeights, nullptr, nullptr, hh);
          if (!st)
            return st;
        }
      }
      for (int64_t b = 0; b < B; ++b) {
        int64_t t = s.time(b);
        if (t < 0)
          continue;
        const float *x = s.projection(t, b, gates);
        if (d.lstm)
          lstmUpdate(s, x, g + b * width, bias, h + b * H, c + b * H);
        else
          gruUpdate(s, x, twoProducts ? hh + b * H : g + b * width + 2 * H,
                    bias, z + b * H, rh + b * H, h + b * H);
        if (float *y = s.yRow(t, b))
          std::memcpy(y, h + b * H, sizeof(float) * H);
      }
    }
    finishDirection(d, a, dir, h, c);
  }
  return Status::ok();
}

/// A fused recurrence (an LSTM, or a GRU with linear_before_reset): per
/// direction, every step in one OpenMP region, each thread taking a
/// contiguous range of unit blocks (the same split every step, so its c
/// rows stay its own) and, per block, every state row's product and gates
/// (lstmBlock, gruBlock); the new state goes into the other of two h
/// buffers, and a barrier ends the step. Each sum runs over k in order
/// whatever the thread count.
Status OneDnnRecurrence::runFused(const OneDnnRecurrenceArgs &a) const {
  const OneDnnRecurrenceDesc &d = desc_;
  const int64_t B = d.batch, H = d.hidden, blocks = H / kUnits;
  const int64_t gates = d.lstm ? 4 : 3;
  const int64_t rows = (B + kRows - 1) / kRows * kRows, state = B * H;
  auto block = d.lstm ? lstmBlock : gruBlock;
  // Two h buffers of `rows` rows (the padding rows stay zero) and c.
  float *buffer = threadBuffer(static_cast<size_t>(3 * rows * H));
  float *hBuf[2] = {buffer, buffer + rows * H}, *c = buffer + 2 * rows * H;
  if (a.y && d.hasLengths)
    std::memset(a.y, 0, sizeof(float) * d.seq * d.directions * state);
  int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  threads = static_cast<int>(std::min<int64_t>(threads, blocks));
  for (int64_t dir = 0; dir < d.directions; ++dir) {
    std::memset(buffer, 0, sizeof(float) * 2 * rows * H);
    std::memcpy(hBuf[0], a.h0 + dir * state, sizeof(float) * state);
    if (d.lstm)
      std::memcpy(c, a.c0 + dir * state, sizeof(float) * state);
    const float *w = blocks_.data() + dir * gates * H * H;
#pragma omp parallel num_threads(threads)
    {
      const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
      const int64_t q0 = blocks * t / n, q1 = blocks * (t + 1) / n;
      for (int64_t step = 0; step < d.seq; ++step) {
        Step s{d, a, dir, step, d.reverse || dir == 1};
        const float *h = hBuf[step % 2];
        float *hNew = hBuf[(step + 1) % 2];
        for (int64_t q = q0; q < q1; ++q)
          for (int64_t b0 = 0; b0 < B; b0 += kRows)
            block(s, q * kUnits, b0, w + q * H * gates * kUnits, h, hNew, c);
#pragma omp barrier
      }
    }
    float *h = hBuf[d.seq % 2];
    finishDirection(d, a, dir, h, c);
  }
  return Status::ok();
}

} // namespace kiln
