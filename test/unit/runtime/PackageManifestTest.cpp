//===- PackageManifestTest.cpp - Tests of the manifest.json schema --------===//
//
// This file implements the unit tests of kiln/runtime/PackageManifest.h:
// round trips of both forms (graph package, cpu and cuda; program package)
// through formatManifest and parseManifest, manifests written by the
// compiler before the schema existed (PackageManifestSamples.h: a cpu graph
// package and a program package as `kiln compile` wrote them) read back and,
// for the graph form, written back byte for byte, what older and hand-written
// manifests may omit or spell differently, and every error message of the
// reader.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/SymbolicDim.h"

#include "PackageManifestSamples.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <unistd.h>

using namespace kiln;
namespace fs = std::filesystem;

// Equality of the schema's structs, field by field, for the round trips
// (in namespace kiln so Catch's comparisons find them).
namespace kiln {
static bool operator==(const ManifestValue &a, const ManifestValue &b) {
  return std::tie(a.name, a.dtype, a.shape, a.bytes, a.dims) ==
         std::tie(b.name, b.dtype, b.shape, b.bytes, b.dims);
}
static bool operator==(const SizeSymbol &a, const SizeSymbol &b) {
  return std::tie(a.name, a.min, a.max) == std::tie(b.name, b.min, b.max);
}
static bool operator==(const ManifestWeight &a, const ManifestWeight &b) {
  return std::tie(a.name, a.dtype, a.shape, a.bytes, a.index, a.kind, a.file,
                  a.external, a.offset, a.fill) ==
         std::tie(b.name, b.dtype, b.shape, b.bytes, b.index, b.kind, b.file,
                  b.external, b.offset, b.fill);
}
static bool operator==(const ManifestLaunch &a, const ManifestLaunch &b) {
  return std::tie(a.grid, a.block, a.sharedBytes) ==
         std::tie(b.grid, b.block, b.sharedBytes);
}
static bool operator==(const ManifestKernel &a, const ManifestKernel &b) {
  return std::tie(a.name, a.kind, a.nodes, a.launch) ==
         std::tie(b.name, b.kind, b.nodes, b.launch);
}
static bool operator==(const ManifestRuntimeStep &a,
                       const ManifestRuntimeStep &b) {
  return std::tie(a.op, a.kind, a.nodes, a.when) ==
         std::tie(b.op, b.kind, b.nodes, b.when);
}
static bool operator==(const ManifestCounts &a, const ManifestCounts &b) {
  return std::tie(a.fused, a.library, a.fallback, a.graphs, a.graphBreaks) ==
         std::tie(b.fused, b.library, b.fallback, b.graphs, b.graphBreaks);
}
static bool operator==(const ManifestBuffer &a, const ManifestBuffer &b) {
  return std::tie(a.name, a.offset, a.bytes, a.first, a.last) ==
         std::tie(b.name, b.offset, b.bytes, b.first, b.last);
}
static bool operator==(const ManifestArenaValue &a,
                       const ManifestArenaValue &b) {
  return a.value == b.value && a.offset == b.offset && a.isInput == b.isInput;
}
static bool operator==(const ManifestMemoryPlan &a,
                       const ManifestMemoryPlan &b) {
  return std::tie(a.arenaBytes, a.libraryWorkspaceOffset,
                  a.libraryWorkspaceBytes, a.buffers, a.arenaValues) ==
         std::tie(b.arenaBytes, b.libraryWorkspaceOffset,
                  b.libraryWorkspaceBytes, b.buffers, b.arenaValues);
}
static bool operator==(const ManifestOptions &a, const ManifestOptions &b) {
  return std::tie(a.target, a.weights, a.cpuIsa, a.dims, a.cxx) ==
         std::tie(b.target, b.weights, b.cpuIsa, b.dims, b.cxx);
}
static bool operator==(const ManifestCompileTimes &a,
                       const ManifestCompileTimes &b) {
  return std::tie(a.trace, a.kilnPasses, a.codegen, a.hostCompiler, a.nvrtc,
                  a.graphs) == std::tie(b.trace, b.kilnPasses, b.codegen,
                                        b.hostCompiler, b.nvrtc, b.graphs);
}
static bool operator==(const ManifestCuda &a, const ManifestCuda &b) {
  return std::tie(a.arch, a.cubin, a.ptx, a.source) ==
         std::tie(b.arch, b.cubin, b.ptx, b.source);
}
static bool operator==(const ManifestGraph &a, const ManifestGraph &b) {
  return std::tie(a.name, a.package, a.where, a.ops) ==
         std::tie(b.name, b.package, b.where, b.ops);
}
static bool operator==(const ManifestBreakOp &a, const ManifestBreakOp &b) {
  return std::tie(a.node, a.opType, a.kilnOp) ==
         std::tie(b.node, b.opType, b.kilnOp);
}
static bool operator==(const ManifestGraphBreak &a,
                       const ManifestGraphBreak &b) {
  return std::tie(a.op, a.kind, a.reason, a.detail, a.hint, a.where, a.ops) ==
         std::tie(b.op, b.kind, b.reason, b.detail, b.hint, b.where, b.ops);
}
static bool operator==(const ManifestGradient &a, const ManifestGradient &b) {
  return std::tie(a.parameter, a.value) == std::tie(b.parameter, b.value);
}
static bool operator==(const ManifestUpdate &a, const ManifestUpdate &b) {
  return std::tie(a.value, a.target) == std::tie(b.value, b.target);
}
static bool operator==(const ManifestOptimizer &a, const ManifestOptimizer &b) {
  return std::tie(a.kind, a.lr, a.momentum, a.beta1, a.beta2, a.eps,
                  a.weightDecay) == std::tie(b.kind, b.lr, b.momentum, b.beta1,
                                             b.beta2, b.eps, b.weightDecay);
}
static bool operator==(const ManifestTrainingGraphs &a,
                       const ManifestTrainingGraphs &b) {
  return std::tie(a.forward, a.backward, a.optimizer) ==
         std::tie(b.forward, b.backward, b.optimizer);
}
static bool operator==(const ManifestTraining &a, const ManifestTraining &b) {
  return std::tie(a.loss, a.parameters, a.weightsFile, a.state, a.gradients,
                  a.updates, a.saved, a.savedBytes, a.recomputedOps,
                  a.recomputeFlops, a.savedBytesNoRecompute, a.optimizer,
                  a.graphs) ==
         std::tie(b.loss, b.parameters, b.weightsFile, b.state, b.gradients,
                  b.updates, b.saved, b.savedBytes, b.recomputedOps,
                  b.recomputeFlops, b.savedBytesNoRecompute, b.optimizer,
                  b.graphs);
}
static bool operator==(const PackageManifest &a, const PackageManifest &b) {
  return std::tie(a.format, a.formatVersion, a.kind, a.abiVersion, a.model,
                  a.source, a.target, a.library, a.programJson, a.programData,
                  a.hasSignature, a.inputs, a.outputs, a.sizeSymbols,
                  a.weightsFile, a.weights, a.kernels, a.referenceOps, a.graphs,
                  a.graphBreaks, a.counts, a.memoryPlan, a.options,
                  a.kilnVersion, a.versionsAbi, a.hostCompilerCommand,
                  a.hostCompilerWarnings, a.isa, a.compileTimes, a.cuda,
                  a.training) ==
         std::tie(b.format, b.formatVersion, b.kind, b.abiVersion, b.model,
                  b.source, b.target, b.library, b.programJson, b.programData,
                  b.hasSignature, b.inputs, b.outputs, b.sizeSymbols,
                  b.weightsFile, b.weights, b.kernels, b.referenceOps, b.graphs,
                  b.graphBreaks, b.counts, b.memoryPlan, b.options,
                  b.kilnVersion, b.versionsAbi, b.hostCompilerCommand,
                  b.hostCompilerWarnings, b.isa, b.compileTimes, b.cuda,
                  b.training);
}
} // namespace kiln

namespace {

std::string readText(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// A cpu graph package's manifest with every field set.
PackageManifest cpuGraphManifest() {
  PackageManifest m;
  m.abiVersion = 1;
  m.model = "tiny_mlp";
  m.source = "examples/tiny_mlp.onnx";
  m.target = "cpu";
  m.library = "model.so";
  m.inputs = {{"x", DType::F32, {4, 16}, 256}};
  m.outputs = {{"y", DType::F32, {4, 8}, 128}, {"idx", DType::I64, {4}, 32}};
  m.weightsFile = "weights.bin";
  ManifestWeight w;
  w.name = "fc1.weight";
  w.dtype = DType::F32;
  w.shape = {16, 8};
  w.bytes = 512;
  w.index = 0;
  w.kind = "constant";
  w.file = "weights.bin";
  w.offset = 0;
  ManifestWeight b = w;
  b.name = "fc1.bias";
  b.shape = {8};
  b.bytes = 32;
  b.index = 1;
  b.offset = 512;
  ManifestWeight h = b;
  h.name = "half";
  h.dtype = DType::F16;
  h.bytes = 16;
  h.index = 2;
  h.offset = 576;
  m.weights = {w, b, h};
  m.kernels = {{"k0_layer_norm", "reduction", {"/ln/LayerNormalization"}, {}},
               {"k1_add_relu", "pointwise", {"/add", "/relu"}, {}}};
  m.referenceOps = {{"kiln.matmul", "library", {"/fc1/MatMul"}},
                    {"kiln.top_k", "fallback", {"/TopK"}, "load"}};
  m.counts = ManifestCounts{2, 1, 1, std::nullopt, std::nullopt};
  m.memoryPlan.arenaBytes = 4096;
  m.memoryPlan.buffers = {{"%k0_layer_norm#0", 0, 256, 0, 1},
                          {"%matmul@1#0", 256, 128, 1, 2}};
  m.memoryPlan.arenaValues = {{{"saved.0", DType::F32, {4, 8}, 128}, 256,
                               false}};
  m.options.target = "cpu";
  m.options.weights = "embed";
  m.options.cpuIsa = "x86-64-v3";
  m.options.dims = {{"seq", 7}, {"batch", 4}}; // order kept, not sorted
  m.options.cxx = "c++";
  m.kilnVersion = "0.1.0";
  m.versionsAbi = 1;
  m.hostCompilerCommand = "c++ -O3 -march=x86-64-v3 wrapper.cpp kernels.cpp";
  m.hostCompilerWarnings = "kernels.cpp:3: warning: \xe2\x80\x98x\xe2\x80\x99 "
                           "unused\n";
  m.isa = "x86-64-v3";
  m.compileTimes.trace = 0.0123;
  m.compileTimes.kilnPasses = 0.1;
  m.compileTimes.codegen = 1.0 / 3.0;
  m.compileTimes.hostCompiler = 2.5;
  return m;
}

/// A cuda graph package's manifest: launches, the cuda files, a library
/// workspace, external data and a weight bound by the caller.
PackageManifest cudaGraphManifest() {
  PackageManifest m = cpuGraphManifest();
  m.target = m.options.target = "cuda";
  m.isa = m.options.cpuIsa = "x86-64-v2";
  m.options.weights = "external";
  m.kernels[0].launch = ManifestLaunch{{4, 1, 1}, {256, 1, 1}, 2048};
  m.kernels[1].launch = ManifestLaunch{{64, 2, 1}, {128, 1, 1}, 0};
  m.kernels.push_back({"p0_max_pool",
                       "pool",
                       {"/pool"},
                       ManifestLaunch{{8, 1, 1}, {256, 1, 1}, 0}});
  m.weights[0].kind = "argument";
  m.weights[0].external = true;
  m.weights[0].file = "tiny_mlp.onnx.data";
  m.weights[0].offset = 4096;
  m.weights[1].kind = "argument";
  m.weights[1].file.clear(); // bound by the caller
  m.weights[1].offset = 0;
  m.memoryPlan.libraryWorkspaceOffset = 4096;
  m.memoryPlan.libraryWorkspaceBytes = 32 << 20;
  m.memoryPlan.arenaBytes = 4096 + (32 << 20);
  m.compileTimes.nvrtc = 0.75;
  m.cuda = ManifestCuda{"sm_90", "kernels.cubin", "kernels.ptx", "kernels.cu"};
  return m;
}

/// A program package's manifest.
PackageManifest programManifest() {
  PackageManifest m;
  m.kind = PackageKind::Program;
  m.source = "nonzero_model.onnx";
  m.target = "cpu";
  m.programJson = "program.json";
  m.programData = "program.bin";
  m.inputs = {{"x", DType::F32, {4}, std::nullopt}};
  m.outputs = {{"total", DType::F32, {}, std::nullopt},
               {"picked", DType::F32, {-1}, std::nullopt}};
  m.graphs = {{"graph_0", "graphs/graph_0", "main", 2},
              {"graph_1", "graphs/graph_1", "main", 2}};
  ManifestGraphBreak b;
  b.op = {"nonzero", "NonZero", "kiln.non_zero"};
  b.kind = "eager";
  b.reason = "data-dependent-shape";
  b.detail = "output #0 is i64[1, ?]: its size depends on the data";
  b.hint = "use Where";
  b.where = "main";
  b.ops = {b.op, {"indices", "Squeeze", "kiln.squeeze"}};
  m.graphBreaks = {b};
  m.counts = ManifestCounts{3, 0, 1, 2, 1};
  m.memoryPlan.arenaBytes = 8192;
  m.compileTimes.trace = 0.05;
  m.compileTimes.graphs = 3.25;
  return m;
}

/// A training package's manifest.
PackageManifest trainingManifest() {
  PackageManifest m;
  m.kind = PackageKind::Training;
  m.source = "mlp.onnx";
  m.target = "cuda";
  m.inputs = {{"x", DType::F32, {4, 16}, 256}, {"label", DType::I64, {4}, 32}};
  m.outputs = {{"loss", DType::F32, {}, 4}};
  ManifestTraining t;
  t.loss = "loss";
  t.parameters = {{"fc1.weight", DType::F32, {16, 8}, 512},
                  {"fc1.bias", DType::F32, {8}, 32}};
  t.state = {{"fc1.weight.m", DType::F32, {16, 8}, 512},
             {"fc1.weight.v", DType::F32, {16, 8}, 512},
             {"fc1.bias.m", DType::F32, {8}, 32},
             {"fc1.bias.v", DType::F32, {8}, 32}};
  t.gradients = {{"fc1.weight", "fc1.weight.grad"},
                 {"fc1.bias", "fc1.bias.grad"}};
  t.updates = {{"fc1.weight.next", "fc1.weight"},
               {"fc1.weight.m.next", "fc1.weight.m"},
               {"fc1.bias.next", "fc1.bias"},
               {"fc1.bias.v.next", "fc1.bias.v"}};
  t.saved = {{"h", DType::F32, {4, 8}, 128}};
  t.savedBytes = 128;
  t.recomputeFlops = 4096;
  t.savedBytesNoRecompute = 512;
  t.recomputedOps = 3;
  t.optimizer = {"adamw", 0.05, 0.0, 0.9, 0.98, 1e-6, 0.01};
  t.graphs = {"graphs/fwd", "graphs/bwd", "graphs/opt"};
  m.training = t;
  m.counts = ManifestCounts{5, 3, 0, std::nullopt, std::nullopt};
  m.memoryPlan.arenaBytes = 12288;
  m.compileTimes.trace = 0.5;
  m.compileTimes.graphs = 4.0;
  return m;
}

PackageManifest parseOk(const std::string &text) {
  Expected<PackageManifest> m = parseManifest(text, "pkg/manifest.json");
  INFO(text);
  if (!m)
    FAIL(m.status().message());
  return m.take();
}

/// The error of parsing `text`; it must contain each of `parts`.
void requireError(const std::string &text,
                  const std::vector<std::string> &parts) {
  Expected<PackageManifest> m = parseManifest(text, "pkg/manifest.json");
  INFO(text);
  REQUIRE_FALSE(m);
  std::string message = m.status().message();
  INFO(message);
  CHECK(message.rfind("pkg/manifest.json: ", 0) == 0);
  for (const std::string &part : parts)
    CHECK(message.find(part) != std::string::npos);
}

/// A minimal manifest with `weight` as its only weight entry.
std::string withWeight(const std::string &weight) {
  return R"({"weights": [{"name": "a", "dtype": "f32", "shape": [1],
                          "file": "weights.bin", "offset": 0, "bytes": 4},
                         )" +
         weight + "]}";
}

} // namespace

TEST_CASE("Manifest round trips: write then read gives the same struct",
          "[manifest]") {
  for (const PackageManifest &m : {cpuGraphManifest(), cudaGraphManifest(),
                                   programManifest(), trainingManifest()}) {
    std::string text = formatManifest(m);
    INFO(text);
    PackageManifest back = parseOk(text);
    CHECK(back == m);
    CHECK(formatManifest(back) == text);
  }
}

TEST_CASE("A manifest without optional fields round trips", "[manifest]") {
  PackageManifest m;
  m.hasSignature = false;
  std::string text = formatManifest(m);
  CHECK(text.find("\"signature\"") == std::string::npos);
  CHECK(text.find("\"abi_version\"") == std::string::npos);
  CHECK(text.find("\"counts\"") == std::string::npos);
  CHECK(text.find("\"cuda\"") == std::string::npos);
  CHECK(parseOk(text) == m);
}

TEST_CASE("The writer keeps the manifest's key order and look", "[manifest]") {
  std::string graph = formatManifest(cudaGraphManifest());
  // Two-space indent, a final newline; the top-level keys in order.
  CHECK(graph.rfind("{\n  \"format\": \"kiln-package\",\n"
                    "  \"format_version\": 1,\n  \"abi_version\": 1,\n"
                    "  \"model\": \"tiny_mlp\",\n",
                    0) == 0);
  CHECK(graph.back() == '\n');
  std::vector<std::string> keys = {
      "\"library\"",         "\"signature\"",     "\"weights_file\"",
      "\"weights\"",         "\"kernels\"",       "\"reference_ops\"",
      "\"counts\"",          "\"memory_plan\"",   "\"options\"",
      "\"versions\"",        "\"host_compiler\"", "\"isa\"",
      "\"compile_times_s\"", "\"cuda\""};
  size_t at = 0;
  for (const std::string &key : keys) {
    size_t next = graph.find("\n  " + key + ":", at);
    INFO(key);
    REQUIRE(next != std::string::npos);
    at = next;
  }
  // kiln/runtime tests sed the target line (test/lit/cli/device.test).
  CHECK(graph.find("\n  \"target\": \"cuda\",\n") != std::string::npos);
  // A program package: "kind" after the format, then its own keys.
  std::string program = formatManifest(programManifest());
  CHECK(program.rfind("{\n  \"format\": \"kiln-package\",\n"
                      "  \"format_version\": 1,\n  \"kind\": \"program\",\n",
                      0) == 0);
  CHECK(program.find("\"weights\"") == std::string::npos);
  CHECK(program.find("\"kernels\"") == std::string::npos);
  CHECK(program.find("\"bytes\"") == std::string::npos);
}

TEST_CASE("A graph package's manifest written by kiln compile reads back and "
          "is written back byte for byte",
          "[manifest]") {
  // `kiln compile examples/tiny_mlp.onnx --dim batch=4` with the
  // hand-written writer of codegen/Packager.cpp.
  std::string text = test::kTinyMlpCpuManifest;
  PackageManifest m = parseOk(text);
  CHECK(m.kind == PackageKind::Graph);
  CHECK(m.format == "kiln-package");
  CHECK(m.abiVersion == 1);
  CHECK(m.target == "cpu");
  CHECK(m.library == "model.so");
  REQUIRE(m.inputs.size() == 1);
  CHECK(m.inputs[0].name == "x");
  CHECK(m.inputs[0].shape == Shape{4, 16});
  CHECK(m.inputs[0].bytes == 256u);
  REQUIRE_FALSE(m.weights.empty());
  CHECK(m.weights[0].file == "weights.bin");
  CHECK(m.weights[0].kind == "constant");
  CHECK(m.weights[0].index == 0);
  CHECK_FALSE(m.weights[0].external);
  CHECK_FALSE(m.kernels.empty());
  CHECK_FALSE(m.kernels[0].launch);
  REQUIRE(m.counts);
  CHECK(m.counts->fused == static_cast<int64_t>(m.kernels.size()));
  CHECK(m.memoryPlan.arenaBytes > 0);
  CHECK_FALSE(m.memoryPlan.buffers.empty());
  CHECK(m.options.dims ==
        std::vector<std::pair<std::string, int64_t>>{{"batch", 4}});
  CHECK_FALSE(m.isa.empty());
  CHECK(m.isa == m.options.cpuIsa);
  CHECK_FALSE(m.cuda);
  CHECK(formatManifest(m) == text);
}

TEST_CASE("A program package's manifest written by kiln compile reads back",
          "[manifest]") {
  // `kiln compile nonzero_model.onnx` (examples/graph_breaks) with the
  // hand-written writer of compiler/ProgramPackager.cpp, whose keys came
  // out sorted.
  std::string text = test::kNonzeroProgramManifest;
  PackageManifest m = parseOk(text);
  CHECK(m.kind == PackageKind::Program);
  CHECK(m.programJson == "program.json");
  CHECK(m.programData == "program.bin");
  CHECK(m.hasSignature);
  REQUIRE(m.graphs.size() == 2);
  CHECK(m.graphs[0].package == "graphs/graph_0");
  REQUIRE(m.graphBreaks.size() == 1);
  CHECK(m.graphBreaks[0].op.opType == "NonZero");
  CHECK(m.graphBreaks[0].reason == "data-dependent-shape");
  CHECK(m.graphBreaks[0].ops.size() >= 1);
  REQUIRE(m.counts);
  CHECK(m.counts->graphs == 2);
  CHECK(m.counts->graphBreaks == 1);
  CHECK(m.weights.empty());
  // Written again in the schema's order, it reads back the same.
  CHECK(parseOk(formatManifest(m)) == m);
}

TEST_CASE("Manifests of older and hand-written packages still read",
          "[manifest]") {
  SECTION("only what the loader needs, no format or kinds") {
    PackageManifest m = parseOk(R"({
      "abi_version": 1,
      "signature": {"inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
                    "outputs": [{"name": "y", "dtype": 0, "shape": [2, 3]}]},
      "weights": [{"name": "w", "dtype": "f32", "shape": [3],
                   "file": "weights.bin", "offset": 0, "bytes": 12}]})");
    CHECK(m.format == kManifestFormat);
    CHECK(m.kind == PackageKind::Graph);
    CHECK(m.hasSignature);
    CHECK(m.outputs[0].dtype == DType::F32);
    CHECK_FALSE(m.inputs[0].bytes);
    CHECK(m.weights[0].kind.empty());
    CHECK_FALSE(m.weights[0].index);
    CHECK_FALSE(m.counts);
    CHECK_FALSE(m.libraryOrFallbackSteps());
  }
  SECTION("no signature") {
    PackageManifest m = parseOk("{}");
    CHECK_FALSE(m.hasSignature);
    CHECK(m.weights.empty());
  }
  SECTION("ONNX's words: location and length; a file other than "
          "weights.bin is external data") {
    PackageManifest m = parseOk(withWeight(R"(
      {"name": "e", "dtype": "f32", "shape": [2],
       "external": {"location": "m.onnx.data", "offset": 8, "length": 8}},
      {"name": "f", "dtype": "f32", "shape": [2], "location": "/abs/f.bin",
       "length": 8},
      {"name": "g", "dtype": "f32", "shape": [2], "bytes": 8})"));
    REQUIRE(m.weights.size() == 4);
    CHECK(m.weights[1].external);
    CHECK(m.weights[1].file == "m.onnx.data");
    CHECK(m.weights[1].offset == 8);
    CHECK(m.weights[1].bytes == 8);
    CHECK(m.weights[2].external);
    CHECK(m.weights[2].file == "/abs/f.bin");
    CHECK(m.weights[2].offset == 0);
    CHECK_FALSE(m.weights[3].external);
    CHECK(m.weights[3].file.empty());
    // Without "bytes", the size follows from the dtype and shape.
    PackageManifest n = parseOk(withWeight(R"({"name": "h", "dtype": "f64",
                                              "shape": [3],
                                              "file": "weights.bin"})"));
    CHECK(n.weights[1].bytes == 24);
  }
  SECTION("counts of the library and fallback steps") {
    PackageManifest m =
        parseOk(R"({"counts": {"fused": 3, "library": 1, "fallback": 2}})");
    CHECK(m.libraryOrFallbackSteps() == 3);
    CHECK_FALSE(m.counts->graphs);
  }
  SECTION("a cuda target and unknown keys") {
    PackageManifest m =
        parseOk(R"({"target": "tpu", "future_key": [1, 2], "isa": "x"})");
    CHECK(m.target == "tpu"); // The loader, not the reader, refuses it.
    CHECK(m.isa == "x");
  }
}

TEST_CASE("readManifest and writeManifest use files", "[manifest]") {
  fs::path dir = fs::temp_directory_path() /
                 ("kiln-manifest-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "manifest.json").string();
  PackageManifest m = cudaGraphManifest();
  REQUIRE(writeManifest(m, path));
  CHECK_FALSE(fs::exists(path + ".tmp"));
  Expected<PackageManifest> back = readManifest(path);
  REQUIRE(back);
  CHECK(*back == m);
  CHECK(readText(path) == formatManifest(m));

  Expected<PackageManifest> missing = readManifest((dir / "no.json").string());
  REQUIRE_FALSE(missing);
  CHECK(missing.status().message().find("no.json: cannot open the package "
                                        "manifest") != std::string::npos);
  Status unwritable =
      writeManifest(m, (dir / "no/such/manifest.json").string());
  REQUIRE_FALSE(unwritable);
  CHECK(unwritable.message().find("no/such/manifest.json: cannot open") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("Manifest errors name the file and the entry", "[manifest]") {
  SECTION("the file as a whole") {
    requireError("{", {"not valid JSON"});
    requireError("[1, 2]", {"the top level is not a JSON object"});
    requireError(R"({"format": "onnx"})",
                 {"'format' is \"onnx\", not \"kiln-package\""});
    requireError(R"({"format_version": 4})",
                 {"'format_version' is 4; this runtime reads 1 to 3"});
    requireError(R"({"format_version": "1"})",
                 {"'format_version' must be an integer"});
    requireError(R"({"kind": "graph"})",
                 {"'kind' must be \"program\" or \"training\" when "
                  "present"});
    requireError(R"({"abi_version": "1"})",
                 {"'abi_version' must be an integer"});
    requireError(R"({"target": 1})", {"'target' must be a string"});
    requireError(R"({"source": 1})", {"'source' must be a string"});
    requireError(R"({"signature": []})", {"'signature' must be an object"});
    requireError(R"({"weights": {}})", {"'weights' must be an array"});
    requireError(R"({"kernels": 3})", {"'kernels' must be an array"});
  }
  SECTION("signature entries") {
    requireError(R"({"signature": {"inputs": {}}})",
                 {"'signature.inputs' must be an array"});
    requireError(R"({"signature": {"inputs": [3]}})",
                 {"signature.inputs[0]: expected an object with name, dtype "
                  "and shape"});
    requireError(R"({"signature": {"outputs": [{"dtype": "f32"}]}})",
                 {"signature.outputs[0]: missing 'name'"});
    requireError(R"({"signature": {"inputs": [{"name": "x", "shape": []}]}})",
                 {"signature.inputs[0] ('x'): missing 'dtype'"});
    requireError(
        R"({"signature": {"inputs": [{"name": "x", "dtype": "f32"}]}})",
        {"signature.inputs[0] ('x'): missing 'shape'"});
    requireError(
        R"({"signature": {"inputs": [
              {"name": "x", "dtype": "q7", "shape": []}]}})",
        {"signature.inputs[0] ('x'): unknown dtype 'q7'"});
    requireError(
        R"({"signature": {"inputs": [
              {"name": "x", "dtype": 99, "shape": []}]}})",
        {"unknown dtype code 99"});
    requireError(
        R"({"signature": {"inputs": [
              {"name": "x", "dtype": [], "shape": []}]}})",
        {"'dtype' must be a name such as \"f32\""});
    requireError(
        R"({"signature": {"inputs": [
              {"name": "x", "dtype": "f32", "shape": 4}]}})",
        {"'shape' must be an array of sizes"});
    requireError(
        R"({"signature": {"inputs": [
              {"name": "x", "dtype": "f32", "shape": [-1, 4]}]}})",
        {"signature.inputs[0] ('x'): 'shape' [-1,4] has a dimension that is "
         "not a static size; packages are compiled for static shapes"});
    requireError(R"({"kind": "program", "signature": {"outputs": [
                      {"name": "y", "dtype": "f32", "shape": [-2]}]}})",
                 {"signature.outputs[0] ('y'): 'shape' [-2] has a dimension "
                  "that is neither a size nor -1"});
    requireError(R"({"signature": {"inputs": [
                      {"name": "x", "dtype": "f32", "shape": [1],
                       "bytes": -4}]}})",
                 {"signature.inputs[0] ('x'): 'bytes' must be a non-negative "
                  "integer"});
  }
  SECTION("weights") {
    requireError(withWeight(R"({"name": "conv1.weight", "dtype": "f32",
                                "shape": [4], "file": "weights.bin",
                                "offset": 0, "bytes": 12})"),
                 {"weights[1] ('conv1.weight'): holds 12 bytes but f32[4] "
                  "needs 16"});
    requireError(withWeight(R"({"name": "w", "dtype": "f32", "shape": [1],
                                "external": "m.onnx.data"})"),
                 {"weights[1] ('w'): 'external' must be an object with "
                  "location, offset and length"});
    requireError(withWeight(R"({"name": "w", "dtype": "f32", "shape": [1],
                                "external": {"offset": 0}})"),
                 {"weights[1] ('w'): 'external' has no 'location'"});
    requireError(withWeight(R"({"name": "w", "dtype": "f32", "shape": [1],
                                "file": ""})"),
                 {"weights[1] ('w'): 'file' must be a file name"});
    requireError(withWeight(R"({"name": "w", "dtype": "f32", "shape": [1],
                                "file": "weights.bin", "offset": -1})"),
                 {"weights[1] ('w'): 'offset' must be a non-negative integer"});
    requireError(withWeight(R"({"name": "w", "dtype": "f32", "shape": [1],
                                "file": "weights.bin", "length": "4"})"),
                 {"weights[1] ('w'): 'length' must be a non-negative integer"});
    requireError(withWeight(R"({"name": "w", "dtype": "f32", "shape": [1],
                                "index": "0"})"),
                 {"weights[1] ('w'): 'index' must be a non-negative integer"});
    requireError(withWeight(R"({"name": "w", "dtype": "f32", "shape": [1],
                                "kind": 1})"),
                 {"weights[1] ('w'): 'kind' must be a string"});
    requireError(
        withWeight(R"({"name": "w", "dtype": "f32", "shape": [null]})"),
        {"weights[1] ('w'): 'shape' [null]", "static"});
  }
  SECTION("kernels and runtime steps") {
    requireError(R"({"kernels": [{"name": "k0", "nodes": "/add"}]})",
                 {"kernels[0] ('k0'): 'nodes' must be an array of strings"});
    requireError(R"({"kernels": [{"name": "k0", "grid": [1, 1]}]})",
                 {"kernels[0] ('k0'): 'grid' must be an array of 3 "
                  "non-negative integers"});
    requireError(R"({"kernels": [{"name": "k0", "block": [1, -1, 1]}]})",
                 {"kernels[0] ('k0'): 'block' must be an array of 3"});
    requireError(R"({"kernels": [{"name": "k0", "shared_bytes": 1.5}]})",
                 {"kernels[0] ('k0'): 'shared_bytes' must be a non-negative "
                  "integer"});
    requireError(R"({"kernels": ["k0"]})", {"kernels[0]: expected an object"});
    requireError(R"({"reference_ops": [{"op": "kiln.matmul", "kind": 2}]})",
                 {"reference_ops[0] ('kiln.matmul'): 'kind' must be a string"});
    requireError(
        R"({"reference_ops": [{"op": "kiln.trilu", "when": "later"}]})",
        {"reference_ops[0] ('kiln.trilu'): 'when' is 'later', not \"run\" "
         "or \"load\""});
  }
  SECTION("counts, memory plan, options and the rest") {
    requireError(R"({"counts": [1]})", {"'counts' must be an object"});
    requireError(R"({"counts": {"fused": -1}})",
                 {"counts: 'fused' must be a non-negative integer"});
    requireError(R"({"memory_plan": {"arena_bytes": "4k"}})",
                 {"memory_plan: 'arena_bytes' must be a non-negative integer"});
    requireError(R"({"memory_plan": {"library_workspace": {"bytes": -1}}})",
                 {"memory_plan: library_workspace: 'bytes' must be a "
                  "non-negative integer"});
    requireError(
        R"({"memory_plan": {"buffers": [{"name": "%t0", "first": "a"}]}})",
        {"memory_plan: buffers[0] ('%t0'): 'first' must be an integer"});
    requireError(R"({"memory_plan": {"arena_bytes": 64, "arena_values": [
                     {"name": "s", "dtype": "f32", "shape": [4],
                      "offset": 0, "role": "both"}]}})",
                 {"memory_plan: arena_values[0] ('s'): 'role' is 'both'"});
    requireError(R"({"memory_plan": {"arena_bytes": 64, "arena_values": [
                     {"name": "s", "dtype": "f32", "shape": [4], "bytes": 8,
                      "offset": 0, "role": "input"}]}})",
                 {"arena_values[0] ('s'): holds 8 bytes but f32[4] needs 16"});
    requireError(R"({"memory_plan": {"arena_bytes": 64, "arena_values": [
                     {"name": "s", "dtype": "f32", "shape": [16],
                      "offset": 64, "role": "input"}]}})",
                 {"arena_values ('s'): bytes [64, +64) lie outside the "
                  "64-byte arena"});
    requireError(R"({"options": {"dims": {"batch": "4"}}})",
                 {"options: 'dims': 'batch' must be a non-negative integer"});
    requireError(R"({"options": {"dims": [4]}})",
                 {"options: 'dims' must be an object"});
    requireError(R"({"versions": {"abi": "1"}})",
                 {"versions: 'abi' must be an integer"});
    requireError(R"({"host_compiler": {"warnings": 0}})",
                 {"host_compiler: 'warnings' must be a string"});
    requireError(R"({"compile_times_s": {"trace": "fast"}})",
                 {"compile_times_s: 'trace' must be a number"});
    requireError(R"({"cuda": {"arch": 90}})",
                 {"cuda: 'arch' must be a string"});
    requireError(R"({"program": {"json": 1}})",
                 {"program: 'json' must be a string"});
    requireError(R"({"graphs": [{"name": "graph_0", "ops": -2}]})",
                 {"graphs[0] ('graph_0'): 'ops' must be a non-negative "
                  "integer"});
    requireError(R"({"graph_breaks": [{"node": "nz", "ops": [{"node": 1}]}]})",
                 {"graph_breaks[0] ('nz'): ops[0]: 'node' must be a string"});
  }
}

TEST_CASE("A training package's manifest", "[manifest][training]") {
  std::string text = formatManifest(trainingManifest());
  CHECK(text.rfind("{\n  \"format\": \"kiln-package\",\n"
                   "  \"format_version\": 1,\n  \"kind\": \"training\",\n"
                   "  \"source\": \"mlp.onnx\",\n  \"target\": \"cuda\",\n"
                   "  \"signature\": {",
                   0) == 0);
  for (const char *key :
       {"\"training\": {\n    \"loss\": \"loss\"",
        "\"weights_file\": \"weights.safetensors\"", "\"saved_bytes\": 128",
        "\"recomputed_ops\": 3", "\"kind\": \"adamw\"",
        "\"weight_decay\": 0.01", "\"forward\": \"graphs/fwd\"", "\"counts\"",
        "\"memory_plan\": {\n    \"arena_bytes\": 12288\n"})
    CHECK(text.find(key) != std::string::npos);
  // Keys only the other forms have are not written.
  for (const char *key : {"\"library\": \"", "\"kernels\"", "\"program\"",
                          "\"graph_breaks\"", "\"options\""})
    CHECK(text.find(key) == std::string::npos);

  SECTION("defaults of a minimal training section") {
    PackageManifest m = parseOk(R"({"kind": "training", "training": {}})");
    REQUIRE(m.training);
    CHECK(m.kind == PackageKind::Training);
    CHECK(m.training->loss == "loss");
    CHECK(m.training->weightsFile == "weights.safetensors");
    CHECK(m.training->optimizer.kind == "sgd");
    CHECK(m.training->graphs.optimizer == "graphs/optimizer");
  }
}

TEST_CASE("Training manifest errors name the entry", "[manifest][training]") {
  auto training = [](const std::string &body) {
    return std::string(R"({"kind": "training", "training": {
      "parameters": [{"name": "w", "dtype": "f32", "shape": [2]},
                     {"name": "b", "dtype": "f32", "shape": []}],
      "state": [{"name": "w.m", "dtype": "f32", "shape": [2]}])") +
           (body.empty() ? "" : ", ") + body + "}}";
  };
  parseOk(training(R"("gradients": [{"parameter": "w", "value": "w.grad"}],
                      "updates": [{"value": "w.next", "target": "w"},
                                  {"value": "w.m.next", "target": "w.m"}])"));
  requireError(R"({"kind": "training"})",
               {"a training package (\"kind\": \"training\") needs a "
                "'training' section"});
  requireError(R"({"kind": "training", "training": []})",
               {"'training' must be an object"});
  requireError(training(R"("loss": 3)"), {"training: 'loss' must be a string"});
  requireError(
      R"({"kind": "training", "training": {"parameters": [
            {"name": "w", "dtype": "f32", "shape": [2]},
            {"name": "w", "dtype": "f32", "shape": [2]}]}})",
      {"training: parameter 'w' is listed twice"});
  requireError(
      R"({"kind": "training", "training": {"parameters": [
            {"name": "w", "dtype": "f32", "shape": [-1]}]}})",
      {"training: parameters[0] ('w'): 'shape' [-1] has a dimension that is "
       "not a static size"});
  requireError(training(R"("state": [{"name": "w", "dtype": "f32",
                                      "shape": [2]}])"),
               {"training: state 'w' has the name of a parameter"});
  requireError(training(R"("saved": [{"name": "h", "dtype": "f32",
                                      "shape": [2]},
                                     {"name": "h", "dtype": "f32",
                                      "shape": [2]}])"),
               {"training: saved value 'h' is listed twice"});
  requireError(training(R"("gradients": [{"parameter": "q", "value": "g"}])"),
               {"training: gradients: 'q' is not a parameter"});
  requireError(training(R"("gradients": [{"parameter": "w", "value": "g"},
                                         {"parameter": "w", "value": "h"}])"),
               {"training: gradients: parameter 'w' has two gradients"});
  requireError(training(R"("gradients": [{"parameter": "w"}])"),
               {"training: gradients[0] ('w'): needs a 'parameter' and a "
                "'value'"});
  requireError(training(R"("updates": [{"value": "v", "target": "zz"}])"),
               {"training: updates: target 'zz' is neither a parameter nor a "
                "state tensor"});
  requireError(training(R"("updates": [{"value": "v", "target": "w"},
                                       {"value": "u", "target": "w"}])"),
               {"training: updates: 'w' is updated twice"});
  requireError(training(R"("updates": [{"value": "v", "target": "w"},
                                       {"value": "v", "target": "b"}])"),
               {"training: updates: value 'v' is listed twice"});
  requireError(training(R"("optimizer": {"kind": "lion"})"),
               {"training: optimizer: 'kind' is 'lion'; expected \"sgd\", "
                "\"momentum\" or \"adamw\""});
  requireError(training(R"("optimizer": {"lr": "fast"})"),
               {"training: optimizer: 'lr' must be a number"});
  requireError(training(R"("graphs": {"forward": "../elsewhere"})"),
               {"training: graphs: 'forward' is '../elsewhere'; it must be a "
                "relative path inside the package, without '..'"});
  requireError(training(R"("graphs": {"backward": "/abs/bwd"})"),
               {"'backward' is '/abs/bwd'"});
  requireError(training(R"("graphs": {"optimizer": "graphs/../../x"})"),
               {"'optimizer' is 'graphs/../../x'"});
  requireError(training(R"("weights_file": "")"),
               {"training: 'weights_file' is ''"});
  requireError(training(R"("saved_bytes": -1)"),
               {"training: 'saved_bytes' must be a non-negative integer"});
}

TEST_CASE("Fill weights: one element in hex, no file", "[manifest]") {
  PackageManifest m;
  m.formatVersion = kManifestFillsFormatVersion;
  ManifestWeight w;
  w.name = "conv1.weight";
  w.dtype = DType::F32;
  w.shape = {64, 3, 3, 3};
  w.bytes = 64 * 27 * 4;
  w.index = 0;
  w.kind = "constant";
  w.fill = std::vector<uint8_t>{0x00, 0x00, 0x00, 0x3f}; // 0.5f
  ManifestWeight h = w;
  h.name = "half";
  h.dtype = DType::BF16;
  h.bytes = 64 * 27 * 2;
  h.index = 1;
  h.fill = std::vector<uint8_t>{0xc0, 0x7f}; // a NaN, exactly
  ManifestWeight b = w;
  b.name = "mask";
  b.dtype = DType::Bool;
  b.bytes = 64 * 27;
  b.index = 2;
  b.fill = std::vector<uint8_t>{1};
  m.weights = {w, h, b};
  std::string text = formatManifest(m);
  INFO(text);
  CHECK(text.find("\"format_version\": 2") != std::string::npos);
  CHECK(text.find("\"fill\": \"0000003f\"") != std::string::npos);
  CHECK(text.find("\"fill\": \"c07f\"") != std::string::npos);
  CHECK(text.find("\"file\"") == std::string::npos);
  PackageManifest back = parseOk(text);
  CHECK(back == m);
  CHECK(formatManifest(back) == text);

  // Upper-case digits read too.
  PackageManifest upper = parseOk(R"({"weights": [{"name": "w",
      "dtype": "i64", "shape": [2], "fill": "FFFFFFFFFFFFFFFF"}]})");
  REQUIRE(upper.weights[0].fill);
  CHECK(*upper.weights[0].fill == std::vector<uint8_t>(8, 0xff));
  CHECK(upper.weights[0].bytes == 16);
  CHECK(upper.weights[0].file.empty());
}

TEST_CASE("Fill weight errors name the entry and what is wrong", "[manifest]") {
  auto fill = [](const std::string &dtype, const std::string &value,
                 const std::string &extra = "") {
    return withWeight(R"({"name": "w", "dtype": ")" + dtype +
                      R"(", "shape": [8], "fill": )" + value + extra + "}");
  };
  requireError(fill("f32", R"("0000")"),
               {"weights[1] ('w'): 'fill' must be the bytes of one f32 "
                "element as 8 hex digits, not \"0000\""});
  requireError(fill("f16", R"("0000003f")"),
               {"weights[1] ('w'): 'fill' must be the bytes of one f16 "
                "element as 4 hex digits, not \"0000003f\""});
  requireError(fill("f32", R"("0000zz3f")"),
               {"weights[1] ('w'): 'fill' must be the bytes of one f32 "
                "element as 8 hex digits, not \"0000zz3f\""});
  requireError(fill("f32", "0.5"),
               {"weights[1] ('w'): 'fill' must be the bytes of one f32 "
                "element as 8 hex digits"});
  requireError(fill("bool", R"("02")"),
               {"weights[1] ('w'): 'fill' \"02\" is not a bool (00 or 01)"});
  requireError(fill("f32", R"("0000003f")", R"(, "bytes": 4)"),
               {"weights[1] ('w'): holds 4 bytes but f32[8] needs 32"});
  requireError(fill("f32", R"("0000003f")", R"(, "file": "weights.bin")"),
               {"weights[1] ('w'): has both 'fill' and a file"});
  requireError(
      fill("f32", R"("0000003f")", R"(, "external": {"file": "w.data"})"),
      {"weights[1] ('w'): has both 'fill' and a file"});
  // A long value is cut in the message.
  requireError(fill("f32", "\"" + std::string(1000, '0') + "\""),
               {"as 8 hex digits, not \"" + std::string(64, '0') + "...\""});
}

TEST_CASE("A manifest of a package compiled for ranges of sizes",
          "[manifest]") {
  PackageManifest m;
  m.formatVersion = kManifestSizeSymbolsFormatVersion;
  m.sizeSymbols = {{"batch", 1, 64}, {"seq", 8, 128}};
  ManifestValue x{
      "x", DType::F32, {-1, -1, 16}, 64 * 128 * 16 * 4, {"batch", "seq", "16"}};
  ManifestValue y{
      "y", DType::F32, {-1, 32}, 64 * 128 * 8 * 4, {"batch*seq/2", "32"}};
  m.inputs = {x};
  m.outputs = {y};
  std::string text = formatManifest(m);
  INFO(text);
  CHECK(text.find("\"size_symbols\"") != std::string::npos);
  PackageManifest back = parseOk(text);
  CHECK(back == m);

  // Hostile or inconsistent entries are errors naming what is wrong.
  auto with = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  requireError(with("\"seq\",\n      \"min\": 8", "\"seq\",\n      \"min\": 0"),
               {"'size_symbols': 'seq' has the range 0..128"});
  requireError(with("\"name\": \"seq\"", "\"name\": \"2seq\""),
               {"each needs a 'name' that is an identifier"});
  requireError(with("\"batch*seq/2\"", "\"batch*sequence/2\""),
               {"its dims use 'sequence', which 'size_symbols' does not "
                "declare"});
  requireError(with("\"batch*seq/2\"", "\"batch*/2\""),
               {"size expression 'batch*/2'"});
  requireError(with("\"32\"\n", "\"31\"\n"),
               {"'dims' entry '31' disagrees with the shape's size 32"});
}

TEST_CASE("Size expressions: text, C++ and evaluation", "[manifest]") {
  Expected<SymbolicDim> d = SymbolicDim::parse("4*batch*seq/6");
  REQUIRE(d);
  CHECK(d->num == 2);
  CHECK(d->den == 3);
  CHECK(d->str() == "2*batch*seq/3");
  CHECK(d->cExpr() == "(2 * kiln_s_batch * kiln_s_seq / 3)");
  Expected<int64_t> v = d->evaluate({{"batch", 3}, {"seq", 5}});
  REQUIRE(v);
  CHECK(*v == 10);
  Expected<int64_t> fraction = d->evaluate({{"batch", 2}, {"seq", 5}});
  REQUIRE_FALSE(fraction);
  CHECK(fraction.status().message().find("not a whole number") !=
        std::string::npos);
  CHECK_FALSE(d->evaluate({{"batch", 3}}));
  // Overflow is an error, not a wrapped size.
  CHECK_FALSE(SymbolicDim::parse("batch*batch*batch")
                  ->evaluate({{"batch", int64_t(1) << 30}}));
  Expected<SymbolicDim> inverse = SymbolicDim::parse("batch/seq");
  REQUIRE(inverse);
  CHECK(inverse->str() == "batch/seq");
  CHECK(SymbolicDim::parse("64")->isConstant());
  CHECK(SymbolicDim::symbol("batch").str() == "batch");
  for (const char *bad : {"", "*", "batch*", "0*batch", "batch+1", "-2",
                          "99999999999999999999*batch", "b/0"})
    CHECK_FALSE(SymbolicDim::parse(bad));
  CHECK(sizeSymbolCName("my-dim") == "kiln_s_my_dim");
}
