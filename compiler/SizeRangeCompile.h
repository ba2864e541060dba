//===- SizeRangeCompile.h - One package for a range of sizes ----*- C++ -*-===//
//
// This file declares the symbolic compile (docs/dynamic-shapes.md): a model
// whose inputs have named dynamic dimensions is compiled once for a range
// of each (`--dim batch=1..64`, or 1..kDefaultSizeMax without a flag). The
// model is traced and lowered at the bound (every symbol at its maximum;
// the memory plan is made for it) and at one probe size per symbol; the
// lowered graphs are compared (compiler/SymbolicSizeInference.h) and the
// bound graph's code is generated with the sizes that follow the symbols as
// run-time values. Where that is not possible yet (graph breaks at fixed
// sizes, a size that is not a product of the symbols, index arithmetic that
// depends on one, a target other than cpu), the caller falls back to the
// eager plan of dynamic dims with a warning saying why.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_SIZERANGECOMPILE_H
#define KILN_COMPILER_SIZERANGECOMPILE_H

#include "compiler/Pipeline.h"
#include "compiler/onnx/OnnxTracer.h"
#include "kiln/runtime/SymbolicDim.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// The largest size of a dynamic dimension that has no `--dim` flag (the
/// memory plan is made for it): `--dim NAME=1..N` serves larger ones.
constexpr int64_t kDefaultSizeMax = 64;

/// The size symbols of a traced `module` (its @main's named dynamic input
/// dims, in order of first use) with their ranges: `ranges` (from `--dim
/// NAME=LO..HI`) or [1, kDefaultSizeMax]. Sets `unnamed` when an input has
/// a dynamic dim without a name (those cannot be symbols). An error names a
/// range of `ranges` that no input dimension has.
Expected<std::vector<SizeSymbol>>
sizeSymbolsOf(mlir::ModuleOp module,
              const std::map<std::string, SizeSymbol> &ranges, bool &unnamed);

/// The outcome of planForSizeRanges: the bound module, lowered and
/// annotated (codegen/SymbolicShapes.h), or why the model cannot be
/// compiled for ranges yet.
struct SizeRangePlan {
  SizeRangePlan() = default;
  SizeRangePlan(std::string why) : whyNot(std::move(why)) {}
  /// Null when `whyNot` says why.
  mlir::OwningOpRef<mlir::ModuleOp> bound;
  std::string whyNot;
  /// Seconds spent tracing and lowering (for the manifest).
  double seconds = 0;
};

/// Traces the model of `options` with `trace` plus the symbols' sizes at
/// the bound and at each probe, plans and lowers each, and compares them.
/// Failure when an error was reported (at the bound); a probe that does
/// not compile is a `whyNot`.
mlir::FailureOr<SizeRangePlan>
planForSizeRanges(mlir::MLIRContext &context, const CompileOptions &options,
                  const TraceOptions &trace,
                  const std::vector<SizeSymbol> &symbols);

/// `kiln compile` of a traced model (`traced`, traced with `trace`): one
/// package for the ranges of its named dynamic dims where planForSizeRanges
/// allows, else runCompilePipeline on `traced` (dynamic dims planned as
/// graph breaks) after a warning saying why. Returns the size symbols the
/// package was compiled for (empty: fixed sizes).
mlir::FailureOr<std::vector<SizeSymbol>>
compileModel(mlir::MLIRContext &context, mlir::ModuleOp traced,
             const CompileOptions &options, const TraceOptions &trace);

} // namespace kiln

#endif // KILN_COMPILER_SIZERANGECOMPILE_H
