//===- ReferenceRun.h - A test module on the reference executor -*- C++ -*-===//
//
// This file declares runOnReference, shared by the compiler tests that check
// a pass by running the graph before and after it (ChannelsLastTest.cpp,
// FuseAttentionTest.cpp, SplitRecurrentTest.cpp, FuseDepthwiseTest.cpp),
// their random inputs, and checkPassKeepsValues, the whole check for a pass
// on f32 inputs: the module's graph function becomes a runtime Program
// (compiler/ProgramBuilder) run by the reference executor; a failure is a
// test failure with the message.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_COMPILER_REFERENCERUN_H
#define KILN_TEST_UNIT_COMPILER_REFERENCERUN_H

#include "compiler/ProgramBuilder.h"
#include "ir/KilnDialect.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/TensorCompare.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

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

/// Parses `ir` into `ctx`, runs its graph on random f32 inputs of `shapes`
/// (seed `seed`) before and after `pass` (on every function), and checks
/// that every output agrees within `tolerance`; returns the module after
/// the pass, for the caller's checks of its ops.
inline mlir::OwningOpRef<mlir::ModuleOp>
checkPassKeepsValues(mlir::MLIRContext &ctx, const char *ir,
                     const std::vector<std::pair<std::string, Shape>> &shapes,
                     std::unique_ptr<mlir::Pass> pass, unsigned seed,
                     Tolerance tolerance = {1e-5, 1e-6}) {
  ctx.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  REQUIRE(module);
  std::mt19937 rng(seed);
  NamedTensors inputs;
  for (const auto &[name, shape] : shapes)
    inputs.push_back({name, randomTensor(shape, rng)});
  NamedTensors before = runOnReference(*module, inputs);

  mlir::PassManager pm(&ctx);
  pm.nest<mlir::func::FuncOp>().addPass(std::move(pass));
  REQUIRE(mlir::succeeded(pm.run(*module)));
  NamedTensors after = runOnReference(*module, inputs);
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    Status s = compareTensors(after[i].second, before[i].second, tolerance);
    INFO("output " << before[i].first << ": " << s.message());
    CHECK(s.isOk());
  }
  return module;
}

/// The number of ops under `module` whose name is one of `names`.
inline int countOps(mlir::ModuleOp module,
                    std::initializer_list<llvm::StringRef> names) {
  int n = 0;
  module->walk([&](mlir::Operation *op) {
    n += llvm::is_contained(names, op->getName().getStringRef());
  });
  return n;
}

} // namespace test
} // namespace kiln

#endif // KILN_TEST_UNIT_COMPILER_REFERENCERUN_H
