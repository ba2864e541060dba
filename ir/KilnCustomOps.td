//===- KilnCustomOps.td - Custom operators (custom_call) ------*- tablegen -*-===//
//
// This file declares `kiln.custom_call`: one node of an operator that a
// user's custom-op library (kiln/custom_op.h, docs/custom-ops.md) provides.
// The tracer types it with the library's shape function; the reference
// runtime and the compiled graphs run it with the library's CPU kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CUSTOM_OPS_TD
#define KILN_CUSTOM_OPS_TD

include "ir/KilnDialect.td"

def Kiln_CustomCallOp : Op<Kiln_Dialect, "custom_call", []> {
  let summary = "a custom operator computed by a user's library";
  let description = [{
    An ONNX node of (`domain`, `op_type`) that a custom-op library loaded
    with `--custom-ops libNAME.so` provides (kiln/custom_op.h). Its result
    types are what the library's shape function gave when the model was
    traced; `library` is the file it came from (the package copies it and
    the runtime loads it). The node's ONNX attributes are kept as
    attributes named `attr.<name>` (ints, floats, strings and their lists)
    and passed to the library by their ONNX names. No pass looks inside:
    the op is not fused, folded or differentiated, and it may have side
    effects. A compiled graph calls the library's CPU kernel as one of its
    steps (the runtime's reference kernel, which forwards to it), or on the
    CUDA target the library's CUDA kernel when it has one
    (`kiln.reference = "device"`): no graph break.

    Example:

    ```mlir
    %y = kiln.custom_call "com.example" "Swish" ins(%x : tensor<4xf32>) {library = "libmyops.so", "attr.beta" = 1.5 : f32} -> (tensor<4xf32>)
    ```
  }];
  let arguments = (ins StrAttr:$domain, StrAttr:$op_type, StrAttr:$library,
                       Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let assemblyFormat = [{
    $domain $op_type `ins` `(` $inputs `:` type($inputs) `)` attr-dict
    `->` `(` type($results) `)`
  }];
}

#endif // KILN_CUSTOM_OPS_TD
