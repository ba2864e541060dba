//===- FillWeight.h - Materialising a package's fill weights ----*- C++ -*-===//
//
// This file declares the loader's materialisation of a fill weight: a
// constant that a package records in manifest.json as one repeated element
// ("fill") instead of storing its bytes in weights.bin. Internal to the
// runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_FILLWEIGHT_H
#define KILN_RUNTIME_LIB_FILLWEIGHT_H

#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <string>

namespace kiln {

/// A fresh, contiguous, 64-byte aligned CPU tensor of `w`'s dtype and shape
/// whose every element is `*w.fill`. The manifest entry is untrusted: the
/// fill must be one element of the dtype and "bytes" the dense size within
/// SizeLimits.h; errors name `manifestPath` and the weight.
Expected<Tensor> materializeFillWeight(const ManifestWeight &w,
                                       const std::string &manifestPath);

} // namespace kiln

#endif // KILN_RUNTIME_LIB_FILLWEIGHT_H
