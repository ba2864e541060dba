//===- ShapeInferenceRandom.cpp - Random draws' result types -------------===//
//
// This file implements result-type inference for the random generators:
// random_uniform and random_normal (a shape operand and a float dtype; the
// -Like forms are traced to them with the shape of their input), and
// multinomial ([batch, sample_size] class indices). Their seeds are
// attributes; the draws themselves are runtime/kernels/Random.cpp's.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeInference.h"

using namespace mlir;
using namespace kiln::infer;

/// A random draw's result: the shape operand's values and a float `dtype`.
static LogicalResult randomResult(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<Type> dtype = ctx.typeAttr("dtype");
  FailureOr<SmallVector<int64_t>> shape = shapeParam(ctx, 0);
  if (failed(dtype) || failed(shape) || failed(ctx.i64Attr("seed")))
    return failure();
  if (!isa<FloatType>(*dtype) || dtype->getIntOrFloatBitWidth() < 16 ||
      dtype->getIntOrFloatBitWidth() > 64)
    return ctx.emitError("attribute 'dtype' must be f16, bf16, f32 or f64, "
                         "got ",
                         *dtype);
  results.push_back(RankedTensorType::get(*shape, *dtype));
  return success();
}

LogicalResult kiln::infer::randomUniform(const InferContext &ctx,
                                         Results &results) {
  FailureOr<double> low = ctx.f32Attr("low"), high = ctx.f32Attr("high");
  if (failed(low) || failed(high))
    return failure();
  if (!(*low <= *high))
    return ctx.emitError("low (", *low, ") must not exceed high (", *high, ")");
  return randomResult(ctx, results);
}

LogicalResult kiln::infer::randomNormal(const InferContext &ctx,
                                        Results &results) {
  if (failed(ctx.f32Attr("mean")) || failed(ctx.f32Attr("scale")))
    return failure();
  return randomResult(ctx, results);
}

LogicalResult kiln::infer::multinomial(const InferContext &ctx,
                                       Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<Type> dtype = ctx.typeAttr("dtype");
  FailureOr<int64_t> samples = ctx.i64Attr("sample_size");
  if (failed(x) || failed(dtype) || failed(samples) ||
      failed(ctx.i64Attr("seed")))
    return failure();
  if (x->getRank() != 2)
    return ctx.emitError("operand must be [batch, classes], got ", *x);
  if (!dtype->isSignlessInteger(32) && !dtype->isSignlessInteger(64))
    return ctx.emitError("attribute 'dtype' must be i32 or i64, got ", *dtype);
  if (*samples < 1 || *samples > kiln::kMaxTensorElements)
    return ctx.emitError("sample_size must be positive, got ", *samples);
  results.push_back(
      RankedTensorType::get({x->getDimSize(0), *samples}, *dtype));
  return success();
}
