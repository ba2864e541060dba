//===- ManifestSizeSymbols.h - The manifest's size symbols -------*- C++ -*-===//
//
// This file declares the reader of a manifest's "size_symbols" (a package
// compiled for ranges of sizes, docs/dynamic-shapes.md), which
// PackageManifestReader.cpp calls after the signature.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_MANIFESTSIZESYMBOLS_H
#define KILN_RUNTIME_LIB_MANIFESTSIZESYMBOLS_H

#include "ManifestFields.h"
#include "kiln/runtime/PackageManifest.h"

namespace kiln {

/// Reads "size_symbols" into `m` (identifiers, 1 <= min <= max <= 2^40, no
/// name twice) and checks that the signature's "dims" name declared
/// symbols only; `m`'s signature is read already.
Status parseSizeSymbols(const manifest_json::Fields &fields,
                        PackageManifest &m);

} // namespace kiln

#endif // KILN_RUNTIME_LIB_MANIFESTSIZESYMBOLS_H
