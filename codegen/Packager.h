//===- Packager.h - Writes a compiled model package -------------*- C++ -*-===//
//
// This file declares the package writer that every target shares: it
// checks the options and the output folder, writes wrapper.cpp, the package
// header, weights.bin and manifest.json around the target's build
// (GraphCodegen::build: kernel sources, device binaries, the library), all into
// DIR.tmp-<pid>, which replaces DIR only after success; a failure leaves no
// package behind and an existing DIR untouched. compiler/Pipeline.cpp calls
// its steps in order.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_PACKAGER_H
#define KILN_CODEGEN_PACKAGER_H

#include "codegen/MemoryPlanner.h"
#include "codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include "kiln/runtime/PackageManifest.h"

#include <chrono>
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

/// Counts of the top-level steps of a fused or lowered graph.
struct StepCounts {
  int fused = 0;          ///< generated kernels.
  int library = 0;        ///< library calls (before lowering: the library
                          ///< family's ops).
  int fallback = 0;       ///< reference kernels.
  int64_t arenaBytes = 0; ///< -1 when shapes are not static.
};

/// Counts the steps of the graph of `module` and plans its arena (for
/// `kiln dump --stage fused|lowered` and the compile summary). Fails only
/// when there is no graph.
mlir::FailureOr<StepCounts> countSteps(mlir::ModuleOp module);

/// Writes one graph's package, step by step (compiler/Pipeline.cpp):
/// begin, writeSources, writeWeights, the target's build into buildInfo(),
/// finish (the manifest), install. Destroying it before install removes the
/// temp folder. Diagnostics name the node, file or flag on failure.
class PackageWriter {
public:
  PackageWriter(mlir::Location loc, const Target &target,
                const PackageOptions &options);
  ~PackageWriter();
  PackageWriter(const PackageWriter &) = delete;
  PackageWriter &operator=(const PackageWriter &) = delete;

  /// Checks the target, --cpu-isa, the output folder, the runtime headers
  /// and the host compiler; creates the temp folder.
  mlir::LogicalResult begin();
  /// wrapper.cpp and the package header (<name>.h); the build will make
  /// lib<name>.so exporting only <name>_* symbols.
  mlir::LogicalResult writeSources(const PackageNames &names,
                                   const std::string &wrapper,
                                   const std::string &header);
  /// weights.bin: the constants of `plan`, 64-byte aligned, in weight order.
  mlir::LogicalResult writeWeights(mlir::func::FuncOp graph,
                                   const MemoryPlan &plan);
  /// What the target's build reads (the temp folder, the host compiler,
  /// the x86-64 level, the runtime headers, the wrapper) and reports.
  PackageBuild &buildInfo() { return build_; }
  /// manifest.json.
  mlir::LogicalResult finish(mlir::func::FuncOp graph, const MemoryPlan &plan,
                             const GraphCodegen &codegen,
                             const StepCounts &counts);
  /// Renames the temp folder into place.
  mlir::LogicalResult install();

private:
  mlir::Location loc_;
  const Target &target_;
  PackageOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::string dir_, finalDir_;
  PackageBuild build_;
  /// The manifest, filled by writeWeights and finish.
  PackageManifest manifest_;
  double codegenSeconds_ = 0;
  bool installed_ = false;
};

/// Checks that `dir` may be written or replaced: absent, empty, or a
/// previous package (has manifest.json). A diagnostic at `loc` otherwise.
mlir::LogicalResult checkOutputDir(mlir::Location loc, const std::string &dir);

/// Replaces `dir` by the finished folder `tmp` (an existing package is
/// removed only once the new one is in place).
mlir::LogicalResult installPackage(mlir::Location loc, const std::string &tmp,
                                   const std::string &dir);

/// Removes a folder and everything in it (no error when it is absent).
void removeTree(const std::string &dir);

/// The folder of a package made of graph packages (a program or a training
/// package): begin() checks `dir` and creates a temporary folder with
/// graphs/ beside it, the caller fills path(), install() writes the
/// manifest and renames the folder into place. Until then nothing at `dir`
/// changes, and the temporary folder is removed when this goes away.
class StagedPackage {
public:
  StagedPackage(mlir::Location loc, std::string dir);
  ~StagedPackage();
  StagedPackage(const StagedPackage &) = delete;
  StagedPackage &operator=(const StagedPackage &) = delete;

  mlir::LogicalResult begin();
  /// The temporary folder being filled.
  const std::string &path() const { return tmp_; }
  mlir::LogicalResult install(const PackageManifest &manifest);

private:
  mlir::Location loc_;
  std::string dir_, tmp_;
  bool installed_ = false;
};

} // namespace kiln

#endif // KILN_CODEGEN_PACKAGER_H
