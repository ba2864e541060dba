//===- OnnxImage.cpp - ONNX sampling, box and signal operators ------------===//
//
// This file implements the mappings of GridSample, Col2Im,
// NonMaxSuppression and DFT onto kiln.grid_sample, kiln.col2im,
// kiln.non_max_suppression and kiln.dft. The parameters that fix a result
// shape (Col2Im's image and block shapes, DFT's length and axis) must be
// constants; ONNX's optional inputs get their defaults here, so the kiln ops
// have fixed operand lists.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

#include <limits>

namespace kiln {
namespace tracer {
namespace {

/// GridSample-16 and -20: the older mode names ("bilinear", "bicubic") are
/// the newer "linear" and "cubic".
LogicalResult mapGridSample(NodeContext &nc) {
  std::string mode = nc.attrString("mode", "linear");
  if (mode == "bilinear")
    mode = "linear";
  else if (mode == "bicubic")
    mode = "cubic";
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    return nc.fail("unsupported mode '" + mode +
                   "' (GridSample takes linear, nearest or cubic)");
  std::string padding = nc.attrString("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return nc.fail("unsupported padding_mode '" + padding +
                   "' (GridSample takes zeros, border or reflection)");
  int64_t align = nc.attrInt("align_corners", 0);
  if (align != 0 && align != 1)
    return nc.fail(strCat("align_corners must be 0 or 1, got ", align));
  return nc.setOutput(
      0, nc.op("kiln.grid_sample", {nc.input(0), nc.input(1)},
               {nc.aStr("mode", mode), nc.aStr("padding_mode", padding),
                nc.aInt("align_corners", align)}));
}

/// The values of constant input `index` (an i64 shape parameter).
std::optional<std::vector<int64_t>> constParam(NodeContext &nc, size_t index,
                                               const char *name) {
  std::optional<std::vector<int64_t>> values = nc.constInts(nc.input(index));
  if (!values)
    nc.setError(strCat("unsupported: input '", name,
                       "' is a run-time value; Kiln needs a constant (it "
                       "fixes the result shape)"));
  return values;
}

LogicalResult mapCol2Im(NodeContext &nc) {
  std::optional<std::vector<int64_t>> image =
      constParam(nc, 1, "image_shape");
  std::optional<std::vector<int64_t>> block =
      constParam(nc, 2, "block_shape");
  if (!image || !block)
    return mlir::failure();
  size_t n = image->size();
  std::vector<int64_t> dilations =
      nc.attrInts("dilations").value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads =
      nc.attrInts("pads").value_or(std::vector<int64_t>(2 * n, 0));
  std::vector<int64_t> strides =
      nc.attrInts("strides").value_or(std::vector<int64_t>(n, 1));
  return nc.setOutput(
      0, nc.op("kiln.col2im", {nc.input(0)},
               {nc.aInts("image_shape", *image),
                nc.aInts("block_shape", *block),
                nc.aInts("dilations", dilations), nc.aInts("pads", pads),
                nc.aInts("strides", strides)}));
}

/// NonMaxSuppression-10/11: absent limits are 0 boxes and IoU 0; an absent
/// score threshold is -inf (every box is a candidate).
LogicalResult mapNonMaxSuppression(NodeContext &nc) {
  mlir::Type f32 = nc.builder().getF32Type();
  mlir::Type i64 = nc.builder().getIntegerType(64);
  Value maxOut = nc.hasInput(2) ? nc.cast(nc.input(2), i64)
                                : nc.constFill(0, i64, {1});
  Value iou = nc.hasInput(3) ? nc.cast(nc.input(3), f32)
                             : nc.constFill(0, f32, {1});
  Value minScore =
      nc.hasInput(4) ? nc.cast(nc.input(4), f32)
                     : nc.constFill(-std::numeric_limits<double>::infinity(),
                                    f32, {1});
  int64_t center = nc.attrInt("center_point_box", 0);
  if (center != 0 && center != 1)
    return nc.fail(strCat("center_point_box must be 0 or 1, got ", center));
  return nc.setOutput(0, nc.op("kiln.non_max_suppression",
                               {nc.input(0), nc.input(1), maxOut, iou, minScore},
                               {nc.aInt("center_point_box", center)}));
}

/// DFT-17 (axis attribute, default 1) and DFT-20 (axis input, default -2);
/// dft_length, when given, must be a constant.
LogicalResult mapDft(NodeContext &nc) {
  Value x = nc.input(0);
  mlir::RankedTensorType type = nc.typeOf(x);
  if (!type)
    return mlir::failure();
  int64_t rank = type.getRank();
  int64_t axis = nc.version() >= 20 ? -2 : nc.attrInt("axis", 1);
  if (nc.version() >= 20 && nc.hasInput(2)) {
    std::optional<std::vector<int64_t>> a = constParam(nc, 2, "axis");
    if (!a || a->size() != 1)
      return nc.fail("input 'axis' must be one constant value");
    axis = a->front();
  }
  if (rank < 2 || axis < -rank || axis >= rank)
    return nc.fail(strCat("axis ", axis, " is out of range for rank ", rank));
  axis = axis < 0 ? axis + rank : axis;
  if (axis == rank - 1)
    return nc.fail("axis names the last dim (the real and imaginary parts), "
                   "not a signal dim");
  bool inverse = nc.attrInt("inverse", 0) != 0;
  bool onesided = nc.attrInt("onesided", 0) != 0;
  int64_t length;
  if (nc.hasInput(1)) {
    std::optional<std::vector<int64_t>> l = constParam(nc, 1, "dft_length");
    if (!l || l->size() != 1)
      return nc.fail("input 'dft_length' must be one constant value");
    length = l->front();
  } else {
    int64_t dim = type.getDimSize(axis);
    if (mlir::ShapedType::isDynamic(dim))
      return nc.fail("unsupported: the signal dim is dynamic and dft_length "
                     "is absent; Kiln needs a static DFT length");
    length = inverse && onesided ? 2 * (dim - 1) : dim;
  }
  return nc.setOutput(
      0, nc.op("kiln.dft", {x},
               {nc.aInt("axis", axis), nc.aInt("length", length),
                nc.aInt("inverse", inverse), nc.aInt("onesided", onesided)}));
}

} // namespace

void addImageMappings(MappingRegistry &r) {
  addMapping(r, "GridSample", mapGridSample, 16);
  addMapping(r, "Col2Im", mapCol2Im, 18);
  addMapping(r, "NonMaxSuppression", mapNonMaxSuppression, 10);
  addMapping(r, "DFT", mapDft, 17);
}

} // namespace tracer
} // namespace kiln
