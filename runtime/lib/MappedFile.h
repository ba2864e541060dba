//===- MappedFile.h - Read-only memory-mapped files ------------*- C++ -*-===//
//
// This file declares MappedFile, a read-only mmap of a whole file (the
// weights of a package are used in place, never copied). An empty file maps
// to no memory and size 0.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_MAPPEDFILE_H
#define KILN_RUNTIME_LIB_MAPPEDFILE_H

#include "kiln/runtime/Status.h"

#include <cstddef>
#include <memory>
#include <string>

namespace kiln {

/// A whole file mapped read-only; unmapped on destruction. Not copyable;
/// share it through std::shared_ptr.
class MappedFile {
public:
  /// Maps `path`; errors name the file and the system's reason.
  static Expected<std::shared_ptr<MappedFile>> open(const std::string &path);
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  const char *data() const { return static_cast<const char *>(data_); }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }

private:
  MappedFile() = default;
  void *data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

} // namespace kiln

#endif // KILN_RUNTIME_LIB_MAPPEDFILE_H
