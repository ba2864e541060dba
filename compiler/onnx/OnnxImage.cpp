//===- OnnxImage.cpp - ONNX sampling, box and signal operators ------------===//
//
// This file implements the mappings of GridSample, Col2Im,
// NonMaxSuppression, DFT, RoiAlign, DeformConv and STFT onto
// kiln.grid_sample, kiln.col2im, kiln.non_max_suppression, kiln.dft,
// kiln.roi_align, kiln.deform_conv and kiln.stft. The parameters that fix a
// result shape (Col2Im's image and block shapes, DFT's length and axis) must be
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

/// RoiAlign-10 (regions at least a pixel wide, "output_half_pixel") and -16
/// (coordinate_transformation_mode, default "half_pixel").
LogicalResult mapRoiAlign(NodeContext &nc) {
  std::string mode = nc.attrString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return nc.fail("unsupported mode '" + mode +
                   "' (RoiAlign takes avg or max)");
  std::string transform =
      nc.attrString("coordinate_transformation_mode",
                    nc.version() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return nc.fail("unsupported coordinate_transformation_mode '" + transform +
                   "' (RoiAlign takes half_pixel or output_half_pixel)");
  int64_t height = nc.attrInt("output_height", 1);
  int64_t width = nc.attrInt("output_width", 1);
  int64_t ratio = nc.attrInt("sampling_ratio", 0);
  Value x = nc.input(0);
  Value rois = nc.cast(nc.input(1), nc.elemOf(x));
  Value batch = nc.cast(nc.input(2), nc.builder().getIntegerType(64));
  return nc.setOutput(
      0,
      nc.op("kiln.roi_align", {x, rois, batch},
            {nc.aStr("mode", mode), nc.aInt("output_height", height),
             nc.aInt("output_width", width), nc.aInt("sampling_ratio", ratio),
             nc.aFloat("spatial_scale", nc.attrFloat("spatial_scale", 1.0f)),
             nc.aInt("half_pixel", transform == "half_pixel")}));
}

/// DeformConv-19 (2-D): an absent bias is zeros and an absent mask ones;
/// kernel_shape, when given, must be w's.
LogicalResult mapDeformConv(NodeContext &nc) {
  Value x = nc.input(0), w = nc.input(1), offset = nc.input(2);
  mlir::RankedTensorType wType = nc.typeOf(w), offType = nc.typeOf(offset);
  if (!wType || !offType || !nc.typeOf(x))
    return mlir::failure();
  if (wType.getRank() != 4 || offType.getRank() != 4)
    return nc.fail(strCat("Kiln supports 2-D DeformConv only (w and offset "
                          "of rank 4), got w of rank ",
                          wType.getRank(), " and offset of rank ",
                          offType.getRank()));
  if (std::optional<std::vector<int64_t>> k = nc.attrInts("kernel_shape"))
    if (k->size() != 2 || (*k)[0] != wType.getDimSize(2) ||
        (*k)[1] != wType.getDimSize(3))
      return nc.fail("kernel_shape must be w's spatial dims [" +
                     strCat(wType.getDimSize(2), ", ", wType.getDimSize(3)) +
                     "]");
  mlir::Type elem = nc.elemOf(x);
  Value bias = nc.input(3), mask = nc.input(4);
  if (!nc.hasInput(3)) {
    if (wType.isDynamicDim(0))
      return nc.fail("unsupported: no bias and a dynamic output channel "
                     "count; Kiln needs it static");
    bias = nc.constFill(0, elem, {wType.getDimSize(0)});
  }
  if (!nc.hasInput(4)) {
    if (!offType.hasStaticShape() || offType.getDimSize(1) % 2 != 0)
      return nc.fail("unsupported: no mask and an offset of shape that is "
                     "dynamic or odd in dim 1; Kiln needs it static");
    mask = nc.constFill(1, elem,
                        {offType.getDimSize(0), offType.getDimSize(1) / 2,
                         offType.getDimSize(2), offType.getDimSize(3)});
  }
  std::vector<int64_t> dilations =
      nc.attrInts("dilations").value_or(std::vector<int64_t>(2, 1));
  std::vector<int64_t> pads =
      nc.attrInts("pads").value_or(std::vector<int64_t>(4, 0));
  std::vector<int64_t> strides =
      nc.attrInts("strides").value_or(std::vector<int64_t>(2, 1));
  return nc.setOutput(
      0, nc.op("kiln.deform_conv",
               {x, nc.cast(w, elem), nc.cast(offset, elem), nc.cast(bias, elem),
                nc.cast(mask, elem)},
               {nc.aInts("dilations", dilations),
                nc.aInt("group", nc.attrInt("group", 1)),
                nc.aInt("offset_group", nc.attrInt("offset_group", 1)),
                nc.aInts("pads", pads), nc.aInts("strides", strides)}));
}

/// STFT-17: frame_step may be a run-time value (the result's frame count
/// then is too); an absent window is ones of frame_length (or of the
/// signal's length when frame_length is absent too).
LogicalResult mapStft(NodeContext &nc) {
  Value signal = nc.input(0);
  mlir::RankedTensorType type = nc.typeOf(signal);
  if (!type)
    return mlir::failure();
  mlir::Type elem = type.getElementType();
  mlir::Type i64 = nc.builder().getIntegerType(64);
  Value step = nc.cast(nc.input(1), i64);
  Value window = nc.hasInput(2) ? nc.cast(nc.input(2), elem) : Value();
  if (nc.hasInput(3)) {
    Value length = nc.reshape(nc.cast(nc.input(3), i64), {1});
    if (window) {
      // Both given: ONNX cuts or pads each windowed frame to frame_length;
      // Kiln takes the window's length as the frame length.
      std::optional<std::vector<int64_t>> l = nc.constInts(length);
      mlir::RankedTensorType wt = nc.typeOf(window);
      if (!l || !wt || wt.isDynamicDim(0) || (*l)[0] != wt.getDimSize(0))
        return nc.fail("unsupported: frame_length given beside a window "
                       "must be a constant equal to the window's length");
    } else {
      window = nc.op("kiln.constant_of_shape", {length},
                     {nc.builder().getNamedAttr(
                         "value", mlir::DenseElementsAttr::get(
                                      mlir::RankedTensorType::get({1}, elem),
                                      nc.builder().getFloatAttr(elem, 1.0)))});
    }
  } else if (!window) {
    if (type.isDynamicDim(1))
      return nc.fail("unsupported: neither window nor frame_length and a "
                     "dynamic signal length");
    window = nc.constFill(1, elem, {type.getDimSize(1)});
  }
  int64_t onesided = nc.attrInt("onesided", 1);
  if (onesided != 0 && onesided != 1)
    return nc.fail(strCat("onesided must be 0 or 1, got ", onesided));
  return nc.setOutput(0, nc.op("kiln.stft", {signal, step, window},
                               {nc.aInt("onesided", onesided)}));
}

} // namespace

void addImageMappings(MappingRegistry &r) {
  addMapping(r, "GridSample", mapGridSample, 16);
  addMapping(r, "Col2Im", mapCol2Im, 18);
  addMapping(r, "NonMaxSuppression", mapNonMaxSuppression, 10);
  addMapping(r, "DFT", mapDft, 17);
  addMapping(r, "RoiAlign", mapRoiAlign, 10);
  addMapping(r, "DeformConv", mapDeformConv, 19);
  addMapping(r, "STFT", mapStft, 17);
}

} // namespace tracer
} // namespace kiln
