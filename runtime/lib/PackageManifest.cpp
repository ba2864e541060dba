//===- PackageManifest.cpp - The manifest.json of a Kiln package ----------===//
//
// This file implements readManifest with nlohmann/json. The accepted form:
//
//   { "abi_version": 1,                               (optional)
//     "source": "path/to/model.onnx",                 (optional)
//     "target": "cpu" | "cuda",                       (optional, cpu)
//     "counts": {"fused": 3, "library": 1, "fallback": 0},  (optional)
//     "signature": {                                  (optional)
//       "inputs":  [{"name": "x", "dtype": "f32", "shape": [4, 16]}],
//       "outputs": [...] },
//     "weights": [
//       {"name": "w", "dtype": "f32", "shape": [16],  in weights.bin
//        "file": "weights.bin", "offset": 0, "bytes": 64},
//       {"name": "v", "dtype": "f32", "shape": [8],   ONNX external data
//        "external": {"file": "m.onnx.data", "offset": 0, "bytes": 32}},
//       {"name": "u", "dtype": "f32", "shape": [8]}   bound by the caller
//     ] }
//
// "bytes" and "length" are synonyms, as are "file" and "location" (ONNX's
// words); a weight whose "file" is not weights.bin counts as external data.
// A top-level "kind": "program" marks a package with graph breaks
// (runtime/lib/ProgramPackage.cpp). Other keys (a weight's kind, bind, index,
// kernels, memory_plan, ...) are ignored. Byte counts must equal the
// elements times the dtype's size. Dtypes are kiln names ("f32") or
// kiln::DType codes.
//
//===----------------------------------------------------------------------===//

#include "PackageManifest.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace kiln {

namespace {

using Json = nlohmann::json;

/// Reads a dtype given as a name or a code.
Expected<DType> parseDTypeField(const Json &j) {
  if (j.is_string()) {
    std::optional<DType> t = parseDType(j.get<std::string>());
    if (t)
      return *t;
    return Status::error(strCat("unknown dtype '", j.get<std::string>(), "'"));
  }
  if (j.is_number_integer()) {
    int64_t code = j.get<int64_t>();
    if (code >= 0 && code < kNumDTypes)
      return static_cast<DType>(code);
    return Status::error(strCat("unknown dtype code ", code));
  }
  return Status::error("'dtype' must be a name such as \"f32\"");
}

Expected<Shape> parseShapeField(const Json &j) {
  if (!j.is_array())
    return Status::error("'shape' must be an array of sizes");
  Shape shape;
  for (const Json &d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      return Status::error(
          strCat("'shape' ", j.dump(),
                 " has a dimension that is not a static size; packages are "
                 "compiled for static shapes"));
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

/// Reads a non-negative integer field `key` of `j`; `fallback` when absent.
Expected<uint64_t> parseCount(const Json &j, const char *key,
                              std::optional<uint64_t> fallback) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (fallback)
      return *fallback;
    return Status::error(strCat("missing '", key, "'"));
  }
  if (!it->is_number_integer() || it->get<int64_t>() < 0)
    return Status::error(strCat("'", key, "' must be a non-negative integer"));
  return it->get<uint64_t>();
}

Status parseNameTypeShape(const Json &j, std::string &name, DType &dtype,
                          Shape &shape) {
  if (!j.is_object())
    return Status::error("expected an object with name, dtype and shape");
  auto nameIt = j.find("name");
  if (nameIt == j.end() || !nameIt->is_string())
    return Status::error("missing 'name'");
  name = nameIt->get<std::string>();
  auto dtypeIt = j.find("dtype");
  if (dtypeIt == j.end())
    return Status::error("missing 'dtype'");
  Expected<DType> t = parseDTypeField(*dtypeIt);
  if (!t)
    return t.status();
  dtype = *t;
  auto shapeIt = j.find("shape");
  if (shapeIt == j.end())
    return Status::error("missing 'shape'");
  Expected<Shape> s = parseShapeField(*shapeIt);
  if (!s)
    return s.status();
  shape = s.take();
  return Status::ok();
}

Status parseValues(const Json &list, const char *key,
                   std::vector<ManifestValue> &out) {
  if (!list.is_array())
    return Status::error(strCat("'signature.", key, "' must be an array"));
  for (size_t i = 0; i < list.size(); ++i) {
    ManifestValue v;
    Status s = parseNameTypeShape(list[i], v.name, v.dtype, v.shape);
    if (!s) {
      std::string label = strCat("signature.", key, "[", i, "]");
      if (!v.name.empty())
        label += strCat(" ('", v.name, "')");
      return s.withContext(label);
    }
    out.push_back(std::move(v));
  }
  return Status::ok();
}

Status parseWeight(const Json &j, ManifestWeight &w) {
  KILN_RETURN_IF_ERROR(parseNameTypeShape(j, w.name, w.dtype, w.shape));
  uint64_t expected =
      static_cast<uint64_t>(numElements(w.shape)) * dtypeSize(w.dtype);
  const Json *location = &j;
  auto ext = j.find("external");
  if (ext != j.end()) {
    if (!ext->is_object())
      return Status::error("'external' must be an object with location, "
                           "offset and length");
    location = &*ext;
    w.external = true;
  }
  auto fileIt = location->find("file");
  if (fileIt == location->end())
    fileIt = location->find("location");
  if (fileIt == location->end()) {
    if (w.external)
      return Status::error("'external' has no 'location'");
    return Status::ok(); // No data in the package: bound by the caller.
  }
  if (!fileIt->is_string() || fileIt->get<std::string>().empty())
    return Status::error("'file' must be a file name");
  w.file = fileIt->get<std::string>();
  if (w.file != "weights.bin")
    w.external = true;
  Expected<uint64_t> offset = parseCount(*location, "offset", uint64_t(0));
  if (!offset)
    return offset.status();
  w.offset = *offset;
  const char *bytesKey = location->contains("bytes") ? "bytes" : "length";
  Expected<uint64_t> bytes = parseCount(*location, bytesKey, expected);
  if (!bytes)
    return bytes.status();
  w.bytes = *bytes;
  if (w.bytes != expected)
    return Status::error(strCat("holds ", w.bytes, " bytes but ",
                                dtypeName(w.dtype), shapeToString(w.shape),
                                " needs ", expected));
  return Status::ok();
}

Expected<PackageManifest> parseManifest(const Json &root) {
  if (!root.is_object())
    return Status::error("the top level is not a JSON object");
  PackageManifest m;
  auto abi = root.find("abi_version");
  if (abi != root.end()) {
    if (!abi->is_number_integer())
      return Status::error("'abi_version' must be an integer");
    m.abiVersion = abi->get<int64_t>();
  }
  auto kind = root.find("kind");
  if (kind != root.end()) {
    if (!kind->is_string() || (kind->get<std::string>() != "program"))
      return Status::error("'kind' must be \"program\" when present");
    m.kind = kind->get<std::string>();
  }
  auto source = root.find("source");
  if (source != root.end() && source->is_string())
    m.source = source->get<std::string>();
  auto isa = root.find("isa");
  if (isa != root.end() && isa->is_string())
    m.isa = isa->get<std::string>();
  auto target = root.find("target");
  if (target != root.end()) {
    if (!target->is_string())
      return Status::error("'target' must be a string (\"cpu\" or \"cuda\")");
    m.target = target->get<std::string>();
  }
  // "counts": {"fused": F, "library": L, "fallback": B} (kiln compile's
  // step counts; optional).
  auto counts = root.find("counts");
  if (counts != root.end() && counts->is_object()) {
    auto library = counts->find("library"), fallback = counts->find("fallback");
    if (library != counts->end() && library->is_number_integer() &&
        fallback != counts->end() && fallback->is_number_integer())
      m.libraryOrFallbackSteps =
          library->get<int64_t>() + fallback->get<int64_t>();
  }
  auto sig = root.find("signature");
  // A program's signature may have dynamic output sizes (-1); the loader
  // takes it from program.json.
  if (sig != root.end() && m.kind != "program") {
    if (!sig->is_object())
      return Status::error("'signature' must be an object");
    m.hasSignature = true;
    auto in = sig->find("inputs");
    if (in != sig->end())
      KILN_RETURN_IF_ERROR(parseValues(*in, "inputs", m.inputs));
    auto out = sig->find("outputs");
    if (out != sig->end())
      KILN_RETURN_IF_ERROR(parseValues(*out, "outputs", m.outputs));
  }
  auto weights = root.find("weights");
  if (weights != root.end()) {
    if (!weights->is_array())
      return Status::error("'weights' must be an array");
    for (size_t i = 0; i < weights->size(); ++i) {
      ManifestWeight w;
      const Json &entry = (*weights)[i];
      Status s = parseWeight(entry, w);
      if (!s) {
        std::string label = strCat("weights[", i, "]");
        if (!w.name.empty())
          label += strCat(" ('", w.name, "')");
        return s.withContext(label);
      }
      m.weights.push_back(std::move(w));
    }
  }
  return m;
}

} // namespace

Expected<PackageManifest> readManifest(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(strCat(path,
                                ": cannot open the package manifest (is the "
                                "folder a package written by kiln compile?)"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  Json root;
  try {
    root = Json::parse(buffer.str());
  } catch (const Json::exception &e) {
    return Status::error(strCat(path, ": not valid JSON: ", e.what()));
  }
  try {
    Expected<PackageManifest> m = parseManifest(root);
    if (!m)
      return m.status().withContext(path);
    return m;
  } catch (const Json::exception &e) {
    return Status::error(strCat(path, ": malformed manifest: ", e.what()));
  }
}

} // namespace kiln
