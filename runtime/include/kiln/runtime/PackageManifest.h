//===- PackageManifest.h - The manifest.json of a Kiln package -*- C++ -*-===//
//
// This file declares the schema of a package's manifest.json: one set of
// structs shared by its writers (codegen/Packager.cpp for a graph package,
// compiler/ProgramPackager.cpp for a program package) and its reader
// (kiln::Model's loader), with formatManifest / writeManifest turning a
// PackageManifest into the file and readManifest / parseManifest turning
// the file back into one. The runtime owns it, so the file's format is
// defined without MLIR or LLVM. A manifest has one of three forms:
//
// A graph package (no "kind"; libNAME.so, weights.bin, kernels), keys in
// this order:
//
//   { "format": "kiln-package", "format_version": 1, "abi_version": 1,
//     "model": "tiny_mlp", "source": "tiny_mlp.onnx", "target": "cpu",
//     "library": "libtiny_mlp.so", "symbol_prefix": "tiny_mlp",
//     "signature": {"inputs": [VALUE...], "outputs": [VALUE...]},
//     "weights_file": "weights.bin",
//     "weights": [WEIGHT...],
//     "kernels": [{"name": "k0_layer_norm", "kind": "reduction",
//                  "nodes": ["/ln/LayerNormalization"],
//                  "grid": [4, 1, 1], "block": [256, 1, 1],   (cuda only)
//                  "shared_bytes": 0,                         (cuda only)
//                  "launches": 64}],        (cuda, only when more than 1)
//     "reference_ops": [{"op": "kiln.matmul", "kind": "library",
//                        "nodes": ["/fc/MatMul"],       (kind: or "fallback")
//                        "when": "run"}],               (or "load": at load
//                        time)
//     "counts": {"fused": 3, "library": 1, "fallback": 0},
//     "memory_plan": {"arena_bytes": 4096,
//                     "library_workspace": {"offset": 0, "bytes": 0},
//                     "buffers": [{"name": "%k0#0", "offset": 0,
//                                  "bytes": 256, "first": 0, "last": 2}],
//                     "arena_values": [{"name": "saved.0", "dtype": "f32",
//                                       "shape": [4], "bytes": 16,
//                                       "offset": 0, "role": "output"}]},
//     "options": {"target": "cpu", "weights": "embed",
//                 "cpu_isa": "x86-64-v3", "dims": {"batch": 4},
//                 "cxx": "c++"},
//     "versions": {"kiln": "0.1.0", "abi": 1},
//     "host_compiler": {"command": "c++ -O2 ...", "warnings": ""},
//     "isa": "x86-64-v3",
//     "compile_times_s": {"trace": 0.01, "kiln_passes": 0.02,
//                         "codegen": 0.01, "host_compiler": 1.5,
//                         "nvrtc": 0.0},
//     "cuda": {"arch": "sm_90", "cubin": "kernels.cubin",        (cuda only)
//              "ptx": "kernels.ptx", "source": "kernels.cu"} }
//
//   VALUE  = {"name": "x", "dtype": "f32", "shape": [4, 16], "bytes": 256}
//   WEIGHT = {"name": "w", "dtype": "f32", "shape": [16], "bytes": 64,
//             "index": 0, "kind": "constant",
//             "file": "weights.bin", "offset": 0}           in weights.bin
//          | {..., "kind": "argument",
//             "external": {"file": "m.onnx.data", "offset": 0,
//                          "bytes": 64}}                   ONNX external data
//          | {..., "kind": "argument"}                     bound by the caller
//          | {..., "kind": "constant", "fill": "0000003f"}  a fill: every
//             element is this one (its bytes as in weights.bin,
//             little-endian, 2 hex digits per byte); no bytes in
//             weights.bin, materialised by the loader. A manifest with a
//             fill says "format_version": 2, so older runtimes refuse it.
//
// A program package ("kind": "program"; a model with graph breaks,
// docs/graph-breaks.md: program.json + program.bin and one graph package
// per compiled graph under graphs/):
//
//   { "format": "kiln-package", "format_version": 1, "kind": "program",
//     "source": "model.onnx", "target": "cpu",
//     "program": {"json": "program.json", "data": "program.bin"},
//     "signature": {"inputs": [VALUE...], "outputs": [VALUE...]},
//                        (VALUE without "bytes"; a size may be -1: known
//                         only at run time)
//     "graphs": [{"name": "graph_0", "package": "graphs/graph_0",
//                 "where": "main", "ops": 12}],
//     "graph_breaks": [{"node": "nz", "op_type": "NonZero",
//                       "kiln_op": "kiln.non_zero", "kind": "eager",
//                       "reason": "data-dependent-shape", "detail": "...",
//                       "hint": "...", "where": "main",
//                       "ops": [{"node": "nz", "op_type": "NonZero",
//                                "kiln_op": "kiln.non_zero"}]}],
//     "counts": {"fused": 3, "library": 1, "fallback": 0, "graphs": 2,
//                "graph_breaks": 1},
//     "memory_plan": {"arena_bytes": 8192},          (summed over the graphs)
//     "compile_times_s": {"trace": 0.01, "graphs": 3.2} }
//
// A training package ("kind": "training"; docs/runtime-api.md, "Training
// packages": weights.safetensors and three graph packages, forward,
// backward and optimizer, under graphs/; loaded by kiln::Trainer):
//
//   { "format": "kiln-package", "format_version": 1, "kind": "training",
//     "source": "model.onnx", "target": "cpu",
//     "signature": {"inputs": [VALUE...],           the model inputs
//                   "outputs": [VALUE]},            the loss, f32 []
//     "training": {
//       "loss": "loss",
//       "parameters": [VALUE...],        trainable, in weights.safetensors
//       "weights_file": "weights.safetensors",
//       "state": [VALUE...],             optimizer state, zero-initialised
//       "gradients": [{"parameter": "fc1.weight",
//                      "value": "fc1.weight.grad"}],   backward outputs
//       "updates": [{"value": "fc1.weight.next",
//                    "target": "fc1.weight"}],         optimizer outputs
//       "saved": [VALUE...], "saved_bytes": 1234,
//       "recomputed_ops": 3, "recompute_flops": 4096,
//       "saved_bytes_no_recompute": 2048,
//       "optimizer": {"kind": "adamw", "lr": 0.05, "momentum": 0.9,
//                     "beta1": 0.9, "beta2": 0.999, "eps": 1e-8,
//                     "weight_decay": 0.0},
//       "graphs": {"forward": "graphs/forward",
//                  "backward": "graphs/backward",
//                  "optimizer": "graphs/optimizer"}},
//     "counts": {"fused": 3, "library": 1, "fallback": 0},  (the 3 graphs)
//     "memory_plan": {"arena_bytes": 8192},
//     "compile_times_s": {"trace": 0.01, "graphs": 3.2} }
//
// A training manifest must have "training"; parameter, state and saved
// names are unique (and no parameter is also a state tensor), every
// gradient names a parameter (at most one gradient each), every update's
// target is a parameter or state tensor (at most one update each), and the
// graph folders are relative paths without "..".
//
// Reading: keys may come in any order and unknown keys are ignored. Every
// key is optional (absent keys read as the structs' defaults) except a
// signature value's or weight's name, dtype and shape, and an "external"
// object's file; a key that is present must have its type. Dtypes are kiln
// names ("f32") or kiln::DType codes. A weight's "bytes" may be spelled
// "length" and "file" "location" (ONNX's words); a weight whose file is
// not weights.bin is external data, as if under "external". A weight with
// data must hold exactly elements × dtype size bytes. A "fill" has exactly
// 2 × dtype size hex digits (a bool's is 00 or 01) and no "file" or
// "external". Shapes are static
// except a program signature's (-1). "format", when present, must be
// "kiln-package" and "format_version" at most kManifestFormatVersion.
// Errors name the file and the entry: "manifest.json: weights[3]
// ('conv1.weight'): holds 12 bytes but f32[4] needs 16".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PACKAGEMANIFEST_H
#define KILN_RUNTIME_PACKAGEMANIFEST_H

#include "kiln/runtime/DType.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/SymbolicDim.h"
#include "kiln/runtime/Tensor.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// The "format" of every manifest.
inline constexpr const char *kManifestFormat = "kiln-package";
/// The "format_version" a manifest is written with by default.
inline constexpr int64_t kManifestFormatVersion = 1;
/// The "format_version" of a graph package with fill weights
/// (ManifestWeight::fill), and the newest readManifest accepts: older
/// runtimes refuse such a package rather than miss its fills.
inline constexpr int64_t kManifestFillsFormatVersion = 2;
/// The "format_version" of a package compiled for ranges of sizes
/// ("size_symbols"), and the newest readManifest accepts.
inline constexpr int64_t kManifestSizeSymbolsFormatVersion = 3;

/// Which of the two forms a manifest has ("kind").
enum class PackageKind {
  /// One compiled graph: lib<name>.so, weights.bin, kernels (no "kind" key).
  Graph,
  /// A model with graph breaks: program.json/.bin and graphs/<name>/
  /// ("kind": "program").
  Program,
  /// A training package: weights.safetensors and the forward, backward and
  /// optimizer graph packages ("kind": "training"; kiln::Trainer).
  Training,
};

/// An input or output of the signature (VALUE).
struct ManifestValue {
  std::string name;
  DType dtype = DType::F32;
  /// Static sizes; in a program package's signature a size may be -1, and
  /// so may one that `dims` names.
  Shape shape;
  /// The value's size in bytes ("bytes"; graph packages write it; at the
  /// bound where `dims` has symbols).
  std::optional<uint64_t> bytes;
  /// ("dims", a package compiled for ranges of sizes) each dim as
  /// SymbolicDim text: "batch", "4*batch" or the size; empty when absent.
  std::vector<std::string> dims;
  /// ("any_rank", a program package's output) the rank is only known at
  /// run time; `shape` is empty.
  bool anyRank = false;
};

/// A file of the package the runtime reads ("files": [...]), recorded when
/// the package is written and checked before anything of the package is
/// used: its path relative to the package folder, its size and a checksum.
struct ManifestFile {
  std::string path;
  uint64_t bytes = 0;
  /// "fnv1a64x4:<16 hex digits>" (PackageFiles.cpp): detects damage, not
  /// tampering; a package is code, load only packages you trust.
  std::string checksum;
};

/// A weight and the location of its bytes (WEIGHT).
struct ManifestWeight {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  /// The bytes of its data: elements × dtype size ("bytes", the same in
  /// "external").
  uint64_t bytes = 0;
  /// Its position in the library's weight list ("index"), when written.
  std::optional<int64_t> index;
  /// "constant" (a value of the model, stored in weights.bin), "argument"
  /// (an input of the graph without data in the model: external data or
  /// bound by the caller), or empty when not written.
  std::string kind;
  /// File holding the bytes ("weights.bin", an ONNX external-data file, or
  /// an absolute path); empty when the package carries no data for it (the
  /// caller must bind it through LoadOptions::weights).
  std::string file;
  /// True for data outside the package proper (ONNX external data, written
  /// as "external": {...}): looked up in LoadOptions::weightsDir, the
  /// package folder, then the folder of the source model.
  bool external = false;
  /// Where the bytes start in `file`.
  uint64_t offset = 0;
  /// A fill weight ("fill"): a constant whose elements all equal this one
  /// element (dtype size bytes, little-endian as in weights.bin). It has no
  /// `file`; the loader materialises its `bytes` once, at load time.
  std::optional<std::vector<uint8_t>> fill;
};

/// A CUDA kernel's launch configuration.
struct ManifestLaunch {
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t sharedBytes = 0;
  /// Launches in a row per run (a recurrence: one per step, the launch's
  /// index its last argument); 1 for every other kernel.
  int64_t launches = 1;
};

/// A generated kernel ("kernels").
struct ManifestKernel {
  /// Its function name in kernels.cpp / kernels.cu.
  std::string name;
  /// The fusion kind ("pointwise", "reduction", ...) or "pool".
  std::string kind;
  /// The source model's nodes it computes.
  std::vector<std::string> nodes;
  /// cuda packages only ("grid", "block", "shared_bytes").
  std::optional<ManifestLaunch> launch;
  /// "run" (every run) or "load" (once, when the package loads: weight
  /// preparation, kiln.load_time).
  std::string when = "run";
};

/// A step that calls the runtime rather than a generated kernel
/// ("reference_ops").
struct ManifestRuntimeStep {
  /// The kiln op ("kiln.matmul").
  std::string op;
  /// "library" (OpenBLAS, cuBLASLt, cuDNN) or "fallback" (a reference
  /// kernel).
  std::string kind;
  std::vector<std::string> nodes;
  /// "run" (every run) or "load" (once, when the package loads: a step that
  /// reads only weights, kiln.load_time).
  std::string when = "run";
};

/// The step counts ("counts").
struct ManifestCounts {
  int64_t fused = 0;
  int64_t library = 0;
  int64_t fallback = 0;
  /// Program packages: the compiled graphs and the graph breaks.
  std::optional<int64_t> graphs;
  std::optional<int64_t> graphBreaks;
};

/// A buffer of the arena ("memory_plan.buffers").
struct ManifestBuffer {
  std::string name;
  int64_t offset = 0;
  int64_t bytes = 0;
  /// The first and last top-level step that use it.
  int64_t first = 0;
  int64_t last = 0;
};

/// A value a graph hands to the next graph, or takes from the previous one,
/// in the scratch arena the caller shares between them (RunOptions::arena):
/// a training package's saved activations, from the forward graph to the
/// backward graph ("memory_plan.arena_values"). Not in the signature.
struct ManifestArenaValue {
  /// Name, dtype, shape and bytes.
  ManifestValue value;
  /// Its byte offset in the arena.
  int64_t offset = 0;
  /// "role": "input" (the graph reads it) or "output" (the graph leaves it).
  bool isInput = false;
};

/// The memory plan ("memory_plan"); a program package writes only
/// arenaBytes (the sum over its graphs).
struct ManifestMemoryPlan {
  int64_t arenaBytes = 0;
  /// The library workspace's place in the arena (cuBLASLt on cuda).
  int64_t libraryWorkspaceOffset = 0;
  int64_t libraryWorkspaceBytes = 0;
  std::vector<ManifestBuffer> buffers;
  std::vector<ManifestArenaValue> arenaValues;
};

/// The compile options ("options").
struct ManifestOptions {
  std::string target;
  /// "embed" or "external".
  std::string weights;
  std::string cpuIsa;
  /// --dim NAME=SIZE, in the order written.
  std::vector<std::pair<std::string, int64_t>> dims;
  std::string cxx;
};

/// Compile times in seconds ("compile_times_s"). A graph package writes
/// trace, kiln_passes, codegen, host_compiler and nvrtc; a program package
/// trace and graphs.
struct ManifestCompileTimes {
  double trace = 0;
  double kilnPasses = 0;
  double codegen = 0;
  double hostCompiler = 0;
  double nvrtc = 0;
  double graphs = 0;
};

/// The files of a cuda package ("cuda").
struct ManifestCuda {
  std::string arch;   ///< "sm_90".
  std::string cubin;  ///< "kernels.cubin".
  std::string ptx;    ///< "kernels.ptx".
  std::string source; ///< "kernels.cu".
};

/// A compiled graph of a program package ("graphs").
struct ManifestGraph {
  std::string name;    ///< "graph_0".
  std::string package; ///< its folder: "graphs/graph_0".
  std::string where;   ///< "main", or e.g. "body of 'Loop_0'".
  int64_t ops = 0;     ///< kiln ops, constants excluded.
};

/// A model node taking part in a graph break.
struct ManifestBreakOp {
  std::string node;   ///< ONNX node name, or empty.
  std::string opType; ///< "op_type": the ONNX op ("NonZero").
  std::string kilnOp; ///< "kiln_op": "kiln.non_zero".
};

/// A graph break of a program package ("graph_breaks").
struct ManifestGraphBreak {
  /// The node that breaks ("node", "op_type", "kiln_op").
  ManifestBreakOp op;
  /// "eager", "if" or "loop".
  std::string kind;
  /// "unsupported-op", "data-dependent-shape", "dynamic-shape",
  /// "control-flow".
  std::string reason;
  std::string detail;
  std::string hint;
  std::string where;
  /// Every op of an eager region, in order.
  std::vector<ManifestBreakOp> ops;
};

/// A gradient of a training package: the backward graph's output `value`
/// is the gradient of the loss with respect to `parameter`
/// ("training.gradients").
struct ManifestGradient {
  std::string parameter; ///< "fc1.weight".
  std::string value;     ///< "fc1.weight.grad".
};

/// An update of a training package: the optimizer graph's output `value`
/// is written in place into the parameter or state tensor `target`
/// ("training.updates").
struct ManifestUpdate {
  std::string value;  ///< "fc1.weight.next".
  std::string target; ///< "fc1.weight".
};

/// The optimizer a training package was compiled with
/// ("training.optimizer"); its hyper-parameters other than the learning
/// rate are constants of the optimizer graph, recorded here for tools.
struct ManifestOptimizer {
  /// "sgd", "momentum" or "adamw".
  std::string kind = "sgd";
  /// The learning rate the package starts with (the optimizer graph's
  /// "kiln.lr" input; kiln::TrainerOptions::lr overrides it).
  double lr = 0.01;
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0.0;
};

/// The three graph packages of a training package, as folders relative to
/// the package ("training.graphs").
struct ManifestTrainingGraphs {
  std::string forward = "graphs/forward";
  std::string backward = "graphs/backward";
  std::string optimizer = "graphs/optimizer";
  /// Gradient accumulation's graph (the sums over micro-batches); empty in
  /// packages made before it existed (they train one batch a step).
  std::string accumulate;
};

/// The "training" section of a training package's manifest.
struct ManifestTraining {
  /// The forward graph's output holding the loss (f32, rank 0).
  std::string loss = "loss";
  /// The trainable parameters, stored in `weightsFile` under these names.
  std::vector<ManifestValue> parameters;
  /// "weights_file": the initial parameters (safetensors).
  std::string weightsFile = "weights.safetensors";
  /// The optimizer state tensors, zero-initialised ("fc1.weight.m").
  std::vector<ManifestValue> state;
  /// One per parameter: which backward output is its gradient.
  std::vector<ManifestGradient> gradients;
  /// The optimizer outputs and the tensors they overwrite.
  std::vector<ManifestUpdate> updates;
  /// The forward outputs (after the loss) the backward graph reads.
  std::vector<ManifestValue> saved;
  /// "saved_bytes": their total size.
  int64_t savedBytes = 0;
  /// "recomputed_ops": forward ops the backward graph recomputes instead of
  /// reading saved values.
  int64_t recomputedOps = 0;
  /// "recompute_flops": the estimated cost of those recomputations per step
  /// (2 M N K a matmul; one per element moved for other ops).
  int64_t recomputeFlops = 0;
  /// "saved_bytes_no_recompute": what saving every activation would take
  /// (what --memory-budget is a fraction of).
  int64_t savedBytesNoRecompute = 0;
  ManifestOptimizer optimizer;
  ManifestTrainingGraphs graphs;
};

/// A whole manifest.json. Fields marked (graph) are written only for
/// PackageKind::Graph, (program) only for PackageKind::Program, (training)
/// only for PackageKind::Training; the others for all (a training manifest
/// writes format, format_version, kind, source, target, signature, training,
/// counts, memory_plan.arena_bytes and compile_times_s trace and graphs).
struct PackageManifest {
  /// "format" (optional when read; always written).
  std::string format = kManifestFormat;
  /// "format_version" (optional when read; always written).
  int64_t formatVersion = kManifestFormatVersion;
  PackageKind kind = PackageKind::Graph;
  /// (graph) the library's ABI version ("abi_version"), written when set.
  std::optional<int64_t> abiVersion;
  /// (graph) The model's name ("model").
  std::string model;
  /// The model the package was compiled from ("source"), or empty.
  std::string source;
  /// The code target ("target": "cpu" or "cuda"), or empty (a CPU package
  /// unless the library's <prefix>_target says otherwise).
  std::string target;
  /// (graph) The shared library ("library": "libtiny_mlp.so"), a file
  /// name in the package folder; packages of kilns before symbol prefixes
  /// wrote "model.so".
  std::string library;
  /// (graph) The prefix of every symbol the library exports
  /// ("symbol_prefix": "tiny_mlp" for tiny_mlp_create, ...); absent in
  /// packages of kilns before it, which exported kiln_model_*.
  std::string symbolPrefix;
  /// (program) "program": {"json": ..., "data": ...}.
  std::string programJson;
  std::string programData;
  /// Whether "signature" is present (the loader checks the library against
  /// it only then); written when true.
  bool hasSignature = true;
  std::vector<ManifestValue> inputs;
  std::vector<ManifestValue> outputs;
  /// (graph) "size_symbols": the size symbols of a package compiled for
  /// ranges of sizes, with their ranges (docs/dynamic-shapes.md); the
  /// signature's `dims` use them.
  std::vector<SizeSymbol> sizeSymbols;
  /// (graph) "weights_file": "weights.bin".
  std::string weightsFile;
  /// (graph)
  std::vector<ManifestWeight> weights;
  /// (graph)
  std::vector<ManifestKernel> kernels;
  /// (graph) "reference_ops".
  std::vector<ManifestRuntimeStep> referenceOps;
  /// (program)
  std::vector<ManifestGraph> graphs;
  /// (program) "graph_breaks".
  std::vector<ManifestGraphBreak> graphBreaks;
  /// ("custom_op_libraries", optional) the custom-op libraries
  /// (kiln/custom_op.h) the package's kiln.custom_call ops need, as paths
  /// inside the package (custom_ops/<file>); loaded with the package.
  std::vector<std::string> customOpLibraries;
  /// Written when set.
  std::optional<ManifestCounts> counts;
  ManifestMemoryPlan memoryPlan;
  /// (graph)
  ManifestOptions options;
  /// (graph) "versions": {"kiln": ..., "abi": ...}.
  std::string kilnVersion;
  int64_t versionsAbi = 0;
  /// (graph) "host_compiler": {"command": ..., "warnings": ...}.
  std::string hostCompilerCommand;
  std::string hostCompilerWarnings;
  /// (graph) The instruction-set level the library was compiled for ("isa",
  /// e.g. "x86-64-v3"), or empty.
  std::string isa;
  /// "compile_times_s".
  ManifestCompileTimes compileTimes;
  /// (graph) cuda packages only.
  std::optional<ManifestCuda> cuda;
  /// (training) "training"; required when kind is PackageKind::Training.
  std::optional<ManifestTraining> training;
  /// "files": every file the runtime reads, with its size and checksum
  /// (written last; absent in packages of older Kilns, which are then not
  /// checked).
  std::vector<ManifestFile> files;

  /// The steps that call the runtime (library + fallback counts), when
  /// "counts" is given.
  std::optional<int64_t> libraryOrFallbackSteps() const {
    if (!counts)
      return std::nullopt;
    return counts->library + counts->fallback;
  }
};

/// The text of `manifest` as manifest.json: keys in the order shown above
/// (the form chosen by manifest.kind), two-space indent, a final newline.
std::string formatManifest(const PackageManifest &manifest);

/// Writes formatManifest(manifest) to `path` (under a temporary name, then
/// renamed). Errors name the file.
Status writeManifest(const PackageManifest &manifest, const std::string &path);

/// Reads and checks the manifest text `text`; errors start with `path` (the
/// file it came from, used only in messages) and name the entry
/// ("weights[3] ('conv1.weight'): ...").
Expected<PackageManifest> parseManifest(const std::string &text,
                                        const std::string &path);

/// Reads and checks `path` (a manifest.json). Errors name the file and the
/// entry ("weights[3] ('conv1.weight'): ...").
Expected<PackageManifest> readManifest(const std::string &path);

/// The files under the package folder `dir` that the runtime reads (every
/// regular file but the top-level manifest.json and the generated sources:
/// .cpp, .h, .cu, .mlir, .txt; of a nested package, a subfolder with its
/// own manifest.json, only that manifest), sorted by path, with sizes and
/// checksums.
Expected<std::vector<ManifestFile>>
describePackageFiles(const std::string &dir);

/// Checks every file `manifest.files` lists against the folder `dir`: it
/// must exist inside the folder, have its recorded size and checksum.
/// Errors name the file and say what to do ("recompile the package").
Status verifyPackageFiles(const PackageManifest &manifest,
                          const std::string &dir);

/// `relative` resolved against the folder `base`, when it stays inside it:
/// not absolute, no `..` that leaves it, no symbolic link that points out
/// of it. Errors name `what` (the manifest entry) and the path.
Expected<std::string> resolveInsideFolder(const std::string &base,
                                          const std::string &relative,
                                          const std::string &what);

} // namespace kiln

#endif // KILN_RUNTIME_PACKAGEMANIFEST_H
