//===- KilnProgramOps.td - Programs: if, loop, eager -------*- tablegen -*-===//
//
// This file declares the ops of a traced program that are not tensor
// computations: `kiln.if` and `kiln.loop` (control flow whose condition or
// trip count is only known at run time) and `kiln.eager` (ops that run on the
// reference runtime because no code generator of the target compiles them: a
// graph break). Compiled graphs between them are `func.func`s tagged
// `kiln.graph`, called with `func.call` (see compiler/GraphBreaks.cpp and
// docs/graph-breaks.md). The trait `EagerOnly` marks kiln ops that only the
// reference runtime implements.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PROGRAM_OPS_TD
#define KILN_PROGRAM_OPS_TD

include "ir/KilnDialect.td"

/// A kiln op that no code generator supports yet: it always runs on the
/// reference runtime, as a graph break (reason "unsupported-op").
def Kiln_EagerOnly : NativeOpTrait<"EagerOnly"> {
  let cppNamespace = "::kiln::OpTrait";
}

def Kiln_IfOp : Op<Kiln_Dialect, "if", [
    RecursiveMemoryEffects, NoRegionArguments]> {
  let summary = "runs one of two regions, chosen by a boolean at run time";
  let description = [{
    ONNX `If` whose condition is not known when the model is traced (an If
    whose condition folds is inlined by the tracer instead). `cond` holds
    one boolean (any rank, one element). Each region has one block without
    arguments that ends with `kiln.yield` of values compatible with the
    results (a dimension on which the branches disagree is dynamic in the
    result; a result on whose rank they disagree is unranked,
    `tensor<*xf32>`, and gets its rank when the branch runs). The regions
    may use values defined above them. Both branches are compiled; the
    runtime runs the one `cond` selects.

    Example:

    ```mlir
    %r = kiln.if %c : tensor<i1> -> (tensor<4xf32>) {
      %a = kiln.relu %x : (tensor<4xf32>) -> tensor<4xf32>
      kiln.yield %a : tensor<4xf32>
    } else {
      %b = kiln.neg %x : (tensor<4xf32>) -> tensor<4xf32>
      kiln.yield %b : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$cond);
  let results = (outs Variadic<Kiln_AnyRankTensor>:$results);
  let regions = (region SizedRegion<1>:$thenRegion,
                        SizedRegion<1>:$elseRegion);
  let assemblyFormat = [{
    $cond `:` type($cond) `->` `(` type($results) `)` attr-dict-with-keyword
    $thenRegion `else` $elseRegion
  }];
  let hasRegionVerifier = 1;
}

def Kiln_LoopOp : Op<Kiln_Dialect, "loop", [RecursiveMemoryEffects]> {
  let summary = "ONNX Loop: a body run while a counter and a condition allow";
  let description = [{
    ONNX `Loop` whose trip count or condition is only known at run time (a
    loop with a trace-time trip count is unrolled by the tracer up to a
    limit). `max_trip_count` is one i64 (INT64_MAX when the model gives
    none), `cond` one boolean (true when the model gives none), `initial` the
    N loop-carried values. The body's block arguments are the iteration
    number (i64, rank 0), the condition (i1, rank 0) and the N carried
    values; its `kiln.yield` returns the next condition, the N next carried
    values and K scan values. The results are the N final carried values,
    then the K scan outputs: the scan values of every iteration stacked
    along a new first dimension. The body may use values defined above it.

    Example:

    ```mlir
    %sum, %all = kiln.loop %n, %true, %zero : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
      %next = kiln.add %acc, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      kiln.yield %c, %next, %next : tensor<i1>, tensor<2xf32>, tensor<2xf32>
    }
    ```
  }];
  let arguments = (ins Kiln_I64Tensor:$maxTripCount, Kiln_BoolTensor:$cond,
                   Variadic<Kiln_Tensor>:$initial);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $maxTripCount `,` $cond (`,` $initial^)? `:`
    functional-type(operands, results) attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of loop-carried values (N).
    unsigned getNumCarried() { return getInitial().size(); }
    /// The number of scan outputs (K).
    unsigned getNumScanOutputs() {
      return getNumResults() - getNumCarried();
    }
  }];
}

def Kiln_EagerOp : Op<Kiln_Dialect, "eager", [
    IsolatedFromAbove, RecursiveMemoryEffects]> {
  let summary = "ops that run on the reference runtime: a graph break";
  let description = [{
    A graph break: the ops of the region run on the reference runtime (on
    the CPU) between two compiled graphs, because no code generator of the
    target compiles them. `reason` is one of `"data-dependent-shape"` (an
    output's size depends on tensor values), `"dynamic-shape"` (an operand's
    size is only known at run time) and `"unsupported-op"` (no code
    generator supports the op); `detail` says which output, operand or op,
    and `hint` what a user can do to remove the break. Like `kiln.fusion`,
    the region is isolated from above: its block arguments mirror the
    operands and `kiln.yield` returns the results. The inner ops keep their
    locations, which name the ONNX nodes.

    Example:

    ```mlir
    %nz = kiln.eager "data-dependent-shape" ins(%m : tensor<4xi1>) {
    ^bb0(%a: tensor<4xi1>):
      %i = kiln.non_zero %a : (tensor<4xi1>) -> tensor<1x?xi64>
      kiln.yield %i : tensor<1x?xi64>
    } {detail = "output #0 is i64[1, ?]", hint = "..."} -> (tensor<1x?xi64>)
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, StrAttr:$reason,
                   StrAttr:$detail, StrAttr:$hint);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    $reason (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    attr-dict-with-keyword $region `->` `(` type($results) `)`
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The one block of the region (its arguments mirror the operands).
    ::mlir::Block &getBody() { return getRegion().front(); }

    /// The values of `reason`.
    static constexpr ::llvm::StringLiteral kDataDependentShape =
        "data-dependent-shape";
    static constexpr ::llvm::StringLiteral kDynamicShape = "dynamic-shape";
    static constexpr ::llvm::StringLiteral kUnsupportedOp = "unsupported-op";
  }];
}

#endif // KILN_PROGRAM_OPS_TD
