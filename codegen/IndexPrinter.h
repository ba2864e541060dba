//===- IndexPrinter.h - Index arithmetic of single-op kernels ---*- C++ -*-===//
//
// This file declares the pieces of generated code that the C++ printer
// (targets/cpu/CppIndexKernels.cpp) and the CUDA printer
// (targets/cuda/CudaIndexKernels.cpp) share for the single-op kernels that
// read or write at run-time positions (gather_elements, gather_nd,
// scatter_elements, scatter_nd, hardmax, pad): the check of a run-time
// index, the offset of an element whose axis coordinate is an index, the
// offset an index tuple selects, a scatter's combination of two elements, a
// hardmax's step and the element a pad's output reads. Each has the reference kernel's semantics
// (runtime/kernels/GatherScatter.cpp, Softmax.cpp); only what a bad index
// does differs between the targets (a CPU kernel returns 1, a CUDA kernel
// traps), so the callers pass that statement.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_INDEXPRINTER_H
#define KILN_CODEGEN_INDEXPRINTER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {
namespace codegen {

/// Statements (each line starting with `indent`) that count the run-time
/// index `var` (a `long long`) from the end when negative and run `onBad`
/// (one statement, e.g. "return 1;") when it is then outside [0, size).
std::string printCheckedIndex(const std::string &var, int64_t size,
                              const std::string &onBad,
                              const std::string &indent);

/// Statements (at four spaces) that split the flat position `flat` of a
/// tensor of `shape` into coordinates and accumulate into `long long
/// kiln_x` the offset, in the row-major strides of `xShape`, of the element
/// at those coordinates with the one along `axis` replaced by `indexVar`
/// (gather_elements' read, scatter_elements' write); uses `kiln_r`.
std::string printElementOffset(llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<int64_t> xShape, int64_t axis,
                               const std::string &flat,
                               const std::string &indexVar);

/// Statements (at `indent`) that read the index tuple number `tuple` (of
/// dims.size() indices at in1), check each index against `dims` as
/// printCheckedIndex does (running `onBad`) and accumulate into `long long
/// kiln_off` the element offset they select with `strides`.
std::string printTupleOffset(const std::string &tuple,
                             llvm::ArrayRef<int64_t> dims,
                             llvm::ArrayRef<int64_t> strides,
                             const std::string &onBad,
                             const std::string &indent);

/// A scatter's combination of the element `a` with the update `b` (both of
/// the computed type) for `reduction` (none: the update wins; add, mul,
/// max, min), as the reference's `combine`: max keeps `a` unless `a < b`,
/// min unless `b < a`, so a NaN element stays and a NaN update is dropped.
std::string printScatterCombine(llvm::StringRef reduction, const std::string &a,
                                const std::string &b);

/// True when `reduction` is one a scatter kernel prints: none, add, mul,
/// max or min.
bool isScatterReduction(llvm::StringRef reduction);

/// One step of a hardmax walk along an axis (at `indent`): the candidate
/// `v` at position `r` replaces the best so far `kiln_best` at `kiln_arg`
/// when strictly larger, or when it is a NaN and the best is not (the
/// reference's rule: the first maximum, a NaN wins).
std::string printHardmaxStep(const std::string &indent);

/// Statements (at four spaces) that find the element of x that the output
/// element `flat` of a pad reads (runtime/kernels/Pad.cpp's
/// mapPadCoordinate): they declare `long long kiln_r` and `kiln_x` (its
/// offset in x) and, for the constant mode, `bool kiln_inside` (false where
/// the output lies outside x: the value is written there); per axis, the
/// output coordinate minus the begin pad, mapped by `mode` (constant,
/// reflect, edge, wrap) into x cropped by the negative pads. nullopt when the
/// pads do not give `yShape` from `xShape` or a non-constant mode would have
/// to fill an axis cropped to nothing: the reference kernel's errors.
std::optional<std::string> printPadRead(llvm::ArrayRef<int64_t> xShape,
                                        llvm::ArrayRef<int64_t> yShape,
                                        llvm::ArrayRef<int64_t> pads,
                                        llvm::StringRef mode,
                                        const std::string &flat);

} // namespace codegen
} // namespace kiln

#endif // KILN_CODEGEN_INDEXPRINTER_H
