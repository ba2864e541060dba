//===- NonFinite.cpp - Finding NaN and infinities in results --------------===//
//
// This file implements checkFinite (NonFinite.h). Device tensors are copied
// to the host first: the check is a debugging mode, not a fast path.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/NonFinite.h"

#include <cmath>

namespace kiln {

Status checkFinite(const Tensor &t, const std::string &what) {
  if (!t.defined() || !isFloatingPoint(t.dtype()))
    return Status::ok();
  Tensor host = t;
  if (t.device() != Device::CPU) {
    Expected<Tensor> copied = t.to(Device::CPU);
    if (!copied)
      return copied.status().withContext(what);
    host = copied.take();
  }
  std::vector<double> values = host.toDoubleVector();
  int64_t first = -1, count = 0;
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) {
      if (first < 0)
        first = static_cast<int64_t>(i);
      ++count;
    }
  if (first < 0)
    return Status::ok();
  double v = values[first];
  return Status::error(strCat(what, " holds ",
                              std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf"),
                              " at element ", first, " of ", t.typeString(),
                              " (", count, " of its ", values.size(),
                              " elements are not finite)"));
}

} // namespace kiln
