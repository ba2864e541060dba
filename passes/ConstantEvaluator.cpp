//===- ConstantEvaluator.cpp - Evaluate kiln ops on constants -------------===//
//
// This file implements the constant evaluator: operands are converted to
// runtime tensors (TensorConversion.h), the op runs through
// kiln::Dispatcher::global() under its name without the "kiln." prefix, and
// each output becomes a DenseElementsAttr that must match the op's declared
// result type exactly (dtype, rank and static dims), so replacing the op
// keeps every type, function signatures included.
//
//===----------------------------------------------------------------------===//

#include "passes/ConstantEvaluator.h"

#include "passes/PassDetail.h"
#include "passes/TensorConversion.h"

#include "ir/KilnOps.h"
#include "kiln/runtime/Dispatcher.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace kiln {

FailureOr<SmallVector<DenseElementsAttr>>
evaluateOnConstants(Operation *op, int64_t maxElements, bool refineTypes) {
  StringRef name = op->getName().getStringRef();
  if (!name.consume_front("kiln.") || isa<ConstantOp>(op) ||
      op->getNumRegions() != 0 || op->getNumOperands() == 0 ||
      op->getNumResults() == 0)
    return failure();
  for (Type t : op->getResultTypes()) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked || (!refineTypes && !ranked.hasStaticShape()) ||
        (ranked.hasStaticShape() && ranked.getNumElements() > maxElements))
      return failure();
  }
  std::vector<Tensor> inputs;
  for (Value v : op->getOperands()) {
    ElementsAttr attr = passes::getConstantValue(v);
    if (!attr)
      return failure();
    std::optional<Tensor> t = toTensor(attr);
    if (!t)
      return failure();
    inputs.push_back(std::move(*t));
  }
  std::vector<Tensor> outputs(op->getNumResults());
  Status st = Dispatcher::global().call(
      name.str(), inputs, toAttributes(op->getAttrDictionary()), outputs);
  if (!st)
    return failure();
  SmallVector<DenseElementsAttr> results;
  for (auto [type, out] : llvm::zip_equal(op->getResultTypes(), outputs)) {
    if (!out.defined() || out.numel() > maxElements)
      return failure();
    DenseElementsAttr attr = toElementsAttr(op->getContext(), out);
    if (!attr)
      return failure();
    // The value must have the declared type, or (when refining) a type that
    // only makes the declared dynamic dimensions static.
    auto declared = cast<RankedTensorType>(type);
    auto actual = cast<RankedTensorType>(attr.getType());
    bool compatible =
        declared.getElementType() == actual.getElementType() &&
        declared.getRank() == actual.getRank() &&
        llvm::all_of(llvm::seq<int64_t>(0, declared.getRank()), [&](int64_t d) {
          return declared.isDynamicDim(d) ||
                 declared.getDimSize(d) == actual.getDimSize(d);
        });
    if (!(refineTypes ? compatible : attr.getType() == type))
      return failure();
    results.push_back(attr);
  }
  return results;
}

unsigned foldConstantOps(Operation *root, int64_t maxElements) {
  // Program order: folding an op makes its users candidates.
  SmallVector<Operation *> candidates;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getName().getStringRef() == "kiln.fusion")
      return WalkResult::skip();
    if (op->getDialect() && op->getDialect()->getNamespace() == "kiln" &&
        !isa<ConstantOp>(op) && op->getNumRegions() == 0)
      candidates.push_back(op);
    return WalkResult::advance();
  });

  IRRewriter rewriter(root->getContext());
  llvm::SetVector<Operation *> maybeDead;
  unsigned folded = 0;
  for (Operation *op : candidates) {
    if (!llvm::all_of(op->getOperands(), passes::isKilnConstant))
      continue;
    FailureOr<SmallVector<DenseElementsAttr>> values =
        evaluateOnConstants(op, maxElements);
    if (failed(values))
      continue;
    rewriter.setInsertionPoint(op);
    SmallVector<Value> replacements;
    for (DenseElementsAttr v : *values)
      replacements.push_back(passes::buildConstant(rewriter, op->getLoc(), v));
    for (Value v : op->getOperands())
      maybeDead.insert(v.getDefiningOp());
    rewriter.replaceOp(op, replacements);
    ++folded;
  }
  // Erase the operands' constants nobody uses any more.
  for (Operation *c : maybeDead)
    if (c->use_empty())
      rewriter.eraseOp(c);
  return folded;
}

} // namespace kiln
