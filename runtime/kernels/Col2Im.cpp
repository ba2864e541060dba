//===- Col2Im.cpp - The reference Col2Im kernel ---------------------------===//
//
// This file implements the CPU reference kernel of kiln.col2im (ONNX
// Col2Im): the inverse of an im2col, for any number of spatial dims. Each
// column of the operand is the window at one position of the sliding grid
// over the padded image (row-major), each row one (channel, window offset);
// every element is added at its image position, and elements that fall in
// the padding are dropped.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <vector>

namespace kiln {

namespace {

/// The geometry of one col2im: per spatial dim, the image size, block size,
/// dilation, stride, leading pad and the number of window positions.
struct Geometry {
  std::vector<int64_t> image, block, dilations, strides, padBegin, windows;
};

Expected<Geometry> readGeometry(const KernelContext &ctx) {
  Geometry g;
  g.image = ctx.attrs.getInts("image_shape");
  g.block = ctx.attrs.getInts("block_shape");
  g.dilations = ctx.attrs.getInts("dilations");
  g.strides = ctx.attrs.getInts("strides");
  std::vector<int64_t> pads = ctx.attrs.getInts("pads");
  const size_t n = g.image.size();
  if (n == 0 || g.block.size() != n || g.dilations.size() != n ||
      g.strides.size() != n || pads.size() != 2 * n)
    return Status::error("col2im: image_shape, block_shape, dilations, "
                         "strides and pads do not agree on the spatial rank");
  for (size_t i = 0; i < n; ++i) {
    if (g.image[i] < 1 || g.block[i] < 1 || g.dilations[i] < 1 ||
        g.strides[i] < 1 || pads[i] < 0 || pads[i + n] < 0)
      return Status::error("col2im: sizes, dilations and strides must be "
                           "positive and pads non-negative");
    int64_t span = (g.block[i] - 1) * g.dilations[i] + 1;
    int64_t padded = g.image[i] + pads[i] + pads[i + n];
    if (span > padded)
      return Status::error(strCat("col2im: the block does not fit the "
                                  "padded image in spatial dim ",
                                  i));
    g.padBegin.push_back(pads[i]);
    g.windows.push_back((padded - span) / g.strides[i] + 1);
  }
  return g;
}

Status col2imKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 1, "col2im: expected 1 operand, got ",
             ctx.numInputs());
  const Tensor &xIn = ctx.input(0);
  Expected<Geometry> geometry = readGeometry(ctx);
  KILN_RETURN_IF_ERROR(geometry.status());
  const Geometry &g = *geometry;
  const size_t n = g.image.size();
  const int64_t blockSize = numElements(Shape(g.block.begin(), g.block.end()));
  const int64_t windows =
      numElements(Shape(g.windows.begin(), g.windows.end()));
  const int64_t imageSize = numElements(Shape(g.image.begin(), g.image.end()));
  KILN_CHECK(xIn.rank() == 3 && xIn.dim(1) % blockSize == 0 &&
                 xIn.dim(2) == windows,
             "col2im: the operand ", xIn.typeString(),
             " must be [N, C * ", blockSize, ", ", windows, "]");
  const int64_t batch = xIn.dim(0), channels = xIn.dim(1) / blockSize;
  Shape outShape = {batch, channels};
  outShape.insert(outShape.end(), g.image.begin(), g.image.end());
  Tensor x = xIn.to(DType::F64);
  Tensor out = Tensor::empty(DType::F64, outShape);
  const double *xp = x.data<double>();
  double *op = out.data<double>();
  std::fill(op, op + out.numel(), 0.0);
  std::vector<int64_t> offset(n), window(n);
  for (int64_t row = 0; row < channels * blockSize; ++row) {
    const int64_t c = row / blockSize;
    // The row's offset inside the block, row-major.
    for (int64_t r = row % blockSize, d = static_cast<int64_t>(n) - 1; d >= 0;
         --d) {
      offset[d] = r % g.block[d];
      r /= g.block[d];
    }
    for (int64_t l = 0; l < windows; ++l) {
      int64_t pixel = 0;
      bool inside = true;
      for (int64_t r = l, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
        window[d] = r % g.windows[d];
        r /= g.windows[d];
      }
      for (size_t d = 0; d < n && inside; ++d) {
        int64_t at = window[d] * g.strides[d] - g.padBegin[d] +
                     offset[d] * g.dilations[d];
        inside = at >= 0 && at < g.image[d];
        pixel = pixel * g.image[d] + at;
      }
      if (!inside)
        continue;
      for (int64_t b = 0; b < batch; ++b)
        op[(b * channels + c) * imageSize + pixel] +=
            xp[(b * channels * blockSize + row) * windows + l];
    }
  }
  ctx.outputs.resize(1);
  ctx.outputs[0] = out.to(xIn.dtype());
  return Status::ok();
}

} // namespace

/// Registers kiln.col2im for the floating-point dtypes.
void registerCol2ImKernels(Dispatcher &d) {
  d.add("col2im", Device::CPU, kFloatTypes, col2imKernel);
}

} // namespace kiln
