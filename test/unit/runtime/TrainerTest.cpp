//===- TrainerTest.cpp - Tests of kiln::Trainer and its C ABI -------------===//
//
// This file implements the unit tests of kiln::Trainer (Trainer.h) and the
// trainer's C ABI (TrainerABI.h) against a hand-written fake training
// package: linear regression (pred = x . w + b, loss = mean((pred - y)^2))
// with SGD with momentum, its forward, backward and optimizer graphs three
// small C++ files implementing the model C ABI, compiled into model.so with
// the host compiler ($KILN_CXX, $CXX or c++) at test time, plus a manifest
// written with writeManifest and weights.safetensors. The optimizer also
// copies "kiln.step" into a state tensor, so the step numbering is checked.
// It covers the loss, gradients and updates against a reference computed
// here, in-place and replacing updates, checkpoints (save, load, loadState
// of checkpoints and weights files, their errors), input checks, broken
// packages, and the C ABI.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Trainer.h"
#include "kiln/runtime/Model.h"
#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/SafeTensors.h"
#include "kiln/runtime/TrainerABI.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

using namespace kiln;
namespace fs = std::filesystem;

namespace {

/// A temporary folder removed with its contents on destruction.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string &tag) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("kiln-trainer-test-" + std::to_string(getpid()) + "-" + tag + "-" +
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

/// An f32 value of a fake graph's signature.
struct FakeValue {
  std::string name;
  Shape shape;
};

/// The source of a fake graph package's model.so: f32 inputs and outputs,
/// no weights, `body` computing the outputs from IN(k) and OUT(k).
std::string graphSource(const std::vector<FakeValue> &ins,
                        const std::vector<FakeValue> &outs,
                        const std::string &body) {
  auto tables = [](const std::string &prefix,
                   const std::vector<FakeValue> &values) {
    std::string names, ranks, shapes;
    for (const FakeValue &v : values) {
      names += "\"" + v.name + "\", ";
      ranks += std::to_string(v.shape.size()) + ", ";
      std::string dims = "0";
      for (size_t i = 0; i < v.shape.size(); ++i)
        dims = (i ? dims + ", " : "") + std::to_string(v.shape[i]);
      shapes += "{" + dims + "}, ";
    }
    return "static const char *k" + prefix + "Name[] = {" + names +
           "};\nstatic const int k" + prefix + "Rank[] = {" + ranks +
           "};\nstatic const int64_t k" + prefix + "Shape[][4] = {" + shapes +
           "};\n";
  };
  return std::string(R"cpp(
#include "kiln/runtime/ModelABI.h"
#include <stdint.h>
struct kiln_model { int unused; };
)cpp") + tables("In", ins) +
         tables("Out", outs) + R"cpp(
extern "C" {
int kiln_model_abi_version(void) { return KILN_MODEL_ABI_VERSION; }
int kiln_model_num_inputs(void) { return sizeof(kInRank) / sizeof(int); }
int kiln_model_num_outputs(void) { return sizeof(kOutRank) / sizeof(int); }
int kiln_model_num_weights(void) { return 0; }
const char *kiln_model_input_name(int i) { return kInName[i]; }
const char *kiln_model_output_name(int i) { return kOutName[i]; }
const char *kiln_model_weight_name(int) { return 0; }
int kiln_model_input_dtype(int) { return 0; }
int kiln_model_output_dtype(int) { return 0; }
int kiln_model_weight_dtype(int) { return 0; }
int kiln_model_input_rank(int i) { return kInRank[i]; }
int kiln_model_output_rank(int i) { return kOutRank[i]; }
int kiln_model_weight_rank(int) { return 0; }
const int64_t *kiln_model_input_shape(int i) { return kInShape[i]; }
const int64_t *kiln_model_output_shape(int i) { return kOutShape[i]; }
const int64_t *kiln_model_weight_shape(int) { return 0; }
size_t kiln_model_arena_bytes(void) { return 64; }
int kiln_model_create(const void *const *, kiln_model **out, char *,
                      size_t) {
  *out = new kiln_model{0};
  return 0;
}
int kiln_model_run(kiln_model *, const void *const *inputs,
                   void *const *outputs, void *, char *, size_t) {
#define IN(k) (static_cast<const float *>(inputs[k]))
#define OUT(k) (static_cast<float *>(outputs[k]))
)cpp" + body +
         R"cpp(
  return 0;
}
void kiln_model_destroy(kiln_model *m) { delete m; }
}
)cpp";
}

// The fake model: x f32[4, 3], y f32[4]; parameters w f32[3], b f32[].
const char *kForwardBody = R"cpp(
  const float *x = IN(0), *w = IN(1), *b = IN(2), *y = IN(3);
  float *loss = OUT(0), *r = OUT(1);
  float s = 0;
  for (int i = 0; i < 4; ++i) {
    float p = b[0];
    for (int j = 0; j < 3; ++j)
      p += x[i * 3 + j] * w[j];
    r[i] = p - y[i];
    s += r[i] * r[i];
  }
  loss[0] = s / 4;
)cpp";

const char *kBackwardBody = R"cpp(
  const float *r = IN(0), *x = IN(1);
  float *gw = OUT(0), *gb = OUT(1);
  for (int j = 0; j < 3; ++j) {
    gw[j] = 0;
    for (int i = 0; i < 4; ++i)
      gw[j] += 0.5f * x[i * 3 + j] * r[i];
  }
  gb[0] = 0;
  for (int i = 0; i < 4; ++i)
    gb[0] += 0.5f * r[i];
)cpp";

// Reads each element before writing its update: safe in place.
const char *kOptimizerBody = R"cpp(
  const float *w = IN(0), *b = IN(1), *gw = IN(2), *gb = IN(3);
  const float *mw = IN(4), *mb = IN(5), *lr = IN(6), *step = IN(7);
  float *wn = OUT(0), *bn = OUT(1), *mwn = OUT(2), *mbn = OUT(3);
  float *count = OUT(4);
  for (int j = 0; j < 3; ++j) {
    float m = 0.9f * mw[j] + gw[j];
    mwn[j] = m;
    wn[j] = w[j] - lr[0] * m;
  }
  float m = 0.9f * mb[0] + gb[0];
  mbn[0] = m;
  bn[0] = b[0] - lr[0] * m;
  count[0] = step[0];
)cpp";

/// Compiles `source` once (by content) and returns the .so's path.
fs::path compiled(const std::string &source) {
  static TempDir buildDir("build");
  static std::map<std::string, fs::path> built;
  auto it = built.find(source);
  if (it != built.end())
    return it->second;
  const char *cxx = std::getenv("KILN_CXX");
  if (!cxx || !*cxx)
    cxx = std::getenv("CXX");
  if (!cxx || !*cxx)
    cxx = "c++";
  std::string stem = "graph" + std::to_string(built.size());
  fs::path src = buildDir.path / (stem + ".cpp");
  fs::path lib = buildDir.path / (stem + ".so");
  writeFile(src, source);
  std::string cmd = std::string(cxx) + " -O1 -fPIC -shared -I" +
                    runtimeIncludeDir().string() + " " + src.string() + " -o " +
                    lib.string() + " 2>&1";
  INFO("compiling a fake graph: " << cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  built[source] = lib;
  return lib;
}

void writeGraph(const fs::path &dir, const std::vector<FakeValue> &ins,
                const std::vector<FakeValue> &outs, const std::string &body) {
  fs::create_directories(dir);
  fs::copy_file(compiled(graphSource(ins, outs, body)), dir / "model.so",
                fs::copy_options::overwrite_existing);
  writeFile(dir / "manifest.json", R"({"abi_version": 3})");
}

ManifestValue f32(const std::string &name, const Shape &shape) {
  return {name, DType::F32, shape, numElements(shape) * 4};
}

/// The fake package's manifest.
PackageManifest fakeManifest() {
  PackageManifest m;
  m.kind = PackageKind::Training;
  m.source = "linear.onnx";
  m.target = "cpu";
  m.inputs = {f32("x", {4, 3}), f32("y", {4})};
  m.outputs = {f32("loss", {})};
  ManifestTraining t;
  t.parameters = {f32("w", {3}), f32("b", {})};
  t.state = {f32("w.m", {3}), f32("b.m", {}), f32("count", {})};
  t.gradients = {{"w", "w.grad"}, {"b", "b.grad"}};
  t.updates = {{"w.next", "w"},
               {"b.next", "b"},
               {"w.m.next", "w.m"},
               {"b.m.next", "b.m"},
               {"count.next", "count"}};
  t.saved = {f32("r", {4})};
  t.savedBytes = 16;
  t.optimizer.kind = "momentum";
  t.optimizer.lr = 0.1;
  t.optimizer.momentum = 0.9;
  m.training = t;
  return m;
}

const std::vector<float> kW0 = {0.5f, -1.0f, 2.0f};
const float kB0 = 0.25f;

/// Writes the fake training package into `dir`.
void writeTrainingPackage(const fs::path &dir,
                          const PackageManifest &manifest = fakeManifest()) {
  writeGraph(dir / "graphs/forward",
             {{"x", {4, 3}}, {"w", {3}}, {"b", {}}, {"y", {4}}},
             {{"loss", {}}, {"r", {4}}}, kForwardBody);
  writeGraph(dir / "graphs/backward", {{"r", {4}}, {"x", {4, 3}}},
             {{"w.grad", {3}}, {"b.grad", {}}}, kBackwardBody);
  writeGraph(dir / "graphs/optimizer",
             {{"w", {3}},
              {"b", {}},
              {"w.grad", {3}},
              {"b.grad", {}},
              {"w.m", {3}},
              {"b.m", {}},
              {"kiln.lr", {}},
              {"kiln.step", {}}},
             {{"w.next", {3}},
              {"b.next", {}},
              {"w.m.next", {3}},
              {"b.m.next", {}},
              {"count.next", {}}},
             kOptimizerBody);
  REQUIRE(writeManifest(manifest, (dir / "manifest.json").string()).isOk());
  REQUIRE(writeSafeTensors((dir / "weights.safetensors").string(),
                           {{"w", Tensor::fromVector<float>(kW0, {3})},
                            {"b", Tensor::scalar<float>(kB0)}},
                           {{"format", "kiln-training"}})
              .isOk());
}

const std::vector<float> kX = {1, 2, 0, -1, 0.5f, 1, 0, 1, -2, 3, 1, 1};
const std::vector<float> kY = {1, -2, 0.5f, 4};

NamedTensors batch() {
  return {{"x", Tensor::fromVector<float>(kX, {4, 3})},
          {"y", Tensor::fromVector<float>(kY, {4})}};
}

/// The reference: the same arithmetic in float.
struct Reference {
  std::vector<float> w = kW0, mw = {0, 0, 0};
  float b = kB0, mb = 0;
  float lr = 0.1f;
  std::vector<float> residual() const {
    std::vector<float> r(4);
    for (int i = 0; i < 4; ++i) {
      float p = b;
      for (int j = 0; j < 3; ++j)
        p += kX[i * 3 + j] * w[j];
      r[i] = p - kY[i];
    }
    return r;
  }
  float loss() const {
    float s = 0;
    for (float r : residual())
      s += r * r;
    return s / 4;
  }
  void gradients(std::vector<float> &gw, float &gb) const {
    std::vector<float> r = residual();
    gw.assign(3, 0);
    gb = 0;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i)
        gw[j] += 0.5f * kX[i * 3 + j] * r[i];
    for (int i = 0; i < 4; ++i)
      gb += 0.5f * r[i];
  }
  void step() {
    std::vector<float> gw;
    float gb;
    gradients(gw, gb);
    for (int j = 0; j < 3; ++j) {
      mw[j] = 0.9f * mw[j] + gw[j];
      w[j] -= lr * mw[j];
    }
    mb = 0.9f * mb + gb;
    b -= lr * mb;
  }
};

void checkClose(const Tensor &t, const std::vector<float> &expected) {
  std::vector<double> got = t.toDoubleVector();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == Approx(expected[i]).epsilon(1e-5).margin(1e-6));
}

const Tensor &named(const NamedTensors &tensors, const std::string &name) {
  for (const auto &[n, t] : tensors)
    if (n == name)
      return t;
  FAIL("no tensor '" << name << "'");
  static Tensor none;
  return none;
}

Trainer loadOk(const fs::path &dir, const TrainerOptions &options = {}) {
  Expected<Trainer> t = Trainer::load(dir.string(), options);
  INFO((t ? std::string() : t.status().message()));
  REQUIRE(t.isOk());
  return t.take();
}

std::string loadError(const fs::path &dir, const TrainerOptions &options = {}) {
  Expected<Trainer> t = Trainer::load(dir.string(), options);
  REQUIRE_FALSE(t.isOk());
  return t.status().message();
}

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace

TEST_CASE("Trainer loads a training package and trains", "[trainer]") {
  TempDir dir("train");
  writeTrainingPackage(dir.path);
  Trainer trainer = loadOk(dir.path);
  REQUIRE(trainer.inputs().size() == 2);
  CHECK(trainer.inputs()[0].name == "x");
  REQUIRE(trainer.parameters().size() == 2);
  CHECK(trainer.parameters()[1].name == "b");
  CHECK(trainer.state().size() == 3);
  CHECK(trainer.device() == Device::CPU);
  CHECK(trainer.step() == 0);
  CHECK(trainer.learningRate() == 0.1);

  Reference ref;
  Expected<double> loss = trainer.forward(batch());
  REQUIRE(loss.isOk());
  CHECK(*loss == Approx(ref.loss()));

  Expected<NamedTensors> grads = trainer.gradients(batch());
  REQUIRE(grads.isOk());
  REQUIRE(grads->size() == 2);
  std::vector<float> gw;
  float gb;
  ref.gradients(gw, gb);
  checkClose(named(*grads, "w"), gw);
  checkClose(named(*grads, "b"), {gb});
  CHECK(trainer.step() == 0);

  SECTION("steps update the parameters and state in place") {
    for (int i = 0; i < 3; ++i) {
      Expected<double> l = trainer.trainStep(batch());
      INFO((l ? std::string() : l.status().message()));
      REQUIRE(l.isOk());
      CHECK(*l == Approx(ref.loss())); // the loss before the update
      ref.step();
    }
    CHECK(trainer.step() == 3);
    Expected<NamedTensors> params = trainer.parameterValues();
    REQUIRE(params.isOk());
    checkClose(named(*params, "w"), ref.w);
    checkClose(named(*params, "b"), {ref.b});
    Expected<NamedTensors> state = trainer.stateValues();
    REQUIRE(state.isOk());
    checkClose(named(*state, "w.m"), ref.mw);
    checkClose(named(*state, "count"), {3.0f}); // kiln.step of the 3rd step
    CHECK(*trainer.forward(batch()) == Approx(ref.loss()));
  }
  SECTION("replacing updates give the same result") {
    TrainerOptions options;
    options.inPlaceUpdates = false;
    Trainer other = loadOk(dir.path, options);
    for (int i = 0; i < 3; ++i) {
      REQUIRE(trainer.trainStep(batch()).isOk());
      REQUIRE(other.trainStep(batch()).isOk());
    }
    CHECK(other.parameterValues()->at(0).second.toDoubleVector() ==
          trainer.parameterValues()->at(0).second.toDoubleVector());
  }
  SECTION("the learning rate") {
    trainer.setLearningRate(0.01);
    ref.lr = 0.01f;
    REQUIRE(trainer.trainStep(batch()).isOk());
    ref.step();
    checkClose(named(*trainer.parameterValues(), "w"), ref.w);
    TrainerOptions options;
    options.lr = 0.5;
    CHECK(loadOk(dir.path, options).learningRate() == 0.5);
  }
  SECTION("training reduces the loss") {
    double first = *trainer.forward(batch());
    for (int i = 0; i < 50; ++i)
      REQUIRE(trainer.trainStep(batch()).isOk());
    CHECK(*trainer.forward(batch()) < first * 0.5);
  }
  SECTION("a moved trainer still trains") {
    Trainer moved = std::move(trainer);
    REQUIRE(moved.trainStep(batch()).isOk());
    CHECK(moved.step() == 1);
  }
}

TEST_CASE("Trainer checks its inputs", "[trainer]") {
  TempDir dir("inputs");
  writeTrainingPackage(dir.path);
  Trainer trainer = loadOk(dir.path);
  auto error = [&](const NamedTensors &in) {
    Expected<double> l = trainer.trainStep(in);
    REQUIRE_FALSE(l.isOk());
    return l.status().message();
  };
  NamedTensors in = batch();
  CHECK(error({in[0]}) ==
        "missing input 'y' f32[4] (the model's inputs are 'x', 'y')");
  NamedTensors extra = in;
  extra.emplace_back("z", Tensor::scalar<float>(1));
  CHECK(error(extra) == "unknown input 'z' (the model's inputs are 'x', 'y')");
  CHECK(error({in[0], {"y", Tensor::empty(DType::F32, {5})}}) ==
        "input 'y': expected f32[4] but got f32[5]");
  CHECK(trainer.step() == 0);
  CHECK_FALSE(trainer.forward({in[1]}).isOk());
  CHECK_FALSE(trainer.gradients({}).isOk());
}

TEST_CASE("Trainer checkpoints", "[trainer]") {
  TempDir dir("ckpt");
  writeTrainingPackage(dir.path);
  Trainer trainer = loadOk(dir.path);
  for (int i = 0; i < 2; ++i)
    REQUIRE(trainer.trainStep(batch()).isOk());
  std::string ckpt = (dir.path / "ckpt.safetensors").string();
  REQUIRE(trainer.save(ckpt).isOk());

  std::map<std::string, std::string> meta;
  Expected<NamedTensors> file = readSafeTensors(ckpt, &meta);
  REQUIRE(file.isOk());
  CHECK(meta == std::map<std::string, std::string>{{"format", "kiln-training"},
                                                   {"optimizer", "momentum"}});
  REQUIRE(file->size() == 6);
  CHECK(named(*file, "kiln.step").typeString() == "i64[]");
  CHECK(named(*file, "kiln.step").getInt(0) == 2);

  SECTION("a checkpoint resumes exactly") {
    TrainerOptions options;
    options.weightsPath = ckpt;
    Trainer resumed = loadOk(dir.path, options);
    CHECK(resumed.step() == 2);
    REQUIRE(trainer.trainStep(batch()).isOk());
    REQUIRE(resumed.trainStep(batch()).isOk());
    CHECK(resumed.parameterValues()->at(0).second.toDoubleVector() ==
          trainer.parameterValues()->at(0).second.toDoubleVector());
    CHECK(named(*resumed.stateValues(), "count").getDouble(0) == 3.0);
  }
  SECTION("loadState of a checkpoint and of a weights file") {
    Trainer fresh = loadOk(dir.path);
    REQUIRE(fresh.loadState(ckpt).isOk());
    CHECK(fresh.step() == 2);
    CHECK(named(*fresh.stateValues(), "count").getDouble(0) == 2.0);
    REQUIRE(
        fresh.loadState((dir.path / "weights.safetensors").string()).isOk());
    CHECK(fresh.step() == 0);
    checkClose(named(*fresh.parameterValues(), "w"), kW0);
    checkClose(named(*fresh.stateValues(), "w.m"), {0, 0, 0});
  }
  SECTION("loadState errors change nothing") {
    auto error = [&](const NamedTensors &tensors) {
      std::string path = (dir.path / "bad.safetensors").string();
      REQUIRE(writeSafeTensors(path, tensors).isOk());
      Status s = trainer.loadState(path);
      REQUIRE_FALSE(s.isOk());
      CHECK(trainer.step() == 2);
      return s.message();
    };
    Tensor w = Tensor::fromVector<float>({1, 2, 3}, {3});
    Tensor b = Tensor::scalar<float>(1);
    CHECK(contains(error({{"w", w}}), "bad.safetensors: has no 'b' (every "
                                      "parameter of the training package "
                                      "must be in it)"));
    CHECK(contains(error({}), "has no 'w', 'b'"));
    CHECK(contains(
        error({{"w", w}, {"b", b}, {"kiln.step", Tensor::scalar<int64_t>(5)}}),
        "is a checkpoint (it has 'kiln.step') but has no optimizer "
        "state 'w.m', 'b.m', 'count'"));
    CHECK(contains(error({{"w", w}, {"b", b}, {"extra", b}}),
                   "holds 'extra', which the training package has no "
                   "parameter or state tensor for"));
    CHECK(contains(
        error({{"w", Tensor::fromVector<float>({1, 2}, {2})}, {"b", b}}),
        "tensor 'w' is f32[2] but the package declares f32[3]"));
    CHECK(contains(
        error({{"w", w}, {"b", b}, {"kiln.step", Tensor::scalar<float>(1)}}),
        "'kiln.step' is f32[]; expected i64[]"));
    Status missing =
        trainer.loadState((dir.path / "none.safetensors").string());
    CHECK_FALSE(missing.isOk());
    checkClose(named(*trainer.stateValues(), "count"), {2.0f});
  }
}

TEST_CASE("Broken training packages are errors", "[trainer]") {
  TempDir dir("broken");
  writeTrainingPackage(dir.path);

  SECTION("Model::load and Trainer::load refuse each other's packages") {
    Expected<Model> m = Model::load(dir.path.string());
    REQUIRE_FALSE(m.isOk());
    CHECK(m.status().message() ==
          "'" + dir.path.string() +
              "' is a training package: load it with kiln::Trainer "
              "(docs/training.md)");
    CHECK(contains(loadError(dir.path / "graphs/forward"),
                   "is not a training package"));
  }
  SECTION("a missing graph") {
    fs::remove_all(dir.path / "graphs/backward");
    std::string e = loadError(dir.path);
    CHECK(contains(e, "the backward graph (training.graphs.backward)"));
  }
  SECTION("a missing weights file") {
    fs::remove(dir.path / "weights.safetensors");
    CHECK(contains(loadError(dir.path), "weights.safetensors: cannot open"));
  }
  SECTION("a gradient the backward graph does not compute") {
    PackageManifest m = fakeManifest();
    m.training->gradients[1].value = "b.gradient";
    writeTrainingPackage(dir.path, m);
    CHECK(contains(loadError(dir.path),
                   "graphs/backward: has no output 'b.gradient' (the "
                   "gradient of 'b')"));
  }
  SECTION("a graph input nothing provides") {
    PackageManifest m = fakeManifest();
    m.training->state.erase(m.training->state.begin()); // w.m
    m.training->updates.erase(m.training->updates.begin() + 2);
    writeTrainingPackage(dir.path, m);
    CHECK(contains(loadError(dir.path),
                   "graphs/optimizer: input 'w.m' f32[3] is none of the "
                   "values it may read"));
  }
  SECTION("a parameter of another shape than the graph's input") {
    PackageManifest m = fakeManifest();
    m.training->parameters[0].shape = {4};
    writeTrainingPackage(dir.path, m);
    CHECK(contains(loadError(dir.path), "graphs/forward: input 'w' is f32[3] "
                                        "but the value it reads is f32[4]"));
  }
  SECTION("a loss the forward graph lacks") {
    PackageManifest m = fakeManifest();
    m.training->loss = "total";
    writeTrainingPackage(dir.path, m);
    CHECK(contains(loadError(dir.path), "has no output 'total'"));
  }
  SECTION("saved activations not where the forward graph leaves them") {
    // (model.so's arena is 64 bytes; the last manifest claims 128.)
    auto arenaValue = [](int offset, const char *role) {
      return strCat(R"({"abi_version": 3, "memory_plan": {"arena_bytes": 128,
                       "arena_values": [{"name": "h", "dtype": "f32",
                       "shape": [4], "offset": )",
                    offset, R"(, "role": ")", role, R"("}]}})");
    };
    writeFile(dir.path / "graphs/backward/manifest.json",
              arenaValue(0, "input"));
    CHECK(contains(loadError(dir.path),
                   "graphs/backward: reads 'h' from the arena, which "
                   "graphs/forward does not leave there"));
    writeFile(dir.path / "graphs/forward/manifest.json",
              arenaValue(16, "output"));
    CHECK(contains(loadError(dir.path),
                   "reads 'h' f32[4] at arena offset 0 but graphs/forward "
                   "leaves f32[4] at offset 16"));
    writeFile(dir.path / "graphs/forward/manifest.json",
              arenaValue(64, "output"));
    CHECK(contains(loadError(dir.path), "lies outside the library's 64-byte "
                                        "arena"));
  }
  SECTION("another device") {
    TrainerOptions options;
    options.device = Device::CUDA;
    CHECK(contains(loadError(dir.path, options),
                   "is compiled for cpu and cannot train on cuda"));
  }
}

TEST_CASE("The trainer's C ABI", "[trainer][abi]") {
  TempDir dir("abi");
  writeTrainingPackage(dir.path);
  char err[512] = {0};
  kiln_trainer *t = nullptr;
  REQUIRE(kiln_trainer_load((dir.path / "nowhere").string().c_str(), &t, err,
                            sizeof(err)) == KILN_TRAINER_ERR_LOAD);
  CHECK(t == nullptr);
  CHECK(contains(err, "manifest.json"));
  REQUIRE(kiln_trainer_load(dir.path.string().c_str(), &t, err, sizeof(err)) ==
          KILN_TRAINER_OK);
  REQUIRE(t);
  REQUIRE(kiln_trainer_num_inputs(t) == 2);
  CHECK(std::string(kiln_trainer_input_name(t, 1)) == "y");
  CHECK(kiln_trainer_input_name(t, 2) == nullptr);
  CHECK(kiln_trainer_input_dtype(t, 0) == 0);
  REQUIRE(kiln_trainer_input_rank(t, 0) == 2);
  CHECK(kiln_trainer_input_shape(t, 0)[1] == 3);

  Reference ref;
  const void *inputs[2] = {kX.data(), kY.data()};
  double loss = 0;
  REQUIRE(kiln_trainer_step(t, inputs, &loss, err, sizeof(err)) ==
          KILN_TRAINER_OK);
  CHECK(loss == Approx(ref.loss()));
  CHECK(kiln_trainer_step_count(t) == 1);
  CHECK(kiln_trainer_set_lr(t, NAN) == KILN_TRAINER_ERR_ARGUMENT);
  CHECK(kiln_trainer_set_lr(t, 0.05) == KILN_TRAINER_OK);
  CHECK(kiln_trainer_lr(t) == 0.05);

  std::string ckpt = (dir.path / "c.safetensors").string();
  REQUIRE(kiln_trainer_save(t, ckpt.c_str(), err, sizeof(err)) ==
          KILN_TRAINER_OK);
  REQUIRE(kiln_trainer_step(t, inputs, &loss, err, sizeof(err)) ==
          KILN_TRAINER_OK);
  REQUIRE(kiln_trainer_load_state(t, ckpt.c_str(), err, sizeof(err)) ==
          KILN_TRAINER_OK);
  CHECK(kiln_trainer_step_count(t) == 1);
  CHECK(kiln_trainer_load_state(t, "/nonexistent.safetensors", err,
                                sizeof(err)) == KILN_TRAINER_ERR_IO);
  CHECK(contains(err, "/nonexistent.safetensors"));
  CHECK(kiln_trainer_step(nullptr, inputs, &loss, err, sizeof(err)) ==
        KILN_TRAINER_ERR_ARGUMENT);
  CHECK(kiln_trainer_step(t, nullptr, &loss, err, sizeof(err)) ==
        KILN_TRAINER_ERR_ARGUMENT);
  CHECK(std::string(kiln_trainer_status_string(KILN_TRAINER_ERR_IO)) ==
        "i/o error");
  kiln_trainer_destroy(t);
  kiln_trainer_destroy(nullptr);
}
