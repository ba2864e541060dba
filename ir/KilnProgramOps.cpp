//===- KilnProgramOps.cpp - kiln.if, kiln.loop, kiln.eager ----------------===//
//
// This file implements the verifiers of the program ops of
// KilnProgramOps.td: each region ends with a kiln.yield whose values agree
// with the op's results (up to dynamic dimensions for kiln.if and
// kiln.loop, whose branches and iterations may differ in size), the loop
// body's arguments follow ONNX Loop's layout, and an eager region's block
// arguments mirror its operands.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"

using namespace mlir;

namespace kiln {

namespace {

/// True when `actual` fits `declared`: same element type and rank, and equal
/// sizes wherever `declared` is static.
bool fitsType(Type actual, Type declared) {
  // An unranked declared type (a kiln.if result whose rank depends on the
  // branch) takes any tensor of its element type.
  if (auto any = dyn_cast<UnrankedTensorType>(declared))
    if (auto t = dyn_cast<TensorType>(actual))
      return t.getElementType() == any.getElementType();
  auto a = dyn_cast<RankedTensorType>(actual);
  auto d = dyn_cast<RankedTensorType>(declared);
  if (!a || !d || a.getElementType() != d.getElementType() ||
      a.getRank() != d.getRank())
    return false;
  for (int64_t i = 0; i < a.getRank(); ++i)
    if (!d.isDynamicDim(i) && a.getDimSize(i) != d.getDimSize(i))
      return false;
  return true;
}

/// The region's kiln.yield, or an error on `op`.
FailureOr<YieldOp> getYieldOf(Operation *op, Region &region,
                              StringRef which) {
  if (region.empty())
    return op->emitOpError() << which << " is empty";
  auto yield = dyn_cast<YieldOp>(region.front().getTerminator());
  if (!yield)
    return op->emitOpError() << which << " must end with kiln.yield";
  return yield;
}

/// Checks that yielded values fit the declared result types.
LogicalResult checkYielded(Operation *op, ValueRange yielded,
                           TypeRange declared, StringRef which) {
  if (yielded.size() != declared.size())
    return op->emitOpError() << which << " yields " << yielded.size()
                             << " values but " << declared.size()
                             << " are expected";
  for (auto [i, v, t] : llvm::enumerate(yielded, declared))
    if (!fitsType(v.getType(), t))
      return op->emitOpError()
             << which << " yields " << v.getType() << " as value #" << i
             << ", which does not fit " << t;
  return success();
}

bool isScalarOf(Type type, Type elementType) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getElementType() == elementType && t.getNumElements() == 1 &&
         t.hasStaticShape();
}

} // namespace

LogicalResult IfOp::verifyRegions() {
  for (auto [region, which] :
       {std::pair<Region *, StringRef>{&getThenRegion(), "the then branch"},
        {&getElseRegion(), "the else branch"}}) {
    FailureOr<YieldOp> yield = getYieldOf(*this, *region, which);
    if (failed(yield) ||
        failed(checkYielded(*this, yield->getValues(), getResultTypes(),
                            which)))
      return failure();
  }
  return success();
}

LogicalResult LoopOp::verifyRegions() {
  Block &body = getBody().front();
  unsigned numCarried = getNumCarried();
  Builder b(getContext());
  if (body.getNumArguments() != numCarried + 2)
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments but "
           << numCarried + 2
           << " are expected (iteration number, condition, carried values)";
  if (!isScalarOf(body.getArgument(0).getType(), b.getI64Type()) ||
      !isScalarOf(body.getArgument(1).getType(), b.getI1Type()))
    return emitOpError("body arguments #0 and #1 must be one i64 (the "
                       "iteration number) and one i1 (the condition)");
  for (unsigned i = 0; i < numCarried; ++i)
    if (!fitsType(getInitial()[i].getType(), body.getArgument(i + 2).getType()))
      return emitOpError("carried value #")
             << i << " is " << getInitial()[i].getType()
             << " but the body takes " << body.getArgument(i + 2).getType();
  if (getNumResults() < numCarried)
    return emitOpError("has fewer results than carried values");
  FailureOr<YieldOp> yield = getYieldOf(*this, getBody(), "the body");
  if (failed(yield))
    return failure();
  ValueRange values = yield->getValues();
  if (values.size() != getNumResults() + 1)
    return emitOpError("body yields ")
           << values.size() << " values but " << getNumResults() + 1
           << " are expected (condition, carried values, scan values)";
  if (!isScalarOf(values[0].getType(), b.getI1Type()))
    return emitOpError("body must yield one i1 condition first");
  for (unsigned i = 0; i < numCarried; ++i)
    if (!fitsType(values[i + 1].getType(), getResult(i).getType()))
      return emitOpError("body yields ")
             << values[i + 1].getType() << " as carried value #" << i
             << ", which does not fit the result " << getResult(i).getType();
  for (unsigned k = 0; k < getNumScanOutputs(); ++k) {
    auto elem = dyn_cast<RankedTensorType>(values[1 + numCarried + k].getType());
    auto out = cast<RankedTensorType>(getResult(numCarried + k).getType());
    if (!elem || out.getRank() != elem.getRank() + 1 ||
        out.getElementType() != elem.getElementType())
      return emitOpError("scan output #")
             << k << " is " << out << " but the body yields "
             << values[1 + numCarried + k].getType()
             << " (a scan output has one more dimension, the iterations)";
  }
  return success();
}

LogicalResult EagerOp::verify() {
  StringRef reason = getReason();
  if (reason != kDataDependentShape && reason != kDynamicShape &&
      reason != kUnsupportedOp)
    return emitOpError("reason must be \"data-dependent-shape\", "
                       "\"dynamic-shape\" or \"unsupported-op\", got \"")
           << reason << "\"";
  return success();
}

LogicalResult EagerOp::verifyRegions() {
  return verifyMirroredRegion(*this, getInputs(), getBody());
}

} // namespace kiln
