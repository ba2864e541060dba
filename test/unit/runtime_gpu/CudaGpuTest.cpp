//===- CudaGpuTest.cpp - The CUDA runtime on a GPU ------------------------===//
//
// This file implements kiln-runtime-gpu-tests (ctest label gpu), which need
// an NVIDIA GPU: the caching allocator's reuse, host <-> device copies of
// tensors, a kernel from a hand-written PTX string (JIT-compiled by
// cuModuleLoadData) launched through kiln_cuda_launch, kiln_cuda_matmul
// (f32 and bf16; bias, relu and gelu epilogues; transposes; batches with
// strides, including 0 = broadcast) against a CPU reference, and a fake cuda
// package (kernels.ptx only, so the PTX fallback) loaded and run through
// kiln::Model with CPU and device inputs, device outputs and concurrent
// runs.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDriver.h"
#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/CudaServices.h"
#include "kiln/runtime/Model.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <unistd.h>

using namespace kiln;
namespace fs = std::filesystem;

namespace {

/// k0(const float *x, const float *w, float *y, int n): y[i] = x[i] + w[i].
/// Targets sm_52 so that any newer GPU JIT-compiles it.
const char *kAddPtx = R"ptx(
.version 7.0
.target sm_52
.address_size 64

.visible .entry k0(
    .param .u64 px,
    .param .u64 pw,
    .param .u64 py,
    .param .u32 pn
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<11>;

    ld.param.u64 %rd1, [px];
    ld.param.u64 %rd2, [pw];
    ld.param.u64 %rd3, [py];
    ld.param.u32 %r1, [pn];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.s32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    add.s64 %rd9, %rd5, %rd7;
    add.s64 %rd10, %rd6, %rd7;
    ld.global.f32 %f1, [%rd8];
    ld.global.f32 %f2, [%rd9];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd10], %f3;
DONE:
    ret;
}
)ptx";

void requireCuda() {
  Status s = cuda::available();
  INFO(s.message());
  REQUIRE(s.isOk());
}

std::vector<float> download(const Tensor &t) {
  Expected<Tensor> host = t.to(Device::CPU);
  REQUIRE(host.isOk());
  std::vector<double> d = host->to(DType::F32).toDoubleVector();
  return std::vector<float>(d.begin(), d.end());
}

} // namespace

TEST_CASE("The device is usable", "[gpu]") {
  requireCuda();
  INFO(cuda::deviceDescription());
  CHECK(cuda::computeCapability().isOk());
}

TEST_CASE("The caching allocator reuses freed blocks of the same class",
          "[gpu]") {
  requireCuda();
  Expected<void *> a = cuda::allocate(1000);
  REQUIRE(a.isOk());
  CHECK(reinterpret_cast<uintptr_t>(*a) % 256 == 0);
  cuda::AllocatorStats before = cuda::allocatorStats();
  cuda::deallocate(*a);
  CHECK(cuda::allocatorStats().bytesCached >= before.bytesCached + 1024);
  Expected<void *> b = cuda::allocate(900); // The same 1024-byte class.
  REQUIRE(b.isOk());
  CHECK(*b == *a);
  cuda::AllocatorStats after = cuda::allocatorStats();
  CHECK(after.cacheHits == before.cacheHits + 1);
  CHECK(after.driverAllocations == before.driverAllocations);
  // Another class needs a new block while b is live.
  Expected<void *> c = cuda::allocate(5000);
  REQUIRE(c.isOk());
  CHECK(*c != *b);
  cuda::deallocate(*b);
  cuda::deallocate(*c);
  cuda::emptyCache();
  CHECK(cuda::allocatorStats().bytesCached == 0);

  // Tensors give their storage back when they die.
  size_t inUse = cuda::allocatorStats().bytesInUse;
  {
    Expected<Tensor> t = Tensor::empty(DType::F32, {256, 256}, Device::CUDA);
    REQUIRE(t.isOk());
    CHECK(t->device() == Device::CUDA);
    CHECK(cuda::allocatorStats().bytesInUse > inUse);
  }
  CHECK(cuda::allocatorStats().bytesInUse == inUse);
}

TEST_CASE("Tensors round-trip between host and device", "[gpu]") {
  requireCuda();
  Tensor host = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Expected<Tensor> dev = host.to(Device::CUDA);
  REQUIRE(dev.isOk());
  CHECK(dev->device() == Device::CUDA);
  CHECK(dev->shape() == host.shape());
  Expected<Tensor> dev2 = dev->to(Device::CUDA); // Device to device.
  REQUIRE(dev2.isOk());
  CHECK(dev2->rawData() != dev->rawData());
  CHECK(download(*dev2) == std::vector<float>{1, 2, 3, 4, 5, 6});
  // A non-contiguous host view is made contiguous on the way.
  Expected<Tensor> t = host.permute({1, 0}).to(Device::CUDA);
  REQUIRE(t.isOk());
  CHECK(download(*t) == std::vector<float>{1, 4, 2, 5, 3, 6});
  // A non-contiguous device view is refused with the reason.
  Tensor view = dev->permute({1, 0});
  Expected<Tensor> bad = view.to(Device::CPU);
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.status().message().find("not contiguous") != std::string::npos);
  // bf16 bytes travel unchanged.
  Tensor b =
      Tensor::fromVector<float>({0.5f, -2.0f, 3.25f}, {3}).to(DType::BF16);
  CHECK(download(*b.to(Device::CUDA)) == std::vector<float>{0.5f, -2, 3.25f});
}

TEST_CASE("A PTX kernel loads and runs through kiln_cuda_launch", "[gpu]") {
  requireCuda();
  const cuda::Driver &d = **cuda::driver();
  CUmodule module = nullptr;
  REQUIRE(d.moduleLoadData(&module, kAddPtx) == CUDA_SUCCESS);
  CUfunction fn = nullptr;
  REQUIRE(d.moduleGetFunction(&fn, module, "k0") == CUDA_SUCCESS);

  int n = 1000;
  std::vector<float> xs(n), ws(n);
  for (int i = 0; i < n; ++i) {
    xs[i] = static_cast<float>(i);
    ws[i] = 0.5f * static_cast<float>(i) - 3;
  }
  Tensor x = *Tensor::fromVector<float>(xs, {n}).to(Device::CUDA);
  Tensor w = *Tensor::fromVector<float>(ws, {n}).to(Device::CUDA);
  Tensor y = *Tensor::empty(DType::F32, {n}, Device::CUDA);
  Expected<void *> stream = cuda::acquireStream();
  REQUIRE(stream.isOk());
  void *px = x.rawData(), *pw = w.rawData(), *py = y.rawData();
  void *args[] = {&px, &pw, &py, &n};
  char err[512] = {0};
  REQUIRE(kiln_cuda_launch(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, *stream,
                           args, err, sizeof(err)) == 0);
  REQUIRE(kiln_cuda_stream_synchronize(*stream, err, sizeof(err)) == 0);
  cuda::releaseStream(*stream);
  std::vector<float> got = download(y);
  for (int i = 0; i < n; ++i)
    REQUIRE(got[i] == xs[i] + ws[i]);

  // A launch error is reported with the launch shape.
  CHECK(kiln_cuda_launch(fn, 1, 1, 1, 4096, 1, 1, 0, nullptr, args, err,
                         sizeof(err)) != 0);
  CHECK(std::string(err).find("block (4096") != std::string::npos);
  d.moduleUnload(module);
}

TEST_CASE("kiln_cuda_memcpy and kiln_cuda_memset", "[gpu]") {
  requireCuda();
  std::vector<float> src = {1, 2, 3, 4}, dst(4, 0);
  Tensor dev = *Tensor::empty(DType::F32, {4}, Device::CUDA);
  char err[256];
  REQUIRE(kiln_cuda_memcpy(dev.rawData(), src.data(), 16,
                           KILN_CUDA_HOST_TO_DEVICE, nullptr, err,
                           sizeof(err)) == 0);
  REQUIRE(kiln_cuda_memset(dev.rawData(), 0, 8, nullptr, err, sizeof(err)) ==
          0);
  REQUIRE(kiln_cuda_memcpy(dst.data(), dev.rawData(), 16,
                           KILN_CUDA_DEVICE_TO_HOST, nullptr, err,
                           sizeof(err)) == 0);
  REQUIRE(kiln_cuda_stream_synchronize(nullptr, err, sizeof(err)) == 0);
  CHECK(dst == std::vector<float>{0, 0, 3, 4});
}

//===----------------------------------------------------------------------===//
// kiln_cuda_matmul
//===----------------------------------------------------------------------===//

namespace {

struct GemmCase {
  int64_t batch, m, n, k;
  bool transA, transB;
  bool broadcastA, broadcastB;
  bool bias;
  int epilogue;
};

double geluTanh(double x) {
  return 0.5 * x *
         (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

/// Runs one case in `dtype` and compares with a double-precision reference
/// computed from the same (rounded) inputs.
void checkGemm(const GemmCase &c, DType dtype, double tolerance) {
  INFO("batch " << c.batch << " m " << c.m << " n " << c.n << " k " << c.k
                << " transA " << c.transA << " transB " << c.transB
                << " broadcastA " << c.broadcastA << " broadcastB "
                << c.broadcastB << " bias " << c.bias << " epilogue "
                << c.epilogue << " dtype " << dtypeName(dtype));
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto random = [&](int64_t count) {
    std::vector<float> v(count);
    for (float &x : v)
      x = dist(rng);
    return v;
  };
  int64_t batchA = c.broadcastA ? 1 : c.batch;
  int64_t batchB = c.broadcastB ? 1 : c.batch;
  Tensor a = Tensor::fromVector<float>(random(batchA * c.m * c.k),
                                       {batchA * c.m * c.k})
                 .to(dtype);
  Tensor b = Tensor::fromVector<float>(random(batchB * c.k * c.n),
                                       {batchB * c.k * c.n})
                 .to(dtype);
  Tensor bias = Tensor::fromVector<float>(random(c.n), {c.n}).to(dtype);
  std::vector<double> av = a.toDoubleVector(), bv = b.toDoubleVector(),
                      biasv = bias.toDoubleVector();

  Tensor da = *a.to(Device::CUDA), db = *b.to(Device::CUDA),
         dbias = *bias.to(Device::CUDA);
  Tensor dd = *Tensor::empty(dtype, {c.batch * c.m * c.n}, Device::CUDA);
  char err[1024] = {0};
  int rc = kiln_cuda_matmul(
      static_cast<int>(dtype), c.batch, c.m, c.n, c.k, da.rawData(),
      c.broadcastA ? 0 : c.m * c.k, c.transA, db.rawData(),
      c.broadcastB ? 0 : c.k * c.n, c.transB, dd.rawData(), c.m * c.n,
      c.bias ? dbias.rawData() : nullptr, c.epilogue, nullptr, 0, nullptr, err,
      sizeof(err));
  INFO(err);
  REQUIRE(rc == 0);
  REQUIRE(kiln_cuda_stream_synchronize(nullptr, err, sizeof(err)) == 0);
  std::vector<float> got = download(dd);

  for (int64_t p = 0; p < c.batch; ++p) {
    const double *A = av.data() + (c.broadcastA ? 0 : p * c.m * c.k);
    const double *B = bv.data() + (c.broadcastB ? 0 : p * c.k * c.n);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (int64_t q = 0; q < c.k; ++q) {
          double x = c.transA ? A[q * c.m + i] : A[i * c.k + q];
          double y = c.transB ? B[j * c.k + q] : B[q * c.n + j];
          sum += x * y;
        }
        if (c.bias)
          sum += biasv[j];
        if (c.epilogue == KILN_CUDA_EPILOGUE_RELU)
          sum = std::max(sum, 0.0);
        else if (c.epilogue == KILN_CUDA_EPILOGUE_GELU_TANH)
          sum = geluTanh(sum);
        double g = got[(p * c.m + i) * c.n + j];
        INFO("D[" << p << "][" << i << "][" << j << "] = " << g << ", expected "
                  << sum);
        REQUIRE(std::abs(g - sum) <= tolerance * (1 + std::abs(sum)));
      }
  }
}

} // namespace

TEST_CASE("kiln_cuda_matmul f32 matches the reference", "[gpu][matmul]") {
  requireCuda();
  // f32 computes in fp32 (no TF32): 1e-3 is loose for k <= 300.
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      checkGemm({1, 33, 47, 65, transA, transB, false, false, false, 0},
                DType::F32, 1e-3);
  checkGemm({4, 17, 24, 300, false, false, false, false, true, 1}, DType::F32,
            1e-3);
  checkGemm({3, 8, 16, 32, false, true, false, true, true, 1}, DType::F32,
            1e-3); // Broadcast B (stride 0), like x @ W^T + b.
  checkGemm({3, 8, 16, 32, true, false, true, false, false, 0}, DType::F32,
            1e-3); // Broadcast A.
  checkGemm({2, 16, 32, 64, false, false, false, false, true, 2}, DType::F32,
            1e-3); // Bias + GELU (tanh).
  checkGemm({1, 1, 1, 1, false, false, false, false, true, 1}, DType::F32,
            1e-3);
}

TEST_CASE("kiln_cuda_matmul bf16 and f16 match the reference",
          "[gpu][matmul]") {
  requireCuda();
  // The output is rounded to 8 (bf16) or 11 (f16) significant bits.
  checkGemm({2, 64, 128, 96, false, false, false, false, true, 1}, DType::BF16,
            1e-2);
  checkGemm({3, 32, 64, 48, false, true, false, true, true, 1}, DType::BF16,
            1e-2);
  checkGemm({2, 64, 128, 96, true, false, false, false, true, 0}, DType::F16,
            2e-3);
}

TEST_CASE("kiln_cuda_matmul with a caller workspace and a stream",
          "[gpu][matmul]") {
  requireCuda();
  int64_t m = 64, n = 64, k = 64;
  std::vector<float> ones(m * k, 1.0f);
  Tensor a = *Tensor::fromVector<float>(ones, {m, k}).to(Device::CUDA);
  Tensor d = *Tensor::empty(DType::F32, {m, n}, Device::CUDA);
  Tensor ws = *Tensor::empty(DType::U8, {4 << 20}, Device::CUDA);
  void *stream = *cuda::acquireStream();
  char err[512] = {0};
  REQUIRE(kiln_cuda_matmul(0, 1, m, n, k, a.rawData(), 0, 0, a.rawData(), 0, 0,
                           d.rawData(), 0, nullptr, 0, ws.rawData(),
                           ws.nbytes(), stream, err, sizeof(err)) == 0);
  REQUIRE(kiln_cuda_stream_synchronize(stream, err, sizeof(err)) == 0);
  cuda::releaseStream(stream);
  for (float v : download(d))
    REQUIRE(v == 64.0f);
}

//===----------------------------------------------------------------------===//
// A fake cuda package through kiln::Model
//===----------------------------------------------------------------------===//

namespace {

/// The fake package's model.so (fake_package/FakeCudaModel.cpp), built
/// next to this test binary: y = x + w with the kernel k0 of kAddPtx.
fs::path fakeModelLibrary() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return self.parent_path() / "fake_cuda_model.so";
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("kiln-gpu-test-" + std::to_string(getpid()));
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

/// Writes the fake package (model.so, manifest.json, weights.bin with
/// w[i] = i, kernels.ptx) into `dir`.
void writeFakePackage(const fs::path &dir) {
  fs::path library = fakeModelLibrary();
  INFO(library.string());
  REQUIRE(fs::is_regular_file(library));
  fs::copy_file(library, dir / "model.so",
                fs::copy_options::overwrite_existing);
  writeFile(dir / "manifest.json", R"json({
  "abi_version": 3, "target": "cuda",
  "signature": {
    "inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}],
    "outputs": [{"name": "y", "dtype": "f32", "shape": [1000]}] },
  "weights": [{"name": "w", "dtype": "f32", "shape": [1000],
               "file": "weights.bin", "offset": 0, "bytes": 4000}]
})json");
  std::vector<float> w(1000);
  for (int i = 0; i < 1000; ++i)
    w[i] = static_cast<float>(i);
  writeFile(dir / "weights.bin",
            std::string(reinterpret_cast<const char *>(w.data()), 4000));
  writeFile(dir / "kernels.ptx", kAddPtx);
}

} // namespace

TEST_CASE("A cuda package loads (PTX fallback) and runs through Model",
          "[gpu][model]") {
  requireCuda();
  TempDir dir;
  writeFakePackage(dir.path);
  Expected<Model> loaded = Model::load(dir.path.string());
  INFO((loaded ? std::string() : loaded.status().message()));
  REQUIRE(loaded.isOk());
  const Model &model = *loaded;
  CHECK(model.device() == Device::CUDA);

  std::vector<float> xs(1000);
  for (int i = 0; i < 1000; ++i)
    xs[i] = 0.25f * static_cast<float>(i);
  Tensor x = Tensor::fromVector<float>(xs, {1000});
  auto check = [&](const Tensor &y) {
    std::vector<float> got = download(y);
    for (int i = 0; i < 1000; ++i)
      REQUIRE(got[i] == xs[i] + static_cast<float>(i));
  };

  // CPU input, CPU output.
  Expected<NamedTensors> out = model.run({{"x", x}});
  REQUIRE(out.isOk());
  CHECK((*out)[0].second.device() == Device::CPU);
  check((*out)[0].second);

  // Device input, device output.
  Tensor dx = *x.to(Device::CUDA);
  RunOptions onDevice;
  onDevice.outputDevice = Device::CUDA;
  out = model.run({{"x", dx}}, onDevice);
  REQUIRE(out.isOk());
  CHECK((*out)[0].second.device() == Device::CUDA);
  check((*out)[0].second);

  // The device time between the run's events: positive, and no longer than
  // the wall-clock time of the run (which also waits for the stream).
  double deviceMs = -1;
  onDevice.deviceMilliseconds = &deviceMs;
  auto start = std::chrono::steady_clock::now();
  out = model.run({{"x", dx}}, onDevice);
  double wallMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  REQUIRE(out.isOk());
  check((*out)[0].second);
  CHECK(deviceMs > 0);
  CHECK(deviceMs <= wallMs);

  // Wrong shapes are still refused.
  Expected<NamedTensors> bad =
      model.run({{"x", Tensor::fromVector<float>({1, 2}, {2})}});
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.status().message().find("expected f32[1000]") != std::string::npos);

  // Concurrent runs use their own streams and arenas.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        Expected<NamedTensors> r = model.run({{"x", x}});
        if (!r) {
          ++failures;
          continue;
        }
        std::vector<double> got = (*r)[0].second.toDoubleVector();
        for (int j = 0; j < 1000; ++j)
          if (got[j] != xs[j] + j)
            ++failures;
      }
    });
  for (std::thread &t : threads)
    t.join();
  CHECK(failures == 0);
}

TEST_CASE("A cuda package's runs are captured into a CUDA graph and replayed",
          "[gpu][model][graphs]") {
  requireCuda();
  TempDir dir;
  writeFakePackage(dir.path);
  Expected<Model> loaded = Model::load(dir.path.string());
  REQUIRE(loaded.isOk());
  const Model &model = *loaded;

  // The same device input and output addresses every run: warm-up, capture,
  // then replays, each reading the input's current contents.
  Tensor dx = *Tensor::empty(DType::F32, {1000}, Device::CUDA);
  Tensor dy = *Tensor::empty(DType::F32, {1000}, Device::CUDA);
  NamedTensors into{{"y", dy}};
  RunOptions options;
  options.outputsInto = &into;
  GraphUse use = GraphUse::Off;
  options.graphUse = &use;
  const GraphUse expected[] = {GraphUse::Warmup, GraphUse::Captured,
                               GraphUse::Replayed, GraphUse::Replayed};
  for (int run = 0; run < 4; ++run) {
    std::vector<float> xs(1000);
    for (int i = 0; i < 1000; ++i)
      xs[i] = static_cast<float>(run * 1000 + i);
    REQUIRE(cuda::copy(dx.rawData(), xs.data(), 4000,
                       cuda::CopyKind::HostToDevice, nullptr, true)
                .isOk());
    Expected<NamedTensors> out = model.run({{"x", dx}}, options);
    REQUIRE(out.isOk());
    CHECK(use == expected[run]);
    std::vector<float> got = download(dy);
    for (int i = 0; i < 1000; ++i)
      REQUIRE(got[i] == xs[i] + static_cast<float>(i));
  }

  // Host inputs and returned outputs go through the entry's buffers: a
  // replay still sees each run's input and returns a fresh output.
  RunOptions hostRuns;
  hostRuns.graphUse = &use;
  std::vector<Tensor> results;
  for (int run = 0; run < 4; ++run) {
    std::vector<float> xs(1000, static_cast<float>(run));
    Expected<NamedTensors> out =
        model.run({{"x", Tensor::fromVector<float>(xs, {1000})}}, hostRuns);
    REQUIRE(out.isOk());
    CHECK(use == expected[run]);
    results.push_back((*out)[0].second);
  }
  for (int run = 0; run < 4; ++run) {
    std::vector<double> got = results[run].toDoubleVector();
    for (int i = 0; i < 1000; ++i)
      REQUIRE(got[i] == run + i);
  }

  // Opting out launches directly.
  RunOptions direct = hostRuns;
  direct.cudaGraphs = false;
  REQUIRE(model.run({{"x", dx}}, direct).isOk());
  CHECK(use == GraphUse::Off);

  // A package whose every step runs on the device copies nothing between
  // host and device when its input and output live there (issue 14's
  // check), replayed or launched directly.
  for (bool graphs : {true, false}) {
    RunOptions onDevice = options;
    onDevice.cudaGraphs = graphs;
    REQUIRE(model.run({{"x", dx}}, onDevice).isOk());
    cuda::CopyStats before = cuda::copyStats();
    for (int run = 0; run < 10; ++run)
      REQUIRE(model.run({{"x", dx}}, onDevice).isOk());
    cuda::CopyStats after = cuda::copyStats();
    INFO("CUDA graphs " << graphs);
    CHECK(after.hostToDevice == before.hostToDevice);
    CHECK(after.deviceToHost == before.deviceToHost);
  }
}
