//===- DeformConv.cpp - The reference DeformConv kernel -------------------===//
//
// This file implements the CPU reference kernel of kiln.deform_conv (ONNX
// DeformConv, 2-D): every kernel tap of every output position reads the
// input bilinearly at the tap's position plus its learned offset (zero
// outside the image, as GridSample with align_corners and zero padding),
// scales it by its mask and multiplies it by its weight. Offsets are
// untrusted: NaN and positions far outside the image read zeros.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <cmath>

namespace kiln {

namespace {

/// x (an H x W plane) at (y, x), bilinear, zero outside the pixels.
double sampleZeroPadded(const double *plane, int64_t height, int64_t width,
                        double y, double x) {
  if (!(y > -1.0 && y < static_cast<double>(height) && x > -1.0 &&
        x < static_cast<double>(width)))
    return 0.0;
  double fy = std::floor(y), fx = std::floor(x);
  int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  double ly = y - fy, lx = x - fx;
  double sum = 0.0;
  for (int dy = 0; dy < 2; ++dy) {
    int64_t yy = y0 + dy;
    if (yy < 0 || yy >= height)
      continue;
    double wy = dy ? ly : 1.0 - ly;
    for (int dx = 0; dx < 2; ++dx) {
      int64_t xx = x0 + dx;
      if (xx < 0 || xx >= width)
        continue;
      sum += wy * (dx ? lx : 1.0 - lx) * plane[yy * width + xx];
    }
  }
  return sum;
}

/// The sizes and attributes of one run.
struct DeformGeometry {
  int64_t n, c, h, w, m, cPerGroup, mPerGroup, kh, kw, oh, ow;
  int64_t offsetGroups, cPerOffsetGroup;
  int64_t strideH, strideW, dilH, dilW, padT, padL;
};

Status deformConvKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 5, "deform_conv: expected 5 operands, got ",
             ctx.numInputs());
  const Tensor &xIn = ctx.input(0), &wIn = ctx.input(1), &offIn = ctx.input(2),
               &bIn = ctx.input(3), &maskIn = ctx.input(4);
  std::vector<int64_t> dil = ctx.attrs.getInts("dilations"),
                       pads = ctx.attrs.getInts("pads"),
                       strides = ctx.attrs.getInts("strides");
  const int64_t group = ctx.attrs.getInt("group", 1),
                offsetGroup = ctx.attrs.getInt("offset_group", 1);
  KILN_CHECK(xIn.rank() == 4 && wIn.rank() == 4 && offIn.rank() == 4 &&
                 maskIn.rank() == 4 && bIn.rank() == 1 && dil.size() == 2 &&
                 pads.size() == 4 && strides.size() == 2 && group >= 1 &&
                 offsetGroup >= 1,
             "deform_conv: operands or attributes of the wrong rank");
  DeformGeometry g;
  g.n = xIn.dim(0), g.c = xIn.dim(1), g.h = xIn.dim(2), g.w = xIn.dim(3);
  g.m = wIn.dim(0), g.kh = wIn.dim(2), g.kw = wIn.dim(3);
  g.oh = offIn.dim(2), g.ow = offIn.dim(3);
  g.offsetGroups = offsetGroup;
  KILN_CHECK(
      g.c % group == 0 && g.m % group == 0 && wIn.dim(1) == g.c / group &&
          g.c % offsetGroup == 0 && bIn.dim(0) == g.m && offIn.dim(0) == g.n &&
          offIn.dim(1) == offsetGroup * g.kh * g.kw * 2 &&
          maskIn.dim(0) == g.n && maskIn.dim(1) == offsetGroup * g.kh * g.kw &&
          maskIn.dim(2) == g.oh && maskIn.dim(3) == g.ow,
      "deform_conv: x ", xIn.typeString(), ", w ", wIn.typeString(),
      ", offset ", offIn.typeString(), ", bias ", bIn.typeString(),
      " and mask ", maskIn.typeString(), " do not fit");
  g.cPerGroup = g.c / group, g.mPerGroup = g.m / group;
  g.cPerOffsetGroup = g.c / offsetGroup;
  g.strideH = strides[0], g.strideW = strides[1];
  g.dilH = dil[0], g.dilW = dil[1], g.padT = pads[0], g.padL = pads[1];
  Tensor x = xIn.to(DType::F64), w = wIn.to(DType::F64),
         off = offIn.to(DType::F64), bias = bIn.to(DType::F64),
         mask = maskIn.to(DType::F64);
  Tensor out = Tensor::empty(DType::F64, {g.n, g.m, g.oh, g.ow});
  const double *xp = x.data<double>(), *wp = w.data<double>(),
               *offp = off.data<double>(), *bp = bias.data<double>(),
               *mp = mask.data<double>();
  double *op = out.data<double>();
  const int64_t taps = g.kh * g.kw, opix = g.oh * g.ow;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t oc = 0; oc < g.m; ++oc) {
      const int64_t grp = oc / g.mPerGroup;
      for (int64_t i = 0; i < g.oh; ++i)
        for (int64_t j = 0; j < g.ow; ++j) {
          double acc = bp[oc];
          for (int64_t icg = 0; icg < g.cPerGroup; ++icg) {
            const int64_t ic = grp * g.cPerGroup + icg;
            const int64_t og = ic / g.cPerOffsetGroup;
            const double *plane = xp + (b * g.c + ic) * g.h * g.w;
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t ki = t / g.kw, kj = t % g.kw;
              const int64_t tap = og * taps + t;
              const double *o =
                  offp + ((b * g.offsetGroups * taps + tap) * 2) * opix;
              double dy = o[i * g.ow + j], dx = o[opix + i * g.ow + j];
              double y =
                  static_cast<double>(-g.padT + i * g.strideH + ki * g.dilH) +
                  dy;
              double xx =
                  static_cast<double>(-g.padL + j * g.strideW + kj * g.dilW) +
                  dx;
              double v = sampleZeroPadded(plane, g.h, g.w, y, xx);
              double mk =
                  mp[(b * g.offsetGroups * taps + tap) * opix + i * g.ow + j];
              acc += v * mk *
                     wp[((oc * g.cPerGroup + icg) * g.kh + ki) * g.kw + kj];
            }
          }
          op[((b * g.m + oc) * g.oh + i) * g.ow + j] = acc;
        }
    }
  ctx.outputs.resize(1);
  ctx.outputs[0] = out.to(xIn.dtype());
  return Status::ok();
}

} // namespace

/// Registers kiln.deform_conv for the floating-point dtypes.
void registerDeformConvKernels(Dispatcher &d) {
  d.add("deform_conv", Device::CPU, kFloatTypes, deformConvKernel);
}

} // namespace kiln
