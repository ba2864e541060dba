//===- KilnGradientInterface.td - Gradient rules of kiln ops -*- tablegen -*-===//
//
// This file declares the op interface through which an op states its
// gradient rule: given the gradients of its results, it builds the ops that
// compute the gradients of its operands (reverse mode). The rules are
// attached to the ops in one table (ir/GradientRules.cpp) as external
// models and implemented per op family (ir/GradientRules*.cpp); the
// autodiff pass (passes/Autodiff.cpp) asks every op of a forward graph for
// this interface and reports an op without it as an error naming its node.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_GRADIENT_INTERFACE_TD
#define KILN_GRADIENT_INTERFACE_TD

include "mlir/IR/OpBase.td"

def Kiln_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::kiln";
  let description = [{
    The reverse-mode gradient rule of a kiln op. `buildGradients` receives a
    GradientBuilder (ir/GradientBuilder.h) whose insertion point is where
    the backward ops go and whose location is the forward op's, the
    gradients of the op's results (a null Value stands for a zero
    gradient: the result does not reach the loss) and fills `operandGrads`
    with one Value per operand: the gradient of the loss with respect to
    that operand, of the operand's type, or null where the operand is not
    differentiable (indices, masks, parameter operands) or not needed
    (GradientBuilder::needs). Failure means a diagnostic was emitted at the
    op.
  }];
  let methods = [
    InterfaceMethod<
      "Builds the gradients of the operands from those of the results.",
      "::mlir::LogicalResult", "buildGradients",
      (ins "::kiln::GradientBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // KILN_GRADIENT_INTERFACE_TD
