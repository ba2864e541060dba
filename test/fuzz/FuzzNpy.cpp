//===- FuzzNpy.cpp - Fuzz harness: the .npy reader ------------------------===//
//
// This file implements the harness of the runtime's .npy reader (parseNpy,
// what `kiln run --input` and the Trainer's inputs go through): any bytes
// give a tensor whose size matches its shape, or an error with a message.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "kiln/runtime/TensorIO.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  kiln::Expected<kiln::Tensor> t = kiln::parseNpy(bytes, "input.npy");
  if (!t) {
    kiln::fuzz::checkMessage(t.status().message());
    return 0;
  }
  if (t->numel() > 0 && !t->rawData()) {
    std::fprintf(stderr, "kiln fuzz: a tensor without storage\n");
    std::abort();
  }
  return 0;
}
