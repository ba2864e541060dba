//===- Softmax.cpp - Reference softmax, log_softmax and hardmax -----------===//
//
// This file implements the CPU reference kernels of kiln.softmax,
// kiln.log_softmax and kiln.hardmax: ONNX opset-13 semantics, along the one
// axis given by the `axis` attribute. Each (outer) block is processed with
// the inner dims as the innermost loop, so the walk is contiguous whatever
// the axis; exponentials are summed in f64. It also implements kiln.attention
// and kiln.packed_attention (softmax(scale q k^T + causal mask) v per batch
// and head, in f32 or f64).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "NormalizationKernels.h"

#include <cmath>
#include <limits>

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

/// softmax(scale * q k^T + causal mask) v of contiguous q [B, H, Tq, D],
/// k [B, H, Tk, D], v [B, H, Tk, Dv] (shapes checked by the callers), in
/// f32 (f64 for f64), rounded once to q's dtype.
Tensor attend(const Tensor &q, const Tensor &k, const Tensor &v, double scale,
              bool causal) {
  bool wide = q.dtype() == DType::F64;
  DType compute = wide ? DType::F64 : DType::F32;
  Tensor qc = q.to(compute), kc = k.to(compute), vc = v.to(compute);
  int64_t batches = q.dim(0) * q.dim(1), tq = q.dim(2), tk = k.dim(2),
          d = q.dim(3), dv = v.dim(3);
  Tensor out = Tensor::empty(compute, {q.dim(0), q.dim(1), tq, dv});
  auto run = [&](auto tag) {
    using C = decltype(tag);
    const C *qp = qc.data<C>(), *kp = kc.data<C>(), *vp = vc.data<C>();
    C *op = out.data<C>();
    std::vector<double> s(tk);
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t i = 0; i < tq; ++i) {
        const C *qi = qp + (b * tq + i) * d;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < tk; ++j) {
          double acc = 0;
          const C *kj = kp + (b * tk + j) * d;
          for (int64_t e = 0; e < d; ++e)
            acc += static_cast<double>(qi[e]) * static_cast<double>(kj[e]);
          s[j] = causal && j > i ? -std::numeric_limits<double>::infinity()
                                 : static_cast<double>(static_cast<C>(acc)) *
                                       scale;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < tk; ++j) {
          s[j] = std::isinf(s[j]) && s[j] < 0 ? 0.0 : std::exp(s[j] - mx);
          sum += s[j];
        }
        C *oi = op + (b * tq + i) * dv;
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < tk; ++j)
            acc += s[j] * static_cast<double>(vp[(b * tk + j) * dv + e]);
          oi[e] = static_cast<C>(acc / sum);
        }
      }
  };
  if (wide)
    run(double());
  else
    run(float());
  return out.to(q.dtype());
}

/// kiln.attention: q [B, H, Tq, D], k [B, H, Tk, D], v [B, H, Tk, Dv].
Status attentionKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, "attention", 1));
  KILN_CHECK(ctx.numInputs() == 3, "attention: expected q, k and v, got ",
             ctx.numInputs(), " operands");
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  KILN_CHECK(q.rank() == 4 && k.rank() == 4 && v.rank() == 4 &&
                 q.dtype() == k.dtype() && q.dtype() == v.dtype() &&
                 q.dim(0) == k.dim(0) && q.dim(1) == k.dim(1) &&
                 v.dim(0) == k.dim(0) && v.dim(1) == k.dim(1) &&
                 q.dim(3) == k.dim(3) && v.dim(2) == k.dim(2),
             "attention: q, k and v must be B x H x T x D of one dtype that "
             "agree on B, H, Tk and D; got ",
             q.typeString(), ", ", k.typeString(), " and ", v.typeString());
  ctx.outputs[0] = attend(q, k, v, ctx.attrs.getFloat("scale", 1.0),
                          ctx.attrs.getInt("causal", 0) != 0);
  return Status::ok();
}

/// kiln.packed_attention: qkv [B, T, 3 * H * D] with `heads` H, result
/// [B, T, H, D]: the heads are unpacked into q, k, v [B, H, T, D] copies and
/// the result is transposed back.
Status packedAttentionKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, "packed_attention", 1));
  KILN_CHECK(ctx.numInputs() == 1, "packed_attention: expected qkv, got ",
             ctx.numInputs(), " operands");
  const Tensor &qkv = ctx.input(0);
  int64_t heads = ctx.attrs.getInt("heads", 0);
  KILN_CHECK(qkv.rank() == 3 && heads > 0 && qkv.dim(2) % 3 == 0 &&
                 (qkv.dim(2) / 3) % heads == 0,
             "packed_attention: qkv must be B x T x 3*H*D with heads = H; got ",
             qkv.typeString(), " with heads = ", heads);
  int64_t b = qkv.dim(0), t = qkv.dim(1), d = qkv.dim(2) / 3 / heads;
  // [B, T, 3, H, D] -> [3, B, H, T, D], then q, k, v as views of it.
  Tensor split =
      qkv.reshape({b, t, 3, heads, d}).permute({2, 0, 3, 1, 4}).contiguous();
  int64_t each = b * heads * t * d;
  auto part = [&](int64_t i) {
    return Tensor(split.storage(), split.dtype(), {b, heads, t, d},
                  {heads * t * d, t * d, d, 1}, split.offset() + i * each);
  };
  Tensor out = attend(part(0), part(1), part(2),
                      ctx.attrs.getFloat("scale", 1.0),
                      ctx.attrs.getInt("causal", 0) != 0);
  ctx.outputs[0] = out.permute({0, 2, 1, 3}).contiguous();
  return Status::ok();
}

} // namespace

void registerSoftmaxKernels(Dispatcher &d) {
  d.add("attention", Device::CPU, kFloatTypes, attentionKernel);
  d.add("packed_attention", Device::CPU, kFloatTypes, packedAttentionKernel);
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
