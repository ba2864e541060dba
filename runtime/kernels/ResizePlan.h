//===- ResizePlan.h - The interpolation plan of kiln.resize -----*- C++ -*-===//
//
// This file declares how a kiln.resize (ONNX Resize-19) computes: its
// parsed attributes, its output shape and, for each axis it changes, the
// input positions and weights of every output position. The reference
// kernel (Resize.cpp) interpolates with the plan one axis at a time; the CUDA
// target (targets/cuda/CudaResizeKernel.cpp) plans at compile time and
// prints the plan's tables into its kernel, so both compute the same
// interpolation.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_KERNELS_RESIZEPLAN_H
#define KILN_RUNTIME_KERNELS_RESIZEPLAN_H

#include "kiln/runtime/Attributes.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace resize {

/// The parsed attributes of one resize.
struct ResizeParams {
  std::string mode;
  std::string coordMode;
  std::string nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolationValue = 0.0;
  bool antialias = false;
  std::vector<double> roi;
  std::string policy;
};

/// Per-axis interpolation plan: for each output position, `n` input indices
/// (already clamped) and weights, and whether it is extrapolated.
struct AxisPlan {
  int64_t axis = 0;
  int64_t n = 0;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<char> extrapolated;
};

/// What one resize computes: the output shape and the plans of the axes it
/// changes, in axis order (the others are copied).
struct ResizePlan {
  ResizeParams params;
  Shape outShape;
  std::vector<AxisPlan> axes;
};

/// Plans the resize of an input of shape `in` with the op's attributes and
/// the values of its `scales` and `sizes` operands (one of them empty; the
/// caller checks their dtypes). Errors name the attribute or operand at
/// fault.
Status planResize(const Attributes &attrs, const Shape &in,
                  const std::vector<double> &scales,
                  const std::vector<int64_t> &sizes, ResizePlan &plan);

} // namespace resize
} // namespace kiln

#endif // KILN_RUNTIME_KERNELS_RESIZEPLAN_H
