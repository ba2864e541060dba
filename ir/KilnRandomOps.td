//===- KilnRandomOps.td - Seeded random number ops -----------*- tablegen -*-===//
//
// This file declares the kiln ops that draw random numbers: random_uniform,
// random_normal (ONNX RandomUniform, RandomNormal and their -Like forms;
// Bernoulli is traced as a uniform draw and a comparison) and multinomial
// (ONNX Multinomial). Each draw is a pure function of its `seed` attribute,
// its shape and the element's position (a counter-based generator), so the
// ops are Pure: folding, CSE and every run give the same values for the same
// seed. No code generator compiles them: they run as reference steps of a
// compiled graph (or fold to constants when their shape is static). See
// docs/op-semantics.md for the contract.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RANDOM_OPS_TD
#define KILN_RANDOM_OPS_TD

include "ir/KilnDialect.td"

def Kiln_RandomUniformOp : Kiln_Op<"random_uniform", "randomUniform"> {
  let summary = "uniform random numbers in [low, high) of a given shape";
  let description = [{
    A tensor of shape `shape` (i64[R]) and element type `dtype` (a float
    type) whose elements are drawn uniformly from `[low, high)`. Element
    `i` is a function of `seed` and `i` only (SplitMix64 of the seed and
    the position), so the values are the same on every run and path.

    Example:

    ```mlir
    %0 = kiln.random_uniform %shape {dtype = f32, high = 1.000000e+00 : f32, low = 0.000000e+00 : f32, seed = 0 : i64} : (tensor<2xi64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Kiln_I64Tensor:$shape, TypeAttr:$dtype, F32Attr:$low,
                   F32Attr:$high, I64Attr:$seed);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_RandomNormalOp : Kiln_Op<"random_normal", "randomNormal"> {
  let summary = "normally distributed random numbers of a given shape";
  let description = [{
    A tensor of shape `shape` (i64[R]) and element type `dtype` (a float
    type) drawn from the normal distribution of mean `mean` and standard
    deviation `scale` (Box-Muller of two uniform draws of the same
    counter-based generator as random_uniform).

    Example:

    ```mlir
    %0 = kiln.random_normal %shape {dtype = f32, mean = 0.000000e+00 : f32, scale = 1.000000e+00 : f32, seed = 0 : i64} : (tensor<2xi64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Kiln_I64Tensor:$shape, TypeAttr:$dtype, F32Attr:$mean,
                   F32Attr:$scale, I64Attr:$seed);
  let results = (outs Kiln_FloatTensor:$output);
}

def Kiln_MultinomialOp : Kiln_Op<"multinomial", "multinomial"> {
  let summary = "class indices sampled from unnormalized log-probabilities";
  let description = [{
    ONNX Multinomial: `x` is `B x C`, each row unnormalized
    log-probabilities of C classes; the result (`dtype` i32 or i64) is `B x
    sample_size`, each entry a class drawn from the row's distribution
    (inverse CDF of a uniform draw of the counter-based generator).

    Example:

    ```mlir
    %0 = kiln.multinomial %x {dtype = i32, sample_size = 10 : i64, seed = 0 : i64} : (tensor<3x5xf32>) -> tensor<3x10xi32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$x, TypeAttr:$dtype,
                   I64Attr:$sample_size, I64Attr:$seed);
  let results = (outs Kiln_IndexTensor:$output);
}

#endif // KILN_RANDOM_OPS_TD
