//===- MappedFile.cpp - Read-only memory-mapped files ---------------------===//
//
// This file implements MappedFile with open/fstat/mmap(PROT_READ,
// MAP_PRIVATE). The descriptor is closed right after mapping; the mapping
// keeps the file's pages reachable until munmap.
//
//===----------------------------------------------------------------------===//

#include "MappedFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {

Expected<std::shared_ptr<MappedFile>>
MappedFile::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(strCat(path, ": cannot open: ", std::strerror(errno)));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::error(strCat(path, ": cannot stat: ", std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(strCat(path, ": not a regular file"));
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void *p = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Status::error(strCat(path, ": cannot map ", file->size_,
                                  " bytes: ", std::strerror(err)));
    }
    file->data_ = p;
  }
  ::close(fd);
  return file;
}

MappedFile::~MappedFile() {
  if (data_)
    munmap(data_, size_);
}

} // namespace kiln
