//===- SharedLibrary.cpp - dlopen/dlsym with clear errors -----------------===//
//
// This file implements SharedLibrary on top of dlopen/dlsym/dlclose. Errors
// carry dlerror()'s text, which names the missing dependency or why the
// file is not a loadable library.
//
//===----------------------------------------------------------------------===//

#include "SharedLibrary.h"

#include <dlfcn.h>

#include <utility>

namespace kiln {

SharedLibrary::SharedLibrary(SharedLibrary &&other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      path_(std::move(other.path_)) {}

SharedLibrary &SharedLibrary::operator=(SharedLibrary &&other) noexcept {
  if (this != &other) {
    if (handle_)
      dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_)
    dlclose(handle_);
}

Expected<SharedLibrary> SharedLibrary::open(const std::string &path) {
  dlerror(); // Clear any stale error.
  // RTLD_NODELETE: a model's code stays mapped after dlclose. Generated
  // kernels run OpenMP regions, and the OpenMP runtime's idle worker threads
  // may still refer to them when the Model is destroyed; unmapping the code
  // under them crashes the process (seen at exit of `kiln run`).
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char *why = dlerror();
    return Status::error(strCat(
        path, ": cannot load the shared library: ",
        why ? why : "unknown dlopen error",
        " (is it a package library built for this machine by kiln compile, "
        "with its dependencies on the library path?)"));
  }
  SharedLibrary lib;
  lib.handle_ = handle;
  lib.path_ = path;
  return lib;
}

Expected<void *> SharedLibrary::symbol(const char *name) const {
  if (!handle_)
    return Status::error(strCat("symbol '", name, "': no library is open"));
  dlerror();
  void *address = dlsym(handle_, name);
  const char *why = dlerror();
  if (why || !address)
    return Status::error(strCat(path_, ": does not export '", name,
                                "': it is not a Kiln model library, or it was "
                                "built by an incompatible kiln; recompile the "
                                "package with kiln compile"));
  return address;
}

} // namespace kiln
