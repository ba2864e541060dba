//===- Passes.h - Kiln's graph passes --------------------------*- C++ -*-===//
//
// This file declares the constructors of Kiln's passes over the kiln dialect
// and registerKilnPasses(), which makes every one of them available to
// kiln-opt under its command-line name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

namespace kiln {

/// Registers every Kiln pass with MLIR's pass registry (for kiln-opt).
void registerKilnPasses();

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
