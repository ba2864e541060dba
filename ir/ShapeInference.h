//===- ShapeInference.h - Result-type inference of the kiln ops -*- C++ -*-===//
//
// This file declares the result-type inference functions and the verifiers
// of the kiln ops. ODS-generated `inferReturnTypes` and `verify` methods
// (see the Kiln_Op class in KilnDialect.td) forward to them; they are
// implemented by family in ShapeInferenceElementwise.cpp,
// ShapeInferenceNN.cpp and ShapeInferenceData.cpp. They work on operands and
// an attribute dictionary, so they run before an op exists (createKilnOp),
// and they never assert on user input: problems become diagnostics at the
// op's location.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_SHAPEINFERENCE_H
#define KILN_IR_SHAPEINFERENCE_H

#include "kiln/runtime/SizeLimits.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace kiln {
namespace infer {

// The checked size arithmetic of SizeLimits.h, for the inference functions.
using kiln::checkedMul;
using kiln::saturatingAdd;
using kiln::saturatingMul;

/// What an inference function sees: the operands, the attribute dictionary,
/// the location for diagnostics and the op's name.
class InferContext {
public:
  InferContext(mlir::MLIRContext *context,
               std::optional<mlir::Location> location, llvm::StringRef opName,
               mlir::ValueRange operands, mlir::DictionaryAttr attributes)
      : context(context), location(location), opName(opName),
        operands(operands), attributes(attributes) {}
  /// The context of an existing op (for verifiers).
  explicit InferContext(mlir::Operation *op)
      : InferContext(op->getContext(), op->getLoc(),
                     op->getName().getStringRef(), op->getOperands(),
                     op->getAttrDictionary()) {}

  mlir::MLIRContext *getContext() const { return context; }
  mlir::ValueRange getOperands() const { return operands; }
  llvm::StringRef getOpName() const { return opName; }

  /// Emits `'<op>' op <args...>` at the location, when there is one, and
  /// returns failure.
  template <typename... Args>
  mlir::LogicalResult emitError(Args &&...args) const {
    return mlir::emitOptionalError(location, "'", opName, "' op ",
                                   std::forward<Args>(args)...);
  }

  /// The ranked tensor type of operand `index`; an error when the operand is
  /// missing or not a ranked tensor.
  mlir::FailureOr<mlir::RankedTensorType> tensor(unsigned index) const;
  /// Checks that there are exactly `count` operands (at least `count` when
  /// `atLeast`).
  mlir::LogicalResult expectOperands(unsigned count,
                                     bool atLeast = false) const;

  /// Attribute accessors: an error when the attribute is missing or of the
  /// wrong kind.
  mlir::FailureOr<int64_t> i64Attr(llvm::StringRef name) const;
  mlir::FailureOr<double> f32Attr(llvm::StringRef name) const;
  mlir::FailureOr<llvm::StringRef> strAttr(llvm::StringRef name) const;
  /// True when the attribute `name` is present.
  bool hasAttr(llvm::StringRef name) const {
    return attributes && attributes.get(name);
  }
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  i64ArrayAttr(llvm::StringRef name) const;
  mlir::FailureOr<llvm::SmallVector<double>>
  f32ArrayAttr(llvm::StringRef name) const;
  mlir::FailureOr<mlir::Type> typeAttr(llvm::StringRef name) const;
  mlir::FailureOr<mlir::ElementsAttr> elementsAttr(llvm::StringRef name) const;
  /// A string attribute whose value must be one of `allowed`.
  mlir::FailureOr<llvm::StringRef>
  enumAttr(llvm::StringRef name, llvm::ArrayRef<llvm::StringRef> allowed) const;

  /// The length of parameter operand `index` (a rank-0 tensor has length 1);
  /// kDynamic when not static. An error when the operand is not rank 0 or 1,
  /// or, with `requireStatic`, when its length is dynamic.
  mlir::FailureOr<int64_t> paramLength(unsigned index,
                                       bool requireStatic) const;
  /// The integer values of operand `index` when a constant produces it.
  std::optional<llvm::SmallVector<int64_t>> constInts(unsigned index) const;
  /// The floating-point values of operand `index` when a constant produces
  /// it (integer constants are converted).
  std::optional<llvm::SmallVector<double>> constFloats(unsigned index) const;

private:
  mlir::MLIRContext *context;
  std::optional<mlir::Location> location;
  llvm::StringRef opName;
  mlir::ValueRange operands;
  mlir::DictionaryAttr attributes;
};

/// Prints a shape as `2x?x3` (`scalar` for rank 0).
std::string formatShape(llvm::ArrayRef<int64_t> shape);
/// NumPy broadcast of two shapes with dynamic dims (dynamic against 1 stays
/// dynamic, dynamic against N is N); failure when two static dims differ and
/// neither is 1.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);
/// Checks `0 <= value < limit` (`<= limit` with `inclusive`) for the attribute
/// `name`, naming the operand type in the error.
mlir::LogicalResult checkAxis(const InferContext &ctx, llvm::StringRef name,
                              int64_t value, int64_t limit,
                              mlir::RankedTensorType type,
                              bool inclusive = false);
/// A result shape given by parameter operand `index` (i64[R], R static):
/// the values when constant (checked >= 0), else R dynamic dims.
mlir::FailureOr<llvm::SmallVector<int64_t>> shapeParam(const InferContext &ctx,
                                                       unsigned index);
/// Normalizes an ONNX axis from `[-rank, rank)` to `[0, rank)`; nullopt when
/// out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// Result types are compatible when their counts and element types agree and
/// their shapes agree wherever both dims are static.
bool areCompatibleResultTypes(mlir::TypeRange lhs, mlir::TypeRange rhs);

using Results = llvm::SmallVectorImpl<mlir::Type>;

/// Every inferred result of every op passes here (the ODS-generated
/// inferReturnTypes calls it after the op's inference function): each static
/// shape must have a rank of at most kMaxTensorRank and at most
/// kMaxTensorElements elements (runtime/include/kiln/runtime/SizeLimits.h),
/// so that no size computed later from it overflows. Passes `inferred`
/// through otherwise.
mlir::LogicalResult checkResultSizes(const InferContext &ctx,
                                     mlir::LogicalResult inferred,
                                     Results &results);

// Elementwise (ShapeInferenceElementwise.cpp).
mlir::LogicalResult broadcastBinary(const InferContext &ctx, Results &results);
mlir::LogicalResult broadcastCompare(const InferContext &ctx, Results &results);
mlir::LogicalResult sameAsFirst(const InferContext &ctx, Results &results);
mlir::LogicalResult sameAsFirstWithAxis(const InferContext &ctx,
                                        Results &results);
mlir::LogicalResult toBool(const InferContext &ctx, Results &results);
mlir::LogicalResult castTo(const InferContext &ctx, Results &results);
mlir::LogicalResult where(const InferContext &ctx, Results &results);
mlir::LogicalResult constant(const InferContext &ctx, Results &results);

// Linear algebra, convolution, normalization, reductions
// (ShapeInferenceNN.cpp).
mlir::LogicalResult matmul(const InferContext &ctx, Results &results);
/// kiln.attention: q [B, H, Tq, D], k, v -> [B, H, Tq, Dv], lse [B, H, Tq].
mlir::LogicalResult attention(const InferContext &ctx, Results &results);
/// kiln.attention_grad: q, k, v, grad, lse, delta -> dq, dk, dv.
mlir::LogicalResult attentionGrad(const InferContext &ctx, Results &results);
/// kiln.packed_attention: qkv [B, T, 3·H·D] with `heads` H -> [B, T, H, D],
/// lse [B, H, T].
mlir::LogicalResult packedAttention(const InferContext &ctx, Results &results);
/// kiln.packed_attention_grad: qkv, grad, lse, delta -> dqkv (qkv's type).
mlir::LogicalResult packedAttentionGrad(const InferContext &ctx,
                                        Results &results);
mlir::LogicalResult conv(const InferContext &ctx, Results &results);
mlir::LogicalResult depthwiseConv(const InferContext &ctx, Results &results);
mlir::LogicalResult convTranspose(const InferContext &ctx, Results &results);
mlir::LogicalResult pool(const InferContext &ctx, Results &results);
mlir::LogicalResult einsum(const InferContext &ctx, Results &results);
mlir::LogicalResult layerNorm(const InferContext &ctx, Results &results);
mlir::LogicalResult reduction(const InferContext &ctx, Results &results);
mlir::LogicalResult argReduction(const InferContext &ctx, Results &results);
mlir::LogicalResult scan(const InferContext &ctx, Results &results);
mlir::LogicalResult topk(const InferContext &ctx, Results &results);
mlir::LogicalResult lstm(const InferContext &ctx, Results &results);
mlir::LogicalResult gru(const InferContext &ctx, Results &results);
/// kiln.gru_recurrence: xw [T, B, D·3·H], r, rb, initial_h -> y [T, D, B, H],
/// y_h [D, B, H].
mlir::LogicalResult gruRecurrence(const InferContext &ctx, Results &results);
/// kiln.lstm_recurrence: xw [T, B, D·4·H], r, p, initial_h, initial_c ->
/// y [T, D, B, H], y_h and y_c [D, B, H].
mlir::LogicalResult lstmRecurrence(const InferContext &ctx, Results &results);
mlir::LogicalResult det(const InferContext &ctx, Results &results);

// Image, box and signal ops (ShapeInferenceImage.cpp).
/// kiln.grid_sample: x [N, C, D...], grid [N, O..., n] -> [N, C, O...].
mlir::LogicalResult gridSample(const InferContext &ctx, Results &results);
/// kiln.col2im: x [N, C * prod(block), L] -> [N, C, image_shape...].
mlir::LogicalResult col2im(const InferContext &ctx, Results &results);
/// kiln.non_max_suppression: boxes, scores, limits -> i64 [?, 3].
mlir::LogicalResult nonMaxSuppression(const InferContext &ctx,
                                      Results &results);
/// kiln.dft: x [..., 1 or 2] -> the spectrum along `axis`, [..., 2].
mlir::LogicalResult dft(const InferContext &ctx, Results &results);
/// kiln.roi_align: x [N, C, H, W], rois [R, 4], batch_indices [R]
/// -> [R, C, output_height, output_width].
mlir::LogicalResult roiAlign(const InferContext &ctx, Results &results);
/// kiln.deform_conv: x [N, C, H, W], w [M, C/group, kH, kW], offset, bias,
/// mask -> [N, M, oH, oW].
mlir::LogicalResult deformConv(const InferContext &ctx, Results &results);
/// kiln.stft: signal [B, L, 1 or 2], frame_step, window [F] -> [B, T, K, 2].
mlir::LogicalResult stft(const InferContext &ctx, Results &results);

// Random draws and unique (ShapeInferenceData.cpp).
/// kiln.unique: x -> values, first indices, inverse indices, counts.
mlir::LogicalResult unique(const InferContext &ctx, Results &results);
/// kiln.random_uniform / kiln.random_normal: shape i64[R] -> dtype [shape].
mlir::LogicalResult randomUniform(const InferContext &ctx, Results &results);
mlir::LogicalResult randomNormal(const InferContext &ctx, Results &results);
/// kiln.multinomial: x [B, C] -> dtype [B, sample_size].
mlir::LogicalResult multinomial(const InferContext &ctx, Results &results);
/// kiln.bitcast: x -> x's shape in dtype `to` (of the same width).
mlir::LogicalResult bitcast(const InferContext &ctx, Results &results);

// Shapes and data movement (ShapeInferenceData.cpp).
mlir::LogicalResult constantOfShape(const InferContext &ctx, Results &results);
mlir::LogicalResult range(const InferContext &ctx, Results &results);
mlir::LogicalResult reshape(const InferContext &ctx, Results &results);
mlir::LogicalResult flatten(const InferContext &ctx, Results &results);
mlir::LogicalResult squeeze(const InferContext &ctx, Results &results);
mlir::LogicalResult unsqueeze(const InferContext &ctx, Results &results);
mlir::LogicalResult transpose(const InferContext &ctx, Results &results);
mlir::LogicalResult concat(const InferContext &ctx, Results &results);
mlir::LogicalResult split(const InferContext &ctx, Results &results);
mlir::LogicalResult slice(const InferContext &ctx, Results &results);
mlir::LogicalResult expand(const InferContext &ctx, Results &results);
mlir::LogicalResult tile(const InferContext &ctx, Results &results);
mlir::LogicalResult pad(const InferContext &ctx, Results &results);
mlir::LogicalResult shapeOf(const InferContext &ctx, Results &results);
mlir::LogicalResult sizeOf(const InferContext &ctx, Results &results);
mlir::LogicalResult nonZero(const InferContext &ctx, Results &results);
mlir::LogicalResult gather(const InferContext &ctx, Results &results);
mlir::LogicalResult gatherElements(const InferContext &ctx, Results &results);
mlir::LogicalResult gatherND(const InferContext &ctx, Results &results);
mlir::LogicalResult oneHot(const InferContext &ctx, Results &results);
mlir::LogicalResult resize(const InferContext &ctx, Results &results);

} // namespace infer

/// Verifiers of attribute and operand consistency beyond what result-type
/// inference checks (inference runs as part of verification too).
namespace verifiers {
mlir::LogicalResult modAttrs(mlir::Operation *op);
mlir::LogicalResult bitShiftAttrs(mlir::Operation *op);
mlir::LogicalResult geluAttrs(mlir::Operation *op);
mlir::LogicalResult conv(mlir::Operation *op);
mlir::LogicalResult convTranspose(mlir::Operation *op);
mlir::LogicalResult batchNorm(mlir::Operation *op);
mlir::LogicalResult instanceNorm(mlir::Operation *op);
mlir::LogicalResult groupNorm(mlir::Operation *op);
mlir::LogicalResult recurrent(mlir::Operation *op);
mlir::LogicalResult constantOfShape(mlir::Operation *op);
mlir::LogicalResult pad(mlir::Operation *op);
mlir::LogicalResult trilu(mlir::Operation *op);
mlir::LogicalResult scatter(mlir::Operation *op);
mlir::LogicalResult resize(mlir::Operation *op);
} // namespace verifiers

} // namespace kiln

#endif // KILN_IR_SHAPEINFERENCE_H
