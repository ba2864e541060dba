//===- ModelImpl.h - What kiln::Model's files share --------------*- C++
//-*-===//
//
// This file declares, inside the runtime, the state of a loaded package
// (Model::Impl: the package library and its C ABI entry points, the signature,
// the bound weights, the device side, the arena pool) and the tensor helpers
// that its loader (Model.cpp) and its run path (ModelRun.cpp) both use:
// type strings, 64-byte aligned tensors, and the checks of given tensors
// against a signature entry.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_MODELIMPL_H
#define KILN_RUNTIME_LIB_MODELIMPL_H

#include "kiln/runtime/Model.h"
#include "kiln/runtime/SymbolicDim.h"

#include "ProgramPackage.h"
#include "SharedLibrary.h"
#include "cuda/CudaPackage.h"
#include "kiln/runtime/ModelABI.h"
#include "kiln/runtime/PackageManifest.h"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {

namespace modelimpl {

/// Alignment of the weights, inputs, outputs and arenas given to the library.
constexpr size_t kAlignment = 64;

/// The C ABI's entry points, resolved from the package library.
struct AbiFunctions {
  kiln_model_abi_version_fn abiVersion = nullptr;
  kiln_model_count_fn numInputs = nullptr;
  kiln_model_count_fn numOutputs = nullptr;
  kiln_model_count_fn numWeights = nullptr;
  kiln_model_name_fn inputName = nullptr;
  kiln_model_name_fn outputName = nullptr;
  kiln_model_name_fn weightName = nullptr;
  kiln_model_dtype_fn inputDType = nullptr;
  kiln_model_dtype_fn outputDType = nullptr;
  kiln_model_dtype_fn weightDType = nullptr;
  kiln_model_rank_fn inputRank = nullptr;
  kiln_model_rank_fn outputRank = nullptr;
  kiln_model_rank_fn weightRank = nullptr;
  kiln_model_shape_fn inputShape = nullptr;
  kiln_model_shape_fn outputShape = nullptr;
  kiln_model_shape_fn weightShape = nullptr;
  kiln_model_arena_bytes_fn arenaBytes = nullptr;
  kiln_model_create_fn create = nullptr;
  kiln_model_run_fn run = nullptr;
  /// Packages compiled for ranges of sizes only.
  kiln_model_run_sized_fn runSized = nullptr;
  kiln_model_destroy_fn destroy = nullptr;
  /// Optional (cpu packages of this Kiln): the number of threads the calling
  /// thread's kernels use from now on; 0 restores the package's default.
  kiln_model_set_threads_fn setThreads = nullptr;
  /// Optional (packages of this Kiln, both targets): installs profiler
  /// hooks for the calling thread's runs (RunOptions::trace).
  kiln_model_set_profiler_fn setProfiler = nullptr;
  /// Cuda packages only.
  CudaModelAbi cuda;
};

/// "f32[4, 16]".
std::string typeString(DType dtype, const Shape &shape);

/// A fresh, uninitialised, 64-byte aligned CPU tensor.
Tensor allocateUninitialised(DType dtype, const Shape &shape);

/// Buffers of a Model's outputs that the caller has dropped, reused by its
/// later runs when the size matches (as ONNX Runtime's arena and PyTorch's
/// caching allocator reuse memory): a large output is then neither fresh
/// pages (page faults in the kernel) nor memory the caches have not seen.
/// At most `maxBuffers` idle buffers are kept (others are freed); the
/// output tensors' deleters hold the pool, so it outlives its Model while
/// any output is alive. Thread-safe.
class OutputPool : public std::enable_shared_from_this<OutputPool> {
public:
  explicit OutputPool(size_t maxBuffers) : maxBuffers_(maxBuffers) {}
  ~OutputPool();
  OutputPool(const OutputPool &) = delete;
  OutputPool &operator=(const OutputPool &) = delete;

  /// An uninitialised, kAlignment-aligned CPU tensor: an idle buffer of the
  /// same rounded size, or a new one; an undefined tensor when out of
  /// memory.
  Tensor allocate(DType dtype, const Shape &shape);

private:
  void release(void *p, size_t rounded);

  std::mutex mutex_;
  std::vector<std::pair<size_t, void *>> idle_;
  size_t maxBuffers_;
};

/// Whether `p` is kAlignment-aligned.
bool isAligned(const void *p);

/// A contiguous, 64-byte aligned tensor with the contents of `t`: `t` itself
/// when it already is one.
Tensor alignedContiguous(const Tensor &t);

/// Checks one tensor against its static signature; `cudaPackage` also
/// accepts CUDA tensors.
Status checkTensor(const ValueSignature &sig, const Tensor &t,
                   const char *kind, bool cudaPackage = false);

/// The caller's tensor for each output, in signature order (nullptr where
/// run() allocates it), from RunOptions::outputsInto, checked: known names
/// given once, the declared dtype and shape, contiguous, on `device` (the
/// package's).
Expected<std::vector<const Tensor *>>
outputTargets(const std::vector<ValueSignature> &outputs,
              const NamedTensors *into, Device device);

} // namespace modelimpl

struct Model::Impl {
  std::string dir;
  std::string libPath;
  // Destroyed last: everything below may point into the library.
  SharedLibrary library;
  modelimpl::AbiFunctions abi;
  std::vector<ValueSignature> inputs, outputs, weights;
  /// A package compiled for ranges of sizes: its size symbols (the
  /// signature's -1 dims name them, or for outputs a product of them, in
  /// ValueSignature::dimNames); empty for static shapes.
  std::vector<SizeSymbol> sizeSymbols;
  /// The bound weights, in ABI order; they own (or keep mapped) the bytes
  /// that the handle points to.
  std::vector<Tensor> weightTensors;
  kiln_model *handle = nullptr;
  size_t arenaBytes = 0;
  /// The manifest's memory_plan.arena_values.
  std::vector<ArenaValueSignature> arenaValues;
  /// The device side of a cuda package (null for a cpu package). Destroyed
  /// after the handle (the destructor body runs first).
  std::unique_ptr<CudaPackage> cuda;
  /// A program package (graph breaks): everything else is unused.
  std::unique_ptr<ProgramPackage> program;

  /// The CPU outputs' buffers, reused across runs (two runs' worth).
  std::shared_ptr<modelimpl::OutputPool> outputPool;

  /// Arenas not in use; run() takes one or allocates a new one.
  using Arena = std::unique_ptr<void, decltype(&std::free)>;
  std::mutex arenaMutex;
  std::vector<Arena> freeArenas;

  ~Impl() {
    if (handle && abi.destroy)
      abi.destroy(handle);
  }

  /// A package compiled for ranges of sizes (manifest "size_symbols"):
  /// resolves <prefix>_run_sized and names the signature's -1 dims.
  Status bindSizeSymbols(const PackageManifest &manifest,
                         const std::string &manifestPath,
                         const std::string &prefix, bool cuda);
  Status bindWeights(const PackageManifest &manifest,
                     const std::string &manifestPath,
                     const LoadOptions &options);
  Arena acquireArena();
  void releaseArena(Arena arena);
};

} // namespace kiln

#endif // KILN_RUNTIME_LIB_MODELIMPL_H
