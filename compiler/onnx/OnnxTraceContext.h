//===- OnnxTraceContext.h - Shared state of the ONNX tracer ----*- C++ -*-===//
//
// This file declares the pieces the ONNX tracer's op mappings share: the
// per-node context (inputs, attributes, outputs, and the helpers that build
// kiln ops through createKilnOp, folding them on constants), the registry of
// mappings keyed by ONNX op type, and the TensorProto conversions. It is
// internal to compiler/onnx/.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_ONNXTRACECONTEXT_H
#define KILN_COMPILER_ONNX_ONNXTRACECONTEXT_H

#include "kiln/runtime/SizeLimits.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#include "onnx/onnx_pb.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace tracer {

using mlir::LogicalResult;
using mlir::Value;

//===----------------------------------------------------------------------===//
// TensorProto conversions (OnnxTensors.cpp)
//===----------------------------------------------------------------------===//

/// The Kiln dtype of an ONNX TensorProto data type; nullopt when Kiln does
/// not support it.
std::optional<DType> dtypeFromOnnx(int32_t onnxType);
/// The ONNX name of a TensorProto data type ("FLOAT", "STRING", ...).
std::string onnxTypeName(int32_t onnxType);
/// The ONNX element types Kiln supports, for diagnostics: "(Kiln supports
/// float, ...)".
const char *supportedOnnxTypesNote();

/// Result of reading an initializer or tensor attribute.
struct ProtoTensor {
  Tensor tensor;
  /// True when the data lives in an external file that is absent: `tensor`
  /// is then undefined and `dtype`/`shape` describe it.
  bool externalMissing = false;
  DType dtype = DType::F32;
  Shape shape;
};

/// Converts a TensorProto (inline or external data) to a tensor. `modelDir`
/// is the folder external data paths are relative to (empty: none allowed).
/// Errors name the tensor (and the external file).
Expected<ProtoTensor> readProtoTensor(const onnx::TensorProto &proto,
                                      const std::string &modelDir);

//===----------------------------------------------------------------------===//
// Per-node context
//===----------------------------------------------------------------------===//

/// State shared by the nodes of one graph.
struct TraceState {
  /// ONNX value name -> traced value.
  llvm::StringMap<Value> values;
  /// ONNX sequence name -> its tensors (sequences live only at trace time:
  /// every sequence op must be resolved with constant positions).
  llvm::StringMap<llvm::SmallVector<Value>> sequences;
  /// MLIR error diagnostics collected since the last take.
  std::vector<std::string> diagnostics;
  /// Folder of the model file (external data paths are relative to it).
  std::string modelDir;
};

/// What an op mapping sees while it translates one ONNX node: the node, its
/// effective version, its input values, and helpers that create kiln ops.
///
/// Error discipline: helpers that create values return a null Value after an
/// error (the message is recorded); every helper accepts null operands and
/// then returns null without doing anything, so a mapping may chain calls and
/// check once, at setOutput() or before it inspects a type.
class NodeContext {
public:
  NodeContext(TraceState &state, const onnx::NodeProto &node, int version,
              mlir::OpBuilder &builder, mlir::Location loc);

  const onnx::NodeProto &node() const { return node_; }
  /// The since_version of the operator definition the node uses.
  int version() const { return version_; }
  mlir::OpBuilder &builder() { return b_; }
  mlir::MLIRContext *ctx() { return b_.getContext(); }
  mlir::Location loc() const { return loc_; }
  const std::string &modelDir() const { return state_.modelDir; }

  // Inputs.
  size_t numInputs() const { return node_.input_size(); }
  /// True when input i is given (present and not the empty name).
  bool hasInput(size_t i) const;
  /// The value of input i, null when absent.
  Value input(size_t i) const;
  /// All present inputs, in order.
  llvm::SmallVector<Value> inputs() const;
  /// The tensors of sequence input i; nullopt (and an error) when input i
  /// is not a sequence.
  std::optional<llvm::SmallVector<Value>> inputSequence(size_t i);

  // Outputs.
  size_t numOutputs() const { return node_.output_size(); }
  /// True when the node names output i (optional outputs may be omitted).
  bool wantsOutput(size_t i) const;
  /// Binds output i; fails when `v` is null (an error is then recorded).
  LogicalResult setOutput(size_t i, Value v);
  /// Binds output i to a sequence of tensors.
  LogicalResult setOutputSequence(size_t i, llvm::ArrayRef<Value> tensors);

  // Attributes of the node.
  const onnx::AttributeProto *attr(const std::string &name) const;
  bool hasAttr(const std::string &name) const { return attr(name); }
  int64_t attrInt(const std::string &name, int64_t dflt) const;
  float attrFloat(const std::string &name, float dflt) const;
  std::string attrString(const std::string &name,
                         const std::string &dflt) const;
  std::optional<std::vector<int64_t>> attrInts(const std::string &name) const;
  std::optional<std::vector<float>> attrFloats(const std::string &name) const;

  // Errors.
  /// Records an error and returns failure().
  LogicalResult fail(const std::string &message);
  /// Records an error (the first one wins).
  void setError(const std::string &message) { (void)fail(message); }
  bool failed() const { return failed_; }
  const std::string &errorMessage() const { return error_; }

  // Types.
  mlir::RankedTensorType typeOf(Value v) const;
  /// Rank of v, -1 for null.
  int64_t rankOf(Value v) const;
  mlir::Type elemOf(Value v) const;
  /// Normalizes an axis against a rank; records an error when out of range.
  std::optional<int64_t> normAxis(int64_t axis, int64_t rank);

  // Constants.
  /// The elements of v when it is produced by kiln.constant.
  std::optional<Tensor> constTensor(Value v) const;
  std::optional<std::vector<int64_t>> constInts(Value v) const;
  std::optional<std::vector<double>> constFloats(Value v) const;
  /// A kiln.constant holding `t`.
  Value constant(const Tensor &t);
  /// A 1-D i64 constant.
  Value constI64(llvm::ArrayRef<int64_t> values);
  /// A rank-0 i64 constant.
  Value scalarI64(int64_t value);
  /// A constant of element type `elem` and shape `shape` filled with `value`.
  Value constFill(double value, mlir::Type elem, const Shape &shape = {});
  /// A rank-0 constant of v's element type.
  Value scalarLike(double value, Value v) {
    return v ? constFill(value, elemOf(v)) : Value();
  }

  // Op creation (every kiln op goes through these).
  /// Creates `kiln.<name>` (name given with the prefix) and returns its
  /// results; folds it to constants when all operands are constants.
  llvm::SmallVector<Value> ops(llvm::StringRef name, mlir::ValueRange operands,
                               llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  /// Same, for single-result ops.
  Value op(llvm::StringRef name, mlir::ValueRange operands,
           llvm::ArrayRef<mlir::NamedAttribute> attrs = {});

  // Attribute builders for kiln ops.
  mlir::NamedAttribute aInt(llvm::StringRef name, int64_t v);
  mlir::NamedAttribute aFloat(llvm::StringRef name, double v);
  mlir::NamedAttribute aStr(llvm::StringRef name, llvm::StringRef v);
  mlir::NamedAttribute aInts(llvm::StringRef name, llvm::ArrayRef<int64_t> v);
  mlir::NamedAttribute aFloats(llvm::StringRef name, llvm::ArrayRef<float> v);
  mlir::NamedAttribute aType(llvm::StringRef name, mlir::Type t);

  // Common compositions.
  /// kiln.cast unless v already has element type `elem`.
  Value cast(Value v, mlir::Type elem);
  /// kiln.cast to `elem`; to a float8 type with `saturate` (ONNX's default),
  /// v is first clipped to the format's finite range (infinities included,
  /// NaN kept), as ONNX's saturating cast.
  Value castSaturating(Value v, mlir::Type elem, bool saturate);
  /// kiln.reshape to a static shape.
  Value reshape(Value v, llvm::ArrayRef<int64_t> shape);
  /// kiln.shape over [start, end), folded when those dims are static.
  Value shapeOf(Value v, int64_t start = 0,
                std::optional<int64_t> end = std::nullopt);
  /// kiln.transpose.
  Value transpose(Value v, llvm::ArrayRef<int64_t> perm);
  /// kiln.unsqueeze / kiln.squeeze with constant axes.
  Value unsqueeze(Value v, llvm::ArrayRef<int64_t> axes);
  Value squeeze(Value v, llvm::ArrayRef<int64_t> axes);
  /// A reduction `kiln.<name>` over constant axes.
  Value reduce(llvm::StringRef name, Value v, llvm::ArrayRef<int64_t> axes,
               bool keepdims);

private:
  TraceState &state_;
  const onnx::NodeProto &node_;
  int version_;
  mlir::OpBuilder &b_;
  mlir::Location loc_;
  bool failed_ = false;
  std::string error_;
};

//===----------------------------------------------------------------------===//
// Registry of mappings
//===----------------------------------------------------------------------===//

using MappingFn = std::function<LogicalResult(NodeContext &)>;

/// How one ONNX operator maps onto kiln ops. The mapping implements every
/// since_version of the operator in [minVersion, maxVersion].
struct OpMapping {
  MappingFn fn;
  int minVersion = 1;
  int maxVersion = 1 << 30;
};

using MappingRegistry = llvm::StringMap<OpMapping>;

/// Registers the mapping of `opType`.
inline void addMapping(MappingRegistry &r, llvm::StringRef opType, MappingFn fn,
                       int minVersion = 1, int maxVersion = 1 << 30) {
  r[opType] = OpMapping{std::move(fn), minVersion, maxVersion};
}

/// Registration entry points, one per family of mappings.
void addElementwiseMappings(MappingRegistry &r);
void addNNMappings(MappingRegistry &r);
void addShapeMappings(MappingRegistry &r);
void addReductionMappings(MappingRegistry &r);
void addRecurrentMappings(MappingRegistry &r);
void addAttentionMappings(MappingRegistry &r);
void addLossMappings(MappingRegistry &r);
void addQuantizeMappings(MappingRegistry &r);
void addSequenceMappings(MappingRegistry &r);

void addImageMappings(MappingRegistry &r);
void addRandomMappings(MappingRegistry &r);

/// kiln.conv of x and w with the node's Conv window attributes
/// (kernel_shape, strides, dilations, pads, auto_pad, group), shared by
/// Conv, ConvInteger and QLinearConv (OnnxNN.cpp); null after an error.
Value traceConv(NodeContext &nc, Value x, Value w);

/// The registry with every mapping (built once).
const MappingRegistry &mappingRegistry();

/// The since_versions of a default-domain op (empty when unknown).
llvm::ArrayRef<int> onnxOpVersions(llvm::StringRef opType);

} // namespace tracer
} // namespace kiln

#endif // KILN_COMPILER_ONNX_ONNXTRACECONTEXT_H
