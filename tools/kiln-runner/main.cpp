//===- main.cpp - kiln-runner: run and time a package with the runtime ----===//
//
// This file implements kiln-runner, the runtime-only companion of `kiln run`
// and `kiln bench` for compiled packages: it links libkiln_runtime alone, so
// it runs where the compiler's MLIR and LLVM are not installed (the GPU
// machine). It loads DIR (weights from --weights-dir when the package was
// compiled with --weights external), reads the inputs from .npy files (f32
// files feed f16/bf16 inputs, rounded to nearest even: NumPy has no bf16),
// runs
// once, writes each output as OUTDIR/NAME.npy (f16/bf16 ones as f32) and
// compares those named by
// --expect NAME=FILE.npy with the expected tensors (the tests' tolerances:
// exit status 3 and a message on a mismatch); with --iterations it then
// times that many runs after --warmup runs, inputs and outputs staying on the
// package's device, and prints one JSON line:
//   {"package": DIR, "device": "...", "median_ms": ..., "min_ms": ...,
//    "device_median_ms": ...}
// median_ms is wall-clock around Model::run, which returns after its stream
// is synchronized: the device time of the whole graph plus the host's work
// and the wait. For a cuda package without graph breaks, device_median_ms
// is the median of the device time between two CUDA events around the run's
// work on its stream (RunOptions::deviceMilliseconds; how PyTorch's
// torch.cuda.Event timings measure). A cuda package's line also says how
// many host<->device copies and device allocations the timed runs made, per
// run (host_device_copies_per_run: its host steps' round trips; 0 for a
// package whose every step runs on the device).
// --profile alone prints the counts of the first run as a JSON line;
// --profile FILE.json (or --profile=FILE.json) also profiles one more run
// right after the first and writes its Chrome/Perfetto trace
// (kiln/runtime/Trace.h). --check-nan makes the first run stop at the first
// result holding a NaN or an infinity (RunOptions::checkNan).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/Model.h"
#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/TensorCompare.h"
#include "kiln/runtime/TensorIO.h"
#include "kiln/runtime/Trace.h"

#include "ConcurrentRunner.h"
#include "TrainRunner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

using namespace kiln;

namespace {

int fail(const std::string &msg) {
  std::cerr << "kiln-runner: error: " << msg << "\n";
  return 1;
}

const char *kUsage =
    "usage: kiln-runner DIR [--weights-dir DIR] [--input NAME=FILE.npy]...\n"
    "                   [--expect NAME=FILE.npy]... [--output-dir DIR]\n"
    "                   [--warmup N] [--iterations N]\n"
    "                   [--profile [FILE.json]] [--check-nan]\n"
    "                   [--threads N] [--no-cuda-graphs]\n"
    "Runs the package DIR once (outputs to --output-dir as NAME.npy), then\n"
    "times --iterations runs and prints a JSON line with the median.\n"
    "--profile prints what the first run did (graph calls, graph breaks,\n"
    "eager ops, host<->device copies) as a JSON line; with FILE.json it\n"
    "also profiles the run after the first and writes its Chrome/Perfetto\n"
    "trace there (a span per compiled step; open it in ui.perfetto.dev).\n"
    "--check-nan stops the first run at the first result holding a NaN\n"
    "or an infinity and names it.\n"
    "A training package (kiln compile --train) takes [--steps N]\n"
    "[--losses FILE.json] [--gradients DIR] [--load-weights FILE]\n"
    "instead of --expect: it prints\n"
    "'step N loss X' per step; --iterations times further steps.\n"
    "--threads N runs the package from N threads at once, --iterations\n"
    "times each, and checks that every output is bit-identical to the\n"
    "first run's (exit status 4 otherwise).\n"
    "A cuda package's timed runs replay a CUDA graph (captured by the\n"
    "second run; \"cuda_graph\" in the JSON line says what the last run\n"
    "did); --no-cuda-graphs launches every kernel directly instead.\n";

} // namespace

int main(int argc, char **argv) {
  std::string dir, outputDir;
  LoadOptions load;
  std::vector<std::pair<std::string, std::string>> inputFiles, expectFiles;
  int warmup = 5, iterations = 0, steps = 1, threads = 0;
  std::string lossesFile, gradientsDir, loadWeights;
  bool profile = false, cudaGraphs = true, checkNan = false;
  std::string profileFile;
  auto isJson = [](const std::string &f) {
    return f.size() > 5 && f.compare(f.size() - 5, 5, ".json") == 0;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--profile") {
      profile = true;
      // An optional FILE.json after it (anything else is the next argument).
      if (i + 1 < argc && isJson(argv[i + 1]))
        profileFile = argv[++i];
      continue;
    }
    if (a.rfind("--profile=", 0) == 0) {
      profile = true;
      profileFile = a.substr(10);
      if (!isJson(profileFile))
        return fail("--profile '" + profileFile +
                    "': the trace file must end in .json");
      continue;
    }
    if (a == "--check-nan") {
      checkNan = true;
      continue;
    }
    if (a == "--no-cuda-graphs") {
      cudaGraphs = false;
      continue;
    }
    if (a == "--weights-dir" || a == "--output-dir" || a == "--input" ||
        a == "--expect" || a == "--warmup" || a == "--iterations" ||
        a == "--steps" || a == "--losses" || a == "--gradients" ||
        a == "--load-weights" || a == "--threads") {
      const char *v = value();
      if (!v)
        return fail(a + " needs a value\n" + kUsage);
      if (a == "--weights-dir")
        load.weightsDir = v;
      else if (a == "--output-dir")
        outputDir = v;
      else if (a == "--warmup")
        warmup = std::atoi(v);
      else if (a == "--iterations")
        iterations = std::atoi(v);
      else if (a == "--steps")
        steps = std::atoi(v);
      else if (a == "--threads")
        threads = std::atoi(v);
      else if (a == "--losses")
        lossesFile = v;
      else if (a == "--gradients")
        gradientsDir = v;
      else if (a == "--load-weights")
        loadWeights = v;
      else {
        const char *eq = std::strchr(v, '=');
        if (!eq)
          return fail(a + " '" + std::string(v) + "': expected NAME=FILE");
        (a == "--input" ? inputFiles : expectFiles)
            .emplace_back(std::string(v, eq), std::string(eq + 1));
      }
    } else if (!a.empty() && a[0] == '-') {
      return fail("unknown option '" + a + "'\n" + kUsage);
    } else if (dir.empty()) {
      dir = a;
    } else {
      return fail("more than one package folder ('" + dir + "', '" + a + "')");
    }
  }
  if (dir.empty())
    return fail(std::string("no package folder given\n") + kUsage);

  // A training package runs train steps (TrainRunner.cpp).
  Expected<PackageManifest> manifest = readManifest(dir + "/manifest.json");
  if (manifest && manifest->kind == PackageKind::Training &&
      (checkNan || !profileFile.empty()))
    return fail(dir + ": --check-nan and --profile FILE apply to inference "
                      "packages; this is a training package");
  if (manifest && manifest->kind == PackageKind::Training)
    return runTrainingPackage(TrainRun{dir, inputFiles, steps, lossesFile,
                                       gradientsDir, warmup, iterations,
                                       loadWeights});
  bool isProgram = manifest && manifest->kind == PackageKind::Program;
  Expected<Model> model = Model::load(dir, load);
  if (!model)
    return fail(model.status().message());
  NamedTensors inputs;
  for (const auto &[name, file] : inputFiles) {
    Expected<Tensor> t = readNpy(file);
    if (!t)
      return fail("--input " + name + ": " + t.status().message());
    Tensor tensor = t.take();
    for (const ValueSignature &sig : model->inputs())
      if (sig.name == name && tensor.dtype() == DType::F32 &&
          (sig.dtype == DType::BF16 || sig.dtype == DType::F16 ||
           isStorageOnly(sig.dtype)))
        tensor = tensor.to(sig.dtype);
    inputs.emplace_back(name, std::move(tensor));
  }
  ProgramStats stats;
  RunOptions first;
  first.stats = &stats;
  first.checkNan = checkNan;
  Expected<NamedTensors> outputs = model->run(inputs, first);
  if (!outputs)
    return fail(dir + ": " + outputs.status().message());
  if (!profileFile.empty()) {
    // The run after the first: libraries have made their plans by then.
    Trace trace;
    RunOptions profiled;
    profiled.trace = &trace;
    Expected<NamedTensors> again = model->run(inputs, profiled);
    if (!again)
      return fail(dir + ": " + again.status().message());
    if (Status written = trace.writeJson(profileFile); !written)
      return fail(written.message());
    std::fprintf(stderr, "kiln-runner: profile: %zu spans -> %s\n",
                 trace.events().size(), profileFile.c_str());
  }
  if (profile)
    std::printf("{\"package\": \"%s\", \"graph_calls\": %lld, "
                "\"graph_breaks_taken\": %lld, \"eager_ops\": %lld, "
                "\"branches\": %lld, \"loop_iterations\": %lld, "
                "\"copied_bytes\": %lld, \"graph_ms\": %.4f, "
                "\"eager_ms\": %.4f}\n",
                dir.c_str(), (long long)stats.graphCalls,
                (long long)stats.eagerRegions, (long long)stats.eagerOps,
                (long long)stats.branches, (long long)stats.loopIterations,
                (long long)stats.copiedBytes, stats.graphSeconds * 1e3,
                stats.eagerSeconds * 1e3);
  if (!outputDir.empty()) {
    // The folder is made when missing (as `kiln run -o` does).
    std::error_code ec;
    std::filesystem::create_directories(outputDir, ec);
    if (ec)
      return fail("--output-dir " + outputDir + ": cannot create it: " +
                  ec.message());
  }
  if (!outputDir.empty())
    for (const auto &[name, t] : *outputs) {
      std::string file = name;
      std::replace_if(
          file.begin(), file.end(),
          [](char c) { return !(std::isalnum((unsigned char)c) || c == '_'); },
          '_');
      bool half = t.dtype() == DType::BF16 || t.dtype() == DType::F16 ||
                  isStorageOnly(t.dtype());
      Status s = writeNpy(outputDir + "/" + file + ".npy",
                          half ? t.to(DType::F32) : t);
      if (!s)
        return fail(s.message());
    }
  for (const auto &[name, file] : expectFiles) {
    Expected<Tensor> expected = readNpy(file);
    if (!expected)
      return fail("--expect " + name + ": " + expected.status().message());
    auto it =
        std::find_if(outputs->begin(), outputs->end(),
                     [&name = name](const auto &e) { return e.first == name; });
    if (it == outputs->end())
      return fail("--expect " + name + ": the package has no such output");
    Status s = compareTensors(it->second.dtype() == expected->dtype()
                                  ? it->second
                                  : it->second.to(expected->dtype()),
                              *expected,
                              defaultTolerance(expected->dtype()));
    if (!s) {
      std::cerr << "kiln-runner: mismatch: output '" << name
                << "': " << s.message() << "\n";
      return 3;
    }
  }
  if (iterations <= 0)
    return 0;
  if (threads > 0)
    return runConcurrently(*model, dir, inputs, *outputs, threads, iterations);

  // Timing: inputs on the package's device, outputs left there.
  Device device = model->device();
  for (auto &entry : inputs) {
    Expected<Tensor> moved = entry.second.to(device);
    if (!moved)
      return fail("input '" + entry.first + "': " + moved.status().message());
    entry.second = moved.take();
  }
  // Outputs into tensors made once, as a server would (and as
  // torch.compile's CUDA graphs keep theirs): runs replaying a graph then
  // copy nothing. Their shapes are the first run's (a package compiled for
  // a range of sizes has the inputs' sizes, not the signature's).
  NamedTensors into;
  for (const ValueSignature &sig : isProgram ? std::vector<ValueSignature>()
                                             : model->outputs()) {
    Shape shape = sig.shape;
    for (const auto &[name, first] : *outputs)
      if (name == sig.name)
        shape = first.shape();
    Expected<Tensor> t = Tensor::empty(sig.dtype, shape, device);
    if (!t)
      return fail("output '" + sig.name + "': " + t.status().message());
    into.emplace_back(sig.name, t.take());
  }
  RunOptions options;
  options.outputDevice = device;
  if (!isProgram)
    options.outputsInto = &into;
  options.cudaGraphs = cudaGraphs;
  GraphUse graphUse = GraphUse::Off;
  options.graphUse = &graphUse;
  double deviceMs = -1;
  if (device == Device::CUDA)
    options.deviceMilliseconds = &deviceMs;
  std::vector<double> ms, deviceTimes;
  cuda::CopyStats copiesBefore;
  size_t allocationsBefore = 0;
  for (int i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) {
      copiesBefore = cuda::copyStats();
      allocationsBefore = cuda::allocatorStats().driverAllocations;
    }
    auto start = std::chrono::steady_clock::now();
    Expected<NamedTensors> out = model->run(inputs, options);
    auto end = std::chrono::steady_clock::now();
    if (!out)
      return fail(dir + ": " + out.status().message());
    if (i < warmup)
      continue;
    ms.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
    if (deviceMs >= 0)
      deviceTimes.push_back(deviceMs);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(deviceTimes.begin(), deviceTimes.end());
  char deviceMedian[64] = "";
  if (deviceTimes.size() == ms.size())
    std::snprintf(deviceMedian, sizeof(deviceMedian),
                  ", \"device_median_ms\": %.4f",
                  deviceTimes[deviceTimes.size() / 2]);
  std::string where = device == Device::CUDA ? cuda::deviceDescription()
                                             : std::string("cpu");
  // What the timed runs did besides their kernels: host<->device copies
  // (the package's host steps) and device allocations, per run.
  char perRun[160] = "";
  if (device == Device::CUDA) {
    cuda::CopyStats copies = cuda::copyStats();
    size_t hostCopies = copies.hostToDevice - copiesBefore.hostToDevice +
                        copies.deviceToHost - copiesBefore.deviceToHost;
    size_t allocations =
        cuda::allocatorStats().driverAllocations - allocationsBefore;
    std::snprintf(perRun, sizeof(perRun),
                  ", \"host_device_copies_per_run\": %.2f, "
                  "\"device_allocations_per_run\": %.2f",
                  double(hostCopies) / iterations,
                  double(allocations) / iterations);
  }
  std::printf("{\"package\": \"%s\", \"device\": \"%s\", \"iterations\": %d, "
              "\"median_ms\": %.4f, \"min_ms\": %.4f, \"max_ms\": %.4f%s%s, "
              "\"cuda_graph\": \"%s\"}\n",
              dir.c_str(), where.c_str(), iterations, ms[ms.size() / 2],
              ms.front(), ms.back(), deviceMedian, perRun,
              graphUseName(graphUse));
  return 0;
}
