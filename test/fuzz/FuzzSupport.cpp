//===- FuzzSupport.cpp - Shared pieces of the fuzz harnesses --------------===//
//
// This file implements the scratch files of the fuzz harnesses
// (FuzzSupport.h): one folder per process, reused for every input.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

namespace kiln {
namespace fuzz {

const std::string &scratchPath(const std::string &folder,
                               const std::string &name) {
  static std::map<std::string, std::string> paths;
  std::string key = folder + "/" + name;
  auto it = paths.find(key);
  if (it != paths.end())
    return it->second;
  const char *tmp = std::getenv("TMPDIR");
  std::filesystem::path dir = std::filesystem::path(tmp ? tmp : "/tmp") /
                              ("kiln-fuzz-" + std::to_string(::getpid())) /
                              folder;
  std::filesystem::create_directories(dir);
  return paths.emplace(key, (dir / name).string()).first->second;
}

void writeFile(const std::string &path, const uint8_t *data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(data),
            static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "kiln fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

} // namespace fuzz
} // namespace kiln
