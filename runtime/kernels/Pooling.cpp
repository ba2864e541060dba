//===- Pooling.cpp - Reference max_pool and avg_pool kernels --------------===//
//
// This file implements the CPU reference kernels of kiln.max_pool (ONNX
// MaxPool-12, one result) and kiln.avg_pool (ONNX AveragePool-19) over N-D
// NCHW inputs, with kernel_shape, strides, dilations, pads and ceil_mode.
// The output size follows ONNX: floor (or ceil with ceil_mode) of
// (in + pads - window) / stride + 1, where with ceil_mode a last window that
// would start past the input and its left padding is dropped. Window
// positions outside the input are skipped for max; for avg they count in the
// divisor only with count_include_pad=1, and only when they lie inside the
// explicitly padded input (positions added by ceil_mode never count).
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "LinalgKernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln {
namespace linalg {
namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/// Per spatial dim and output position: the input coordinates the window
/// reads (inside the input) and how many of its positions lie inside the
/// explicitly padded input.
struct PoolPlan {
  int64_t batch = 0, channels = 0;
  Shape inSpatial, outSpatial;
  std::vector<std::vector<std::vector<int64_t>>> coords; // [dim][out][j]
  std::vector<std::vector<int64_t>> paddedCount;         // [dim][out]
};

Expected<Shape> listAttr(const char *op, const Attributes &attrs,
                         const char *name, size_t n, int64_t dflt) {
  Shape v = attrs.has(name) ? attrs.getInts(name) : Shape();
  if (v.empty())
    return Shape(n, dflt);
  if (v.size() != n)
    return Status::error(strCat(op, ": attribute '", name, "' has ", v.size(),
                                " entries, expected ", n));
  return v;
}

Expected<PoolPlan> planPool(const char *op, const KernelContext &ctx) {
  if (ctx.numInputs() != 1)
    return Status::error(
        strCat(op, ": expected 1 operand, got ", ctx.numInputs()));
  const Tensor &x = ctx.input(0);
  if (x.rank() < 3)
    return Status::error(strCat(op,
                                ": x must have rank >= 3 (N, C, spatial"
                                "...), got ",
                                x.typeString()));
  size_t nsp = x.rank() - 2;
  Shape kernel = ctx.attrs.getInts("kernel_shape");
  if (kernel.size() != nsp)
    return Status::error(strCat(op, ": kernel_shape ", shapeToString(kernel),
                                " must have one entry per spatial dim of x ",
                                x.typeString()));
  auto strides = listAttr(op, ctx.attrs, "strides", nsp, 1);
  auto dilations = listAttr(op, ctx.attrs, "dilations", nsp, 1);
  auto pads = listAttr(op, ctx.attrs, "pads", 2 * nsp, 0);
  for (auto *e : {&strides, &dilations, &pads})
    if (!*e)
      return e->status();
  bool ceilMode = ctx.attrs.getInt("ceil_mode", 0) != 0;
  PoolPlan p;
  p.batch = x.dim(0);
  p.channels = x.dim(1);
  p.inSpatial.assign(x.shape().begin() + 2, x.shape().end());
  p.coords.resize(nsp);
  p.paddedCount.resize(nsp);
  for (size_t d = 0; d < nsp; ++d) {
    int64_t k = kernel[d], s = (*strides)[d], dil = (*dilations)[d];
    int64_t pb = (*pads)[d], pe = (*pads)[nsp + d], in = p.inSpatial[d];
    if (k < 1 || s < 1 || dil < 1 || pb < 0 || pe < 0)
      return Status::error(strCat(op, ": spatial dim ", d, ": kernel_shape (",
                                  k, "), strides (", s, ") and dilations (",
                                  dil, ") must be >= 1 and pads (", pb, ", ",
                                  pe, ") >= 0"));
    int64_t window = (k - 1) * dil + 1;
    int64_t span = in + pb + pe - window;
    int64_t out;
    if (ceilMode) {
      out = -floorDiv(-span, s) + 1;
      // The last window must start inside the input or its left padding.
      if ((out - 1) * s >= in + pb)
        --out;
    } else {
      out = floorDiv(span, s) + 1;
    }
    out = std::max<int64_t>(out, 0);
    p.outSpatial.push_back(out);
    p.coords[d].resize(out);
    p.paddedCount[d].resize(out);
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t j = 0; j < k; ++j) {
        int64_t pos = o * s - pb + j * dil;
        if (pos >= 0 && pos < in)
          p.coords[d][o].push_back(pos);
        if (pos >= -pb && pos < in + pe)
          ++p.paddedCount[d][o];
      }
    }
  }
  return p;
}

/// Calls fn(outFlat, windowOffsets, paddedCount) for every output position
/// of one (n, c) plane, where windowOffsets are the flat input offsets the
/// window reads.
template <typename Fn> void forEachWindow(const PoolPlan &p, Fn &&fn) {
  size_t nsp = p.inSpatial.size();
  Shape inStrides = contiguousStrides(p.inSpatial);
  int64_t outSize = numElements(p.outSpatial);
  std::vector<int64_t> oIdx(nsp, 0), wIdx(nsp), offsets;
  for (int64_t of = 0; of < outSize; ++of) {
    offsets.clear();
    int64_t count = 1;
    bool empty = false;
    for (size_t d = 0; d < nsp; ++d) {
      count *= p.paddedCount[d][oIdx[d]];
      empty = empty || p.coords[d][oIdx[d]].empty();
    }
    if (!empty) {
      std::fill(wIdx.begin(), wIdx.end(), 0);
      while (true) {
        int64_t off = 0;
        for (size_t d = 0; d < nsp; ++d)
          off += p.coords[d][oIdx[d]][wIdx[d]] * inStrides[d];
        offsets.push_back(off);
        int64_t d = static_cast<int64_t>(nsp) - 1;
        for (; d >= 0; --d) {
          if (++wIdx[d] < static_cast<int64_t>(p.coords[d][oIdx[d]].size()))
            break;
          wIdx[d] = 0;
        }
        if (d < 0)
          break;
      }
    }
    fn(of, offsets, count);
    for (int64_t d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
      if (++oIdx[d] < p.outSpatial[d])
        break;
      oIdx[d] = 0;
    }
  }
}

Shape outputShape(const PoolPlan &p) {
  Shape s = {p.batch, p.channels};
  s.insert(s.end(), p.outSpatial.begin(), p.outSpatial.end());
  return s;
}

Status maxPoolKernel(KernelContext &ctx) {
  auto plan = planPool("max_pool", ctx);
  if (!plan)
    return plan.status();
  const PoolPlan &p = *plan;
  Tensor x = ctx.input(0).contiguous();
  Tensor y = Tensor::empty(x.dtype(), outputShape(p));
  int64_t planes = p.batch * p.channels, inSize = numElements(p.inSpatial),
          outSize = numElements(p.outSpatial);
  Status st = Status::ok();
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      st = Status::error("max_pool: bool input is not supported");
    } else {
      using C = typename ComputeType<T>::type;
      const T *xp = x.data<T>();
      T *yp = y.data<T>();
      for (int64_t pl = 0; pl < planes; ++pl) {
        const T *xs = xp + pl * inSize;
        T *ys = yp + pl * outSize;
        forEachWindow(
            p, [&](int64_t of, const std::vector<int64_t> &offs, int64_t) {
              C m = std::numeric_limits<C>::has_infinity
                        ? -std::numeric_limits<C>::infinity()
                        : std::numeric_limits<C>::lowest();
              for (int64_t off : offs) {
                C v = static_cast<C>(xs[off]);
                if constexpr (std::is_floating_point_v<C>) {
                  if (std::isnan(v)) {
                    m = v;
                    break;
                  }
                }
                m = v > m ? v : m;
              }
              ys[of] = static_cast<T>(m);
            });
      }
    }
  });
  KILN_RETURN_IF_ERROR(st);
  ctx.outputs[0] = y;
  return Status::ok();
}

Status avgPoolKernel(KernelContext &ctx) {
  auto plan = planPool("avg_pool", ctx);
  if (!plan)
    return plan.status();
  const PoolPlan &p = *plan;
  bool includePad = ctx.attrs.getInt("count_include_pad", 0) != 0;
  Tensor x = ctx.input(0).contiguous();
  KILN_CHECK(isFloatingPoint(x.dtype()), "avg_pool: x must be a float type, ",
             "got ", x.typeString());
  Tensor y = Tensor::empty(x.dtype(), outputShape(p));
  int64_t planes = p.batch * p.channels, inSize = numElements(p.inSpatial),
          outSize = numElements(p.outSpatial);
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<typename ComputeType<T>::type, float> ||
                  std::is_same_v<T, double>) {
      const T *xp = x.data<T>();
      T *yp = y.data<T>();
      for (int64_t pl = 0; pl < planes; ++pl) {
        const T *xs = xp + pl * inSize;
        T *ys = yp + pl * outSize;
        forEachWindow(p, [&](int64_t of, const std::vector<int64_t> &offs,
                             int64_t paddedCount) {
          double sum = 0;
          for (int64_t off : offs)
            sum += static_cast<double>(xs[off]);
          double n = includePad ? static_cast<double>(paddedCount)
                                : static_cast<double>(offs.size());
          if constexpr (std::is_same_v<T, double>)
            ys[of] = sum / n;
          else
            ys[of] = static_cast<T>(static_cast<float>(sum / n));
        });
      }
    }
  });
  ctx.outputs[0] = y;
  return Status::ok();
}

} // namespace

void registerPoolingKernels(Dispatcher &d) {
  d.add("max_pool", Device::CPU, kNumericTypes, [](KernelContext &ctx) {
    return kernels::runChannelsFirst("max_pool", ctx, 1, maxPoolKernel);
  });
  d.add("avg_pool", Device::CPU, kFloatTypes, avgPoolKernel);
}

} // namespace linalg
} // namespace kiln
