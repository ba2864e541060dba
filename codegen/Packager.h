//===- Packager.h - Writes a compiled model package -------------*- C++ -*-===//
//
// This file declares the packager of the CPU compile path: from a fused graph
// it generates kernels.cpp (one kernel per kiln.fusion), plans the memory,
// generates wrapper.cpp and model.h, writes weights.bin and manifest.json,
// and builds model.so with ONE host compiler invocation. Everything is
// written into DIR.tmp-<pid>, which replaces DIR only after success; a
// failure leaves no package behind and an existing DIR untouched.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_PACKAGER_H
#define KILN_CODEGEN_PACKAGER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <map>
#include <string>

namespace kiln {

/// What the packager needs besides the graph.
struct PackageOptions {
  /// The package folder (created or replaced).
  std::string outputDir;
  /// The host C++ compiler; empty: $KILN_CXX, else the compiler Kiln was
  /// configured with.
  std::string cxx;
  /// "embed": constants in weights.bin; "external": weight arguments stay
  /// unbound and are bound by the loader (see docs in Packager.cpp).
  std::string weights = "embed";
  std::string target = "cpu";
  /// The x86-64 level kernels are compiled for: "host" or empty (the
  /// compiling machine's), "x86-64-v2", "x86-64-v3" or "x86-64-v4".
  std::string cpuIsa;
  /// The model file, for the manifest.
  std::string modelPath;
  /// The --dim sizes used at trace time, for the manifest.
  std::map<std::string, int64_t> dimSizes;
  /// Seconds spent tracing and in Kiln's passes (for the manifest).
  double traceSeconds = 0;
  double passSeconds = 0;
};

/// Counts of the top-level steps of a fused graph.
struct StepCounts {
  int fused = 0;          ///< kiln.fusion regions (generated kernels).
  int library = 0;        ///< reference kernels backed by a library (BLAS).
  int fallback = 0;       ///< other reference kernels.
  int64_t arenaBytes = 0; ///< -1 when shapes are not static.
};

/// Counts the steps of the graph of `module` and plans its arena (for
/// `kiln dump --stage fused`). Fails only when there is no graph.
mlir::FailureOr<StepCounts> countSteps(mlir::ModuleOp module);

/// Writes the package of the (fused) graph of `module`. Diagnostics name the
/// node, file or flag on failure.
mlir::LogicalResult writePackage(mlir::ModuleOp module,
                                 const PackageOptions &options,
                                 StepCounts *counts = nullptr);

/// Checks that `dir` may be written or replaced: absent, empty, or a
/// previous package (has manifest.json). A diagnostic at `loc` otherwise.
mlir::LogicalResult checkOutputDir(mlir::Location loc, const std::string &dir);

/// Replaces `dir` by the finished folder `tmp` (an existing package is
/// removed only once the new one is in place).
mlir::LogicalResult installPackage(mlir::Location loc, const std::string &tmp,
                                   const std::string &dir);

/// Removes a folder and everything in it (no error when it is absent).
void removeTree(const std::string &dir);

} // namespace kiln

#endif // KILN_CODEGEN_PACKAGER_H
