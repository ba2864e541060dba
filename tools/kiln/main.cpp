//===- main.cpp - The kiln command-line tool ------------------------------===//
//
// This file implements the entry point of `kiln`: it declares the subcommands
// and their flags with CLI11 and dispatches to the command implementations.
// Every command has --help; a bad flag or argument exits with status 1 and a
// message saying what to do.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kiln/runtime/CustomOps.h"
#include "targets/TargetRegistry.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <set>

using namespace kiln;

/// The help of --target: every registered target with its description.
static std::string targetHelp() {
  std::string help = "Code target:";
  for (const std::string &name : targetNames())
    help += " " + name + " (" + lookupTarget(name)->description().str() + ")";
  return help;
}

/// The flags of training: --train and the optimizer's.
void addTrainFlags(CLI::App *cmd, kiln::TrainFlags &t, bool optimizer) {
  cmd->add_flag("--train", t.train,
                "Training: the model's first output is a scalar loss and "
                "its float initializers are the parameters to train "
                "(docs/training.md)");
  cmd->add_option("--freeze", t.freeze,
                  "With --train: initializers matching this glob pattern "
                  "(e.g. 'encoder.*') are not trained; repeatable");
  if (!optimizer)
    return;
  cmd->add_option("--optimizer", t.optimizer,
                  "With --train: sgd, momentum or adamw (default sgd)")
      ->check(CLI::IsMember({"sgd", "momentum", "adamw"}));
  cmd->add_option("--lr", t.lr,
                  "With --train: the learning rate the package starts with "
                  "(default 0.01; kiln train --lr overrides it)");
  cmd->add_option("--momentum", t.momentum, "momentum's factor (0.9)");
  cmd->add_option("--beta1", t.beta1, "adamw's beta1 (0.9)");
  cmd->add_option("--beta2", t.beta2, "adamw's beta2 (0.999)");
  cmd->add_option("--eps", t.eps, "adamw's epsilon (1e-8)");
  cmd->add_option("--weight-decay", t.weightDecay,
                  "Decoupled (adamw) or L2 (sgd, momentum) weight decay (0)");
  cmd->add_flag("--no-recompute", t.noRecompute,
                "With --train: save every activation the backward graph "
                "reads instead of recomputing cheap ones");
  cmd->add_option("--memory-budget", t.memoryBudget,
                  "With --train: save at most this fraction (0, 1] of the "
                  "activations the no-recompute plan saves, recomputing "
                  "matmuls and convolutions too where needed, "
                  "cheapest per byte first (1: only cheap ops are "
                  "recomputed)");
  cmd->add_option("--loss-scale", t.lossScale,
                  "With --train: dynamic loss scaling (dynamic), none, or "
                  "auto (dynamic with --precision f16): the backward pass "
                  "is seeded with the scale, a step whose gradients "
                  "overflow is skipped and halves it")
      ->check(CLI::IsMember({"auto", "dynamic", "none"}));
  cmd->add_option("--loss-scale-init", t.lossScaleInit,
                  "The initial loss scale (65536)");
  cmd->add_option("--loss-scale-growth-interval", t.lossScaleGrowthInterval,
                  "Steps without an overflow after which the loss scale "
                  "doubles (2000)");
}

int main(int argc, char **argv) {
  CLI::App app{"Kiln: an ahead-of-time compiler for deep-learning models.\n"
               "Reads ONNX models, traces them into the kiln MLIR dialect and "
               "runs them on the reference runtime."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kiln 0.1.0");

  DumpOptions dump;
  CLI::App *dumpCmd = app.add_subcommand(
      "dump", "Print the model as kiln IR (with ONNX node names in locations)");
  dumpCmd->add_option("MODEL", dump.model, "ONNX model file (.onnx)")
      ->required();
  dumpCmd
      ->add_option("--stage", dump.stage,
                   "Pipeline stage to print: traced (the IR as traced from "
                   "the model, with trace-time constants folded), optimized "
                   "(after the graph passes), fused (after fusion, with a "
                   "kernel count and the arena size), lowered (after the "
                   "target's lowering: library calls with their folds, "
                   "reference and load-time steps; exactly what runs), "
                   "program (after graph-break planning: compiled graphs, "
                   "kiln.eager breaks inline, control flow); with --train: "
                   "traced, joint (forward + backward), forward, backward, "
                   "optimizer")
      ->check(
          CLI::IsMember({"traced", "optimized", "fused", "lowered", "program",
                         "joint", "forward", "backward", "optimizer"}));
  dumpCmd
      ->add_option("--target", dump.target,
                   "Target whose graph breaks the program, optimized, fused "
                   "and lowered stages plan, and whose lowering the lowered "
                   "stage shows (" +
                       kiln::targetNameList() + "; default cpu)")
      ->check(CLI::IsMember(kiln::targetNames()));
  dumpCmd->add_option("--dim", dump.dims,
                      "Size of a named dynamic dimension, NAME=SIZE "
                      "(repeatable)");
  dumpCmd
      ->add_option("--precision", dump.precision,
                   "Compute precision, as kiln compile's: f32, bf16 or f16 "
                   "(kiln-autocast after tracing)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  dumpCmd->add_option("--precision-override", dump.precisionOverrides,
                      "Replace a row of the --precision policy, OP=CLASS "
                      "(as kiln compile's); repeatable");
  dumpCmd
      ->add_option("--io-precision", dump.ioPrecision,
                   "With --precision: keep or low (as kiln compile's)")
      ->check(CLI::IsMember({"keep", "low"}));
  dumpCmd->add_option("-o,--output", dump.output,
                      "Write the IR to this file instead of stdout");
  dumpCmd->add_flag("--weights-as-parameters", dump.weightsAsParameters,
                    "Turn initializers with more than 1024 elements into "
                    "function parameters instead of embedded constants");
  dumpCmd->add_flag("--print-constants", dump.printConstants,
                    "Print every constant's values (the dump then parses "
                    "back with kiln-opt); without it, constants of more than "
                    "16 elements print as dense_resource<__elided__> with a "
                    "kiln.elided summary (count, first values, min, max, "
                    "hash)");
  dumpCmd
      ->add_option("--format", dump.format,
                   "mlir (the IR as text, default) or dot (a Graphviz "
                   "picture: ops as boxes, kernels as blue and graph breaks "
                   "as red clusters; render with `dot -Tpng`)")
      ->check(CLI::IsMember({"mlir", "dot"}));
  addTrainFlags(dumpCmd, dump.training, /*optimizer=*/true);

  RunCommandOptions run;
  CLI::App *runCmd = app.add_subcommand(
      "run", "Run a model on the reference CPU runtime, or a compiled "
             "package, and write its outputs");
  runCmd
      ->add_option("MODEL", run.model,
                   "ONNX model file (.onnx), or a package folder written by "
                   "kiln compile (runs the compiled code)")
      ->required();
  runCmd->add_option("-i,--input", run.inputs,
                     "An input as NAME=FILE (FILE is .npy or an ONNX "
                     "TensorProto .pb); repeat for each input. A bare FILE "
                     "binds the next input in model order");
  std::vector<std::string> runInputFiles;
  runCmd->add_option("INPUTS", runInputFiles,
                     "Input files after MODEL, bound to the inputs in model "
                     "order (as bare -i FILE)");
  runCmd->add_option("-o,--output-dir", run.outputDir,
                     "Folder for the outputs, one file per output named "
                     "after it (default: the current folder)");
  runCmd
      ->add_option("--output-format", run.outputFormat,
                   "npy or pb (ONNX TensorProto)")
      ->check(CLI::IsMember({"npy", "pb"}));
  runCmd->add_flag("--check-nan", run.checkNan,
                   "Stop at the first op (reference runtime) or compiled "
                   "graph whose result holds a NaN or an infinity, and name "
                   "it and its ONNX node (as PyTorch's anomaly mode)");
  CLI::Option *runProfile = runCmd->add_option(
      "--profile", run.profileFile,
      "Print what a package did (compiled-graph calls, graph "
      "breaks taken and their ops on the reference runtime, "
      "branches, loop iterations, host<->device copies); with "
      "a FILE.json, also write a Chrome/Perfetto trace of the "
      "run there: a span per compiled step, per op on the "
      "reference runtime and for the whole run (open it in "
      "ui.perfetto.dev)");
  runProfile->expected(0, 1);
  runCmd->add_option("--weights-dir", run.weightsDir,
                     "For a package compiled with --weights external: the "
                     "folder holding the weight files (default: the "
                     "package folder)");
  runCmd
      ->add_option("--device", run.device,
                   "cpu or cuda: where a package runs (default: the "
                   "package's target; a package compiled with --target "
                   "cuda runs on the GPU). Must match the package")
      ->check(CLI::IsMember({"cpu", "cuda"}));

  BenchOptions bench;
  CLI::App *benchCmd = app.add_subcommand(
      "bench", "Time a compiled package (or an ONNX model on the reference "
               "runtime, as a baseline)");
  benchCmd
      ->add_option("MODEL", bench.model,
                   "Package folder (written by kiln compile) or ONNX model")
      ->required();
  benchCmd->add_option("-i,--input", bench.inputs,
                       "An input as NAME=FILE (.npy or .pb); inputs not "
                       "given are random (see --seed)");
  benchCmd->add_option("--warmup", bench.warmup, "Untimed runs first")
      ->check(CLI::NonNegativeNumber);
  benchCmd->add_option("--iterations", bench.iterations, "Timed runs")
      ->check(CLI::PositiveNumber);
  benchCmd
      ->add_option("--threads", bench.threads,
                   "OpenMP and OpenBLAS threads (default: their defaults)")
      ->check(CLI::NonNegativeNumber);
  benchCmd->add_option("--seed", bench.seed, "Seed of the random inputs");
  benchCmd->add_option("--dim", bench.dims,
                       "A dynamic dimension's size as NAME=SIZE, for the "
                       "random inputs of an ONNX model or of a package "
                       "compiled for a range of sizes; repeat for each");
  benchCmd->add_option("--weights-dir", bench.weightsDir,
                       "For a package compiled with --weights external: the "
                       "folder holding the weight files");
  benchCmd->add_option("--profile", bench.profileFile,
                       "After the timed runs, profile one more run and "
                       "write its Chrome/Perfetto trace to this .json file "
                       "(a span per compiled step and for the run; open it "
                       "in ui.perfetto.dev)");
  benchCmd->add_flag("--check-nan", bench.checkNan,
                     "Check the first run (before the timed ones): stop at "
                     "the first op or compiled graph whose result holds a "
                     "NaN or an infinity, naming it (as kiln run "
                     "--check-nan)");
  benchCmd
      ->add_option("--device", bench.device,
                   "cpu or cuda: where a package runs (default: the "
                   "package's target). With cuda, inputs and outputs stay "
                   "on the device and each timed run waits for the GPU")
      ->check(CLI::IsMember({"cpu", "cuda"}));

  CompileCommandOptions compile;
  CLI::App *compileCmd = app.add_subcommand(
      "compile", "Compile a model into a package folder (lib<name>.so, "
                 "<name>.h, weights.bin, manifest.json, generated sources)");
  compileCmd->add_option("MODEL", compile.model, "ONNX model file (.onnx)")
      ->required();
  compileCmd
      ->add_option("-o,--output", compile.outputDir,
                   "Package folder to write (replaced only after a "
                   "successful compile)")
      ->required();
  compileCmd->add_option(
      "--name", compile.name,
      "The package's name, a C identifier: the library is lib<name>.so, the "
      "header <name>.h and every exported symbol starts with <name>_ (so "
      "several packages link into one program); default: the model file's "
      "name");
  compileCmd->add_option("--target", compile.target, targetHelp())
      ->check(CLI::IsMember(kiln::targetNames()));
  compileCmd
      ->add_option("--weights", compile.weights,
                   "embed: every weight goes into weights.bin; external: "
                   "initializers stored as ONNX external data stay in their "
                   "file, which the package references (bound at load "
                   "time)")
      ->check(CLI::IsMember({"embed", "external"}));
  compileCmd->add_option("--dim", compile.dims,
                         "Size of a named dynamic dimension, NAME=SIZE, or "
                         "the range of sizes the package serves, NAME=LO..HI "
                         "(repeatable; without it: 1..64, "
                         "docs/dynamic-shapes.md)");
  compileCmd->add_option(
      "--input-value", compile.inputValues,
      "Bind an input to a value at compile time, NAME=FILE (.npy or .pb): "
      "it becomes a constant of the package (for inputs that are shapes, "
      "scales or axes); repeatable");
  compileCmd
      ->add_option("--precision", compile.precision,
                   "Compute precision: f32 (as the model is written), or "
                   "bf16 / f16 (mixed: matmuls and convolutions in it with "
                   "f32 accumulation, reductions, norms and softmax in f32; "
                   "the inputs and outputs keep their types)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  compileCmd->add_option("--precision-override", compile.precisionOverrides,
                         "Replace a row of the --precision policy, OP=low, "
                         "OP=f32 or OP=follow (OP a kiln op name, e.g. "
                         "softmax); repeatable");
  compileCmd
      ->add_option("--io-precision", compile.ioPrecision,
                   "With --precision bf16|f16: keep (the package's inputs "
                   "and outputs keep the model's types) or low (its f32 "
                   "inputs and outputs become bf16/f16 too)")
      ->check(CLI::IsMember({"keep", "low"}));
  compileCmd->add_option("--cxx", compile.cxx,
                         "Host C++ compiler (default: $KILN_CXX, else the "
                         "compiler Kiln was built with)");
  compileCmd
      ->add_option("--cpu-isa", compile.cpuIsa,
                   "x86-64 level of the CPU kernels: host (this machine's: "
                   "AVX-512 where it has it), x86-64-v2, x86-64-v3 or "
                   "x86-64-v4; the package refuses to load on a CPU without it")
      ->check(CLI::IsMember({"host", "x86-64-v2", "x86-64-v3", "x86-64-v4"}));
  compileCmd->add_flag("--fullgraph", compile.fullgraph,
                       "Fail (exit 1) when the model does not compile into "
                       "one graph, listing every graph break");
  compileCmd->add_option("--dump-ir", compile.dumpIrDir,
                         "Write the IR after each stage into this folder, one "
                         "file per stage and graph");
  compileCmd->add_flag("--progress", compile.progress,
                       "Show the progress line (the stage and the seconds "
                       "so far) from the start, also when stderr is not a "
                       "terminal (then one line per stage); without it, it "
                       "shows on a terminal once a compile takes more than "
                       "a second");
  compileCmd->add_flag("--print-constants", compile.printConstants,
                       "With --dump-ir: print every constant's values "
                       "(elided to a summary when larger than 16 elements "
                       "otherwise)");
  addTrainFlags(compileCmd, compile.training, /*optimizer=*/true);

  ExplainOptions explain;
  CLI::App *explainCmd = app.add_subcommand(
      "explain", "Show where and why a model does not compile into one graph "
                 "(graph breaks, with a hint each) and the ops of each graph");
  explainCmd->add_option("MODEL", explain.model, "ONNX model file (.onnx)")
      ->required();
  explainCmd->add_option("--target", explain.target, targetHelp())
      ->check(CLI::IsMember(kiln::targetNames()));
  explainCmd->add_option("--dim", explain.dims,
                         "Size of a named dynamic dimension, NAME=SIZE "
                         "(repeatable)");
  explainCmd->add_option("--input-value", explain.inputValues,
                         "Bind an input to a value, NAME=FILE (as for "
                         "compile)");
  addTrainFlags(explainCmd, explain.training, /*optimizer=*/false);

  kiln::TrainCommandOptions train;
  CLI::App *trainCmd = app.add_subcommand(
      "train", "Run train steps of a training package (kiln compile "
               "--train) and print the loss of each");
  trainCmd->add_option("PACKAGE", train.package, "Training package folder")
      ->required();
  trainCmd->add_option("-i,--input", train.inputs,
                       "An input as NAME=FILE (.npy or .pb); the same batch "
                       "every step; repeat for each input");
  trainCmd->add_option("--steps", train.steps, "Train steps to run (1)")
      ->check(CLI::PositiveNumber);
  trainCmd->add_option("--lr", train.lr,
                       "Learning rate (default: the package's)");
  trainCmd->add_option("--load-weights", train.loadWeights,
                       "Start from these weights (and optimizer state): a "
                       "safetensors file from --save-weights");
  trainCmd->add_option("--save-weights", train.saveWeights,
                       "After the steps, write the parameters, optimizer "
                       "state and step count to this safetensors file");
  trainCmd->add_option("--losses", train.losses,
                       "Write the losses as a JSON list to this file");
  trainCmd->add_option("--gradients", train.gradientsDir,
                       "Before the steps, write the gradients of the batch "
                       "into this folder, one PARAMETER.npy each");

  // Custom-op libraries (kiln/custom_op.h, docs/custom-ops.md): loaded
  // before the command runs, for the commands that trace or run a model.
  std::vector<std::string> customOps;
  for (CLI::App *cmd : {dumpCmd, runCmd, compileCmd, explainCmd})
    cmd->add_option("--custom-ops", customOps,
                    "A custom-op library (a shared object exporting "
                    "kiln_custom_op_library(), kiln/custom_op.h) whose ops "
                    "the model uses; repeatable (docs/custom-ops.md)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << "kiln: error: " << e.what() << "\n"
              << "Run 'kiln --help' or 'kiln <command> --help' for usage.\n";
    return 1;
  }

  // KILN_LOGS applies to every command (a misspelt name is an error
  // everywhere); the commands that compile print what they produce.
  std::set<std::string> logs;
  if (Status parsed = readKilnLogs(logs); !parsed)
    return reportError(parsed.message());
  dump.logs = compile.logs = explain.logs = logs;
  for (const std::string &lib : customOps)
    if (Status loaded = kiln::loadCustomOpLibrary(lib); !loaded)
      return reportError(loaded.message());

  if (*dumpCmd)
    return runDumpCommand(dump);
  if (*compileCmd)
    return runCompileCommand(compile);
  if (*explainCmd)
    return runExplainCommand(explain);
  if (*runCmd) {
    run.profile = runProfile->count() > 0;
    run.inputs.insert(run.inputs.end(), runInputFiles.begin(),
                      runInputFiles.end());
    return runRunCommand(run);
  }
  if (*benchCmd)
    return runBenchCommand(bench);
  if (*trainCmd)
    return runTrainCommand(train);
  return 1;
}
