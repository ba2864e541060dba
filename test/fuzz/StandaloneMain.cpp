//===- StandaloneMain.cpp - Run a fuzz harness on given files -------------===//
//
// This file implements the main of a fuzz harness built without libFuzzer
// (the default build): each argument is a file, or a folder whose files are
// all run, fed once to LLVMFuzzerTestOneInput. A crash is the process's
// crash; otherwise it prints how many inputs ran. CI replays the seed corpus
// and the regression files this way (test/fuzz/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static void runFile(const fs::path &path, size_t &count) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  ++count;
}

int main(int argc, char **argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry &e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file())
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const fs::path &f : files)
        runFile(f, count);
    } else {
      runFile(p, count);
    }
  }
  std::printf("%zu inputs ran without a crash\n", count);
  return 0;
}
