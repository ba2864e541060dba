//===- RunCommand.cpp - `kiln run`: run a model or a compiled package -----===//
//
// This file implements `kiln run`. For an ONNX model: trace it, build the
// runtime program of its graph, read the inputs (.npy or .pb), run the
// program on the reference CPU executor and write one file per output. For
// a package folder (one holding manifest.json, written by `kiln compile`):
// load it with kiln::Model and run the compiled code instead (on the GPU for
// a package compiled with --target cuda; --device must agree with the
// package's target when given). Inputs are checked against the signature
// before anything runs. --profile FILE.json writes a Chrome/Perfetto trace
// of the run (kiln/runtime/Trace.h) for both.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ReferenceProgram.h"
#include "TensorFiles.h"

#include "compiler/ProgramBuilder.h"
#include "compiler/onnx/OnnxTracer.h"
#include "kiln/runtime/Counted.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Model.h"
#include "kiln/runtime/Trace.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <chrono>
#include <filesystem>
#include <iostream>

#include <unistd.h>

namespace kiln {

/// A file-name-safe form of a tensor name.
static std::string fileNameFor(const std::string &name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
            c == '-' || c == '.')
               ? c
               : '_';
  return out.empty() ? "output" : out;
}

/// Writes one file per output into --output-dir and says where.
static int writeOutputs(const RunCommandOptions &options,
                        const NamedTensors &outputs) {
  std::error_code ec;
  std::filesystem::create_directories(options.outputDir, ec);
  if (ec)
    return reportError("--output-dir '" + options.outputDir +
                       "': " + ec.message());
  for (const auto &[name, tensor] : outputs) {
    std::string path = (std::filesystem::path(options.outputDir) /
                        (fileNameFor(name) + "." + options.outputFormat))
                           .string();
    Status s = writeTensorFile(path, tensor, name);
    if (!s)
      return reportError(s.message());
    std::cout << name << ": " << tensor.typeString() << " -> " << path << "\n";
  }
  return 0;
}

static bool isPackageDir(const std::string &path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) &&
         std::filesystem::exists(std::filesystem::path(path) / "manifest.json",
                                 ec);
}

Status checkDeviceFlag(const std::string &device, const std::string &package,
                       bool cudaPackage) {
  if (device.empty() || device == (cudaPackage ? "cuda" : "cpu"))
    return Status::ok();
  if (cudaPackage)
    return Status::error(
        package + ": is a CUDA package (compiled with --target cuda): it runs "
                  "only with --device cuda (or without --device); recompile "
                  "it with --target cpu to run it on the CPU");
  return Status::error(package +
                       ": is a CPU package: it runs only with --device cpu "
                       "(or without --device); recompile it with --target "
                       "cuda to run it on the GPU");
}

Status checkProfileFile(const std::string &flag, const std::string &path) {
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0)
    return Status::ok();
  return Status::error(flag + " '" + path +
                       "': the trace file must end in .json (it is written "
                       "as Chrome trace JSON); an input file after " +
                       flag + " belongs before it");
}

Status writeProfile(const Trace &trace, const std::string &path,
                    std::ostream &log) {
  KILN_RETURN_IF_ERROR(trace.writeJson(path));
  log << "profile: " << trace.events().size() << " spans -> " << path
      << " (open it in ui.perfetto.dev or chrome://tracing)\n";
  return Status::ok();
}

Expected<NamedTensors> runTracedProgram(const Program &program,
                                        const NamedTensors &inputs,
                                        const std::string &name, bool checkNan,
                                        Trace *trace) {
  auto start = std::chrono::steady_clock::now();
  Expected<NamedTensors> outputs =
      runProgram(program, inputs, {}, nullptr, nullptr, checkNan, trace);
  if (trace) {
    TraceEvent span;
    span.name = name;
    span.category = "run";
    span.startUs = trace->microsecondsAt(start);
    span.durationUs = trace->nowMicroseconds() - span.startUs;
    span.pid = static_cast<int>(getpid());
    span.tid = Trace::threadId();
    span.args.emplace_back("runtime", "reference");
    trace->add(std::move(span));
  }
  return outputs;
}

/// `kiln run DIR`: loads the package and runs its compiled code.
static int runPackage(const RunCommandOptions &options) {
  LoadOptions load;
  load.weightsDir = options.weightsDir;
  Expected<Model> model = Model::load(options.model, load);
  if (!model)
    return reportError(model.status().message());
  Status device = checkDeviceFlag(options.device, options.model,
                                  model->device() == Device::CUDA);
  if (!device)
    return reportError(device.message());
  Expected<NamedTensors> inputs =
      readInputArguments(model->inputs(), options.inputs);
  if (!inputs)
    return reportError(inputs.status().message());
  ProgramStats stats;
  RunOptions run;
  run.stats = &stats;
  run.checkNan = options.checkNan;
  Trace trace;
  if (!options.profileFile.empty())
    run.trace = &trace;
  Expected<NamedTensors> outputs = model->run(*inputs, run);
  if (!outputs)
    return reportError(options.model + ": " + outputs.status().message());
  if (!options.profileFile.empty())
    if (Status written = writeProfile(trace, options.profileFile, std::cout);
        !written)
      return reportError(written.message());
  if (options.profile) {
    if (stats.graphCalls + stats.eagerOps + stats.branches == 0)
      std::cout << "profile: one compiled graph (no graph breaks)\n";
    else
      std::cout << "profile: " << stats.graphCalls << " graph calls ("
                << stats.graphSeconds * 1e3 << " ms), "
                << counted(stats.eagerRegions, "graph break", "graph breaks")
                << " taken, "
                << counted(stats.eagerOps, "op", "ops")
                << " on the reference runtime ("
                << stats.eagerSeconds * 1e3 << " ms), " << stats.branches
                << " branches, " << stats.loopIterations
                << " loop iterations, " << stats.copiedBytes
                << " bytes copied between host and device\n";
  }
  return writeOutputs(options, *outputs);
}

int runRunCommand(const RunCommandOptions &options) {
  if (!options.profileFile.empty())
    if (Status ok = checkProfileFile("--profile", options.profileFile); !ok)
      return reportError(ok.message());
  if (isPackageDir(options.model))
    return runPackage(options);
  if (options.device == "cuda")
    return reportError(options.model +
                       ": --device cuda runs compiled packages; the reference "
                       "runtime runs ONNX models on the CPU. Compile it first: "
                       "kiln compile MODEL --target cuda -o DIR, then kiln run "
                       "DIR");
  std::error_code dirEc;
  if (std::filesystem::is_directory(options.model, dirEc))
    return reportError(options.model +
                       ": is a folder without manifest.json, so not a "
                       "package; give an .onnx model or a folder written by "
                       "kiln compile");
  mlir::MLIRContext context;
  Expected<Program> program = traceReferenceProgram(context, options.model);
  if (!program)
    return reportError(program.status().message());

  Expected<NamedTensors> inputs =
      readInputArguments(program->inputs, options.inputs);
  if (!inputs)
    return reportError(inputs.status().message());
  Trace trace;
  Expected<NamedTensors> outputs = runTracedProgram(
      *program, *inputs,
      std::filesystem::path(options.model).filename().string(),
      options.checkNan, options.profileFile.empty() ? nullptr : &trace);
  if (!outputs)
    return reportError(options.model + ": " + outputs.status().message());
  if (!options.profileFile.empty())
    if (Status written = writeProfile(trace, options.profileFile, std::cout);
        !written)
      return reportError(written.message());
  return writeOutputs(options, *outputs);
}

} // namespace kiln
