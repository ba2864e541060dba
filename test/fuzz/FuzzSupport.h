//===- FuzzSupport.h - Shared pieces of the fuzz harnesses ------*- C++ -*-===//
//
// This file declares what the libFuzzer harnesses of test/fuzz share: a
// scratch file to hand bytes to readers that take a path (the ONNX tracer,
// the program reader), and the check that an error message is a message
// (not empty). Each harness is one LLVMFuzzerTestOneInput; built with
// -DKILN_FUZZ=ON (clang, -fsanitize=fuzzer,address,undefined) it is a
// fuzzer, otherwise StandaloneMain.cpp turns it into a replay tool that
// runs each file given on the command line once (what CI does with the
// corpus and the regression files).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_FUZZ_FUZZSUPPORT_H
#define KILN_TEST_FUZZ_FUZZSUPPORT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln {
namespace fuzz {

/// A file of this process's own under $TMPDIR (or /tmp), rewritten with
/// each input; `name` is its base name (e.g. "model.onnx").
const std::string &scratchPath(const std::string &folder,
                               const std::string &name);

/// Writes `size` bytes to `path`; aborts when it cannot (a harness bug, not
/// a finding).
void writeFile(const std::string &path, const uint8_t *data, size_t size);

/// Every rejected input must come with a message: an empty one is a bug.
inline void checkMessage(const std::string &message) {
  if (message.empty()) {
    std::fprintf(stderr, "kiln fuzz: an error without a message\n");
    std::abort();
  }
}

} // namespace fuzz
} // namespace kiln

#endif // KILN_TEST_FUZZ_FUZZSUPPORT_H
