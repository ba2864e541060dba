//===- CatchMain.cpp - The main() of Kiln's Catch2 test binaries ----------===//
//
// This file implements the shared main() of the Catch2 unit-test binaries.
//
//===----------------------------------------------------------------------===//

#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
