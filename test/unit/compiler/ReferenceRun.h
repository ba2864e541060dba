//===- ReferenceRun.h - A test module on the reference executor -*- C++ -*-===//
//
// This file declares runOnReference, shared by the compiler tests that check
// a pass by running the graph before and after it (ChannelsLastTest.cpp,
// FuseAttentionTest.cpp, SplitRecurrentTest.cpp), and their random inputs: the module's graph function becomes a runtime
// Program (compiler/ProgramBuilder) run by the reference executor; a failure
// is a test failure with the message.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_COMPILER_REFERENCERUN_H
#define KILN_TEST_UNIT_COMPILER_REFERENCERUN_H

#include "compiler/ProgramBuilder.h"
#include "kiln/runtime/Executor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>

namespace kiln {
namespace test {

/// An f32 tensor of `shape` with values uniform in [-1, 1).
inline Tensor randomTensor(const Shape &shape, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(numElements(shape));
  for (float &e : v)
    e = dist(rng);
  return Tensor::fromVector<float>(v, shape);
}

/// The outputs of `module`'s graph function on `inputs`.
inline NamedTensors runOnReference(mlir::ModuleOp module,
                                   const NamedTensors &inputs) {
  mlir::func::FuncOp graph = findGraphFunction(module);
  REQUIRE(graph);
  Expected<Program> program = buildProgram(graph);
  INFO((program ? std::string() : program.status().message()));
  REQUIRE(program.isOk());
  Expected<NamedTensors> out = runProgram(*program, inputs);
  INFO((out ? std::string() : out.status().message()));
  REQUIRE(out.isOk());
  return *out;
}

} // namespace test
} // namespace kiln

#endif // KILN_TEST_UNIT_COMPILER_REFERENCERUN_H
