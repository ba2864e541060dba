//===- ConcurrentRunner.h - kiln-runner's concurrency check -----*- C++ -*-===//
//
// This file declares runConcurrently, what kiln-runner --threads does: one
// loaded model run from several threads at once, every output compared bit
// for bit with a single-threaded run (ConcurrentRunner.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUNNER_CONCURRENTRUNNER_H
#define KILN_TOOLS_KILNRUNNER_CONCURRENTRUNNER_H

#include "kiln/runtime/Model.h"

#include <string>

namespace kiln {

/// Runs `model` on `inputs` from `threads` threads, `runs` times each, all
/// at once; every run's outputs must be bit-identical to `reference` (the
/// outputs of one run before). Prints one JSON line (threads, runs, whether
/// all were identical, the median wall-clock ms of one run); returns the
/// exit status: 0, or 4 when an output differed or a run failed.
int runConcurrently(Model &model, const std::string &dir,
                    const NamedTensors &inputs, const NamedTensors &reference,
                    int threads, int runs);

} // namespace kiln

#endif // KILN_TOOLS_KILNRUNNER_CONCURRENTRUNNER_H
