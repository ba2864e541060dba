//===- FuzzPipeline.cpp - Fuzz harness: traced model to kernel IR ---------===//
//
// This file implements the harness of the compiler proper: the bytes are a
// model file; when it traces with static shapes, it goes through the
// pipeline of `kiln compile --target cpu` up to the host compiler: graph
// breaks, the graph passes and fusion, the target's lowering, kernel
// generation, the memory plan and the wrapper (nothing is written to disk).
// Every stage may reject the input with a diagnostic; none may crash.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "codegen/MemoryPlanner.h"
#include "codegen/ModelHeaderEmitter.h"
#include "codegen/Target.h"
#include "codegen/WrapperEmitter.h"
#include "compiler/Pipeline.h"
#include "compiler/onnx/OnnxTracer.h"
#include "targets/TargetRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static MLIRContext *context = new MLIRContext();
  const std::string &path = kiln::fuzz::scratchPath("pipeline", "model.onnx");
  kiln::fuzz::writeFile(path, data, size);
  ScopedDiagnosticHandler quiet(context,
                                [](Diagnostic &) { return success(); });
  kiln::Expected<OwningOpRef<ModuleOp>> traced =
      kiln::traceOnnxFile(*context, path);
  if (!traced || !kiln::hasStaticInputs(traced->get()))
    return 0;
  ModuleOp module = traced->get();
  const kiln::Target *target = kiln::lookupTarget("cpu");
  if (failed(kiln::planGraphBreaks(module, "cpu")) ||
      failed(kiln::runGraphPasses(module, kiln::PipelineStage::Fused)) ||
      failed(kiln::lowerGraphs(module, *target)) ||
      kiln::isProgramModule(module))
    return 0;
  func::FuncOp graph;
  module.walk([&](func::FuncOp f) {
    if (!graph)
      graph = f;
  });
  if (!graph)
    return 0;
  std::unique_ptr<kiln::GraphCodegen> codegen =
      target->createGraphCodegen(kiln::PackageNames{"fuzz"});
  if (failed(codegen->emitKernels(graph)))
    return 0;
  FailureOr<kiln::MemoryPlan> plan = kiln::planMemory(graph);
  if (failed(plan))
    return 0;
  (void)kiln::emitWrapper(graph, *plan, *codegen);
  (void)kiln::emitModelHeader(*plan, *codegen);
  return 0;
}
