//===- SharedLibrary.h - dlopen/dlsym with clear errors --------*- C++ -*-===//
//
// This file declares SharedLibrary, a move-only owner of a dlopen handle:
// open() loads a library with RTLD_NOW | RTLD_LOCAL and reports dlerror()'s
// message with the path; symbol() looks a symbol up and reports a missing
// one by name. The library is closed when the owner dies.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_SHAREDLIBRARY_H
#define KILN_RUNTIME_LIB_SHAREDLIBRARY_H

#include "kiln/runtime/Status.h"

#include <string>

namespace kiln {

/// An open shared library; closed on destruction.
class SharedLibrary {
public:
  SharedLibrary() = default;
  SharedLibrary(SharedLibrary &&other) noexcept;
  SharedLibrary &operator=(SharedLibrary &&other) noexcept;
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;
  ~SharedLibrary();

  /// Loads `path` (all symbols resolved now, none exported to later loads).
  static Expected<SharedLibrary> open(const std::string &path);

  /// The address of `name`, or an error naming the library and the symbol.
  Expected<void *> symbol(const char *name) const;

  const std::string &path() const { return path_; }

private:
  void *handle_ = nullptr;
  std::string path_;
};

} // namespace kiln

#endif // KILN_RUNTIME_LIB_SHAREDLIBRARY_H
