//===- SymbolicShapes.h - Symbolic sizes in lowered graphs ------*- C++ -*-===//
//
// This file declares how a lowered graph compiled for a range of sizes
// (docs/dynamic-shapes.md) says which of its sizes are symbolic, and the
// accessors code generation reads them through. The graph itself has the
// static types of the range's maximum (the bound: the memory plan is made
// for it); these attributes, set by compiler/SymbolicShapes.cpp after
// comparing the graph with graphs traced at other sizes, name the sizes that
// follow the symbols:
//
//   func.func @main(%x: tensor<64x16xf32> {kiln.sym_dims = ["batch", ""]})
//       attributes {kiln.size_symbols = [{name = "batch", min = 1, max = 64}]}
//   %0 = kiln.fusion ... {kiln.sym_dims = [["batch", ""]],
//                         kiln.sym_loops = ["batch", ""]}
//
// `kiln.sym_dims` gives each result's dims (an op) or an argument's (a
// function argument) as SymbolicDim text, "" where static;
// `kiln.sym_loops` the extents of the kernel's loop variables, in the kernel
// IR's order; `kiln.sym_index` the strides, offsets and divisors of its
// index expressions that follow a symbol (an inner dim's), and
// `kiln.sym_counts` its reductions' counts; `kiln.sym_params` a library
// call's integer params that follow the symbols (a GEMM's `m`). A value
// without the attribute is static.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_SYMBOLICSHAPES_H
#define KILN_CODEGEN_SYMBOLICSHAPES_H

#include "codegen/KernelIR.h"
#include "kiln/runtime/SymbolicDim.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"

#include <string>
#include <vector>

namespace kiln {

/// The attribute names (see the file comment).
constexpr llvm::StringLiteral kSymDimsAttr = "kiln.sym_dims";
constexpr llvm::StringLiteral kSymLoopsAttr = "kiln.sym_loops";
constexpr llvm::StringLiteral kSymIndexAttr = "kiln.sym_index";
constexpr llvm::StringLiteral kSymCountsAttr = "kiln.sym_counts";
constexpr llvm::StringLiteral kSizeSymbolsAttr = "kiln.size_symbols";
constexpr llvm::StringLiteral kSymParamsAttr = "kiln.sym_params";
/// Unit attribute on a module traced at one size of a range
/// (compiler/SizeRangeCompile.cpp): its sizes become run-time values, so
/// the lowering passes keep to steps that take sizes at run time (the CPU
/// target's runtime.* calls rather than oneDNN primitives made at load).
constexpr llvm::StringLiteral kSizeRangeAttr = "kiln.size_range";

/// A SymbolicDim of a kiln.sym_* attribute (text the compiler wrote: a
/// malformed one is a compiler bug, asserted).
SymbolicDim parseSizeExpr(const std::string &text);

/// The size symbols of `graph` (kiln.size_symbols); empty for a graph of
/// static shapes.
std::vector<SizeSymbol> sizeSymbolsOf(mlir::func::FuncOp graph);

/// The symbolic dims of `v`, one per dim ("" where static); an empty
/// vector when every dim is static.
std::vector<std::string> symbolicDimsOf(mlir::Value v);

/// The C++ expression of each dim of `v` (a number, or the SymbolicDim's
/// cExpr where symbolic); `v` has a static (bound) shape.
std::vector<std::string> dimCExprs(mlir::Value v);

/// The symbolic numbers of the kernel of `op`: its loop extents
/// (kiln.sym_loops, one per loop variable), index numbers (kiln.sym_index,
/// in codegen::visitIndexNumbers order) and reduction counts
/// (kiln.sym_counts, in codegen::visitReductions order), each "" where
/// static; an empty vector when none.
std::vector<std::string> symbolicNumbersOf(mlir::Operation *op,
                                           llvm::StringRef attr);

/// Sets the run-time numbers of `kernel`, the kernel IR of `op`, from its
/// kiln.sym_* attributes (their SymbolicDim::cExpr), and its size
/// parameters (kernelSizeSymbols).
void applySymbolicNumbers(mlir::Operation *op, codegen::Kernel &kernel);

/// The integer param `name` of a library call as C++: its number, or the
/// run-time size it follows (kiln.sym_params).
std::string paramCExpr(mlir::Operation *call, llvm::StringRef name);

/// True when `op` has a size that follows a symbol: a result's or an
/// operand's dim, a kernel's number or a library call's param.
bool hasRunTimeSizes(mlir::Operation *op);

/// The size symbols the kernel of `op` takes as parameters (those its
/// kiln.sym_loops, kiln.sym_index and kiln.sym_counts name; for a kernel
/// printed for a single op, kiln.kernel, those of its dims), sorted by
/// name.
std::vector<std::string> kernelSizeSymbols(mlir::Operation *op);

} // namespace kiln

#endif // KILN_CODEGEN_SYMBOLICSHAPES_H
