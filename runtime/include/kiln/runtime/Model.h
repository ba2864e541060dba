//===- Model.h - Loading and running compiled Kiln packages ----*- C++ -*-===//
//
// This file declares kiln::Model, the C++ API of a compiled package (the
// folder `kiln compile` writes): Model::load opens the package library
// (DIR/lib<name>.so), checks its ABI version, reads DIR/manifest.json, maps
// DIR/weights.bin and binds the weights; Model::run checks the inputs against
// the signature and calls the compiled code. docs/runtime-api.md describes the
// package and the C ABI.
//
// Thread safety: a loaded Model is immutable. run() is const and may be
// called from several threads at once: each call allocates its own outputs
// and takes its own scratch arena (<name>_arena_bytes(), 64-byte
// aligned) from a small pool guarded by a mutex, so concurrent calls never
// share scratch memory. Loading, moving and destroying a Model must not race
// with run() on the same Model.
//
// A package compiled with --target cuda ("target": "cuda" in manifest.json,
// or <name>_target() returning "cuda") loads its kernels into the
// process's CUDA context, uploads the weights to the device once, and runs
// each call on its own pooled stream and device arena; loading it where
// CUDA is unavailable fails with the reason (docs/cuda-backend.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// How Model::load binds weights.
struct LoadOptions {
  /// Folder where weights stored outside the package (ONNX external data,
  /// `kiln compile --weights external`) are looked up first; the package
  /// folder is tried next. Empty: the package folder only.
  std::string weightsDir;
  /// Weights supplied by the caller, by name. They take precedence over the
  /// package's data and are required for weights the package has no data
  /// for. Each must match the declared dtype and shape; non-contiguous or
  /// unaligned tensors are copied, others are used in place (the Model keeps
  /// a reference to their storage).
  NamedTensors weights;
};

/// How a cuda package's run used CUDA graphs (RunOptions::graphUse).
enum class GraphUse {
  /// Launched directly: graphs are off (RunOptions::cudaGraphs, or
  /// KILN_CUDA_GRAPHS=0), the run is profiled (RunOptions::trace), or the
  /// package is not a cuda graph package.
  Off,
  /// Launched directly: the package has steps on the host, an earlier
  /// capture of these addresses failed, the stream cannot be captured, or
  /// another run was using these addresses' graph.
  Ineligible,
  /// Launched directly: the first run with these input, output and arena
  /// addresses (the next one captures).
  Warmup,
  /// Captured into a CUDA graph, which was then launched.
  Captured,
  /// Replayed the graph an earlier run with the same addresses captured.
  Replayed,
};

/// "off", "ineligible", "warmup", "captured" or "replayed".
const char *graphUseName(GraphUse use);

/// How Model::run returns its results.
struct RunOptions {
  /// Where the outputs are returned. A cuda package's outputs are copied to
  /// the CPU by default; Device::CUDA leaves them on the device (no copy:
  /// for benchmarks and chained models). A cpu package's outputs are
  /// copied to the device when CUDA is asked for.
  Device outputDevice = Device::CPU;
  /// A program package (one with graph breaks): when given, receives the
  /// counts of this run (graphs called, eager regions and ops, branches,
  /// loop iterations, bytes copied to and from the GPU). Left alone for a
  /// package without breaks.
  ProgramStats *stats = nullptr;
  /// A cuda package (without graph breaks): when given, receives the device
  /// time of the run in milliseconds, measured by two CUDA events on the
  /// run's stream around its copies and kernels (what torch.cuda.Event
  /// timing measures). The wall-clock time of run() adds the host's work
  /// and the wait for the stream. Left alone for other packages.
  double *deviceMilliseconds = nullptr;
  /// When given, the outputs named in it are written into those tensors
  /// instead of freshly allocated ones, and are not returned by run() (the
  /// returned list holds the other outputs, in signature order, placed as
  /// `outputDevice` says). Each tensor must be of the output's declared
  /// dtype and shape, contiguous, and on the package's device: CPU tensors
  /// for a cpu package, CUDA tensors for a cuda package. One that is not
  /// 64-byte aligned is written through an aligned temporary and copied
  /// into. An output tensor may share its storage with an input of the same
  /// call (an in-place update: safe for elementwise graphs such as a
  /// compiled optimizer, which read and write each index once); two outputs
  /// must not share storage. Names that are not outputs, or repeated, are
  /// errors. Program packages (graph breaks) reject it. On error the
  /// tensors' contents are unspecified.
  NamedTensors *outputsInto = nullptr;
  /// Stops the run with an error at the first result that holds a NaN or an
  /// infinity (`--check-nan`, like PyTorch's anomaly mode). A program
  /// package (graph breaks) checks every op of its eager regions and every
  /// compiled graph's results, naming the node; a package compiled whole
  /// checks its outputs, and the error says how to find the ONNX node (the
  /// reference runtime: `kiln run MODEL.onnx --check-nan`). Off by default.
  bool checkNan = false;
  /// Scratch memory supplied by the caller instead of an arena from the
  /// Model's pool: at least arenaBytes() bytes, 64-byte aligned (256 on the
  /// device), host memory for a cpu package and device memory for a cuda
  /// one, used by one run at a time. A caller running several models one
  /// after another (kiln::Trainer's forward, backward and optimizer) shares
  /// one buffer of the largest size instead of keeping an arena per model.
  /// Program packages ignore it.
  void *arena = nullptr;
  /// A cuda package: the CUDA stream (a cudaStream_t the caller owns) to
  /// run on instead of a pooled one. When the run leaves nothing temporary
  /// behind (inputs on the device and aligned, outputs on the device,
  /// RunOptions::arena given, no deviceMilliseconds) it returns with its
  /// work still queued: the caller synchronises the stream before reading
  /// the outputs or reusing the inputs or the arena (kiln::Trainer runs its
  /// three graphs this way and waits once per step). Otherwise it waits as
  /// usual. Other packages ignore it.
  void *stream = nullptr;
  /// A cpu package: how many threads its generated kernels and oneDNN
  /// library calls use in this run (one OpenMP pool; the runtime's OpenBLAS
  /// fallbacks keep their own). 0: all of OpenMP's (OMP_NUM_THREADS, or
  /// one per core) while this is the process's only CPU run in flight, one
  /// while other threads run packages too (and then the BLAS library runs
  /// on the calling thread as well), so that concurrent runs do not
  /// oversubscribe the cores. Cuda packages ignore it.
  int threads = 0;
  /// A cuda package: whether runs may replay CUDA graphs, so that a run
  /// costs one launch on the host instead of one per kernel and library
  /// call. The first run with a given set of input, output and arena
  /// addresses launches directly, the second captures its launches into a
  /// graph, later ones replay it. Inputs from the host and outputs the run
  /// allocates are staged in buffers kept for those addresses (one arena
  /// per address set too, at most four sets per Model): pass device inputs
  /// and RunOptions::outputsInto to avoid the copies. Packages with steps on
  /// the host never capture. KILN_CUDA_GRAPHS=0 turns graphs off for the
  /// process. Other packages ignore it.
  bool cudaGraphs = true;
  /// A cuda package: when given, receives how this run used CUDA graphs.
  GraphUse *graphUse = nullptr;
  /// When given, the run adds timed spans to this trace (kiln/runtime/
  /// Trace.h; write it with Trace::writeJson and open it in
  /// ui.perfetto.dev): one for the whole run (category "run", named after
  /// the package folder), one per step of a compiled graph ("kernel",
  /// "library", "reference", "copy"; its ONNX nodes in "args"), and in a
  /// program package one per op of its graph breaks ("eager") and per
  /// eager region ("graph_break"), its compiled graphs' runs nested. A cpu
  /// package's steps are timed by the steady clock; a cuda package's by
  /// CUDA events recorded on its stream around each step (the run launches
  /// directly, never through a CUDA graph, and waits for its stream). A
  /// package compiled by an older Kiln, without the profiler export, adds
  /// the run's span only. Costs a little time per step; off by default.
  Trace *trace = nullptr;
};

/// A value a graph package hands to the next graph, or takes from the
/// previous one, in the caller's scratch arena (RunOptions::arena): a
/// training package's saved activations, which its forward graph leaves
/// where its backward graph reads them. Not among inputs() or outputs().
struct ArenaValueSignature {
  ValueSignature value;
  /// Its byte offset in the arena.
  size_t offset = 0;
  /// True when the graph reads it (a run needs RunOptions::arena holding
  /// what the previous graph left there); false when it leaves it.
  bool isInput = false;
};

/// A compiled model, loaded from its package folder. Move-only; releasing
/// it destroys the model handle, unmaps the weights and closes the library.
class Model {
public:
  /// Loads the package in `dir`. Errors name the package file (lib<name>.so,
  /// manifest.json, weights.bin or an external data file) and, for weights,
  /// the weight.
  static Expected<Model> load(const std::string &dir,
                              const LoadOptions &options = {});

  Model(Model &&other) noexcept;
  Model &operator=(Model &&other) noexcept;
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model();

  /// The inputs, outputs and weights with their static dtypes and shapes,
  /// as the library declares them.
  const std::vector<ValueSignature> &inputs() const;
  const std::vector<ValueSignature> &outputs() const;
  const std::vector<ValueSignature> &weights() const;
  /// The package folder this model was loaded from.
  const std::string &directory() const;
  /// Scratch bytes one run needs.
  size_t arenaBytes() const;
  /// The values this graph hands over in the arena (empty for most
  /// packages; see ArenaValueSignature).
  const std::vector<ArenaValueSignature> &arenaValues() const;
  /// Where the compiled code runs: Device::CPU for a cpu package,
  /// Device::CUDA for a package compiled with --target cuda.
  Device device() const;

  /// Runs the model. `inputs` are matched by name (any order); each must be
  /// a CPU tensor of the declared dtype and shape ("input 'x': expected
  /// f32[4, 16] but got f32[4, 8]"); non-contiguous or unaligned tensors
  /// are copied, others are passed in place.
  /// Returns the outputs in signature order, freshly allocated. Safe to call
  /// concurrently (see the file comment).
  Expected<NamedTensors> run(const NamedTensors &inputs) const;
  /// Runs the model with options. A cuda package accepts CPU or CUDA input
  /// tensors (CPU ones are copied to the device; CUDA ones must be
  /// contiguous) and runs on a stream and device arena of its own (pooled),
  /// waiting for the stream before it returns.
  Expected<NamedTensors> run(const NamedTensors &inputs,
                             const RunOptions &options) const;

private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  /// run() without the span of the whole run (RunOptions::trace).
  Expected<NamedTensors> runUntraced(const NamedTensors &inputs,
                                     const RunOptions &options) const;
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln

#endif // KILN_RUNTIME_MODEL_H
