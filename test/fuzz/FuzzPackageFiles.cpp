//===- FuzzPackageFiles.cpp - Fuzz harness: manifest and program readers --===//
//
// This file implements the harness of the package readers: the bytes are
// read as a manifest.json (parseManifest) and as a program.json
// (readProgramFiles, with an empty program.bin beside it). Both must accept
// or reject with a message naming the entry; neither may crash, throw or
// allocate what the text merely claims.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/ProgramIO.h"

#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  kiln::Expected<kiln::PackageManifest> manifest =
      kiln::parseManifest(text, "manifest.json");
  if (!manifest)
    kiln::fuzz::checkMessage(manifest.status().message());

  const std::string &json = kiln::fuzz::scratchPath("program", "program.json");
  kiln::fuzz::writeFile(json, data, size);
  std::string dir = std::filesystem::path(json).parent_path().string();
  kiln::fuzz::writeFile(dir + "/program.bin", data, 0);
  kiln::Expected<kiln::Program> program = kiln::readProgramFiles(dir);
  if (!program)
    kiln::fuzz::checkMessage(program.status().message());
  return 0;
}
