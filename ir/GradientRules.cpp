//===- GradientRules.cpp - The table of gradient rules --------------------===//
//
// This file implements registerGradientRules: the one table that says which
// kiln op has which gradient rule (ir/GradientRules.h), attached to the op
// as an external model of GradientOpInterface. An op missing from the table
// has no gradient; the autodiff pass reports it naming the model node. Ops
// whose results are not floating point (comparisons, shapes, indices) need
// no rule: no gradient flows through them.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientInterface.h"
#include "ir/GradientRules.h"
#include "ir/KilnOps.h"

using namespace mlir;

namespace kiln {

namespace {

using RuleFunction = LogicalResult (*)(GradientBuilder &, grad::Grads,
                                       grad::Out &);

/// GradientOpInterface for `OpT` through the rule `F`.
template <typename OpT, RuleFunction F>
struct Rule : GradientOpInterface::ExternalModel<Rule<OpT, F>, OpT> {
  LogicalResult buildGradients(Operation *, GradientBuilder &builder,
                               ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    return F(builder, resultGrads, operandGrads);
  }
};

template <typename OpT, RuleFunction F> void attach(MLIRContext *context) {
  OpT::template attachInterface<Rule<OpT, F>>(*context);
}

template <grad::UnaryGradient F> constexpr RuleFunction unary() {
  return &grad::unary<F>;
}

LogicalResult triluGrad(GradientBuilder &gb, grad::Grads g, grad::Out &out) {
  // The same triangle of the gradient.
  out[0] = gb.create("kiln.trilu", {g[0], gb.operand(1)},
                     gb.forward()->getAttrDictionary().getValue());
  return gb.status();
}

} // namespace

void registerGradientRules(MLIRContext *context) {
  using namespace grad;
  // Binary arithmetic, selection, casts.
  attach<AddOp, add>(context);
  attach<SubOp, sub>(context);
  attach<MulOp, mul>(context);
  attach<DivOp, div>(context);
  attach<PowOp, pow>(context);
  attach<MaxOp, maxMin>(context);
  attach<MinOp, maxMin>(context);
  attach<WhereOp, where>(context);
  attach<CastOp, cast>(context);
  attach<FloorOp, zero>(context);
  attach<CeilOp, zero>(context);
  attach<RoundOp, zero>(context);
  attach<SignOp, zero>(context);
  // Unary ops and activations.
  attach<NegOp, unary<negGrad>()>(context);
  attach<AbsOp, unary<absGrad>()>(context);
  attach<ExpOp, unary<expGrad>()>(context);
  attach<LogOp, unary<logGrad>()>(context);
  attach<SqrtOp, unary<sqrtGrad>()>(context);
  attach<ReciprocalOp, unary<reciprocalGrad>()>(context);
  attach<SinOp, unary<sinGrad>()>(context);
  attach<CosOp, unary<cosGrad>()>(context);
  attach<TanOp, unary<tanGrad>()>(context);
  attach<AsinOp, unary<asinGrad>()>(context);
  attach<AcosOp, unary<acosGrad>()>(context);
  attach<AtanOp, unary<atanGrad>()>(context);
  attach<SinhOp, unary<sinhGrad>()>(context);
  attach<CoshOp, unary<coshGrad>()>(context);
  attach<AsinhOp, unary<asinhGrad>()>(context);
  attach<AcoshOp, unary<acoshGrad>()>(context);
  attach<AtanhOp, unary<atanhGrad>()>(context);
  attach<ErfOp, unary<erfGrad>()>(context);
  attach<TanhOp, unary<tanhGrad>()>(context);
  attach<SigmoidOp, unary<sigmoidGrad>()>(context);
  attach<ReluOp, unary<reluGrad>()>(context);
  attach<LeakyReluOp, unary<leakyReluGrad>()>(context);
  attach<EluOp, unary<eluGrad>()>(context);
  attach<CeluOp, unary<celuGrad>()>(context);
  attach<SeluOp, unary<seluGrad>()>(context);
  attach<SoftplusOp, unary<softplusGrad>()>(context);
  attach<SoftsignOp, unary<softsignGrad>()>(context);
  attach<SwishOp, unary<swishGrad>()>(context);
  attach<MishOp, unary<mishGrad>()>(context);
  attach<HardSigmoidOp, unary<hardSigmoidGrad>()>(context);
  attach<HardSwishOp, unary<hardSwishGrad>()>(context);
  attach<ThresholdedReluOp, unary<thresholdedReluGrad>()>(context);
  attach<GeluOp, unary<geluGrad>()>(context);
  // Linear algebra, convolution, normalization.
  attach<MatMulOp, matmul>(context);
  attach<ConvOp, conv>(context);
  attach<ConvTransposeOp, convTranspose>(context);
  attach<AvgPoolOp, avgPool>(context);
  attach<MaxPoolOp, maxPool>(context);
  attach<SoftmaxOp, softmax>(context);
  attach<AttentionOp, attention>(context);
  attach<PackedAttentionOp, packedAttention>(context);
  attach<LogSoftmaxOp, logSoftmax>(context);
  attach<LayerNormOp, layerNorm>(context);
  attach<RMSNormOp, rmsNorm>(context);
  attach<BatchNormOp, batchNorm>(context);
  // Reductions.
  attach<ReduceSumOp, reduceSumMean>(context);
  attach<ReduceMeanOp, reduceSumMean>(context);
  attach<ReduceMaxOp, reduceMaxMin>(context);
  attach<ReduceMinOp, reduceMaxMin>(context);
  // Views and data movement.
  attach<ReshapeOp, reshapeLike>(context);
  attach<FlattenOp, reshapeLike>(context);
  attach<SqueezeOp, reshapeLike>(context);
  attach<UnsqueezeOp, reshapeLike>(context);
  attach<TransposeOp, transpose>(context);
  attach<ExpandOp, expand>(context);
  attach<SliceOp, slice>(context);
  attach<ConcatOp, concat>(context);
  attach<SplitOp, split>(context);
  attach<PadOp, pad>(context);
  attach<TileOp, tile>(context);
  attach<TriluOp, triluGrad>(context);
  attach<GatherOp, gather>(context);
  attach<GatherElementsOp, gatherElements>(context);
}

} // namespace kiln
