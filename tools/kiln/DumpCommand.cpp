//===- DumpCommand.cpp - `kiln dump`: print a model as kiln IR ------------===//
//
// This file implements `kiln dump`: trace the model, run the compile
// pipeline up to the requested stage (traced, optimized, fused) and print the
// module with its locations, so every op names the ONNX node it came from.
// Constants above 16 elements are elided to a summary unless
// --print-constants; the output parses back with `kiln-opt` (with
// --print-constants it round-trips values too). The fused stage ends with a
// comment line counting kernels and giving the arena size. --format dot
// draws the stage for Graphviz instead (DotWriter.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DotWriter.h"
#include "ProgressLine.h"

#include "codegen/Packager.h"
#include "compiler/GraphBreakReport.h"
#include "compiler/IrPrinting.h"
#include "compiler/Pipeline.h"
#include "compiler/onnx/OnnxTracer.h"
#include "passes/FusionPasses.h"
#include "targets/TargetRegistry.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <iostream>

namespace kiln {

int reportError(const std::string &message) {
  endProgressLine();
  std::cerr << "kiln: error: " << message << "\n";
  return 1;
}

/// Prints `op` (compiler/IrPrinting.h: locations inline, large constants
/// elided unless --print-constants) and `summary`, or with --format dot a
/// Graphviz picture of it (DotWriter.h), to --output (written, then
/// renamed) or stdout.
static int writeIr(mlir::Operation *op, const std::string &summary,
                   const DumpOptions &options) {
  auto print = [&](llvm::raw_ostream &os) {
    if (options.format == "dot") {
      writeDot(op, os);
      return;
    }
    printIr(op, os, options.printConstants);
    os << "\n" << summary;
  };
  const std::string &path = options.output;
  if (path.empty()) {
    print(llvm::outs());
    return 0;
  }
  std::string tmp = path + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(tmp, ec);
    if (ec)
      return reportError("cannot write '" + tmp + "': " + ec.message());
    print(out);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return reportError("cannot rename '" + tmp + "' to '" + path + "'");
  return 0;
}

/// `kiln dump --train`: the traced graph with its trainable parameters, the
/// joint graph, or one of the derived forward, backward and optimizer
/// graphs.
/// `autocast` is kiln-autocast's options, or null without --precision.
static int dumpTraining(const DumpOptions &options,
                        const AutocastOptions *autocast) {
  static const char *const stages[] = {"traced", "joint", "forward", "backward",
                                       "optimizer"};
  if (!llvm::is_contained(stages, options.stage))
    return reportError("--train: --stage '" + options.stage +
                       "' is not a training stage; use traced, joint, "
                       "forward, backward or optimizer");
  TrainOptions train;
  if (Status ok = trainOptionsOf(options.training, train, options.precision);
      !ok)
    return reportError(ok.message());
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  TraceOptions trace;
  if (Status dims = parseDimFlags(options.dims, trace.dimSizes); !dims)
    return reportError(dims.message());
  setUpTrainingTrace(options.training, trace, nullptr);
  auto module = traceOnnxFile(context, options.model, trace);
  if (!module)
    return reportError(module.status().message());
  DiagnosticReporter diagnostics(&context);
  // Mixed precision before autodiff, as kiln compile --train does.
  if (autocast && mlir::failed(applyAutocast(**module, *autocast)))
    return diagnostics.errors() ? 1 : reportError("kiln-autocast failed");
  if (options.stage == "traced")
    return writeIr(module->get(), "", options);
  TrainingStage stage =
      options.stage == "joint" ? TrainingStage::Joint : TrainingStage::Complete;
  if (mlir::failed(
          deriveTrainingGraphs(**module, options.target, train, stage)))
    return diagnostics.errors() ? 1
                                : reportError("deriving the training graphs "
                                              "failed");
  if (options.stage == "joint")
    return writeIr(module->get(), "", options);
  auto graph = (*module)->lookupSymbol<mlir::func::FuncOp>(options.stage);
  std::string summary;
  if (auto bytes = graph->getAttrOfType<mlir::IntegerAttr>(kSavedBytesAttr))
    summary =
        "// saved activations: " + std::to_string(bytes.getInt()) +
        " bytes (of " +
        std::to_string(
            graph->getAttrOfType<mlir::IntegerAttr>(kSavedBytesNoRecomputeAttr)
                .getInt()) +
        " without recomputation); forward ops recomputed in "
        "backward: " +
        std::to_string(
            graph->getAttrOfType<mlir::IntegerAttr>(kRecomputedOpsAttr)
                .getInt()) +
        " (~" +
        std::to_string(
            graph->getAttrOfType<mlir::IntegerAttr>(kRecomputeFlopsAttr)
                .getInt()) +
        " FLOP a step)\n";
  return writeIr(graph, summary, options);
}

int runDumpCommand(const DumpOptions &options) {
  // --precision: kiln-autocast after tracing, for both kinds of dump.
  AutocastOptions autocastOptions;
  bool autocastEnabled = false;
  if (Status precision = parsePrecisionFlags(
          options.precision, options.precisionOverrides, options.ioPrecision,
          autocastOptions, autocastEnabled);
      !precision)
    return reportError(precision.message());
  const AutocastOptions *autocast =
      autocastEnabled ? &autocastOptions : nullptr;
  if (options.training.train)
    return dumpTraining(options, autocast);
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  TraceOptions traceOptions;
  traceOptions.weightsAsParameters = options.weightsAsParameters;
  Status dims = parseDimFlags(options.dims, traceOptions.dimSizes);
  if (!dims)
    return reportError(dims.message());
  if (options.stage == "joint" || options.stage == "forward" ||
      options.stage == "backward" || options.stage == "optimizer")
    return reportError("--stage " + options.stage +
                       " is a training stage: add --train");
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
  if (autocast && mlir::failed(applyAutocast(**module, *autocast)))
    return diagnostics.errors() ? 1 : reportError("kiln-autocast failed");
  if (options.stage == "program") {
    if (mlir::failed(
            planAndLogGraphBreaks(**module, options.target, options.logs)))
      return diagnostics.errors()
                 ? 1
                 : reportError("planning the graph breaks failed");
    summary = breakSummary();
  } else if (options.stage != "traced") {
    bool fused = options.stage == "fused" || options.stage == "lowered";
    // Graph breaks first: the passes run on the compiled graphs. A model
    // with dynamic input sizes (no --dim) is shown as one graph with
    // dynamic shapes, as the passes see it, and a warning says so.
    if (!hasStaticInputs(**module))
      llvm::errs() << "kiln: warning: '" << options.model
                   << "' has dynamic input dimensions: the graph passes see "
                      "them as dynamic (`kiln compile` runs the ops that "
                      "depend on them eagerly, `kiln explain` lists them); "
                      "give --dim NAME=SIZE to see the compiled graphs\n";
    if (hasStaticInputs(**module)) {
      if (mlir::failed(
              planAndLogGraphBreaks(**module, options.target, options.logs)))
        return diagnostics.errors()
                   ? 1
                   : reportError("planning the graph breaks failed");
    }
    if (mlir::failed(runGraphPasses(
            **module, fused ? PipelineStage::Fused : PipelineStage::Optimized,
            lookupTarget(options.target))))
      return diagnostics.errors() ? 1 : reportError("the graph passes failed");
    if (fused && options.logs.count("fusion"))
      logFusedGraphs(**module);
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

  return writeIr(module->get(), summary, options);
}

} // namespace kiln
