//===- Softmax.cpp - Reference softmax, log_softmax and hardmax -----------===//
//
// This file implements the CPU reference kernels of kiln.softmax,
// kiln.log_softmax and kiln.hardmax: ONNX opset-13 semantics, along the one
// axis given by the `axis` attribute. Each (outer) block is processed with
// the inner dims as the innermost loop, so the walk is contiguous whatever
// the axis; exponentials are summed in f64. It also implements kiln.attention
// and kiln.packed_attention (softmax(scale q k^T + causal mask) v per batch
// and head, in f32 or f64, with each query row's log-sum-exp; q, k and v
// packed batch-first or, with `layout = "seq_first"`, seq-first) and their
// gradients, kiln.attention_grad and kiln.packed_attention_grad.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "NormalizationKernels.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace kiln {
namespace norm {
namespace {

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

/// Validates x and the axis; fills outer / len / inner.
Status planAxis(const KernelContext &ctx, const char *op, int64_t &outer,
                int64_t &len, int64_t &inner) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, op, 1));
  KILN_CHECK(ctx.numInputs() == 1, op, ": expected 1 operand, got ",
             ctx.numInputs());
  const Tensor &x = ctx.input(0);
  KILN_CHECK(x.rank() >= 1, op, ": x must have rank >= 1, got ",
             x.typeString());
  auto axis = normalizeAxis(ctx.attrs.getInt("axis", -1), x.rank());
  if (!axis)
    return axis.status().withContext(strCat(op, ": x ", x.typeString()));
  outer = 1;
  inner = 1;
  for (int64_t i = 0; i < *axis; ++i)
    outer *= x.dim(i);
  len = x.dim(*axis);
  for (int64_t i = *axis + 1; i < x.rank(); ++i)
    inner *= x.dim(i);
  return Status::ok();
}

/// One contiguous line along the axis (the inner == 1 case); `buf` holds at
/// least `len` values.
template <SoftmaxKind Kind, typename T, typename C>
void softmaxLine(const T *x, T *y, int64_t len, C *buf) {
  C mx = -std::numeric_limits<C>::infinity();
  int64_t arg = 0;
  for (int64_t r = 0; r < len; ++r) {
    C v = static_cast<C>(x[r]);
    buf[r] = v;
    if (v > mx || (std::isnan(v) && !std::isnan(mx))) {
      mx = v;
      arg = r;
    }
  }
  if constexpr (Kind == SoftmaxKind::Hardmax) {
    for (int64_t r = 0; r < len; ++r)
      y[r] = storeAs<T>(r == arg ? C(1) : C(0));
  } else {
    double sum = 0;
    for (int64_t r = 0; r < len; ++r) {
      C shifted = buf[r] - mx;
      C e = std::exp(shifted);
      sum += e;
      buf[r] = Kind == SoftmaxKind::Softmax ? e : shifted;
    }
    if constexpr (Kind == SoftmaxKind::Softmax) {
      C scale = static_cast<C>(1.0 / sum);
      for (int64_t r = 0; r < len; ++r)
        y[r] = storeAs<T>(buf[r] * scale);
    } else {
      C logSum = static_cast<C>(std::log(sum));
      for (int64_t r = 0; r < len; ++r)
        y[r] = storeAs<T>(buf[r] - logSum);
    }
  }
}

template <SoftmaxKind Kind>
Status softmaxKernel(KernelContext &ctx, const char *op) {
  int64_t outer, len, inner;
  KILN_RETURN_IF_ERROR(planAxis(ctx, op, outer, len, inner));
  const Tensor &x = ctx.input(0);
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BFloat16>) {
      using C = NormCompute<T>;
      const T *src = in.data<T>();
      T *dst = out.data<T>();
      std::vector<C> mx(inner), block(len * inner);
      std::vector<int64_t> arg(inner);
      std::vector<double> sum(inner);
      if (inner == 1) {
        for (int64_t o = 0; o < outer; ++o)
          softmaxLine<Kind, T, C>(src + o * len, dst + o * len, len,
                                  block.data());
        return;
      }
      for (int64_t o = 0; o < outer; ++o) {
        const T *xb = src + o * len * inner;
        T *yb = dst + o * len * inner;
        for (int64_t j = 0; j < len * inner; ++j)
          block[j] = static_cast<C>(xb[j]);
        // Max along the axis; NaN propagates, the first maximum wins.
        std::fill(mx.begin(), mx.end(), -std::numeric_limits<C>::infinity());
        std::fill(arg.begin(), arg.end(), 0);
        for (int64_t r = 0; r < len; ++r) {
          const C *row = block.data() + r * inner;
          for (int64_t i = 0; i < inner; ++i)
            if (row[i] > mx[i] || (std::isnan(row[i]) && !std::isnan(mx[i]))) {
              mx[i] = row[i];
              arg[i] = r;
            }
        }
        if constexpr (Kind == SoftmaxKind::Hardmax) {
          for (int64_t r = 0; r < len; ++r)
            for (int64_t i = 0; i < inner; ++i)
              yb[r * inner + i] = storeAs<T>(arg[i] == r ? C(1) : C(0));
          continue;
        }
        std::fill(sum.begin(), sum.end(), 0.0);
        for (int64_t r = 0; r < len; ++r) {
          C *row = block.data() + r * inner;
          for (int64_t i = 0; i < inner; ++i) {
            C shifted = row[i] - mx[i];
            C e = std::exp(shifted);
            sum[i] += e;
            row[i] = Kind == SoftmaxKind::Softmax ? e : shifted;
          }
        }
        for (int64_t i = 0; i < inner; ++i)
          sum[i] =
              Kind == SoftmaxKind::Softmax ? 1.0 / sum[i] : std::log(sum[i]);
        for (int64_t r = 0; r < len; ++r) {
          const C *row = block.data() + r * inner;
          for (int64_t i = 0; i < inner; ++i) {
            C v = Kind == SoftmaxKind::Softmax
                      ? static_cast<C>(row[i] * sum[i])
                      : static_cast<C>(row[i] - sum[i]);
            yb[r * inner + i] = storeAs<T>(v);
          }
        }
      }
    }
  });
  ctx.outputs[0] = out;
  return Status::ok();
}

/// The compute type of attention over `dtype`: f64 for f64, f32 otherwise
/// (also the type of lse and delta).
DType attentionComputeType(DType dtype) {
  return dtype == DType::F64 ? DType::F64 : DType::F32;
}

/// Each query row's scaled, masked scores of contiguous q [BH, Tq, D] and
/// k [BH, Tk, D] in compute type C: calling it with (b, i, s) fills
/// s[0, Tk) with row i of batch b (-inf where masked). The scores are rounded
/// to C before the scale, as the written-out matmul and mul do.
template <typename C> struct AttentionScores {
  const C *q, *k;
  int64_t tq, tk, d;
  double scale;
  bool causal;
  void operator()(int64_t b, int64_t i, std::vector<double> &s) const {
    const C *qi = q + (b * tq + i) * d;
    for (int64_t j = 0; j < tk; ++j) {
      double acc = 0;
      const C *kj = k + (b * tk + j) * d;
      for (int64_t e = 0; e < d; ++e)
        acc += static_cast<double>(qi[e]) * static_cast<double>(kj[e]);
      s[j] = causal && j > i ? -std::numeric_limits<double>::infinity()
                             : static_cast<double>(static_cast<C>(acc)) * scale;
    }
  }
};

/// softmax(scale * q k^T + causal mask) v of contiguous q [B, H, Tq, D],
/// k [B, H, Tk, D], v [B, H, Tk, Dv] (shapes checked by the callers), in
/// f32 (f64 for f64), rounded once to q's dtype; `lse` gets each query
/// row's log-sum-exp [B, H, Tq] in the compute type.
Tensor attend(const Tensor &q, const Tensor &k, const Tensor &v, double scale,
              bool causal, Tensor &lse) {
  DType compute = attentionComputeType(q.dtype());
  Tensor qc = q.to(compute), kc = k.to(compute), vc = v.to(compute);
  int64_t batches = q.dim(0) * q.dim(1), tq = q.dim(2), tk = k.dim(2),
          d = q.dim(3), dv = v.dim(3);
  Tensor out = Tensor::empty(compute, {q.dim(0), q.dim(1), tq, dv});
  lse = Tensor::empty(compute, {q.dim(0), q.dim(1), tq});
  auto run = [&](auto tag) {
    using C = decltype(tag);
    const C *vp = vc.data<C>();
    C *op = out.data<C>(), *lp = lse.data<C>();
    AttentionScores<C> scores{qc.data<C>(), kc.data<C>(), tq, tk, d,
                              scale,        causal};
    std::vector<double> s(tk);
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t i = 0; i < tq; ++i) {
        scores(b, i, s);
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < tk; ++j)
          mx = std::max(mx, s[j]);
        double sum = 0;
        for (int64_t j = 0; j < tk; ++j) {
          s[j] = std::isinf(s[j]) && s[j] < 0 ? 0.0 : std::exp(s[j] - mx);
          sum += s[j];
        }
        lp[b * tq + i] = static_cast<C>(mx + std::log(sum));
        C *oi = op + (b * tq + i) * dv;
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < tk; ++j)
            acc += s[j] * static_cast<double>(vp[(b * tk + j) * dv + e]);
          oi[e] = static_cast<C>(acc / sum);
        }
      }
  };
  if (compute == DType::F64)
    run(double());
  else
    run(float());
  return out.to(q.dtype());
}

/// The gradients of attend: with grad [B, H, Tq, Dv] the result's gradient,
/// lse and delta [B, H, Tq] (compute type), P = exp(s - lse):
/// dv = P^T grad, dS = P (grad v^T - delta), dq = scale dS k,
/// dk = scale dS^T q, each rounded once to q's dtype.
std::array<Tensor, 3> attendGrad(const Tensor &q, const Tensor &k,
                                 const Tensor &v, const Tensor &grad,
                                 const Tensor &lse, const Tensor &delta,
                                 double scale, bool causal) {
  DType compute = attentionComputeType(q.dtype());
  Tensor qc = q.to(compute), kc = k.to(compute), vc = v.to(compute),
         gc = grad.to(compute), lc = lse.to(compute), dc = delta.to(compute);
  int64_t batches = q.dim(0) * q.dim(1), tq = q.dim(2), tk = k.dim(2),
          d = q.dim(3), dv = v.dim(3);
  std::vector<double> dq(batches * tq * d), dk(batches * tk * d),
      dvs(batches * tk * dv);
  auto run = [&](auto tag) {
    using C = decltype(tag);
    const C *qp = qc.data<C>(), *kp = kc.data<C>(), *vp = vc.data<C>(),
            *gp = gc.data<C>(), *lp = lc.data<C>(), *dp = dc.data<C>();
    AttentionScores<C> scores{qp, kp, tq, tk, d, scale, causal};
    std::vector<double> s(tk);
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t i = 0; i < tq; ++i) {
        scores(b, i, s);
        const C *gi = gp + (b * tq + i) * dv, *qi = qp + (b * tq + i) * d;
        double l = static_cast<double>(lp[b * tq + i]),
               delta = static_cast<double>(dp[b * tq + i]);
        for (int64_t j = 0; j < tk; ++j) {
          if (std::isinf(s[j]) && s[j] < 0)
            continue;
          double p = std::exp(s[j] - l), dpj = 0;
          const C *vj = vp + (b * tk + j) * dv, *kj = kp + (b * tk + j) * d;
          for (int64_t e = 0; e < dv; ++e) {
            dpj += static_cast<double>(gi[e]) * static_cast<double>(vj[e]);
            dvs[(b * tk + j) * dv + e] += p * static_cast<double>(gi[e]);
          }
          double ds = p * (dpj - delta) * scale;
          for (int64_t e = 0; e < d; ++e) {
            dq[(b * tq + i) * d + e] += ds * static_cast<double>(kj[e]);
            dk[(b * tk + j) * d + e] += ds * static_cast<double>(qi[e]);
          }
        }
      }
  };
  if (compute == DType::F64)
    run(double());
  else
    run(float());
  auto toTensor = [&](const std::vector<double> &values, const Tensor &like) {
    return Tensor::fromVector(values, like.shape()).to(like.dtype());
  };
  return {toTensor(dq, q), toTensor(dk, k), toTensor(dvs, v)};
}

/// Checks q, k and v of kiln.attention / kiln.attention_grad (`op`).
Status checkAttentionOperands(const char *op, const Tensor &q, const Tensor &k,
                              const Tensor &v) {
  KILN_CHECK(q.rank() == 4 && k.rank() == 4 && v.rank() == 4 &&
                 q.dtype() == k.dtype() && q.dtype() == v.dtype() &&
                 q.dim(0) == k.dim(0) && q.dim(1) == k.dim(1) &&
                 v.dim(0) == k.dim(0) && v.dim(1) == k.dim(1) &&
                 q.dim(3) == k.dim(3) && v.dim(2) == k.dim(2),
             op,
             ": q, k and v must be B x H x T x D of one dtype that agree on "
             "B, H, Tk and D; got ",
             q.typeString(), ", ", k.typeString(), " and ", v.typeString());
  return Status::ok();
}

/// Checks grad, lse and delta of an attention gradient against the
/// forward's result shape `output` and row shape [B, H, Tq].
Status checkAttentionGradOperands(const char *op, const Tensor &grad,
                                  const Tensor &lse, const Tensor &delta,
                                  const Shape &output, const Shape &rows,
                                  DType dtype) {
  DType compute = attentionComputeType(dtype);
  KILN_CHECK(grad.shape() == output && grad.dtype() == dtype &&
                 lse.shape() == rows && lse.dtype() == compute &&
                 delta.shape() == rows && delta.dtype() == compute,
             op,
             ": grad must match the attention result, lse and delta its "
             "rows; got ",
             grad.typeString(), ", ", lse.typeString(), " and ",
             delta.typeString());
  return Status::ok();
}

/// kiln.attention: q [B, H, Tq, D], k [B, H, Tk, D], v [B, H, Tk, Dv].
Status attentionKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, "attention", 2));
  KILN_CHECK(ctx.numInputs() == 3, "attention: expected q, k and v, got ",
             ctx.numInputs(), " operands");
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  KILN_RETURN_IF_ERROR(checkAttentionOperands("attention", q, k, v));
  ctx.outputs[0] = attend(q, k, v, ctx.attrs.getFloat("scale", 1.0),
                          ctx.attrs.getInt("causal", 0) != 0, ctx.outputs[1]);
  return Status::ok();
}

/// kiln.attention_grad: q, k, v, grad, lse, delta -> dq, dk, dv.
Status attentionGradKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, "attention_grad", 3));
  KILN_CHECK(ctx.numInputs() == 6,
             "attention_grad: expected q, k, v, grad, lse and delta, got ",
             ctx.numInputs(), " operands");
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  KILN_RETURN_IF_ERROR(checkAttentionOperands("attention_grad", q, k, v));
  KILN_RETURN_IF_ERROR(checkAttentionGradOperands(
      "attention_grad", ctx.input(3), ctx.input(4), ctx.input(5),
      {q.dim(0), q.dim(1), q.dim(2), v.dim(3)}, {q.dim(0), q.dim(1), q.dim(2)},
      q.dtype()));
  std::array<Tensor, 3> grads = attendGrad(
      q, k, v, ctx.input(3), ctx.input(4), ctx.input(5),
      ctx.attrs.getFloat("scale", 1.0), ctx.attrs.getInt("causal", 0) != 0);
  for (int i = 0; i < 3; ++i)
    ctx.outputs[i] = grads[i];
  return Status::ok();
}

/// qkv [B, T, 3 * H * D] of a packed attention with `heads` H (checked;
/// [T, B, 3 * H * D] when `seqFirst`), as [3, B, H, T, D] (q, k, v after
/// each other); fills b, t, d.
Status unpackQkv(const KernelContext &ctx, const char *op, int64_t heads,
                 Tensor &split, int64_t &b, int64_t &t, int64_t &d,
                 bool seqFirst = false) {
  const Tensor &input = ctx.input(0);
  KILN_CHECK(input.rank() == 3 && heads > 0 && input.dim(2) % 3 == 0 &&
                 (input.dim(2) / 3) % heads == 0,
             op,
             seqFirst ? ": qkv must be T x B x 3*H*D with heads = H; got "
                      : ": qkv must be B x T x 3*H*D with heads = H; got ",
             input.typeString(), " with heads = ", heads);
  Tensor qkv = seqFirst ? input.permute({1, 0, 2}) : input;
  b = qkv.dim(0), t = qkv.dim(1), d = qkv.dim(2) / 3 / heads;
  split =
      qkv.reshape({b, t, 3, heads, d}).permute({2, 0, 3, 1, 4}).contiguous();
  return Status::ok();
}

/// Part `i` (q, k, v) of an unpacked qkv [3, B, H, T, D], as a view.
Tensor qkvPart(const Tensor &split, int64_t i) {
  int64_t b = split.dim(1), h = split.dim(2), t = split.dim(3),
          d = split.dim(4), each = b * h * t * d;
  return Tensor(split.storage(), split.dtype(), {b, h, t, d},
                {h * t * d, t * d, d, 1}, split.offset() + i * each);
}

/// kiln.packed_attention: qkv [B, T, 3 * H * D] with `heads` H, result
/// [B, T, H, D] and lse [B, H, T] (with `layout = "seq_first"`: qkv
/// [T, B, 3 * H * D], the result [T, B, H, D]): the heads are unpacked into
/// q, k, v [B, H, T, D] copies and the result is transposed back.
Status packedAttentionKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, "packed_attention", 2));
  KILN_CHECK(ctx.numInputs() == 1, "packed_attention: expected qkv, got ",
             ctx.numInputs(), " operands");
  std::string layout = ctx.attrs.getString("layout");
  KILN_CHECK(layout.empty() || layout == "batch_first" || layout == "seq_first",
             "packed_attention: layout must be \"batch_first\" or "
             "\"seq_first\", got \"",
             layout, "\"");
  bool seqFirst = layout == "seq_first";
  Tensor split;
  int64_t b, t, d;
  KILN_RETURN_IF_ERROR(unpackQkv(ctx, "packed_attention",
                                 ctx.attrs.getInt("heads", 0), split, b, t, d,
                                 seqFirst));
  Tensor out = attend(qkvPart(split, 0), qkvPart(split, 1), qkvPart(split, 2),
                      ctx.attrs.getFloat("scale", 1.0),
                      ctx.attrs.getInt("causal", 0) != 0, ctx.outputs[1]);
  // [B, H, T, D] -> [B, T, H, D] (seq-first: [T, B, H, D]).
  ctx.outputs[0] = out.permute(seqFirst ? std::vector<int64_t>{2, 0, 1, 3}
                                        : std::vector<int64_t>{0, 2, 1, 3})
                       .contiguous();
  return Status::ok();
}

/// kiln.packed_attention_grad: qkv, grad [B, T, H, D], lse, delta
/// [B, H, T] -> dqkv [B, T, 3 * H * D].
Status packedAttentionGradKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, "packed_attention_grad", 1));
  KILN_CHECK(ctx.numInputs() == 4,
             "packed_attention_grad: expected qkv, grad, lse and delta, got ",
             ctx.numInputs(), " operands");
  int64_t heads = ctx.attrs.getInt("heads", 0);
  Tensor split;
  int64_t b, t, d;
  KILN_RETURN_IF_ERROR(
      unpackQkv(ctx, "packed_attention_grad", heads, split, b, t, d));
  const Tensor &qkv = ctx.input(0);
  KILN_RETURN_IF_ERROR(checkAttentionGradOperands(
      "packed_attention_grad", ctx.input(1), ctx.input(2), ctx.input(3),
      {b, t, heads, d}, {b, heads, t}, qkv.dtype()));
  Tensor grad = ctx.input(1).permute({0, 2, 1, 3}).contiguous();
  std::array<Tensor, 3> grads =
      attendGrad(qkvPart(split, 0), qkvPart(split, 1), qkvPart(split, 2), grad,
                 ctx.input(2), ctx.input(3), ctx.attrs.getFloat("scale", 1.0),
                 ctx.attrs.getInt("causal", 0) != 0);
  // [3, B, H, T, D] -> [B, T, 3, H, D] = [B, T, 3 * H * D].
  Tensor stacked = Tensor::empty(qkv.dtype(), {3, b, heads, t, d});
  size_t each = static_cast<size_t>(b * heads * t * d) * dtypeSize(qkv.dtype());
  for (int i = 0; i < 3; ++i)
    std::memcpy(static_cast<char *>(stacked.rawData()) + i * each,
                grads[i].contiguous().rawData(), each);
  ctx.outputs[0] = stacked.permute({1, 3, 0, 2, 4})
                       .contiguous()
                       .reshape({b, t, 3 * heads * d});
  return Status::ok();
}

} // namespace

void registerSoftmaxKernels(Dispatcher &d) {
  d.add("attention", Device::CPU, kFloatTypes, attentionKernel);
  d.add("attention_grad", Device::CPU, kFloatTypes, attentionGradKernel);
  d.add("packed_attention", Device::CPU, kFloatTypes, packedAttentionKernel);
  d.add("packed_attention_grad", Device::CPU, kFloatTypes,
        packedAttentionGradKernel);
  const Device cpu = Device::CPU;
  d.add("softmax", cpu, kFloatTypes, [](KernelContext &ctx) {
    return softmaxKernel<SoftmaxKind::Softmax>(ctx, "softmax");
  });
  d.add("log_softmax", cpu, kFloatTypes, [](KernelContext &ctx) {
    return softmaxKernel<SoftmaxKind::LogSoftmax>(ctx, "log_softmax");
  });
  d.add("hardmax", cpu, kFloatTypes, [](KernelContext &ctx) {
    return softmaxKernel<SoftmaxKind::Hardmax>(ctx, "hardmax");
  });
}

} // namespace norm
} // namespace kiln
