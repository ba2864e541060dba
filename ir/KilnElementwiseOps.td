//===- KilnElementwiseOps.td - Elementwise kiln ops ----------*- tablegen -*-===//
//
// This file declares the elementwise ops of the kiln dialect: binary ops with
// broadcasting, comparisons, unary ops (activations included), `where` and
// `cast`. See docs/op-semantics.md for the contract.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ELEMENTWISE_OPS_TD
#define KILN_ELEMENTWISE_OPS_TD

include "ir/KilnDialect.td"

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

def Kiln_AddOp : Kiln_BinaryElementwiseOp<"add", Kiln_NumericTensor, "f32",
    "Computes `lhs + rhs`.">;
def Kiln_SubOp : Kiln_BinaryElementwiseOp<"sub", Kiln_NumericTensor, "f32",
    "Computes `lhs - rhs`.">;
def Kiln_MulOp : Kiln_BinaryElementwiseOp<"mul", Kiln_NumericTensor, "f32",
    "Computes `lhs * rhs`.">;
def Kiln_DivOp : Kiln_BinaryElementwiseOp<"div", Kiln_NumericTensor, "f32",
    "Computes `lhs / rhs`; integer division truncates toward zero.">;
def Kiln_PowOp : Kiln_BinaryElementwiseOp<"pow", Kiln_NumericTensor, "f32",
    "Computes `pow(lhs, rhs)`; the tracer casts the exponent to the base "
    "dtype.">;
def Kiln_MaxOp : Kiln_BinaryElementwiseOp<"max", Kiln_NumericTensor, "f32",
    "Computes the larger of `lhs` and `rhs`; NaN propagates.">;
def Kiln_MinOp : Kiln_BinaryElementwiseOp<"min", Kiln_NumericTensor, "f32",
    "Computes the smaller of `lhs` and `rhs`; NaN propagates.">;
def Kiln_ModOp : Kiln_BinaryElementwiseOp<"mod", Kiln_NumericTensor, "f32",
    "Computes the remainder. With `fmod = 0` the result has the sign of the "
    "divisor (Python `%`), with `fmod = 1` it is C `fmod`.",
    (ins I64Attr:$fmod), " {fmod = 1 : i64}", "modAttrs">;
def Kiln_BitwiseAndOp : Kiln_BinaryElementwiseOp<"bitwise_and",
    Kiln_IntTensor, "i64", "Computes the bitwise and of integers.">;
def Kiln_BitwiseOrOp : Kiln_BinaryElementwiseOp<"bitwise_or",
    Kiln_IntTensor, "i64", "Computes the bitwise or of integers.">;
def Kiln_BitwiseXorOp : Kiln_BinaryElementwiseOp<"bitwise_xor",
    Kiln_IntTensor, "i64", "Computes the bitwise exclusive or of integers.">;
def Kiln_BitShiftOp : Kiln_BinaryElementwiseOp<"bit_shift", Kiln_IntTensor,
    "i64", "Shifts `lhs` by `rhs` bits; `direction` is `\"left\"` or "
    "`\"right\"`.",
    (ins StrAttr:$direction), " {direction = \"left\"}", "bitShiftAttrs">;
def Kiln_AndOp : Kiln_BinaryElementwiseOp<"and", Kiln_BoolTensor, "i1",
    "Computes the logical and of bools.">;
def Kiln_OrOp : Kiln_BinaryElementwiseOp<"or", Kiln_BoolTensor, "i1",
    "Computes the logical or of bools.">;
def Kiln_XorOp : Kiln_BinaryElementwiseOp<"xor", Kiln_BoolTensor, "i1",
    "Computes the logical exclusive or of bools.">;

def Kiln_PReluOp : Kiln_Op<"prelu", "broadcastBinary", [Kiln_Elementwise]> {
  let summary = "parametric ReLU with broadcasting";
  let description = [{
    Computes `x < 0 ? slope * x : x`; `slope` broadcasts against `x`.

    Example:

    ```mlir
    %0 = kiln.prelu %x, %slope : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, Kiln_FloatTensor:$slope);
  let results = (outs Kiln_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

def Kiln_EqualOp : Kiln_ComparisonOp<"equal", "Computes `lhs == rhs`.">;
def Kiln_LessOp : Kiln_ComparisonOp<"less", "Computes `lhs < rhs`.">;
def Kiln_LessEqualOp : Kiln_ComparisonOp<"less_equal",
    "Computes `lhs <= rhs`.">;
def Kiln_GreaterOp : Kiln_ComparisonOp<"greater", "Computes `lhs > rhs`.">;
def Kiln_GreaterEqualOp : Kiln_ComparisonOp<"greater_equal",
    "Computes `lhs >= rhs`.">;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

def Kiln_NegOp : Kiln_UnaryElementwiseOp<"neg", Kiln_NumericTensor, "f32",
    "Computes `-x`.">;
def Kiln_AbsOp : Kiln_UnaryElementwiseOp<"abs", Kiln_NumericTensor, "f32",
    "Computes `|x|`.">;
def Kiln_SignOp : Kiln_UnaryElementwiseOp<"sign", Kiln_NumericTensor, "f32",
    "Computes -1, 0 or 1 by the sign of `x`.">;
def Kiln_ExpOp : Kiln_TranscendentalOp<"exp", Kiln_FloatTensor, "f32",
    "Computes `exp(x)`.">;
def Kiln_LogOp : Kiln_TranscendentalOp<"log", Kiln_FloatTensor, "f32",
    "Computes the natural logarithm of `x`.">;
def Kiln_SqrtOp : Kiln_UnaryElementwiseOp<"sqrt", Kiln_FloatTensor, "f32",
    "Computes the square root of `x`.">;
def Kiln_ReciprocalOp : Kiln_UnaryElementwiseOp<"reciprocal",
    Kiln_FloatTensor, "f32", "Computes `1 / x`.">;
def Kiln_FloorOp : Kiln_UnaryElementwiseOp<"floor", Kiln_FloatTensor, "f32",
    "Rounds `x` toward negative infinity.">;
def Kiln_CeilOp : Kiln_UnaryElementwiseOp<"ceil", Kiln_FloatTensor, "f32",
    "Rounds `x` toward positive infinity.">;
def Kiln_RoundOp : Kiln_UnaryElementwiseOp<"round", Kiln_FloatTensor, "f32",
    "Rounds `x` to the nearest integer, half to even.">;
def Kiln_SinOp : Kiln_TranscendentalOp<"sin", Kiln_FloatTensor, "f32",
    "Computes `sin(x)`.">;
def Kiln_CosOp : Kiln_TranscendentalOp<"cos", Kiln_FloatTensor, "f32",
    "Computes `cos(x)`.">;
def Kiln_TanOp : Kiln_TranscendentalOp<"tan", Kiln_FloatTensor, "f32",
    "Computes `tan(x)`.">;
def Kiln_AsinOp : Kiln_TranscendentalOp<"asin", Kiln_FloatTensor, "f32",
    "Computes `asin(x)`.">;
def Kiln_AcosOp : Kiln_TranscendentalOp<"acos", Kiln_FloatTensor, "f32",
    "Computes `acos(x)`.">;
def Kiln_AtanOp : Kiln_TranscendentalOp<"atan", Kiln_FloatTensor, "f32",
    "Computes `atan(x)`.">;
def Kiln_SinhOp : Kiln_TranscendentalOp<"sinh", Kiln_FloatTensor, "f32",
    "Computes `sinh(x)`.">;
def Kiln_CoshOp : Kiln_TranscendentalOp<"cosh", Kiln_FloatTensor, "f32",
    "Computes `cosh(x)`.">;
def Kiln_AsinhOp : Kiln_TranscendentalOp<"asinh", Kiln_FloatTensor, "f32",
    "Computes `asinh(x)`.">;
def Kiln_AcoshOp : Kiln_TranscendentalOp<"acosh", Kiln_FloatTensor, "f32",
    "Computes `acosh(x)`.">;
def Kiln_AtanhOp : Kiln_TranscendentalOp<"atanh", Kiln_FloatTensor, "f32",
    "Computes `atanh(x)`.">;
def Kiln_ErfOp : Kiln_TranscendentalOp<"erf", Kiln_FloatTensor, "f32",
    "Computes the error function of `x`.">;
def Kiln_NotOp : Kiln_UnaryElementwiseOp<"not", Kiln_BoolTensor, "i1",
    "Computes the logical negation of a bool.">;
def Kiln_BitwiseNotOp : Kiln_UnaryElementwiseOp<"bitwise_not",
    Kiln_IntTensor, "i64", "Computes the bitwise complement of an integer.">;
def Kiln_ReluOp : Kiln_UnaryElementwiseOp<"relu", Kiln_NumericTensor, "f32",
    "Computes `max(x, 0)`.">;
def Kiln_SigmoidOp : Kiln_TranscendentalOp<"sigmoid", Kiln_FloatTensor,
    "f32", "Computes `1 / (1 + exp(-x))`.">;
def Kiln_TanhOp : Kiln_TranscendentalOp<"tanh", Kiln_FloatTensor, "f32",
    "Computes `tanh(x)`.">;
def Kiln_SoftplusOp : Kiln_TranscendentalOp<"softplus", Kiln_FloatTensor,
    "f32", "Computes `log(1 + exp(x))`.">;
def Kiln_SoftsignOp : Kiln_UnaryElementwiseOp<"softsign", Kiln_FloatTensor,
    "f32", "Computes `x / (1 + |x|)`.">;
def Kiln_MishOp : Kiln_TranscendentalOp<"mish", Kiln_FloatTensor, "f32",
    "Computes `x * tanh(softplus(x))`.">;
def Kiln_HardSwishOp : Kiln_UnaryElementwiseOp<"hard_swish",
    Kiln_FloatTensor, "f32",
    "Computes `x * max(0, min(1, x / 6 + 1 / 2))`.">;
def Kiln_LeakyReluOp : Kiln_UnaryElementwiseOp<"leaky_relu",
    Kiln_FloatTensor, "f32", "Computes `x < 0 ? alpha * x : x`.",
    (ins F32Attr:$alpha), " {alpha = 0.00999999977 : f32}">;
def Kiln_EluOp : Kiln_TranscendentalOp<"elu", Kiln_FloatTensor, "f32",
    "Computes `x < 0 ? alpha * (exp(x) - 1) : x`.",
    (ins F32Attr:$alpha), " {alpha = 1.000000e+00 : f32}">;
def Kiln_CeluOp : Kiln_TranscendentalOp<"celu", Kiln_FloatTensor, "f32",
    "Computes `max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`.",
    (ins F32Attr:$alpha), " {alpha = 1.000000e+00 : f32}">;
def Kiln_SeluOp : Kiln_TranscendentalOp<"selu", Kiln_FloatTensor, "f32",
    "Computes `gamma * (x <= 0 ? alpha * (exp(x) - 1) : x)`.",
    (ins F32Attr:$alpha, F32Attr:$gamma),
    " {alpha = 1.67326319 : f32, gamma = 1.05070102 : f32}">;
def Kiln_HardSigmoidOp : Kiln_UnaryElementwiseOp<"hard_sigmoid",
    Kiln_FloatTensor, "f32", "Computes `max(0, min(1, alpha * x + beta))`.",
    (ins F32Attr:$alpha, F32Attr:$beta),
    " {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32}">;
def Kiln_ThresholdedReluOp : Kiln_UnaryElementwiseOp<"thresholded_relu",
    Kiln_FloatTensor, "f32", "Computes `x > alpha ? x : 0`.",
    (ins F32Attr:$alpha), " {alpha = 1.000000e+00 : f32}">;
def Kiln_ShrinkOp : Kiln_UnaryElementwiseOp<"shrink", Kiln_NumericTensor,
    "f32", "Computes `x < -lambd ? x + bias : (x > lambd ? x - bias : 0)` "
    "(ONNX Shrink).",
    (ins F32Attr:$bias, F32Attr:$lambd),
    " {bias = 0.000000e+00 : f32, lambd = 5.000000e-01 : f32}">;
def Kiln_GeluOp : Kiln_TranscendentalOp<"gelu", Kiln_FloatTensor, "f32",
    "Computes GELU: `approximate = \"none\"` is the erf form, `\"tanh\"` the "
    "tanh approximation.",
    (ins StrAttr:$approximate), " {approximate = \"none\"}", "geluAttrs">;
def Kiln_SwishOp : Kiln_TranscendentalOp<"swish", Kiln_FloatTensor, "f32",
    "Computes `x * sigmoid(alpha * x)`.",
    (ins F32Attr:$alpha), " {alpha = 1.000000e+00 : f32}">;

def Kiln_IsNaNOp : Kiln_Op<"is_nan", "toBool", [Kiln_Elementwise]> {
  let summary = "elementwise test for NaN";
  let description = [{
    Returns true where `x` is NaN.

    Example:

    ```mlir
    %0 = kiln.is_nan %x : (tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x);
  let results = (outs Kiln_BoolTensor:$output);
}

def Kiln_IsInfOp : Kiln_Op<"is_inf", "toBool", [Kiln_Elementwise]> {
  let summary = "elementwise test for infinity";
  let description = [{
    Returns true where `x` is +inf (if `detect_positive = 1`) or -inf (if
    `detect_negative = 1`).

    Example:

    ```mlir
    %0 = kiln.is_inf %x {detect_negative = 1 : i64, detect_positive = 1 : i64} : (tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, I64Attr:$detect_positive,
                   I64Attr:$detect_negative);
  let results = (outs Kiln_BoolTensor:$output);
}

def Kiln_CastOp : Kiln_Op<"cast", "castTo", [Kiln_Elementwise]> {
  let summary = "converts elements to another dtype";
  let description = [{
    Converts every element to the dtype `to`. Float to integer truncates
    toward zero; anything to bool is `x != 0`; float to f16/bf16 rounds to
    nearest even; NaN to integer is unspecified.

    Example:

    ```mlir
    %0 = kiln.cast %x {to = i64} : (tensor<4xf32>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$x, TypeAttr:$to);
  let results = (outs Kiln_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

def Kiln_WhereOp : Kiln_Op<"where", "where", [Kiln_Elementwise]> {
  let summary = "elementwise selection with broadcasting";
  let description = [{
    Computes `cond ? x : y`. The three operands broadcast together; `x` and
    `y` have the same dtype, which is the result's.

    Example:

    ```mlir
    %0 = kiln.where %c, %x, %y : (tensor<2x3xi1>, tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$cond, Kiln_Tensor:$x, Kiln_Tensor:$y);
  let results = (outs Kiln_Tensor:$output);
}

#endif // KILN_ELEMENTWISE_OPS_TD
