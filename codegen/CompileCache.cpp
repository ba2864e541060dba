//===- CompileCache.cpp - Content-addressed cache of build outputs --------===//
//
// This file implements Kiln's compile cache (see CompileCache.h): SHA-256
// keys over length-prefixed parts, entries as files <dir>/<2 hex>/<key><suffix>
// written through a temp file and a rename, hits refreshing the entry's
// modification time, and eviction of the least recently used entries.
//
//===----------------------------------------------------------------------===//

#include "codegen/CompileCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace fs = llvm::sys::fs;
using llvm::StringRef;

namespace kiln {

CacheKey::CacheKey(StringRef kind) { add(kind); }

CacheKey &CacheKey::add(StringRef part) {
  bytes_ += std::to_string(part.size());
  bytes_ += ':';
  bytes_ += part.str();
  return *this;
}

CacheKey &CacheKey::addDirectoryContents(StringRef dir) {
  static std::mutex mutex;
  static std::map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = memo.try_emplace(dir.str());
  if (inserted) {
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::recursive_directory_iterator i(dir, ec), end; i != end && !ec;
         i.increment(ec))
      if (i->type() == fs::file_type::regular_file)
        files.push_back(i->path());
    std::sort(files.begin(), files.end());
    CacheKey contents("directory");
    for (const std::string &file : files) {
      contents.add(StringRef(file).drop_front(dir.size()));
      auto buffer = llvm::MemoryBuffer::getFile(file);
      contents.add(buffer ? (*buffer)->getBuffer() : StringRef("<unreadable>"));
    }
    it->second = contents.hex();
  }
  return add(it->second);
}

CacheKey &CacheKey::addFileIdentity(StringRef path) {
  fs::file_status status;
  add(path);
  if (fs::status(path, status))
    return add("<missing>");
  add(std::to_string(status.getSize()));
  return add(
      std::to_string(llvm::sys::toTimeT(status.getLastModificationTime())));
}

std::string CacheKey::hex() const {
  llvm::SHA256 sha;
  sha.update(bytes_);
  return llvm::toHex(sha.final(), /*LowerCase=*/true);
}

std::optional<CompileCache> CompileCache::open() {
  std::string dir;
  if (const char *env = std::getenv("KILN_CACHE_DIR"); env && *env) {
    if (StringRef(env) == "off" || StringRef(env) == "0")
      return std::nullopt;
    dir = env;
  } else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = std::string(xdg) + "/kiln";
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    dir = std::string(home) + "/.cache/kiln";
  } else {
    return std::nullopt;
  }
  uint64_t maxMb = 1024;
  if (const char *env = std::getenv("KILN_CACHE_MAX_MB"); env && *env) {
    char *end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (end && *end == '\0' && v > 0)
      maxMb = v;
  }
  if (fs::create_directories(dir))
    return std::nullopt;
  return CompileCache(dir, maxMb << 20);
}

std::string CompileCache::entryPath(StringRef key, StringRef suffix) const {
  return dir_ + "/" + key.take_front(2).str() + "/" + key.str() + suffix.str();
}

bool CompileCache::fetch(StringRef key, StringRef suffix,
                         StringRef dest) const {
  std::string path = entryPath(key, suffix);
  if (!fs::exists(path) || fs::copy_file(path, dest))
    return false;
  int fd;
  if (!fs::openFileForWrite(path, fd, fs::CD_OpenExisting, fs::OF_Append)) {
    (void)fs::setLastAccessAndModificationTime(
        fd, std::chrono::system_clock::now());
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  return true;
}

std::optional<std::string> CompileCache::fetchText(StringRef key,
                                                   StringRef suffix) const {
  auto buffer = llvm::MemoryBuffer::getFile(entryPath(key, suffix));
  if (!buffer)
    return std::nullopt;
  return (*buffer)->getBuffer().str();
}

void CompileCache::store(StringRef key, StringRef suffix, StringRef src) const {
  auto buffer = llvm::MemoryBuffer::getFile(src, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (buffer)
    storeText(key, suffix, (*buffer)->getBuffer());
}

void CompileCache::storeText(StringRef key, StringRef suffix,
                             StringRef text) const {
  std::string path = entryPath(key, suffix);
  if (fs::create_directories(llvm::sys::path::parent_path(path)))
    return;
  llvm::SmallString<256> tmp;
  int fd;
  if (fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tmp))
    return;
  bool ok;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << text;
    out.close();
    ok = !out.has_error();
    out.clear_error();
  }
  if (!ok || fs::rename(tmp, path)) {
    fs::remove(tmp);
    return;
  }
  // One store in 64 checks the folder's size.
  if (key.take_front(2) < "04")
    evict();
}

void CompileCache::evict() const {
  struct Entry {
    std::string path;
    uint64_t bytes;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator i(dir_, ec), end; i != end && !ec;
       i.increment(ec)) {
    fs::file_status status;
    if (i->type() != fs::file_type::regular_file ||
        fs::status(i->path(), status))
      continue;
    entries.push_back(
        {i->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  if (total <= maxBytes_)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &e : entries) {
    if (total <= maxBytes_ / 10 * 8)
      break;
    if (!fs::remove(e.path))
      total -= e.bytes;
  }
}

} // namespace kiln
