//===- CudaRuntimeTest.cpp - The CUDA runtime on any machine -------------===//
//
// This file implements the unit tests of the runtime's CUDA support that run
// on every machine, with or without a GPU: available() and the entry points
// either work or fail with a message saying why (each test checks the branch
// that applies to the machine it runs on), the C services' exported
// signatures, argument errors reported before any CUDA call, CUDA tensors
// refused by the CPU reference kernels, and the loading of a fake cuda
// package (CUDA unavailable, target disagreements). The GPU behaviour is in
// test/unit/runtime_gpu (kiln-runtime-gpu-tests, ctest label gpu).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/CudaServices.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/Model.h"
#include "kiln/runtime/ModelABI.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <type_traits>
#include <unistd.h>

using namespace kiln;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string &s, const std::string &needle) {
  return s.find(needle) != std::string::npos;
}

/// Whether this machine has a loadable CUDA driver (checked independently
/// of the runtime).
bool haveDriverLibrary() {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h)
    dlclose(h);
  return h != nullptr;
}

// The services have exactly the signatures of docs/cuda-backend.md.
static_assert(std::is_same_v<decltype(&kiln_cuda_launch),
                             int (*)(void *, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, unsigned, unsigned,
                                     void *, void **, char *, size_t)>);
static_assert(std::is_same_v<decltype(&kiln_cuda_memcpy),
                             int (*)(void *, const void *, size_t, int, void *,
                                     char *, size_t)>);
static_assert(std::is_same_v<decltype(&kiln_cuda_stream_synchronize),
                             int (*)(void *, char *, size_t)>);
static_assert(
    std::is_same_v<decltype(&kiln_cuda_matmul),
                   int (*)(int, int64_t, int64_t, int64_t, int64_t,
                           const void *, int64_t, int, const void *, int64_t,
                           int, void *, int64_t, const void *, int, void *,
                           size_t, void *, char *, size_t)>);
// The model ABI's CUDA entry point types, as the wrapper must define them.
static_assert(std::is_same_v<kiln_model_create_cuda_fn,
                             int (*)(const void *const *, void *const *,
                                     kiln_model **, char *, size_t)>);
static_assert(
    std::is_same_v<kiln_model_run_cuda_fn,
                   int (*)(kiln_model *, const void *const *, void *const *,
                           void *, void *, char *, size_t)>);
static_assert(std::is_same_v<kiln_model_target_fn, const char *(*)()>);
static_assert(std::is_same_v<kiln_model_kernel_name_fn, const char *(*)(int)>);
static_assert(std::is_same_v<decltype(&kiln_cuda_load_kernel),
                             int (*)(const char *, const char *, void **,
                                     char *, size_t)>);

} // namespace

TEST_CASE("cuda::available says why CUDA cannot be used, or works", "[cuda]") {
  Status s = cuda::available();
  INFO(s.message());
#ifndef KILN_TEST_CUDA_HEADERS
  REQUIRE_FALSE(s.isOk());
  CHECK(contains(s.message(), "built without CUDA support"));
#else
  if (!haveDriverLibrary()) {
    REQUIRE_FALSE(s.isOk());
    CHECK(s.message() ==
          "no CUDA driver (libcuda.so.1 not found): run on a machine with an "
          "NVIDIA driver, or use --device cpu");
  } else if (s.isOk()) {
    // A GPU machine: the device is described and has a compute capability.
    CHECK(contains(cuda::deviceDescription(), "sm_"));
    Expected<int> cc = cuda::computeCapability();
    REQUIRE(cc.isOk());
    CHECK(*cc >= 50);
  } else {
    // A driver without a usable device: the message says what to do.
    CHECK(contains(s.message(), "--device cpu"));
  }
#endif
  // The answer is stable.
  CHECK(cuda::available().isOk() == s.isOk());
}

TEST_CASE("Without CUDA, device memory and copies fail with the reason",
          "[cuda]") {
  Status s = cuda::available();
  if (s.isOk()) {
    SUCCEED("CUDA is available here; kiln-runtime-gpu-tests covers it");
    return;
  }
  Expected<void *> p = cuda::allocate(100);
  REQUIRE_FALSE(p.isOk());
  CHECK(p.status().message() == s.message());
  Expected<Tensor> t = Tensor::empty(DType::F32, {2, 3}, Device::CUDA);
  REQUIRE_FALSE(t.isOk());
  CHECK(t.status().message() == s.message());
  Tensor host = Tensor::fromVector<float>({1, 2, 3}, {3});
  Expected<Tensor> moved = host.to(Device::CUDA);
  REQUIRE_FALSE(moved.isOk());
  CHECK(moved.status().message() == s.message());
  CHECK_FALSE(cuda::acquireStream().isOk());

  char err[256] = {0};
  float x = 0;
  CHECK(kiln_cuda_memcpy(&x, &x, 4, KILN_CUDA_HOST_TO_DEVICE, nullptr, err,
                         sizeof(err)) != 0);
  CHECK(std::string(err) == s.message());
  err[0] = 0;
  CHECK(kiln_cuda_stream_synchronize(nullptr, err, sizeof(err)) != 0);
  CHECK(std::string(err) == s.message());
  err[0] = 0;
  CHECK(kiln_cuda_launch(&x, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, err,
                         sizeof(err)) != 0);
  CHECK(std::string(err) == s.message());
  err[0] = 0;
  CHECK(kiln_cuda_matmul(0, 1, 2, 2, 2, &x, 0, 0, &x, 0, 0, &x, 0, nullptr, 0,
                         nullptr, 0, nullptr, err, sizeof(err)) != 0);
  CHECK(std::string(err) == s.message());
}

TEST_CASE("CPU tensors still copy to the CPU without CUDA", "[cuda]") {
  Tensor host = Tensor::fromVector<float>({1, 2, 3, 4}, {2, 2});
  Expected<Tensor> copy = host.permute({1, 0}).to(Device::CPU);
  REQUIRE(copy.isOk());
  CHECK(copy->isContiguous());
  CHECK(copy->toDoubleVector() == std::vector<double>{1, 3, 2, 4});
  CHECK(copy->storage() != host.storage());
}

TEST_CASE("The services check their arguments before touching CUDA", "[cuda]") {
  char err[256] = {0};
  float x = 0;
  CHECK(kiln_cuda_memcpy(&x, &x, 4, 7, nullptr, err, sizeof(err)) != 0);
  CHECK(contains(err, "kind 7"));
  CHECK(kiln_cuda_matmul(5, 1, 2, 2, 2, &x, 0, 0, &x, 0, 0, &x, 0, nullptr, 0,
                         nullptr, 0, nullptr, err, sizeof(err)) != 0);
  CHECK(contains(err, "dtype code 5"));
  CHECK(kiln_cuda_matmul(0, 1, 0, 2, 2, &x, 0, 0, &x, 0, 0, &x, 0, nullptr, 0,
                         nullptr, 0, nullptr, err, sizeof(err)) != 0);
  CHECK(contains(err, "must be positive"));
  CHECK(kiln_cuda_matmul(0, 1, 2, 2, 2, &x, 0, 0, &x, 0, 0, &x, 0, nullptr, 3,
                         nullptr, 0, nullptr, err, sizeof(err)) != 0);
  CHECK(contains(err, "epilogue 3"));
  CHECK(kiln_cuda_matmul(0, 2, 2, 2, 2, &x, 4, 0, &x, 0, 0, &x, 3, nullptr, 0,
                         nullptr, 0, nullptr, err, sizeof(err)) != 0);
  CHECK(contains(err, "batches would overlap"));
}

TEST_CASE("The services are exported from libkiln_runtime.so", "[cuda]") {
  // model.so resolves them from the process at load time.
  for (const char *name :
       {"kiln_cuda_launch", "kiln_cuda_memcpy", "kiln_cuda_memset",
        "kiln_cuda_stream_synchronize", "kiln_cuda_matmul"}) {
    INFO(name);
    CHECK(dlsym(RTLD_DEFAULT, name) != nullptr);
  }
}

TEST_CASE("The caching allocator rounds sizes into classes", "[cuda]") {
  CHECK(cuda::roundedAllocationSize(0) == 512);
  CHECK(cuda::roundedAllocationSize(1) == 512);
  CHECK(cuda::roundedAllocationSize(512) == 512);
  CHECK(cuda::roundedAllocationSize(513) == 1024);
  CHECK(cuda::roundedAllocationSize((1 << 20) - 1) == (1 << 20));
  CHECK(cuda::roundedAllocationSize((1 << 20) + 1) == (2 << 20));
}

TEST_CASE("CPU reference kernels refuse CUDA tensors", "[cuda]") {
  // A tensor that claims to be on the device (never dereferenced).
  static float fake[4];
  Tensor onDevice(Storage::wrap(fake, sizeof(fake), Device::CUDA, nullptr),
                  DType::F32, {4}, {1}, 0);
  Tensor onHost = Tensor::fromVector<float>({1, 2, 3, 4}, {4});
  for (auto inputs : {std::vector<Tensor>{onHost, onDevice},
                      std::vector<Tensor>{onDevice, onHost}}) {
    std::vector<Tensor> outputs;
    Status s = Dispatcher::global().call("add", inputs, Attributes(), outputs);
    INFO(s.message());
    REQUIRE_FALSE(s.isOk());
    CHECK(contains(s.message(), "is a cuda tensor"));
    CHECK(contains(s.message(), "Tensor::to(Device::CPU)"));
  }
}

//===----------------------------------------------------------------------===//
// A fake cuda package
//===----------------------------------------------------------------------===//

namespace {

/// A cuda model.so: y = x + w with x, y: f32[4], w: f32[4], one kernel "k0".
/// FAKE_TARGET overrides kiln_model_target's answer.
const char *kFakeCudaModel = R"cpp(
#include "kiln/runtime/ModelABI.h"
#include "kiln/runtime/CudaServices.h"
#include <stdio.h>
#ifndef FAKE_TARGET
#define FAKE_TARGET "cuda"
#endif
struct kiln_model { const void *w; void *k0; };
static const int64_t kShape[1] = {4};
extern "C" {
int kiln_model_abi_version(void) { return KILN_MODEL_ABI_VERSION; }
const char *kiln_model_target(void) { return FAKE_TARGET; }
int kiln_model_num_inputs(void) { return 1; }
int kiln_model_num_outputs(void) { return 1; }
int kiln_model_num_weights(void) { return 1; }
const char *kiln_model_input_name(int) { return "x"; }
const char *kiln_model_output_name(int) { return "y"; }
const char *kiln_model_weight_name(int) { return "w"; }
int kiln_model_input_dtype(int) { return 0; }
int kiln_model_output_dtype(int) { return 0; }
int kiln_model_weight_dtype(int) { return 0; }
int kiln_model_input_rank(int) { return 1; }
int kiln_model_output_rank(int) { return 1; }
int kiln_model_weight_rank(int) { return 1; }
const int64_t *kiln_model_input_shape(int) { return kShape; }
const int64_t *kiln_model_output_shape(int) { return kShape; }
const int64_t *kiln_model_weight_shape(int) { return kShape; }
size_t kiln_model_arena_bytes(void) { return 0; }
int kiln_model_num_kernels(void) { return 1; }
const char *kiln_model_kernel_name(int) { return "k0"; }
int kiln_model_create_cuda(const void *const *weights, void *const *functions,
                           kiln_model **out, char *, size_t) {
  *out = new kiln_model{weights[0], functions[0]};
  return 0;
}
int kiln_model_run_cuda(kiln_model *m, const void *const *inputs,
                        void *const *outputs, void *, void *stream, char *err,
                        size_t errlen) {
  const void *x = inputs[0];
  const void *w = m->w;
  void *y = outputs[0];
  int n = 4;
  void *args[] = {&x, &w, &y, &n};
  return kiln_cuda_launch(m->k0, 1, 1, 1, 32, 1, 1, 0, stream, args, err,
                          errlen);
}
void kiln_model_destroy(kiln_model *m) { delete m; }
}
)cpp";

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string &tag) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("kiln-cuda-test-" + std::to_string(getpid()) + "-" + tag + "-" +
            std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void writeFile(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

fs::path runtimeIncludeDir() {
  return fs::path(KILN_TEST_SOURCE_DIR) / "runtime" / "include";
}

/// Compiles the fake cuda model with `defines` into `dir`/model.so.
void buildFakeCudaModel(const fs::path &dir, const std::string &defines = "") {
  const char *cxx = std::getenv("KILN_CXX");
  if (!cxx || !*cxx)
    cxx = std::getenv("CXX");
  if (!cxx || !*cxx)
    cxx = "c++";
  writeFile(dir / "fake_cuda_model.cpp", kFakeCudaModel);
  std::string cmd = std::string(cxx) + " -O1 -fPIC -shared " + defines + " -I" +
                    runtimeIncludeDir().string() + " " +
                    (dir / "fake_cuda_model.cpp").string() + " -o " +
                    (dir / "model.so").string() + " 2>&1";
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

std::string manifest(const std::string &target) {
  std::string t = target.empty() ? "" : "\"target\": \"" + target + "\",";
  return "{ \"abi_version\": " + std::to_string(KILN_MODEL_ABI_VERSION) +
         ", " + t + R"json(
  "signature": {
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
    "outputs": [{"name": "y", "dtype": "f32", "shape": [4]}]
  },
  "weights": [{"name": "w", "dtype": "f32", "shape": [4],
               "file": "weights.bin", "offset": 0, "bytes": 16}]
})json";
}

void writeWeights(const fs::path &dir) {
  float w[16] = {10, 20, 30, 40};
  writeFile(dir / "weights.bin",
            std::string(reinterpret_cast<const char *>(w), sizeof(w)));
}

} // namespace

TEST_CASE("Loading a cuda package without CUDA names the package and why",
          "[cuda][model]") {
  TempDir dir("nogpu");
  buildFakeCudaModel(dir.path);
  writeFile(dir.path / "manifest.json", manifest("cuda"));
  writeWeights(dir.path);
  Status s = cuda::available();
  Expected<Model> m = Model::load(dir.path.string());
  REQUIRE_FALSE(m.isOk());
  std::string msg = m.status().message();
  INFO(msg);
  CHECK(contains(msg, dir.path.string()));
  if (!s.isOk()) {
    CHECK(contains(msg, "is a CUDA package"));
    // The reason, without the advice to use --device cpu.
    CHECK(contains(s.message(), ", or use --device cpu"));
    std::string reason = s.message().substr(0, s.message().find(", or use"));
    CHECK(contains(msg, reason));
    CHECK_FALSE(contains(msg, "--device cpu"));
    CHECK(contains(msg, "--target cpu"));
  } else {
    // With a GPU the package is still incomplete: it has no kernels.
    CHECK(contains(msg, "kernels.cubin: missing"));
  }
}

TEST_CASE("A cuda model.so is a cuda package even without a manifest target",
          "[cuda][model]") {
  TempDir dir("libtarget");
  buildFakeCudaModel(dir.path);
  writeFile(dir.path / "manifest.json", manifest(""));
  writeWeights(dir.path);
  Expected<Model> m = Model::load(dir.path.string());
  REQUIRE_FALSE(m.isOk());
  INFO(m.status().message());
  if (!cuda::available().isOk())
    CHECK(contains(m.status().message(), "is a CUDA package"));
  else
    CHECK(contains(m.status().message(), "kernels.cubin"));
}

TEST_CASE("The manifest's target and the library's must agree",
          "[cuda][model]") {
  TempDir dir("disagree");
  buildFakeCudaModel(dir.path);
  writeWeights(dir.path);
  writeFile(dir.path / "manifest.json", manifest("cpu"));
  Expected<Model> m = Model::load(dir.path.string());
  REQUIRE_FALSE(m.isOk());
  INFO(m.status().message());
  CHECK(contains(m.status().message(),
                 "says target 'cpu' but the library is for 'cuda'"));

  writeFile(dir.path / "manifest.json", manifest("tpu"));
  m = Model::load(dir.path.string());
  REQUIRE_FALSE(m.isOk());
  CHECK(contains(m.status().message(), "'target' is 'tpu'"));

  TempDir bad("badtarget");
  buildFakeCudaModel(bad.path, "-DFAKE_TARGET='\"metal\"'");
  writeWeights(bad.path);
  writeFile(bad.path / "manifest.json", manifest(""));
  m = Model::load(bad.path.string());
  REQUIRE_FALSE(m.isOk());
  CHECK(contains(m.status().message(), "kiln_model_target() returns 'metal'"));
}
