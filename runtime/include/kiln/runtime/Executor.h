//===- Executor.h - The reference executor of a Program --------*- C++ -*-===//
//
// This file declares the reference executor: it checks the given inputs
// against the Program's signature (names, dtypes, static dimensions, named
// dynamic dimensions agreeing), runs every node through the Dispatcher in
// order on the CPU, releases each value after its last use, and returns the
// outputs. It is the oracle every compiled path is checked against.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXECUTOR_H
#define KILN_RUNTIME_EXECUTOR_H

#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// Runs `program` with `inputs` (by name; weights by name too) and returns
/// the outputs in signature order.
Expected<NamedTensors> runProgram(const Program &program,
                                  const NamedTensors &inputs,
                                  const NamedTensors &weights = {});

} // namespace kiln

#endif // KILN_RUNTIME_EXECUTOR_H
