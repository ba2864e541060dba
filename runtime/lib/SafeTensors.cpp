//===- SafeTensors.cpp - Reading and writing .safetensors files -----------===//
//
// This file implements readSafeTensors and writeSafeTensors
// (kiln/runtime/SafeTensors.h) with nlohmann/json for the header. Reading
// checks the whole header first (its length against the file and
// kSafeTensorsMaxHeaderBytes, each entry's dtype, shape and data_offsets,
// overflow of elements × dtype size, overlaps) and only then reads the
// data, one tensor at a time. Writing lays the tensors out back to back in
// the order given, pads the header with spaces to a multiple of 8 bytes (as
// the reference implementation does, so the data is 8-byte aligned), and
// writes through a temporary file renamed into place. The format is
// little-endian, like every host the runtime supports.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kiln {

namespace {

using Json = nlohmann::ordered_json;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors I/O assumes a little-endian host");

/// One tensor's header entry, checked.
struct Entry {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

bool isCount(const Json &j) {
  return j.is_number_unsigned() ||
         (j.is_number_integer() && j.get<int64_t>() >= 0);
}

/// Checks one entry of the header against a data buffer of `dataBytes`.
Status parseEntry(const std::string &name, const Json &j, uint64_t dataBytes,
                  Entry &e) {
  e.name = name;
  if (!j.is_object())
    return Status::error("expected an object with dtype, shape and "
                         "data_offsets");
  auto dtype = j.find("dtype");
  if (dtype == j.end() || !dtype->is_string())
    return Status::error("missing 'dtype' (a string such as \"F32\")");
  std::optional<DType> t = parseSafeTensorsDType(dtype->get<std::string>());
  if (!t)
    return Status::error(strCat("unsupported dtype '",
                                dtype->get<std::string>(),
                                "' (kiln reads F32, F16, BF16, F64, I64, I32, "
                                "I8, U8 and BOOL)"));
  e.dtype = *t;
  auto shape = j.find("shape");
  if (shape == j.end() || !shape->is_array())
    return Status::error("missing 'shape' (an array of sizes)");
  uint64_t elements = 1;
  for (const Json &d : *shape) {
    if (!isCount(d))
      return Status::error(strCat("'shape' ", shape->dump(),
                                  " has a dimension that is not a "
                                  "non-negative integer"));
    uint64_t size = d.get<uint64_t>();
    if (size > static_cast<uint64_t>(INT64_MAX) ||
        __builtin_mul_overflow(elements, size, &elements) ||
        elements > static_cast<uint64_t>(INT64_MAX))
      return Status::error(
          strCat("'shape' ", shape->dump(), ": the element count overflows"));
    e.shape.push_back(static_cast<int64_t>(size));
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements, dtypeSize(e.dtype), &bytes))
    return Status::error(
        strCat("'shape' ", shape->dump(), ": the byte size overflows"));
  auto offsets = j.find("data_offsets");
  if (offsets == j.end() || !offsets->is_array() || offsets->size() != 2 ||
      !isCount((*offsets)[0]) || !isCount((*offsets)[1]))
    return Status::error("missing 'data_offsets' (an array [begin, end] of "
                         "two non-negative integers)");
  e.begin = (*offsets)[0].get<uint64_t>();
  e.end = (*offsets)[1].get<uint64_t>();
  std::string type = strCat(dtypeName(e.dtype), shapeToString(e.shape));
  if (e.end < e.begin || e.end > dataBytes)
    return Status::error(strCat("data_offsets [", e.begin, ", ", e.end,
                                "] are outside the data buffer of ", dataBytes,
                                " bytes (the file is truncated or corrupt)"));
  if (e.end - e.begin != bytes)
    return Status::error(strCat("data_offsets [", e.begin, ", ", e.end,
                                "] hold ", e.end - e.begin, " bytes but ", type,
                                " needs ", bytes));
  return Status::ok();
}

/// Reads "__metadata__": an object of strings.
Status parseMetadata(const Json &j, std::map<std::string, std::string> *out) {
  if (!j.is_object())
    return Status::error("'__metadata__' must be an object of strings");
  for (const auto &[key, value] : j.items()) {
    if (!value.is_string())
      return Status::error(
          strCat("'__metadata__' entry '", key, "' is not a string"));
    if (out)
      (*out)[key] = value.get<std::string>();
  }
  return Status::ok();
}

/// Reads and checks the header of `in` (a file of `fileSize` bytes).
Expected<std::vector<Entry>>
readHeader(std::ifstream &in, uint64_t fileSize, uint64_t &dataStart,
           std::map<std::string, std::string> *metadata) {
  if (fileSize < 8)
    return Status::error(strCat("is ", fileSize,
                                " bytes, too short for a safetensors header "
                                "(8-byte length, then JSON)"));
  unsigned char lengthBytes[8];
  if (!in.read(reinterpret_cast<char *>(lengthBytes), 8))
    return Status::error("cannot read the header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | lengthBytes[i];
  if (n > fileSize - 8)
    return Status::error(strCat("the header length is ", n,
                                " bytes but the file has only ", fileSize - 8,
                                " after it (truncated, or not a safetensors "
                                "file)"));
  if (n > kSafeTensorsMaxHeaderBytes)
    return Status::error(strCat("the header length is ", n,
                                " bytes, more than the ",
                                kSafeTensorsMaxHeaderBytes,
                                " this reader accepts (not a safetensors "
                                "file?)"));
  std::string text(n, '\0');
  if (n && !in.read(text.data(), static_cast<std::streamsize>(n)))
    return Status::error("cannot read the header");
  dataStart = 8 + n;
  uint64_t dataBytes = fileSize - dataStart;

  Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::error("the header is not valid JSON");
  if (!root.is_object())
    return Status::error("the header is not a JSON object");
  std::vector<Entry> entries;
  for (const auto &[name, value] : root.items()) {
    if (name == "__metadata__") {
      KILN_RETURN_IF_ERROR(parseMetadata(value, metadata));
      continue;
    }
    Entry e;
    KILN_RETURN_IF_ERROR(parseEntry(name, value, dataBytes, e)
                             .withContext(strCat("tensor '", name, "'")));
    entries.push_back(std::move(e));
  }
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const Entry &a, const Entry &b) { return a.begin < b.begin; });
  for (size_t i = 1; i < entries.size(); ++i)
    if (entries[i].begin < entries[i - 1].end)
      return Status::error(
          strCat("tensor '", entries[i].name, "': data_offsets [",
                 entries[i].begin, ", ", entries[i].end,
                 "] overlap those of tensor '", entries[i - 1].name, "' [",
                 entries[i - 1].begin, ", ", entries[i - 1].end, "]"));
  return entries;
}

Expected<NamedTensors> readAll(const std::string &path,
                               std::map<std::string, std::string> *metadata) {
  std::error_code ec;
  uint64_t fileSize = fs::file_size(path, ec);
  if (ec)
    return Status::error(strCat("cannot open it: ", ec.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("cannot open it for reading");
  uint64_t dataStart = 0;
  Expected<std::vector<Entry>> entries =
      readHeader(in, fileSize, dataStart, metadata);
  if (!entries)
    return entries.status();
  NamedTensors out;
  for (const Entry &e : *entries) {
    Tensor t = Tensor::empty(e.dtype, e.shape);
    size_t bytes = e.end - e.begin;
    if (bytes) {
      if (!t.defined() || !t.rawData())
        return Status::error(
            strCat("tensor '", e.name, "': out of memory (", bytes, " bytes)"));
      in.seekg(static_cast<std::streamoff>(dataStart + e.begin));
      if (!in.read(static_cast<char *>(t.rawData()),
                   static_cast<std::streamsize>(bytes)))
        return Status::error(
            strCat("tensor '", e.name, "': reading its data failed"));
    }
    out.emplace_back(e.name, std::move(t));
  }
  return out;
}

/// A contiguous CPU copy (or view) of `t`, for writing.
Expected<Tensor> hostContiguous(const Tensor &t) {
  if (t.device() != Device::CPU)
    return t.to(Device::CPU);
  return t.contiguous();
}

/// The text of the header for `tensors` (already on the CPU), padded with
/// spaces to a multiple of 8 bytes.
std::string formatHeader(const NamedTensors &tensors,
                         const std::map<std::string, std::string> &metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto &[key, value] : metadata)
      meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  uint64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    uint64_t bytes = t.nbytes();
    header[name] = {{"dtype", safeTensorsDTypeName(t.dtype())},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text =
      header.dump(-1, ' ', false, Json::error_handler_t::replace);
  text.resize((text.size() + 7) / 8 * 8, ' ');
  return text;
}

Status writeFile(const std::string &tmp, const std::string &header,
                 const NamedTensors &tensors) {
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out)
    return Status::error(strCat("cannot open '", tmp, "' for writing"));
  unsigned char length[8];
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<unsigned char>(n >> (8 * i));
  out.write(reinterpret_cast<const char *>(length), 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const auto &[name, t] : tensors)
    if (t.nbytes())
      out.write(static_cast<const char *>(t.rawData()),
                static_cast<std::streamsize>(t.nbytes()));
  out.close();
  if (!out)
    return Status::error(strCat("writing '", tmp, "' failed (disk full?)"));
  return Status::ok();
}

} // namespace

const char *safeTensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F64:
    return "F64";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I8:
    return "I8";
  case DType::U8:
    return "U8";
  case DType::Bool:
    return "BOOL";
  case DType::U16:
    return "U16";
  case DType::U32:
    return "U32";
  case DType::U64:
    return "U64";
  case DType::I16:
    return "I16";
  case DType::F8E4M3FN:
    return "F8_E4M3";
  case DType::F8E5M2:
    return "F8_E5M2";
  default:
    return nullptr;
  }
}

std::optional<DType> parseSafeTensorsDType(const std::string &name) {
  for (int code = 0; code < kNumDTypes; ++code) {
    DType t = static_cast<DType>(code);
    const char *known = safeTensorsDTypeName(t);
    if (known && name == known)
      return t;
  }
  return std::nullopt;
}

Expected<NamedTensors>
readSafeTensors(const std::string &path,
                std::map<std::string, std::string> *metadata) {
  if (metadata)
    metadata->clear();
  try {
    Expected<NamedTensors> tensors = readAll(path, metadata);
    if (!tensors)
      return tensors.status().withContext(path);
    return tensors;
  } catch (const std::exception &e) {
    // nlohmann's accessors and allocation failures; never escape.
    return Status::error(
        strCat(path, ": malformed safetensors file: ", e.what()));
  }
}

Status writeSafeTensors(const std::string &path, const NamedTensors &tensors,
                        const std::map<std::string, std::string> &metadata) {
  try {
    NamedTensors host;
    std::set<std::string> names;
    for (const auto &[name, t] : tensors) {
      std::string where = strCat(path, ": tensor '", name, "'");
      if (name == "__metadata__")
        return Status::error(strCat(where, ": the name is reserved"));
      if (!names.insert(name).second)
        return Status::error(strCat(where, ": given more than once"));
      if (!t.defined())
        return Status::error(strCat(where, ": no tensor given"));
      if (!safeTensorsDTypeName(t.dtype()))
        return Status::error(strCat(where, ": safetensors has no dtype for ",
                                    dtypeName(t.dtype())));
      Expected<Tensor> c = hostContiguous(t);
      if (!c)
        return c.status().withContext(where);
      host.emplace_back(name, c.take());
    }
    std::string header = formatHeader(host, metadata);
    static std::atomic<int> counter{0};
    std::string tmp =
        strCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
    Status written = writeFile(tmp, header, host);
    if (!written) {
      std::remove(tmp.c_str());
      return written.withContext(path);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      return Status::error(
          strCat(path, ": cannot rename '", tmp, "' to the final name"));
    }
    return Status::ok();
  } catch (const std::exception &e) {
    return Status::error(strCat(path, ": writing failed: ", e.what()));
  }
}

} // namespace kiln
