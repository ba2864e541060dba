//===- PadTile.cpp - Padding, tiling and triangle-mask kernels ------------===//
//
// This file implements the reference CPU kernels of pad (constant, reflect,
// edge and wrap modes; negative pads crop), tile and trilu. All three work
// on bytes, so one instantiation serves every dtype.
//
//===----------------------------------------------------------------------===//

#include "DataMovementKernels.h"

#include <algorithm>

namespace kiln {
namespace datamovement {
namespace {

//===----------------------------------------------------------------------===//
// pad
//===----------------------------------------------------------------------===//

enum class PadMode { Constant, Reflect, Edge, Wrap };

/// Maps coordinate `j` of the (cropped) axis of size `c` to a coordinate in
/// [0, c), or -1 for the constant value.
int64_t mapPadCoordinate(int64_t j, int64_t c, PadMode mode) {
  if (j >= 0 && j < c)
    return j;
  switch (mode) {
  case PadMode::Constant:
    return -1;
  case PadMode::Edge:
    return j < 0 ? 0 : c - 1;
  case PadMode::Wrap:
    return ((j % c) + c) % c;
  case PadMode::Reflect: {
    if (c == 1)
      return 0;
    int64_t period = 2 * (c - 1);
    int64_t m = ((j % period) + period) % period;
    return m < c ? m : period - m;
  }
  }
  return -1;
}

Status padKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "pad", 3));
  Tensor x = ctx.input(0).contiguous();
  auto padsOr = readIntParam(ctx.input(1), "pad", "pads");
  if (!padsOr)
    return padsOr.status();
  const std::vector<int64_t> &pads = *padsOr;
  int64_t r = x.rank();
  KILN_CHECK(static_cast<int64_t>(pads.size()) == 2 * r, "pad: pads ",
             intsToString(pads), " must have 2 * rank = ", 2 * r,
             " entries for ", x.typeString());
  std::string modeName = ctx.attrs.getString("mode", "constant");
  PadMode mode;
  if (modeName == "constant" || modeName.empty())
    mode = PadMode::Constant;
  else if (modeName == "reflect")
    mode = PadMode::Reflect;
  else if (modeName == "edge")
    mode = PadMode::Edge;
  else if (modeName == "wrap")
    mode = PadMode::Wrap;
  else
    return Status::error(
        strCat("pad: unknown mode '", modeName,
               "' (expected constant, reflect, edge or wrap)"));
  // Constant value, in x's dtype; zero when absent or empty.
  Tensor value = ctx.input(2);
  std::vector<char> fill(dtypeSize(x.dtype()), 0);
  if (value.numel() >= 1) {
    Tensor v =
        value.dtype() == x.dtype() ? value.contiguous() : value.to(x.dtype());
    std::memcpy(fill.data(), v.rawData(), fill.size());
  }
  // Negative pads crop first; positive pads then extend the cropped range.
  Shape shape(r);
  std::vector<std::vector<int64_t>> maps(r);
  Shape strides = contiguousStrides(x.shape());
  for (int64_t d = 0; d < r; ++d) {
    int64_t begin = pads[d], end = pads[r + d];
    int64_t lo = std::max<int64_t>(-begin, 0);
    int64_t c = x.dim(d) - lo - std::max<int64_t>(-end, 0);
    KILN_CHECK(c >= 0, "pad: pads ", intsToString(pads), " crop axis ", d,
               " of ", x.typeString(), " below size 0");
    int64_t pb = std::max<int64_t>(begin, 0), pe = std::max<int64_t>(end, 0);
    KILN_CHECK(mode == PadMode::Constant || c > 0 || (pb == 0 && pe == 0),
               "pad: cannot ", modeName, "-pad axis ", d, " which is empty in ",
               x.typeString());
    shape[d] = c + pb + pe;
    maps[d].resize(shape[d]);
    for (int64_t i = 0; i < shape[d]; ++i) {
      int64_t j = mapPadCoordinate(i - pb, c, mode);
      maps[d][i] = j < 0 ? -1 : lo + j;
    }
  }
  Tensor out = Tensor::empty(x.dtype(), shape);
  size_t es = dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(out.rawData());
  KILN_RETURN_IF_ERROR(forEachMultiIndex(
      shape, [&](int64_t flat, const std::vector<int64_t> &pos) {
        int64_t off = 0;
        for (int64_t d = 0; d < r; ++d) {
          int64_t s = maps[d][pos[d]];
          if (s < 0) {
            std::memcpy(dst + flat * es, fill.data(), es);
            return Status::ok();
          }
          off += s * strides[d];
        }
        std::memcpy(dst + flat * es, src + off * es, es);
        return Status::ok();
      }));
  ctx.outputs[0] = out;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// tile, trilu
//===----------------------------------------------------------------------===//

Status tileKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "tile", 2));
  const Tensor &x = ctx.input(0);
  auto repeats = readIntParam(ctx.input(1), "tile", "repeats");
  if (!repeats)
    return repeats.status();
  KILN_CHECK(static_cast<int64_t>(repeats->size()) == x.rank(),
             "tile: ", repeats->size(), " repeats for ", x.typeString());
  // View x as [r0, d0, r1, d1, ...] with zero strides on the repeat dims;
  // its contiguous copy is the tiled tensor laid out as [r0*d0, r1*d1, ...].
  Shape viewShape, viewStrides, shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    int64_t rep = (*repeats)[d];
    KILN_CHECK(rep >= 0, "tile: negative repeat ", rep, " for axis ", d);
    viewShape.push_back(rep);
    viewStrides.push_back(0);
    viewShape.push_back(x.dim(d));
    viewStrides.push_back(x.strides()[d]);
    shape.push_back(rep * x.dim(d));
  }
  Tensor tiled = makeView(x, viewShape, viewStrides, x.offset()).clone();
  ctx.outputs[0] = tiled.reshape(shape);
  return Status::ok();
}

Status triluKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "trilu", 2));
  const Tensor &x = ctx.input(0);
  KILN_CHECK(x.rank() >= 2, "trilu: input must have rank >= 2, got ",
             x.typeString());
  auto kOr = readIntParam(ctx.input(1), "trilu", "k");
  if (!kOr)
    return kOr.status();
  KILN_CHECK(kOr->size() <= 1, "trilu: k must hold one element, got ",
             ctx.input(1).typeString());
  int64_t k = kOr->empty() ? 0 : (*kOr)[0];
  bool upper = ctx.attrs.getInt("upper", 1) != 0;
  Tensor out = x.clone();
  int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  size_t es = dtypeSize(x.dtype());
  char *p = static_cast<char *>(out.rawData());
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep)
          std::memset(p + ((m * rows + i) * cols + j) * es, 0, es);
      }
  ctx.outputs[0] = out;
  return Status::ok();
}

} // namespace

void registerPadTileKernels(Dispatcher &d) {
  d.add("pad", Device::CPU, kAllTypes, padKernel);
  d.add("tile", Device::CPU, kAllTypes, tileKernel);
  d.add("trilu", Device::CPU, kAllTypes, triluKernel);
}

} // namespace datamovement
} // namespace kiln
