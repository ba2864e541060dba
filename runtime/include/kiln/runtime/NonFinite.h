//===- NonFinite.h - Finding NaN and infinities in results ------*- C++ -*-===//
//
// This file declares checkFinite, the check of RunOptions::checkNan
// (`--check-nan`): like PyTorch's anomaly mode, a run stops at the first
// result that holds a NaN or an infinity and names where it came from.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_NONFINITE_H
#define KILN_RUNTIME_NONFINITE_H

#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <string>

namespace kiln {

/// OK when every element of `t` (a float tensor on any device; other dtypes
/// pass) is finite; otherwise an error "<what> holds NaN (inf) at element I
/// of T, N of its M elements are not finite".
Status checkFinite(const Tensor &t, const std::string &what);

} // namespace kiln

#endif // KILN_RUNTIME_NONFINITE_H
