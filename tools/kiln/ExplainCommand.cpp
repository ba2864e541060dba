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

#include "compiler/GraphBreakReport.h"
#include "compiler/Pipeline.h"
#include "compiler/onnx/OnnxTracer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

int runExplainCommand(const ExplainOptions &options) {
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  DiagnosticReporter diagnostics(&context);
  TraceOptions trace;
  if (Status dims = parseDimFlags(options.dims, trace.dimSizes); !dims)
    return reportError(dims.message());
  if (Status values = parseInputValueFlags(options.inputValues,
                                           trace.inputValues);
      !values)
    return reportError(values.message());
  auto module = traceOnnxFile(context, options.model, trace);
  if (!module)
    return reportError(module.status().message());
  if (mlir::failed(planGraphBreaks(**module, options.target)))
    return diagnostics.errors()
               ? 1
               : reportError("planning the graph breaks failed");
  GraphBreakReport report = collectGraphBreaks(**module, options.target);
  report.model = options.model;
  printGraphBreakReport(report, llvm::outs());
  return 0;
}

} // namespace kiln
