//===- Pipeline.cpp - The compile pipeline, in one place ------------------===//
//
// This file implements the compile pipeline of Kiln as one readable
// function: the ordered list of graph passes, with a comment per step, then
// code generation and packaging. Passes run on each graph function; the
// verifier runs after every pass.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"
#include "codegen/Packager.h"
#include "passes/FusionPasses.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <chrono>

using namespace mlir;

namespace kiln {

LogicalResult checkStaticShapes(ModuleOp module) {
  bool ok = true;
  module.walk([&](func::FuncOp graph) {
    for (BlockArgument arg : graph.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.hasStaticShape())
        continue;
      unsigned i = arg.getArgNumber();
      auto name = graph.getArgAttrOfType<StringAttr>(i, "kiln.name");
      auto dimNames = graph.getArgAttrOfType<ArrayAttr>(i, "kiln.dim_names");
      for (auto [d, size] : llvm::enumerate(type.getShape())) {
        if (!ShapedType::isDynamic(size))
          continue;
        StringRef dimName;
        if (dimNames && d < dimNames.size())
          if (auto s = dyn_cast<StringAttr>(dimNames[d]))
            dimName = s.getValue();
        InFlightDiagnostic diag = emitError(arg.getLoc())
                                  << "input '" << (name ? name.getValue() : "?")
                                  << "' dimension " << d;
        if (!dimName.empty())
          diag << " ('" << dimName
               << "') is dynamic; compiled models need static shapes: give "
                  "its size with --dim "
               << dimName << "=SIZE";
        else
          diag << " is dynamic and unnamed; compiled models need static "
                  "shapes: re-export the model with a fixed size or a "
                  "named dimension (then use --dim NAME=SIZE)";
        ok = false;
        break;
      }
    }
  });
  return success(ok);
}

LogicalResult runGraphPasses(ModuleOp module, PipelineStage stage,
                             double *seconds) {
  auto start = std::chrono::steady_clock::now();
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  OpPassManager &graph = pm.nest<func::FuncOp>();

  // 1. Fold ops whose operands are all constants (through the runtime's
  //    kernels, exactly like the tracer).
  graph.addPass(createFoldConstantsPass());
  // 2. Algebraic and view simplifications (x*1, reshape of reshape, ...).
  graph.addPass(createSimplifyPass());
  // 3. Common subexpressions (also erases dead ops).
  graph.addPass(createCSEPass());
  // 4. Composites (softmax, norms, gelu) into the primitives fusion groups.
  graph.addPass(createDecomposePass());
  // 5. Simplify what decomposition exposed.
  graph.addPass(createSimplifyPass());
  // 6. Cancel transposes through elementwise chains.
  graph.addPass(createLayoutCleanupPass());
  // 7. Common subexpressions again.
  graph.addPass(createCSEPass());
  if (stage == PipelineStage::Fused) {
    // 8. Group elementwise ops, reductions and views into kiln.fusion
    //    regions, one generated kernel each (the verifier runs after it).
    graph.addPass(createFuseOpsPass());
  }
  LogicalResult result = pm.run(module);
  if (seconds)
    *seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  return result;
}

LogicalResult runCompilePipeline(ModuleOp module,
                                 const CompileOptions &options) {
  // Static shapes are required: every dynamic dim must have come with --dim.
  if (failed(checkStaticShapes(module)))
    return failure();

  // The graph passes, up to fusion.
  double passSeconds = 0;
  if (failed(runGraphPasses(module, PipelineStage::Fused, &passSeconds)))
    return failure();

  // Code generation and packaging: kernels.cpp, memory plan, wrapper.cpp,
  // model.h, weights.bin, manifest.json, and one host compiler run for
  // model.so, written into a temp folder renamed at the end.
  PackageOptions package;
  package.outputDir = options.outputDir;
  package.cxx = options.cxx;
  package.cpuIsa = options.cpuIsa;
  package.weights = options.weights;
  package.target = options.target;
  package.modelPath = options.modelPath;
  package.dimSizes = options.dimSizes;
  package.traceSeconds = options.traceSeconds;
  package.passSeconds = passSeconds;
  return writePackage(module, package);
}

} // namespace kiln
