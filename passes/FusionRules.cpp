//===- FusionRules.cpp - Which ops and groups may form a kernel -----------===//
//
// This file implements the predicates of kernel fusion declared in
// FusionRules.h: op admission (static shapes, constant parameters),
// reduction domains, and the group rules a region must satisfy (one
// reduction domain; values that fit it; results of one shape).
//
//===----------------------------------------------------------------------===//

#include "passes/FusionRules.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln {

namespace {

/// The static shape of `value`, or nullopt.
std::optional<ArrayRef<int64_t>> staticShape(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getShape();
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

bool fail(std::string *why, const llvm::Twine &message) {
  if (why)
    *why = message.str();
  return false;
}

} // namespace

SmallVector<int64_t> ReductionDomain::reducedShape(bool keepdims) const {
  SmallVector<int64_t> result;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    bool reduced = llvm::is_contained(axes, static_cast<int64_t>(dim));
    if (!reduced)
      result.push_back(size);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

bool ReductionDomain::fits(ArrayRef<int64_t> other) const {
  if (canReturn(other))
    return true;
  // Broadcasts against the full shape without growing it (right-aligned).
  if (other.size() > shape.size())
    return false;
  size_t offset = shape.size() - other.size();
  for (auto [i, size] : llvm::enumerate(other))
    if (size != 1 && size != shape[offset + i])
      return false;
  return true;
}

bool ReductionDomain::canReturn(ArrayRef<int64_t> other) const {
  return other == ArrayRef<int64_t>(shape) ||
         other == ArrayRef<int64_t>(reducedShape(true)) ||
         other == ArrayRef<int64_t>(reducedShape(false));
}

std::optional<ReductionDomain> getReductionDomain(Operation *op) {
  if (!FusionOp::isReductionOp(op) || op->getNumOperands() != 2)
    return std::nullopt;
  std::optional<ArrayRef<int64_t>> shape = staticShape(op->getOperand(0));
  auto axesOp = op->getOperand(1).getDefiningOp<ConstantOp>();
  if (!shape || !axesOp)
    return std::nullopt;
  auto axesAttr = llvm::dyn_cast<DenseIntElementsAttr>(axesOp.getValue());
  if (!axesAttr)
    return std::nullopt;
  auto noop = op->getAttrOfType<IntegerAttr>("noop_with_empty_axes");
  auto rank = static_cast<int64_t>(shape->size());
  ReductionDomain domain;
  domain.shape.assign(shape->begin(), shape->end());
  for (const APInt &axis : axesAttr.getValues<APInt>()) {
    int64_t value = axis.getSExtValue();
    if (value < 0)
      value += rank;
    if (value < 0 || value >= rank)
      return std::nullopt;
    domain.axes.push_back(value);
  }
  if (domain.axes.empty()) {
    if (noop && noop.getInt() != 0)
      return std::nullopt; // The identity, not a reduction.
    for (int64_t i = 0; i < rank; ++i)
      domain.axes.push_back(i);
  }
  llvm::sort(domain.axes);
  domain.axes.erase(std::unique(domain.axes.begin(), domain.axes.end()),
                    domain.axes.end());
  return domain;
}

bool canEnterRegion(Operation *op) {
  if (isa<ConstantOp>(op))
    return FusionOp::isInlinableConstant(op);
  if (!FusionOp::isAllowedInside(op))
    return false;
  for (Value value : op->getOperands())
    if (!staticShape(value))
      return false;
  for (Value value : op->getResults())
    if (!staticShape(value))
      return false;
  for (OpOperand &operand : op->getOpOperands())
    if (FusionOp::isParameterOperand(op, operand.getOperandNumber()) &&
        !operand.get().getDefiningOp<ConstantOp>())
      return false;
  if (FusionOp::isReductionOp(op))
    return getReductionDomain(op).has_value();
  return true;
}

bool isLibraryOp(Operation *op) {
  return op->hasTrait<kiln::OpTrait::Library>();
}

bool canFormRegion(ArrayRef<Operation *> ops, ArrayRef<Value> results,
                   std::string *why) {
  std::optional<ReductionDomain> domain;
  for (Operation *op : ops) {
    if (!FusionOp::isReductionOp(op))
      continue;
    std::optional<ReductionDomain> own = getReductionDomain(op);
    if (!own)
      return fail(why, "'" + op->getName().getStringRef() +
                           "' has no static reduction domain");
    if (domain && *domain != *own)
      return fail(why, "two reduction domains: " + shapeString(domain->shape) +
                           " over axes " + shapeString(domain->axes) + " and " +
                           shapeString(own->shape) + " over axes " +
                           shapeString(own->axes));
    domain = std::move(own);
  }

  if (domain) {
    for (Operation *op : ops)
      for (Value value : op->getResults())
        if (!domain->fits(*staticShape(value)))
          return fail(why, "'" + op->getName().getStringRef() + "' produces " +
                               shapeString(*staticShape(value)) +
                               ", which does not fit the reduction domain " +
                               shapeString(domain->shape));
    for (Value result : results)
      if (!domain->canReturn(*staticShape(result)))
        return fail(why, "result of shape " +
                             shapeString(*staticShape(result)) +
                             " is neither the full nor the reduced shape");
    return true;
  }

  for (Value result : results)
    if (*staticShape(result) != *staticShape(results.front()))
      return fail(why, "results of a pointwise region have different shapes " +
                           shapeString(*staticShape(results.front())) +
                           " and " + shapeString(*staticShape(result)));
  return true;
}

std::optional<ReductionDomain> getReductionDomain(FusionOp op) {
  for (Operation &inner : op.getBody().without_terminator())
    if (FusionOp::isReductionOp(&inner))
      return getReductionDomain(&inner);
  return std::nullopt;
}

LogicalResult verifyFusionRules(FusionOp op, std::string *why) {
  SmallVector<Operation *> ops;
  bool hasReduction = false;
  for (Operation &inner : op.getBody().without_terminator()) {
    if (!canEnterRegion(&inner)) {
      fail(why, "'" + inner.getName().getStringRef() +
                    "' may not enter a fusion region");
      return failure();
    }
    if (isa<ConstantOp>(inner))
      continue;
    hasReduction |= FusionOp::isReductionOp(&inner);
    ops.push_back(&inner);
  }
  if (hasReduction != op.isReduction()) {
    fail(why, "kind \"" + op.getKind() + "\" does not match the contents");
    return failure();
  }
  SmallVector<Value> results(op.getYield().getValues());
  return success(canFormRegion(ops, results, why));
}

} // namespace kiln
