//===- GradientRulesElementwise.cpp - Gradients of elementwise ops --------===//
//
// This file implements the gradient rules of the elementwise family: binary
// arithmetic with broadcasting (gradients summed back to each operand's
// shape), where, cast, the ops whose gradient is zero almost everywhere
// (floor, ceil, round, sign), and the unary ops and activations, each as
// the result gradient times the derivative written with kiln ops.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientRules.h"
#include "ir/KilnOps.h"

#include <cmath>

using namespace mlir;

namespace kiln::grad {

namespace {
double attrOf(GradientBuilder &gb, StringRef name) {
  auto attr = gb.forward()->getAttrOfType<FloatAttr>(name);
  return attr ? attr.getValueAsDouble() : 0.0;
}
} // namespace

KILN_GRADIENT_RULE(add) {
  for (unsigned i = 0; i < 2; ++i)
    if (gb.needs(i))
      out[i] = gb.toOperand(g[0], i);
  return gb.status();
}

KILN_GRADIENT_RULE(sub) {
  if (gb.needs(0))
    out[0] = gb.toOperand(g[0], 0);
  if (gb.needs(1))
    out[1] = gb.toOperand(gb.neg(g[0]), 1);
  return gb.status();
}

KILN_GRADIENT_RULE(mul) {
  if (gb.needs(0))
    out[0] = gb.toOperand(gb.mul(g[0], gb.operand(1)), 0);
  if (gb.needs(1))
    out[1] = gb.toOperand(gb.mul(g[0], gb.operand(0)), 1);
  return gb.status();
}

KILN_GRADIENT_RULE(div) {
  Value b = gb.operand(1);
  if (gb.needs(0))
    out[0] = gb.toOperand(gb.div(g[0], b), 0);
  if (gb.needs(1)) // d(a/b)/db = -(a/b)/b
    out[1] = gb.toOperand(gb.neg(gb.div(gb.mul(g[0], gb.result()), b)), 1);
  return gb.status();
}

KILN_GRADIENT_RULE(pow) {
  Value a = gb.operand(0), b = gb.operand(1);
  if (gb.needs(0)) { // b * a^(b-1)
    Value bm1 = gb.sub(b, gb.scalar(1.0, b));
    Value d = gb.mul(b, gb.create("kiln.pow", {a, bm1}));
    out[0] = gb.toOperand(gb.mul(g[0], d), 0);
  }
  if (gb.needs(1)) // a^b * log(a)
  {
    Value logA = gb.unary("kiln.log", a);
    out[1] = gb.toOperand(gb.mul(g[0], gb.mul(gb.result(), logA)), 1);
  }
  return gb.status();
}

KILN_GRADIENT_RULE(maxMin) {
  // The gradient goes to the operand that was chosen (the first on ties).
  StringRef cmp = isa<MaxOp>(gb.forward()) ? "kiln.greater_equal"
                                           : "kiln.less_equal";
  Value first = gb.compare(cmp, gb.operand(0), gb.operand(1));
  Value zero = gb.scalar(0.0, g[0]);
  if (gb.needs(0))
    out[0] = gb.toOperand(gb.select(first, g[0], zero), 0);
  if (gb.needs(1))
    out[1] = gb.toOperand(gb.select(first, zero, g[0]), 1);
  return gb.status();
}

KILN_GRADIENT_RULE(where) {
  Value cond = gb.operand(0), zero = gb.scalar(0.0, g[0]);
  if (gb.needs(1))
    out[1] = gb.toOperand(gb.select(cond, g[0], zero), 1);
  if (gb.needs(2))
    out[2] = gb.toOperand(gb.select(cond, zero, g[0]), 2);
  return gb.status();
}

KILN_GRADIENT_RULE(cast) {
  if (gb.needs(0))
    out[0] = gb.toOperand(g[0], 0);
  return gb.status();
}

KILN_GRADIENT_RULE(zero) {
  // floor, ceil, round, sign: piecewise constant, zero gradient (as in
  // PyTorch).
  if (gb.needs(0))
    out[0] = gb.zeros(GradientBuilder::typeOf(gb.operand(0)));
  return gb.status();
}

//===----------------------------------------------------------------------===//
// Unary ops: g times the derivative
//===----------------------------------------------------------------------===//

Value negGrad(GradientBuilder &gb, Value g, Value, Value) {
  return gb.neg(g);
}
Value absGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.mul(g, gb.unary("kiln.sign", x));
}
Value expGrad(GradientBuilder &gb, Value g, Value, Value y) {
  return gb.mul(g, y);
}
Value logGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.div(g, x);
}
Value sqrtGrad(GradientBuilder &gb, Value g, Value, Value y) {
  return gb.div(g, gb.mul(gb.scalar(2.0, y), y));
}
Value reciprocalGrad(GradientBuilder &gb, Value g, Value, Value y) {
  return gb.neg(gb.mul(g, gb.mul(y, y)));
}
Value sinGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.mul(g, gb.unary("kiln.cos", x));
}
Value cosGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.neg(gb.mul(g, gb.unary("kiln.sin", x)));
}
Value tanGrad(GradientBuilder &gb, Value g, Value, Value y) {
  Value yy = gb.mul(y, y);
  return gb.mul(g, gb.add(gb.scalar(1.0, y), yy));
}
namespace {
/// sqrt(a + sign * x * x).
Value sqrtOfSquare(GradientBuilder &gb, Value x, double a, double sign) {
  Value xx = gb.mul(x, x);
  Value inner = sign > 0 ? gb.add(gb.scalar(a, x), xx)
                         : gb.sub(gb.scalar(a, x), xx);
  return gb.unary("kiln.sqrt", inner);
}
} // namespace
Value asinGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.div(g, sqrtOfSquare(gb, x, 1.0, -1.0));
}
Value acosGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.neg(gb.div(g, sqrtOfSquare(gb, x, 1.0, -1.0)));
}
Value atanGrad(GradientBuilder &gb, Value g, Value x, Value) {
  Value xx = gb.mul(x, x);
  return gb.div(g, gb.add(gb.scalar(1.0, x), xx));
}
Value sinhGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.mul(g, gb.unary("kiln.cosh", x));
}
Value coshGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.mul(g, gb.unary("kiln.sinh", x));
}
Value asinhGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.div(g, sqrtOfSquare(gb, x, 1.0, 1.0));
}
Value acoshGrad(GradientBuilder &gb, Value g, Value x, Value) {
  Value xx = gb.mul(x, x);
  return gb.div(g, gb.unary("kiln.sqrt", gb.sub(xx, gb.scalar(1.0, x))));
}
Value atanhGrad(GradientBuilder &gb, Value g, Value x, Value) {
  Value xx = gb.mul(x, x);
  return gb.div(g, gb.sub(gb.scalar(1.0, x), xx));
}
Value erfGrad(GradientBuilder &gb, Value g, Value x, Value) {
  // 2/sqrt(pi) * exp(-x^2)
  Value e = gb.unary("kiln.exp", gb.neg(gb.mul(x, x)));
  return gb.mul(g, gb.mul(gb.scalar(2.0 / std::sqrt(M_PI), x), e));
}
Value tanhGrad(GradientBuilder &gb, Value g, Value, Value y) {
  Value yy = gb.mul(y, y);
  return gb.mul(g, gb.sub(gb.scalar(1.0, y), yy));
}
Value sigmoidGrad(GradientBuilder &gb, Value g, Value, Value y) {
  return gb.mul(g, gb.mul(y, gb.sub(gb.scalar(1.0, y), y)));
}
Value reluGrad(GradientBuilder &gb, Value g, Value x, Value) {
  Value positive = gb.compare("kiln.greater", x, gb.scalar(0.0, x));
  return gb.select(positive, g, gb.scalar(0.0, g));
}
Value leakyReluGrad(GradientBuilder &gb, Value g, Value x, Value) {
  Value positive = gb.compare("kiln.greater", x, gb.scalar(0.0, x));
  return gb.select(positive, g,
                   gb.mul(g, gb.scalar(attrOf(gb, "alpha"), g)));
}
Value eluGrad(GradientBuilder &gb, Value g, Value x, Value y) {
  // x <= 0: alpha * (exp(x) - 1), derivative y + alpha.
  Value positive = gb.compare("kiln.greater", x, gb.scalar(0.0, x));
  Value d = gb.add(y, gb.scalar(attrOf(gb, "alpha"), y));
  return gb.select(positive, g, gb.mul(g, d));
}
Value celuGrad(GradientBuilder &gb, Value g, Value x, Value) {
  // x <= 0: alpha * (exp(x / alpha) - 1), derivative exp(x / alpha).
  Value positive = gb.compare("kiln.greater", x, gb.scalar(0.0, x));
  Value d = gb.unary("kiln.exp",
                     gb.div(x, gb.scalar(attrOf(gb, "alpha"), x)));
  return gb.select(positive, g, gb.mul(g, d));
}
Value seluGrad(GradientBuilder &gb, Value g, Value x, Value) {
  // gamma * (x > 0 ? x : alpha * (exp(x) - 1))
  double alpha = attrOf(gb, "alpha"), gamma = attrOf(gb, "gamma");
  Value positive = gb.compare("kiln.greater", x, gb.scalar(0.0, x));
  Value ex = gb.unary("kiln.exp", x);
  Value negative = gb.mul(gb.scalar(alpha * gamma, x), ex);
  Value d = gb.select(positive, gb.scalar(gamma, x), negative);
  return gb.mul(g, d);
}
Value softplusGrad(GradientBuilder &gb, Value g, Value x, Value) {
  return gb.mul(g, gb.unary("kiln.sigmoid", x));
}
Value softsignGrad(GradientBuilder &gb, Value g, Value x, Value) {
  Value absX = gb.unary("kiln.abs", x);
  Value d = gb.add(gb.scalar(1.0, x), absX);
  return gb.div(g, gb.mul(d, d));
}
Value swishGrad(GradientBuilder &gb, Value g, Value x, Value) {
  // x * s(a x): s + a x s (1 - s)
  Value a = gb.scalar(attrOf(gb, "alpha"), x);
  Value ax = gb.mul(a, x);
  Value s = gb.unary("kiln.sigmoid", ax);
  Value d = gb.add(s, gb.mul(ax, gb.mul(s, gb.sub(gb.scalar(1.0, s), s))));
  return gb.mul(g, d);
}
Value mishGrad(GradientBuilder &gb, Value g, Value x, Value) {
  // x * tanh(softplus(x)): t + x (1 - t^2) sigmoid(x)
  Value t = gb.unary("kiln.tanh", gb.unary("kiln.softplus", x));
  Value tt = gb.mul(t, t);
  Value oneMinus = gb.sub(gb.scalar(1.0, t), tt);
  Value d = gb.add(t, gb.mul(x, gb.mul(oneMinus, gb.unary("kiln.sigmoid", x))));
  return gb.mul(g, d);
}
Value hardSigmoidGrad(GradientBuilder &gb, Value g, Value x, Value) {
  double alpha = attrOf(gb, "alpha"), beta = attrOf(gb, "beta");
  Value betaV = gb.scalar(beta, x);
  Value z = gb.add(gb.mul(gb.scalar(alpha, x), x), betaV);
  Value inside = gb.create(
      "kiln.and", {gb.compare("kiln.greater", z, gb.scalar(0.0, z)),
                   gb.compare("kiln.less", z, gb.scalar(1.0, z))});
  Value zero = gb.scalar(0.0, g);
  return gb.select(inside, gb.mul(g, gb.scalar(alpha, g)), zero);
}
Value hardSwishGrad(GradientBuilder &gb, Value g, Value x, Value) {
  // x * clip(x/6 + 1/2, 0, 1): 0 below -3, 1 above 3, x/3 + 1/2 between.
  Value halfV = gb.scalar(0.5, x);
  Value mid = gb.add(gb.div(x, gb.scalar(3.0, x)), halfV);
  Value below = gb.compare("kiln.less", x, gb.scalar(-3.0, x));
  Value above = gb.compare("kiln.greater", x, gb.scalar(3.0, x));
  Value inner = gb.select(above, gb.scalar(1.0, x), mid);
  Value d = gb.select(below, gb.scalar(0.0, x), inner);
  return gb.mul(g, d);
}
Value thresholdedReluGrad(GradientBuilder &gb, Value g, Value x, Value) {
  Value above =
      gb.compare("kiln.greater", x, gb.scalar(attrOf(gb, "alpha"), x));
  return gb.select(above, g, gb.scalar(0.0, g));
}
Value geluGrad(GradientBuilder &gb, Value g, Value x, Value) {
  auto approximate = gb.forward()->getAttrOfType<StringAttr>("approximate");
  if (approximate && approximate.getValue() == "tanh") {
    // u = c (x + k x^3), t = tanh(u):
    // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2)
    double c = std::sqrt(2.0 / M_PI), k = 0.044715;
    Value xx = gb.mul(x, x);
    Value xxx = gb.mul(xx, x);
    Value inner = gb.add(x, gb.mul(gb.scalar(k, x), xxx));
    Value u = gb.mul(gb.scalar(c, x), inner);
    Value t = gb.unary("kiln.tanh", u);
    Value half = gb.scalar(0.5, x), one = gb.scalar(1.0, x);
    Value left = gb.mul(half, gb.add(one, t));
    Value duRest = gb.add(one, gb.mul(gb.scalar(3.0 * k, x), xx));
    Value du = gb.mul(gb.scalar(c, x), duRest);
    Value rightRest = gb.mul(gb.sub(one, gb.mul(t, t)), du);
    Value right = gb.mul(gb.mul(half, x), rightRest);
    return gb.mul(g, gb.add(left, right));
  }
  // Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2.
  Value erfTerm = gb.unary("kiln.erf", gb.mul(x, gb.scalar(M_SQRT1_2, x)));
  Value onePlusErf = gb.add(gb.scalar(1.0, x), erfTerm);
  Value cdf = gb.mul(gb.scalar(0.5, x), onePlusErf);
  Value xx = gb.mul(x, x);
  Value exponent = gb.mul(gb.scalar(-0.5, x), xx);
  Value gauss = gb.unary("kiln.exp", exponent);
  Value pdf = gb.mul(gb.scalar(1.0 / std::sqrt(2.0 * M_PI), x), gauss);
  return gb.mul(g, gb.add(cdf, gb.mul(x, pdf)));
}

} // namespace kiln::grad
