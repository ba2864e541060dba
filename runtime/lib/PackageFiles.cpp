//===- PackageFiles.cpp - A package's file list, checksums and paths ------===//
//
// This file implements the integrity side of a package: describePackageFiles
// (the "files" list the packager records: every file the runtime reads, with
// its size and checksum), verifyPackageFiles (the check every loader runs
// before it opens the library, weights.bin or kernels.cubin: a truncated or
// altered file is an error naming it, never a SIGBUS in dlopen or a run with
// wrong weights) and resolveInsideFolder (a path a manifest names must stay
// inside its folder). A nested package (a program's graphs/NAME/) has its
// own list, checked when it loads; the outer list holds its manifest.
//
// The checksum is FNV-1a over 64-bit words in four interleaved lanes
// ("fnv1a64x4"): about as fast as the disk on one core, and any flipped bit
// changes it. It detects damage, not tampering.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/PackageManifest.h"

#include "MappedFile.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace kiln {

namespace {

constexpr const char *kChecksumPrefix = "fnv1a64x4:";

/// FNV-1a over 8-byte words, four lanes, the tail bytes into lane 0 and the
/// length into the final mix.
uint64_t checksum(const char *data, size_t size) {
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t lane[4] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL,
                      0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t word;
      std::memcpy(&word, data + i + 8 * k, 8);
      lane[k] = (lane[k] ^ word) * kPrime;
    }
  }
  for (; i < size; ++i)
    lane[0] = (lane[0] ^ static_cast<unsigned char>(data[i])) * kPrime;
  uint64_t h = static_cast<uint64_t>(size) * 0x9e3779b97f4a7c15ULL;
  for (uint64_t l : lane) {
    h ^= l + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= kPrime;
  }
  return h;
}

std::string checksumString(const char *data, size_t size) {
  static const char kHex[] = "0123456789abcdef";
  uint64_t h = checksum(data, size);
  std::string s = kChecksumPrefix;
  for (int shift = 60; shift >= 0; shift -= 4)
    s += kHex[(h >> shift) & 0xf];
  return s;
}

/// Generated sources, build inputs and notes: written for people and the
/// host compiler (exports.map), never read at load.
bool isSourceFile(const fs::path &p) {
  static const char *const kSources[] = {".cpp", ".h",  ".cu",  ".cuh", ".mlir",
                                         ".txt", ".md", ".log", ".map"};
  std::string ext = p.extension().string();
  return std::find(std::begin(kSources), std::end(kSources), ext) !=
         std::end(kSources);
}

Expected<std::string> fileChecksum(const std::string &path, uint64_t &bytes) {
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.status();
  bytes = (*file)->size();
  return checksumString((*file)->data(), (*file)->size());
}

} // namespace

Expected<std::vector<ManifestFile>>
describePackageFiles(const std::string &dir) {
  std::vector<ManifestFile> files;
  std::vector<fs::path> nested;
  std::error_code ec;
  auto record = [&](const fs::path &path) -> Status {
    ManifestFile f;
    f.path = fs::relative(path, dir, ec).generic_string();
    Expected<std::string> sum = fileChecksum(path.string(), f.bytes);
    if (!sum)
      return sum.status();
    f.checksum = sum.take();
    files.push_back(std::move(f));
    return Status::ok();
  };
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec)
    return Status::error(
        strCat(dir, ": cannot list the package folder: ", ec.message()));
  for (; it != end; it.increment(ec)) {
    if (ec)
      return Status::error(
          strCat(dir, ": cannot list the package folder: ", ec.message()));
    // A nested package (a program's graph) checks its own files when it is
    // loaded: record only its manifest, whose file list this one then
    // vouches for.
    if (it->is_directory(ec)) {
      if (fs::exists(it->path() / "manifest.json", ec)) {
        it.disable_recursion_pending();
        nested.push_back(it->path() / "manifest.json");
      }
      continue;
    }
    if (!it->is_regular_file(ec) || isSourceFile(it->path()) ||
        (it.depth() == 0 && it->path().filename() == "manifest.json"))
      continue;
    KILN_RETURN_IF_ERROR(record(it->path()));
  }
  for (const fs::path &manifest : nested)
    KILN_RETURN_IF_ERROR(record(manifest));
  std::sort(files.begin(), files.end(),
            [](const ManifestFile &a, const ManifestFile &b) {
              return a.path < b.path;
            });
  return files;
}

Expected<std::string> resolveInsideFolder(const std::string &base,
                                          const std::string &relative,
                                          const std::string &what) {
  fs::path rel(relative);
  auto outside = [&](const std::string &why) {
    return Status::error(strCat(what, ": the path '", relative, "' ", why,
                                "; a package's files must stay inside its "
                                "folder '",
                                base, "'"));
  };
  if (relative.empty())
    return outside("is empty");
  if (rel.is_absolute() || rel.has_root_name())
    return outside("is absolute");
  for (const fs::path &part : rel)
    if (part == "..")
      return outside("leaves the folder ('..')");
  fs::path joined = fs::path(base) / rel;
  std::error_code ec;
  // Symbolic links may point anywhere: compare the real paths of what exists.
  fs::path realBase = fs::weakly_canonical(base, ec);
  if (ec)
    return joined.string();
  fs::path realFile = fs::weakly_canonical(joined, ec);
  if (ec)
    return joined.string();
  auto [b, f] = std::mismatch(realBase.begin(), realBase.end(),
                              realFile.begin(), realFile.end());
  if (b != realBase.end())
    return outside("leads outside it through a symbolic link");
  return joined.string();
}

Status verifyPackageFiles(const PackageManifest &manifest,
                          const std::string &dir) {
  for (const ManifestFile &f : manifest.files) {
    Expected<std::string> path =
        resolveInsideFolder(dir, f.path, strCat(dir, "/manifest.json: files"));
    if (!path)
      return path.status();
    std::error_code ec;
    if (!fs::is_regular_file(*path, ec))
      return Status::error(strCat(*path, ": missing; the package is incomplete "
                                         "(recompile it with kiln compile)"));
    uint64_t size = fs::file_size(*path, ec);
    if (ec || size != f.bytes)
      return Status::error(strCat(
          *path, ": is ", ec ? std::string("unreadable") : std::to_string(size),
          ec ? "" : " bytes", " but the manifest recorded ", f.bytes,
          " bytes: the file is truncated or was replaced (recompile the "
          "package with kiln compile)"));
    uint64_t bytes = 0;
    Expected<std::string> sum = fileChecksum(*path, bytes);
    if (!sum)
      return sum.status();
    if (*sum != f.checksum)
      return Status::error(
          strCat(*path, ": its checksum ", *sum,
                 " differs from the manifest's ", f.checksum,
                 ": the file is damaged or was altered (recompile the package "
                 "with kiln compile)"));
  }
  return Status::ok();
}

} // namespace kiln
