//===- FillWeight.cpp - Materialising a package's fill weights ------------===//
//
// This file implements materializeFillWeight. A package stores a constant
// whose elements are all equal (a splat: ConstantOfShape, zeros, ones) as
// its one element in manifest.json ("fill") and nothing in weights.bin;
// the loader calls this once per such weight, at load time, and the Model
// owns the result (a cuda package uploads it with the other weights and
// then drops the host copy). The element is copied once and the filled
// prefix then doubled, so filling costs a few memcpy calls.
//
//===----------------------------------------------------------------------===//

#include "FillWeight.h"
#include "ModelImpl.h"

#include "kiln/runtime/SizeLimits.h"

#include <algorithm>
#include <cstring>

namespace kiln {

Expected<Tensor> materializeFillWeight(const ManifestWeight &w,
                                       const std::string &manifestPath) {
  std::string where = strCat(manifestPath, ": fill weight '", w.name, "' ",
                             modelimpl::typeString(w.dtype, w.shape));
  size_t elementBytes = dtypeSize(w.dtype);
  if (!w.fill || w.fill->size() != elementBytes)
    return Status::error(strCat(where, ": 'fill' holds ",
                                w.fill ? w.fill->size() : 0,
                                " bytes but one element has ", elementBytes,
                                " (the package is corrupt; recompile it)"));
  std::optional<int64_t> count = checkedElementCount(w.shape);
  std::optional<int64_t> bytes =
      count ? checkedByteSize(*count, static_cast<int64_t>(elementBytes))
            : std::nullopt;
  if (!bytes)
    return Status::error(strCat(where, ": is larger than the limit of ",
                                kMaxTensorBytes,
                                " bytes (docs/reliability.md)"));
  if (static_cast<uint64_t>(*bytes) != w.bytes)
    return Status::error(strCat(where, ": 'bytes' is ", w.bytes, " but ",
                                *bytes,
                                " are needed (the package is corrupt; "
                                "recompile it)"));
  Tensor t = modelimpl::allocateUninitialised(w.dtype, w.shape);
  if (!t.defined())
    return Status::error(
        strCat(where, ": out of memory materialising its ", *bytes, " bytes"));
  if (*bytes == 0)
    return t;
  char *out = static_cast<char *>(t.rawData());
  size_t total = static_cast<size_t>(*bytes);
  if (elementBytes == 1) {
    std::memset(out, (*w.fill)[0], total);
    return t;
  }
  std::memcpy(out, w.fill->data(), elementBytes);
  for (size_t done = elementBytes; done < total;) {
    size_t n = std::min(done, total - done);
    std::memcpy(out + done, out, n);
    done += n;
  }
  return t;
}

} // namespace kiln
