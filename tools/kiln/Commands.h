//===- Commands.h - The subcommands of the kiln tool -----------*- C++ -*-===//
//
// This file declares the options and entry points of each `kiln` subcommand.
// Each returns the process exit code: 0 on success, 1 on a user error (after
// printing a message that names the file, node or flag and what to do).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_COMMANDS_H
#define KILN_TOOLS_COMMANDS_H

#include <string>
#include <vector>

namespace kiln {

/// `kiln dump MODEL [--stage traced] [-o FILE]`.
struct DumpOptions {
  std::string model;
  std::string stage = "traced";
  std::string output;
  bool weightsAsParameters = false;
};
int runDumpCommand(const DumpOptions &options);

/// `kiln run MODEL --input NAME=FILE ... [--output-dir DIR]`.
struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string outputDir = ".";
  std::string outputFormat = "npy";
};
int runRunCommand(const RunOptions &options);

/// Prints "kiln: error: <message>" to stderr and returns 1.
int reportError(const std::string &message);

} // namespace kiln

#endif // KILN_TOOLS_COMMANDS_H
