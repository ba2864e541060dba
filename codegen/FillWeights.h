//===- FillWeights.h - Splat constants stored as one element ---*- C++ -*-===//
//
// This file declares which weights of a compiled graph are *fill weights*:
// constants whose elements are all equal (a splat: ConstantOfShape, zeros,
// ones, a folded broadcast). A package records such a weight in
// manifest.json as its one element ("fill") and stores nothing in
// weights.bin; the loader materialises it at load time
// (runtime/lib/FillWeight.cpp) and model.h's createFromWeightsFileAndFills
// fills caller storage. The memory planner, the package writer and the
// model.h emitter ask the same function, so they agree.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_FILLWEIGHTS_H
#define KILN_CODEGEN_FILLWEIGHTS_H

#include "codegen/MemoryPlanner.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln {

/// A splat constant is a fill weight only when its dense form is larger
/// than this: a smaller one fits the 64-byte slot it takes in weights.bin.
constexpr int64_t kMinFillWeightBytes = kBufferAlignment + 1;

/// The bytes of the one element (dtype size, little-endian as in
/// weights.bin; a bool is 0 or 1) that every element of weight `w` holds,
/// when `w` is a top-level constant of at least kMinFillWeightBytes whose
/// elements are all equal: a splat DenseElementsAttr, or a dense_resource
/// whose elements are all equal. nullopt for every other weight (stored in
/// weights.bin, or a weight argument).
std::optional<std::vector<uint8_t>> fillWeightElement(const SignatureEntry &w);

} // namespace kiln

#endif // KILN_CODEGEN_FILLWEIGHTS_H
