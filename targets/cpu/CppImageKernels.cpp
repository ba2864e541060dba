//===- CppImageKernels.cpp - C++ kernels of roi_align and deform_conv -----===//
//
// This file implements the CPU target's kernels of single top-level ops
// that sample an image bilinearly at positions computed from their inputs,
// so that they run as generated code instead of the runtime's reference
// kernels (issue 20):
//
//  - kiln.roi_align (ONNX RoiAlign): per output element (region, channel,
//    bin), the bin's grid of samples, each the reference's bilinear() (zero
//    outside [-1, size], clamped to the last pixel) weighting its four
//    corner pixels, averaged or (mode "max") the maximum of the weighted
//    corners, as runtime/kernels/RoiAlign.cpp's poolRegion. A first pass
//    checks the regions in the reference's order: a batch index outside the
//    input returns 1; a region that is not finite or whose sampling grid
//    exceeds 4096 per axis returns 3.
//  - kiln.deform_conv (ONNX DeformConv, 2-D; a missing mask is the tracer's
//    ones): per output element, the bias plus, per input channel of its
//    group and kernel tap, the input read bilinearly at the tap's position
//    plus its offset (zero outside the pixels), times its mask and weight,
//    as runtime/kernels/DeformConv.cpp.
//
// Both compute in double in the reference's order (f32 or f64 operands,
// static shapes; sizes are literals), so the results are bit-identical.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"
#include "targets/cpu/CppKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdio>
#include <string>

using namespace mlir;

namespace kiln {
namespace {

/// `v` as a literal.
std::string lit(int64_t v) { return std::to_string(v); }

/// `v` as a double literal that reads back exactly.
std::string litDouble(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", v);
  std::string s = buffer;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

/// The attributes and sizes of a roi_align kernel.
struct RoiGeometry {
  bool maxMode, halfPixel;
  int64_t outH, outW, ratio, batch, channels, height, width, regions;
  double scale;
};

/// The lambda `kiln_region(r)` (at two spaces) that computes region r's
/// start, bin sizes, sampling grid and sample count as the reference's
/// poolRegion; `ok` false where the reference fails (not finite, a grid
/// over 4096 per axis), the grid then left unset.
std::string printRoiRegion(const RoiGeometry &g) {
  std::string s = "  struct Region {\n"
                  "    double x0, y0, binH, binW, count;\n"
                  "    int64_t gh, gw;\n    bool ok;\n  };\n";
  s += "  auto kiln_region = [&](int64_t r) {\n    Region g = {};\n";
  s += "    const double offset = " + std::string(g.halfPixel ? "0.5" : "0.0") +
       ", scale = " + litDouble(g.scale) + ";\n";
  const char *names[4] = {"x0", "y0", "x1", "y1"};
  for (int k = 0; k < 4; ++k)
    s += "    const double " + std::string(names[k]) +
         " = (double)in1[r * 4 + " + lit(k) + "] * scale - offset;\n";
  s += "    double roiW = x1 - x0, roiH = y1 - y0;\n";
  if (!g.halfPixel) // std::max(roi, 1.0)
    s += "    roiW = roiW < 1.0 ? 1.0 : roiW;\n"
         "    roiH = roiH < 1.0 ? 1.0 : roiH;\n";
  s += "    g.x0 = x0;\n    g.y0 = y0;\n";
  s += "    g.binH = roiH / (double)" + lit(g.outH) +
       ";\n    g.binW = roiW / (double)" + lit(g.outW) + ";\n";
  if (g.ratio > 0)
    s += "    const double gridH = " + lit(g.ratio) +
         ", gridW = " + lit(g.ratio) + ";\n";
  else
    s += "    const double gridH = std::ceil(roiH / (double)" + lit(g.outH) +
         ");\n    const double gridW = std::ceil(roiW / (double)" +
         lit(g.outW) + ");\n";
  s += "    g.ok = std::isfinite(x0) && std::isfinite(y0) && "
       "std::isfinite(x1) &&\n"
       "           std::isfinite(y1) && std::isfinite(gridH) &&\n"
       "           std::isfinite(gridW) && gridH <= 4096 && gridW <= 4096;\n";
  s += "    if (!g.ok)\n      return g;\n";
  s += "    g.gh = (int64_t)gridH < 0 ? 0 : (int64_t)gridH;\n";
  s += "    g.gw = (int64_t)gridW < 0 ? 0 : (int64_t)gridW;\n";
  s += "    g.count = (double)(g.gh * g.gw) < 1.0 ? 1.0 : (double)(g.gh * "
       "g.gw);\n";
  return s + "    return g;\n  };\n";
}

/// Statements (at eight spaces) that set the corners `p0..p3` and weights
/// `w0..w3` of the sample at (y, x), as the reference's bilinear(): all
/// zero outside [-1, size], else clamped to the last pixel.
std::string printRoiBilinear(const RoiGeometry &g) {
  std::string h = lit(g.height), w = lit(g.width);
  std::string last = lit(g.height - 1), lastX = lit(g.width - 1);
  std::string s = "        int64_t p0 = 0, p1 = 0, p2 = 0, p3 = 0;\n"
                  "        double w0 = 0, w1 = 0, w2 = 0, w3 = 0;\n";
  s += "        if (!(y < -1.0 || y > (double)" + h +
       " || x < -1.0 || x > (double)" + w + ")) {\n";
  s += "          double sy = y < 0.0 ? 0.0 : y, sx = x < 0.0 ? 0.0 : x;\n";
  s += "          int64_t y0 = (int64_t)sy, x0 = (int64_t)sx, y1, x1;\n";
  s += "          if (y0 >= " + last + ") {\n            y1 = y0 = " + last +
       ";\n            sy = (double)y0;\n"
       "          } else {\n            y1 = y0 + 1;\n          }\n";
  s += "          if (x0 >= " + lastX + ") {\n            x1 = x0 = " + lastX +
       ";\n            sx = (double)x0;\n"
       "          } else {\n            x1 = x0 + 1;\n          }\n";
  s += "          const double ly = sy - (double)y0, lx = sx - (double)x0;\n"
       "          const double hy = 1.0 - ly, hx = 1.0 - lx;\n";
  s += "          p0 = y0 * " + w + " + x0;\n          p1 = y0 * " + w +
       " + x1;\n          p2 = y1 * " + w + " + x0;\n          p3 = y1 * " + w +
       " + x1;\n";
  s += "          w0 = hy * hx;\n          w1 = hy * lx;\n"
       "          w2 = ly * hx;\n          w3 = ly * lx;\n        }\n";
  return s;
}

/// The loop body (at four spaces) of output element kiln_i of a roi_align:
/// its region, channel and bin, the bin's samples in the reference's order.
std::string printRoiElement(const RoiGeometry &g, const std::string &x) {
  int64_t plane = g.height * g.width, bins = g.outH * g.outW;
  std::string s = "    const int64_t r = kiln_i / " + lit(g.channels * bins) +
                  ", c = kiln_i / " + lit(bins) + " % " + lit(g.channels) +
                  ";\n";
  s += "    const int64_t ph = kiln_i % " + lit(bins) + " / " + lit(g.outW) +
       ", pw = kiln_i % " + lit(g.outW) + ";\n";
  s += "    const Region g = kiln_region(r);\n";
  s += "    const " + x + " *img = in0 + (in2[r] * " + lit(g.channels) +
       " + c) * " + lit(plane) + ";\n";
  s += "    double acc = 0.0;\n";
  if (g.maxMode)
    s += "    bool first = true;\n";
  s += "    for (int64_t iy = 0; iy < g.gh; ++iy) {\n";
  s += "      const double y = g.y0 + (double)ph * g.binH +\n"
       "                       ((double)iy + 0.5) * g.binH / (double)g.gh;\n";
  s += "      for (int64_t ix = 0; ix < g.gw; ++ix) {\n";
  s += "        const double x = g.x0 + (double)pw * g.binW +\n"
       "                         ((double)ix + 0.5) * g.binW / "
       "(double)g.gw;\n";
  s += printRoiBilinear(g);
  s += "        const double v0 = w0 * (double)img[p0], v1 = w1 * "
       "(double)img[p1];\n"
       "        const double v2 = w2 * (double)img[p2], v3 = w3 * "
       "(double)img[p3];\n";
  if (g.maxMode) // std::max(a, b): a < b ? b : a.
    s += "        const double m01 = v0 < v1 ? v1 : v0, m23 = v2 < v3 ? v3 "
         ": v2;\n"
         "        const double m = m01 < m23 ? m23 : m01;\n"
         "        acc = first ? m : acc < m ? m : acc;\n"
         "        first = false;\n";
  else
    s += "        acc += v0 + v1 + v2 + v3;\n";
  s += "      }\n    }\n";
  return s + "    out0[kiln_i] = (" + x + ")" +
         (g.maxMode ? "acc" : "(acc / g.count)") + ";\n";
}

std::optional<CppKernel> emitRoiAlign(RoiAlignOp op, StringRef name) {
  RankedTensorType xt = cppStaticFloatType(op.getX()), rt = cppStaticFloatType(op.getRois()),
                   yt = cppStaticFloatType(op.getResult());
  auto bt = dyn_cast<RankedTensorType>(op.getBatchIndices().getType());
  if (!xt || !rt || !yt || !bt || !bt.hasStaticShape() ||
      xt.getElementType() != yt.getElementType() || xt.getRank() != 4 ||
      rt.getRank() != 2 || rt.getDimSize(1) != 4 || bt.getRank() != 1 ||
      bt.getDimSize(0) != rt.getDimSize(0) || yt.getNumElements() == 0)
    return std::nullopt;
  RoiGeometry g;
  g.maxMode = op.getMode() == "max";
  g.halfPixel = op.getHalfPixel() != 0;
  g.outH = static_cast<int64_t>(op.getOutputHeight());
  g.outW = static_cast<int64_t>(op.getOutputWidth());
  g.ratio = static_cast<int64_t>(op.getSamplingRatio());
  g.scale = op.getSpatialScaleAttr().getValueAsDouble();
  g.batch = xt.getDimSize(0);
  g.channels = xt.getDimSize(1);
  g.height = xt.getDimSize(2);
  g.width = xt.getDimSize(3);
  g.regions = rt.getDimSize(0);
  if (g.outH < 1 || g.outW < 1 || g.ratio < 0 || g.ratio > 1024 ||
      yt.getShape() != ArrayRef<int64_t>{g.regions, g.channels, g.outH, g.outW})
    return std::nullopt; // The reference kernel's errors.
  std::string x = xt.getElementType().isF32() ? "float" : "double";
  int64_t plane = g.height * g.width, total = yt.getNumElements();
  std::string what =
      std::string(g.maxMode ? "max" : "avg") + " roi_align of " +
      lit(g.regions) + " regions into " + lit(g.outH) + "x" + lit(g.outW) +
      " bins, sampling_ratio " + lit(g.ratio) +
      (g.halfPixel ? ", half_pixel" : ", output_half_pixel") +
      "; in double, as the reference; returns 3 on a region that is not "
      "finite or too large";
  std::string body;
  if (plane > 0)
    body += printRoiRegion(g);
  body += "  // The regions, checked in the reference's order.\n";
  body += "  for (int64_t r = 0; r < " + lit(g.regions) + "; ++r) {\n";
  body += "    if (in2[r] < 0 || in2[r] >= " + lit(g.batch) +
          ")\n      return 1;\n";
  if (plane > 0)
    body += "    if (!kiln_region(r).ok)\n      return 3;\n";
  body += "  }\n";
  if (plane == 0) { // An empty image: zeros.
    body += "  (void)in0;\n  (void)in1;\n";
    body += "  for (int64_t i = 0; i < " + lit(total) +
            "; ++i)\n    out0[i] = 0;\n  return 0;\n";
    return makeCppOpKernel(op, name, cppKernelParams(op), body, what);
  }
  if (total >= 256)
    body += "  #pragma omp parallel for\n";
  body +=
      "  for (int64_t kiln_i = 0; kiln_i < " + lit(total) + "; ++kiln_i) {\n";
  body += printRoiElement(g, x);
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(op, name, cppKernelParams(op), body, what);
}

/// The sizes and attributes of a deform_conv kernel.
struct DeformGeometry {
  int64_t n, c, h, w, m, cPerGroup, mPerGroup, kh, kw, oh, ow;
  int64_t offsetGroups, cPerOffsetGroup;
  int64_t strideH, strideW, dilH, dilW, padT, padL;
};

/// The lambda `kiln_sample(plane, y, x)` (at two spaces): an H x W plane of
/// type `t` at (y, x), bilinear, zero outside the pixels, as the
/// reference's sampleZeroPadded.
std::string printDeformSample(const DeformGeometry &g, const std::string &t) {
  std::string h = lit(g.h), w = lit(g.w);
  std::string s =
      "  auto kiln_sample = [](const " + t + " *plane, double y, double x) {\n";
  s += "    if (!(y > -1.0 && y < (double)" + h +
       " && x > -1.0 && x < (double)" + w + "))\n      return 0.0;\n";
  s += "    const double fy = std::floor(y), fx = std::floor(x);\n"
       "    const int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;\n"
       "    const double ly = y - fy, lx = x - fx;\n"
       "    double sum = 0.0;\n";
  s += "    for (int dy = 0; dy < 2; ++dy) {\n"
       "      const int64_t yy = y0 + dy;\n";
  s += "      if (yy < 0 || yy >= " + h + ")\n        continue;\n";
  s += "      const double wy = dy ? ly : 1.0 - ly;\n"
       "      for (int dx = 0; dx < 2; ++dx) {\n"
       "        const int64_t xx = x0 + dx;\n";
  s += "        if (xx < 0 || xx >= " + w + ")\n          continue;\n";
  s += "        sum += wy * (dx ? lx : 1.0 - lx) * (double)plane[yy * " + w +
       " + xx];\n      }\n    }\n    return sum;\n  };\n";
  return s;
}

/// The loop body (at four spaces) of output element kiln_i of a
/// deform_conv: the bias, then per input channel of the group and kernel
/// tap the displaced sample times its mask and weight.
std::string printDeformElement(const DeformGeometry &g, const std::string &x) {
  int64_t opix = g.oh * g.ow, taps = g.kh * g.kw;
  std::string s = "    const int64_t b = kiln_i / " + lit(g.m * opix) +
                  ", oc = kiln_i / " + lit(opix) + " % " + lit(g.m) + ";\n";
  s += "    const int64_t i = kiln_i % " + lit(opix) + " / " + lit(g.ow) +
       ", j = kiln_i % " + lit(g.ow) + ";\n";
  s += "    const int64_t grp = oc / " + lit(g.mPerGroup) + ";\n";
  s += "    double acc = (double)in3[oc];\n";
  s += "    for (int64_t icg = 0; icg < " + lit(g.cPerGroup) + "; ++icg) {\n";
  s += "      const int64_t ic = grp * " + lit(g.cPerGroup) + " + icg;\n";
  s += "      const int64_t og = ic / " + lit(g.cPerOffsetGroup) + ";\n";
  s += "      const " + x + " *plane = in0 + (b * " + lit(g.c) + " + ic) * " +
       lit(g.h * g.w) + ";\n";
  s += "      for (int64_t t = 0; t < " + lit(taps) + "; ++t) {\n";
  s += "        const int64_t ki = t / " + lit(g.kw) + ", kj = t % " +
       lit(g.kw) + ";\n";
  // The row and column offsets, then the mask, of (b, tap) at (i, j).
  s += "        const int64_t tap = b * " + lit(g.offsetGroups * taps) +
       " + og * " + lit(taps) + " + t, pix = i * " + lit(g.ow) + " + j;\n";
  s += "        const double dy = (double)in2[tap * " + lit(2 * opix) +
       " + pix];\n";
  s += "        const double dx = (double)in2[tap * " + lit(2 * opix) + " + " +
       lit(opix) + " + pix];\n";
  s += "        const double y = (double)(i * " + lit(g.strideH) + " + ki * " +
       lit(g.dilH) + " - " + lit(g.padT) + ") + dy;\n";
  s += "        const double x = (double)(j * " + lit(g.strideW) + " + kj * " +
       lit(g.dilW) + " - " + lit(g.padL) + ") + dx;\n";
  s += "        const double v = kiln_sample(plane, y, x);\n";
  s +=
      "        const double mk = (double)in4[tap * " + lit(opix) + " + pix];\n";
  s += "        acc += v * mk * (double)in1[((oc * " + lit(g.cPerGroup) +
       " + icg) * " + lit(g.kh) + " + ki) * " + lit(g.kw) + " + kj];\n";
  s += "      }\n    }\n";
  return s + "    out0[kiln_i] = (" + x + ")acc;\n";
}

std::optional<CppKernel> emitDeformConv(DeformConvOp op, StringRef name) {
  RankedTensorType xt = cppStaticFloatType(op.getX()), wt = cppStaticFloatType(op.getW()),
                   ot = cppStaticFloatType(op.getOffset()), bt = cppStaticFloatType(op.getBias()),
                   mt = cppStaticFloatType(op.getMask()), yt = cppStaticFloatType(op.getResult());
  ArrayRef<int64_t> dil = op.getDilations(), pads = op.getPads(),
                    strides = op.getStrides();
  int64_t group = static_cast<int64_t>(op.getGroup()),
          offsetGroup = static_cast<int64_t>(op.getOffsetGroup());
  if (!xt || !wt || !ot || !bt || !mt || !yt ||
      xt.getElementType() != yt.getElementType() || xt.getRank() != 4 ||
      wt.getRank() != 4 || ot.getRank() != 4 || mt.getRank() != 4 ||
      bt.getRank() != 1 || dil.size() != 2 || pads.size() != 4 ||
      strides.size() != 2 || group < 1 || offsetGroup < 1 ||
      yt.getNumElements() == 0)
    return std::nullopt;
  DeformGeometry g;
  g.n = xt.getDimSize(0), g.c = xt.getDimSize(1), g.h = xt.getDimSize(2),
  g.w = xt.getDimSize(3);
  g.m = wt.getDimSize(0), g.kh = wt.getDimSize(2), g.kw = wt.getDimSize(3);
  g.oh = ot.getDimSize(2), g.ow = ot.getDimSize(3);
  g.offsetGroups = offsetGroup;
  int64_t taps = g.kh * g.kw;
  if (g.c % group != 0 || g.m % group != 0 || wt.getDimSize(1) != g.c / group ||
      g.c % offsetGroup != 0 || bt.getDimSize(0) != g.m ||
      ot.getDimSize(0) != g.n || ot.getDimSize(1) != offsetGroup * taps * 2 ||
      mt.getShape() != ArrayRef<int64_t>{g.n, offsetGroup * taps, g.oh, g.ow} ||
      yt.getShape() != ArrayRef<int64_t>{g.n, g.m, g.oh, g.ow})
    return std::nullopt; // The reference kernel's errors.
  g.cPerGroup = g.c / group, g.mPerGroup = g.m / group;
  g.cPerOffsetGroup = g.c / offsetGroup;
  g.strideH = strides[0], g.strideW = strides[1];
  g.dilH = dil[0], g.dilW = dil[1], g.padT = pads[0], g.padL = pads[1];
  std::string x = xt.getElementType().isF32() ? "float" : "double";
  std::string what = "deform_conv " + lit(g.c) + " -> " + lit(g.m) +
                     " channels, kernel " + lit(g.kh) + "x" + lit(g.kw) +
                     ", group " + lit(group) + ", offset_group " +
                     lit(offsetGroup) + "; in double, as the reference";
  std::string body = printDeformSample(g, x);
  int64_t total = yt.getNumElements();
  if (total >= 256)
    body += "  #pragma omp parallel for\n";
  body +=
      "  for (int64_t kiln_i = 0; kiln_i < " + lit(total) + "; ++kiln_i) {\n";
  body += printDeformElement(g, x);
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(op, name, cppKernelParams(op), body, what);
}

} // namespace

std::optional<CppKernel> emitCppImageKernel(Operation *op, StringRef name) {
  if (auto roi = dyn_cast<RoiAlignOp>(op))
    return emitRoiAlign(roi, name);
  if (auto conv = dyn_cast<DeformConvOp>(op))
    return emitDeformConv(conv, name);
  return std::nullopt;
}

} // namespace kiln
