//===- LibraryCalls.h - What lowerings to library calls share - -*- C++ -*-===//
//
// This file declares what the targets' lowering passes
// (targets/cuda/LowerCudaLibraryCalls.cpp,
// targets/cpu/LowerCpuLibraryCalls.cpp) share to make a kiln.matmul or
// kiln.conv a kiln.library_call: a matmul's GEMM form (dims, batch strides, the
// matrix transposes of its operands read in place), a convolution's geometry
// check and parameters (attributes with their defaults), and the creation of
// the call with the epilogue (LibraryEpilogues.h) that replaces a fusion.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_LIBRARYCALLS_H
#define KILN_PASSES_LIBRARYCALLS_H

#include "ir/KilnOps.h"
#include "passes/LibraryEpilogues.h"

#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <utility>

namespace kiln {

/// A matmul as one library GEMM: operands (read through a matrix transpose
/// when it is folded), dims and batch strides.
struct Gemm {
  mlir::Value a, b;
  bool transA = false, transB = false;
  int64_t batch = 1, m = 0, n = 0, k = 0, strideA = 0, strideB = 0;
};

/// The value a matrix transpose `v` transposes, when a library can read it
/// in place instead (a kiln.transpose of the last two dims, or a fusion
/// that is only that, possibly of a reshape to a matrix); null otherwise.
mlir::Value transposedSource(mlir::Value v);

/// The GEMM form of `op` when it has one: static shapes, an element type
/// that `takes` accepts, batches that are equal or broadcast from one
/// matrix; a batch of row-major A matrices times one B is one taller GEMM.
std::optional<Gemm> gemmOf(MatMulOp op,
                           llvm::function_ref<bool(mlir::Type)> takes);

/// An integer-list attribute of `n` entries, `dflt` when empty (as the
/// reference kernel reads it); nullopt when of another length.
std::optional<llvm::SmallVector<int64_t>> spatial(llvm::ArrayRef<int64_t> attr,
                                                  size_t n, int64_t dflt);

/// The shape of `type` (a ranked tensor) read channels first when
/// `channelsLast`: the channels moved from the last dim to dim 1.
llvm::SmallVector<int64_t> channelsFirstShape(mlir::Type type,
                                              bool channelsLast);

/// The library parameters of `conv` (`dilations`, `group`, `layout`
/// "nchw" | "nhwc", `pads`, `strides`, defaults filled in) when a library
/// takes it: static non-empty shapes, 1 to 3 spatial dims, x, w and y of one
/// element type that `takes` accepts, a geometry that gives the result's
/// shape and, when `symmetricPads` (cuDNN), equal pads at both ends of each
/// spatial dim; nullopt otherwise.
std::optional<mlir::NamedAttrList>
convLibraryParams(ConvOp conv, llvm::function_ref<bool(mlir::Type)> takes,
                  bool symmetricPads);

/// A location naming `op` and every op inside `fusion` (the ONNX nodes of
/// everything a library call computes).
mlir::Location foldedLoc(mlir::Operation *op, FusionOp fusion);

/// Creates the library call `callee` for `op` (and `fusion`, whose
/// computation `epilogue` folds in, if any) with the operands by role, the
/// epilogue's bias and residual after them; replaces `fusion` (or `op`) with
/// it and erases both.
void createLibraryCall(
    mlir::Operation *op, FusionOp fusion, llvm::StringRef callee,
    llvm::ArrayRef<std::pair<llvm::StringRef, mlir::Value>> operands,
    const Epilogue *epilogue, bool transA, bool transB, int64_t workspace,
    mlir::NamedAttrList params);

} // namespace kiln

#endif // KILN_PASSES_LIBRARYCALLS_H
