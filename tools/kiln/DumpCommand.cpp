//===- DumpCommand.cpp - `kiln dump`: print a model as kiln IR ------------===//
//
// This file implements `kiln dump`: trace the model and print the module with
// its locations, so every op names the ONNX node it came from. The output
// parses back with `kiln-opt` (it round-trips).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "compiler/onnx/OnnxTracer.h"

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
  TraceOptions traceOptions;
  traceOptions.weightsAsParameters = options.weightsAsParameters;
  auto module = traceOnnxFile(context, options.model, traceOptions);
  if (!module)
    return reportError(module.status().message());

  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  // Print locations inline, so each op names its ONNX node on its own line.
  flags.useLocalScope();
  if (options.output.empty()) {
    (*module)->print(llvm::outs(), flags);
    llvm::outs() << "\n";
    return 0;
  }
  std::string tmp = options.output + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(tmp, ec);
    if (ec)
      return reportError("cannot write '" + tmp + "': " + ec.message());
    (*module)->print(out, flags);
    out << "\n";
  }
  if (std::rename(tmp.c_str(), options.output.c_str()) != 0)
    return reportError("cannot rename '" + tmp + "' to '" + options.output +
                       "'");
  return 0;
}

} // namespace kiln
