//===- ResizePlan.cpp - The interpolation plan of kiln.resize -------------===//
//
// This file implements planResize (ResizePlan.h) with ONNX Resize-19
// semantics, following onnx/reference/ops/op_resize.py: the output size
// comes from `sizes` (with keep_aspect_ratio_policy) or from `scales` (floor
// of scale * input size); each output coordinate of a changed axis is mapped
// back to the input by the coordinate transformation mode, its neighbours
// are taken with edge clamping, and their weights come from the mode
// (nearest, linear, cubic, each optionally antialiased).
//
// Extension to the contract: an optional `axes` attribute (i64 list) limits
// the axes over which a non-stretch keep_aspect_ratio_policy takes its
// min/max scale, as ONNX's `axes` input does (default: every axis).
//
//===----------------------------------------------------------------------===//

#include "ResizePlan.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {
namespace resize {
namespace {

bool isIntegral(double v) { return v == std::floor(v); }

/// Interpolation weights for one output position (ratio in (0, 1]).
std::vector<double> coefficients(const ResizeParams &p, double ratio,
                                 double scale) {
  if (p.mode == "nearest") {
    if (isIntegral(ratio))
      return {0.0, 1.0};
    if (p.nearestMode == "round_prefer_floor")
      return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (p.nearestMode == "round_prefer_ceil")
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (p.nearestMode == "floor")
      return {1.0, 0.0};
    return {0.0, 1.0}; // ceil
  }
  if (p.mode == "linear") {
    if (!p.antialias)
      return {1.0 - ratio, ratio};
    double s = std::min(scale, 1.0);
    int64_t start = static_cast<int64_t>(std::floor(-1.0 / s) + 1.0);
    int64_t footprint = 2 - 2 * start;
    std::vector<double> c(footprint);
    double sum = 0.0;
    for (int64_t i = 0; i < footprint; ++i) {
      double arg = (static_cast<double>(start + i) - ratio) * s;
      c[i] = std::clamp(1.0 - std::fabs(arg), 0.0, 1.0);
      sum += c[i];
    }
    for (double &v : c)
      v /= sum;
    return c;
  }
  // cubic
  double A = p.cubicA;
  if (!p.antialias) {
    double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A,
            ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
            ((A + 2) * q - (A + 3)) * q * q + 1,
            ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
  }
  double s = std::min(scale, 1.0);
  auto coeff = [A](double x) {
    x = std::fabs(x);
    double x2 = x * x, x3 = x * x2;
    if (x <= 1)
      return (A + 2) * x3 - (A + 3) * x2 + 1;
    if (x < 2)
      return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
    return 0.0;
  };
  int64_t iStart = static_cast<int64_t>(std::floor(-2.0 / s) + 1.0);
  int64_t iEnd = 2 - iStart;
  std::vector<double> c;
  double sum = 0.0;
  for (int64_t i = iStart; i < iEnd; ++i) {
    c.push_back(coeff(s * (static_cast<double>(i) - ratio)));
    sum += c.back();
  }
  for (double &v : c)
    v /= sum;
  return c;
}

/// Builds the plan of one axis (as _interpolate_1d_along_axis does).
AxisPlan planAxis(const ResizeParams &p, int64_t inW, int64_t outW,
                  double scale, double roiStart, double roiEnd) {
  AxisPlan plan;
  double outWf = scale * static_cast<double>(inW);
  // The reference computes these two roi products in float32.
  float roiDiff = static_cast<float>(roiEnd) - static_cast<float>(roiStart);
  float roiOff = static_cast<float>(roiStart) * static_cast<float>(inW - 1);
  for (int64_t y = 0; y < outW; ++y) {
    double yd = static_cast<double>(y);
    double x = 0.0;
    bool extrap = false;
    const std::string &m = p.coordMode;
    if (m == "align_corners") {
      x = outWf == 1.0 ? 0.0 : yd * (inW - 1) / (outWf - 1);
    } else if (m == "asymmetric") {
      x = yd / scale;
    } else if (m == "tf_crop_and_resize") {
      if (outWf == 1.0)
        x = static_cast<double>(roiDiff * static_cast<float>(inW - 1) / 2.0f);
      else
        x = yd * static_cast<double>(roiDiff) * (inW - 1) / (outWf - 1);
      x += static_cast<double>(roiOff);
      extrap = x < 0 || x > static_cast<double>(inW - 1);
    } else if (m == "pytorch_half_pixel") {
      x = outWf == 1.0 ? -0.5 : (yd + 0.5) / scale - 0.5;
    } else if (m == "half_pixel") {
      x = (yd + 0.5) / scale - 0.5;
    } else { // half_pixel_symmetric
      double adjustment = static_cast<double>(outW) / outWf;
      double center = static_cast<double>(inW) / 2;
      double offset = center * (1 - adjustment);
      x = offset + (yd + 0.5) / scale - 0.5;
    }
    double xInt = std::floor(x);
    double ratio = x == xInt ? 1.0 : x - xInt;
    std::vector<double> c = coefficients(p, ratio, scale);
    int64_t n = static_cast<int64_t>(c.size());
    if (y == 0) {
      plan.n = n;
      plan.idx.resize(outW * n);
      plan.w.resize(outW * n);
      plan.extrapolated.resize(outW);
    }
    // The n input indices closest to x (ties to the smaller), as in
    // _get_neighbor_idxes over the edge-padded input.
    int64_t pad = (n + 1) / 2;
    double xp = x + pad;
    double pf = std::floor(xp);
    double frac = xp - pf;
    int64_t pIdx = static_cast<int64_t>(pf);
    int64_t off;
    if (n % 2 == 0)
      off = frac == 0 ? -(n / 2) : -(n / 2) + 1;
    else
      off = frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1;
    int64_t start = pIdx + off - pad;
    if (p.excludeOutside) {
      double sum = 0.0;
      for (int64_t k = 0; k < n; ++k) {
        int64_t i = start + k;
        if (i < 0 || i >= inW)
          c[k] = 0.0;
        sum += c[k];
      }
      if (sum == 0.0)
        sum = 1.0;
      for (double &v : c)
        v /= sum;
    }
    for (int64_t k = 0; k < n; ++k) {
      plan.idx[y * n + k] = std::clamp<int64_t>(start + k, 0, inW - 1);
      plan.w[y * n + k] = c[k];
    }
    plan.extrapolated[y] = extrap;
  }
  return plan;
}

Status checkMode(const std::string &attr, const std::string &value,
                 std::initializer_list<const char *> allowed) {
  std::string list;
  for (const char *a : allowed) {
    if (value == a)
      return Status::ok();
    list += list.empty() ? a : std::string(", ") + a;
  }
  return Status::error(strCat("resize: attribute '", attr, "' is '", value,
                              "'; expected one of ", list));
}

} // namespace

Status planResize(const Attributes &a, const Shape &in,
                  const std::vector<double> &scalesValues,
                  const std::vector<int64_t> &sizesValues, ResizePlan &plan) {
  const int64_t rank = static_cast<int64_t>(in.size());
  ResizeParams &p = plan.params;
  p.mode = a.getString("mode", "nearest");
  p.coordMode = a.getString("coordinate_transformation_mode", "half_pixel");
  p.nearestMode = a.getString("nearest_mode", "round_prefer_floor");
  p.cubicA = a.getFloat("cubic_coeff_a", -0.75);
  p.excludeOutside = a.getInt("exclude_outside", 0) != 0;
  p.extrapolationValue = a.getFloat("extrapolation_value", 0.0);
  p.antialias = a.getInt("antialias", 0) != 0;
  p.roi = a.getFloats("roi");
  p.policy = a.getString("keep_aspect_ratio_policy", "stretch");
  KILN_RETURN_IF_ERROR(
      checkMode("mode", p.mode, {"nearest", "linear", "cubic"}));
  KILN_RETURN_IF_ERROR(
      checkMode("coordinate_transformation_mode", p.coordMode,
                {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                 "align_corners", "asymmetric", "tf_crop_and_resize"}));
  KILN_RETURN_IF_ERROR(
      checkMode("nearest_mode", p.nearestMode,
                {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}));
  KILN_RETURN_IF_ERROR(checkMode("keep_aspect_ratio_policy", p.policy,
                                 {"stretch", "not_larger", "not_smaller"}));
  KILN_CHECK(!(p.mode == "nearest" && p.antialias),
             "resize: antialias is not supported with mode 'nearest'");
  KILN_CHECK(p.roi.empty() || static_cast<int64_t>(p.roi.size()) == 2 * rank,
             "resize: attribute 'roi' has ", p.roi.size(),
             " values; expected 0 or 2*rank = ", 2 * rank);
  if (p.roi.empty()) {
    p.roi.assign(2 * rank, 0.0);
    std::fill(p.roi.begin() + rank, p.roi.end(), 1.0);
  }

  // Output size and per-axis scale.
  std::vector<double> scales(rank, 1.0);
  Shape &outShape = plan.outShape;
  outShape.assign(rank, 0);
  int64_t nScales = static_cast<int64_t>(scalesValues.size());
  int64_t nSizes = static_cast<int64_t>(sizesValues.size());
  KILN_CHECK((nScales == 0) != (nSizes == 0), "resize: exactly one of scales (",
             nScales, " values) and sizes (", nSizes,
             " values) must be non-empty");
  if (nSizes != 0) {
    KILN_CHECK(nSizes == rank, "resize: sizes has ", nSizes,
               " values but x has rank ", rank);
    const std::vector<int64_t> &sizes = sizesValues;
    for (int64_t i = 0; i < rank; ++i) {
      KILN_CHECK(sizes[i] >= 0, "resize: sizes[", i, "] = ", sizes[i],
                 " is negative");
      KILN_CHECK(in[i] > 0 || sizes[i] == 0, "resize: cannot resize the ",
                 "empty dimension ", i, " of the input to ", sizes[i]);
      scales[i] = in[i] > 0 ? static_cast<double>(sizes[i]) / in[i] : 1.0;
      outShape[i] = sizes[i];
    }
    if (p.policy != "stretch") {
      std::vector<int64_t> axes;
      if (a.has("axes"))
        axes = a.getInts("axes");
      else
        for (int64_t i = 0; i < rank; ++i)
          axes.push_back(i);
      std::vector<char> inAxes(rank, 0);
      for (int64_t ax : axes) {
        KILN_CHECK(ax >= -rank && ax < rank, "resize: axes value ", ax,
                   " is out of range for rank ", rank);
        inAxes[ax < 0 ? ax + rank : ax] = 1;
      }
      double s = p.policy == "not_larger"
                     ? std::numeric_limits<double>::infinity()
                     : -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < rank; ++i)
        if (inAxes[i])
          s = p.policy == "not_larger" ? std::min(s, scales[i])
                                       : std::max(s, scales[i]);
      for (int64_t i = 0; i < rank; ++i) {
        if (!inAxes[i]) {
          scales[i] = 1.0;
          outShape[i] = in[i];
          continue;
        }
        scales[i] = s;
        outShape[i] = static_cast<int64_t>(s * in[i] + 0.5);
      }
    }
  } else {
    KILN_CHECK(nScales == rank, "resize: scales has ", nScales,
               " values but x has rank ", rank);
    const std::vector<double> &sc = scalesValues;
    for (int64_t i = 0; i < rank; ++i) {
      KILN_CHECK(sc[i] > 0 && std::isfinite(sc[i]), "resize: scales[", i,
                 "] = ", sc[i], " must be positive and finite");
      scales[i] = sc[i];
      double o = std::floor(sc[i] * static_cast<double>(in[i]));
      KILN_CHECK(o < 9.0e15, "resize: output dimension ", i, " is too large");
      outShape[i] = static_cast<int64_t>(o);
    }
  }

  // The plans of the axes that change, in axis order.
  Shape cur = in;
  for (int64_t ax = 0; ax < rank; ++ax) {
    double rs = p.roi[ax], re = p.roi[ax + rank];
    bool roiIdentity = std::fabs(rs) <= 1e-9 && std::fabs(re - 1.0) <= 1e-9;
    if (std::fabs(scales[ax] - 1.0) <= 1e-9 && outShape[ax] == cur[ax] &&
        (p.coordMode != "tf_crop_and_resize" || roiIdentity))
      continue;
    if (outShape[ax] == 0 || cur[ax] == 0)
      continue; // An empty result: nothing is interpolated.
    plan.axes.push_back(planAxis(p, cur[ax], outShape[ax], scales[ax], rs, re));
    plan.axes.back().axis = ax;
    cur[ax] = outShape[ax];
  }
  return Status::ok();
}

} // namespace resize
} // namespace kiln
