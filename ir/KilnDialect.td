//===- KilnDialect.td - The kiln dialect, its types and op classes -------===//
//
// This file defines the `kiln` dialect, the tensor type constraints its ops
// use, the op-family traits (elementwise, reduction, view, library) that
// passes and code generators query instead of keeping lists of ops, and the
// TableGen classes that share structure between ops (binary and unary
// elementwise ops, comparisons, reductions). Every op is declared once, in
// KilnOps.td and the files it includes, following docs/op-semantics.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// The dialect
//===----------------------------------------------------------------------===//

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Tensor-level ops of the Kiln deep-learning compiler.";
  let description = [{
    The `kiln` dialect holds the tensor-level ops a traced model is made of.
    Values are ranked tensors of f32, f16, bf16, f64, i64, i32, i8, ui8 or i1
    (bool). Every op has a fixed operand list, attributes of fixed MLIR kinds,
    result-type inference (parameter operands produced by constants give
    static dimensions, others give dynamic ones while the rank stays static)
    and a verifier. `docs/op-semantics.md` is the contract these ops follow;
    the tracer, the passes and the runtime rely on it.

    Attributes live in each op's attribute dictionary (not in properties), so
    ops created generically and ops read back through `getAttrs()` see the
    same attributes.

    A traced graph is a `func.func` tagged `kiln.graph`; its arguments and
    results carry `kiln.name` (the model's tensor names) and weights carry
    `kiln.weight`. Locations name the model node:
    `loc(fused<"Add">["add_0"("model.onnx":1:0)])`.

    Op families are traits on the ops (C++ classes in `ir/KilnOps.h`); the
    passes and the code generators ask `op->hasTrait<...>()` and keep no
    lists of ops:

    * `Kiln_Elementwise`: one scalar function per element position after
      NumPy broadcasting (binary ops, comparisons, unary ops and
      activations, `cast`, `where`). These ops fuse into `kiln.fusion`
      regions, where each becomes one scalar op of the kernel IR printed by
      the shared expression printer (`codegen/ExprPrinter.cpp`), and
      `kiln-layout-cleanup` moves transposes through them.
    * `Kiln_Reduction`: `reduce_*` over the axes given by a parameter
      operand; they fuse with their elementwise prologue and epilogue into
      one reduction kernel.
    * `Kiln_View`: reshape, flatten, squeeze, unsqueeze, transpose, expand
      and slice: inside a fusion region they become index arithmetic and
      never copy.
    * `Kiln_Library`: ops computed by a library call (matmul, conv,
      conv_transpose: cuBLASLt / cuDNN on the GPU, the runtime's
      OpenBLAS-backed kernels on the CPU), never inside a fusion region.
    * `Kiln_Transcendental` (alongside `Kiln_Elementwise`): exp, log,
      erf, trigonometric functions and the activations built on them
      (sigmoid, tanh, gelu, ...): tens of instructions per element, which
      the fusion pass weighs before it computes one again for every
      element of a broadcast (kiln-fuse's
      isolate-broadcast-transcendentals).

    Operands of reductions and views other than the first are parameter
    operands (axes, shapes, starts): inside a fusion region they are
    `kiln.constant`s. `Kiln_EagerOnly` (KilnProgramOps.td) marks ops that
    only the reference runtime implements.

    This reference is generated from the ODS table (`ir/*.td`) by
    `scripts/gen-ir-doc.sh`; the lit test `ir/ir-doc.test` fails when it is
    stale.
  }];
  let usePropertiesForAttributes = 0;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// Every element type; float8 and the 4- and 2-bit integers are storage
/// types, which only the ops on Kiln_Tensor (data movement, cast,
/// comparisons) take.
def Kiln_Tensor : RankedTensorOf<[F32, F16, BF16, F64, I64, I32, I16, I8, UI8,
                                  UI16, UI32, UI64, I1, F8E4M3FN, F8E4M3FNUZ,
                                  F8E5M2, F8E5M2FNUZ, I<4>, UI<4>, I<2>,
                                  UI<2>]>;
def Kiln_NumericTensor : RankedTensorOf<[F32, F16, BF16, F64, I64, I32, I16,
                                         I8, UI8, UI16, UI32, UI64]>;
def Kiln_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
def Kiln_IntTensor : RankedTensorOf<[I64, I32, I16, I8, UI8, UI16, UI32,
                                     UI64]>;
def Kiln_BoolTensor : RankedTensorOf<[I1]>;
/// A tensor whose rank may be known only at run time (`tensor<*xf32>`): the
/// results of a kiln.if whose branches disagree on a rank, nothing else.
def Kiln_AnyRankTensor : TensorOf<[F32, F16, BF16, F64, I64, I32, I16, I8,
                                   UI8, UI16, UI32, UI64, I1, F8E4M3FN,
                                   F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, I<4>, UI<4>,
                                   I<2>, UI<2>]>;
/// A parameter operand: shapes, axes, starts, pads, k ... (1-D or rank-0).
def Kiln_I64Tensor : RankedTensorOf<[I64]>;
def Kiln_I32Tensor : RankedTensorOf<[I32]>;
def Kiln_IndexTensor : RankedTensorOf<[I32, I64]>;
def Kiln_F32Tensor : RankedTensorOf<[F32]>;

//===----------------------------------------------------------------------===//
// Op families (C++: kiln::OpTrait::*, ir/KilnOps.h)
//===----------------------------------------------------------------------===//

/// Elementwise: one scalar function per element position after NumPy
/// broadcasting. Fusable; each op needs a reference kernel, a scalar printer
/// entry (codegen/ExprPrinter.cpp, printScalarOp) and a row in
/// docs/op-semantics.md (test/unit/compiler/OpCompletenessTest.cpp checks).
def Kiln_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::kiln::OpTrait";
}

/// Reduction: reduces operand 0 over the axes of parameter operand 1
/// (`keepdims`, `noop_with_empty_axes`). Fusable with its elementwise
/// prologue and epilogue.
def Kiln_Reduction : NativeOpTrait<"Reduction"> {
  let cppNamespace = "::kiln::OpTrait";
}

/// View: the result is operand 0 read at other indices (operands after the
/// first are parameters); inside a fusion region it is index arithmetic.
def Kiln_View : NativeOpTrait<"View"> {
  let cppNamespace = "::kiln::OpTrait";
}

/// Library: computed by a library call (GEMM, convolution), outside fusion
/// regions; its elementwise epilogue may fold into the call.
def Kiln_Library : NativeOpTrait<"Library"> {
  let cppNamespace = "::kiln::OpTrait";
}

/// Transcendental: an elementwise op computed with exp, log, erf or a
/// trigonometric function per element (tens of instructions, not one). A
/// fused kernel that reads such a value through a broadcast would compute
/// it again for every element it broadcasts to; the fusion pass may keep it
/// apart (kiln-fuse's isolate-broadcast-transcendentals).
def Kiln_Transcendental : NativeOpTrait<"Transcendental"> {
  let cppNamespace = "::kiln::OpTrait";
}

//===----------------------------------------------------------------------===//
// Base op classes
//===----------------------------------------------------------------------===//

/// Every kiln op: Pure, result types inferred by `::kiln::infer::<inferFn>`
/// (ir/ShapeInference*.cpp) and, when `verifyFn` is set, verified by
/// `::kiln::verifiers::<verifyFn>`. Inferred and declared result types are
/// compatible when they agree except where one side has a dynamic dimension,
/// so passes may refine types.
class Kiln_Op<string mnemonic, string inferFn, list<Trait> traits = [],
              string verifyFn = ""> :
    Op<Kiln_Dialect, mnemonic,
       !listconcat([Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>],
                   traits)> {
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = !ne(verifyFn, "");
  let extraClassDeclaration = [{
    /// Result types are compatible when they agree up to dynamic dimensions.
    static bool isCompatibleReturnTypes(::mlir::TypeRange lhs,
                                        ::mlir::TypeRange rhs) {
      return ::kiln::infer::areCompatibleResultTypes(lhs, rhs);
    }
  }];
  let extraClassDefinition = !strconcat([{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context,
        ::std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::OpaqueProperties, ::mlir::RegionRange,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      ::kiln::infer::InferContext ctx(context, location, getOperationName(),
                                      operands, attributes);
      return ::kiln::infer::checkResultSizes(ctx,
          ::kiln::infer::}], inferFn, [{(ctx, inferredReturnTypes),
          inferredReturnTypes);
    }
  }], !if(!ne(verifyFn, ""), !strconcat([{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::kiln::verifiers::}], verifyFn, [{(getOperation());
    }
  }]), ""));
}

/// A binary elementwise op with NumPy broadcasting; both operands share the
/// dtype, the result has that dtype.
class Kiln_BinaryElementwiseOp<string mnemonic, Type operandType, string ex,
                               string semantics, dag extraArgs = (ins),
                               string exampleAttrs = "",
                               string verifyFn = ""> :
    Kiln_Op<mnemonic, "broadcastBinary", [Kiln_Elementwise], verifyFn> {
  let summary = "elementwise " # mnemonic # " with broadcasting";
  let description = [{
    }] # semantics # [{

    The operands broadcast like NumPy (dynamic against 1 stays dynamic,
    dynamic against N is N) and have the same element type, which is also
    the result's.

    Example:

    ```mlir
    %0 = kiln.}] # mnemonic # [{ %a, %b}] # exampleAttrs # [{ : (tensor<2x3x}] #
    ex #
    [{>, tensor<3x}] #
    ex #
    [{>) -> tensor<2x3x}] #
    ex #
    [{>
    ```
  }];
  let arguments = !con((ins operandType:$lhs, operandType:$rhs), extraArgs);
  let results = (outs operandType:$output);
}

/// An elementwise comparison with NumPy broadcasting; the result is bool.
class Kiln_ComparisonOp<string mnemonic, string semantics> :
    Kiln_Op<mnemonic, "broadcastCompare", [Kiln_Elementwise]> {
  let summary = "elementwise " # mnemonic # " comparison with broadcasting";
  let description = [{
    }] # semantics # [{ Both operands have the same element type
    and broadcast like NumPy; the result is a bool (`i1`) tensor.

    Example:

    ```mlir
    %0 = kiln.}] # mnemonic # [{ %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_BoolTensor:$output);
}

/// A unary elementwise op whose result has the operand's type.
class Kiln_UnaryElementwiseOp<string mnemonic, Type operandType, string ex,
                              string semantics, dag extraArgs = (ins),
                              string exampleAttrs = "",
                              string verifyFn = "",
                              list<Trait> moreTraits = []> :
    Kiln_Op<mnemonic, "sameAsFirst",
            !listconcat([Kiln_Elementwise], moreTraits), verifyFn> {
  let summary = "elementwise " # mnemonic;
  let description = [{
    }] # semantics # [{

    The result has the operand's type.

    Example:

    ```mlir
    %0 = kiln.}] # mnemonic # [{ %x}] # exampleAttrs # [{ : (tensor<2x3x}] #
    ex #
    [{>) -> tensor<2x3x}] #
    ex #
    [{>
    ```
  }];
  let arguments = !con((ins operandType:$x), extraArgs);
  let results = (outs operandType:$output);
}

/// A unary elementwise op of the transcendental family.
class Kiln_TranscendentalOp<string mnemonic, Type operandType, string ex,
                            string semantics, dag extraArgs = (ins),
                            string exampleAttrs = "",
                            string verifyFn = ""> :
    Kiln_UnaryElementwiseOp<mnemonic, operandType, ex, semantics, extraArgs,
                            exampleAttrs, verifyFn, [Kiln_Transcendental]>;

/// A reduction over the axes given by a parameter operand.
class Kiln_ReductionOp<string mnemonic, Type operandType, string semantics> :
    Kiln_Op<mnemonic, "reduction", [Kiln_Reduction]> {
  let summary = mnemonic # " over the given axes";
  let description = [{
    }] # semantics # [{

    `axes` is a 1-D i64 tensor (negative axes count from the end). With
    `keepdims = 1` the reduced dims become 1, otherwise they are removed.
    Empty `axes` reduces every dim unless `noop_with_empty_axes = 1`, which
    makes the op the identity (ONNX-18 semantics). Reducing an empty set gives
    the identity element. When `axes` is not a constant, the affected dims
    are dynamic and `axes` must have a static length.

    Example:

    ```mlir
    %axes = kiln.constant dense<1> : tensor<1xi64>
    %0 = kiln.}] # mnemonic # [{ %x, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
    ```
  }];
  let arguments = (ins operandType:$x, Kiln_I64Tensor:$axes, I64Attr:$keepdims,
                   I64Attr:$noop_with_empty_axes);
  let results = (outs operandType:$output);
}

#endif // KILN_DIALECT_TD
