//===- KilnLibraryOps.td - Library calls (library_call) ------*- tablegen -*-===//
//
// This file declares `kiln.library_call`: one call of a vendor library
// (cuBLASLt, cuDNN, the runtime's BLAS-backed kernels) that a target's
// lowering pass (targets/<name>/Lower*LibraryCalls.cpp) chose, with
// everything the call computes besides the library's main operation (the
// transposes it reads through, its epilogue: bias, residual, activation)
// folded into it. The wrapper emitter prints what the op says and decides
// nothing.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIBRARY_OPS_TD
#define KILN_LIBRARY_OPS_TD

include "ir/KilnDialect.td"

def Kiln_LibraryCallOp : Op<Kiln_Dialect, "library_call", [Pure]> {
  let summary = "a call of a vendor library chosen by a target's lowering";
  let description = [{
    One step of a compiled graph that a library computes. `callee` names the
    library routine as `<library>.<routine>`: `cublaslt.matmul`,
    `cudnn.conv`, `cudnn.conv_bias_act` (CUDA), `onednn.matmul`,
    `onednn.conv` (CPU: oneDNN primitives made when the model loads),
    `onednn.max_pool`, `onednn.gru_recurrence`, `onednn.lstm_recurrence`
    (a GRU's or LSTM's steps on oneDNN matmuls),
    `runtime.matmul`, `runtime.conv`, `runtime.conv_transpose` (CPU: the
    runtime's OpenBLAS-backed kernels), `cpu.panel_matmul` (CPU: the
    runtime's own GEMM of at most 8 rows by a constant matrix packed at
    load). `roles` names each operand, in order
    (`a`, `b`, `bias`, `residual`, `x`, `w`; a recurrence's `xw`, `r`, `rb`
    or `p`, `h0`, `c0`, `lengths`): the callee reads its operands
    by role, so no operand is optional. `transpose_a` / `transpose_b`: the
    matmul reads that operand as the transpose of its last two dims (the
    kiln.transpose that produced it folded away). `epilogue` is what the call
    applies to its result before it stores it, act(result + bias +
    residual): `none`, or its parts joined by `_` in that order, `bias`,
    `residual`, then at most one activation, `relu`, `gelu_tanh` (GELU, tanh
    approximation), `gelu_erf` (GELU, exact), `sigmoid`, `tanh`,
    `hard_swish` or `relu6` (min(max(x, 0), 6)): e.g. `bias_relu`,
    `bias_residual`, `bias_gelu_erf`, `bias_residual_relu`; each target
    folds what its library computes. `workspace` is the
    scratch memory the call needs, in bytes (the memory planner reserves it
    in the arena). `params` are the attributes of the library's main
    operation (a convolution's strides, pads, dilations, group; a oneDNN
    call's `pack_b` / `pack_w`: that operand is constant and is reordered
    into the library's layout once, at load; an `onednn.conv`'s
    `algorithm`, `direct`, `winograd` or `panels`: the runtime's own
    convolution for few output pixels).

    Its location fuses the locations of every op folded into it, so the
    generated code names all their ONNX nodes.

    Example:

    ```mlir
    %y = kiln.library_call "cublaslt.matmul"(%x, %w, %b) {
        roles = ["a", "b", "bias"], transpose_b = true,
        epilogue = "bias_relu", workspace = 33554432 : i64,
        params = {}}
        : (tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<8x32xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, StrAttr:$callee,
                   StrArrayAttr:$roles,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$epilogue,
                   DefaultValuedAttr<I64Attr, "0">:$workspace,
                   DefaultValuedAttr<DictionaryAttr, "{}">:$params);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let assemblyFormat = [{
    $callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The operand that plays `role`, or null.
    ::mlir::Value getOperandByRole(::llvm::StringRef role);
    /// The library of the callee ("cublaslt" of "cublaslt.matmul").
    ::llvm::StringRef getLibrary() { return getCallee().split('.').first; }
    /// The routine of the callee ("matmul" of "cublaslt.matmul").
    ::llvm::StringRef getRoutine() { return getCallee().split('.').second; }
  }];
}

#endif // KILN_LIBRARY_OPS_TD
