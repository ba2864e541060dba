//===- ConformanceRunner.cpp - ONNX backend node tests through Kiln -------===//
//
// This file implements `kiln-conformance`, the runner of the ONNX backend node
// tests (onnx/backend/test/data/node of the onnx 1.22.0 wheel). For each case
// it traces model.onnx, runs every test_data_set_* through a Kiln path and
// compares each output with the expected one (compareTensors' default
// tolerances). The paths:
//   reference     the traced program on the reference runtime;
//   compiled-cpu  `kiln compile` into a temporary package (graph passes,
//                 fusion, generated C++ kernels, host compiler), loaded with
//                 kiln::Model and run;
//   compiled-cuda `kiln compile --target cuda` (CUDA kernels through NVRTC,
//                 cuBLASLt), loaded with kiln::Model and run on the GPU;
//   compile-cuda  the same compile only, for machines without a GPU: a case
//                 "passes" when its package (kernels.cubin included) is
//                 written. CI runs it against the compiled-cpu passes.
// A case is "unsupported" when Kiln rejects it as such (an op, opset,
// attribute or dtype it does not claim) or when its model draws random
// numbers (its expected values are NumPy's global generator's, which no
// implementation reproduces: randomOpIn), "failed" on any other error or
// mismatch, "passed" otherwise. In compiled-cpu mode a passing case that
// still calls reference kernels from the package (ops the CPU backend does
// not generate or hand to a library yet) is counted apart, as "passed with
// fallback ops".
//
// Each case runs in a forked child with a time limit, so a crash or a hang is
// a failure of that case, not of the run. The run fails when a case listed in
// the expected-passes file does not pass (a regression).
//
//===----------------------------------------------------------------------===//

#include "compiler/GraphBreakReport.h"
#include "compiler/Pipeline.h"
#include "compiler/ProgramBuilder.h"
#include "compiler/SizeRangeCompile.h"
#include "compiler/onnx/OnnxTracer.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Model.h"
#include "kiln/runtime/TensorCompare.h"
#include "kiln/runtime/TensorIO.h"
#include "passes/FusionPasses.h"
#include "passes/GraphBreaks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace kiln;

namespace {

enum class Outcome : char {
  Passed = 'P',
  PassedWithFallback = 'p',
  PassedWithBreaks = 'b', ///< a program: compiled graphs and graph breaks.
  Failed = 'F',
  Unsupported = 'U'
};

/// Which Kiln path runs the cases.
enum class Mode { Reference, CompiledCpu, CompiledCuda, CompileCuda };

Mode parseMode(const std::string &name) {
  if (name == "compiled-cpu")
    return Mode::CompiledCpu;
  if (name == "compiled-cuda")
    return Mode::CompiledCuda;
  if (name == "compile-cuda")
    return Mode::CompileCuda;
  return Mode::Reference;
}

struct CaseResult {
  Outcome outcome = Outcome::Failed;
  std::string message;
};

/// True when a tracer error says Kiln does not support something (as opposed
/// to an error in Kiln itself).
bool isUnsupportedMessage(const std::string &message) {
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  return lower.find("unsupported") != std::string::npos ||
         lower.find("not supported") != std::string::npos ||
         lower.find("does not support") != std::string::npos ||
         lower.find("kiln supports") != std::string::npos;
}

/// Runs every test_data_set_* of `dir` through `run` (inputs in graph
/// order, named after `inputNames`) and compares the outputs.
CaseResult runDataSets(
    const fs::path &dir, const std::vector<std::string> &inputNames,
    const std::function<Expected<NamedTensors>(const NamedTensors &)> &run) {
  std::vector<fs::path> dataSets;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.is_directory() &&
        entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      dataSets.push_back(entry.path());
  std::sort(dataSets.begin(), dataSets.end());
  if (dataSets.empty())
    return {Outcome::Failed, "no test_data_set_* folder"};

  for (const fs::path &set : dataSets) {
    NamedTensors inputs;
    for (size_t i = 0;; ++i) {
      fs::path p = set / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(p))
        break;
      Expected<Tensor> t = readTensorProtoFile(p.string());
      if (!t)
        return {Outcome::Unsupported, "input: " + t.status().message()};
      if (i >= inputNames.size())
        return {Outcome::Failed, "more input files than graph inputs"};
      inputs.emplace_back(inputNames[i], t.take());
    }
    Expected<NamedTensors> outputs = run(inputs);
    if (!outputs)
      return {Outcome::Failed, "run: " + outputs.status().message()};
    for (size_t i = 0;; ++i) {
      fs::path p = set / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(p))
        break;
      Expected<Tensor> expected = readTensorProtoFile(p.string());
      if (!expected)
        return {Outcome::Unsupported, "output: " + expected.status().message()};
      if (i >= outputs->size())
        return {Outcome::Failed, "fewer outputs than expected"};
      Status s = compareTensors((*outputs)[i].second, *expected,
                                defaultTolerance(expected->dtype()));
      if (!s)
        return {Outcome::Failed, strCat(set.filename().string(), " output '",
                                        (*outputs)[i].first, "': ",
                                        s.message())};
    }
  }
  return {Outcome::Passed, ""};
}

/// Writes each test_data_set_K of `dir` as `into`/setK/{input,expected}_I.npy
/// plus `into`/setK/args, the kiln-runner arguments that run and check it
/// (`--input NAME=setK/input_I.npy ... --expect NAME=setK/expected_I.npy`,
/// relative to `into`).
std::string dumpDataSets(const fs::path &dir,
                         const std::vector<std::string> &inputNames,
                         const std::vector<std::string> &outputNames,
                         const fs::path &into) {
  for (int k = 0;; ++k) {
    fs::path set = dir / ("test_data_set_" + std::to_string(k));
    if (!fs::is_directory(set))
      return k == 0 ? "no test_data_set_* folder" : "";
    std::string setName = "set" + std::to_string(k);
    fs::create_directories(into / setName);
    std::string args;
    for (int out = 0; out < 2; ++out) {
      const char *kind = out ? "output_" : "input_";
      const std::vector<std::string> &names = out ? outputNames : inputNames;
      for (size_t i = 0;; ++i) {
        fs::path p = set / (kind + std::to_string(i) + ".pb");
        if (!fs::exists(p))
          break;
        Expected<Tensor> t = readTensorProtoFile(p.string());
        if (!t || i >= names.size())
          return "data set " + p.string() + ": unreadable or extra";
        std::string file = setName + "/" + (out ? "expected_" : "input_") +
                           std::to_string(i) + ".npy";
        // NumPy has no bf16, float8 or sub-byte integers: such tensors go as
        // f32, which holds each of their values exactly (kiln-runner feeds
        // them back in the signature's dtype and compares outputs in the
        // expected file's dtype).
        bool noNumpy = t->dtype() == DType::BF16 || isStorageOnly(t->dtype());
        Status w =
            writeNpy((into / file).string(), noNumpy ? t->to(DType::F32) : *t);
        if (!w)
          return w.message();
        args += std::string(out ? "--expect " : "--input ") + names[i] + "=" +
                file + "\n";
      }
    }
    std::ofstream(into / setName / "args") << args;
  }
}

/// The ONNX operator of the first random-number op of `module` (one traced
/// from RandomUniform, RandomNormal, their -Like forms, Bernoulli or
/// Multinomial, also when it folded to a constant: the location names the
/// node), empty when there is none. ONNX's node tests of random generators
/// cannot be matched exactly.
std::string randomOpIn(mlir::ModuleOp module) {
  static const std::set<std::string> kRandom = {
      "RandomUniform",    "RandomNormal", "RandomUniformLike",
      "RandomNormalLike", "Bernoulli",    "Multinomial"};
  std::string found;
  module.walk([&](mlir::Operation *op) {
    std::string type = getGraphBreakSource(op->getLoc()).opType;
    if (kRandom.count(type)) {
      found = type;
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return found;
}

/// Runs one case in this process. `keepDir`: compile-cuda keeps the package
/// and the data sets there (for scripts/gpu/, which runs them on the GPU).
CaseResult runCase(const fs::path &dir, Mode mode, const std::string &keepDir) {
  mlir::MLIRContext context;
  context.disableMultithreading();
  auto module = traceOnnxFile(context, (dir / "model.onnx").string());
  if (!module) {
    const std::string &m = module.status().message();
    return {isUnsupportedMessage(m) ? Outcome::Unsupported : Outcome::Failed,
            "trace: " + m};
  }
  if (std::string random = randomOpIn(**module); !random.empty())
    return {Outcome::Unsupported,
            "unsupported check: " + random +
                " draws random values; the node test expects NumPy's global "
                "generator's draws, which Kiln's seeded generator does not "
                "reproduce (the op is checked by unit tests instead)"};
  mlir::func::FuncOp graph = findGraphFunction(**module);
  if (!graph)
    return {Outcome::Failed, "no graph function"};
  Expected<Program> program = buildProgram(graph);
  if (!program)
    return {Outcome::Failed, "program: " + program.status().message()};
  std::vector<std::string> inputNames;
  for (const ValueSignature &sig : program->inputs)
    inputNames.push_back(sig.name);

  if (mode == Mode::Reference)
    return runDataSets(dir, inputNames, [&](const NamedTensors &inputs) {
      return runProgram(*program, inputs);
    });

  // compiled-*: compile into a private folder, load, run.
  fs::path work = fs::temp_directory_path() /
                  ("kiln-conformance-" + std::to_string(getpid()));
  fs::create_directories(work);
  CompileOptions options;
  options.outputDir = (work / "package").string();
  fs::path keep;
  if (mode == Mode::CompileCuda && !keepDir.empty()) {
    keep = fs::path(keepDir) / dir.filename();
    fs::remove_all(keep);
    fs::create_directories(keep);
    options.outputDir = (keep / "package").string();
  }
  options.modelPath = (dir / "model.onnx").string();
  options.target = mode == Mode::CompiledCpu ? "cpu" : "cuda";
  std::string diagnostics;
  mlir::LogicalResult compiled = mlir::failure();
  // As kiln compile: named dynamic dims are compiled for a range of sizes
  // where the model allows (compiler/SizeRangeCompile.h).
  bool sized = false;
  {
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      diagnostics += (diagnostics.empty() ? "" : "; ") + d.str();
      return mlir::success();
    });
    mlir::FailureOr<std::vector<SizeSymbol>> symbols =
        compileModel(context, **module, options, TraceOptions{});
    compiled = mlir::success(mlir::succeeded(symbols));
    sized = mlir::succeeded(symbols) && !symbols->empty();
  }
  if (mlir::failed(compiled)) {
    std::error_code ec;
    fs::remove_all(work, ec);
    if (!keep.empty())
      fs::remove_all(keep, ec);
    return {isUnsupportedMessage(diagnostics) ? Outcome::Unsupported
                                              : Outcome::Failed,
            "compile: " + diagnostics};
  }
  bool isProgram = isProgramModule(**module);
  FusionSummary summary;
  // (A package for ranges of sizes is compiled from a module of its own:
  // the traced one here is not fused.)
  if (!isProgram && !sized)
    summary = summarizeFusion(findGraphFunction(**module));
  CaseResult result;
  if (mode == Mode::CompileCuda) {
    bool written = fs::exists(fs::path(options.outputDir) / "kernels.cubin") ||
                   summary.kernels == 0;
    result = written ? CaseResult{Outcome::Passed, ""}
                     : CaseResult{Outcome::Failed, "no kernels.cubin written"};
    if (written && !keep.empty()) {
      std::vector<std::string> outputNames;
      for (const ValueSignature &sig : program->outputs)
        outputNames.push_back(sig.name);
      std::string error = dumpDataSets(dir, inputNames, outputNames, keep);
      if (!error.empty())
        result = {Outcome::Failed, "keep: " + error};
    }
  } else {
    Expected<Model> model = Model::load(options.outputDir);
    if (!model) {
      result = {Outcome::Failed, "load: " + model.status().message()};
    } else {
      result = runDataSets(dir, inputNames, [&](const NamedTensors &inputs) {
        return model->run(inputs);
      });
    }
  }
  if (result.outcome == Outcome::Passed && isProgram) {
    GraphBreakReport report = collectGraphBreaks(**module, options.target);
    result.outcome = Outcome::PassedWithBreaks;
    result.message = std::to_string(report.graphs.size()) + " graphs, " +
                     std::to_string(report.breaks.size()) + " breaks";
    for (const GraphBreakEntry &entry : report.breaks)
      result.message += "; " + entry.reason.reason + " at " +
                        entry.op.kilnOp;
  } else if (result.outcome == Outcome::Passed && summary.fallbackOps > 0) {
    result.outcome = Outcome::PassedWithFallback;
    std::string names;
    for (const std::string &n : summary.fallbackNames)
      names += (names.empty() ? "" : ", ") + n;
    result.message = "fallback ops: " + names;
  }
  // The package stays loaded until the process exits (model.so uses OpenMP,
  // whose threads must not outlive the library); the files can go now.
  std::error_code ec;
  fs::remove_all(work, ec);
  return result;
}

/// A case running in a child process.
struct Child {
  pid_t pid;
  int fd;
  std::string name;
};

Child startCase(const fs::path &dir, Mode mode, int timeoutSeconds,
                const std::string &keepDir) {
  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    std::exit(2);
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(timeoutSeconds);
    CaseResult r = runCase(dir, mode, keepDir);
    std::string payload = std::string(1, char(r.outcome)) + r.message;
    size_t off = 0;
    while (off < payload.size()) {
      ssize_t n = write(fds[1], payload.data() + off, payload.size() - off);
      if (n <= 0)
        break;
      off += n;
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  return {pid, fds[0], dir.filename().string()};
}

CaseResult finishCase(const Child &child) {
  std::string payload;
  char buf[4096];
  ssize_t n;
  while ((n = read(child.fd, buf, sizeof buf)) > 0)
    payload.append(buf, n);
  close(child.fd);
  int status = 0;
  waitpid(child.pid, &status, 0);
  if (WIFSIGNALED(status))
    return {Outcome::Failed,
            WTERMSIG(status) == SIGALRM
                ? std::string("timed out")
                : strCat("crashed with signal ", WTERMSIG(status))};
  if (payload.empty())
    return {Outcome::Failed, "child exited without a result"};
  return {Outcome(payload[0]), payload.substr(1)};
}

std::set<std::string> readList(const std::string &path) {
  std::set<std::string> names;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    names.insert(line.substr(0, line.find_first_of(" \t")));
  }
  return names;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Runs the ONNX backend node tests through Kiln and checks the "
               "passes against a list of expected passes."};
  std::string nodeDir, expectedFile, reportFile, filter, mode = "reference";
  std::string keepDir;
  bool update = false, verbose = false;
  int jobs = 2, timeout = 120;
  app.add_option("--node-dir", nodeDir,
                 "onnx/backend/test/data/node of the onnx 1.22.0 wheel")
      ->required();
  app.add_option("--expected", expectedFile,
                 "File listing the cases expected to pass (one per line)")
      ->required();
  app.add_option("--mode", mode,
                 "Path under test: reference (tracer + reference runtime), "
                 "compiled-cpu (kiln compile, then kiln::Model), "
                 "compiled-cuda (kiln compile --target cuda, run on the GPU) "
                 "or compile-cuda (the CUDA compile only, no GPU needed)")
      ->check(CLI::IsMember(
          {"reference", "compiled-cpu", "compiled-cuda", "compile-cuda"}));
  app.add_flag("--update", update,
               "Rewrite the expected-passes file with this run's passes");
  app.add_option("--report", reportFile,
                 "Write every case's outcome and message to this file");
  app.add_option("--filter", filter, "Run only cases whose name contains this");
  app.add_option("--keep-packages", keepDir,
                 "compile-cuda: keep each case's package and its data sets "
                 "(as .npy, with kiln-runner arguments) in DIR/CASE/");
  app.add_option("-j,--jobs", jobs, "Cases run at once");
  app.add_option("--timeout", timeout, "Seconds allowed per case");
  app.add_flag("-v,--verbose", verbose, "Print every case");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (!fs::is_directory(nodeDir)) {
    std::cerr << "kiln-conformance: error: --node-dir '" << nodeDir
              << "' is not a folder; install onnx==1.22.0 (its wheel carries "
                 "the node tests)\n";
    return 1;
  }

  std::vector<fs::path> cases;
  for (const auto &entry : fs::directory_iterator(nodeDir))
    if (entry.is_directory() &&
        entry.path().filename().string().find(filter) != std::string::npos)
      cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());

  std::map<std::string, CaseResult> results;
  std::vector<Child> running;
  size_t next = 0;
  auto reap = [&](size_t i) {
    CaseResult r = finishCase(running[i]);
    if (verbose)
      std::cout << char(r.outcome) << " " << running[i].name
                << (r.message.empty() ? "" : "  " + r.message) << "\n";
    results[running[i].name] = r;
    running.erase(running.begin() + i);
  };
  while (next < cases.size() || !running.empty()) {
    while (next < cases.size() && running.size() < size_t(std::max(jobs, 1)))
      running.push_back(
          startCase(cases[next++], parseMode(mode), timeout, keepDir));
    reap(0);
  }

  std::set<std::string> expected = readList(expectedFile);
  int passed = 0, withFallback = 0, withBreaks = 0, failed = 0,
      unsupported = 0;
  std::vector<std::string> regressions, newPasses;
  for (const auto &[name, r] : results) {
    bool ok = r.outcome == Outcome::Passed ||
              r.outcome == Outcome::PassedWithFallback ||
              r.outcome == Outcome::PassedWithBreaks;
    passed += ok;
    withFallback += r.outcome == Outcome::PassedWithFallback;
    withBreaks += r.outcome == Outcome::PassedWithBreaks;
    failed += r.outcome == Outcome::Failed;
    unsupported += r.outcome == Outcome::Unsupported;
    bool wanted = expected.count(name) != 0;
    if (wanted && !ok)
      regressions.push_back(name);
    if (!wanted && ok)
      newPasses.push_back(name);
  }
  if (filter.empty())
    for (const std::string &name : expected)
      if (!results.count(name))
        regressions.push_back(name + " (case not found)");

  if (!reportFile.empty()) {
    std::ofstream out(reportFile);
    for (const auto &[name, r] : results)
      out << char(r.outcome) << "\t" << name << "\t" << r.message << "\n";
  }
  if (update && filter.empty()) {
    std::ofstream out(expectedFile);
    out << "# ONNX node tests expected to pass on the " << mode
        << " path (kiln-conformance --update rewrites this file).\n";
    for (const auto &[name, r] : results)
      if (r.outcome == Outcome::Passed ||
          r.outcome == Outcome::PassedWithFallback ||
          r.outcome == Outcome::PassedWithBreaks)
        out << name << "\n";
  }

  std::cout << "conformance (" << mode << "): " << passed << " passed, "
            << failed << " failed, " << unsupported << " unsupported, of "
            << results.size() << " cases\n";
  if (mode != "reference")
    std::cout << "  of the passes, " << passed - withFallback - withBreaks
              << " ran fully compiled (generated kernels and library calls), "
              << withFallback << " also called reference kernels and "
              << withBreaks
              << " ran as programs with graph breaks (eager ops between "
                 "compiled graphs)\n";
  if (!newPasses.empty() && !update)
    std::cout << newPasses.size()
              << " cases pass that are not in the expected list (run with "
                 "--update to add them)\n";
  if (!regressions.empty() && !update) {
    std::cout << "REGRESSIONS (" << regressions.size()
              << " expected passes did not pass):\n";
    for (const std::string &name : regressions) {
      auto it = results.find(name);
      std::cout << "  " << name
                << (it != results.end() ? "  " + it->second.message : "")
                << "\n";
    }
    return 1;
  }
  return 0;
}
