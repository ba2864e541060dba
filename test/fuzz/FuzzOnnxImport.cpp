//===- FuzzOnnxImport.cpp - Fuzz harness: ONNX bytes to verified kiln IR --===//
//
// This file implements the harness of the ONNX importer: the bytes are a
// model file; it is traced into kiln IR (parsing, initializers, shape
// inference of every op) and the module verified. Every input must end in
// a verified module or an error with a message; a crash, a sanitizer report
// or an unbounded allocation is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "compiler/onnx/OnnxTracer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = new mlir::MLIRContext();
  const std::string &path = kiln::fuzz::scratchPath("import", "model.onnx");
  kiln::fuzz::writeFile(path, data, size);
  // Diagnostics are part of the error path under test, not output.
  mlir::ScopedDiagnosticHandler quiet(
      context, [](mlir::Diagnostic &) { return mlir::success(); });
  kiln::Expected<mlir::OwningOpRef<mlir::ModuleOp>> module =
      kiln::traceOnnxFile(*context, path);
  if (!module) {
    kiln::fuzz::checkMessage(module.status().message());
    return 0;
  }
  if (failed(mlir::verify(module->get()))) {
    std::fprintf(stderr, "kiln fuzz: the tracer produced invalid IR\n");
    std::abort();
  }
  return 0;
}
