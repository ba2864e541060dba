//===- Commands.h - The subcommands of the kiln tool -----------*- C++ -*-===//
//
// This file declares the options and entry points of each `kiln` subcommand.
// Each returns the process exit code: 0 on success, 1 on a user error (after
// printing a message that names the file, node or flag and what to do).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_COMMANDS_H
#define KILN_TOOLS_COMMANDS_H

#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/SymbolicDim.h"
#include "kiln/runtime/Tensor.h"
#include "kiln/runtime/Trace.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/TrainingPipeline.h"
#include "compiler/onnx/OnnxTracer.h"

#include "mlir/IR/Diagnostics.h"

namespace kiln {

/// The training flags of `kiln compile --train`, `kiln dump --train` and
/// `kiln explain --train` (docs/training.md).
struct TrainFlags {
  bool train = false;
  std::string optimizer = "sgd";
  double lr = 0.01;
  double momentum = 0.9;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0.0;
  /// Glob patterns (fnmatch) of initializers that are not trained.
  std::vector<std::string> freeze;
  bool noRecompute = false;
  /// --memory-budget F: saved activations at most F (0, 1] of the
  /// no-recompute plan's.
  double memoryBudget = 1.0;
  /// --loss-scale auto|dynamic|none (auto: dynamic with --precision f16),
  /// --loss-scale-init S0, --loss-scale-growth-interval N.
  std::string lossScale = "auto";
  double lossScaleInit = 65536.0;
  int64_t lossScaleGrowthInterval = 2000;
};

/// `kiln dump MODEL [--stage traced|optimized|fused] [--dim NAME=SIZE]...
/// [-o FILE]`.
struct DumpOptions {
  std::string model;
  std::string stage = "traced";
  std::string output;
  bool weightsAsParameters = false;
  std::vector<std::string> dims;
  std::string target = "cpu"; ///< for --stage program.
  /// --train: the stages are joint, forward, backward, optimizer.
  TrainFlags training;
  /// --precision (f32: none) and --precision-override NAME=CLASS flags.
  std::string precision = "f32";
  std::vector<std::string> precisionOverrides;
  /// --io-precision keep|low.
  std::string ioPrecision = "keep";
  /// --print-constants: every constant's values (the dump round-trips
  /// through kiln-opt); without it, constants of more than 16 elements are
  /// elided to a summary.
  bool printConstants = false;
  /// --format mlir|dot: the IR as text, or a Graphviz picture of it.
  std::string format = "mlir";
  /// KILN_LOGS (readKilnLogs): graph_breaks and fusion apply.
  std::set<std::string> logs;
};
int runDumpCommand(const DumpOptions &options);

/// `kiln run MODEL --input NAME=FILE ... [--output-dir DIR]
/// [--device cpu|cuda]`. (Not kiln::RunOptions, which is Model::run's.)
struct RunCommandOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string outputDir = ".";
  std::string outputFormat = "npy";
  /// For a package: where external weights are looked up first.
  std::string weightsDir;
  /// "cpu", "cuda", or empty: the package's own target.
  std::string device;
  /// --profile [FILE.json]: print what a program package did (graph calls,
  /// eager ops, copies); with a file (profileFile), also write a
  /// Chrome/Perfetto trace of the run (RunOptions::trace) there.
  bool profile = false;
  std::string profileFile;
  /// --check-nan: stop at the first result holding a NaN or an infinity,
  /// naming its node (RunOptions::checkNan).
  bool checkNan = false;
};
int runRunCommand(const RunCommandOptions &options);

/// `kiln bench MODEL|DIR [--input NAME=FILE]... [--warmup N]
/// [--iterations N] [--threads N] [--seed S] [--dim NAME=SIZE]...
/// [--weights-dir DIR] [--device cpu|cuda]`.
struct BenchOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> dims; ///< ONNX models only.
  int warmup = 10;
  int iterations = 100;
  int threads = 0; ///< 0: the libraries' defaults.
  uint64_t seed = 0;
  std::string weightsDir;
  /// "cpu", "cuda", or empty: the package's own target.
  std::string device;
  /// --profile FILE.json: a trace of one more run after the timed ones.
  std::string profileFile;
  /// --check-nan: the first run checks every result (RunOptions::checkNan).
  bool checkNan = false;
};
int runBenchCommand(const BenchOptions &options);

/// `kiln compile MODEL -o DIR [--target cpu|cuda] [--weights embed|external]
/// [--dim NAME=SIZE]... [--input-value NAME=FILE]... [--cxx PATH]
/// [--cpu-isa LEVEL]`.
struct CompileCommandOptions {
  std::string model;
  std::string outputDir;
  /// --name: the package's name (lib<name>.so, <name>.h, <name>_run).
  std::string name;
  std::string target = "cpu";
  std::string weights = "embed";
  std::vector<std::string> dims;
  std::vector<std::string> inputValues;
  std::string cxx;
  std::string cpuIsa = "host";
  bool fullgraph = false;
  std::string dumpIrDir;
  /// --print-constants: --dump-ir prints every constant's values.
  bool printConstants = false;
  TrainFlags training;
  /// --precision (f32: none) and --precision-override NAME=CLASS flags.
  std::string precision = "f32";
  std::vector<std::string> precisionOverrides;
  /// --io-precision keep|low.
  std::string ioPrecision = "keep";
  /// KILN_LOGS (readKilnLogs): every artifact applies.
  std::set<std::string> logs;
  /// --progress: the progress line always, one line per stage (otherwise
  /// only on a terminal, redrawn in place, from a second in).
  bool progress = false;
};
int runCompileCommand(const CompileCommandOptions &options);

struct ExplainOptions {
  std::string model;
  std::string target = "cpu";
  std::vector<std::string> dims;
  std::vector<std::string> inputValues;
  /// --train: what blocks training the model instead of graph breaks.
  TrainFlags training;
  /// KILN_LOGS (readKilnLogs): graph_breaks and fusion apply.
  std::set<std::string> logs;
};
int runExplainCommand(const ExplainOptions &options);

/// `kiln train PACKAGE --input NAME=FILE... [--steps N] [--lr LR]
/// [--load-weights FILE] [--save-weights FILE] [--losses FILE]
/// [--gradients DIR]`.
struct TrainCommandOptions {
  std::string package;
  std::vector<std::string> inputs;
  int steps = 1;
  std::optional<double> lr;
  std::string loadWeights, saveWeights, losses;
  /// Before the steps: the gradients of the batch, one DIR/<param>.npy each.
  std::string gradientsDir;
};
int runTrainCommand(const TrainCommandOptions &options);

/// Sets `trace` up for training with `flags` (float initializers become
/// trainable parameters unless frozen; their data goes to
/// `*initialValues`).
void setUpTrainingTrace(const TrainFlags &flags, TraceOptions &trace,
                        std::map<std::string, Tensor> *initialValues);
/// The pipeline's training options from the flags; errors name the flag.
Status trainOptionsOf(const TrainFlags &flags, TrainOptions &options,
                      const std::string &precision = "f32");

/// Parses `--input-value NAME=FILE` flags into values of `trace`.
Status parseInputValueFlags(const std::vector<std::string> &flags,
                            std::map<std::string, Tensor> &values);

/// Parses `--dim NAME=SIZE` flags into `sizes` and, where `ranges` is
/// given (kiln compile), `--dim NAME=LO..HI` into `ranges` (LO == HI is a
/// size); errors name the flag.
Status parseDimFlags(const std::vector<std::string> &flags,
                     std::map<std::string, int64_t> &sizes,
                     std::map<std::string, SizeSymbol> *ranges = nullptr);

/// Parses `--precision P` and `--precision-override NAME=CLASS` flags into
/// `options` (kiln-autocast's); `enabled` is false for P = f32. Errors name
/// the flag.
Status parsePrecisionFlags(const std::string &precision,
                           const std::vector<std::string> &overrides,
                           const std::string &ioPrecision,
                           AutocastOptions &options, bool &enabled);

/// A diagnostic as one message, prefixed with its ONNX node when known.
std::string formatDiagnostic(const mlir::Diagnostic &diag);

/// While alive, prints the MLIR diagnostics of `context` as "kiln: error:
/// node '...': message" (and "kiln: warning: ...") lines, and counts the
/// errors, so a command can tell whether a failure was already explained.
class DiagnosticReporter : public mlir::ScopedDiagnosticHandler {
public:
  explicit DiagnosticReporter(mlir::MLIRContext *context);
  int errors() const { return errors_; }

private:
  int errors_ = 0;
};

/// Checks `--device` against a loaded package (an empty flag accepts the
/// package's own target); errors say what to do.
Status checkDeviceFlag(const std::string &device, const std::string &package,
                       bool cudaPackage);

/// Checks a --profile FILE: it must end in .json (so that an input file
/// given after the flag is not taken for it and overwritten).
Status checkProfileFile(const std::string &flag, const std::string &path);
/// Writes `trace` as Chrome trace JSON to `path` and says so on `log`.
Status writeProfile(const Trace &trace, const std::string &path,
                    std::ostream &log);
/// runProgram on the reference runtime with a span for the whole run
/// named `name` when `trace` is given.
Expected<NamedTensors> runTracedProgram(const Program &program,
                                        const NamedTensors &inputs,
                                        const std::string &name, bool checkNan,
                                        Trace *trace);

/// Prints "kiln: error: <message>" to stderr and returns 1 (ending a
/// progress line first).
int reportError(const std::string &message);

/// The artifacts KILN_LOGS names (a comma list, like TORCH_LOGS; unset or
/// empty: none): graph_breaks, fusion, output_code. Every command reads it
/// (main.cpp), so a misspelt name is an error everywhere; the commands that
/// compile print the artifacts they produce. An unknown name is an error
/// naming KILN_LOGS, the name and the known names.
Status readKilnLogs(std::set<std::string> &logs);
/// The same for a given value (tests, and readKilnLogs).
Status parseKilnLogs(const std::string &value, std::set<std::string> &logs);
/// Plans `module`'s graph breaks for `target` and, when `logs` holds
/// graph_breaks, prints them (dump, explain). Diagnostics on failure.
mlir::LogicalResult planAndLogGraphBreaks(mlir::ModuleOp module,
                                          const std::string &target,
                                          const std::set<std::string> &logs);

} // namespace kiln

#endif // KILN_TOOLS_COMMANDS_H
