//===- CudaDriver.cpp - The CUDA driver API, loaded with dlopen -----------===//
//
// This file implements the driver loader: dlopen("libcuda.so.1") on first
// use, dlsym of every entry point by its versioned name (the signatures are
// checked against cuda.h at compile time), cuInit, the choice of device
// ($KILN_CUDA_DEVICE, default 0) and the retained primary context, made
// current on each thread that asks for the driver. It also implements
// kiln::cuda::available(), deviceDescription() and computeCapability().
// Built without the CUDA headers, those report that CUDA is not compiled in.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "kiln/runtime/Cuda.h"

#include <cstdlib>
#include <dlfcn.h>
#include <type_traits>
#include <vector>

namespace kiln {
namespace cuda {

#ifdef KILN_HAVE_CUDA

namespace {

// The table's signatures are those of the versioned symbols in cuda.h.
#define KILN_CHECK_SIGNATURE(field, symbol)                                    \
  static_assert(std::is_same_v<decltype(Driver::field), decltype(&::symbol)>,  \
                #field " does not match " #symbol " in cuda.h")
KILN_CHECK_SIGNATURE(memAlloc, cuMemAlloc_v2);
KILN_CHECK_SIGNATURE(memFree, cuMemFree_v2);
KILN_CHECK_SIGNATURE(memcpyHtoDAsync, cuMemcpyHtoDAsync_v2);
KILN_CHECK_SIGNATURE(memcpyDtoHAsync, cuMemcpyDtoHAsync_v2);
KILN_CHECK_SIGNATURE(memcpyDtoDAsync, cuMemcpyDtoDAsync_v2);
KILN_CHECK_SIGNATURE(streamDestroy, cuStreamDestroy_v2);
KILN_CHECK_SIGNATURE(eventDestroy, cuEventDestroy_v2);
KILN_CHECK_SIGNATURE(launchKernel, cuLaunchKernel);
KILN_CHECK_SIGNATURE(moduleLoadData, cuModuleLoadData);
KILN_CHECK_SIGNATURE(primaryCtxRetain, cuDevicePrimaryCtxRetain);
KILN_CHECK_SIGNATURE(deviceGetAttribute, cuDeviceGetAttribute);
KILN_CHECK_SIGNATURE(streamBeginCapture, cuStreamBeginCapture_v2);
KILN_CHECK_SIGNATURE(streamEndCapture, cuStreamEndCapture);
KILN_CHECK_SIGNATURE(graphInstantiate, cuGraphInstantiateWithFlags);
KILN_CHECK_SIGNATURE(graphLaunch, cuGraphLaunch);
#undef KILN_CHECK_SIGNATURE

/// The driver, or why it could not be set up; built once.
struct Loaded {
  Driver driver{};
  Status status;
};

template <typename Fn>
bool bind(void *lib, Fn &fn, std::initializer_list<const char *> names,
          std::string &missing) {
  for (const char *name : names)
    if (void *p = dlsym(lib, name)) {
      fn = reinterpret_cast<Fn>(p);
      return true;
    }
  missing = *names.begin();
  return false;
}

Loaded *load() {
  auto *l = new Loaded();
  Driver &d = l->driver;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l->status = Status::error(
        "no CUDA driver (libcuda.so.1 not found): run on a machine with an "
        "NVIDIA driver, or use --device cpu");
    return l;
  }
  std::string missing;
  bool ok = true;
#define KILN_BIND(field, ...)                                                  \
  ok = ok && bind(lib, d.field, {__VA_ARGS__}, missing)
  KILN_BIND(init, "cuInit");
  KILN_BIND(getErrorString, "cuGetErrorString");
  KILN_BIND(getErrorName, "cuGetErrorName");
  KILN_BIND(driverGetVersion, "cuDriverGetVersion");
  KILN_BIND(deviceGetCount, "cuDeviceGetCount");
  KILN_BIND(deviceGet, "cuDeviceGet");
  KILN_BIND(deviceGetName, "cuDeviceGetName");
  KILN_BIND(deviceGetAttribute, "cuDeviceGetAttribute");
  KILN_BIND(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  KILN_BIND(ctxSetCurrent, "cuCtxSetCurrent");
  KILN_BIND(ctxGetCurrent, "cuCtxGetCurrent");
  KILN_BIND(memAlloc, "cuMemAlloc_v2");
  KILN_BIND(memFree, "cuMemFree_v2");
  KILN_BIND(memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  KILN_BIND(memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  KILN_BIND(memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  KILN_BIND(memsetD8Async, "cuMemsetD8Async");
  KILN_BIND(streamCreate, "cuStreamCreate");
  KILN_BIND(streamDestroy, "cuStreamDestroy_v2");
  KILN_BIND(streamSynchronize, "cuStreamSynchronize");
  KILN_BIND(eventCreate, "cuEventCreate");
  KILN_BIND(eventRecord, "cuEventRecord");
  KILN_BIND(eventSynchronize, "cuEventSynchronize");
  // _v2 (CUDA 12.8+) has the same signature; older drivers have only v1.
  KILN_BIND(eventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
  KILN_BIND(eventDestroy, "cuEventDestroy_v2");
  KILN_BIND(streamWaitEvent, "cuStreamWaitEvent");
  KILN_BIND(moduleLoadData, "cuModuleLoadData");
  KILN_BIND(moduleUnload, "cuModuleUnload");
  KILN_BIND(moduleGetFunction, "cuModuleGetFunction");
  KILN_BIND(launchKernel, "cuLaunchKernel");
  KILN_BIND(funcSetAttribute, "cuFuncSetAttribute");
  KILN_BIND(streamBeginCapture, "cuStreamBeginCapture_v2");
  KILN_BIND(streamEndCapture, "cuStreamEndCapture");
  KILN_BIND(streamIsCapturing, "cuStreamIsCapturing");
  KILN_BIND(graphInstantiate, "cuGraphInstantiateWithFlags");
  KILN_BIND(graphLaunch, "cuGraphLaunch");
  KILN_BIND(graphExecDestroy, "cuGraphExecDestroy");
  KILN_BIND(graphDestroy, "cuGraphDestroy");
#undef KILN_BIND
  if (!ok) {
    l->status = Status::error(
        strCat("the CUDA driver (libcuda.so.1) lacks '", missing,
               "': it is too old for this runtime; update the NVIDIA driver"));
    return l;
  }

  CUresult r = d.init(0);
  if (r != CUDA_SUCCESS) {
    l->status = Status::error(
        errorMessage(d, r, "the CUDA driver is installed but cuInit failed") +
        " (no usable GPU?): run on a machine with an NVIDIA GPU, or use "
        "--device cpu");
    return l;
  }
  int count = 0;
  if (d.deviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    l->status = Status::error("no CUDA device found: run on a machine with an "
                              "NVIDIA GPU, or use --device cpu");
    return l;
  }
  int ordinal = 0;
  if (const char *env = std::getenv("KILN_CUDA_DEVICE"); env && *env) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end || v < 0 || v >= count) {
      l->status = Status::error(
          strCat("KILN_CUDA_DEVICE='", env, "' is not a device index in [0, ",
                 count - 1, "] (this machine has ", count, " CUDA device",
                 count == 1 ? "" : "s", ")"));
      return l;
    }
    ordinal = static_cast<int>(v);
  }
  d.ordinal = ordinal;
  Status s = check(d, d.deviceGet(&d.device, ordinal),
                   strCat("cuDeviceGet(", ordinal, ")"));
  if (s)
    s = check(d, d.primaryCtxRetain(&d.context, d.device),
              strCat("retaining the primary context of CUDA device ", ordinal));
  l->status = s;
  return l;
}

} // namespace

std::string errorMessage(const Driver &d, CUresult r, const std::string &what) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (d.getErrorName)
    d.getErrorName(r, &name);
  if (d.getErrorString)
    d.getErrorString(r, &text);
  return strCat(what, ": ", name ? name : "CUDA error", " (",
                static_cast<int>(r), "): ", text ? text : "unknown error");
}

Expected<const Driver *> driver() {
  // Never destroyed: allocations and modules may outlive static destructors.
  static Loaded *loaded = load();
  if (!loaded->status)
    return loaded->status;
  thread_local bool current = false;
  if (!current) {
    const Driver &d = loaded->driver;
    KILN_RETURN_IF_ERROR(check(d, d.ctxSetCurrent(d.context),
                               "making the CUDA context current"));
    current = true;
  }
  return &loaded->driver;
}

Status available() {
  Expected<const Driver *> d = driver();
  return d ? Status::ok() : d.status();
}

Expected<int> computeCapability() {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  int major = 0, minor = 0;
  KILN_RETURN_IF_ERROR(
      check(d,
            d.deviceGetAttribute(
                &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d.device),
            "cuDeviceGetAttribute"));
  KILN_RETURN_IF_ERROR(
      check(d,
            d.deviceGetAttribute(
                &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d.device),
            "cuDeviceGetAttribute"));
  return major * 10 + minor;
}

std::string deviceDescription() {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status().message();
  const Driver &d = **dr;
  char name[256] = {0};
  if (d.deviceGetName(name, sizeof(name) - 1, d.device) != CUDA_SUCCESS)
    name[0] = 0;
  Expected<int> cc = computeCapability();
  return strCat(name[0] ? name : "CUDA device", " (device ", d.ordinal,
                cc ? strCat(", sm_", *cc) : std::string(), ")");
}

void *openCudaLibrary(std::initializer_list<const char *> names,
                      const char *folderEnv, std::string &path) {
  std::vector<std::string> folders;
  if (const char *dir = folderEnv ? std::getenv(folderEnv) : nullptr;
      dir && *dir)
    folders.push_back(std::string(dir) + "/");
  folders.push_back(""); // the loader's search path
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    folders.push_back(std::string(home) + "/lib64/");
#ifdef KILN_CUDA_LIBRARY_DIR
  folders.push_back(std::string(KILN_CUDA_LIBRARY_DIR) + "/");
#endif
  folders.push_back("/usr/local/cuda/lib64/");
  for (const std::string &folder : folders)
    for (const char *name : names) {
      std::string candidate = folder + name;
      if (void *lib = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        path = candidate;
        return lib;
      }
    }
  return nullptr;
}

#else // !KILN_HAVE_CUDA

static Status notBuilt() {
  return Status::error(
      "this Kiln runtime was built without CUDA support (the CUDA toolkit "
      "headers were not found at configure time): rebuild it with the CUDA "
      "toolkit installed, or use --device cpu");
}

Status available() { return notBuilt(); }
Expected<int> computeCapability() { return notBuilt(); }
std::string deviceDescription() { return notBuilt().message(); }

#endif // KILN_HAVE_CUDA

} // namespace cuda
} // namespace kiln
