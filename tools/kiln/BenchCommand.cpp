//===- BenchCommand.cpp - `kiln bench`: time a package or a model ---------===//
//
// This file implements `kiln bench`: it loads a compiled package (a folder
// with manifest.json) with kiln::Model, or traces an ONNX model for the
// reference runtime (the baseline), binds the inputs (files given with
// --input, the others random from a seeded generator), runs the warm-up
// iterations, then times each of the measured iterations and prints the
// median, minimum, maximum and mean in milliseconds. --threads sets the
// OpenMP and OpenBLAS thread counts when those libraries are loaded. A cuda
// package (--device cuda, or no --device) gets its inputs copied to the
// device before timing and leaves its outputs there; each timed run ends
// with its stream synchronised (Model::run waits), so the wall-clock time
// of a run is the GPU time of the whole graph plus the launch overhead.
// --check-nan checks the first (warm-up) run; --profile FILE.json profiles
// one more run after the timed ones (so the timings do not include the
// profiler) and writes its Chrome/Perfetto trace.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ReferenceProgram.h"
#include "TensorFiles.h"

#include "compiler/ProgramBuilder.h"
#include "compiler/onnx/OnnxTracer.h"
#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Model.h"
#include "kiln/runtime/Trace.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>

namespace kiln {

namespace {

/// What one run of a benchmark does besides running: check for NaNs, add
/// spans to a trace.
struct RunExtras {
  bool checkNan = false;
  Trace *trace = nullptr;
};
using RunFn = std::function<Expected<NamedTensors>(const NamedTensors &,
                                                   const RunExtras &)>;

bool isPackageDir(const std::string &path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) &&
         std::filesystem::exists(std::filesystem::path(path) / "manifest.json",
                                 ec);
}

/// Sets the thread count of the OpenMP and OpenBLAS runtimes in the
/// process, when present (looked up at run time: the tool links neither).
void setThreads(int threads) {
  using SetFn = void (*)(int);
  for (const char *name : {"omp_set_num_threads", "openblas_set_num_threads"})
    if (auto fn = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, name)))
      fn(threads);
}

/// A tensor of `sig`'s static type filled from `rng`: floats uniform in
/// [-1, 1), integers in [0, 3] (small enough to be valid indices of most
/// gathers), booleans fair coins.
Expected<Tensor> randomTensor(ValueSignature sig, std::mt19937_64 &rng,
                              const std::map<std::string, int64_t> &sizes) {
  for (size_t i = 0; i < sig.shape.size(); ++i) {
    // A named dynamic dim (a package for a range of sizes, or an ONNX
    // model) takes its --dim size.
    if (sig.shape[i] < 0 && i < sig.dimNames.size())
      if (auto it = sizes.find(sig.dimNames[i]); it != sizes.end())
        sig.shape[i] = it->second;
    if (sig.shape[i] < 0) {
      std::string dim = i < sig.dimNames.size() && !sig.dimNames[i].empty()
                            ? "'" + sig.dimNames[i] + "'"
                            : std::to_string(i);
      return Status::error(
          strCat("input '", sig.name, "' has the dynamic dimension ", dim,
                 ": give its size with --dim or the input with --input ",
                 sig.name, "=FILE"));
    }
  }
  Tensor t = Tensor::empty(sig.dtype, sig.shape);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 3);
  int64_t n = t.numel();
  visitDType(sig.dtype, [&](auto tag) {
    using T = decltype(tag);
    T *p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>)
        p[i] = small(rng) % 2 == 0;
      else if constexpr (std::is_integral_v<T>)
        p[i] = static_cast<T>(small(rng));
      else
        p[i] = T(real(rng));
    }
  });
  return t;
}

/// Reads the --input files and makes random tensors for the other inputs.
Expected<NamedTensors> bindInputs(const std::vector<ValueSignature> &sigs,
                                  const BenchOptions &options,
                                  std::ostream &log) {
  Expected<NamedTensors> read = readInputArguments(sigs, options.inputs);
  if (!read)
    return read.status();
  NamedTensors given = read.take();
  std::map<std::string, int64_t> sizes;
  KILN_RETURN_IF_ERROR(parseDimFlags(options.dims, sizes));
  std::mt19937_64 rng(options.seed);
  NamedTensors inputs;
  for (const ValueSignature &sig : sigs) {
    auto it = std::find_if(given.begin(), given.end(),
                           [&](const auto &e) { return e.first == sig.name; });
    if (it != given.end()) {
      log << "  input " << sig.name << ": " << it->second.typeString()
          << " (from file)\n";
      inputs.push_back(*it);
      given.erase(it);
      continue;
    }
    Expected<Tensor> t = randomTensor(sig, rng, sizes);
    if (!t)
      return t.status();
    log << "  input " << sig.name << ": " << t->typeString()
        << " (random, seed " << options.seed << ")\n";
    inputs.emplace_back(sig.name, t.take());
  }
  // Names that match no input: let the runner report them with the list.
  for (auto &entry : given)
    inputs.push_back(std::move(entry));
  return inputs;
}

double percentileSorted(const std::vector<double> &sorted, double q) {
  if (sorted.empty())
    return 0;
  double pos = q * (sorted.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

/// Warms up, times and prints. `device` is where the inputs are placed
/// before timing.
int benchmark(const std::string &what, const std::vector<ValueSignature> &sigs,
              const RunFn &run, const BenchOptions &options,
              Device device = Device::CPU) {
  std::cout << "kiln bench: " << what << "\n";
  Expected<NamedTensors> inputs = bindInputs(sigs, options, std::cout);
  if (!inputs)
    return reportError(options.model + ": " + inputs.status().message());
  if (device != Device::CPU) {
    for (auto &entry : *inputs) {
      Expected<Tensor> moved = entry.second.to(device);
      if (!moved)
        return reportError(options.model + ": input '" + entry.first +
                           "': " + moved.status().message());
      entry.second = moved.take();
    }
    std::cout << "  device: " << cuda::deviceDescription()
              << " (inputs and outputs stay on the device)\n";
  }
  std::cout << "  threads: "
            << (options.threads > 0 ? std::to_string(options.threads)
                                    : std::string("default"))
            << "\n";

  // The first run also checks the inputs (and, with --check-nan, every
  // result).
  for (int i = 0; i < std::max(options.warmup, 1); ++i) {
    RunExtras extras;
    extras.checkNan = i == 0 && options.checkNan;
    Expected<NamedTensors> out = run(*inputs, extras);
    if (!out)
      return reportError(options.model + ": " + out.status().message());
  }
  std::vector<double> ms;
  ms.reserve(options.iterations);
  for (int i = 0; i < options.iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    Expected<NamedTensors> out = run(*inputs, RunExtras());
    auto end = std::chrono::steady_clock::now();
    if (!out)
      return reportError(options.model + ": " + out.status().message());
    ms.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  double sum = 0;
  for (double t : ms)
    sum += t;
  std::sort(ms.begin(), ms.end());
  std::cout << "  warm-up: " << std::max(options.warmup, 1)
            << " runs, timed: " << options.iterations << " runs\n"
            << std::setprecision(4) << "  median " << percentileSorted(ms, 0.5)
            << " ms  min " << ms.front() << " ms  max " << ms.back()
            << " ms  mean " << sum / ms.size() << " ms\n";
  if (!options.profileFile.empty()) {
    Trace trace;
    RunExtras extras;
    extras.trace = &trace;
    Expected<NamedTensors> out = run(*inputs, extras);
    if (!out)
      return reportError(options.model + ": " + out.status().message());
    if (Status written = writeProfile(trace, options.profileFile, std::cout);
        !written)
      return reportError(written.message());
  }
  return 0;
}

} // namespace

int runBenchCommand(const BenchOptions &options) {
  if (options.iterations < 1)
    return reportError("--iterations must be at least 1");
  if (options.threads > 0)
    setThreads(options.threads);
  if (!options.profileFile.empty())
    if (Status ok = checkProfileFile("--profile", options.profileFile); !ok)
      return reportError(ok.message());

  if (isPackageDir(options.model)) {
    LoadOptions load;
    load.weightsDir = options.weightsDir;
    Expected<Model> model = Model::load(options.model, load);
    // --dim sizes the random inputs of a package for ranges of sizes.
    std::map<std::string, int64_t> sizes;
    if (Status dims = parseDimFlags(options.dims, sizes); !dims)
      return reportError(dims.message());
    for (const auto &[name, size] : sizes) {
      bool used = false;
      if (model)
        for (const ValueSignature &sig : model->inputs())
          for (size_t d = 0; d < sig.shape.size(); ++d)
            used |= sig.shape[d] < 0 && d < sig.dimNames.size() &&
                    sig.dimNames[d] == name;
      if (model && !used)
        return reportError(strCat("--dim ", name, "=", size,
                                  ": no input of the package has a dynamic "
                                  "dimension named '",
                                  name, "' (a package compiled for fixed "
                                        "sizes has none)"));
    }
    if (!model)
      return reportError(model.status().message());
    const Model &m = *model;
    Status device = checkDeviceFlag(options.device, options.model,
                                    m.device() == Device::CUDA);
    if (!device)
      return reportError(device.message());
    RunOptions runOptions;
    runOptions.outputDevice = m.device();
    return benchmark(
        options.model + (m.device() == Device::CUDA
                             ? " (compiled package, cuda)"
                             : " (compiled package)"),
        m.inputs(),
        [&](const NamedTensors &in, const RunExtras &extras) {
          RunOptions o = runOptions;
          o.checkNan = extras.checkNan;
          o.trace = extras.trace;
          return m.run(in, o);
        },
        options, m.device());
  }
  if (options.device == "cuda")
    return reportError(options.model +
                       ": --device cuda times compiled packages; the "
                       "reference runtime runs ONNX models on the CPU. "
                       "Compile it first: kiln compile MODEL --target cuda -o "
                       "DIR, then kiln bench DIR");
  std::error_code ec;
  if (std::filesystem::is_directory(options.model, ec))
    return reportError(options.model +
                       ": is a folder without manifest.json, so not a "
                       "package; give an .onnx model or a folder written by "
                       "kiln compile");

  TraceOptions traceOptions;
  Status dims = parseDimFlags(options.dims, traceOptions.dimSizes);
  if (!dims)
    return reportError(dims.message());
  mlir::MLIRContext context;
  Expected<Program> program =
      traceReferenceProgram(context, options.model, traceOptions);
  if (!program)
    return reportError(program.status().message());
  const Program &p = *program;
  return benchmark(
      options.model + " (reference runtime)", p.inputs,
      [&](const NamedTensors &in, const RunExtras &extras) {
        return runTracedProgram(
            p, in, std::filesystem::path(options.model).filename().string(),
            extras.checkNan, extras.trace);
      },
      options);
}

} // namespace kiln
