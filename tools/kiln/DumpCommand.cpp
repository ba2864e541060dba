//===- DumpCommand.cpp - `kiln dump`: print a model as kiln IR ------------===//
//
// This file implements `kiln dump`: trace the model, run the compile
// pipeline up to the requested stage (traced, optimized, fused) and print the
// module with its locations, so every op names the ONNX node it came from.
// The output parses back with `kiln-opt` (it round-trips). The fused stage
// ends with a comment line counting kernels and giving the arena size.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "codegen/Packager.h"
#include "targets/TargetRegistry.h"
#include "compiler/GraphBreakReport.h"
#include "compiler/Pipeline.h"
#include "compiler/onnx/OnnxTracer.h"
#include "passes/FusionPasses.h"

#include "mlir/IR/Diagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <iostream>

namespace kiln {

int reportError(const std::string &message) {
  std::cerr << "kiln: error: " << message << "\n";
  return 1;
}

int runDumpCommand(const DumpOptions &options) {
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  TraceOptions traceOptions;
  traceOptions.weightsAsParameters = options.weightsAsParameters;
  Status dims = parseDimFlags(options.dims, traceOptions.dimSizes);
  if (!dims)
    return reportError(dims.message());
  auto module = traceOnnxFile(context, options.model, traceOptions);
  if (!module)
    return reportError(module.status().message());

  // Later stages: graph-break planning, or the graph passes (and fusion).
  std::string summary;
  auto breakSummary = [&] {
    GraphBreakReport report = collectGraphBreaks(**module, options.target);
    return "// graphs: " + std::to_string(report.graphs.size()) +
           ", graph breaks: " + std::to_string(report.breaks.size()) +
           " (target " + options.target + ")\n";
  };
  DiagnosticReporter diagnostics(&context);
  if (options.stage == "program") {
    if (mlir::failed(planGraphBreaks(**module, options.target)))
      return diagnostics.errors()
                 ? 1
                 : reportError("planning the graph breaks failed");
    summary = breakSummary();
  } else if (options.stage != "traced") {
    bool fused = options.stage == "fused" || options.stage == "lowered";
    // Graph breaks first: the passes run on the compiled graphs. A model
    // with dynamic input sizes (no --dim) is shown as one graph with
    // dynamic shapes, as the passes see it.
    if (hasStaticInputs(**module) &&
        mlir::failed(planGraphBreaks(**module, options.target)))
      return diagnostics.errors()
                 ? 1
                 : reportError("planning the graph breaks failed");
    if (mlir::failed(runGraphPasses(
            **module, fused ? PipelineStage::Fused : PipelineStage::Optimized)))
      return diagnostics.errors() ? 1 : reportError("the graph passes failed");
    if (options.stage == "lowered" &&
        mlir::failed(lowerGraphs(**module, *lookupTarget(options.target))))
      return diagnostics.errors() ? 1 : reportError("the lowering failed");
    if (isProgramModule(**module)) {
      summary = breakSummary();
      if (fused)
        for (auto graph : (*module)->getOps<mlir::func::FuncOp>())
          if (graph->hasAttr("kiln.graph"))
            summary += "// " + graph.getName().str() + ": " +
                       formatFusionSummary(summarizeFusion(graph)) + "\n";
    } else if (fused) {
      mlir::FailureOr<StepCounts> counts = countSteps(**module);
      if (mlir::failed(counts))
        return 1;
      summary = "// kernels: " + std::to_string(counts->fused) + " fused, " +
                std::to_string(counts->library) + " library, " +
                std::to_string(counts->fallback) + " fallback; arena: " +
                (counts->arenaBytes < 0
                     ? std::string("unknown (dynamic shapes: use --dim "
                                   "NAME=SIZE)")
                     : std::to_string(counts->arenaBytes) + " bytes") +
                "\n";
    }
  }

  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  // Print locations inline, so each op names its ONNX node on its own line.
  flags.useLocalScope();
  if (options.output.empty()) {
    (*module)->print(llvm::outs(), flags);
    llvm::outs() << "\n" << summary;
    return 0;
  }
  std::string tmp = options.output + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(tmp, ec);
    if (ec)
      return reportError("cannot write '" + tmp + "': " + ec.message());
    (*module)->print(out, flags);
    out << "\n" << summary;
  }
  if (std::rename(tmp.c_str(), options.output.c_str()) != 0)
    return reportError("cannot rename '" + tmp + "' to '" + options.output +
                       "'");
  return 0;
}

} // namespace kiln
