//===- CompileCommand.cpp - `kiln compile`: a model to a package ----------===//
//
// This file implements `kiln compile MODEL -o DIR`: parse the --dim flags,
// trace the model with those sizes (static shapes), run the compile pipeline
// (compiler/Pipeline.h) and report the package written. Diagnostics from the
// passes and the packager are printed as "kiln: error: ..." naming the ONNX
// node where there is one; the exit status is 1 on any error, and a failed
// compile leaves no package behind (an existing one stays as it was).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ProgressLine.h"
#include "TensorFiles.h"

#include "codegen/MemoryPlanner.h"
#include "codegen/PackageNames.h"
#include "compiler/Pipeline.h"
#include "compiler/SizeRangeCompile.h"
#include "compiler/onnx/OnnxTracer.h"
#include "kiln/runtime/Counted.h"
#include "kiln/runtime/PackageManifest.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

namespace kiln {

Status parseDimFlags(const std::vector<std::string> &flags,
                     std::map<std::string, int64_t> &sizes,
                     std::map<std::string, SizeSymbol> *ranges) {
  // A positive integer of at most 18 digits, else nullopt.
  auto number = [](const std::string &text) -> std::optional<int64_t> {
    if (text.empty() || text.size() > 18 ||
        text.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    int64_t v = std::stoll(text);
    return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
  };
  for (const std::string &flag : flags) {
    size_t eq = flag.find('=');
    std::string name = eq == std::string::npos ? flag : flag.substr(0, eq);
    std::string size = eq == std::string::npos ? "" : flag.substr(eq + 1);
    size_t dots = size.find("..");
    if (dots != std::string::npos) {
      std::optional<int64_t> lo = number(size.substr(0, dots));
      std::optional<int64_t> hi = number(size.substr(dots + 2));
      if (name.empty() || !lo || !hi || *lo > *hi)
        return Status::error(strCat("--dim '", flag,
                                    "': expected NAME=LO..HI with positive "
                                    "integers LO <= HI, e.g. --dim "
                                    "batch=1..64"));
      if (!ranges)
        return Status::error(strCat("--dim '", flag,
                                    "': a range of sizes is for kiln "
                                    "compile; give one size here"));
      if (sizes.count(name) || ranges->count(name))
        return Status::error(strCat("--dim ", name, " is given twice"));
      if (*lo == *hi)
        sizes[name] = *lo;
      else
        (*ranges)[name] = SizeSymbol{name, *lo, *hi};
      continue;
    }
    std::optional<int64_t> value = number(size);
    if (name.empty() || !value)
      return Status::error(strCat("--dim '", flag,
                                  "': expected NAME=SIZE with a positive "
                                  "integer SIZE, e.g. --dim batch=4",
                                  ranges ? " (or a range NAME=LO..HI)" : ""));
    if ((sizes.count(name) && sizes[name] != *value) ||
        (ranges && ranges->count(name)))
      return Status::error(strCat("--dim ", name, " is given twice"));
    sizes[name] = *value;
  }
  return Status::ok();
}

Status parsePrecisionFlags(const std::string &precision,
                           const std::vector<std::string> &overrides,
                           const std::string &ioPrecision,
                           AutocastOptions &options, bool &enabled) {
  enabled = precision != "f32";
  if (precision != "f32" && precision != "bf16" && precision != "f16")
    return Status::error(
        strCat("--precision '", precision, "': expected f32, bf16 or f16"));
  if (!enabled && !overrides.empty())
    return Status::error("--precision-override needs --precision bf16 or f16");
  if (ioPrecision != "keep" && ioPrecision != "low")
    return Status::error(
        strCat("--io-precision '", ioPrecision, "': expected keep or low"));
  if (!enabled && ioPrecision == "low")
    return Status::error("--io-precision low needs --precision bf16 or f16");
  options.precision = precision;
  options.lowInterface = ioPrecision == "low";
  for (const std::string &flag : overrides) {
    size_t eq = flag.find('=');
    std::string name = eq == std::string::npos ? "" : flag.substr(0, eq);
    std::optional<PrecisionClass> cls =
        eq == std::string::npos ? std::nullopt
                                : parsePrecisionClass(flag.substr(eq + 1));
    if (name.empty() || !cls)
      return Status::error(
          strCat("--precision-override '", flag,
                 "': expected OP=low|f32|follow with OP a kiln op name, e.g. "
                 "--precision-override softmax=low"));
    if (llvm::StringRef(name).starts_with("kiln."))
      name = name.substr(5);
    options.overrides[name] = *cls;
  }
  return Status::ok();
}

std::string formatDiagnostic(const mlir::Diagnostic &diag) {
  std::string message = diag.str();
  for (const mlir::Diagnostic &note : diag.getNotes())
    message += "\n  note: " + note.str();
  // Ops carry fused<"OnnxOp">["node"] locations; arguments a plain name.
  if (!mlir::isa<mlir::FusedLoc>(diag.getLocation()))
    return message;
  std::vector<std::string> nodes = sourceNodeNames(diag.getLocation());
  if (nodes.empty())
    return message;
  return "node '" + nodes.front() + "': " + message;
}

Status parseInputValueFlags(const std::vector<std::string> &flags,
                            std::map<std::string, Tensor> &values) {
  for (const std::string &flag : flags) {
    size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size())
      return Status::error("--input-value '" + flag +
                           "': expected NAME=FILE (a .npy or .pb file)");
    Expected<Tensor> value = readTensorFile(flag.substr(eq + 1));
    if (!value)
      return Status::error("--input-value " + flag.substr(0, eq) + ": " +
                           value.status().message());
    values[flag.substr(0, eq)] = value.take();
  }
  return Status::ok();
}

DiagnosticReporter::DiagnosticReporter(mlir::MLIRContext *context)
    : mlir::ScopedDiagnosticHandler(context, [this](mlir::Diagnostic &d) {
        if (d.getSeverity() == mlir::DiagnosticSeverity::Error) {
          ++errors_;
          reportError(formatDiagnostic(d));
        } else if (d.getSeverity() == mlir::DiagnosticSeverity::Warning) {
          endProgressLine();
          std::cerr << "kiln: warning: " << formatDiagnostic(d) << "\n";
        }
        return mlir::success();
      }) {}

static int reportPackage(const CompileOptions &options,
                         const std::vector<SizeSymbol> &symbols);

/// The one-line report of a training package just written.
static int reportTrainingPackage(const CompileOptions &options) {
  Expected<PackageManifest> manifest =
      readManifest(options.outputDir + "/manifest.json");
  if (!manifest || !manifest->training)
    return reportError(
        "the training package '" + options.outputDir +
        "' was written but its manifest does not read back: " +
        (manifest ? "no training section" : manifest.status().message()));
  const ManifestTraining &t = *manifest->training;
  int64_t paramBytes = 0;
  for (const ManifestValue &p : t.parameters)
    paramBytes += static_cast<int64_t>(p.bytes.value_or(0));
  std::cout << "kiln: compiled '" << options.modelPath
            << "' for training into '" << options.outputDir
            << "': " << t.parameters.size() << " parameters (" << paramBytes
            << " bytes), optimizer " << t.optimizer.kind << "; saved "
            << "activations " << t.saved.size() << " values, " << t.savedBytes
            << " bytes (of " << t.savedBytesNoRecompute
            << " without recomputation); " << t.recomputedOps
            << " ops recomputed in backward (~" << t.recomputeFlops
            << " FLOP a step)";
  if (manifest->counts)
    std::cout << "; " << manifest->counts->fused << " fused kernels, "
              << manifest->counts->library << " library calls, "
              << manifest->counts->fallback << " fallback ops";
  std::cout << "\n";
  return 0;
}

int runCompileCommand(const CompileCommandOptions &flags) {
  CompileOptions options;
  options.modelPath = flags.model;
  options.outputDir = flags.outputDir;
  options.packageName = flags.name;
  if (!flags.name.empty())
    if (std::optional<std::string> why = invalidPackageName(flags.name))
      return reportError("--name '" + flags.name +
                         "' cannot name a package: " + *why +
                         "; give a C identifier such as my_model (it names "
                         "lib<name>.so, <name>.h and every exported symbol)");
  options.target = flags.target;
  options.weights = flags.weights;
  options.cxx = flags.cxx;
  options.cpuIsa = flags.cpuIsa;
  options.fullgraph = flags.fullgraph;
  options.dumpIrDir = flags.dumpIrDir;
  options.printConstants = flags.printConstants;
  Status dims = parseDimFlags(flags.dims, options.dimSizes, &options.dimRanges);
  if (!dims)
    return reportError(dims.message());
  if (Status precision = parsePrecisionFlags(
          flags.precision, flags.precisionOverrides, flags.ioPrecision,
          options.autocast, options.autocastEnabled);
      !precision)
    return reportError(precision.message());
  options.logs = flags.logs;

  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  DiagnosticReporter diagnostics(&context);

  // The progress line: on a terminal after a second, always with
  // --progress (ProgressLine.h).
  ProgressLine progress(ProgressLine::modeFor(flags.progress), flags.model,
                        flags.progress ? std::chrono::milliseconds(0)
                                       : std::chrono::milliseconds(1000));
  options.progress = progress.hooks();
  progress.stage("", "tracing");
  auto start = std::chrono::steady_clock::now();
  TraceOptions trace;
  trace.dimSizes = options.dimSizes;
  // External weights: initializers stored as ONNX external data stay in
  // their file; the package references them and the loader binds them.
  trace.externalDataAsParameters = options.weights == "external";
  if (Status values =
          parseInputValueFlags(flags.inputValues, trace.inputValues);
      !values)
    return reportError(values.message());
  const TrainFlags &training = flags.training;
  TrainOptions train;
  std::map<std::string, Tensor> initialValues;
  if (training.train) {
    if (Status ok = trainOptionsOf(training, train, flags.precision); !ok)
      return reportError(ok.message());
    if (!options.dimRanges.empty())
      return reportError("--dim NAME=LO..HI: training packages are compiled "
                         "for fixed sizes; give --dim NAME=SIZE");
    if (options.weights != "embed")
      return reportError("--train: --weights external is not supported; "
                         "the initial parameters go to "
                         "weights.safetensors");
    setUpTrainingTrace(training, trace, &initialValues);
  }
  auto module = traceOnnxFile(context, options.modelPath, trace);
  if (!module)
    return reportError(module.status().message());
  options.traceSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  if (training.train) {
    // Mixed precision before autodiff: the parameters stay f32 (the master
    // weights), the forward computes on their bf16/f16 casts, and the
    // casts' gradients bring the parameters' gradients back to f32.
    if (options.autocastEnabled &&
        mlir::failed(applyAutocast(**module, options.autocast)))
      return 1;
    progress.stage("", "training graphs");
    if (mlir::failed(
            runTrainingPipeline(**module, options, train, initialValues))) {
      if (diagnostics.errors() == 0)
        reportError("compiling '" + options.modelPath +
                    "' for training failed");
      return 1;
    }
    progress.finish();
    return reportTrainingPackage(options);
  }
  // Named dynamic dims without a size: one package for their ranges when
  // the model compiles that way (compiler/SizeRangeCompile.h), else the
  // eager plan of dynamic dims, with a warning saying why.
  mlir::FailureOr<std::vector<SizeSymbol>> symbols =
      compileModel(context, **module, options, trace);
  if (mlir::failed(symbols)) {
    if (diagnostics.errors() == 0)
      reportError("compiling '" + options.modelPath + "' failed");
    return 1;
  }
  progress.finish();
  return reportPackage(options, *symbols);
}

/// The one-line report of a package just written, from its manifest.
static int reportPackage(const CompileOptions &options,
                         const std::vector<SizeSymbol> &symbols) {
  Expected<PackageManifest> manifest =
      readManifest(options.outputDir + "/manifest.json");
  if (manifest && manifest->counts) {
    const ManifestCounts &c = *manifest->counts;
    std::cout << "kiln: compiled '" << options.modelPath << "' into '"
              << options.outputDir << "': ";
    if (manifest->kind == PackageKind::Program)
      std::cout << counted(c.graphs.value_or(0), "graph", "graphs") << ", "
                << counted(c.graphBreaks.value_or(0), "graph break",
                           "graph breaks")
                << " (`kiln explain` says why), ";
    std::cout << counted(c.fused, "fused kernel", "fused kernels") << ", "
              << counted(c.library, "library call", "library calls") << ", "
              << counted(c.fallback, "fallback op", "fallback ops")
              << "; arena " << manifest->memoryPlan.arenaBytes << " bytes";
    for (const SizeSymbol &s : symbols)
      std::cout << (&s == &symbols.front() ? "; sizes " : ", ") << s.name
                << " in " << s.min << ".." << s.max;
    if (!symbols.empty())
      std::cout << " (planned for the maximum)";
    std::cout << "\n";
  }
  return 0;
}

} // namespace kiln
