//===- RoiAlign.cpp - The reference RoiAlign kernel -----------------------===//
//
// This file implements the CPU reference kernel of kiln.roi_align (ONNX
// RoiAlign): each region of interest is cut into output_height x
// output_width bins, each bin sampled on a regular grid of bilinear
// samples, and the samples averaged ("avg") or maximized ("max", the
// maximum of the four weighted corner values of each sample, as ONNX's
// reference and ONNX Runtime compute it). Region coordinates are untrusted:
// a batch index outside the input or a sampling grid beyond kMaxGrid per
// axis is an error, never an out-of-bounds read.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/SizeLimits.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln {

namespace {

/// The largest sampling grid per axis and bin (with sampling_ratio 0 the
/// grid follows the region's size, which the model's values decide).
constexpr double kMaxGrid = 4096;

/// One bilinear sample: four positions in the image and their weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

/// The sample at (y, x) of an image of height x width, as ONNX's reference
/// computes it: zero outside [-1, size], clamped to the last pixel.
Sample bilinear(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > height || x < -1.0 || x > width)
    return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= height - 1) {
    y1 = y0 = height - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= width - 1) {
    x1 = x0 = width - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  double ly = y - y0, lx = x - x0, hy = 1.0 - ly, hx = 1.0 - lx;
  s.pos[0] = y0 * width + x0;
  s.pos[1] = y0 * width + x1;
  s.pos[2] = y1 * width + x0;
  s.pos[3] = y1 * width + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

/// The attributes and sizes of one run.
struct RoiParams {
  bool maxMode = false, halfPixel = false;
  int64_t outH = 1, outW = 1, ratio = 0;
  double scale = 1.0;
  int64_t channels = 0, height = 0, width = 0;
};

/// Pools one region (its four coordinates at `roi`) of `image` (C x H x W)
/// into `out` (C x outH x outW).
Status poolRegion(const RoiParams &p, const double *roi, const double *image,
                  double *out) {
  const double offset = p.halfPixel ? 0.5 : 0.0;
  double x0 = roi[0] * p.scale - offset, y0 = roi[1] * p.scale - offset;
  double x1 = roi[2] * p.scale - offset, y1 = roi[3] * p.scale - offset;
  double roiW = x1 - x0, roiH = y1 - y0;
  if (!p.halfPixel) {
    roiW = std::max(roiW, 1.0);
    roiH = std::max(roiH, 1.0);
  }
  double binH = roiH / p.outH, binW = roiW / p.outW;
  double gridH = p.ratio > 0 ? p.ratio : std::ceil(roiH / p.outH);
  double gridW = p.ratio > 0 ? p.ratio : std::ceil(roiW / p.outW);
  KILN_CHECK(std::isfinite(x0) && std::isfinite(y0) && std::isfinite(x1) &&
                 std::isfinite(y1) && std::isfinite(gridH) &&
                 std::isfinite(gridW) && gridH <= kMaxGrid && gridW <= kMaxGrid,
             "roi_align: region [", roi[0], ", ", roi[1], ", ", roi[2], ", ",
             roi[3], "] is not finite or needs a sampling grid over ", kMaxGrid,
             " per axis");
  const int64_t gh = std::max<int64_t>(static_cast<int64_t>(gridH), 0);
  const int64_t gw = std::max<int64_t>(static_cast<int64_t>(gridW), 0);
  const double count = std::max<double>(static_cast<double>(gh * gw), 1.0);
  std::vector<Sample> samples;
  samples.reserve(static_cast<size_t>(gh * gw));
  const int64_t plane = p.height * p.width;
  for (int64_t ph = 0; ph < p.outH; ++ph) {
    for (int64_t pw = 0; pw < p.outW; ++pw) {
      samples.clear();
      for (int64_t iy = 0; iy < gh; ++iy) {
        double y = y0 + ph * binH + (iy + 0.5) * binH / gh;
        for (int64_t ix = 0; ix < gw; ++ix) {
          double x = x0 + pw * binW + (ix + 0.5) * binW / gw;
          samples.push_back(bilinear(y, x, p.height, p.width));
        }
      }
      for (int64_t c = 0; c < p.channels; ++c) {
        const double *img = image + c * plane;
        double acc = 0.0;
        bool first = true;
        for (const Sample &s : samples) {
          double v[4];
          for (int k = 0; k < 4; ++k)
            v[k] = s.w[k] * img[s.pos[k]];
          if (!p.maxMode) {
            acc += v[0] + v[1] + v[2] + v[3];
            continue;
          }
          double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
          acc = first ? m : std::max(acc, m);
          first = false;
        }
        out[(c * p.outH + ph) * p.outW + pw] = p.maxMode ? acc : acc / count;
      }
    }
  }
  return Status::ok();
}

Status roiAlignKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 3, "roi_align: expected 3 operands, got ",
             ctx.numInputs());
  const Tensor &xIn = ctx.input(0), &roisIn = ctx.input(1),
               &batchIn = ctx.input(2);
  KILN_CHECK(xIn.rank() == 4 && roisIn.rank() == 2 && roisIn.dim(1) == 4 &&
                 batchIn.rank() == 1 && batchIn.dim(0) == roisIn.dim(0),
             "roi_align: x ", xIn.typeString(), ", rois ", roisIn.typeString(),
             " and batch_indices ", batchIn.typeString(),
             " do not fit ([N, C, H, W], [R, 4], [R])");
  RoiParams p;
  p.maxMode = ctx.attrs.getString("mode", "avg") == "max";
  p.halfPixel = ctx.attrs.getInt("half_pixel", 1) != 0;
  p.outH = ctx.attrs.getInt("output_height", 1);
  p.outW = ctx.attrs.getInt("output_width", 1);
  p.ratio = ctx.attrs.getInt("sampling_ratio", 0);
  p.scale = ctx.attrs.getFloat("spatial_scale", 1.0);
  KILN_CHECK(p.outH >= 1 && p.outW >= 1 && p.ratio >= 0 && p.ratio <= 1024,
             "roi_align: bad output size or sampling_ratio");
  p.channels = xIn.dim(1);
  p.height = xIn.dim(2);
  p.width = xIn.dim(3);
  const int64_t numRois = roisIn.dim(0);
  KILN_CHECK(saturatingMul(saturatingMul(numRois, p.channels),
                           saturatingMul(p.outH, p.outW)) <= kMaxTensorElements,
             "roi_align: the result is over the size limit");
  Tensor out = Tensor::empty(DType::F64, {numRois, p.channels, p.outH, p.outW});
  Tensor x = xIn.to(DType::F64), rois = roisIn.to(DType::F64);
  Tensor batch = batchIn.to(DType::I64);
  const double *xp = x.data<double>(), *rp = rois.data<double>();
  const int64_t *bp = batch.data<int64_t>();
  double *op = out.data<double>();
  const int64_t imageSize = p.channels * p.height * p.width;
  const int64_t outSize = p.channels * p.outH * p.outW;
  for (int64_t r = 0; r < numRois; ++r) {
    KILN_CHECK(bp[r] >= 0 && bp[r] < xIn.dim(0), "roi_align: batch index ",
               bp[r], " of region ", r, " is outside the input's ", xIn.dim(0),
               " images");
    if (p.height == 0 || p.width == 0) {
      std::fill(op + r * outSize, op + (r + 1) * outSize, 0.0);
      continue;
    }
    KILN_RETURN_IF_ERROR(
        poolRegion(p, rp + r * 4, xp + bp[r] * imageSize, op + r * outSize));
  }
  ctx.outputs.resize(1);
  ctx.outputs[0] = out.to(xIn.dtype());
  return Status::ok();
}

} // namespace

/// Registers kiln.roi_align for the floating-point dtypes.
void registerRoiAlignKernels(Dispatcher &d) {
  d.add("roi_align", Device::CPU, kFloatTypes, roiAlignKernel);
}

} // namespace kiln
