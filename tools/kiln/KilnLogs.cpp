//===- KilnLogs.cpp - The KILN_LOGS environment variable ------------------===//
//
// This file implements the one reading of KILN_LOGS for every `kiln`
// command: a comma list of artifact names, like TORCH_LOGS, checked against
// the known names so that a misspelt one is an error naming the variable
// and the known names, whatever the command. main.cpp reads it before
// dispatching; compile, explain and dump print what they produce
// (compiler/Pipeline.h: logGraphBreaks, logFusedGraphs; the compile
// pipeline itself for output_code).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "compiler/Pipeline.h"

#include <cstdlib>
#include <sstream>

namespace kiln {

/// The artifacts, in the order the error message lists them.
static const char *const kKnownArtifacts[] = {"graph_breaks", "fusion",
                                              "output_code"};

Status parseKilnLogs(const std::string &value, std::set<std::string> &logs) {
  std::stringstream list(value);
  std::string name;
  while (std::getline(list, name, ',')) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty())
      continue;
    bool known = false;
    for (const char *k : kKnownArtifacts)
      known |= name == k;
    if (!known) {
      std::string names;
      for (const char *k : kKnownArtifacts)
        names += std::string(names.empty() ? "" : ", ") + k;
      return Status::error("KILN_LOGS: unknown artifact '" + name +
                           "'; known: " + names);
    }
    logs.insert(name);
  }
  return Status::ok();
}

Status readKilnLogs(std::set<std::string> &logs) {
  const char *value = std::getenv("KILN_LOGS");
  return value ? parseKilnLogs(value, logs) : Status::ok();
}

mlir::LogicalResult planAndLogGraphBreaks(mlir::ModuleOp module,
                                          const std::string &target,
                                          const std::set<std::string> &logs) {
  if (mlir::failed(planGraphBreaks(module, target)))
    return mlir::failure();
  if (logs.count("graph_breaks"))
    logGraphBreaks(module, target);
  return mlir::success();
}

} // namespace kiln
