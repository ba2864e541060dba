//===- Resize.cpp - Reference kernel of kiln.resize -----------------------===//
//
// This file implements the reference CPU kernel of kiln.resize with ONNX
// Resize-19 semantics, following onnx/reference/ops/op_resize.py: the plan
// (ResizePlan.h: output size, per-axis input positions and weights) is made
// from the attributes and the scales or sizes; the input is converted to
// double and interpolated one axis at a time, in axis order, skipping
// identity axes; the result is saturate-cast to the input dtype once.
//
//===----------------------------------------------------------------------===//

#include "ResizePlan.h"

#include "kiln/runtime/Dispatcher.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kiln {
namespace {

/// Interpolates `data` (shape `shape`) along `axis` to `outW` positions.
std::vector<double> applyAxis(const std::vector<double> &data, Shape &shape,
                              int64_t axis, int64_t outW,
                              const resize::AxisPlan &plan,
                              double extrapolationValue) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i)
    inner *= shape[i];
  int64_t inW = shape[axis];
  std::vector<double> out(static_cast<size_t>(outer * outW * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    const double *src = data.data() + o * inW * inner;
    double *dst = out.data() + o * outW * inner;
    for (int64_t y = 0; y < outW; ++y) {
      double *row = dst + y * inner;
      if (plan.extrapolated[y]) {
        std::fill(row, row + inner, extrapolationValue);
        continue;
      }
      for (int64_t k = 0; k < plan.n; ++k) {
        double w = plan.w[y * plan.n + k];
        const double *s = src + plan.idx[y * plan.n + k] * inner;
        for (int64_t i = 0; i < inner; ++i)
          row[i] += w * s[i];
      }
    }
  }
  shape[axis] = outW;
  return out;
}

/// Saturating conversion of a double to T (integers round half to even).
template <typename T> T saturateCast(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v))
      return T(0);
    v = std::nearbyint(v);
    double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo)
      return std::numeric_limits<T>::lowest();
    if (v >= hi)
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    double hi;
    if constexpr (std::is_same_v<T, float>)
      hi = std::numeric_limits<float>::max();
    else if constexpr (std::is_same_v<T, Half>)
      hi = 65504.0;
    else
      hi = 3.3895313892515355e38; // bfloat16 max
    if (!std::isnan(v))
      v = std::clamp(v, -hi, hi);
    return T(static_cast<float>(v));
  }
}

Status resizeKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 3, "resize: expected 3 operands (x, scales, ",
             "sizes), got ", ctx.numInputs());
  KILN_CHECK(ctx.outputs.size() == 1, "resize: expected 1 result slot, got ",
             ctx.outputs.size());
  const Tensor &x = ctx.input(0);
  const Tensor &scalesT = ctx.input(1);
  const Tensor &sizesT = ctx.input(2);
  KILN_CHECK(x.defined() && scalesT.defined() && sizesT.defined(),
             "resize: an operand is absent (scales/sizes must be given, "
             "empty [0] when unused)");
  KILN_CHECK(scalesT.rank() == 1 && sizesT.rank() == 1,
             "resize: scales and sizes must be 1-D, got ", scalesT.typeString(),
             " and ", sizesT.typeString());
  KILN_CHECK(scalesT.numel() == 0 || isFloatingPoint(scalesT.dtype()),
             "resize: scales must be a float tensor, got ",
             scalesT.typeString());
  KILN_CHECK(sizesT.numel() == 0 || !isFloatingPoint(sizesT.dtype()),
             "resize: sizes must be an integer tensor, got ",
             sizesT.typeString());
  resize::ResizePlan plan;
  KILN_RETURN_IF_ERROR(resize::planResize(
      ctx.attrs, x.shape(),
      scalesT.numel() ? scalesT.toDoubleVector() : std::vector<double>(),
      sizesT.numel() ? sizesT.toIntVector() : std::vector<int64_t>(), plan));
  const Shape &outShape = plan.outShape;

  Tensor out = Tensor::empty(x.dtype(), outShape);
  if (out.numel() == 0) {
    ctx.outputs[0] = out;
    return Status::ok();
  }

  // Load x as double, interpolate axis by axis, store with saturation.
  Tensor xc = x.contiguous();
  std::vector<double> data(static_cast<size_t>(xc.numel()));
  visitDType(xc.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *src = xc.data<T>();
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<double>(
          static_cast<typename ComputeType<T>::type>(src[i]));
  });
  Shape cur = x.shape();
  for (const resize::AxisPlan &axis : plan.axes)
    data = applyAxis(data, cur, axis.axis, outShape[axis.axis], axis,
                     plan.params.extrapolationValue);
  visitDType(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T *dst = out.data<T>();
    for (size_t i = 0; i < data.size(); ++i)
      dst[i] = saturateCast<T>(data[i]);
  });
  ctx.outputs[0] = out;
  return Status::ok();
}

} // namespace

void registerResizeKernels(Dispatcher &d) {
  d.add("resize", Device::CPU, kNumericTypes, resizeKernel);
}

} // namespace kiln
