//===- Target.h - A code generation backend ---------------------*- C++ -*-===//
//
// This file declares the one interface between the shared back half of the
// pipeline (codegen/: memory plan, wrapper skeleton, package writer) and a
// backend (targets/<name>/): only what differs between backends. A target
// says which passes lower a fused graph for it (library calls with their
// folds, kernels of single ops, reference steps: all visible in the IR,
// passes/LoweringPasses.h), prints the kernels of a lowered graph, the steps
// of its wrapper and the target-specific parts of the C ABI, and builds the
// package's binaries. The registry (targets/TargetRegistry.h) lists the
// targets by name; the CLI takes its --target names from it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_TARGET_H
#define KILN_CODEGEN_TARGET_H

#include "codegen/MemoryPlanner.h"
#include "codegen/PackageNames.h"
#include "kiln/runtime/PackageManifest.h"
#include "passes/FusionPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class LibraryCallOp;
namespace wrapper {
class BufferNames;
}

/// A generated kernel as the manifest lists it.
struct KernelRecord {
  std::string name;
  /// "pointwise", "reduction" (fusions) or "pool".
  std::string kind;
  /// The ONNX nodes it computes.
  std::vector<std::string> nodes;
  /// The launch shape, for targets that launch kernels (cuda).
  std::optional<std::array<unsigned, 3>> grid, block;
  /// A kernel with run-time sizes: each grid dim that follows them as a
  /// C++ expression in the run's size variables, at most grid[i] ("" where
  /// grid[i] is the grid).
  std::array<std::string, 3> runTimeGrid;
  unsigned sharedBytes = 0;
  /// Launches in a row per run (cuda: a recurrence's steps, the launch's
  /// index passed as the kernel's last argument).
  unsigned launches = 1;
  /// Launched once, when the package loads (its op is kiln.load_time),
  /// instead of on every run.
  bool loadTime = false;
};

/// The parts of the C ABI functions of wrapper.cpp that differ between
/// targets (codegen/WrapperEmitter.cpp prints the rest). Exported names are
/// entries: the package's prefix comes first (PackageNames::symbol).
struct WrapperAbi {
  /// The entries that create and run a model ("create" -> tiny_mlp_create).
  std::string createEntry = "create";
  std::string runEntry = "run";
  /// Extra parameter lines of the create function, after `weights`.
  std::string createParameters;
  /// Extra parameter (", void *stream") of run, runGraph and prepareWeights,
  /// and the argument that passes it on (", stream").
  std::string stepParameter, stepArgument;
  /// Extra members of struct kiln_model.
  std::string modelMembers;
  /// The statement of ~kiln_model that frees `prepared`.
  std::string freePrepared = "std::free(prepared);";
  /// Checks at the start of the create function, binding statements inside
  /// its try block (after the weights).
  std::string createChecks, createBindings;
  /// Statements that allocate m->prepared (kPreparedBytes) and run
  /// prepareWeights, returning 1 on failure.
  std::string prepareWeights;
  /// Entry points after the common ones, and their declarations in the
  /// package header (inside its extern "C" block).
  std::string extraExports, extraDeclarations;
  /// Includes the package header needs after kiln/runtime/ModelABI.h.
  std::string headerIncludes;
  /// The target's helpers in the header's namespace, after run() (the
  /// signature's constants, Inputs and Outputs are in scope): how a caller
  /// creates a model without kiln::Model.
  std::string headerHelpers;
  /// The stream argument of the profiler hooks (kiln_model_profiler) in
  /// runGraph: "stream" where steps run on one, "nullptr" on the CPU.
  std::string profilerStream = "nullptr";
};

/// One parameter of a kernel's exported entry point.
struct KernelParameter {
  /// "const float *x0".
  std::string declaration;
  /// What it points to: "f32[16, 32], input 'x'".
  std::string doc;
};

/// A generated kernel exported on its own (`<package>_<kernel>`), declared
/// in the package header so C++ can call it without a model handle.
struct KernelEntryPoint {
  /// The exported symbol: "tiny_mlp_k0_fused_add_relu".
  std::string symbol;
  /// "void" or "int" (0 on success, else a message in `err`).
  std::string returnType;
  /// The parameters in order, the target's own included (a CUDA kernel's
  /// function, stream and error buffer).
  std::vector<KernelParameter> parameters;
  /// The comment above its declaration (lines without "///").
  std::vector<std::string> doc;
  /// The statements of its definition in wrapper.cpp.
  std::string body;
};

/// What a target's build step needs and reports.
struct PackageBuild {
  /// Inputs: the folder being written, the generated wrapper, the host
  /// compiler, its x86-64 level and the runtime's headers; the library's
  /// file name ("libtiny_mlp.so") and the prefix of the symbols it exports
  /// ("tiny_mlp"), the only ones it exports.
  std::string dir, wrapper, cxx, cxxPath, isa, includeDir;
  std::string library, symbolPrefix;
  /// Outputs: the host compiler's command line (paths relative to the
  /// package) and warnings, seconds in the host compiler and in the device
  /// compiler (NVRTC).
  std::string command, warnings;
  double hostSeconds = 0, deviceSeconds = 0;
  /// The device binary's files and architecture, for targets that build
  /// one (the manifest's "cuda" entry).
  std::optional<ManifestCuda> deviceBinary;
};

/// The code of one graph for one target: its kernels, its wrapper steps
/// and its build. Created per graph by Target::createGraphCodegen.
class GraphCodegen {
public:
  virtual ~GraphCodegen();

  explicit GraphCodegen(PackageNames names) : names_(std::move(names)) {}

  /// The target's name (<package>_target of the package).
  virtual llvm::StringRef targetName() const = 0;
  /// The names of the package being generated.
  const PackageNames &names() const { return names_; }

  /// Prints one kernel per kiln.fusion and per op tagged kiln.kernel of the
  /// lowered `graph`, in program order. Diagnostics on failure.
  virtual mlir::LogicalResult emitKernels(mlir::func::FuncOp graph) = 0;
  /// The package file that holds the kernel sources ("kernels.cpp").
  virtual llvm::StringRef kernelSourceFile() const = 0;
  /// The kernels, for the manifest (after emitKernels).
  const std::vector<KernelRecord> &kernels() const { return kernels_; }

  /// wrapper.cpp: includes after the common ones, declarations before the
  /// helpers, helpers after the common ones, tables inside the signature's
  /// namespace, and the entry points' differences.
  virtual void emitIncludes(llvm::raw_ostream &os) = 0;
  virtual void emitDeclarations(llvm::raw_ostream &os) = 0;
  virtual void emitHelpers(llvm::raw_ostream &os) = 0;
  virtual void emitTables(llvm::raw_ostream &os) = 0;
  virtual WrapperAbi wrapperAbi() = 0;

  /// The name of the kernel that the step of `op` (a kiln.fusion or an op
  /// tagged kiln.kernel) runs, for profiles: the fusion's name, else the
  /// op's.
  virtual std::string kernelName(mlir::Operation *op);

  /// The step of a kiln.fusion or of an op tagged kiln.kernel.
  virtual void emitKernelStep(llvm::raw_ostream &os, mlir::Operation *op,
                              size_t index,
                              const wrapper::BufferNames &buffers) = 0;
  /// The step of a kiln.library_call; fails (a compiler bug: the target's
  /// lowering made it) for a callee the target does not know. A call of the
  /// runtime's library ("runtime.*") reads its params as the prebuilt
  /// attributes m->attrs[attrIndex]; other calls get -1.
  virtual mlir::LogicalResult
  emitLibraryCall(llvm::raw_ostream &os, LibraryCallOp call, size_t index,
                  int attrIndex, const wrapper::BufferNames &buffers) = 0;
  /// The step of an op tagged kiln.reference: the runtime's reference
  /// kernel with the prebuilt attributes m->attrs[attrIndex].
  virtual void emitReferenceStep(llvm::raw_ostream &os, mlir::Operation *op,
                                 size_t index, int attrIndex,
                                 const wrapper::BufferNames &buffers) = 0;
  /// The copy of an output that is not written in place (or of an arena
  /// value that lives elsewhere) to the pointer expression `destination`;
  /// `bytes` is a C++ expression (a run-time size in a package compiled for
  /// a range of sizes).
  virtual void emitCopy(llvm::raw_ostream &os, const std::string &destination,
                        const std::string &source, const std::string &bytes,
                        const std::string &comment) = 0;

  /// The exported entry point of the kernel of `op` (a kiln.fusion or an
  /// op tagged kiln.kernel), after emitKernels.
  virtual KernelEntryPoint
  kernelEntryPoint(mlir::Operation *op,
                   const wrapper::BufferNames &buffers) = 0;

  /// Writes the kernel files into build.dir and builds the library (and
  /// any device binary). Diagnostics at `loc` on failure.
  virtual mlir::LogicalResult build(mlir::Location loc,
                                    PackageBuild &build) = 0;

protected:
  PackageNames names_;
  std::vector<KernelRecord> kernels_;
};

/// A code generation backend.
class Target {
public:
  virtual ~Target();
  /// The --target name ("cpu", "cuda").
  virtual llvm::StringRef name() const = 0;
  /// One line for --help.
  virtual llvm::StringRef description() const = 0;
  /// Fails with a diagnostic at `loc` when this kiln cannot build for the
  /// target (a toolkit missing at configure time).
  virtual mlir::LogicalResult checkAvailable(mlir::Location loc) const {
    return mlir::success();
  }
  /// The x86-64 level of the package's host code when --cpu-isa is not
  /// given or is "host"; `hostIsa` is the compiling machine's.
  virtual std::string defaultCpuIsa(llvm::StringRef hostIsa) const {
    return hostIsa.str();
  }
  /// Whether the target's code generators compile `op` (static shapes
  /// given): graph-break planning asks, and an op it does not compile runs
  /// eagerly between compiled graphs. Default: every op but the EagerOnly
  /// ones.
  virtual bool compilesOp(mlir::Operation *op) const;
  /// Adds the target's passes that run on a training graph before autodiff
  /// (after its cleanup), forming ops whose gradient rules build the
  /// target's fused backward ops (the CUDA target's kiln-cuda-attention
  /// {training}: flash attention, forward and backward). Default: none.
  virtual void addTrainingForwardPasses(mlir::OpPassManager &pm) const {}
  /// Adds the target's layout passes, run on each graph after the graph
  /// passes and before fusion (the CUDA target's kiln-channels-last).
  /// Default: none.
  virtual void addLayoutPasses(mlir::OpPassManager &pm) const {}
  /// Adds the target's passes that prepare its own kernels' ops for fusion,
  /// run once the layout passes' transposes are cleaned up, right before
  /// kiln-fuse (the CUDA target's kiln-cuda-fuse-depthwise). Default: none.
  virtual void addPreFusionPasses(mlir::OpPassManager &pm) const {}
  /// How kiln-fuse groups ops for this target. Default: FuseOptions{}.
  virtual FuseOptions fuseOptions() const { return {}; }
  /// Adds the target's lowering passes, run on each fused graph.
  virtual void addLoweringPasses(mlir::OpPassManager &pm) const = 0;
  /// The library calls (callee names) of the lowered graphs that add a
  /// residual found in their destination: kiln-mark-in-place gives such a
  /// call's result the buffer of a residual that dies there (the CPU
  /// target's oneDNN matmul and convolution, oneDNN's sum post-op, and its
  /// panel GEMM).
  /// Default: none.
  virtual std::vector<std::string> residualInPlaceCallees() const { return {}; }
  /// Why the target's code for `op`, a step of a lowered graph compiled for
  /// a range of sizes (docs/dynamic-shapes.md) whose sizes follow the size
  /// symbols (codegen/SymbolicShapes.h), cannot take them at run time; ""
  /// when it can. The model then falls back to fixed-size graphs around
  /// eager regions. Default: "" (every step can).
  virtual std::string whyNotRunTimeSizes(mlir::Operation *op) const {
    return "";
  }
  /// The code of one lowered graph, for the package named by `names`.
  virtual std::unique_ptr<GraphCodegen>
  createGraphCodegen(const PackageNames &names) const = 0;
};

} // namespace kiln

#endif // KILN_CODEGEN_TARGET_H
