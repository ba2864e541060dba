//===- CudaPackage.cpp - The CUDA half of a loaded package ----------------===//
//
// This file implements CudaPackage: loading the package's kernels
// (cuModuleLoadData of kernels.cubin; when that fails and kernels.ptx
// exists, the PTX, which the driver JIT-compiles for this GPU), resolving
// each kernel name of the package library to a CUfunction, uploading the
// weights once, and running: CPU inputs are copied to the device on the run's
// stream, outputs are allocated on the device (and copied back to the CPU
// unless the caller keeps them on the device) or written into the caller's
// device tensors (RunOptions::outputsInto), the arena comes from a pool, and
// the stream is synchronised before the run returns, so every buffer the
// run used may be reused when it returns.
//
//===----------------------------------------------------------------------===//

#include "CudaPackage.h"

#include "kiln/runtime/Cuda.h"

#ifdef KILN_HAVE_CUDA
#include "CudaDriver.h"
#endif

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kiln {

#ifdef KILN_HAVE_CUDA

namespace {

/// Alignment required of device inputs passed in place.
constexpr uintptr_t kDeviceAlignment = 64;

Expected<std::string> readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(strCat(path.string(), ": cannot be read"));
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// The run's stream, synchronised on destruction (so that buffers destroyed
/// after it are idle even on early error returns) unless the run cleared
/// `synchronise`; a pooled one is given back then.
struct StreamLease {
  void *stream = nullptr;
  bool pooled = true;
  bool synchronise = true;
  ~StreamLease() {
    if (synchronise)
      (void)cuda::synchronize(stream);
    if (pooled)
      cuda::releaseStream(stream);
  }
};

/// Whether an output went through a device temporary (an unaligned target).
bool anyStagedOutput(const std::vector<Tensor> &deviceOutputs,
                     const std::vector<const Tensor *> &targets) {
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i] && deviceOutputs[i].defined())
      return true;
  return false;
}

/// The addresses a run passes in place: aligned, contiguous device inputs
/// and aligned output targets (null: staged in a temporary or in a CUDA
/// graph entry's buffer). A non-contiguous device input is an error.
Expected<CudaGraphKey> addressesOf(const std::vector<ValueSignature> &sigs,
                                   const std::vector<const Tensor *> &inputs,
                                   const std::vector<const Tensor *> &targets,
                                   void *callerArena) {
  CudaGraphKey key;
  key.arena = callerArena;
  auto aligned = [](const void *p) {
    return reinterpret_cast<uintptr_t>(p) % kDeviceAlignment == 0;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = *inputs[i];
    if (t.device() == Device::CUDA && !t.isContiguous())
      return Status::error(strCat("input '", sigs[i].name,
                                  "': the cuda tensor ", t.typeString(),
                                  " is not contiguous; pass a contiguous "
                                  "one (or a CPU tensor)"));
    bool inPlace = t.device() == Device::CUDA && aligned(t.rawData());
    key.inputs.push_back(inPlace ? t.rawData() : nullptr);
  }
  for (const Tensor *target : targets)
    key.outputs.push_back(target && aligned(target->rawData())
                              ? target->rawData()
                              : nullptr);
  return key;
}

/// Copies the inputs that `pointers` has no address for, on `stream`, into
/// the entry's buffers or new device tensors (kept in `keep`; CPU sources in
/// `hostKeep`, alive until the stream is synchronised), and sets their
/// addresses.
Status stageInputs(const std::vector<ValueSignature> &sigs,
                   const std::vector<const Tensor *> &inputs,
                   const CudaGraphEntry *entry, void *stream,
                   std::vector<const void *> &pointers,
                   std::vector<Tensor> &keep, std::vector<Tensor> &hostKeep) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (pointers[i])
      continue;
    const Tensor &t = *inputs[i];
    const std::string &name = sigs[i].name;
    Tensor dev;
    if (entry) {
      dev = entry->inputs[i];
    } else {
      Expected<Tensor> fresh =
          Tensor::empty(t.dtype(), t.shape(), Device::CUDA);
      if (!fresh)
        return fresh.status().withContext(strCat("input '", name, "'"));
      dev = fresh.take();
    }
    if (t.device() == Device::CUDA) {
      KILN_RETURN_IF_ERROR(cuda::copy(dev.rawData(), t.rawData(), t.nbytes(),
                                      cuda::CopyKind::DeviceToDevice, stream,
                                      false));
    } else {
      Tensor host = t.contiguous();
      KILN_RETURN_IF_ERROR(cuda::copy(dev.rawData(), host.rawData(),
                                      t.nbytes(), cuda::CopyKind::HostToDevice,
                                      stream, false)
                               .withContext(strCat("input '", name, "'")));
      hostKeep.push_back(std::move(host));
    }
    pointers[i] = dev.rawData();
    keep.push_back(std::move(dev));
  }
  return Status::ok();
}

/// The outputs the run wrote into `deviceOutputs` (the others went into
/// their targets in place): copied into unaligned targets, else returned on
/// `device` (the device tensor itself, or a copy when it is a CUDA graph
/// entry's buffer, which the next run reuses: `reused`).
Status returnOutputs(const std::vector<ValueSignature> &sigs,
                     const std::vector<const Tensor *> &targets,
                     const std::vector<Tensor> &deviceOutputs, bool reused,
                     Device device, void *stream, NamedTensors &outputs) {
  for (size_t i = 0; i < sigs.size(); ++i) {
    if (!deviceOutputs[i].defined())
      continue; // Written in place.
    const ValueSignature &sig = sigs[i];
    if (const Tensor *target = targets[i]) {
      if (target->nbytes())
        KILN_RETURN_IF_ERROR(
            cuda::copy(target->rawData(), deviceOutputs[i].rawData(),
                       target->nbytes(), cuda::CopyKind::DeviceToDevice,
                       stream, false)
                .withContext(strCat("output '", sig.name, "'")));
      continue;
    }
    if (device == Device::CUDA && !reused) {
      outputs.emplace_back(sig.name, deviceOutputs[i]);
      continue;
    }
    Expected<Tensor> out = Tensor::empty(sig.dtype, sig.shape, device);
    if (!out)
      return out.status().withContext(strCat("output '", sig.name, "'"));
    KILN_RETURN_IF_ERROR(cuda::copy(
        out->rawData(), deviceOutputs[i].rawData(), out->nbytes(),
        device == Device::CUDA ? cuda::CopyKind::DeviceToDevice
                               : cuda::CopyKind::DeviceToHost,
        stream, false));
    outputs.emplace_back(sig.name, out.take());
  }
  return Status::ok();
}

} // namespace

Expected<std::unique_ptr<CudaPackage>>
CudaPackage::load(const std::string &dir, const std::string &libPath,
                  const CudaModelAbi &abi,
                  const std::vector<Tensor> &hostWeights, size_t arenaBytes,
                  bool hostSteps, kiln_model *&handle) {
  Expected<const cuda::Driver *> dr = cuda::driver();
  if (!dr)
    return dr.status();
  const cuda::Driver &d = **dr;
  std::unique_ptr<CudaPackage> pkg(new CudaPackage());
  pkg->libPath_ = libPath;
  pkg->abi_ = abi;
  pkg->arenaBytes_ = arenaBytes;
  pkg->hostSteps_ = hostSteps;
  CudaPackage *self = pkg.get();
  pkg->graphs_ = std::make_unique<CudaGraphCache>(
      [self] { return self->acquireArena(); },
      [self](void *arena) { self->releaseArena(arena); });

  // The kernels.
  fs::path cubin = fs::path(dir) / "kernels.cubin";
  fs::path ptx = fs::path(dir) / "kernels.ptx";
  std::error_code ec;
  bool haveCubin = fs::is_regular_file(cubin, ec);
  bool havePtx = fs::is_regular_file(ptx, ec);
  if (!haveCubin && !havePtx)
    return Status::error(strCat(cubin.string(),
                                ": missing (and no kernels.ptx); the package "
                                "is incomplete, recompile it with kiln "
                                "compile --target cuda"));
  CUmodule module = nullptr;
  std::string cubinError;
  if (haveCubin) {
    Expected<std::string> image = readFile(cubin);
    if (!image)
      return image.status();
    CUresult r = d.moduleLoadData(&module, image->data());
    if (r != CUDA_SUCCESS) {
      module = nullptr;
      cubinError =
          cuda::errorMessage(d, r,
                             strCat(cubin.string(), ": cannot be loaded on ",
                                    cuda::deviceDescription()));
    }
  }
  if (!module && havePtx) {
    Expected<std::string> text = readFile(ptx);
    if (!text)
      return text.status();
    // cuModuleLoadData takes PTX as a NUL-terminated string.
    CUresult r = d.moduleLoadData(&module, text->c_str());
    if (r != CUDA_SUCCESS)
      return Status::error(
          (cubinError.empty() ? "" : cubinError + "; ") +
          cuda::errorMessage(d, r,
                             strCat(ptx.string(),
                                    ": cannot be JIT-compiled "
                                    "for ",
                                    cuda::deviceDescription())) +
          " (recompile the package with this CUDA toolkit's kiln)");
  }
  if (!module)
    return Status::error(cubinError +
                         " (and the package has no kernels.ptx to JIT; "
                         "recompile it for this GPU)");
  pkg->module_ = module;

  int count = abi.numKernels();
  if (count < 0)
    return Status::error(strCat(libPath, ": reports ", count,
                                " kernels; recompile the package"));
  for (int i = 0; i < count; ++i) {
    const char *name = abi.kernelName(i);
    if (!name)
      return Status::error(strCat(libPath, ": kernel ", i, " has no name"));
    CUfunction fn = nullptr;
    CUresult r = d.moduleGetFunction(&fn, module, name);
    if (r != CUDA_SUCCESS)
      return Status::error(cuda::errorMessage(
          d, r,
          strCat(dir, ": kernel '", name, "' (", i,
                 ") that the library launches is not in the loaded kernels "
                 "(the package is inconsistent; recompile it)")));
    pkg->functions_.push_back(fn);
  }

  // The weights, uploaded once.
  std::vector<const void *> weightPointers;
  for (const Tensor &w : hostWeights) {
    Expected<Tensor> dev = w.to(Device::CUDA);
    if (!dev)
      return dev.status().withContext(
          strCat(dir, ": uploading a weight ", w.typeString()));
    weightPointers.push_back(dev->rawData());
    pkg->deviceWeights_.push_back(dev.take());
  }

  char err[1024] = {0};
  kiln_model *h = nullptr;
  int rc = abi.create(weightPointers.data(), pkg->functions_.data(), &h, err,
                      sizeof(err));
  err[sizeof(err) - 1] = 0;
  if (rc != 0 || !h)
    return Status::error(strCat(
        libPath, ": creating the model failed: ", err[0] ? err : "no message"));
  handle = h;
  return pkg;
}

CudaPackage::~CudaPackage() {
  // The graphs launch the module's kernels and give their arenas back.
  graphs_.reset();
  for (void *a : freeArenas_)
    cuda::deallocate(a);
  if (module_)
    if (Expected<const cuda::Driver *> d = cuda::driver())
      (*d)->moduleUnload(static_cast<CUmodule>(module_));
}

Expected<void *> CudaPackage::acquireArena() const {
  {
    std::lock_guard<std::mutex> lock(arenaMutex_);
    if (!freeArenas_.empty()) {
      void *a = freeArenas_.back();
      freeArenas_.pop_back();
      return a;
    }
  }
  return cuda::allocate(arenaBytes_);
}

void CudaPackage::releaseArena(void *arena) const {
  std::lock_guard<std::mutex> lock(arenaMutex_);
  freeArenas_.push_back(arena);
}

Expected<NamedTensors> CudaPackage::run(
    kiln_model *handle, const std::vector<ValueSignature> &inputSigs,
    const std::vector<const Tensor *> &inputs,
    const std::vector<ValueSignature> &outputSigs,
    const std::vector<const Tensor *> &outputTargets,
    const std::vector<int64_t> &sizes, const RunOptions &options) const {
  void *callerStream = options.stream;
  void *callerArena = options.arena;
  double *deviceMs = options.deviceMilliseconds;
  Device outputDevice = options.outputDevice;
  GraphUse unused = GraphUse::Off;
  GraphUse &use = options.graphUse ? *options.graphUse : unused;
  use = GraphUse::Off;

  Expected<CudaGraphKey> addresses =
      addressesOf(inputSigs, inputs, outputTargets, callerArena);
  if (!addresses)
    return addresses.status();
  addresses->sizes = sizes;
  const CudaGraphKey &key = *addresses;

  // The CUDA graph entry of these addresses, when graphs may be used.
  CudaGraphEntry *entry = nullptr;
  // A profiled run (RunOptions::trace) launches directly: its steps record
  // CUDA events, which a replayed graph would not. Later runs use the
  // graphs again.
  if (options.cudaGraphs && !options.trace &&
      !cudaGraphsDisabledByEnvironment()) {
    use = GraphUse::Ineligible;
    // The legacy and per-thread default streams cannot be captured.
    bool capturable = !hostSteps_ && callerStream != CU_STREAM_LEGACY &&
                      callerStream != CU_STREAM_PER_THREAD;
    if (capturable) {
      Expected<CudaGraphEntry *> e =
          graphs_->acquire(key, inputSigs, outputSigs);
      if (!e)
        return e.status();
      entry = *e;
    }
  }
  struct EntryLease {
    CudaGraphCache &cache;
    CudaGraphEntry *entry;
    ~EntryLease() {
      if (entry)
        cache.release(entry);
    }
  } entryLease{*graphs_, entry};

  // Declared before the stream lease: destroyed after it has synchronised.
  std::vector<Tensor> keep, hostKeep, deviceOutputs(outputSigs.size());
  cuda::StreamTimer timer;
  Expected<void *> streamOr =
      callerStream ? Expected<void *>(callerStream)
      : entry      ? Expected<void *>(entry->stream)
                   : cuda::acquireStream();
  if (!streamOr)
    return streamOr.status();
  StreamLease lease{*streamOr, /*pooled=*/!callerStream && !entry};
  void *stream = lease.stream;
  if (deviceMs)
    KILN_RETURN_IF_ERROR(timer.start(stream));

  // Inputs on the device.
  std::vector<const void *> inputPointers = key.inputs;
  KILN_RETURN_IF_ERROR(stageInputs(inputSigs, inputs, entry, stream,
                                   inputPointers, keep, hostKeep));

  // Outputs: the caller's device tensors where given (aligned ones written
  // in place), else the entry's buffers or new device tensors.
  std::vector<void *> outputPointers = key.outputs;
  for (size_t i = 0; i < outputSigs.size(); ++i) {
    if (outputPointers[i])
      continue;
    if (entry) {
      deviceOutputs[i] = entry->outputs[i];
    } else {
      const ValueSignature &sig = outputSigs[i];
      Expected<Tensor> t = Tensor::empty(sig.dtype, sig.shape, Device::CUDA);
      if (!t)
        return t.status().withContext(strCat("output '", sig.name, "'"));
      deviceOutputs[i] = t.take();
    }
    outputPointers[i] = deviceOutputs[i].rawData();
  }

  // The caller's scratch memory (RunOptions::arena), the entry's, or a
  // pooled arena.
  Expected<void *> acquired = callerArena ? Expected<void *>(callerArena)
                              : entry     ? Expected<void *>(entry->arena)
                                          : acquireArena();
  if (!acquired)
    return Status::error(strCat(libPath_, ": cannot allocate the ", arenaBytes_,
                                "-byte device arena: ",
                                acquired.status().message()));
  void *arena = *acquired;
  bool pooledArena = !callerArena && !entry;
  auto launches = [&](void *on) -> Status {
    char err[1024] = {0};
    int rc = abi_.runSized
                 ? abi_.runSized(handle, sizes.data(), inputPointers.data(),
                                 outputPointers.data(), arena, on, err,
                                 sizeof(err))
                 : abi_.run(handle, inputPointers.data(),
                            outputPointers.data(), arena, on, err,
                            sizeof(err));
    err[sizeof(err) - 1] = 0;
    if (rc != 0)
      return Status::error(
          strCat(libPath_, ": run failed: ", err[0] ? err : "no message"));
    return Status::ok();
  };
  Status status =
      entry ? graphs_->run(*entry, callerStream,
                           [&] { return launches(entry->stream); }, use)
            : launches(stream);
  NamedTensors outputs;
  if (status)
    status = returnOutputs(outputSigs, outputTargets, deviceOutputs,
                           /*reused=*/entry != nullptr, outputDevice, stream,
                           outputs);
  if (deviceMs && status)
    status = timer.stop();
  // On the caller's stream, with nothing temporary to free, nothing to
  // read on the host and no graph entry's buffer still being read (the
  // entry serves the next run as soon as it is released), the caller waits
  // (kiln::Trainer, once per step).
  bool entryBuffers = false;
  for (const Tensor &t : deviceOutputs)
    entryBuffers |= entry && t.defined();
  bool temporaries = !keep.empty() || !hostKeep.empty() || !callerArena ||
                     deviceMs || options.trace ||
                     outputDevice != Device::CUDA || entryBuffers ||
                     anyStagedOutput(deviceOutputs, outputTargets);
  if (callerStream && status && !temporaries) {
    lease.synchronise = false;
    return outputs;
  }
  // Otherwise wait: the arena and the inputs must be idle before reuse.
  Status synced = cuda::synchronize(stream);
  if (deviceMs && status && synced) {
    Expected<double> ms = timer.elapsedMilliseconds();
    if (!ms)
      status = ms.status();
    else
      *deviceMs = *ms;
  }
  if (synced && pooledArena)
    releaseArena(arena);
  if (!status)
    return status;
  if (!synced)
    return synced.withContext(strCat(libPath_, ": running the model"));
  return outputs;
}

#else // !KILN_HAVE_CUDA

Expected<std::unique_ptr<CudaPackage>>
CudaPackage::load(const std::string &, const std::string &,
                  const CudaModelAbi &, const std::vector<Tensor> &, size_t,
                  bool, kiln_model *&) {
  return cuda::available();
}
CudaPackage::~CudaPackage() = default;
Expected<void *> CudaPackage::acquireArena() const {
  return cuda::available();
}
void CudaPackage::releaseArena(void *) const {}
Expected<NamedTensors> CudaPackage::run(kiln_model *,
                                        const std::vector<ValueSignature> &,
                                        const std::vector<const Tensor *> &,
                                        const std::vector<ValueSignature> &,
                                        const std::vector<const Tensor *> &,
                                        const RunOptions &) const {
  return cuda::available();
}

#endif // KILN_HAVE_CUDA

} // namespace kiln
