//===- ReferenceProgram.h - A model traced for the reference runtime -*- C++
//-*-//
//
// This file declares how the CLI commands that run a model on the reference
// runtime (`kiln run MODEL`, `kiln bench MODEL`) get its Program: trace, find
// the graph, build the Program, and require data for every weight.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_REFERENCEPROGRAM_H
#define KILN_TOOLS_REFERENCEPROGRAM_H

#include "compiler/onnx/OnnxTracer.h"
#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"

#include "mlir/IR/MLIRContext.h"

#include <string>

namespace kiln {

/// Traces `model` and builds the Program the reference executor runs. Errors
/// name the model; a weight without data (external data file missing) is an
/// error naming it.
Expected<Program> traceReferenceProgram(mlir::MLIRContext &context,
                                        const std::string &model,
                                        const TraceOptions &options = {});

} // namespace kiln

#endif // KILN_TOOLS_REFERENCEPROGRAM_H
