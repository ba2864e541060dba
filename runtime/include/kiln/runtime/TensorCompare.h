//===- TensorCompare.h - Comparing tensors within tolerances ---*- C++ -*-===//
//
// This file declares the comparison used by every numeric test and by the
// conformance runner: dtype and shape must be equal; floating-point elements
// must satisfy |a - e| <= atol + rtol * |e| (NaN matches NaN, infinities must
// be equal); integers and booleans must be equal.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TENSORCOMPARE_H
#define KILN_RUNTIME_TENSORCOMPARE_H

#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

namespace kiln {

/// Tolerances of a floating-point comparison.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

/// The default tolerance for a dtype: f32/f64 rtol 1e-3 atol 1e-5; f16 rtol
/// 1e-3 atol 1e-3; bf16 rtol 1e-2 atol 1e-2 (one bf16 ulp is 2^-8).
Tolerance defaultTolerance(DType dtype);

/// Compares `actual` with `expected`; the error names the first mismatching
/// element (flat index and multi-index), both values, and the mismatch count.
Status compareTensors(const Tensor &actual, const Tensor &expected,
                      Tolerance tol);

} // namespace kiln

#endif // KILN_RUNTIME_TENSORCOMPARE_H
