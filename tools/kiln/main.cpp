//===- main.cpp - The kiln command-line tool ------------------------------===//
//
// This file implements the entry point of `kiln`: it declares the subcommands
// and their flags with CLI11 and dispatches to the command implementations.
// Every command has --help; a bad flag or argument exits with status 1 and a
// message saying what to do.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include <CLI/CLI.hpp>

#include <iostream>

using namespace kiln;

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
                   "the model, with trace-time constants folded)")
      ->check(CLI::IsMember({"traced"}));
  dumpCmd->add_option("-o,--output", dump.output,
                      "Write the IR to this file instead of stdout");
  dumpCmd->add_flag("--weights-as-parameters", dump.weightsAsParameters,
                    "Turn initializers with more than 1024 elements into "
                    "function parameters instead of embedded constants");

  RunOptions run;
  CLI::App *runCmd = app.add_subcommand(
      "run", "Run a model on the reference CPU runtime and write its outputs");
  runCmd->add_option("MODEL", run.model, "ONNX model file (.onnx)")->required();
  runCmd->add_option("-i,--input", run.inputs,
                     "An input as NAME=FILE (FILE is .npy or an ONNX "
                     "TensorProto .pb); repeat for each input. A bare FILE "
                     "binds the next input in model order");
  runCmd->add_option("-o,--output-dir", run.outputDir,
                     "Folder for the outputs, one file per output named "
                     "after it (default: the current folder)");
  runCmd
      ->add_option("--output-format", run.outputFormat,
                   "npy or pb (ONNX TensorProto)")
      ->check(CLI::IsMember({"npy", "pb"}));

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

  if (*dumpCmd)
    return runDumpCommand(dump);
  if (*runCmd)
    return runRunCommand(run);
  return 1;
}
