//===- CudaPackage.h - The CUDA half of a loaded package -------*- C++ -*-===//
//
// This file declares CudaPackage, what kiln::Model holds for a package
// compiled with --target cuda: the CUDA module loaded from kernels.cubin (or
// kernels.ptx), the kernels resolved by name, the weights uploaded to the
// device, and a pool of device arenas. It runs the model on a stream from
// the runtime's pool. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDAPACKAGE_H
#define KILN_RUNTIME_LIB_CUDA_CUDAPACKAGE_H

#include "CudaGraphCache.h"

#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Model.h"
#include "kiln/runtime/ModelABI.h"
#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {

/// The CUDA entry points of a cuda package's library.
struct CudaModelAbi {
  kiln_model_num_kernels_fn numKernels = nullptr;
  kiln_model_kernel_name_fn kernelName = nullptr;
  kiln_model_create_cuda_fn create = nullptr;
  kiln_model_run_cuda_fn run = nullptr;
  /// A package compiled for ranges of sizes: <name>_run_sized, else null.
  kiln_model_run_sized_cuda_fn runSized = nullptr;
};

/// The device side of a loaded cuda package.
class CudaPackage {
public:
  /// Loads DIR/kernels.cubin (falling back to DIR/kernels.ptx when the cubin
  /// does not load on this GPU), resolves the kernels that the library names,
  /// uploads `hostWeights` and calls <name>_create_cuda, storing the
  /// handle in `handle`. `hostSteps`: the package runs steps on the host
  /// (its runs are never captured into CUDA graphs). Errors name the file
  /// or kernel.
  static Expected<std::unique_ptr<CudaPackage>>
  load(const std::string &dir, const std::string &libPath,
       const CudaModelAbi &abi, const std::vector<Tensor> &hostWeights,
       size_t arenaBytes, bool hostSteps, kiln_model *&handle);
  ~CudaPackage();

  /// Runs the model on a pooled stream and arena, or replays its CUDA graph
  /// for these addresses (CudaGraphCache.h). `inputs` are in signature
  /// order and already checked (dtype and shape; CPU or CUDA).
  /// `outputTargets` has one entry per output: a checked, contiguous CUDA
  /// tensor to write it into (RunOptions::outputsInto; an unaligned one
  /// through a device temporary), or nullptr. The other outputs are
  /// returned on `options.outputDevice`. Waits for the stream before
  /// returning, except on the caller's RunOptions::stream when the run
  /// leaves nothing temporary behind (no staged input or output, the
  /// caller's arena, outputs on the device, no timing).
  /// RunOptions::deviceMilliseconds receives the device time of the run's
  /// copies and kernels; RunOptions::graphUse how it used a graph. A run
  /// with RunOptions::trace launches directly (no CUDA graph: its steps
  /// record events) and waits for its stream.
  /// `sizes`: one per size symbol of a package compiled for ranges of
  /// sizes (the signatures then have those sizes), else empty.
  Expected<NamedTensors> run(kiln_model *handle,
                             const std::vector<ValueSignature> &inputSigs,
                             const std::vector<const Tensor *> &inputs,
                             const std::vector<ValueSignature> &outputSigs,
                             const std::vector<const Tensor *> &outputTargets,
                             const std::vector<int64_t> &sizes,
                             const RunOptions &options) const;

private:
  CudaPackage() = default;
  Expected<void *> acquireArena() const;
  void releaseArena(void *arena) const;

  std::string libPath_;
  CudaModelAbi abi_;
  void *module_ = nullptr; ///< CUmodule.
  std::vector<void *> functions_;
  std::vector<Tensor> deviceWeights_;
  size_t arenaBytes_ = 0;
  mutable std::mutex arenaMutex_;
  mutable std::vector<void *> freeArenas_;
  bool hostSteps_ = false;
  /// Created by load(); mutable like the arena pool.
  std::unique_ptr<CudaGraphCache> graphs_;
};

} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUDAPACKAGE_H
