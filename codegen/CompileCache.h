//===- CompileCache.h - Content-addressed cache of build outputs -*- C++
//-*-===//
//
// This file declares Kiln's compile cache: build outputs (a package's
// the package library and the host compiler's log) stored under a key that
// hashes everything the build reads -- the generated sources, the compiler's
// identity and flags, the runtime headers' contents -- so that compiling the
// same graph again skips the host compiler (like ccache, or Inductor's and
// Triton's caches). The folder is $KILN_CACHE_DIR, else
// $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln; KILN_CACHE_DIR=off turns it
// off. Entries are written atomically (concurrent compiles share it) and the
// least recently used go when it exceeds $KILN_CACHE_MAX_MB (1024).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_COMPILECACHE_H
#define KILN_CODEGEN_COMPILECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// Builds a cache key: a SHA-256 over length-prefixed parts, so that no two
/// different part lists give the same bytes.
class CacheKey {
public:
  explicit CacheKey(llvm::StringRef kind);
  CacheKey &add(llvm::StringRef part);
  /// Adds the contents (and relative paths) of every regular file under
  /// `dir`, in sorted order; memoized per process.
  CacheKey &addDirectoryContents(llvm::StringRef dir);
  /// Adds a file's identity: its path, size and modification time (how
  /// ccache identifies a compiler).
  CacheKey &addFileIdentity(llvm::StringRef path);
  /// The key as 64 hex digits.
  std::string hex() const;

private:
  std::string bytes_;
};

/// The cache folder; std::nullopt when the cache is off or has no home.
class CompileCache {
public:
  /// The cache of this process's environment (see the file comment).
  static std::optional<CompileCache> open();

  /// Copies the entry `key` + `suffix` to `dest`; false on a miss. A hit
  /// marks the entry as recently used.
  bool fetch(llvm::StringRef key, llvm::StringRef suffix,
             llvm::StringRef dest) const;
  /// Stores a copy of `src` as the entry `key` + `suffix` (atomically; a
  /// failure to store is not an error, the cache is an optimisation).
  void store(llvm::StringRef key, llvm::StringRef suffix,
             llvm::StringRef src) const;
  /// Stores `text` as the entry `key` + `suffix`.
  void storeText(llvm::StringRef key, llvm::StringRef suffix,
                 llvm::StringRef text) const;
  /// The text of the entry `key` + `suffix`, if present.
  std::optional<std::string> fetchText(llvm::StringRef key,
                                       llvm::StringRef suffix) const;

  /// Removes the least recently used entries, down to 80% of the size
  /// limit, when the folder holds more (run by one store in 64).
  void evict() const;

  const std::string &dir() const { return dir_; }

private:
  CompileCache(std::string dir, uint64_t maxBytes)
      : dir_(std::move(dir)), maxBytes_(maxBytes) {}
  std::string entryPath(llvm::StringRef key, llvm::StringRef suffix) const;

  std::string dir_;
  uint64_t maxBytes_;
};

} // namespace kiln

#endif // KILN_CODEGEN_COMPILECACHE_H
