//===- HugePageMemoryTest.cpp - Tests of allocateHugePageMemory -----------===//
//
// This file implements the unit tests of allocateHugePageMemory: a small
// buffer is 64-byte aligned and not advised, a large one 2 MB aligned, its
// mapping advised for huge pages (the "hg" flag of /proc/self/smaps, where
// the kernel has transparent huge pages), and both are writable end to end.
//
//===----------------------------------------------------------------------===//

#include "../../../runtime/lib/HugePageMemory.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

using namespace kiln;

namespace {

/// The VmFlags of the mapping of this process that holds `p`; empty where
/// /proc/self/smaps cannot be read.
std::string mappingFlags(const void *p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

/// Whether this kernel gives huge pages to memory that asks.
bool transparentHugePagesOn() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(f, modes);
  return modes.find("[always]") != std::string::npos ||
         modes.find("[madvise]") != std::string::npos;
}

using Buffer = std::unique_ptr<void, decltype(&std::free)>;

} // namespace

TEST_CASE("small buffers are 64-byte aligned and not advised", "[huge-pages]") {
  for (size_t bytes : {size_t(0), size_t(1), size_t(100), size_t(1) << 20}) {
    Buffer b(allocateHugePageMemory(bytes), std::free);
    REQUIRE(b);
    CHECK(reinterpret_cast<uintptr_t>(b.get()) % 64 == 0);
    std::memset(b.get(), 1, bytes);
  }
}

TEST_CASE("a buffer of 2 MB and more is 2 MB aligned and advised for huge "
          "pages",
          "[huge-pages]") {
  const size_t bytes = 5 * kHugePageBytes + 12345;
  Buffer b(allocateHugePageMemory(bytes), std::free);
  REQUIRE(b);
  CHECK(reinterpret_cast<uintptr_t>(b.get()) % kHugePageBytes == 0);
  std::memset(b.get(), 7, bytes);
  CHECK(static_cast<unsigned char *>(b.get())[bytes - 1] == 7);
  if (!transparentHugePagesOn())
    return;
  std::string flags = mappingFlags(b.get());
  INFO("VmFlags of the buffer's mapping: " << flags);
  CHECK(flags.find(" hg") != std::string::npos);
}
