//===- GradientRules.h - The gradient rules of the kiln ops -----*- C++ -*-===//
//
// This file declares the gradient rules, one function per op (or per group
// of ops sharing one), implemented by family in GradientRulesElementwise.cpp,
// GradientRulesNN.cpp and GradientRulesData.cpp and attached to the ops by
// the one table in GradientRules.cpp. Internal to ir/.
//
// A rule gets the builder of the forward op, the gradients of its results
// (`g[i]` null: result i does not reach the loss; the autodiff pass calls a
// rule only when one is not null) and fills `out`, already sized to the
// op's operands and null, with the operands' gradients.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_GRADIENTRULES_H
#define KILN_IR_GRADIENTRULES_H

#include "ir/GradientBuilder.h"

namespace kiln::grad {

using Grads = llvm::ArrayRef<mlir::Value>;
using Out = llvm::SmallVectorImpl<mlir::Value>;

#define KILN_GRADIENT_RULE(name)                                               \
  mlir::LogicalResult name(GradientBuilder &gb, Grads g, Out &out)

// Elementwise (GradientRulesElementwise.cpp).
KILN_GRADIENT_RULE(add);
KILN_GRADIENT_RULE(sub);
KILN_GRADIENT_RULE(mul);
KILN_GRADIENT_RULE(div);
KILN_GRADIENT_RULE(pow);
KILN_GRADIENT_RULE(maxMin);
KILN_GRADIENT_RULE(where);
KILN_GRADIENT_RULE(cast);
KILN_GRADIENT_RULE(zero);

/// The gradient of a unary op from the result's gradient `g`, its operand
/// `x` and its result `y`.
using UnaryGradient = mlir::Value (*)(GradientBuilder &gb, mlir::Value g,
                                      mlir::Value x, mlir::Value y);
/// The rule of a unary elementwise op whose operand gradient is `F`.
template <UnaryGradient F>
KILN_GRADIENT_RULE(unary) {
  if (gb.needs(0))
    out[0] = gb.toOperand(F(gb, g[0], gb.operand(0), gb.result()), 0);
  return gb.status();
}

#define KILN_UNARY_GRADIENT(name)                                              \
  mlir::Value name(GradientBuilder &gb, mlir::Value g, mlir::Value x,          \
                   mlir::Value y)
KILN_UNARY_GRADIENT(negGrad);
KILN_UNARY_GRADIENT(absGrad);
KILN_UNARY_GRADIENT(expGrad);
KILN_UNARY_GRADIENT(logGrad);
KILN_UNARY_GRADIENT(sqrtGrad);
KILN_UNARY_GRADIENT(reciprocalGrad);
KILN_UNARY_GRADIENT(sinGrad);
KILN_UNARY_GRADIENT(cosGrad);
KILN_UNARY_GRADIENT(tanGrad);
KILN_UNARY_GRADIENT(asinGrad);
KILN_UNARY_GRADIENT(acosGrad);
KILN_UNARY_GRADIENT(atanGrad);
KILN_UNARY_GRADIENT(sinhGrad);
KILN_UNARY_GRADIENT(coshGrad);
KILN_UNARY_GRADIENT(asinhGrad);
KILN_UNARY_GRADIENT(acoshGrad);
KILN_UNARY_GRADIENT(atanhGrad);
KILN_UNARY_GRADIENT(erfGrad);
KILN_UNARY_GRADIENT(tanhGrad);
KILN_UNARY_GRADIENT(sigmoidGrad);
KILN_UNARY_GRADIENT(reluGrad);
KILN_UNARY_GRADIENT(leakyReluGrad);
KILN_UNARY_GRADIENT(eluGrad);
KILN_UNARY_GRADIENT(celuGrad);
KILN_UNARY_GRADIENT(seluGrad);
KILN_UNARY_GRADIENT(softplusGrad);
KILN_UNARY_GRADIENT(softsignGrad);
KILN_UNARY_GRADIENT(swishGrad);
KILN_UNARY_GRADIENT(mishGrad);
KILN_UNARY_GRADIENT(hardSigmoidGrad);
KILN_UNARY_GRADIENT(hardSwishGrad);
KILN_UNARY_GRADIENT(thresholdedReluGrad);
KILN_UNARY_GRADIENT(geluGrad);

// Linear algebra, normalization, reductions (GradientRulesNN.cpp).
KILN_GRADIENT_RULE(matmul);
KILN_GRADIENT_RULE(conv);
KILN_GRADIENT_RULE(convTranspose);
KILN_GRADIENT_RULE(softmax);
KILN_GRADIENT_RULE(attention);
KILN_GRADIENT_RULE(packedAttention);
KILN_GRADIENT_RULE(logSoftmax);
KILN_GRADIENT_RULE(layerNorm);
KILN_GRADIENT_RULE(rmsNorm);
KILN_GRADIENT_RULE(batchNorm);
KILN_GRADIENT_RULE(reduceSumMean);
KILN_GRADIENT_RULE(reduceMaxMin);

// Pooling (GradientRulesPool.cpp).
KILN_GRADIENT_RULE(avgPool);
KILN_GRADIENT_RULE(maxPool);

// Shapes and data movement (GradientRulesData.cpp).
KILN_GRADIENT_RULE(reshapeLike);
KILN_GRADIENT_RULE(transpose);
KILN_GRADIENT_RULE(expand);
KILN_GRADIENT_RULE(slice);
KILN_GRADIENT_RULE(concat);
KILN_GRADIENT_RULE(split);
KILN_GRADIENT_RULE(pad);
KILN_GRADIENT_RULE(tile);
KILN_GRADIENT_RULE(gather);
KILN_GRADIENT_RULE(gatherElements);

} // namespace kiln::grad

#endif // KILN_IR_GRADIENTRULES_H
