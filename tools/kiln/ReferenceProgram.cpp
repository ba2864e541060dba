//===- ReferenceProgram.cpp - A model traced for the reference runtime ----===//
//
// This file implements traceReferenceProgram, shared by `kiln run` and
// `kiln bench` on ONNX models.
//
//===----------------------------------------------------------------------===//

#include "ReferenceProgram.h"

#include "compiler/ProgramBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {

Expected<Program> traceReferenceProgram(mlir::MLIRContext &context,
                                        const std::string &model,
                                        const TraceOptions &options) {
  auto module = traceOnnxFile(context, model, options);
  if (!module)
    return module.status();
  mlir::func::FuncOp graph = findProgramFunction(**module);
  if (!graph)
    return Status::error(model + ": the traced module has no graph");
  Expected<Program> program = buildProgram(graph);
  if (!program)
    return Status::error(model + ": " + program.status().message());
  if (!program->weights.empty())
    return Status::error(
        strCat(model, ": ", program->weights.size(),
               " weights have no data (e.g. '", program->weights.front().name,
               "'): their external data file is missing; place it next to the "
               "model as the model names it"));
  return program;
}

} // namespace kiln
