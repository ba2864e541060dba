//===- NonMaxSuppression.cpp - The reference NonMaxSuppression kernel -----===//
//
// This file implements the CPU reference kernel of kiln.non_max_suppression
// (ONNX NonMaxSuppression): per batch and class, the boxes whose score is
// above the threshold are taken by falling score (the lower index first
// among equal scores) and kept unless their intersection over union with a
// kept box exceeds the IoU threshold, up to max_output boxes. The result
// lists [batch, class, box] of every kept box, so its size depends on the
// values.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace kiln {

namespace {

/// A box as its corners, min before max on each axis.
struct Box {
  double x0, y0, x1, y1;
};

Box readBox(const double *p, bool centerPoint) {
  if (centerPoint)
    return {p[0] - p[2] / 2, p[1] - p[3] / 2, p[0] + p[2] / 2,
            p[1] + p[3] / 2};
  return {std::min(p[1], p[3]), std::min(p[0], p[2]), std::max(p[1], p[3]),
          std::max(p[0], p[2])};
}

/// True when b suppresses a: their IoU is greater than the threshold.
bool suppresses(const Box &a, const Box &b, double iouThreshold) {
  double ix0 = std::max(a.x0, b.x0), ix1 = std::min(a.x1, b.x1);
  double iy0 = std::max(a.y0, b.y0), iy1 = std::min(a.y1, b.y1);
  if (ix1 <= ix0 || iy1 <= iy0)
    return false;
  double inter = (ix1 - ix0) * (iy1 - iy0);
  double areaA = (a.x1 - a.x0) * (a.y1 - a.y0);
  double areaB = (b.x1 - b.x0) * (b.y1 - b.y0);
  double uni = areaA + areaB - inter;
  if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0)
    return false;
  return inter / uni > iouThreshold;
}

/// The one value of a parameter operand (rank 0 or one element).
Expected<double> scalarParam(const Tensor &t, const char *name) {
  if (t.numel() != 1)
    return Status::error(strCat("non_max_suppression: '", name,
                                "' must hold one value, got ",
                                t.typeString()));
  return t.to(DType::F64).data<double>()[0];
}

Status nmsKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 5,
             "non_max_suppression: expected 5 operands, got ",
             ctx.numInputs());
  const Tensor &boxesIn = ctx.input(0), &scoresIn = ctx.input(1);
  KILN_CHECK(boxesIn.rank() == 3 && boxesIn.dim(2) == 4 &&
                 scoresIn.rank() == 3 && scoresIn.dim(0) == boxesIn.dim(0) &&
                 scoresIn.dim(2) == boxesIn.dim(1),
             "non_max_suppression: boxes ", boxesIn.typeString(),
             " and scores ", scoresIn.typeString(),
             " do not fit ([B, K, 4] and [B, C, K])");
  Expected<double> maxOut = scalarParam(ctx.input(2), "max_output");
  Expected<double> iou = scalarParam(ctx.input(3), "iou_threshold");
  Expected<double> minScore = scalarParam(ctx.input(4), "score_threshold");
  KILN_RETURN_IF_ERROR(maxOut.status());
  KILN_RETURN_IF_ERROR(iou.status());
  KILN_RETURN_IF_ERROR(minScore.status());
  const bool centerPoint = ctx.attrs.getInt("center_point_box", 0) != 0;
  const int64_t batches = boxesIn.dim(0), numBoxes = boxesIn.dim(1),
                classes = scoresIn.dim(1);
  // The limit is untrusted: NaN and values beyond the box count clamp.
  const double wanted = std::isnan(*maxOut) ? 0.0 : *maxOut;
  const int64_t limit = static_cast<int64_t>(
      std::max(0.0, std::min(wanted, static_cast<double>(numBoxes))));
  Tensor boxes = boxesIn.to(DType::F64), scores = scoresIn.to(DType::F64);
  const double *bp = boxes.data<double>(), *sp = scores.data<double>();
  std::vector<std::array<int64_t, 3>> selected;
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const double *s = sp + (b * classes + c) * numBoxes;
      order.clear();
      for (int64_t i = 0; i < numBoxes; ++i)
        if (s[i] > *minScore)
          order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t l, int64_t r) { return s[l] > s[r]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= limit)
          break;
        Box box = readBox(bp + (b * numBoxes + i) * 4, centerPoint);
        bool keep = std::none_of(kept.begin(), kept.end(), [&](const Box &k) {
          return suppresses(box, k, *iou);
        });
        if (keep) {
          kept.push_back(box);
          selected.push_back({b, c, i});
        }
      }
    }
  }
  Tensor out =
      Tensor::empty(DType::I64, {static_cast<int64_t>(selected.size()), 3});
  int64_t *op = out.data<int64_t>();
  for (size_t i = 0; i < selected.size(); ++i)
    for (int j = 0; j < 3; ++j)
      op[i * 3 + j] = selected[i][j];
  ctx.outputs.resize(1);
  ctx.outputs[0] = std::move(out);
  return Status::ok();
}

} // namespace

/// Registers kiln.non_max_suppression for the floating-point dtypes (the
/// dispatcher keys it by the boxes' dtype).
void registerNonMaxSuppressionKernels(Dispatcher &d) {
  d.add("non_max_suppression", Device::CPU, kFloatTypes, nmsKernel);
}

} // namespace kiln
