//===- KilnFusionOps.td - Fusion regions (fusion, yield) -*- tablegen -*-===//
//
// This file declares the op that holds one generated kernel: `kiln.fusion`,
// a region of ordinary kiln ops that the fusion pass (passes/FuseOps.cpp)
// groups, and its terminator `kiln.yield`. The code generator lowers each
// region to one kernel. Unlike the other kiln ops, these do not infer their
// result types: a region's results are whatever its yield returns.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUSION_OPS_TD
#define KILN_FUSION_OPS_TD

include "ir/KilnDialect.td"

def Kiln_FusionOp : Op<Kiln_Dialect, "fusion", [
    IsolatedFromAbove, RecursiveMemoryEffects,
    RecursivelySpeculatable]> {
  let summary = "a group of kiln ops that becomes one kernel";
  let description = [{
    A fusion region is one generated kernel. Its operands are the kernel's
    inputs; the region has one block whose arguments mirror the operands
    1:1 (same types), and it ends with `kiln.yield`, whose operands are the
    op's results (the kernel's outputs). The region is isolated from above:
    every value it reads is an operand or is computed inside.

    `name` is the stable kernel name, `k<N>_<op>` numbered in program order
    (the C++ function the code generator emits). `kind` is `"pointwise"`
    (elementwise ops and views over one iteration domain) or `"reduction"`
    (a reduction with its pointwise prologue and epilogue; every reduction
    of the region reduces the same axes of operands of the same shape).

    Allowed inside: the elementwise ops (binary, comparisons, unary
    including `cast` and the activations, `where`); `reduce_sum`,
    `reduce_mean`, `reduce_max`, `reduce_min` and `reduce_prod` whose axes
    come from a `kiln.constant` inside the region; the views `reshape`,
    `transpose`, `expand`, `squeeze`, `unsqueeze`, `flatten` and `slice`
    whose parameter operands come from `kiln.constant`s inside the region
    (they become index arithmetic, never copies); and `kiln.constant` when it
    is a splat or rank-0 value (an immediate) or a parameter (axes, shape,
    starts, ...). Other constants are operands. The inner ops keep their
    locations, which name the ONNX nodes.

    Example:

    ```mlir
    %r:2 = kiln.fusion "k0_softmax" ins(%a : tensor<8x16xf32>) kind("reduction") {
    ^bb0(%x: tensor<8x16xf32>):
      %axes = kiln.constant dense<-1> : tensor<1xi64>
      %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
      %d = kiln.sub %x, %m : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
      %e = kiln.exp %d : (tensor<8x16xf32>) -> tensor<8x16xf32>
      %s = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
      %y = kiln.div %e, %s : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
      kiln.yield %y, %m : tensor<8x16xf32>, tensor<8x1xf32>
    } -> (tensor<8x16xf32>, tensor<8x1xf32>)
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, StrAttr:$name,
                   StrAttr:$kind);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    $name (`ins` `(` $inputs^ `:` type($inputs) `)`)? `kind` `(` $kind `)`
    attr-dict-with-keyword $region `->` `(` type($results) `)`
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The one block of the region (its arguments mirror the operands).
    ::mlir::Block &getBody() { return getRegion().front(); }
    /// The terminator of the region.
    YieldOp getYield();

    /// The values of `kind`.
    static constexpr ::llvm::StringLiteral kPointwise = "pointwise";
    static constexpr ::llvm::StringLiteral kReduction = "reduction";
    bool isReduction() { return getKind() == kReduction; }

    /// Ops with the trait Kiln_Elementwise (binary, comparisons, unary,
    /// cast, where).
    static bool isElementwiseOp(::mlir::Operation *op);
    /// Ops with the trait Kiln_Reduction (reduce_sum, reduce_mean, ...).
    static bool isReductionOp(::mlir::Operation *op);
    /// Ops with the trait Kiln_View (reshape, transpose, expand, squeeze,
    /// unsqueeze, flatten, slice).
    static bool isViewOp(::mlir::Operation *op);
    /// True when operand `index` of `op` is a parameter (axes, shape,
    /// starts, ...) rather than data: every operand but the first of a
    /// reduction or a view.
    static bool isParameterOperand(::mlir::Operation *op, unsigned index);
    /// True when `op` (a kiln.constant) may sit inside a region: a splat or
    /// rank-0 value, or a value used only as parameter operands.
    static bool isInlinableConstant(::mlir::Operation *op);
    /// True when `op` may appear inside a fusion region (structure only:
    /// elementwise, reduction, view or inlinable constant). Parameter
    /// operands must in addition come from kiln.constant inside the region.
    static bool isAllowedInside(::mlir::Operation *op);
  }];
}

def Kiln_YieldOp : Op<Kiln_Dialect, "yield", [
    Pure, Terminator,
    ParentOneOf<["FusionOp", "EagerOp", "IfOp", "LoopOp"]>]> {
  let summary = "returns the results of a region";
  let description = [{
    Terminates the block of a `kiln.fusion`, `kiln.eager`, `kiln.if` or
    `kiln.loop`; its operands become the op's results (for `kiln.loop`: the
    next condition, carried values and scan values of an iteration).

    Example:

    ```mlir
    kiln.yield %y, %m : tensor<8x16xf32>, tensor<8x1xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // KILN_FUSION_OPS_TD
