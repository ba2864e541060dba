//===- OnnxResize.cpp - Resize and Upsample to kiln.resize ----------------===//
//
// This file implements the mappings of Resize (versions 10 to 19) and
// Upsample onto kiln.resize, whose `scales`/`sizes` operands are full-rank
// (one of them empty): the `axes` attribute of Resize-18 is expanded with the
// input's dims, the `roi` input becomes the `roi` attribute, and the
// keep_aspect_ratio_policy over a subset of axes is passed as the kernel's
// `axes` attribute.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

namespace kiln {
namespace tracer {
namespace {

/// True when v is absent or has a static zero length.
bool isEmpty(NodeContext &nc, Value v) {
  if (!v)
    return true;
  mlir::RankedTensorType t = nc.typeOf(v);
  return t && t.getRank() == 1 && t.getDimSize(0) == 0;
}

Value emptyScales(NodeContext &nc) {
  return nc.constant(Tensor::fromVector<float>({}, {0}));
}

Value emptySizes(NodeContext &nc) { return nc.constI64({}); }

Value scatter1D(NodeContext &nc, Value base, llvm::ArrayRef<int64_t> indices,
                Value values) {
  return nc.op("kiln.scatter_elements", {base, nc.constI64(indices), values},
               {nc.aInt("axis", 0), nc.aStr("reduction", "none")});
}

Value emitResize(NodeContext &nc, Value x, Value scales, Value sizes,
                 llvm::StringRef mode, llvm::StringRef coord,
                 llvm::StringRef nearestMode, llvm::ArrayRef<float> roi,
                 llvm::StringRef policy,
                 llvm::ArrayRef<int64_t> policyAxes = {}) {
  llvm::SmallVector<mlir::NamedAttribute> attrs = {
      nc.aStr("mode", mode),
      nc.aStr("coordinate_transformation_mode", coord),
      nc.aStr("nearest_mode", nearestMode),
      nc.aFloat("cubic_coeff_a", nc.attrFloat("cubic_coeff_a", -0.75f)),
      nc.aInt("exclude_outside", nc.attrInt("exclude_outside", 0)),
      nc.aFloat("extrapolation_value",
                nc.attrFloat("extrapolation_value", 0.0f)),
      nc.aInt("antialias", nc.attrInt("antialias", 0)),
      nc.aFloats("roi", roi),
      nc.aStr("keep_aspect_ratio_policy", policy)};
  if (!policyAxes.empty())
    attrs.push_back(nc.aInts("axes", policyAxes));
  return nc.op("kiln.resize", {x, scales, sizes}, attrs);
}

} // namespace

LogicalResult mapResize(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  if (rank < 0)
    return nc.fail("input is missing");
  std::string mode = nc.attrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return nc.fail("unsupported mode '" + mode + "'");
  bool v10 = nc.version() < 11;
  std::string coord = nc.attrString("coordinate_transformation_mode",
                                    v10 ? "asymmetric" : "half_pixel");
  std::string nearestMode =
      nc.attrString("nearest_mode", v10 ? "floor" : "round_prefer_floor");
  std::string policy = nc.attrString("keep_aspect_ratio_policy", "stretch");
  Value roiIn = v10 ? Value() : nc.input(1);
  Value scalesIn = v10 ? nc.input(1) : nc.input(2);
  Value sizesIn = v10 ? Value() : nc.input(3);

  // Axes (Resize-18): which dims scales/sizes/roi describe.
  std::vector<int64_t> axes;
  bool hasAxes = false;
  if (std::optional<std::vector<int64_t>> a = nc.attrInts("axes")) {
    hasAxes = true;
    for (int64_t ax : *a) {
      std::optional<int64_t> n = nc.normAxis(ax, rank);
      if (!n)
        return mlir::failure();
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  size_t k = axes.size();

  // roi: constant only.
  std::vector<float> roi;
  if (!isEmpty(nc, roiIn)) {
    std::optional<std::vector<double>> r = nc.constFloats(roiIn);
    if (!r)
      return nc.fail("unsupported: input 'roi' is a run-time value; Kiln needs a "
                     "constant roi (fold it into the model, or use a "
                     "coordinate mode other than tf_crop_and_resize)");
    if (r->size() != 2 * k)
      return nc.fail(strCat("input 'roi' has ", r->size(), " values, ", 2 * k,
                            " expected"));
    if (hasAxes || coord == "tf_crop_and_resize") {
      roi.assign(rank, 0.0f);
      roi.resize(2 * rank, 1.0f);
      for (size_t i = 0; i < k; ++i) {
        roi[axes[i]] = static_cast<float>((*r)[i]);
        roi[axes[i] + rank] = static_cast<float>((*r)[i + k]);
      }
    }
    if (coord == "tf_crop_and_resize" && !hasAxes)
      for (size_t i = 0; i < 2 * k; ++i)
        roi[i] = static_cast<float>((*r)[i]);
  }

  Value scales = emptyScales(nc), sizes = emptySizes(nc);
  if (!isEmpty(nc, sizesIn)) {
    Value s = nc.cast(sizesIn, nc.builder().getI64Type());
    sizes = hasAxes ? scatter1D(nc, nc.shapeOf(x), axes, s) : s;
  } else if (!isEmpty(nc, scalesIn)) {
    Value s = nc.cast(scalesIn, nc.builder().getF32Type());
    scales = hasAxes
                 ? scatter1D(
                       nc, nc.constFill(1.0, nc.builder().getF32Type(), {rank}),
                       axes, s)
                 : s;
  } else {
    return nc.fail("one of 'scales' and 'sizes' must be given");
  }
  // A non-stretch policy takes its scale over the listed axes only: the
  // kernel's `axes` attribute (an extension of the contract) says which.
  llvm::ArrayRef<int64_t> policyAxes;
  if (hasAxes && policy != "stretch")
    policyAxes = axes;
  return nc.setOutput(0, emitResize(nc, x, scales, sizes, mode, coord,
                                    nearestMode, roi, policy, policyAxes));
}

LogicalResult mapUpsample(NodeContext &nc) {
  Value x = nc.input(0);
  std::string mode = nc.attrString("mode", "nearest");
  if (mode == "bilinear")
    mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return nc.fail("unsupported mode '" + mode + "'");
  Value scales;
  if (nc.version() < 9) {
    std::optional<std::vector<float>> s = nc.attrFloats("scales");
    if (!s)
      return nc.fail("attribute 'scales' is required");
    scales = nc.constant(
        Tensor::fromVector<float>(*s, {static_cast<int64_t>(s->size())}));
  } else {
    scales = nc.cast(nc.input(1), nc.builder().getF32Type());
  }
  return nc.setOutput(0, emitResize(nc, x, scales, emptySizes(nc), mode,
                                    "asymmetric", "floor", {}, "stretch"));
}

} // namespace tracer
} // namespace kiln
