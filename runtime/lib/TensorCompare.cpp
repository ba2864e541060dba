//===- TensorCompare.cpp - Comparing tensors within tolerances ------------===//
//
// This file implements compareTensors: the element-wise comparison with a
// relative and absolute tolerance used by the tests and the conformance
// runner.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/TensorCompare.h"

#include <cmath>

namespace kiln {

Tolerance defaultTolerance(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return {1e-3, 1e-3};
  case DType::BF16:
    return {1e-2, 1e-2};
  default:
    return {1e-3, 1e-5};
  }
}

/// "[1, 0, 2]" for flat index `flat` of `shape`.
static std::string multiIndex(int64_t flat, const Shape &shape) {
  Shape index(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return shapeToString(index);
}

Status compareTensors(const Tensor &actual, const Tensor &expected,
                      Tolerance tol) {
  KILN_CHECK(actual.defined(), "no value produced");
  KILN_CHECK(actual.dtype() == expected.dtype(), "dtype ",
             dtypeName(actual.dtype()), " differs from the expected ",
             dtypeName(expected.dtype()));
  KILN_CHECK(actual.shape() == expected.shape(), "shape ",
             shapeToString(actual.shape()), " differs from the expected ",
             shapeToString(expected.shape()));
  Tensor a = actual.contiguous(), e = expected.contiguous();
  int64_t n = a.numel(), mismatches = 0, first = -1;
  bool floating = isFloatingPoint(a.dtype()) || isFloat8(a.dtype());
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (floating) {
      double x = a.getDouble(i), y = e.getDouble(i);
      if (std::isnan(y) || std::isnan(x))
        ok = std::isnan(x) && std::isnan(y);
      else if (std::isinf(y) || std::isinf(x))
        ok = x == y;
      else
        ok = std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(y);
    } else {
      ok = a.getInt(i) == e.getInt(i);
    }
    if (!ok && mismatches++ == 0)
      first = i;
  }
  if (mismatches == 0)
    return Status::ok();
  std::ostringstream os;
  os.precision(9);
  os << mismatches << " of " << n << " elements differ; first at "
     << multiIndex(first, a.shape()) << ": got " << a.getDouble(first)
     << ", expected " << e.getDouble(first);
  if (floating)
    os << " (rtol " << tol.rtol << ", atol " << tol.atol << ")";
  return Status::error(os.str());
}

} // namespace kiln
