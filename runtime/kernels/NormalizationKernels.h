//===- NormalizationKernels.h - Normalization family internals -*- C++ -*-===//
//
// This file declares what the normalization kernel files share: the softmax
// family's registration entry (called by registerNormalizationKernels) and
// small element helpers (storing an f32/f64 compute value into any float
// storage type, checking the output slots).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_KERNELS_NORMALIZATIONKERNELS_H
#define KILN_RUNTIME_KERNELS_NORMALIZATIONKERNELS_H

#include "kiln/runtime/Dispatcher.h"

#include <type_traits>

namespace kiln {
namespace norm {

/// Registers softmax, log_softmax and hardmax (Softmax.cpp).
void registerSoftmaxKernels(Dispatcher &d);

/// The compute type of the normalization kernels: f64 for f64, f32 else.
template <typename T>
using NormCompute =
    std::conditional_t<std::is_same_v<T, double>, double, float>;

/// Converts a compute value to the storage type T, rounding once.
template <typename T, typename A> inline T storeAs(A v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

/// Checks that the caller sized the outputs for at least `n` results.
inline Status checkOutputs(const KernelContext &ctx, const char *op, size_t n) {
  KILN_CHECK(ctx.outputs.size() >= n, op, ": expected ", n,
             " output slot(s), the caller provided ", ctx.outputs.size());
  return Status::ok();
}

} // namespace norm
} // namespace kiln

#endif // KILN_RUNTIME_KERNELS_NORMALIZATIONKERNELS_H
