//===- Normalization.cpp - Reference normalization kernels ----------------===//
//
// This file implements the CPU reference kernels of kiln.batch_norm
// (inference), kiln.layer_norm (with its mean and inv_std_dev results),
// kiln.rms_norm, kiln.instance_norm and kiln.group_norm, following
// docs/op-semantics.md (ONNX's latest opset semantics). Statistics are
// accumulated in f64 and applied in f32 (f64 for f64 inputs); f16/bf16
// results are rounded once on store. The softmax family lives in Softmax.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "NormalizationKernels.h"

#include <cmath>

namespace kiln {
namespace norm {
namespace {

template <typename T>
constexpr bool kIsFloatStorage =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
    std::is_same_v<T, BFloat16>;

/// Expands parameter operand `p` (NumPy-broadcastable to `target`, leading
/// size-1 dims allowed beyond target's rank) into a dense C-order vector of
/// numElements(target) values.
Expected<std::vector<double>> expandParam(const Tensor &p, const Shape &target,
                                          const char *op, const char *what,
                                          size_t index) {
  Shape ps = p.shape();
  while (ps.size() > target.size() && ps.front() == 1)
    ps.erase(ps.begin());
  auto mismatch = [&] {
    return Status::error(strCat(op, ": operand ", index, " (", what, ") ",
                                p.typeString(),
                                " does not broadcast to the "
                                "normalized dims ",
                                shapeToString(target)));
  };
  if (ps.size() > target.size())
    return mismatch();
  size_t lead = target.size() - ps.size();
  Shape strides(target.size(), 0);
  Shape own = contiguousStrides(ps);
  for (size_t i = 0; i < ps.size(); ++i) {
    if (ps[i] != target[lead + i] && ps[i] != 1)
      return mismatch();
    strides[lead + i] = ps[i] == 1 ? 0 : own[i];
  }
  std::vector<double> values = p.toDoubleVector();
  std::vector<double> out;
  out.reserve(numElements(target));
  forEachIndex(target, [&](const std::vector<int64_t> &idx) {
    out.push_back(values[offsetOf(idx, strides)]);
  });
  return out;
}

/// Reads a per-channel parameter holding exactly `c` values.
Expected<std::vector<double>> channelParam(const Tensor &p, int64_t c,
                                           const char *op, const char *what,
                                           size_t index) {
  if (p.numel() != c)
    return Status::error(strCat(op, ": operand ", index, " (", what,
                                ") must hold ", c,
                                " values (one per channel),"
                                " got ",
                                p.typeString()));
  return p.toDoubleVector();
}

Status checkFloat(const Tensor &x, const char *op) {
  KILN_CHECK(isFloatingPoint(x.dtype()), op,
             ": x must be a floating-point tensor, got ", x.typeString());
  return Status::ok();
}

/// Mean and 1/sqrt(var + eps) of n contiguous values (two passes, f64).
template <typename T>
void moments(const T *x, int64_t n, double eps, double &mean, double &inv) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += static_cast<double>(x[i]);
  mean = n ? sum / n : 0.0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(x[i]) - mean;
    sq += d * d;
  }
  double var = n ? sq / n : 0.0;
  inv = 1.0 / std::sqrt(var + eps);
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

Status batchNormKernel(KernelContext &ctx) {
  const char *op = "batch_norm";
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, op, 1));
  KILN_CHECK(ctx.numInputs() == 5, op,
             ": expected 5 operands (x, scale, bias, mean, var), got ",
             ctx.numInputs());
  const Tensor &x = ctx.input(0);
  KILN_RETURN_IF_ERROR(checkFloat(x, op));
  KILN_CHECK(x.rank() >= 2, op, ": x must have rank >= 2 (N, C, ...), got ",
             x.typeString());
  int64_t c = x.dim(1);
  const char *names[] = {"x", "scale", "bias", "mean", "var"};
  std::vector<double> params[5];
  for (size_t i = 1; i < 5; ++i) {
    auto p = channelParam(ctx.input(i), c, op, names[i], i);
    if (!p)
      return p.status();
    params[i] = p.take();
  }
  double eps = ctx.attrs.getFloat("epsilon", 1e-5);
  // y = x * a[c] + b[c].
  std::vector<double> a(c), b(c);
  for (int64_t k = 0; k < c; ++k) {
    a[k] = params[1][k] / std::sqrt(params[4][k] + eps);
    b[k] = params[2][k] - params[3][k] * a[k];
  }
  int64_t n = x.dim(0), spatial = 1;
  for (int64_t i = 2; i < x.rank(); ++i)
    spatial *= x.dim(i);
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatStorage<T>) {
      using C = NormCompute<T>;
      const T *src = in.data<T>();
      T *dst = out.data<T>();
      for (int64_t bn = 0; bn < n; ++bn)
        for (int64_t k = 0; k < c; ++k) {
          C ak = static_cast<C>(a[k]), bk = static_cast<C>(b[k]);
          int64_t base = (bn * c + k) * spatial;
          for (int64_t s = 0; s < spatial; ++s)
            dst[base + s] = storeAs<T>(static_cast<C>(src[base + s]) * ak + bk);
        }
    }
  });
  ctx.outputs[0] = out;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// layer_norm / rms_norm
//===----------------------------------------------------------------------===//

/// Shared by layer_norm (Rms = false) and rms_norm (Rms = true).
template <bool Rms>
Status lastDimsNormKernel(KernelContext &ctx, const char *op) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, op, 1));
  size_t want = Rms ? 2 : 3;
  KILN_CHECK(ctx.numInputs() == want || (!Rms && ctx.numInputs() == 2), op,
             ": expected ", want,
             Rms ? " operands (x, scale)" : " operands (x, scale, bias)",
             ", got ", ctx.numInputs());
  const Tensor &x = ctx.input(0);
  KILN_RETURN_IF_ERROR(checkFloat(x, op));
  auto axisOr = normalizeAxis(ctx.attrs.getInt("axis", -1), x.rank());
  if (!axisOr)
    return axisOr.status().withContext(strCat(op, ": x ", x.typeString()));
  int64_t axis = *axisOr;
  double eps = ctx.attrs.getFloat("epsilon", 1e-5);

  Shape normShape(x.shape().begin() + axis, x.shape().end());
  Shape statShape = x.shape();
  int64_t outer = 1;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (i < axis)
      outer *= x.dim(i);
    else
      statShape[i] = 1;
  }
  int64_t n = numElements(normShape);
  auto scale = expandParam(ctx.input(1), normShape, op, "scale", 1);
  if (!scale)
    return scale.status();
  std::vector<double> bias;
  if (!Rms && ctx.numInputs() == 3) {
    auto b = expandParam(ctx.input(2), normShape, op, "bias", 2);
    if (!b)
      return b.status();
    bias = b.take();
  }
  if (bias.empty())
    bias.assign(n, 0.0);

  DType statType = x.dtype() == DType::F64 ? DType::F64 : DType::F32;
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  Tensor meanT = Tensor::empty(statType, statShape);
  Tensor invT = Tensor::empty(statType, statShape);
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatStorage<T>) {
      using C = NormCompute<T>;
      const T *src = in.data<T>();
      T *dst = out.data<T>();
      C *meanOut = meanT.data<C>();
      C *invOut = invT.data<C>();
      std::vector<C> s(scale->begin(), scale->end()),
          b(bias.begin(), bias.end());
      for (int64_t o = 0; o < outer; ++o) {
        const T *xr = src + o * n;
        T *yr = dst + o * n;
        double mean = 0, inv;
        if (Rms) {
          double sq = 0;
          for (int64_t i = 0; i < n; ++i) {
            double v = static_cast<double>(xr[i]);
            sq += v * v;
          }
          inv = 1.0 / std::sqrt((n ? sq / n : 0.0) + eps);
        } else {
          moments(xr, n, eps, mean, inv);
        }
        C m = static_cast<C>(mean), r = static_cast<C>(inv);
        for (int64_t i = 0; i < n; ++i)
          yr[i] = storeAs<T>((static_cast<C>(xr[i]) - m) * r * s[i] + b[i]);
        meanOut[o] = m;
        invOut[o] = r;
      }
    }
  });
  ctx.outputs[0] = out;
  if (!Rms) {
    if (ctx.outputs.size() > 1)
      ctx.outputs[1] = meanT;
    if (ctx.outputs.size() > 2)
      ctx.outputs[2] = invT;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// instance_norm / group_norm
//===----------------------------------------------------------------------===//

/// Normalizes x (N, C, spatial...) over groups of C/groups channels times the
/// spatial dims, then applies a per-channel affine transform. instance_norm
/// is the case groups == C.
template <typename T>
void groupNormalize(const T *src, T *dst, int64_t n, int64_t c, int64_t groups,
                    int64_t spatial, double eps,
                    const std::vector<double> &scale,
                    const std::vector<double> &bias) {
  using C = NormCompute<T>;
  int64_t perGroup = c / groups;
  int64_t groupSize = perGroup * spatial;
  for (int64_t bn = 0; bn < n; ++bn)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t base = (bn * c + g * perGroup) * spatial;
      double mean, inv;
      moments(src + base, groupSize, eps, mean, inv);
      for (int64_t k = 0; k < perGroup; ++k) {
        int64_t ch = g * perGroup + k;
        C a = static_cast<C>(inv * scale[ch]);
        C b = static_cast<C>(bias[ch] - mean * inv * scale[ch]);
        int64_t off = base + k * spatial;
        for (int64_t s = 0; s < spatial; ++s)
          dst[off + s] = storeAs<T>(static_cast<C>(src[off + s]) * a + b);
      }
    }
}

template <bool Group>
Status groupNormKernel(KernelContext &ctx, const char *op) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, op, 1));
  KILN_CHECK(ctx.numInputs() == 3, op,
             ": expected 3 operands (x, scale, bias), got ", ctx.numInputs());
  const Tensor &x = ctx.input(0);
  KILN_RETURN_IF_ERROR(checkFloat(x, op));
  KILN_CHECK(x.rank() >= 2, op, ": x must have rank >= 2 (N, C, ...), got ",
             x.typeString());
  int64_t n = x.dim(0), c = x.dim(1), spatial = 1;
  for (int64_t i = 2; i < x.rank(); ++i)
    spatial *= x.dim(i);
  int64_t groups = c;
  if (Group) {
    groups = ctx.attrs.getInt("num_groups", 0);
    KILN_CHECK(groups > 0 && c % groups == 0, op, ": num_groups = ", groups,
               " must be positive and divide the channel count ", c, " of x ",
               x.typeString());
  }
  std::vector<double> params[2];
  const char *names[] = {"scale", "bias"};
  for (size_t i = 0; i < 2; ++i) {
    const Tensor &p = ctx.input(i + 1);
    if (Group && p.numel() == groups && groups != c) {
      // GroupNormalization-18 form: one value per group.
      std::vector<double> perGroup = p.toDoubleVector();
      for (int64_t ch = 0; ch < c; ++ch)
        params[i].push_back(perGroup[ch / (c / groups)]);
      continue;
    }
    auto v = channelParam(p, c, op, names[i], i + 1);
    if (!v)
      return v.status();
    params[i] = v.take();
  }
  double eps = ctx.attrs.getFloat("epsilon", 1e-5);
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  if (c > 0)
    visitDType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsFloatStorage<T>)
        groupNormalize<T>(in.data<T>(), out.data<T>(), n, c, groups, spatial,
                          eps, params[0], params[1]);
    });
  ctx.outputs[0] = out;
  return Status::ok();
}

} // namespace
} // namespace norm

void registerNormalizationKernels(Dispatcher &d) {
  const Device cpu = Device::CPU;
  d.add("batch_norm", cpu, kFloatTypes, norm::batchNormKernel);
  d.add("layer_norm", cpu, kFloatTypes, [](KernelContext &ctx) {
    return norm::lastDimsNormKernel<false>(ctx, "layer_norm");
  });
  d.add("rms_norm", cpu, kFloatTypes, [](KernelContext &ctx) {
    return norm::lastDimsNormKernel<true>(ctx, "rms_norm");
  });
  d.add("instance_norm", cpu, kFloatTypes, [](KernelContext &ctx) {
    return norm::groupNormKernel<false>(ctx, "instance_norm");
  });
  d.add("group_norm", cpu, kFloatTypes, [](KernelContext &ctx) {
    return norm::groupNormKernel<true>(ctx, "group_norm");
  });
  norm::registerSoftmaxKernels(d);
}

} // namespace kiln
