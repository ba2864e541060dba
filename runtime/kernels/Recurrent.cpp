//===- Recurrent.cpp - Reference kernels of kiln.lstm and kiln.gru --------===//
//
// This file implements the reference CPU kernels of the recurrent ops with
// ONNX LSTM-14 / GRU-14 semantics and the default activations (sigmoid for
// gates, tanh otherwise): gate orders iofc (LSTM) and zrh (GRU), directions
// forward / reverse / bidirectional, per-batch sequence lengths (a reverse
// pass runs backwards from each entry's last valid step; outputs beyond a
// length are zero in y; y_h / y_c hold the state after the last valid step,
// zero for a length of 0, as in onnxruntime),
// cell clip applied to every activation input, LSTM peepholes (iof) and
// input_forget (f = 1 - i), GRU linear_before_reset, and layout 0
// ([seq, batch, ...]) or 1 ([batch, seq, ...]); and kiln.gru_recurrence /
// kiln.lstm_recurrence, the steps from a precomputed input projection (the
// same step code). Computation is in double; results are stored in the
// input dtype (f32, f64, f16, bf16).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kiln {
namespace {

/// Reads a tensor as doubles (C order).
std::vector<double> toDoubles(const Tensor &t) {
  Tensor c = t.contiguous();
  std::vector<double> v(static_cast<size_t>(c.numel()));
  visitDType(c.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *p = c.data<T>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] =
          static_cast<double>(static_cast<typename ComputeType<T>::type>(p[i]));
  });
  return v;
}

/// A new tensor of `dtype` and `shape` holding `v`.
Tensor fromDoubles(const std::vector<double> &v, DType dtype,
                   const Shape &shape) {
  Tensor t = Tensor::empty(dtype, shape);
  visitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BFloat16>) {
      T *p = t.data<T>();
      for (size_t i = 0; i < v.size(); ++i) {
        if constexpr (std::is_same_v<T, double>)
          p[i] = v[i];
        else
          p[i] = T(static_cast<float>(v[i]));
      }
    }
  });
  return t;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// The dimensions and options shared by lstm and gru.
struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, numDir = 1;
  int64_t layout = 0;
  double clip = 0.0;
  bool reverseOnly = false;
  std::vector<int64_t> lens;

  int64_t xIndex(int64_t t, int64_t b) const {
    return (layout == 0 ? t * batch + b : b * seq + t) * input;
  }
  int64_t yIndex(int64_t t, int64_t d, int64_t b) const {
    return (layout == 0 ? (t * numDir + d) * batch + b
                        : (b * seq + t) * numDir + d) *
           hidden;
  }
  int64_t stateIndex(int64_t d, int64_t b) const {
    return (layout == 0 ? d * batch + b : b * numDir + d) * hidden;
  }
  Shape yShape() const {
    return layout == 0 ? Shape{seq, numDir, batch, hidden}
                       : Shape{batch, seq, numDir, hidden};
  }
  Shape stateShape() const {
    return layout == 0 ? Shape{numDir, batch, hidden}
                       : Shape{batch, numDir, hidden};
  }
  double clipped(double v) const {
    return clip > 0.0 ? std::clamp(v, -clip, clip) : v;
  }
};

Status expectShape(const char *op, const char *name, size_t index,
                   const Tensor &t, const Shape &want) {
  KILN_CHECK(t.defined(), op, ": operand ", index, " (", name,
             ") is absent; every operand must be present");
  KILN_CHECK(t.shape() == want, op, ": operand ", index, " (", name,
             ") has shape ", shapeToString(t.shape()), "; expected ",
             shapeToString(want));
  return Status::ok();
}

/// Reads operand `index`, the sequence lengths [batch], into `dims.lens`
/// (every one in [0, seq]).
Status readLens(const char *op, KernelContext &ctx, size_t index,
                RnnDims &dims) {
  const Tensor &lens = ctx.input(index);
  KILN_RETURN_IF_ERROR(
      expectShape(op, "sequence_lens", index, lens, {dims.batch}));
  KILN_CHECK(!isFloatingPoint(lens.dtype()) && lens.dtype() != DType::Bool, op,
             ": sequence_lens must be an integer tensor, got ",
             lens.typeString());
  dims.lens = lens.toIntVector();
  for (int64_t b = 0; b < dims.batch; ++b)
    KILN_CHECK(dims.lens[b] >= 0 && dims.lens[b] <= dims.seq, op,
               ": sequence_lens[", b, "] = ", dims.lens[b], " is outside [0, ",
               dims.seq, "]");
  return Status::ok();
}

/// Validates x/w/r and the common attributes; `gates` is 4 (lstm) or 3.
Status parseDims(const char *op, KernelContext &ctx, int64_t gates,
                 RnnDims &dims) {
  const Tensor &x = ctx.input(0), &w = ctx.input(1), &r = ctx.input(2);
  KILN_CHECK(x.defined() && w.defined() && r.defined(), op,
             ": x, w and r must be present");
  KILN_CHECK(isFloatingPoint(x.dtype()), op, ": x must be a float tensor, got ",
             x.typeString());
  KILN_CHECK(w.dtype() == x.dtype() && r.dtype() == x.dtype(), op,
             ": w and r must have x's dtype; got x ", x.typeString(), ", w ",
             w.typeString(), ", r ", r.typeString());
  KILN_CHECK(x.rank() == 3, op, ": x must be rank 3, got ", x.typeString());
  KILN_CHECK(w.rank() == 3 && r.rank() == 3, op,
             ": w and r must be rank 3, got ", w.typeString(), " and ",
             r.typeString());
  dims.layout = ctx.attrs.getInt("layout", 0);
  KILN_CHECK(dims.layout == 0 || dims.layout == 1, op, ": layout must be 0 ",
             "or 1, got ", dims.layout);
  std::string direction = ctx.attrs.getString("direction", "forward");
  KILN_CHECK(direction == "forward" || direction == "reverse" ||
                 direction == "bidirectional",
             op, ": direction must be forward, reverse or bidirectional, got '",
             direction, "'");
  dims.numDir = direction == "bidirectional" ? 2 : 1;
  dims.reverseOnly = direction == "reverse";
  dims.seq = dims.layout == 0 ? x.dim(0) : x.dim(1);
  dims.batch = dims.layout == 0 ? x.dim(1) : x.dim(0);
  dims.input = x.dim(2);
  dims.hidden = ctx.attrs.getInt("hidden_size", 0);
  if (dims.hidden <= 0)
    dims.hidden = r.dim(2);
  dims.clip = ctx.attrs.getFloat("clip", 0.0);
  KILN_CHECK(dims.clip >= 0.0, op, ": clip must be >= 0, got ", dims.clip);
  int64_t H = dims.hidden;
  KILN_RETURN_IF_ERROR(
      expectShape(op, "w", 1, w, {dims.numDir, gates * H, dims.input}));
  KILN_RETURN_IF_ERROR(expectShape(op, "r", 2, r, {dims.numDir, gates * H, H}));
  KILN_RETURN_IF_ERROR(
      expectShape(op, "b", 3, ctx.input(3), {dims.numDir, 2 * gates * H}));
  KILN_RETURN_IF_ERROR(readLens(op, ctx, 4, dims));
  KILN_RETURN_IF_ERROR(
      expectShape(op, "initial_h", 5, ctx.input(5), dims.stateShape()));
  for (size_t i = 3; i < ctx.numInputs(); ++i)
    if (i != 4)
      KILN_CHECK(ctx.input(i).dtype() == x.dtype(), op, ": operand ", i,
                 " must have x's dtype ", dtypeName(x.dtype()), ", got ",
                 ctx.input(i).typeString());
  return Status::ok();
}

/// out[j] += sum_k m[j*cols + k] * v[k] for j < rows.
void matVecAdd(const double *m, const double *v, int64_t rows, int64_t cols,
               double *out) {
  for (int64_t j = 0; j < rows; ++j) {
    const double *row = m + j * cols;
    double s = 0.0;
    for (int64_t k = 0; k < cols; ++k)
      s += row[k] * v[k];
    out[j] += s;
  }
}

/// One LSTM step of one batch entry and direction: `gates` holds W x + Wb +
/// Rb of the step (i, o, f, c) and gets R h added; `P` is the direction's
/// peepholes; `h` and `c` are replaced by the new state.
void lstmStep(double *gates, const double *R, const double *P, bool inputForget,
              const RnnDims &dims, int64_t H, std::vector<double> &h,
              std::vector<double> &c) {
  matVecAdd(R, h.data(), 4 * H, H, gates);
  for (int64_t j = 0; j < H; ++j) {
    double gi = sigmoid(dims.clipped(gates[j] + P[j] * c[j]));
    double gf =
        inputForget
            ? 1.0 - gi
            : sigmoid(dims.clipped(gates[2 * H + j] + P[2 * H + j] * c[j]));
    double gc = std::tanh(dims.clipped(gates[3 * H + j]));
    double cNew = gf * c[j] + gi * gc;
    double go = sigmoid(dims.clipped(gates[H + j] + P[H + j] * cNew));
    c[j] = cNew;
    h[j] = go * std::tanh(cNew);
  }
}

/// Stores y (dims.yShape()) and the final states (dims.stateShape()) into
/// the result slots the op has, in the input's dtype.
void storeResults(KernelContext &ctx, const RnnDims &dims,
                  std::initializer_list<const std::vector<double> *> results) {
  DType dt = ctx.input(0).dtype();
  size_t i = 0;
  for (const std::vector<double> *v : results) {
    if (i < ctx.outputs.size())
      ctx.outputs[i] =
          fromDoubles(*v, dt, i == 0 ? dims.yShape() : dims.stateShape());
    ++i;
  }
}

/// The LSTM's steps of every direction and batch entry (a reverse
/// direction from each entry's last valid step): `project(d, t, b, gates)`
/// sets the 4H gates (i, o, f, c) to the step's W x + Wb + Rb; `r` [D, 4H,
/// H], `peep` [D, 3H], `h0` and `c0` the initial states. Stores y (zero past
/// a length), y_h and y_c (zero for an empty sequence, as in onnxruntime).
template <typename Project>
void runLstm(const RnnDims &dims, bool inputForget,
             const std::vector<double> &r, const std::vector<double> &peep,
             const std::vector<double> &h0, const std::vector<double> &c0,
             Project project, KernelContext &ctx) {
  const int64_t H = dims.hidden;
  std::vector<double> y(static_cast<size_t>(numElements(dims.yShape())), 0.0);
  std::vector<double> yh(static_cast<size_t>(numElements(dims.stateShape())));
  std::vector<double> yc(yh.size()), gates(4 * H), h(H), c(H);
  for (int64_t d = 0; d < dims.numDir; ++d) {
    bool reverse = dims.reverseOnly || d == 1;
    const double *R = r.data() + d * 4 * H * H, *P = peep.data() + d * 3 * H;
    for (int64_t b = 0; b < dims.batch; ++b) {
      int64_t s0 = dims.stateIndex(d, b);
      std::copy(h0.begin() + s0, h0.begin() + s0 + H, h.begin());
      std::copy(c0.begin() + s0, c0.begin() + s0 + H, c.begin());
      int64_t len = dims.lens[b];
      for (int64_t step = 0; step < len; ++step) {
        int64_t t = reverse ? len - 1 - step : step;
        project(d, t, b, gates.data());
        lstmStep(gates.data(), R, P, inputForget, dims, H, h, c);
        std::copy(h.begin(), h.end(), y.begin() + dims.yIndex(t, d, b));
      }
      if (len == 0) {
        std::fill(h.begin(), h.end(), 0.0);
        std::fill(c.begin(), c.end(), 0.0);
      }
      std::copy(h.begin(), h.end(), yh.begin() + s0);
      std::copy(c.begin(), c.end(), yc.begin() + s0);
    }
  }
  storeResults(ctx, dims, {&y, &yh, &yc});
}

Status lstmKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 8, "lstm: expected 8 operands (x, w, r, b, ",
             "sequence_lens, initial_h, initial_c, p), got ", ctx.numInputs());
  KILN_CHECK(!ctx.outputs.empty() && ctx.outputs.size() <= 3,
             "lstm: expected 1 to 3 result slots, got ", ctx.outputs.size());
  RnnDims dims;
  KILN_RETURN_IF_ERROR(parseDims("lstm", ctx, 4, dims));
  KILN_RETURN_IF_ERROR(
      expectShape("lstm", "initial_c", 6, ctx.input(6), dims.stateShape()));
  KILN_RETURN_IF_ERROR(expectShape("lstm", "p", 7, ctx.input(7),
                                   {dims.numDir, 3 * dims.hidden}));
  bool inputForget = ctx.attrs.getInt("input_forget", 0) != 0;

  const int64_t H = dims.hidden, I = dims.input;
  std::vector<double> x = toDoubles(ctx.input(0)), w = toDoubles(ctx.input(1)),
                      r = toDoubles(ctx.input(2)),
                      bias = toDoubles(ctx.input(3)),
                      h0 = toDoubles(ctx.input(5)),
                      c0 = toDoubles(ctx.input(6)),
                      peep = toDoubles(ctx.input(7));
  runLstm(
      dims, inputForget, r, peep, h0, c0,
      [&](int64_t d, int64_t t, int64_t b, double *gates) {
        const double *Wb = bias.data() + d * 8 * H, *Rb = Wb + 4 * H;
        for (int64_t j = 0; j < 4 * H; ++j)
          gates[j] = Wb[j] + Rb[j];
        matVecAdd(w.data() + d * 4 * H * I, x.data() + dims.xIndex(t, b), 4 * H,
                  I, gates);
      },
      ctx);
  return Status::ok();
}

/// One GRU step of one batch entry and direction: `xw` is W x + Wb of the
/// step (gates z, r, h), `R` and `Rb` the direction's recurrence weights
/// and bias, `h` the state, replaced by the new one (`hr`, `z`, `rg`,
/// `hNew` are scratch of 3H, H, H and H values).
void gruStep(const double *xw, const double *R, const double *Rb,
             bool linearBeforeReset, const RnnDims &dims, int64_t H,
             std::vector<double> &h, std::vector<double> &hr,
             std::vector<double> &z, std::vector<double> &rg,
             std::vector<double> &hNew) {
  for (int64_t j = 0; j < 3 * H; ++j)
    hr[j] = Rb[j];
  matVecAdd(R, h.data(), 2 * H, H, hr.data());
  for (int64_t j = 0; j < H; ++j) {
    z[j] = sigmoid(dims.clipped(xw[j] + hr[j]));
    rg[j] = sigmoid(dims.clipped(xw[H + j] + hr[H + j]));
  }
  const double *Rh = R + 2 * H * H;
  for (int64_t j = 0; j < H; ++j) {
    double pre;
    if (linearBeforeReset) {
      double s = Rb[2 * H + j];
      for (int64_t k = 0; k < H; ++k)
        s += Rh[j * H + k] * h[k];
      pre = xw[2 * H + j] + rg[j] * s;
    } else {
      double s = Rb[2 * H + j];
      for (int64_t k = 0; k < H; ++k)
        s += Rh[j * H + k] * (rg[k] * h[k]);
      pre = xw[2 * H + j] + s;
    }
    double hh = std::tanh(dims.clipped(pre));
    hNew[j] = (1.0 - z[j]) * hh + z[j] * h[j];
  }
  h = hNew;
}

/// The GRU's steps of every direction and batch entry, as runLstm:
/// `project(d, t, b, xw)` sets the 3H values (z, r, h) to the step's W x +
/// Wb, `recurrenceBias(d)` is the direction's Rb (3H); `r` [D, 3H, H] and
/// `h0` the initial state. Stores y and y_h.
template <typename Bias, typename Project>
void runGru(const RnnDims &dims, bool linearBeforeReset,
            const std::vector<double> &r, const std::vector<double> &h0,
            Bias recurrenceBias, Project project, KernelContext &ctx) {
  const int64_t H = dims.hidden;
  std::vector<double> y(static_cast<size_t>(numElements(dims.yShape())), 0.0);
  std::vector<double> yh(static_cast<size_t>(numElements(dims.stateShape())));
  std::vector<double> xw(3 * H), hr(3 * H), z(H), rg(H), h(H), hNew(H);
  for (int64_t d = 0; d < dims.numDir; ++d) {
    bool reverse = dims.reverseOnly || d == 1;
    const double *R = r.data() + d * 3 * H * H, *Rb = recurrenceBias(d);
    for (int64_t b = 0; b < dims.batch; ++b) {
      int64_t s0 = dims.stateIndex(d, b);
      std::copy(h0.begin() + s0, h0.begin() + s0 + H, h.begin());
      int64_t len = dims.lens[b];
      for (int64_t step = 0; step < len; ++step) {
        int64_t t = reverse ? len - 1 - step : step;
        project(d, t, b, xw.data());
        gruStep(xw.data(), R, Rb, linearBeforeReset, dims, H, h, hr, z, rg,
                hNew);
        std::copy(h.begin(), h.end(), y.begin() + dims.yIndex(t, d, b));
      }
      if (len == 0)
        std::fill(h.begin(), h.end(), 0.0);
      std::copy(h.begin(), h.end(), yh.begin() + s0);
    }
  }
  storeResults(ctx, dims, {&y, &yh});
}

Status gruKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 6, "gru: expected 6 operands (x, w, r, b, ",
             "sequence_lens, initial_h), got ", ctx.numInputs());
  KILN_CHECK(!ctx.outputs.empty() && ctx.outputs.size() <= 2,
             "gru: expected 1 or 2 result slots, got ", ctx.outputs.size());
  RnnDims dims;
  KILN_RETURN_IF_ERROR(parseDims("gru", ctx, 3, dims));
  bool linearBeforeReset = ctx.attrs.getInt("linear_before_reset", 0) != 0;

  const int64_t H = dims.hidden, I = dims.input;
  std::vector<double> x = toDoubles(ctx.input(0)), w = toDoubles(ctx.input(1)),
                      r = toDoubles(ctx.input(2)),
                      bias = toDoubles(ctx.input(3)),
                      h0 = toDoubles(ctx.input(5));
  runGru(
      dims, linearBeforeReset, r, h0,
      [&](int64_t d) { return bias.data() + d * 6 * H + 3 * H; },
      [&](int64_t d, int64_t t, int64_t b, double *xw) {
        const double *Wb = bias.data() + d * 6 * H;
        std::copy(Wb, Wb + 3 * H, xw);
        matVecAdd(w.data() + d * 3 * H * I, x.data() + dims.xIndex(t, b), 3 * H,
                  I, xw);
      },
      ctx);
  return Status::ok();
}

/// Reads the attributes of a recurrence op (kiln.gru_recurrence,
/// kiln.lstm_recurrence), checks its projection xw [seq, batch,
/// numDir·gates·H] (layout 0) and reads its sequence lengths (all full
/// length when the op has none).
Status parseRecurrenceDims(const char *op, KernelContext &ctx, int64_t gates,
                           RnnDims &dims) {
  const Tensor &xw = ctx.input(0);
  KILN_CHECK(xw.defined() && isFloatingPoint(xw.dtype()) && xw.rank() == 3, op,
             ": xw must be a 3-D float tensor, got ",
             xw.defined() ? xw.typeString() : std::string("nothing"));
  dims.hidden = ctx.attrs.getInt("hidden_size", 0);
  std::string direction = ctx.attrs.getString("direction", "forward");
  KILN_CHECK(direction == "forward" || direction == "reverse" ||
                 direction == "bidirectional",
             op, ": direction '", direction,
             "' is not forward, reverse or bidirectional");
  dims.numDir = direction == "bidirectional" ? 2 : 1;
  dims.reverseOnly = direction == "reverse";
  dims.clip = ctx.attrs.getFloat("clip", 0.0);
  dims.seq = xw.shape()[0];
  dims.batch = xw.shape()[1];
  KILN_CHECK(dims.hidden >= 1, op, ": hidden_size must be >= 1, got ",
             dims.hidden);
  KILN_RETURN_IF_ERROR(
      expectShape(op, "xw", 0, xw,
                  {dims.seq, dims.batch, dims.numDir * gates * dims.hidden}));
  // The last operand after the `gates`-dependent ones: sequence_lens.
  size_t lensIndex = gates == 3 ? 4 : 5;
  if (ctx.numInputs() > lensIndex)
    return readLens(op, ctx, lensIndex, dims);
  dims.lens.assign(static_cast<size_t>(dims.batch), dims.seq);
  return Status::ok();
}

/// kiln.gru_recurrence: kiln.gru's steps from a precomputed projection
/// xw [seq, batch, numDir * 3H].
Status gruRecurrenceKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 4 || ctx.numInputs() == 5,
             "gru_recurrence: expected 4 or 5 operands (xw, r, rb, initial_h, ",
             "optionally sequence_lens), got ", ctx.numInputs());
  KILN_CHECK(!ctx.outputs.empty() && ctx.outputs.size() <= 2,
             "gru_recurrence: expected 1 or 2 result slots, got ",
             ctx.outputs.size());
  RnnDims dims;
  KILN_RETURN_IF_ERROR(parseRecurrenceDims("gru_recurrence", ctx, 3, dims));
  const int64_t H = dims.hidden, D = dims.numDir;
  KILN_RETURN_IF_ERROR(
      expectShape("gru_recurrence", "r", 1, ctx.input(1), {D, 3 * H, H}));
  KILN_RETURN_IF_ERROR(
      expectShape("gru_recurrence", "rb", 2, ctx.input(2), {D, 3 * H}));
  KILN_RETURN_IF_ERROR(expectShape("gru_recurrence", "initial_h", 3,
                                   ctx.input(3), dims.stateShape()));
  bool linearBeforeReset = ctx.attrs.getInt("linear_before_reset", 0) != 0;
  std::vector<double> xw = toDoubles(ctx.input(0)), r = toDoubles(ctx.input(1)),
                      rb = toDoubles(ctx.input(2)),
                      h0 = toDoubles(ctx.input(3));
  runGru(
      dims, linearBeforeReset, r, h0,
      [&](int64_t d) { return rb.data() + d * 3 * H; },
      [&](int64_t d, int64_t t, int64_t b, double *step) {
        const double *at = xw.data() + ((t * dims.batch + b) * D + d) * 3 * H;
        std::copy(at, at + 3 * H, step);
      },
      ctx);
  return Status::ok();
}

/// kiln.lstm_recurrence: kiln.lstm's steps from a precomputed projection
/// xw [seq, batch, numDir * 4H] (both biases included).
Status lstmRecurrenceKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 5 || ctx.numInputs() == 6,
             "lstm_recurrence: expected 5 or 6 operands (xw, r, p, initial_h, ",
             "initial_c, optionally sequence_lens), got ", ctx.numInputs());
  KILN_CHECK(!ctx.outputs.empty() && ctx.outputs.size() <= 3,
             "lstm_recurrence: expected 1 to 3 result slots, got ",
             ctx.outputs.size());
  RnnDims dims;
  KILN_RETURN_IF_ERROR(parseRecurrenceDims("lstm_recurrence", ctx, 4, dims));
  const int64_t H = dims.hidden, D = dims.numDir;
  KILN_RETURN_IF_ERROR(
      expectShape("lstm_recurrence", "r", 1, ctx.input(1), {D, 4 * H, H}));
  KILN_RETURN_IF_ERROR(
      expectShape("lstm_recurrence", "p", 2, ctx.input(2), {D, 3 * H}));
  KILN_RETURN_IF_ERROR(expectShape("lstm_recurrence", "initial_h", 3,
                                   ctx.input(3), dims.stateShape()));
  KILN_RETURN_IF_ERROR(expectShape("lstm_recurrence", "initial_c", 4,
                                   ctx.input(4), dims.stateShape()));
  bool inputForget = ctx.attrs.getInt("input_forget", 0) != 0;
  std::vector<double> xw = toDoubles(ctx.input(0)), r = toDoubles(ctx.input(1)),
                      peep = toDoubles(ctx.input(2)),
                      h0 = toDoubles(ctx.input(3)),
                      c0 = toDoubles(ctx.input(4));
  runLstm(
      dims, inputForget, r, peep, h0, c0,
      [&](int64_t d, int64_t t, int64_t b, double *gates) {
        const double *at = xw.data() + ((t * dims.batch + b) * D + d) * 4 * H;
        std::copy(at, at + 4 * H, gates);
      },
      ctx);
  return Status::ok();
}

} // namespace

void registerRecurrentKernels(Dispatcher &d) {
  d.add("lstm", Device::CPU, kFloatTypes, lstmKernel);
  d.add("gru", Device::CPU, kFloatTypes, gruKernel);
  d.add("gru_recurrence", Device::CPU, kFloatTypes, gruRecurrenceKernel);
  d.add("lstm_recurrence", Device::CPU, kFloatTypes, lstmRecurrenceKernel);
}

} // namespace kiln
