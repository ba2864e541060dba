//===- Convolution.cpp - Reference conv and conv_transpose kernels --------===//
//
// This file implements the CPU reference kernels of kiln.conv (N-D
// cross-correlation, NCHW, groups, strides, dilations, pads) and
// kiln.conv_transpose (its adjoint, with output_padding). Both lower each
// (batch, group) pair to one GEMM: conv gathers input patches into a column
// matrix (im2col) and multiplies the weights by it; conv_transpose multiplies
// the transposed weights by the input and scatter-adds the columns into the
// output (col2im). f32 and f64 use BLAS; f16 and bf16 compute in f32 and
// round once on store. kiln.depthwise_conv (the CUDA target's depthwise
// convolution with its activations) is the conv between its activations.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "LinalgKernels.h"

#include <algorithm>
#include <type_traits>

namespace kiln {
namespace linalg {
namespace {

/// The geometry of one conv or conv_transpose call, with the attributes
/// checked and defaulted.
struct ConvGeometry {
  int64_t batch = 0, inChannels = 0, outChannels = 0, group = 1;
  Shape inSpatial, kernel, outSpatial;
  Shape strides, dilations, padBegin;
  int64_t inSize() const { return numElements(inSpatial); }
  int64_t outSize() const { return numElements(outSpatial); }
  int64_t kernelSize() const { return numElements(kernel); }
};

/// Reads an integer-list attribute of `n` entries, `dflt` when absent or
/// empty.
Expected<Shape> spatialAttr(const char *op, const Attributes &attrs,
                            const char *name, size_t n, int64_t dflt) {
  if (!attrs.has(name))
    return Shape(n, dflt);
  Shape v = attrs.getInts(name);
  if (v.empty())
    return Shape(n, dflt);
  if (v.size() != n)
    return Status::error(strCat(op, ": attribute '", name, "' has ", v.size(),
                                " entries, expected ", n));
  return v;
}

/// Checks operands and attributes shared by conv and conv_transpose; fills
/// everything but outChannels and outSpatial.
Status readGeometry(const char *op, const KernelContext &ctx, ConvGeometry &g,
                    Shape &padEnd) {
  KILN_CHECK(ctx.numInputs() == 2, op, ": expected 2 operands (x, w), got ",
             ctx.numInputs());
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  KILN_CHECK(x.dtype() == w.dtype(), op, ": x is ", x.typeString(),
             " but w is ", w.typeString());
  KILN_CHECK(x.rank() >= 3 && x.rank() == w.rank(), op,
             ": x and w must have the same rank >= 3, got x ", x.typeString(),
             " and w ", w.typeString());
  size_t nsp = x.rank() - 2;
  g.batch = x.dim(0);
  g.inChannels = x.dim(1);
  g.inSpatial.assign(x.shape().begin() + 2, x.shape().end());
  g.kernel.assign(w.shape().begin() + 2, w.shape().end());
  g.group = ctx.attrs.getInt("group", 1);
  KILN_CHECK(g.group >= 1, op, ": group must be >= 1, got ", g.group);
  auto strides = spatialAttr(op, ctx.attrs, "strides", nsp, 1);
  auto dilations = spatialAttr(op, ctx.attrs, "dilations", nsp, 1);
  auto pads = spatialAttr(op, ctx.attrs, "pads", 2 * nsp, 0);
  for (auto *e : {&strides, &dilations, &pads})
    if (!*e)
      return e->status();
  g.strides = *strides;
  g.dilations = *dilations;
  g.padBegin.assign(pads->begin(), pads->begin() + nsp);
  padEnd.assign(pads->begin() + nsp, pads->end());
  for (size_t d = 0; d < nsp; ++d) {
    KILN_CHECK(g.strides[d] >= 1, op, ": strides must be >= 1, got ",
               shapeToString(g.strides));
    KILN_CHECK(g.dilations[d] >= 1, op, ": dilations must be >= 1, got ",
               shapeToString(g.dilations));
  }
  return Status::ok();
}

/// Gathers the patches of one (batch, group) image into col[Cg*K, O].
template <typename T>
void im2col(const ConvGeometry &g, const T *x, int64_t channels, T *col) {
  size_t nsp = g.kernel.size();
  int64_t kSize = g.kernelSize(), inSize = g.inSize();
  int64_t oLast = g.outSpatial[nsp - 1],
          outer = g.outSize() / std::max<int64_t>(oLast, 1);
  Shape inStrides = contiguousStrides(g.inSpatial);
  std::vector<int64_t> kIdx(nsp), oIdx(nsp);
  for (int64_t c = 0; c < channels; ++c) {
    const T *xc = x + c * inSize;
    for (int64_t kf = 0; kf < kSize; ++kf) {
      for (int64_t r = kf, d = nsp - 1; d >= 0; --d) {
        kIdx[d] = r % g.kernel[d];
        r /= g.kernel[d];
      }
      T *row = col + (c * kSize + kf) * g.outSize();
      std::fill(oIdx.begin(), oIdx.end(), 0);
      for (int64_t o = 0; o < outer; ++o) {
        // Offset and validity of the outer output dims.
        bool valid = true;
        int64_t off = 0;
        for (size_t d = 0; d + 1 < nsp; ++d) {
          int64_t p =
              oIdx[d] * g.strides[d] - g.padBegin[d] + kIdx[d] * g.dilations[d];
          valid = valid && p >= 0 && p < g.inSpatial[d];
          off += p * inStrides[d];
        }
        T *dst = row + o * oLast;
        size_t L = nsp - 1;
        for (int64_t j = 0; j < oLast; ++j) {
          int64_t p =
              j * g.strides[L] - g.padBegin[L] + kIdx[L] * g.dilations[L];
          dst[j] = (valid && p >= 0 && p < g.inSpatial[L]) ? xc[off + p] : T(0);
        }
        for (int64_t d = static_cast<int64_t>(nsp) - 2; d >= 0; --d) {
          if (++oIdx[d] < g.outSpatial[d])
            break;
          oIdx[d] = 0;
        }
      }
    }
  }
}

/// Scatter-adds col[Mg*K, I] (one (batch, group) image) into y[Mg, O].
template <typename T>
void col2im(const ConvGeometry &g, const T *col, int64_t channels, T *y) {
  size_t nsp = g.kernel.size();
  int64_t kSize = g.kernelSize(), inSize = g.inSize(), outSize = g.outSize();
  Shape outStrides = contiguousStrides(g.outSpatial);
  std::vector<int64_t> kIdx(nsp), iIdx(nsp);
  for (int64_t c = 0; c < channels; ++c) {
    T *yc = y + c * outSize;
    for (int64_t kf = 0; kf < kSize; ++kf) {
      for (int64_t r = kf, d = nsp - 1; d >= 0; --d) {
        kIdx[d] = r % g.kernel[d];
        r /= g.kernel[d];
      }
      const T *row = col + (c * kSize + kf) * inSize;
      std::fill(iIdx.begin(), iIdx.end(), 0);
      for (int64_t i = 0; i < inSize; ++i) {
        bool valid = true;
        int64_t off = 0;
        for (size_t d = 0; d < nsp && valid; ++d) {
          int64_t p =
              iIdx[d] * g.strides[d] - g.padBegin[d] + kIdx[d] * g.dilations[d];
          valid = p >= 0 && p < g.outSpatial[d];
          off += p * outStrides[d];
        }
        if (valid)
          yc[off] += row[i];
        for (int64_t d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
          if (++iIdx[d] < g.inSpatial[d])
            break;
          iIdx[d] = 0;
        }
      }
    }
  }
}

template <typename T>
void convForward(const ConvGeometry &g, const T *x, const T *w, T *y) {
  int64_t cg = g.inChannels / g.group, mg = g.outChannels / g.group;
  int64_t kSize = g.kernelSize(), inSize = g.inSize(), outSize = g.outSize();
  if (outSize == 0 || g.batch == 0 || mg == 0)
    return;
  bool pointwise = true;
  for (size_t d = 0; d < g.kernel.size(); ++d)
    pointwise = pointwise && g.kernel[d] == 1 && g.strides[d] == 1 &&
                g.padBegin[d] == 0 && g.outSpatial[d] == g.inSpatial[d];
  std::vector<T> col(pointwise ? 0 : cg * kSize * outSize);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t gi = 0; gi < g.group; ++gi) {
      const T *xg = x + (n * g.inChannels + gi * cg) * inSize;
      const T *cm = xg;
      if (!pointwise) {
        im2col(g, xg, cg, col.data());
        cm = col.data();
      }
      gemm(false, false, mg, outSize, cg * kSize, w + gi * mg * cg * kSize,
           cg * kSize, cm, outSize, T(0),
           y + (n * g.outChannels + gi * mg) * outSize, outSize);
    }
}

template <typename T>
void convTransposeForward(const ConvGeometry &g, const T *x, const T *w, T *y) {
  int64_t cg = g.inChannels / g.group, mg = g.outChannels / g.group;
  int64_t kSize = g.kernelSize(), inSize = g.inSize(), outSize = g.outSize();
  if (outSize == 0 || g.batch == 0 || mg == 0)
    return;
  std::vector<T> col(mg * kSize * inSize);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t gi = 0; gi < g.group; ++gi) {
      // col[Mg*K, I] = W_g^T (W_g is [Cg, Mg*K]) * x_g[Cg, I].
      gemm(true, false, mg * kSize, inSize, cg, w + gi * cg * mg * kSize,
           mg * kSize, x + (n * g.inChannels + gi * cg) * inSize, inSize, T(0),
           col.data(), inSize);
      col2im(g, col.data(), mg, y + (n * g.outChannels + gi * mg) * outSize);
    }
}

/// Runs `fn<T>(x, w, y)` with T = float or double; f16/bf16 go through f32.
template <typename Fn>
Status runFloat(const char *op, KernelContext &ctx, const Shape &outShape,
                Fn &&fn) {
  DType dt = ctx.input(0).dtype();
  bool half = dt == DType::F16 || dt == DType::BF16;
  DType computeType = half ? DType::F32 : dt;
  KILN_CHECK(computeType == DType::F32 || computeType == DType::F64, op,
             ": unsupported dtype ", dtypeName(dt), " (expected a float type)");
  Tensor x = half ? ctx.input(0).to(DType::F32) : ctx.input(0).contiguous();
  Tensor w = half ? ctx.input(1).to(DType::F32) : ctx.input(1).contiguous();
  Tensor y = Tensor::empty(computeType, outShape);
  if (computeType == DType::F32)
    fn(x.data<float>(), w.data<float>(), y.data<float>());
  else
    fn(x.data<double>(), w.data<double>(), y.data<double>());
  ctx.outputs[0] = half ? y.to(dt) : y;
  return Status::ok();
}

Status convKernel(KernelContext &ctx) {
  ConvGeometry g;
  Shape padEnd;
  KILN_RETURN_IF_ERROR(readGeometry("conv", ctx, g, padEnd));
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  g.outChannels = w.dim(0);
  KILN_CHECK(g.inChannels == w.dim(1) * g.group, "conv: x has ", g.inChannels,
             " channels but w ", w.typeString(), " with group ", g.group,
             " expects ", w.dim(1) * g.group);
  KILN_CHECK(g.outChannels % g.group == 0, "conv: w has ", g.outChannels,
             " output channels, not divisible by group ", g.group);
  Shape outShape = {g.batch, g.outChannels};
  for (size_t d = 0; d < g.kernel.size(); ++d) {
    int64_t window = (g.kernel[d] - 1) * g.dilations[d] + 1;
    int64_t span = g.inSpatial[d] + g.padBegin[d] + padEnd[d] - window;
    KILN_CHECK(span >= 0, "conv: spatial dim ", d, ": the kernel window (",
               window, ") is larger than the padded input (",
               g.inSpatial[d] + g.padBegin[d] + padEnd[d], "); x ",
               x.typeString(), ", w ", w.typeString());
    g.outSpatial.push_back(span / g.strides[d] + 1);
    outShape.push_back(g.outSpatial.back());
  }
  return runFloat("conv", ctx, outShape, [&](auto *xp, auto *wp, auto *yp) {
    convForward(g, xp, wp, yp);
  });
}

/// `t` with the depthwise activation `name` (kiln.depthwise_conv's
/// input_activation / activation) applied through the reference kernels of
/// the ops kiln-cuda-fuse-depthwise replaces (relu; max and min; sigmoid
/// and mul; hard_swish), so the result is theirs exactly.
Expected<Tensor> applyActivation(const Tensor &t, const std::string &name) {
  if (name == "none")
    return t;
  const Dispatcher &d = Dispatcher::global();
  auto call = [&](const char *op, std::vector<Tensor> operands,
                  Tensor &out) -> Status {
    std::vector<Tensor> results(1);
    KILN_RETURN_IF_ERROR(d.call(op, operands, Attributes(), results));
    out = results[0];
    return Status::ok();
  };
  auto scalar = [&](float v) { return Tensor::scalar(v).to(t.dtype()); };
  Tensor y;
  if (name == "relu" || name == "hard_swish") {
    KILN_RETURN_IF_ERROR(call(name.c_str(), {t}, y));
  } else if (name == "relu6") {
    KILN_RETURN_IF_ERROR(call("max", {t, scalar(0.0f)}, y));
    KILN_RETURN_IF_ERROR(call("min", {y, scalar(6.0f)}, y));
  } else if (name == "silu") {
    KILN_RETURN_IF_ERROR(call("sigmoid", {t}, y));
    KILN_RETURN_IF_ERROR(call("mul", {t, y}, y));
  } else {
    return Status::error(strCat(
        "depthwise_conv: unknown activation '", name,
        "' (expected none, relu, relu6, silu or hard_swish)"));
  }
  return y;
}

/// kiln.depthwise_conv: the activations around a conv, each rounded to the
/// dtype as the ops it replaces.
Status depthwiseConvKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 2 && ctx.input(0).defined() &&
                 isFloatingPoint(ctx.input(0).dtype()),
             "depthwise_conv: expected a float x and w");
  Expected<Tensor> x = applyActivation(
      ctx.input(0), ctx.attrs.getString("input_activation", "none"));
  if (!x)
    return x.status();
  std::vector<Tensor> inputs = {*x, ctx.input(1)};
  KernelContext conv{inputs, ctx.attrs, ctx.outputs};
  KILN_RETURN_IF_ERROR(
      kernels::runChannelsFirst("depthwise_conv", conv, 2, convKernel));
  Expected<Tensor> y = applyActivation(
      ctx.outputs[0], ctx.attrs.getString("activation", "none"));
  if (!y)
    return y.status();
  ctx.outputs[0] = *y;
  return Status::ok();
}

Status convTransposeKernel(KernelContext &ctx) {
  ConvGeometry g;
  Shape padEnd;
  KILN_RETURN_IF_ERROR(readGeometry("conv_transpose", ctx, g, padEnd));
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  KILN_CHECK(w.dim(0) == g.inChannels, "conv_transpose: x has ", g.inChannels,
             " channels but w ", w.typeString(), " expects ", w.dim(0));
  KILN_CHECK(g.inChannels % g.group == 0, "conv_transpose: ", g.inChannels,
             " input channels are not divisible by group ", g.group);
  g.outChannels = w.dim(1) * g.group;
  size_t nsp = g.kernel.size();
  auto outPad =
      spatialAttr("conv_transpose", ctx.attrs, "output_padding", nsp, 0);
  if (!outPad)
    return outPad.status();
  Shape outShape = {g.batch, g.outChannels};
  for (size_t d = 0; d < nsp; ++d) {
    int64_t window = (g.kernel[d] - 1) * g.dilations[d] + 1;
    int64_t o = g.strides[d] * (g.inSpatial[d] - 1) + (*outPad)[d] + window -
                g.padBegin[d] - padEnd[d];
    KILN_CHECK(o >= 0, "conv_transpose: spatial dim ", d,
               " would have negative size ", o, "; x ", x.typeString(), ", w ",
               w.typeString());
    g.outSpatial.push_back(o);
    outShape.push_back(o);
  }
  return runFloat("conv_transpose", ctx, outShape,
                  [&](auto *xp, auto *wp, auto *yp) {
                    convTransposeForward(g, xp, wp, yp);
                  });
}

} // namespace

void registerConvolutionKernels(Dispatcher &d) {
  d.add("conv", Device::CPU, kFloatTypes, [](KernelContext &ctx) {
    return kernels::runChannelsFirst("conv", ctx, 2, convKernel);
  });
  d.add("depthwise_conv", Device::CPU, kFloatTypes, depthwiseConvKernel);
  d.add("conv_transpose", Device::CPU, kFloatTypes, convTransposeKernel);
}

} // namespace linalg
} // namespace kiln
