//===- PassDetail.cpp - Helpers Kiln's graph passes share -----------------===//
//
// This file implements the helpers of PassDetail.h: constant queries and op
// creation with inferred result types through a rewriter.
//
//===----------------------------------------------------------------------===//

#include "passes/PassDetail.h"

#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
namespace passes {

bool isKilnConstant(Value v) { return v && v.getDefiningOp<ConstantOp>(); }

bool isWeight(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return fn && fn.getArgAttr(arg.getArgNumber(), "kiln.weight");
  }
  Operation *def = v.getDefiningOp();
  return def && isa<ConstantOp>(def) && isa<func::FuncOp>(def->getParentOp());
}

ElementsAttr getConstantValue(Value v) {
  if (auto c = v ? v.getDefiningOp<ConstantOp>() : ConstantOp())
    return c.getValue();
  return {};
}

std::optional<double> getSplatValue(Value v) {
  auto dense = llvm::dyn_cast_or_null<DenseElementsAttr>(getConstantValue(v));
  if (!dense || !dense.isSplat())
    return std::nullopt;
  Type elem = dense.getElementType();
  if (llvm::isa<FloatType>(elem))
    return dense.getSplatValue<APFloat>().convertToDouble();
  if (auto intType = llvm::dyn_cast<IntegerType>(elem)) {
    if (intType.getWidth() == 1)
      return std::nullopt;
    APInt value = dense.getSplatValue<APInt>();
    return intType.isUnsigned() ? double(value.getZExtValue())
                                : double(value.getSExtValue());
  }
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> getConstantInts(Value v) {
  auto dense = llvm::dyn_cast_or_null<DenseIntElementsAttr>(
      llvm::dyn_cast_or_null<DenseElementsAttr>(getConstantValue(v)));
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &i : dense.getValues<APInt>())
    values.push_back(i.getSExtValue());
  return values;
}

LogicalResult BuildScope::fail(Operation *op, const llvm::Twine &why) {
  while (Operation *built = anchor_->getPrevNode()) {
    if (built == before_)
      break;
    rewriter_.eraseOp(built);
  }
  return rewriter_.notifyMatchFailure(op, why);
}

bool isInsideFusion(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->getName().getStringRef() == "kiln.fusion")
      return true;
  return false;
}

void applyPatternsOutsideFusions(Operation *root,
                                 const FrozenRewritePatternSet &patterns) {
  SmallVector<Operation *> ops;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getName().getStringRef() == "kiln.fusion") {
      ops.push_back(op);
      return WalkResult::skip();
    }
    if (op != root)
      ops.push_back(op);
    return WalkResult::advance();
  });
  GreedyRewriteConfig config;
  config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
  (void)applyOpPatternsAndFold(ops, patterns, config);
}

FailureOr<Operation *> buildKilnOp(RewriterBase &rewriter, Location loc,
                                   StringRef name, ValueRange operands,
                                   ArrayRef<NamedAttribute> attrs) {
  MLIRContext *context = rewriter.getContext();
  std::optional<RegisteredOperationName> opName =
      RegisteredOperationName::lookup(name, context);
  assert(opName && "kiln op is not registered");
  auto *inferType = opName->getInterface<InferTypeOpInterface>();
  assert(inferType && "kiln op does not infer its result types");
  DictionaryAttr dictionary = DictionaryAttr::get(context, attrs);
  SmallVector<Type> resultTypes;
  if (failed(inferType->inferReturnTypes(context, /*location=*/std::nullopt,
                                         operands, dictionary,
                                         /*properties=*/nullptr,
                                         /*regions=*/{}, resultTypes)))
    return failure();
  OperationState state(loc, *opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(resultTypes);
  Operation *op = rewriter.create(state);
  // Verifier diagnostics would be a bug in the caller; keep them quiet and
  // give up on the rewrite instead.
  ScopedDiagnosticHandler quiet(context,
                                [](Diagnostic &) { return success(); });
  if (failed(mlir::verify(op, /*verifyRecursively=*/false))) {
    rewriter.eraseOp(op);
    return failure();
  }
  return op;
}

Value buildKilnValue(RewriterBase &rewriter, Location loc, StringRef name,
                     ValueRange operands, ArrayRef<NamedAttribute> attrs) {
  FailureOr<Operation *> op = buildKilnOp(rewriter, loc, name, operands, attrs);
  if (failed(op) || (*op)->getNumResults() != 1)
    return Value();
  return (*op)->getResult(0);
}

Value buildConstant(RewriterBase &rewriter, Location loc, ElementsAttr value) {
  return rewriter.create<ConstantOp>(loc, value.getType(), value);
}

Value buildI64Vector(RewriterBase &rewriter, Location loc,
                     ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    rewriter.getI64Type());
  return buildConstant(rewriter, loc, DenseElementsAttr::get(type, values));
}

Value buildFloatScalar(RewriterBase &rewriter, Location loc, Type elementType,
                       double value) {
  auto floatType = llvm::cast<FloatType>(elementType);
  APFloat f(value);
  bool lost;
  f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  auto type = RankedTensorType::get({}, elementType);
  return buildConstant(rewriter, loc, DenseElementsAttr::get(type, f));
}

} // namespace passes
} // namespace kiln
