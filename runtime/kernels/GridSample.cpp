//===- GridSample.cpp - The reference GridSample kernel -------------------===//
//
// This file implements the CPU reference kernel of kiln.grid_sample (ONNX
// GridSample, any number of spatial dims): each output point reads its
// normalized coordinates from the grid (last entry first), maps them to
// pixel positions (align_corners or not), and interpolates x there with
// nearest (ties to even), linear or cubic (Keys, alpha -0.75) weights per
// dim. Positions outside the image read zeros, clamp to the border or
// reflect, as the ONNX reference implementation does. The arithmetic is in
// double; the result has x's dtype.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <array>
#include <cmath>
#include <vector>

namespace kiln {

namespace {

/// A position this far from the image is outside it for any image size.
constexpr double kFar = 1e15;

enum class Mode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

/// Reflects x into [lo, hi] by the nearer border until it is inside.
double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0)
    return lo;
  if (x < lo) {
    double dx = lo - x;
    double n = std::floor(dx / range);
    double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    double n = std::floor(dx / range);
    double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

/// Keys' cubic convolution weights of the four taps around t in [0, 1).
std::array<double, 4> cubicWeights(double t) {
  const double a = -0.75;
  auto far = [&](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

/// The geometry of one sampling: image dims, borders and the options.
struct Sampler {
  std::vector<int64_t> dims;
  std::vector<double> lo, hi;
  Mode mode;
  Padding padding;
  bool alignCorners;

  /// Maps a normalized coordinate of dim d to a pixel position.
  double denormalize(double v, size_t d) const {
    double len = static_cast<double>(dims[d]);
    return alignCorners ? (v + 1) / 2.0 * (len - 1) : ((v + 1) * len - 1) / 2.0;
  }

  /// The index to read for integer position i of dim d, or -1 for a zero.
  int64_t tap(int64_t i, size_t d) const {
    int64_t size = dims[d];
    if (i >= 0 && i < size)
      return i;
    if (padding == Padding::Zeros)
      return -1;
    if (padding == Padding::Border)
      return i < 0 ? 0 : size - 1;
    int64_t r = static_cast<int64_t>(reflect(static_cast<double>(i), lo[d], hi[d]));
    return std::min<int64_t>(std::max<int64_t>(r, 0), size - 1);
  }
};

/// Samples one image (row-major, dims s.dims) at pixel position `pos`.
double sample(const Sampler &s, const double *image,
              const std::vector<double> &pos) {
  const size_t n = s.dims.size();
  // Per dim: the taps' indices and weights.
  std::vector<std::array<int64_t, 4>> idx(n);
  std::vector<std::array<double, 4>> w(n);
  int taps = s.mode == Mode::Nearest ? 1 : s.mode == Mode::Linear ? 2 : 4;
  for (size_t d = 0; d < n; ++d) {
    if (s.mode == Mode::Nearest) {
      idx[d][0] = s.tap(static_cast<int64_t>(pos[d]), d);
      w[d][0] = 1.0;
      continue;
    }
    double base = std::floor(pos[d]);
    double t = pos[d] - base;
    int64_t i0 = static_cast<int64_t>(base);
    if (s.mode == Mode::Linear) {
      idx[d] = {s.tap(i0, d), s.tap(i0 + 1, d), 0, 0};
      w[d] = {1 - t, t, 0, 0};
    } else {
      idx[d] = {s.tap(i0 - 1, d), s.tap(i0, d), s.tap(i0 + 1, d),
                s.tap(i0 + 2, d)};
      w[d] = cubicWeights(t);
    }
  }
  // Sum over every combination of taps (taps^n terms).
  double sum = 0;
  std::vector<int> k(n, 0);
  while (true) {
    double weight = 1;
    int64_t offset = 0;
    bool zero = false;
    for (size_t d = 0; d < n; ++d) {
      int64_t i = idx[d][k[d]];
      if (i < 0) {
        zero = true;
        break;
      }
      weight *= w[d][k[d]];
      offset = offset * s.dims[d] + i;
    }
    if (!zero)
      sum += weight * image[offset];
    size_t d = n;
    while (d > 0 && ++k[d - 1] == taps)
      k[--d] = 0;
    if (d == 0)
      break;
  }
  return sum;
}

/// The pixel position of one output point from its normalized coordinates
/// (the grid's last entry is the first spatial dim), with the out-of-range
/// adjustment of the ONNX reference.
std::vector<double> position(const Sampler &s, const double *coords) {
  const size_t n = s.dims.size();
  std::vector<double> pos(n);
  for (size_t d = 0; d < n; ++d) {
    double x = s.denormalize(coords[n - 1 - d], d);
    if (s.mode == Mode::Nearest)
      x = std::nearbyint(x); // ties to even (the default rounding mode)
    if (x < s.lo[d] || x > s.hi[d]) {
      if (s.padding == Padding::Border)
        x = std::min(std::max(x, 0.0), static_cast<double>(s.dims[d] - 1));
      else if (s.padding == Padding::Reflection)
        x = reflect(x, s.lo[d], s.hi[d]);
    }
    if (s.mode == Mode::Nearest)
      x = std::trunc(x);
    // Grid values are untrusted: keep positions (NaN and infinities
    // included) where the integer conversions are defined; any of them is
    // far outside the image.
    pos[d] = std::isnan(x) ? -kFar : std::min(std::max(x, -kFar), kFar);
  }
  return pos;
}

Status gridSampleKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 2, "grid_sample: expected 2 operands, got ",
             ctx.numInputs());
  const Tensor &xIn = ctx.input(0), &gridIn = ctx.input(1);
  KILN_CHECK(xIn.device() == Device::CPU && gridIn.device() == Device::CPU,
             "grid_sample: the reference kernels run on the cpu");
  const int64_t rank = xIn.rank();
  KILN_CHECK(rank >= 3 && gridIn.rank() == rank &&
                 gridIn.dim(rank - 1) == rank - 2 &&
                 gridIn.dim(0) == xIn.dim(0),
             "grid_sample: x ", xIn.typeString(), " and grid ",
             gridIn.typeString(), " do not fit ([N, C, D...], [N, O..., n])");
  Sampler s;
  std::string mode = ctx.attrs.getString("mode", "linear");
  std::string padding = ctx.attrs.getString("padding_mode", "zeros");
  s.mode = mode == "nearest" ? Mode::Nearest
           : mode == "cubic" ? Mode::Cubic
                             : Mode::Linear;
  s.padding = padding == "border"       ? Padding::Border
              : padding == "reflection" ? Padding::Reflection
                                        : Padding::Zeros;
  s.alignCorners = ctx.attrs.getInt("align_corners", 0) != 0;
  for (int64_t d = 2; d < rank; ++d) {
    int64_t size = xIn.dim(d);
    s.dims.push_back(size);
    s.lo.push_back(s.alignCorners ? 0.0 : -0.5);
    s.hi.push_back(s.alignCorners ? size - 1.0 : size - 0.5);
  }
  const int64_t batch = xIn.dim(0), channels = xIn.dim(1);
  Shape outShape = {batch, channels};
  for (int64_t d = 1; d < rank - 1; ++d)
    outShape.push_back(gridIn.dim(d));
  Tensor x = xIn.to(DType::F64), grid = gridIn.to(DType::F64);
  Tensor out = Tensor::empty(DType::F64, outShape);
  const int64_t imageSize = numElements(Shape(s.dims.begin(), s.dims.end()));
  const int64_t points = numElements(Shape(outShape.begin() + 2, outShape.end()));
  bool emptyImage = imageSize == 0;
  const double *xp = x.data<double>(), *gp = grid.data<double>();
  double *op = out.data<double>();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t p = 0; p < points; ++p) {
      std::vector<double> pos =
          position(s, gp + (b * points + p) * (rank - 2));
      for (int64_t c = 0; c < channels; ++c) {
        const double *image = xp + (b * channels + c) * imageSize;
        op[(b * channels + c) * points + p] =
            emptyImage ? 0.0 : sample(s, image, pos);
      }
    }
  }
  ctx.outputs.resize(1);
  ctx.outputs[0] = out.to(xIn.dtype());
  return Status::ok();
}

} // namespace

/// Registers kiln.grid_sample for the floating-point dtypes.
void registerGridSampleKernels(Dispatcher &d) {
  d.add("grid_sample", Device::CPU, kFloatTypes, gridSampleKernel);
}

} // namespace kiln
