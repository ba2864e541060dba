//===- CudnnTest.cpp - kiln_cuda_conv without a GPU -----------------------===//
//
// This file implements the kiln-runtime-tests cases of the cuDNN
// convolution service that run on any machine: kiln_cuda_conv checks its
// arguments before touching CUDA or cuDNN (dtype, ranks, channels and
// groups, asymmetric pads, the output shape), fails cleanly with the reason
// when CUDA or cuDNN cannot be used, and is exported for model.so; loading
// cuDNN either succeeds with a libcudnn path or names what is missing.
//
//===----------------------------------------------------------------------===//

#include "../../../runtime/lib/cuda/Cudnn.h"
#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/CudaServices.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <string>
#include <vector>

using namespace kiln;

namespace {

bool has(const char *text, const std::string &needle) {
  return std::string(text).find(needle) != std::string::npos;
}

/// A valid 3x3, stride 1, pad 1 convolution of [1, 4, 8, 8] into 6 channels;
/// tests change one thing.
struct Call {
  int dtype = 0, spatialDims = 2, layout = KILN_CUDA_LAYOUT_NCHW;
  std::vector<int64_t> x = {1, 4, 8, 8}, w = {6, 4, 3, 3}, y = {1, 6, 8, 8};
  int64_t group = 1;
  std::vector<int64_t> strides = {1, 1}, pads = {1, 1, 1, 1},
                       dilations = {1, 1};
  float buffer = 0; // never dereferenced: the calls fail before
  char err[512] = {0};
  int run() {
    return kiln_cuda_conv(dtype, spatialDims, layout, x.data(), &buffer,
                          w.data(),
                          &buffer, nullptr, group, strides.data(), pads.data(),
                          dilations.data(), y.data(), &buffer, nullptr, err,
                          sizeof(err));
  }
};

} // namespace

TEST_CASE("kiln_cuda_conv checks its arguments before touching CUDA",
          "[cuda][conv]") {
  {
    Call c;
    c.dtype = 4;
    CHECK(c.run() != 0);
    CHECK(has(c.err, "dtype code 4"));
  }
  {
    Call c;
    c.spatialDims = 4;
    CHECK(c.run() != 0);
    CHECK(has(c.err, "4 spatial dims"));
  }
  {
    Call c;
    c.pads = {1, 0, 1, 1}; // [begin h, begin w, end h, end w]
    c.y = {1, 6, 8, 7};
    CHECK(c.run() != 0);
    CHECK(has(c.err, "spatial dim 1 has pads 0 (begin) and 1 (end)"));
    CHECK(has(c.err, "symmetric pads only"));
  }
  {
    Call c;
    c.w = {6, 3, 3, 3};
    CHECK(c.run() != 0);
    CHECK(has(c.err, "x has 4 channels but w with group 1 expects 3"));
  }
  {
    Call c;
    c.group = 4;
    c.w = {6, 1, 3, 3};
    CHECK(c.run() != 0);
    CHECK(has(c.err, "6 output channels are not divisible by group 4"));
  }
  {
    Call c;
    c.strides = {2, 2};
    CHECK(c.run() != 0);
    CHECK(has(c.err, "spatial dim 0 of y is 8 but the geometry gives 4"));
  }
  {
    Call c;
    c.y = {1, 5, 8, 8};
    CHECK(c.run() != 0);
    CHECK(has(c.err, "y's batch and channels do not match"));
  }
  {
    Call c;
    c.dilations = {0, 1};
    CHECK(c.run() != 0);
    CHECK(has(c.err, "dilations must be >= 1"));
  }
  {
    Call c;
    c.layout = 2;
    CHECK(c.run() != 0);
    CHECK(has(c.err, "layout code 2 is not NCHW (0) or NHWC (1)"));
  }
  {
    // Channels last, the shapes as stored: NCHW shapes read as NHWC have
    // 8 channels where w expects 4.
    Call c;
    c.layout = KILN_CUDA_LAYOUT_NHWC;
    CHECK(c.run() != 0);
    CHECK(has(c.err, "x has 8 channels but w with group 1 expects 3"));
  }
  // The same geometry checks as a C++ call: a valid one passes.
  Call c;
  cuda::ConvArgs a;
  a.xShape = c.x.data(), a.wShape = c.w.data(), a.yShape = c.y.data();
  a.strides = c.strides.data(), a.pads = c.pads.data();
  a.dilations = c.dilations.data();
  a.x = a.w = a.y = &c.buffer;
  Status s = cuda::checkConvArgs(a);
  INFO(s.message());
  CHECK(s.isOk());
  a.spatialDims = 1; // 1-D: x [1, 4, 8], w [6, 4, 3], y [1, 6, 8]
  CHECK(cuda::checkConvArgs(a).isOk());
  // Channels last: x [1, 8, 8, 4], w [6, 3, 3, 4], y [1, 8, 8, 6].
  std::vector<int64_t> xl = {1, 8, 8, 4}, wl = {6, 3, 3, 4}, yl = {1, 8, 8, 6};
  a.spatialDims = 2;
  a.layout = KILN_CUDA_LAYOUT_NHWC;
  a.xShape = xl.data(), a.wShape = wl.data(), a.yShape = yl.data();
  s = cuda::checkConvArgs(a);
  INFO(s.message());
  CHECK(s.isOk());
  yl = {1, 8, 8, 5};
  CHECK(!cuda::checkConvArgs(a).isOk());
}

TEST_CASE("kiln_cuda_conv fails cleanly without CUDA or cuDNN",
          "[cuda][conv]") {
  Status cudaOk = cuda::available();
  std::string library;
  Status dnnOk = cuda::cudnnAvailable(&library);
  if (!cudaOk.isOk()) {
    // A valid call reports why CUDA cannot be used (host pointers are never
    // touched).
    Call c;
    CHECK(c.run() != 0);
    CHECK(std::string(c.err) == cudaOk.message());
  }
  if (dnnOk.isOk()) {
    CHECK(has(library.c_str(), "libcudnn.so"));
  } else {
    INFO(dnnOk.message());
    CHECK(has(dnnOk.message().c_str(), "cuDNN"));
    CHECK((has(dnnOk.message().c_str(),
               "cuDNN not found (libcudnn.so.9): install it or add its "
               "folder to LD_LIBRARY_PATH") ||
           has(dnnOk.message().c_str(), "Kiln needs cuDNN 9")));
  }
  // cuDNN is found exactly when the loader (or its toolkit folders) can open
  // it: a process that can dlopen libcudnn.so.9 must not be told otherwise.
  if (void *lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL)) {
    CHECK(dnnOk.isOk());
    dlclose(lib);
  }
}

TEST_CASE("kiln_cuda_conv is exported from libkiln_runtime.so",
          "[cuda][conv]") {
  CHECK(dlsym(RTLD_DEFAULT, "kiln_cuda_conv") != nullptr);
  CHECK(dlsym(RTLD_DEFAULT, "kiln_cuda_conv_relu") != nullptr);
}
