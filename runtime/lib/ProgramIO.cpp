//===- ProgramIO.cpp - Programs on disk: program.json and .bin ------------===//
//
// This file implements writeProgramFiles (readProgramFiles is in
// ProgramReader.cpp) and the encoding both share (ProgramFormat.h), with
// nlohmann/json. program.json looks like
//
//   { "format": "kiln-program", "version": 1, "num_values": 7,
//     "inputs":  [{"name": "x", "dtype": "f32", "shape": [-1, 3],
//                  "dim_names": ["batch", ""], "value_id": 0}],
//     "weights": [...], "outputs": [...],
//     "graphs":  ["graph_0"],
//     "constants": [{"value_id": 2, "tensor": TENSOR}],
//     "nodes": [NODE...] }
//
//   NODE   = {"op": "add", "source_name": "/add", "source_op": "Add",
//             "operands": [0, 2], "results": [3],
//             "attributes": {"axis": {"kind": "int", "value": 1}, ...},
//             "regions": [{"arguments": [...], "nodes": [NODE...],
//                          "results": [...]}]}
//   TENSOR = {"dtype": "f32", "shape": [2, 3], "offset": 64, "bytes": 24}
//
// Keys are written in this order (the reader takes any order). Attribute
// kinds: int, float, string, ints, floats, dtype (a name such as
// "f32"), tensor (a TENSOR, or null for an absent tensor). Floats are JSON
// numbers written with the shortest digits that read back to the same
// double; JSON has no inf or NaN, so those are the strings "inf", "-inf",
// "nan" (the default quiet NaN) or "nan:0x<16 hex digits>" (any other NaN,
// its bits). Tensor bytes live in program.bin, raw and contiguous, each at
// a 64-byte aligned offset; the reader loads program.bin into one aligned
// CPU buffer and makes the tensors views of it.
//
// ProgramReader.cpp reads it back and checks every field.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/ProgramIO.h"

#include "ProgramFormat.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace kiln {

namespace programio {

namespace fs = std::filesystem;

std::string joinPath(const std::string &dir, const char *file) {
  return (fs::path(dir) / file).string();
}

namespace {
uint64_t doubleBits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}
} // namespace

Json encodeDouble(double d) {
  if (std::isfinite(d))
    return d;
  if (std::isinf(d))
    return d > 0 ? "inf" : "-inf";
  uint64_t bits = doubleBits(d);
  if (bits == doubleBits(std::numeric_limits<double>::quiet_NaN()))
    return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "nan:0x%016" PRIx64, bits);
  return std::string(text);
}

Expected<double> decodeDouble(const Json &j) {
  if (j.is_number())
    return j.get<double>();
  if (j.is_string()) {
    const std::string &s = j.get_ref<const std::string &>();
    if (s == "inf")
      return std::numeric_limits<double>::infinity();
    if (s == "-inf")
      return -std::numeric_limits<double>::infinity();
    if (s == "nan")
      return std::numeric_limits<double>::quiet_NaN();
    if (s.size() == 22 && s.compare(0, 6, "nan:0x") == 0) {
      uint64_t bits = 0;
      bool ok = true;
      for (size_t i = 6; i < s.size() && ok; ++i) {
        char c = s[i];
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        ok = v >= 0;
        bits = (bits << 4) | static_cast<uint64_t>(v < 0 ? 0 : v);
      }
      double d;
      std::memcpy(&d, &bits, sizeof d);
      if (ok && std::isnan(d))
        return d;
    }
  }
  return Status::error(strCat("expected a number (or \"inf\", \"-inf\", "
                              "\"nan\", \"nan:0x<bits>\"), got ",
                              j.dump()));
}

} // namespace programio

using namespace programio;

namespace {

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Collects tensor bytes for program.bin and writes their JSON records.
class BinWriter {
public:
  explicit BinWriter(std::ofstream &out) : out_(out) {}

  Expected<Json> add(const Tensor &tensor, const std::string &what) {
    if (!tensor.defined())
      return Json(nullptr);
    Tensor t = tensor;
    if (t.device() != Device::CPU) {
      Expected<Tensor> cpu = t.to(Device::CPU);
      if (!cpu)
        return cpu.status().withContext(
            strCat(what, ": cannot copy the tensor to the cpu"));
      t = cpu.take();
    }
    t = t.contiguous();
    uint64_t bytes = t.nbytes();
    uint64_t offset = (size_ + kAlignment - 1) / kAlignment * kAlignment;
    static const char zeros[kAlignment] = {};
    out_.write(zeros, static_cast<std::streamsize>(offset - size_));
    if (bytes)
      out_.write(static_cast<const char *>(t.rawData()),
                 static_cast<std::streamsize>(bytes));
    size_ = offset + bytes;
    Json record = {{"dtype", dtypeName(t.dtype())},
                   {"shape", t.shape()},
                   {"offset", offset},
                   {"bytes", bytes}};
    return record;
  }

private:
  std::ofstream &out_;
  uint64_t size_ = 0;
};

Json signatureJson(const ValueSignature &sig) {
  Json j = {{"name", sig.name},
            {"dtype", dtypeName(sig.dtype)},
            {"shape", sig.shape},
            {"dim_names", sig.dimNames},
            {"value_id", sig.valueId}};
  if (sig.anyRank)
    j["any_rank"] = true;
  return j;
}

Expected<Json> attributeJson(const AttrValue &value, BinWriter &bin,
                             const std::string &what) {
  Json j = Json::object();
  if (auto *i = std::get_if<int64_t>(&value)) {
    j["kind"] = "int";
    j["value"] = *i;
  } else if (auto *f = std::get_if<double>(&value)) {
    j["kind"] = "float";
    j["value"] = encodeDouble(*f);
  } else if (auto *s = std::get_if<std::string>(&value)) {
    j["kind"] = "string";
    j["value"] = *s;
  } else if (auto *is = std::get_if<std::vector<int64_t>>(&value)) {
    j["kind"] = "ints";
    j["value"] = *is;
  } else if (auto *fs = std::get_if<std::vector<double>>(&value)) {
    j["kind"] = "floats";
    Json list = Json::array();
    for (double d : *fs)
      list.push_back(encodeDouble(d));
    j["value"] = std::move(list);
  } else if (auto *t = std::get_if<DType>(&value)) {
    j["kind"] = "dtype";
    j["value"] = dtypeName(*t);
  } else if (auto *t = std::get_if<Tensor>(&value)) {
    Expected<Json> record = bin.add(*t, what);
    if (!record)
      return record.status();
    j["kind"] = "tensor";
    j["value"] = record.take();
  }
  return j;
}

Expected<Json> nodeJson(const ProgramNode &node, BinWriter &bin,
                        const std::string &where);

Expected<Json> nodesJson(const std::vector<ProgramNode> &nodes, BinWriter &bin,
                         const std::string &where) {
  Json list = Json::array();
  for (size_t n = 0; n < nodes.size(); ++n) {
    Expected<Json> j = nodeJson(nodes[n], bin, strCat(where, "[", n, "]"));
    if (!j)
      return j.status();
    list.push_back(j.take());
  }
  return list;
}

Expected<Json> nodeJson(const ProgramNode &node, BinWriter &bin,
                        const std::string &where) {
  Json j = {{"op", node.op},
            {"source_name", node.sourceName},
            {"source_op", node.sourceOp},
            {"operands", node.operands},
            {"results", node.results}};
  Json attrs = Json::object();
  for (const auto &[name, value] : node.attrs.all()) {
    Expected<Json> a =
        attributeJson(value, bin, strCat(where, " attribute '", name, "'"));
    if (!a)
      return a.status();
    attrs[name] = a.take();
  }
  j["attributes"] = std::move(attrs);
  if (!node.regions.empty()) {
    Json regions = Json::array();
    for (size_t r = 0; r < node.regions.size(); ++r) {
      const ProgramRegion &region = node.regions[r];
      Expected<Json> nodes = nodesJson(
          region.nodes, bin, strCat(where, ".regions[", r, "].nodes"));
      if (!nodes)
        return nodes.status();
      regions.push_back({{"arguments", region.arguments},
                         {"nodes", nodes.take()},
                         {"results", region.results}});
    }
    j["regions"] = std::move(regions);
  }
  return j;
}

/// Writes `text` to `path` through "<path>.tmp" and a rename.
Status writeTextFile(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return Status::error(
          strCat(path, ": cannot open '", tmp, "' for writing"));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out)
      return Status::error(strCat(path, ": writing '", tmp, "' failed"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::error(
        strCat(path, ": cannot rename '", tmp, "' to the final name"));
  return Status::ok();
}

/// Writes the tensors to `bin` and returns the program.json document.
Expected<Json> programJson(const Program &program, BinWriter &bin,
                           const std::string &jsonPath) {
  Json root = {{"format", "kiln-program"},
               {"version", kProgramFormatVersion},
               {"num_values", program.numValues}};
  auto signatures = [](const std::vector<ValueSignature> &sigs) {
    Json list = Json::array();
    for (const ValueSignature &sig : sigs)
      list.push_back(signatureJson(sig));
    return list;
  };
  root["inputs"] = signatures(program.inputs);
  root["weights"] = signatures(program.weights);
  root["outputs"] = signatures(program.outputs);
  root["graphs"] = program.graphs;
  Json constants = Json::array();
  for (const auto &[id, tensor] : program.constants) {
    std::string what = strCat(jsonPath, ": constant %", id);
    if (!tensor.defined())
      return Status::error(strCat(what, " has no tensor"));
    Expected<Json> record = bin.add(tensor, what);
    if (!record)
      return record.status();
    constants.push_back({{"value_id", id}, {"tensor", record.take()}});
  }
  root["constants"] = std::move(constants);
  Expected<Json> nodes = nodesJson(program.nodes, bin, "nodes");
  if (!nodes)
    return nodes.status().withContext(jsonPath);
  root["nodes"] = nodes.take();
  return root;
}

} // namespace

Status writeProgramFiles(const Program &program, const std::string &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status::error(
        strCat(dir, ": cannot create the folder: ", ec.message()));
  std::string jsonPath = joinPath(dir, "program.json");
  std::string binPath = joinPath(dir, "program.bin");
  std::string binTmp = binPath + ".tmp";
  std::ofstream binOut(binTmp, std::ios::binary | std::ios::trunc);
  if (!binOut)
    return Status::error(
        strCat(binPath, ": cannot open '", binTmp, "' for writing"));
  BinWriter bin(binOut);
  Expected<Json> root = programJson(program, bin, jsonPath);
  binOut.close();
  auto fail = [&](Status s) {
    fs::remove(binTmp, ec);
    return s;
  };
  if (!root)
    return fail(root.status());
  if (!binOut)
    return fail(
        Status::error(strCat(binPath, ": writing '", binTmp, "' failed")));
  std::string text;
  try {
    text = root->dump(1);
  } catch (const Json::exception &e) {
    // A string that is not UTF-8 (a node name, an attribute).
    return fail(
        Status::error(strCat(jsonPath, ": cannot write the JSON: ", e.what())));
  }
  text += "\n";
  if (std::rename(binTmp.c_str(), binPath.c_str()) != 0)
    return fail(Status::error(
        strCat(binPath, ": cannot rename '", binTmp, "' to the final name")));
  return writeTextFile(jsonPath, text);
}

} // namespace kiln
