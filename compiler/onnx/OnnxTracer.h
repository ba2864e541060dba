//===- OnnxTracer.h - ONNX models to the kiln dialect -----------*- C++ -*-===//
//
// This file declares the ONNX frontend: it reads an .onnx file and traces its
// graph into one `func.func @main` of kiln ops (see docs/op-semantics.md),
// folding every op whose operands are all constants through the runtime's
// kernels, so that the shape arithmetic of exported models disappears.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_ONNXTRACER_H
#define KILN_COMPILER_ONNX_ONNXTRACER_H

#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>

namespace kiln {

/// Options of the ONNX tracer.
struct TraceOptions {
  /// Initializers whose external data file is absent become weight parameters
  /// (always). When true, ALL initializers larger than `weightThreshold`
  /// elements become weight parameters too.
  bool weightsAsParameters = false;
  int64_t weightThreshold = 1024;
};

/// Reads and traces an ONNX model file. Errors (unreadable, truncated or
/// corrupt file; unsupported op, opset, attribute or dtype; shape errors) are
/// returned as a Status whose message names the file, and for node errors the
/// node name, op type, opset version and domain, and what the user can do.
/// Never crashes, never throws out. Loads the kiln and func dialects into
/// `ctx`.
Expected<mlir::OwningOpRef<mlir::ModuleOp>>
traceOnnxFile(mlir::MLIRContext &ctx, const std::string &path,
              const TraceOptions &options = {});

/// Parses a serialized TensorProto file (.pb, as in the ONNX test data sets)
/// into a runtime tensor.
Expected<Tensor> readTensorProtoFile(const std::string &path);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXTRACER_H
