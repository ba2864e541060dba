//===- CudaServices.cpp - The C services package libraries call ---------===//
//
// This file implements the C functions of CudaServices.h, exported from
// libkiln_runtime.so for the host code of CUDA packages: each forwards to
// kiln::cuda (driver, copies, cuBLASLt, cuDNN) and turns a failed Status
// into the nonzero return and the message in `err`.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/CudaServices.h"

#include "CublasLt.h"
#include "Cudnn.h"
#include "kiln/runtime/Cuda.h"

#ifdef KILN_HAVE_CUDA
#include "CudaDriver.h"
#endif

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

using namespace kiln;

/// 0 for success; otherwise writes the message to err and returns 1.
static int report(const Status &s, char *err, size_t errlen) {
  if (s)
    return 0;
  if (err && errlen)
    std::snprintf(err, errlen, "%s", s.message().c_str());
  return 1;
}

namespace {

/// The cuda::conv call behind kiln_cuda_conv and kiln_cuda_conv_relu.
int runConv(int dtype, int spatialDims, int layout, const int64_t *xShape,
                       const void *x, const int64_t *wShape, const void *w,
                       const void *bias, const void *z, bool relu,
                       int64_t group, const int64_t *strides,
                       const int64_t *pads, const int64_t *dilations,
                       const int64_t *yShape, void *y, void *stream, char *err,
                       size_t errlen) {
  cuda::ConvArgs a;
  a.dtype = dtype;
  a.spatialDims = spatialDims;
  a.layout = layout;
  a.xShape = xShape;
  a.x = x;
  a.wShape = wShape;
  a.w = w;
  a.bias = bias;
  a.z = z;
  a.relu = relu;
  a.group = group;
  a.strides = strides;
  a.pads = pads;
  a.dilations = dilations;
  a.yShape = yShape;
  a.y = y;
  a.stream = stream;
  return report(cuda::conv(a), err, errlen);
}

} // namespace

extern "C" {

int kiln_cuda_launch(void *function, unsigned gridX, unsigned gridY,
                     unsigned gridZ, unsigned blockX, unsigned blockY,
                     unsigned blockZ, unsigned sharedBytes, void *stream,
                     void **args, char *err, size_t errlen) {
#ifdef KILN_HAVE_CUDA
  Expected<const cuda::Driver *> dr = cuda::driver();
  if (!dr)
    return report(dr.status(), err, errlen);
  if (!function)
    return report(Status::error("kiln_cuda_launch: null function"), err,
                  errlen);
  const cuda::Driver &d = **dr;
  // Dynamic shared memory above the default 48 KiB needs an opt-in.
  if (sharedBytes > 48 * 1024) {
    CUresult r =
        d.funcSetAttribute(static_cast<CUfunction>(function),
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           static_cast<int>(sharedBytes));
    if (r != CUDA_SUCCESS)
      return report(cuda::check(d, r,
                                strCat("allowing ", sharedBytes,
                                       " bytes of dynamic shared memory")),
                    err, errlen);
  }
  CUresult r = d.launchKernel(static_cast<CUfunction>(function), gridX, gridY,
                              gridZ, blockX, blockY, blockZ, sharedBytes,
                              static_cast<CUstream>(stream), args, nullptr);
  return report(
      cuda::check(d, r,
                  strCat("launching a kernel with grid (", gridX, ", ", gridY,
                         ", ", gridZ, "), block (", blockX, ", ", blockY, ", ",
                         blockZ, "), ", sharedBytes, " shared bytes")),
      err, errlen);
#else
  (void)function, (void)gridX, (void)gridY, (void)gridZ, (void)blockX,
      (void)blockY, (void)blockZ, (void)sharedBytes, (void)stream, (void)args;
  return report(cuda::available(), err, errlen);
#endif
}

int kiln_cuda_load_kernel(const char *path, const char *name, void **function,
                          char *err, size_t errlen) {
  if (!path || !name || !function)
    return report(Status::error("kiln_cuda_load_kernel: path, name or "
                                "function is null"),
                  err, errlen);
  *function = nullptr;
#ifdef KILN_HAVE_CUDA
  Expected<const cuda::Driver *> dr = cuda::driver();
  if (!dr)
    return report(dr.status(), err, errlen);
  const cuda::Driver &d = **dr;
  // One module per file for the life of the process: the functions handed
  // out stay valid.
  static std::mutex mutex;
  static std::map<std::string, CUmodule> modules;
  std::lock_guard<std::mutex> lock(mutex);
  CUmodule &module = modules[path];
  if (!module) {
    std::ifstream in(path, std::ios::binary);
    std::string image((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof())
      return report(Status::error(strCat(path, ": cannot be read")), err,
                    errlen);
    if (image.empty())
      return report(Status::error(strCat(path, ": missing or empty (a "
                                               "package's kernels.cubin)")),
                    err, errlen);
    CUresult r = d.moduleLoadData(&module, image.c_str());
    if (r != CUDA_SUCCESS) {
      module = nullptr;
      return report(cuda::check(d, r, strCat(path, ": cannot be loaded")), err,
                    errlen);
    }
  }
  CUfunction fn = nullptr;
  CUresult r = d.moduleGetFunction(&fn, module, name);
  if (r != CUDA_SUCCESS)
    return report(
        cuda::check(d, r, strCat(path, ": has no kernel '", name, "'")), err,
        errlen);
  *function = fn;
  return 0;
#else
  return report(cuda::available(), err, errlen);
#endif
}

int kiln_cuda_memcpy(void *dst, const void *src, size_t bytes, int kind,
                     void *stream, char *err, size_t errlen) {
  if (kind < 0 || kind > 2)
    return report(Status::error(strCat("kiln_cuda_memcpy: kind ", kind,
                                       " is not 0 (host to device), 1 "
                                       "(device to host) or 2 (device to "
                                       "device)")),
                  err, errlen);
  return report(cuda::copy(dst, src, bytes, static_cast<cuda::CopyKind>(kind),
                           stream, /*synchronous=*/false),
                err, errlen);
}

int kiln_cuda_memset(void *dst, int value, size_t bytes, void *stream,
                     char *err, size_t errlen) {
#ifdef KILN_HAVE_CUDA
  Expected<const cuda::Driver *> dr = cuda::driver();
  if (!dr)
    return report(dr.status(), err, errlen);
  const cuda::Driver &d = **dr;
  if (bytes == 0)
    return 0;
  return report(
      cuda::check(d,
                  d.memsetD8Async(reinterpret_cast<CUdeviceptr>(dst),
                                  static_cast<unsigned char>(value), bytes,
                                  static_cast<CUstream>(stream)),
                  strCat("cuMemsetD8Async of ", bytes, " bytes")),
      err, errlen);
#else
  (void)dst, (void)value, (void)bytes, (void)stream;
  return report(cuda::available(), err, errlen);
#endif
}

int kiln_cuda_stream_synchronize(void *stream, char *err, size_t errlen) {
  return report(cuda::synchronize(stream), err, errlen);
}

int kiln_cuda_matmul(int dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
                     const void *a, int64_t strideA, int transA, const void *b,
                     int64_t strideB, int transB, void *d, int64_t strideD,
                     const void *bias, int epilogue, void *workspace,
                     size_t workspaceBytes, void *stream, char *err,
                     size_t errlen) {
  cuda::MatmulArgs x;
  x.dtype = dtype;
  x.batch = batch;
  x.m = m;
  x.n = n;
  x.k = k;
  x.a = a;
  x.strideA = strideA;
  x.transA = transA != 0;
  x.b = b;
  x.strideB = strideB;
  x.transB = transB != 0;
  x.d = d;
  x.strideD = strideD;
  x.bias = bias;
  x.epilogue = epilogue;
  x.workspace = workspace;
  x.workspaceBytes = workspace ? workspaceBytes : 0;
  x.stream = stream;
  return report(cuda::matmul(x), err, errlen);
}

int kiln_cuda_conv(int dtype, int spatialDims, int layout,
                   const int64_t *xShape,
                   const void *x, const int64_t *wShape, const void *w,
                   const void *bias, int64_t group, const int64_t *strides,
                   const int64_t *pads, const int64_t *dilations,
                   const int64_t *yShape, void *y, void *stream, char *err,
                   size_t errlen) {
  return runConv(dtype, spatialDims, layout, xShape, x, wShape, w, bias,
                            nullptr, false, group, strides, pads, dilations,
                            yShape, y, stream, err, errlen);
}

int kiln_cuda_conv_relu(int dtype, int spatialDims, int layout,
                        const int64_t *xShape,
                        const void *x, const int64_t *wShape, const void *w,
                        const void *bias, const void *z, int64_t group,
                        const int64_t *strides, const int64_t *pads,
                        const int64_t *dilations, const int64_t *yShape,
                        void *y, void *stream, char *err, size_t errlen) {
  return runConv(dtype, spatialDims, layout, xShape, x, wShape, w, bias, z,
                            true, group, strides, pads, dilations, yShape, y,
                            stream, err, errlen);
}

} // extern "C"
