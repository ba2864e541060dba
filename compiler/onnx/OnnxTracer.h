//===- OnnxTracer.h - ONNX models to the kiln dialect -----------*- C++ -*-===//
//
// This file declares the ONNX frontend: it reads an .onnx file and traces its
// graph into one `func.func @main` of kiln ops (see docs/op-semantics.md),
// folding every op whose operands are all constants through the runtime's
// kernels, so that the shape arithmetic of exported models disappears. If
// with a folded condition is inlined, Loop and Scan with a known trip count
// are unrolled; other If and Loop nodes become kiln.if and kiln.loop.
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
#include <functional>
#include <map>
#include <string>

namespace kiln {

/// Options of the ONNX tracer.
struct TraceOptions {
  /// Initializers whose external data file is absent become weight parameters
  /// (always). When true, ALL initializers larger than `weightThreshold`
  /// elements become weight parameters too.
  bool weightsAsParameters = false;
  int64_t weightThreshold = 1024;
  /// When true, initializers stored as ONNX external data become weight
  /// parameters even when their file is present (`kiln compile --weights
  /// external`), with the argument attribute `kiln.external_data =
  /// {location, offset, length}` saying where their bytes are.
  bool externalDataAsParameters = false;
  /// Graph inputs bound to values at trace time (`kiln compile --input-value
  /// NAME=FILE`): each becomes a constant instead of an argument, so shapes
  /// computed from it (Reshape, Resize, Tile, Pad parameters) are static.
  std::map<std::string, Tensor> inputValues;
  /// Sizes of named dynamic dimensions (ONNX `dim_param`), e.g. {"batch",
  /// 4}: graph input dims with one of these names become static (what
  /// `kiln compile --dim NAME=SIZE` sets; the compile path needs static
  /// shapes).
  std::map<std::string, int64_t> dimSizes;
  /// ONNX Loop and Scan with a trip count known at trace time (and, for
  /// Loop, conditions that fold) are unrolled up to this many iterations;
  /// longer Loops become kiln.loop, longer Scans are an error.
  int64_t loopUnrollLimit = 64;
  /// Training (`kiln compile --train`): every floating-point initializer
  /// for which `frozen` (when set) is false becomes a graph argument tagged
  /// `kiln.trainable` (not `kiln.weight`: the training graphs take the
  /// parameters as inputs), its data stored in `*initialValues` (when
  /// given) under its name. Frozen initializers stay constants.
  bool trainable = false;
  std::function<bool(const std::string &)> frozen;
  std::map<std::string, Tensor> *initialValues = nullptr;
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

namespace tracer {
/// The TensorProto data type of a Kiln dtype (OnnxTensors.cpp).
int32_t onnxTypeFromDType(DType dtype);
} // namespace tracer

} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXTRACER_H
