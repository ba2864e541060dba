//===- KilnFusionOps.cpp - Fusion regions (kiln.fusion, kiln.yield) -------===//
//
// This file implements kiln.fusion: the classification of the kiln ops that
// may sit inside a region (the op families elementwise, reduction and view,
// which are ODS traits, and inlinable constants) and the verifier, which checks
// the structure the code generator relies on: block arguments mirror the
// operands, the yield matches the results, only allowed ops are inside,
// parameter operands come from constants inside the region, and `kind` agrees
// with the contents. The ODS-generated definitions live in KilnOps.cpp with the
// other ops.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"

using namespace mlir;

namespace kiln {

YieldOp FusionOp::getYield() {
  return llvm::cast<YieldOp>(getBody().getTerminator());
}

bool FusionOp::isElementwiseOp(Operation *op) {
  return op->hasTrait<kiln::OpTrait::Elementwise>();
}

bool FusionOp::isReductionOp(Operation *op) {
  return op->hasTrait<kiln::OpTrait::Reduction>();
}

bool FusionOp::isViewOp(Operation *op) {
  return op->hasTrait<kiln::OpTrait::View>();
}

bool FusionOp::isParameterOperand(Operation *op, unsigned index) {
  return index > 0 && (isReductionOp(op) || isViewOp(op));
}

bool FusionOp::isInlinableConstant(Operation *op) {
  auto constant = dyn_cast<ConstantOp>(op);
  if (!constant)
    return false;
  ElementsAttr value = constant.getValue();
  if (value.isSplat() || value.getShapedType().getRank() == 0)
    return true;
  return llvm::all_of(constant->getUses(), [](OpOperand &use) {
    return isParameterOperand(use.getOwner(), use.getOperandNumber());
  });
}

bool FusionOp::isAllowedInside(Operation *op) {
  return isElementwiseOp(op) || isReductionOp(op) || isViewOp(op) ||
         isInlinableConstant(op);
}

LogicalResult FusionOp::verify() {
  if (getKind() != kPointwise && getKind() != kReduction)
    return emitOpError("kind must be \"pointwise\" or \"reduction\", got \"")
           << getKind() << "\"";
  if (getName().empty())
    return emitOpError("needs a non-empty kernel name");
  return success();
}

LogicalResult verifyMirroredRegion(Operation *op, ValueRange inputs,
                                   Block &block) {
  if (block.getNumArguments() != inputs.size())
    return op->emitOpError("has ")
           << inputs.size() << " operands but its block has "
           << block.getNumArguments() << " arguments";
  for (auto [index, input, arg] : llvm::enumerate(inputs, block.getArguments()))
    if (input.getType() != arg.getType())
      return op->emitOpError("operand #")
             << index << " has type " << input.getType()
             << " but block argument #" << index << " has type "
             << arg.getType();
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError("region must end with kiln.yield");
  if (yield.getValues().getTypes() != op->getResultTypes())
    return op->emitOpError("yields (")
           << yield.getValues().getTypes() << ") but its results are ("
           << op->getResultTypes() << ")";
  return success();
}

LogicalResult FusionOp::verifyRegions() {
  Block &block = getBody();
  if (failed(verifyMirroredRegion(*this, getInputs(), block)))
    return failure();

  bool hasReduction = false;
  for (Operation &op : block.without_terminator()) {
    if (!isAllowedInside(&op))
      return op.emitOpError("is not allowed inside a kiln.fusion region "
                            "(only elementwise ops, reductions, views and "
                            "splat or parameter constants are)");
    hasReduction |= isReductionOp(&op);
    for (OpOperand &operand : op.getOpOperands()) {
      if (!isParameterOperand(&op, operand.getOperandNumber()))
        continue;
      Operation *def = operand.get().getDefiningOp();
      if (!def || !isa<ConstantOp>(def))
        return op.emitOpError("parameter operand #")
               << operand.getOperandNumber()
               << " must be a kiln.constant inside the kiln.fusion region";
    }
  }
  if (getKind() == kPointwise && hasReduction)
    return emitOpError("of kind \"pointwise\" contains a reduction");
  if (getKind() == kReduction && !hasReduction)
    return emitOpError("of kind \"reduction\" contains no reduction");
  return success();
}

} // namespace kiln
