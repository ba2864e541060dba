//===- CudaGraphCache.h - A cuda package's captured runs -------*- C++ -*-===//
//
// This file declares CudaGraphCache: the CUDA graphs of one loaded cuda
// package, one per set of addresses a run is given (its inputs, outputs and
// scratch arena). A run's launches bake those addresses into their
// arguments, so a graph replays only a run with the same ones; inputs from
// the host and outputs the run allocates live in buffers the entry owns, so
// that their addresses stay the same from run to run. Internal to the
// runtime (CudaPackage uses it).
//
// An entry runs its first run directly on its own stream (which also lets
// cuDNN and cuBLASLt build their plans and workspaces for that stream
// outside a capture), captures the second (cuStreamBeginCapture, thread
// local), instantiates it and launches it, and replays it from then on with
// one cuGraphLaunch. A capture that fails (a library call that synchronises,
// say) marks the entry as direct for good and the run is made again
// directly: nothing runs while a stream is captured. An entry is used by one
// run at a time; a run that finds its entry busy runs directly, unpooled.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDAGRAPHCACHE_H
#define KILN_RUNTIME_LIB_CUDA_CUDAGRAPHCACHE_H

#include "kiln/runtime/Model.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln {

/// The addresses a run passes to the package's <name>_run_cuda: null
/// for an input staged in (or an output written to) a buffer of the entry,
/// and for the arena when the entry's own is used.
struct CudaGraphKey {
  std::vector<const void *> inputs;
  std::vector<void *> outputs;
  void *arena = nullptr;
  /// The run's sizes (a package compiled for ranges of sizes): launch grids
  /// and library shapes follow them, so a graph replays only the same.
  std::vector<int64_t> sizes;
  bool operator==(const CudaGraphKey &o) const {
    return inputs == o.inputs && outputs == o.outputs && arena == o.arena &&
           sizes == o.sizes;
  }
};

/// One address set's buffers, stream and (once captured) graph.
struct CudaGraphEntry {
  CudaGraphKey key;
  /// The staged inputs' and owned outputs' buffers (undefined where the key
  /// has an address), and the arena when the key has none.
  std::vector<Tensor> inputs, outputs;
  void *arena = nullptr;
  /// The entry's stream; its captured graph replays there.
  void *stream = nullptr;
  /// Joins a caller's stream with the entry's (CU_EVENT_DISABLE_TIMING).
  void *before = nullptr, *after = nullptr;
  void *exec = nullptr; ///< CUgraphExec, once captured.
  int directRuns = 0;
  bool direct = false; ///< A capture failed: always runs directly.
  bool busy = false;
  uint64_t lastUse = 0;
};

/// The graph entries of one package (at most kMaxEntries; the least
/// recently used idle one is dropped to make room). A caller whose
/// addresses change from run to run never replays: after kMaxColdEntries
/// entries made without any replay, no more are made.
class CudaGraphCache {
public:
  static constexpr size_t kMaxEntries = 4;
  static constexpr size_t kMaxColdEntries = 16;

  /// Takes or gives back an arena of the package's pool.
  using ArenaSource = std::function<Expected<void *>()>;
  using ArenaSink = std::function<void(void *)>;

  CudaGraphCache(ArenaSource takeArena, ArenaSink giveArena)
      : takeArena_(std::move(takeArena)), giveArena_(std::move(giveArena)) {}
  ~CudaGraphCache();

  /// The idle entry for `key`, marked busy (made, with buffers of the
  /// signatures' shapes, when new), or null when it is busy or the cache is
  /// full of busy entries. Errors are allocation failures.
  Expected<CudaGraphEntry *> acquire(const CudaGraphKey &key,
                                     const std::vector<ValueSignature> &inputs,
                                     const std::vector<ValueSignature> &outputs);
  void release(CudaGraphEntry *entry);

  /// Runs `launches` (the package's <name>_run_cuda on the entry's
  /// stream, returning its status code) for `entry`: directly, captured
  /// and then launched, or by replaying the graph. `callerStream`, when not
  /// null, is joined with the entry's stream before and after. Sets `use`.
  Status run(CudaGraphEntry &entry, void *callerStream,
             const std::function<Status()> &launches, GraphUse &use);

private:
  void destroy(CudaGraphEntry &entry);

  ArenaSource takeArena_;
  ArenaSink giveArena_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<CudaGraphEntry>> entries_;
  uint64_t clock_ = 0;
  size_t made_ = 0;
  bool replayed_ = false;
};

/// Whether CUDA graphs are turned off for the process (KILN_CUDA_GRAPHS=0).
bool cudaGraphsDisabledByEnvironment();

} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUDAGRAPHCACHE_H
