//===- ExplainCommand.cpp - `kiln explain`: where and why graphs break ----===//
//
// This file implements `kiln explain MODEL [--target T]`, Kiln's
// torch._dynamo.explain: it traces the model, plans its graph breaks for the
// target (the same planning `kiln compile` does) and prints the number of
// graphs and breaks, each break's node, op, reason, hint and source
// location, and the ops of each graph. It compiles nothing and exits 0 when
// the model traces, whatever it finds; dynamic input sizes are allowed (ops
// that read them show up as breaks, with the --dim hint).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "compiler/SizeRangeCompile.h"

#include "compiler/GraphBreakReport.h"
#include "compiler/Pipeline.h"
#include "compiler/onnx/OnnxTracer.h"
#include "targets/TargetRegistry.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// `kiln explain --train`: whether the model trains, and if not, every op
/// that blocks it (no gradient rule, a graph break), naming its node.
static int explainTraining(const ExplainOptions &options) {
  TrainOptions train;
  if (Status ok = trainOptionsOf(options.training, train); !ok)
    return reportError(ok.message());
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  DiagnosticReporter diagnostics(&context);
  TraceOptions trace;
  if (Status dims = parseDimFlags(options.dims, trace.dimSizes); !dims)
    return reportError(dims.message());
  std::map<std::string, Tensor> params;
  setUpTrainingTrace(options.training, trace, &params);
  auto module = traceOnnxFile(context, options.model, trace);
  if (!module)
    return reportError(module.status().message());
  int64_t elements = 0;
  for (const auto &[name, t] : params)
    elements += t.numel();
  llvm::outs() << "Training '" << options.model << "' (target "
               << options.target << "): " << params.size()
               << " trainable parameters, " << elements << " elements\n";
  if (mlir::failed(deriveTrainingGraphs(**module, options.target, train,
                                        TrainingStage::Complete))) {
    llvm::outs() << "It cannot be trained yet: " << diagnostics.errors()
                 << " problem(s), each printed above with its node.\n";
    return 1;
  }
  auto forward = (*module)->lookupSymbol<mlir::func::FuncOp>("forward");
  auto backward = (*module)->lookupSymbol<mlir::func::FuncOp>("backward");
  auto countOps = [](mlir::func::FuncOp f) {
    return std::distance(f.getOps().begin(), f.getOps().end()) - 1;
  };
  llvm::outs() << "It trains: every op on the way from the parameters to "
                  "the loss has a gradient rule and the graphs compile "
                  "whole.\n"
               << "  forward graph: " << countOps(forward) << " ops, saves "
               << (forward.getNumResults() - 1) << " activations ("
               << forward->getAttrOfType<mlir::IntegerAttr>(kSavedBytesAttr)
                      .getInt()
               << " bytes)\n"
               << "  backward graph: " << countOps(backward) << " ops, "
               << backward->getAttrOfType<mlir::IntegerAttr>(
                          kRecomputedOpsAttr)
                      .getInt()
               << " of them forward ops recomputed\n"
               << "(`kiln dump --train --stage joint|forward|backward` shows "
                  "the graphs)\n";
  return 0;
}

int runExplainCommand(const ExplainOptions &options) {
  if (options.training.train)
    return explainTraining(options);
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  DiagnosticReporter diagnostics(&context);
  TraceOptions trace;
  CompileOptions compile;
  compile.modelPath = options.model;
  compile.target = options.target;
  if (Status dims =
          parseDimFlags(options.dims, trace.dimSizes, &compile.dimRanges);
      !dims)
    return reportError(dims.message());
  if (Status values = parseInputValueFlags(options.inputValues,
                                           trace.inputValues);
      !values)
    return reportError(values.message());
  auto module = traceOnnxFile(context, options.model, trace);
  if (!module)
    return reportError(module.status().message());
  // Named dynamic dims: planned as kiln compile plans them, for ranges of
  // sizes where the model allows (compiler/SizeRangeCompile.h).
  bool unnamed = false;
  Expected<std::vector<SizeSymbol>> symbols =
      sizeSymbolsOf(**module, compile.dimRanges, unnamed);
  if (!symbols)
    return reportError(symbols.status().message());
  if (!symbols->empty() && !unnamed) {
    mlir::FailureOr<SizeRangePlan> plan =
        planForSizeRanges(context, compile, trace, *symbols);
    if (mlir::failed(plan))
      return diagnostics.errors() ? 1
                                  : reportError("planning the sizes failed");
    if (plan->bound) {
      llvm::outs() << "Sizes as run-time values:";
      for (const SizeSymbol &s : *symbols)
        llvm::outs() << " " << s.name << " in " << s.min << ".." << s.max;
      llvm::outs() << " (one package serves them; the memory plan is made "
                      "for the maximum)\n";
      GraphBreakReport report =
          collectGraphBreaks(*plan->bound, options.target);
      report.model = options.model;
      collectReferenceSteps(*plan->bound, report);
      printGraphBreakReport(report, llvm::outs());
      return 0;
    }
    llvm::outs() << "Not compiled for a range of sizes: " << plan->whyNot
                 << "; the dynamic dimensions are planned as graph breaks "
                    "below (or give fixed sizes with --dim NAME=SIZE)\n";
  }
  if (mlir::failed(
          planAndLogGraphBreaks(**module, options.target, options.logs)))
    return diagnostics.errors()
               ? 1
               : reportError("planning the graph breaks failed");
  GraphBreakReport report = collectGraphBreaks(**module, options.target);
  report.model = options.model;
  // The host steps: what the target's lowering of the compiled graphs
  // leaves to reference kernels (as `kiln dump --stage lowered` shows it).
  // Only for static shapes (the graphs compile only then).
  if (hasStaticInputs(**module)) {
    mlir::OwningOpRef<mlir::ModuleOp> lowered((*module)->clone());
    mlir::ScopedDiagnosticHandler quiet(
        &context, [](mlir::Diagnostic &) { return mlir::success(); });
    const Target *target = lookupTarget(options.target);
    bool fused =
        target &&
        mlir::succeeded(runGraphPasses(*lowered, PipelineStage::Fused, target));
    if (fused && options.logs.count("fusion"))
      logFusedGraphs(*lowered);
    if (fused && mlir::succeeded(lowerGraphs(*lowered, *target)))
      collectReferenceSteps(*lowered, report);
    else
      report.loweringFailed = true;
  }
  printGraphBreakReport(report, llvm::outs());
  return 0;
}

} // namespace kiln
