//===- GradientBuilder.h - Building the ops of gradient rules ---*- C++ -*-===//
//
// This file declares kiln::GradientBuilder, what a gradient rule
// (GradientOpInterface) builds its backward ops with: kiln ops created
// through createKilnOp (types inferred, verified) at the location of the
// forward op, and the helpers the rules share — scalar and index constants,
// undoing a broadcast (sumToShape), reshapes, transposes, comparisons.
// Shapes are static in training graphs; a helper that cannot build its op
// emits a diagnostic at the forward op, returns a null Value and makes
// every later call a no-op, so a rule only checks status() at its end.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_GRADIENTBUILDER_H
#define KILN_IR_GRADIENTBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kiln {

/// Builds the backward ops of one forward op.
class GradientBuilder {
public:
  /// Backward ops of `forward` are created by `builder` (its insertion
  /// point), at `forward`'s location; `needed[i]` says whether the
  /// gradient of operand i is wanted.
  GradientBuilder(mlir::OpBuilder &builder, mlir::Operation *forward,
                  llvm::ArrayRef<bool> needed);

  /// The forward op.
  mlir::Operation *forward() const { return forward_; }
  /// Operand `i` and result `i` of the forward op.
  mlir::Value operand(unsigned i) const { return forward_->getOperand(i); }
  mlir::Value result(unsigned i = 0) const { return forward_->getResult(i); }
  /// Whether the gradient of operand `i` is wanted.
  bool needs(unsigned i) const { return i < needed_.size() && needed_[i]; }
  /// Success unless a helper failed (its diagnostic was emitted).
  mlir::LogicalResult status() const { return mlir::failure(failed_); }
  /// Emits an error at the forward op ("no gradient for ...: why") and
  /// returns failure.
  mlir::LogicalResult unsupported(const llvm::Twine &why);

  /// Creates the kiln op `name` ("kiln.add") and returns its result
  /// `result`.
  mlir::Value create(llvm::StringRef name, mlir::ValueRange operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                     unsigned result = 0);
  /// The same, returning every result.
  llvm::SmallVector<mlir::Value>
  createMulti(llvm::StringRef name, mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attrs = {});

  // Elementwise arithmetic (NumPy broadcasting).
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value neg(mlir::Value a);
  mlir::Value unary(llvm::StringRef name, mlir::Value a);
  /// `where(cond, a, b)`.
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value b);
  /// A comparison ("kiln.greater", ...) of `a` with `b`.
  mlir::Value compare(llvm::StringRef name, mlir::Value a, mlir::Value b);

  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalar(double value, mlir::Value like);
  /// A rank-0 constant of element type `elementType`.
  mlir::Value scalar(double value, mlir::Type elementType);
  /// A 1-D i64 constant (a parameter operand).
  mlir::Value indices(llvm::ArrayRef<int64_t> values);
  /// Zeros of `type`.
  mlir::Value zeros(mlir::RankedTensorType type);
  /// `x` converted to element type `elementType` (no op when it has it).
  mlir::Value castTo(mlir::Value x, mlir::Type elementType);

  // Shapes.
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value expand(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  /// Sums `x` over `axes`.
  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                        bool keepdims);
  /// The reverse of broadcasting `type` to `x`'s shape: sums `x` over the
  /// dims broadcasting added or stretched, then reshapes it to `type`.
  mlir::Value sumToShape(mlir::Value x, mlir::RankedTensorType type);
  /// `x` of the forward op's operand `i` type (sumToShape, then the
  /// operand's element type).
  mlir::Value toOperand(mlir::Value x, unsigned i);

  /// The static values of a constant parameter operand (axes, shape,
  /// starts), or failure with a diagnostic.
  mlir::FailureOr<llvm::SmallVector<int64_t>> constantIndices(mlir::Value v);

  /// The type of `v` (a ranked tensor).
  static mlir::RankedTensorType typeOf(mlir::Value v);

private:
  mlir::OpBuilder &b_;
  mlir::Operation *forward_;
  llvm::SmallVector<bool> needed_;
  bool failed_ = false;
};

} // namespace kiln

#endif // KILN_IR_GRADIENTBUILDER_H
