//===- Target.cpp - A code generation backend -----------------------------===//
//
// This file implements the out-of-line parts of the Target and GraphCodegen
// interfaces (their virtual destructors); the backends are in targets/.
//
//===----------------------------------------------------------------------===//

#include "codegen/Target.h"

namespace kiln {

GraphCodegen::~GraphCodegen() = default;
Target::~Target() = default;

} // namespace kiln
