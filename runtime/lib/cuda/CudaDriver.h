//===- CudaDriver.h - The CUDA driver API, loaded with dlopen ---*- C++ -*-===//
//
// This file declares the table of CUDA driver entry points that the runtime
// uses, resolved from libcuda.so.1 by their versioned names on first use,
// and the process's context (the primary context of one device). It is
// internal to the runtime; compiled only when the CUDA headers were found
// (KILN_HAVE_CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDADRIVER_H
#define KILN_RUNTIME_LIB_CUDA_CUDADRIVER_H

#include "kiln/runtime/Status.h"

#include <cstddef>
#include <string>

#ifdef KILN_HAVE_CUDA
#include <initializer_list>
#include <string>
#include <cuda.h>

namespace kiln {
namespace cuda {

/// The driver entry points, each resolved by its exact (versioned) symbol.
struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*driverGetVersion)(int *);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxGetCurrent)(CUcontext *);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*memsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamDestroy)(CUstream);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*eventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*streamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*funcSetAttribute)(CUfunction, CUfunction_attribute, int);
  // CUDA graphs: a run's launches captured once and replayed
  // (CudaGraphCache.cpp).
  CUresult (*streamBeginCapture)(CUstream, CUstreamCaptureMode);
  CUresult (*streamEndCapture)(CUstream, CUgraph *);
  CUresult (*streamIsCapturing)(CUstream, CUstreamCaptureStatus *);
  CUresult (*graphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*graphLaunch)(CUgraphExec, CUstream);
  CUresult (*graphExecDestroy)(CUgraphExec);
  CUresult (*graphDestroy)(CUgraph);

  /// The process's context and device.
  CUcontext context = nullptr;
  CUdevice device = 0;
  int ordinal = 0;
};

/// The loaded driver with its context current on the calling thread, or
/// the reason CUDA cannot be used (see kiln::cuda::available()).
Expected<const Driver *> driver();

/// "what: <CUDA_ERROR_NAME: description>" for a failed call.
std::string errorMessage(const Driver &d, CUresult r, const std::string &what);

/// Ok, or an error built with errorMessage.
inline Status check(const Driver &d, CUresult r, const std::string &what) {
  if (r == CUDA_SUCCESS)
    return Status::ok();
  return Status::error(errorMessage(d, r, what));
}

/// Opens the first of `names` (e.g. "libcublasLt.so.13", "libcublasLt.so")
/// found in: $`folderEnv` when given and set, the loader's search path
/// (LD_LIBRARY_PATH, ...), $CUDA_HOME/lib64, the toolkit's folder found at
/// configure time and /usr/local/cuda/lib64. Returns the dlopen handle and
/// sets `path`, or null when none opens. (cuBLASLt and cuDNN share it.)
void *openCudaLibrary(std::initializer_list<const char *> names,
                      const char *folderEnv, std::string &path);

} // namespace cuda
} // namespace kiln

#endif // KILN_HAVE_CUDA

#endif // KILN_RUNTIME_LIB_CUDA_CUDADRIVER_H
