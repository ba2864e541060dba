//===- GradientInterface.cpp - Gradient rules of kiln ops -----------------===//
//
// This file implements the generated parts of kiln::GradientOpInterface
// (KilnGradientInterface.td); the rules are in GradientRules*.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientInterface.h"

#include "ir/KilnGradientInterface.cpp.inc"
