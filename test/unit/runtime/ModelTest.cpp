//===- ModelTest.cpp - Tests of the compiled-package loader ---------------===//
//
// This file implements the unit tests of kiln::Model against a hand-written
// fake package: a small C++ file implementing the model C ABI (y = x * w + 1
// with x: f32[2, 3], one weight w: f32[3], the product staged in the arena)
// compiled into model.so with the host compiler ($KILN_CXX, $CXX or c++) at
// test time, plus a manifest.json and weights.bin written by the test. It
// covers loading and running, input validation messages, broken packages
// (missing or corrupt model.so, missing or truncated weights.bin, another
// ABI version, manifest/ABI disagreements) reported as errors, the ways of
// binding weights, concurrent runs, outputs written into the caller's
// tensors (RunOptions::outputsInto, in place over an input too), the
// refusal of a training package, and profiled runs (RunOptions::trace: a
// variant of the fake exports the profiler hooks around its two steps, as
// generated wrappers do; the plain one is a package of an older Kiln).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Model.h"
#include "kiln/runtime/ModelABI.h"
#include "kiln/runtime/Trace.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <unistd.h>

using namespace kiln;
namespace fs = std::filesystem;

namespace {

/// The fake model. FAKE_ABI_VERSION and FAKE_NO_RUN select broken variants.
const char *kFakeModelSource = R"cpp(
#include "kiln/runtime/ModelABI.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION KILN_MODEL_ABI_VERSION
#endif
struct kiln_model { const float *w; };
#ifdef FAKE_PROFILER
static const kiln_model_step kSteps[] = {{0, "kernel", "scale", "mul_node"},
                                         {1, "copy", "copy to output 'y'", ""}};
static thread_local const kiln_model_profiler *tProfiler = nullptr;
#define STEP_BEGIN(i) if (profiler) profiler->begin(profiler->user, &kSteps[i], nullptr)
#define STEP_END(i) if (profiler) profiler->end(profiler->user, &kSteps[i], nullptr)
extern "C" const kiln_model_profiler *
kiln_model_set_profiler(const kiln_model_profiler *p) {
  const kiln_model_profiler *previous = tProfiler;
  tProfiler = p;
  return previous;
}
#else
#define STEP_BEGIN(i)
#define STEP_END(i)
#endif
static const int64_t kXShape[2] = {2, 3};
static const int64_t kWShape[1] = {3};
extern "C" {
int kiln_model_abi_version(void) { return FAKE_ABI_VERSION; }
int kiln_model_num_inputs(void) { return 1; }
int kiln_model_num_outputs(void) { return 1; }
int kiln_model_num_weights(void) { return 1; }
const char *kiln_model_input_name(int) { return "x"; }
const char *kiln_model_output_name(int) { return "y"; }
const char *kiln_model_weight_name(int) { return "w"; }
int kiln_model_input_dtype(int) { return 0; }
int kiln_model_output_dtype(int) { return 0; }
int kiln_model_weight_dtype(int) { return 0; }
int kiln_model_input_rank(int) { return 2; }
int kiln_model_output_rank(int) { return 2; }
int kiln_model_weight_rank(int) { return 1; }
const int64_t *kiln_model_input_shape(int) { return kXShape; }
const int64_t *kiln_model_output_shape(int) { return kXShape; }
const int64_t *kiln_model_weight_shape(int) { return kWShape; }
size_t kiln_model_arena_bytes(void) { return 6 * sizeof(float); }
int kiln_model_create(const void *const *weights, kiln_model **out, char *err,
                      size_t errlen) {
  if (!weights || !weights[0]) {
    snprintf(err, errlen, "weight 'w' is null");
    return 1;
  }
  *out = new kiln_model{static_cast<const float *>(weights[0])};
  return 0;
}
#ifndef FAKE_NO_RUN
int kiln_model_run(kiln_model *m, const void *const *inputs,
                   void *const *outputs, void *arena, char *err,
                   size_t errlen) {
  if ((uintptr_t)arena % 64) {
    snprintf(err, errlen, "arena not 64-byte aligned");
    return 1;
  }
  const float *x = static_cast<const float *>(inputs[0]);
  float *y = static_cast<float *>(outputs[0]);
  float *t = static_cast<float *>(arena);
#ifdef FAKE_PROFILER
  const kiln_model_profiler *profiler = tProfiler;
#endif
  STEP_BEGIN(0);
  for (int i = 0; i < 6; ++i)
    t[i] = x[i] * m->w[i % 3];
  STEP_END(0);
  STEP_BEGIN(1);
  for (int i = 0; i < 6; ++i)
    y[i] = t[i] + 1.0f;
  STEP_END(1);
  return 0;
}
#endif
void kiln_model_destroy(kiln_model *m) { delete m; }
}
)cpp";

/// A temporary folder removed with its contents on destruction.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string &tag) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("kiln-model-test-" + std::to_string(getpid()) + "-" + tag + "-" +
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

/// The runtime's include folder in the source tree.
fs::path runtimeIncludeDir() {
  return fs::path(KILN_TEST_SOURCE_DIR) / "runtime" / "include";
}

/// Compiles the fake model with `defines` once and returns the .so's path.
fs::path fakeLibrary(const std::string &defines = "") {
  static TempDir buildDir("build");
  static std::map<std::string, fs::path> built;
  auto it = built.find(defines);
  if (it != built.end())
    return it->second;
  const char *cxx = std::getenv("KILN_CXX");
  if (!cxx || !*cxx)
    cxx = std::getenv("CXX");
  if (!cxx || !*cxx)
    cxx = "c++";
  fs::path source = buildDir.path / "fake_model.cpp";
  writeFile(source, kFakeModelSource);
  fs::path lib =
      buildDir.path / ("fake" + std::to_string(built.size()) + ".so");
  std::string cmd = std::string(cxx) + " -O1 -fPIC -shared " + defines + " -I" +
                    runtimeIncludeDir().string() + " " + source.string() +
                    " -o " + lib.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  INFO("compiling the fake model: " << cmd);
  REQUIRE(rc == 0);
  built[defines] = lib;
  return lib;
}

std::string weightsBin(const std::vector<float> &w, size_t padTo = 64) {
  std::string bytes(reinterpret_cast<const char *>(w.data()),
                    w.size() * sizeof(float));
  bytes.resize(std::max(padTo, bytes.size()), '\0');
  return bytes;
}

const char *kManifest = R"json({
  "abi_version": 3,
  "signature": {
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
    "outputs": [{"name": "y", "dtype": "f32", "shape": [2, 3]}]
  },
  "weights": [{"name": "w", "dtype": "f32", "shape": [3],
               "file": "weights.bin", "offset": 0, "bytes": 12}]
})json";

/// Writes a complete fake package into `dir`.
void writePackage(const fs::path &dir, const std::string &manifest = kManifest,
                  const std::string &libDefines = "") {
  fs::copy_file(fakeLibrary(libDefines), dir / "model.so",
                fs::copy_options::overwrite_existing);
  writeFile(dir / "manifest.json", manifest);
  writeFile(dir / "weights.bin", weightsBin({1, -1, 2}));
}

/// Writes the fake package into `dir` and loads it (the test fails, with the
/// load's message, when it does not load).
Model loadFakePackage(const fs::path &dir) {
  writePackage(dir);
  Expected<Model> loaded = Model::load(dir.string());
  INFO((loaded ? std::string() : loaded.status().message()));
  REQUIRE(loaded.isOk());
  return loaded.take();
}

Tensor inputX() {
  return Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
}

std::vector<double> expectedY() { return {2, -1, 7, 5, -4, 13}; }

/// Loads `dir`, expecting an error containing every piece of `needles`.
void requireLoadError(const fs::path &dir,
                      const std::vector<std::string> &needles,
                      const LoadOptions &options = {}) {
  Expected<Model> m = Model::load(dir.string(), options);
  REQUIRE_FALSE(m.isOk());
  INFO(m.status().message());
  for (const std::string &n : needles)
    CHECK(m.status().message().find(n) != std::string::npos);
}

std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t p = s.find(from); p != std::string::npos;
       p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

} // namespace

TEST_CASE("Model loads and runs a package", "[model]") {
  TempDir dir("ok");
  Model model = loadFakePackage(dir.path);
  REQUIRE(model.inputs().size() == 1);
  CHECK(model.inputs()[0].name == "x");
  CHECK(model.inputs()[0].shape == Shape{2, 3});
  REQUIRE(model.outputs().size() == 1);
  CHECK(model.outputs()[0].name == "y");
  REQUIRE(model.weights().size() == 1);
  CHECK(model.arenaBytes() == 24);

  Expected<NamedTensors> out = model.run({{"x", inputX()}});
  INFO((out ? std::string() : out.status().message()));
  REQUIRE(out.isOk());
  REQUIRE(out->size() == 1);
  CHECK((*out)[0].first == "y");
  CHECK((*out)[0].second.typeString() == "f32[2, 3]");
  CHECK((*out)[0].second.toDoubleVector() == expectedY());

  SECTION("non-contiguous inputs are made contiguous") {
    Tensor xt =
        Tensor::fromVector<float>({1, 4, 2, 5, 3, 6}, {3, 2}).permute({1, 0});
    REQUIRE_FALSE(xt.isContiguous());
    Expected<NamedTensors> r = model.run({{"x", xt}});
    REQUIRE(r.isOk());
    CHECK((*r)[0].second.toDoubleVector() == expectedY());
  }
  SECTION("a moved Model still runs") {
    Model moved = std::move(model);
    Expected<NamedTensors> r = moved.run({{"x", inputX()}});
    REQUIRE(r.isOk());
    CHECK((*r)[0].second.toDoubleVector() == expectedY());
  }
}

TEST_CASE("Model::run checks its inputs", "[model]") {
  TempDir dir("inputs");
  Model model = loadFakePackage(dir.path);
  auto runError = [&](const NamedTensors &in) {
    Expected<NamedTensors> r = model.run(in);
    REQUIRE_FALSE(r.isOk());
    return r.status().message();
  };
  CHECK(runError({{"x", Tensor::empty(DType::F32, {2, 4})}}) ==
        "input 'x': expected f32[2, 3] but got f32[2, 4]");
  CHECK(runError({{"x", Tensor::empty(DType::F64, {2, 3})}}) ==
        "input 'x': expected f32[2, 3] but got f64[2, 3]");
  CHECK(runError({{"z", inputX()}}) ==
        "unknown input 'z' (the model's inputs are 'x')");
  CHECK(runError({}) ==
        "missing input 'x' f32[2, 3] (the model's inputs are 'x')");
  CHECK(runError({{"x", inputX()}, {"x", inputX()}}) ==
        "input 'x' is given more than once");
}

TEST_CASE("Model binds weights from the package, files or the caller",
          "[model]") {
  TempDir dir("weights");
  SECTION("external data next to the package, at an unaligned offset") {
    writePackage(dir.path,
                 replaceAll(kManifest, R"("file": "weights.bin", "offset": 0)",
                            R"("file": "w.data", "offset": 4)"));
    writeFile(dir.path / "w.data",
              std::string(4, '\0') + weightsBin({1, -1, 2}, 12));
    Expected<Model> m = Model::load(dir.path.string());
    INFO((m ? std::string() : m.status().message()));
    REQUIRE(m.isOk());
    CHECK((*m->run({{"x", inputX()}}))[0].second.toDoubleVector() ==
          expectedY());
  }
  SECTION("external data in LoadOptions::weightsDir") {
    TempDir weightsDir("wdir");
    writePackage(
        dir.path,
        replaceAll(kManifest,
                   R"("file": "weights.bin", "offset": 0, "bytes": 12)",
                   R"("kind": "argument", "bind": "by-name",
               "external": {"file": "w.data", "offset": 0, "bytes": 12})"));
    writeFile(weightsDir.path / "w.data", weightsBin({1, -1, 2}, 12));
    requireLoadError(dir.path, {"weight 'w'",
                                "external data file 'w.data' "
                                "not found",
                                "weightsDir"});
    LoadOptions options;
    options.weightsDir = weightsDir.path.string();
    Expected<Model> m = Model::load(dir.path.string(), options);
    INFO((m ? std::string() : m.status().message()));
    REQUIRE(m.isOk());
    CHECK((*m->run({{"x", inputX()}}))[0].second.toDoubleVector() ==
          expectedY());
  }
  SECTION("external data next to the source model") {
    TempDir modelDir("src");
    std::string manifest = replaceAll(
        kManifest, R"("file": "weights.bin", "offset": 0, "bytes": 12)",
        R"("external": {"location": "w.data", "length": 12})");
    manifest = replaceAll(manifest, R"("abi_version": 3,)",
                          "\"abi_version\": 3, \"source\": \"" +
                              (modelDir.path / "m.onnx").string() + "\",");
    writePackage(dir.path, manifest);
    writeFile(modelDir.path / "w.data", weightsBin({1, -1, 2}, 12));
    Expected<Model> m = Model::load(dir.path.string());
    INFO((m ? std::string() : m.status().message()));
    REQUIRE(m.isOk());
    CHECK((*m->run({{"x", inputX()}}))[0].second.toDoubleVector() ==
          expectedY());
  }
  SECTION("caller weights override the package and fill missing data") {
    writePackage(dir.path, replaceAll(kManifest,
                                      R"(,
               "file": "weights.bin", "offset": 0, "bytes": 12)",
                                      ""));
    requireLoadError(dir.path, {"weight 'w'", "LoadOptions::weights",
                                "for kiln run and kiln-runner"});
    LoadOptions options;
    options.weights = {{"w", Tensor::fromVector<float>({1, -1, 2}, {3})}};
    Expected<Model> m = Model::load(dir.path.string(), options);
    INFO((m ? std::string() : m.status().message()));
    REQUIRE(m.isOk());
    CHECK((*m->run({{"x", inputX()}}))[0].second.toDoubleVector() ==
          expectedY());
    options.weights = {{"w", Tensor::fromVector<float>({1, 2}, {2})}};
    requireLoadError(dir.path, {"weight 'w': expected f32[3] but got f32[2]"},
                     options);
    options.weights = {{"v", Tensor::fromVector<float>({1, 2, 3}, {3})}};
    requireLoadError(dir.path, {"unknown weight 'v'"}, options);
  }
}

TEST_CASE("Model materialises fill weights", "[model]") {
  TempDir dir("fill");
  // w = [2, 2, 2] as a fill (2.0f is 0x40000000), nothing in weights.bin.
  std::string fill =
      replaceAll(kManifest, R"("file": "weights.bin", "offset": 0)",
                 R"("kind": "constant", "fill": "00000040")");
  writePackage(dir.path, fill);
  writeFile(dir.path / "weights.bin", "");
  Expected<Model> m = Model::load(dir.path.string());
  INFO((m ? std::string() : m.status().message()));
  REQUIRE(m.isOk());
  CHECK((*m->run({{"x", inputX()}}))[0].second.toDoubleVector() ==
        std::vector<double>{3, 5, 7, 9, 11, 13});

  SECTION("a damaged fill is refused, naming the manifest and the weight") {
    writeFile(dir.path / "manifest.json", replaceAll(fill, "00000040", "0040"));
    requireLoadError(dir.path,
                     {"manifest.json: weights[0] ('w'): 'fill' must be the "
                      "bytes of one f32 element as 8 hex digits, not "
                      "\"0040\""});
    writeFile(dir.path / "manifest.json",
              replaceAll(fill, "00000040", "0000004g"));
    requireLoadError(dir.path, {"manifest.json: weights[0] ('w'): 'fill'",
                                "not \"0000004g\""});
    writeFile(dir.path / "manifest.json",
              replaceAll(fill, R"("bytes": 12)", R"("bytes": 8)"));
    requireLoadError(dir.path, {"manifest.json: weights[0] ('w'): holds 8 "
                                "bytes but f32[3] needs 12"});
  }
  SECTION("a caller's weight replaces a fill") {
    LoadOptions options;
    options.weights = {{"w", Tensor::fromVector<float>({1, -1, 2}, {3})}};
    Expected<Model> given = Model::load(dir.path.string(), options);
    REQUIRE(given.isOk());
    CHECK((*given->run({{"x", inputX()}}))[0].second.toDoubleVector() ==
          expectedY());
  }
}

TEST_CASE("Broken packages are errors, not crashes", "[model]") {
  TempDir dir("broken");
  SECTION("no folder") {
    requireLoadError(dir.path / "nope", {"no such package folder"});
  }
  SECTION("missing manifest.json") {
    writePackage(dir.path);
    fs::remove(dir.path / "manifest.json");
    requireLoadError(dir.path, {"manifest.json", "cannot open"});
  }
  SECTION("malformed manifest.json") {
    writePackage(dir.path, "{ \"weights\": [ ");
    requireLoadError(dir.path, {"manifest.json", "not valid JSON"});
  }
  SECTION("manifest.json with a dynamic weight shape") {
    writePackage(dir.path,
                 replaceAll(kManifest, R"("shape": [3])", R"("shape": [-1])"));
    requireLoadError(dir.path,
                     {"manifest.json", "weights[0] ('w'): 'shape'", "static"});
  }
  SECTION("missing model.so") {
    writePackage(dir.path);
    fs::remove(dir.path / "model.so");
    requireLoadError(dir.path, {"model.so", "missing"});
  }
  SECTION("corrupt model.so") {
    writePackage(dir.path);
    writeFile(dir.path / "model.so", "this is not an ELF file");
    requireLoadError(dir.path, {"model.so", "cannot load"});
  }
  SECTION("model.so without an entry point") {
    writePackage(dir.path, kManifest, "-DFAKE_NO_RUN");
    requireLoadError(dir.path,
                     {"model.so", "does not export 'kiln_model_run'"});
  }
  SECTION("another ABI version") {
    writePackage(dir.path, kManifest, "-DFAKE_ABI_VERSION=9");
    requireLoadError(dir.path, {"model.so", "ABI version 9",
                                "implements version " +
                                    std::to_string(KILN_MODEL_ABI_VERSION)});
  }
  SECTION("missing weights.bin") {
    writePackage(dir.path);
    fs::remove(dir.path / "weights.bin");
    requireLoadError(dir.path, {"weights.bin", "weight 'w'", "cannot open"});
  }
  SECTION("truncated weights.bin") {
    writePackage(dir.path);
    writeFile(dir.path / "weights.bin", std::string(8, '\0'));
    requireLoadError(dir.path,
                     {"weights.bin", "is 8 bytes but weight 'w' needs bytes "
                                     "[0, 12)"});
  }
  SECTION("manifest weight dtype disagrees with model.so") {
    writePackage(dir.path,
                 replaceAll(kManifest, R"("name": "w", "dtype": "f32")",
                            R"("name": "w", "dtype": "i32")"));
    requireLoadError(dir.path, {"manifest.json", "weight 'w' is i32[3]",
                                "the library declares f32[3]"});
  }
  SECTION("manifest weight bytes disagree with its shape") {
    writePackage(dir.path,
                 replaceAll(kManifest, R"("bytes": 12)", R"("bytes": 16)"));
    requireLoadError(dir.path, {"manifest.json", "weights[0] ('w')",
                                "holds 16 bytes but f32[3] needs 12"});
  }
  SECTION("manifest input shape disagrees with model.so") {
    writePackage(dir.path, replaceAll(kManifest, R"("shape": [2, 3]}],
    "outputs")",
                                      R"("shape": [2, 4]}],
    "outputs")"));
    requireLoadError(dir.path, {"manifest.json", "input 0 is 'x' f32[2, 4]",
                                "the library declares 'x' f32[2, 3]"});
  }
  SECTION("manifest lists an unknown weight") {
    writePackage(dir.path,
                 replaceAll(kManifest, R"("name": "w")", R"("name": "v")"));
    requireLoadError(dir.path, {"manifest.json", "weight 'v'",
                                "the library does not declare"});
  }
}

TEST_CASE("Model::run writes outputs into the caller's tensors",
          "[model][outputs-into]") {
  TempDir dir("into");
  const Model model = loadFakePackage(dir.path);
  auto runInto = [&](const NamedTensors &in, NamedTensors &into) {
    RunOptions options;
    options.outputsInto = &into;
    return model.run(in, options);
  };

  SECTION("an aligned tensor is written in place and not returned") {
    Tensor y = Tensor::empty(DType::F32, {2, 3});
    void *before = y.rawData();
    NamedTensors into = {{"y", y}};
    Expected<NamedTensors> r = runInto({{"x", inputX()}}, into);
    INFO((r ? std::string() : r.status().message()));
    REQUIRE(r.isOk());
    CHECK(r->empty());
    CHECK(y.rawData() == before);
    CHECK(y.toDoubleVector() == expectedY());
  }
  SECTION("the output may be the input's storage (in place)") {
    Tensor x = inputX();
    NamedTensors into = {{"y", x}};
    Expected<NamedTensors> r = runInto({{"x", x}}, into);
    REQUIRE(r.isOk());
    CHECK(x.toDoubleVector() == expectedY());
  }
  SECTION("an unaligned tensor is written through a temporary") {
    // A view 4 bytes into a larger buffer: contiguous but not 64-aligned.
    Tensor big = Tensor::empty(DType::F32, {7});
    Tensor y(big.storage(), DType::F32, {2, 3}, contiguousStrides({2, 3}), 1);
    NamedTensors into = {{"y", y}};
    Expected<NamedTensors> r = runInto({{"x", inputX()}}, into);
    REQUIRE(r.isOk());
    CHECK(y.toDoubleVector() == expectedY());
    CHECK(big.getDouble(0) == 0.0);
  }
  SECTION("errors name the output") {
    auto error = [&](NamedTensors into) {
      Expected<NamedTensors> r = runInto({{"x", inputX()}}, into);
      REQUIRE_FALSE(r.isOk());
      return r.status().message();
    };
    CHECK(error({{"z", Tensor::empty(DType::F32, {2, 3})}}) ==
          "RunOptions::outputsInto: unknown output 'z' (the model's outputs "
          "are 'y')");
    CHECK(error({{"y", Tensor::empty(DType::F32, {3, 2})}}) ==
          "RunOptions::outputsInto: output 'y': expected f32[2, 3] but got "
          "f32[3, 2]");
    CHECK(error({{"y", Tensor::empty(DType::F64, {2, 3})}}) ==
          "RunOptions::outputsInto: output 'y': expected f32[2, 3] but got "
          "f64[2, 3]");
    CHECK(error({{"y", Tensor::empty(DType::F32, {3, 2}).permute({1, 0})}}) ==
          "RunOptions::outputsInto: output 'y': the tensor is not "
          "contiguous; pass a contiguous one");
    CHECK(error({{"y", Tensor()}}) ==
          "RunOptions::outputsInto: output 'y': no tensor given (expected "
          "f32[2, 3])");
    Tensor y = Tensor::empty(DType::F32, {2, 3});
    CHECK(error({{"y", y}, {"y", y}}) ==
          "RunOptions::outputsInto: output 'y' is given more than once");
  }
  SECTION("outputs not named are returned as usual") {
    NamedTensors into;
    Expected<NamedTensors> r = runInto({{"x", inputX()}}, into);
    REQUIRE(r.isOk());
    REQUIRE(r->size() == 1);
    CHECK((*r)[0].second.toDoubleVector() == expectedY());
  }
}

TEST_CASE("Model::load refuses a training package", "[model]") {
  TempDir dir("training");
  writeFile(dir.path / "manifest.json",
            R"({"format": "kiln-package", "kind": "training",
                "training": {}})");
  requireLoadError(dir.path, {"'" + dir.path.string() +
                              "' is a training package: load it with "
                              "kiln::Trainer (docs/training.md)"});
}

TEST_CASE("Model::run reuses the buffers of outputs the caller dropped",
          "[model]") {
  TempDir dir("pool");
  Model model = loadFakePackage(dir.path);
  const void *first = nullptr;
  {
    Expected<NamedTensors> out = model.run({{"x", inputX()}});
    REQUIRE(out.isOk());
    first = (*out)[0].second.rawData();
  }
  // Dropped: the next run writes into the same buffer.
  Expected<NamedTensors> again = model.run({{"x", inputX()}});
  REQUIRE(again.isOk());
  CHECK((*again)[0].second.rawData() == first);
  CHECK((*again)[0].second.toDoubleVector() == expectedY());
  // Held: a new buffer, and the held output keeps its values.
  Expected<NamedTensors> third = model.run(
      {{"x", Tensor::fromVector<float>({0, 0, 0, 0, 0, 0}, {2, 3})}});
  REQUIRE(third.isOk());
  CHECK((*third)[0].second.rawData() != first);
  CHECK((*again)[0].second.toDoubleVector() == expectedY());
  // An output outlives its Model (the pool lives as long as its buffers).
  Tensor kept = (*third)[0].second;
  { Model gone = std::move(model); }
  CHECK(kept.toDoubleVector() ==
        std::vector<double>{1, 1, 1, 1, 1, 1});
}

TEST_CASE("Model::run is safe from several threads", "[model]") {
  TempDir dir("threads");
  Model model = loadFakePackage(dir.path);
  constexpr int kThreads = 4, kRuns = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        float v = static_cast<float>(t * 1000 + r);
        Tensor x = Tensor::fromVector<float>({v, v, v, v, v, v}, {2, 3});
        Expected<NamedTensors> out = model.run({{"x", x}});
        std::vector<double> want = {v + 1.0, -v + 1.0, 2 * v + 1.0,
                                    v + 1.0, -v + 1.0, 2 * v + 1.0};
        if (!out || (*out)[0].second.toDoubleVector() != want)
          ++failures;
      }
    });
  }
  for (std::thread &th : threads)
    th.join();
  CHECK(failures == 0);
}

TEST_CASE("Model::run with RunOptions::trace adds spans of the run and its "
          "steps",
          "[model][trace]") {
  TempDir dir("trace");
  writePackage(dir.path, kManifest, "-DFAKE_PROFILER");
  Expected<Model> m = Model::load(dir.path.string());
  REQUIRE(m.isOk());
  Trace trace;
  RunOptions options;
  options.trace = &trace;
  Expected<NamedTensors> out = m->run({{"x", inputX()}}, options);
  REQUIRE(out.isOk());
  CHECK((*out)[0].second.toDoubleVector() == expectedY());
  std::vector<TraceEvent> spans = trace.events();
  REQUIRE(spans.size() == 3);
  const TraceEvent &scale = spans[0], &copy = spans[1], &run = spans[2];
  CHECK(run.category == "run");
  CHECK(run.name == dir.path.filename().string());
  CHECK(scale.name == "scale");
  CHECK(scale.category == "kernel");
  CHECK(copy.category == "copy");
  CHECK(scale.args == std::vector<std::pair<std::string, std::string>>{
                          {"step", "0"}, {"nodes", "mul_node"}});
  for (const TraceEvent &step : {scale, copy}) {
    CHECK(step.durationUs >= 0);
    CHECK(step.startUs >= run.startUs);
    CHECK(step.startUs + step.durationUs <= run.startUs + run.durationUs);
    CHECK(step.tid == run.tid);
  }
  CHECK(copy.startUs >= scale.startUs + scale.durationUs);

  // The hooks are the calling thread's, for that run only: a run without
  // a trace, here or on another thread, adds nothing.
  REQUIRE(m->run({{"x", inputX()}}).isOk());
  std::thread other([&] { REQUIRE(m->run({{"x", inputX()}}).isOk()); });
  other.join();
  CHECK(trace.events().size() == 3);
}

TEST_CASE("A package without the profiler export is traced as a whole",
          "[model][trace]") {
  TempDir dir("trace-old");
  Model m = loadFakePackage(dir.path);
  Trace trace;
  RunOptions options;
  options.trace = &trace;
  REQUIRE(m.run({{"x", inputX()}}, options).isOk());
  std::vector<TraceEvent> spans = trace.events();
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].category == "run");
  bool explained = false;
  for (const auto &[key, value] : spans[0].args)
    explained |=
        key == "steps" && value.find("older Kiln") != std::string::npos;
  CHECK(explained);
}
