//===- PackageManifestReader.cpp - Reading a package's manifest.json ------===//
//
// This file implements parseManifest and readManifest, the reader of the
// schema in kiln/runtime/PackageManifest.h (the writer is in
// PackageManifest.cpp), with nlohmann/json through ManifestFields.h. It
// reads every key the writer writes and what older packages and
// hand-written manifests hold: keys in any order, any key missing (the
// structs' defaults), "length" for "bytes" and "location" for "file",
// dtypes as names or codes, unknown keys ignored. A key that is present must have its type; every error
// names the file and the entry ("manifest.json: weights[3]
// ('conv1.weight'): holds 12 bytes but f32[4] needs 16").
//
//===----------------------------------------------------------------------===//

#include "ManifestFields.h"
#include "ManifestSizeSymbols.h"

#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/SizeLimits.h"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace kiln {

namespace {

using namespace manifest_json;

//===----------------------------------------------------------------------===//
// Values and weights
//===----------------------------------------------------------------------===//

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

/// Reads a shape; `dynamic` admits -1 (a size known only at run time).
Expected<Shape> parseShapeField(const Json &j, bool dynamic) {
  if (!j.is_array())
    return Status::error("'shape' must be an array of sizes");
  Shape shape;
  for (const Json &d : j) {
    int64_t least = dynamic ? -1 : 0;
    if (!d.is_number_integer() || d.get<int64_t>() < least)
      return Status::error(
          dynamic ? strCat("'shape' ", j.dump(),
                           " has a dimension that is neither a size nor -1")
                  : strCat("'shape' ", j.dump(),
                           " has a dimension that is not a static size; "
                           "packages are compiled for static shapes"));
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

/// What a signature value or weight must be.
constexpr const char *kNameTypeShape = "an object with name, dtype and shape";

Status parseNameTypeShape(const Json &j, std::string &name, DType &dtype,
                          Shape &shape, bool dynamic) {
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
  Expected<Shape> s = parseShapeField(*shapeIt, dynamic);
  if (!s)
    return s.status();
  shape = s.take();
  if (!isShapeWithinLimits(shape))
    return Status::error(strCat("'shape' ", shapeIt->dump(),
                                " is larger than the limit of 2^40 elements "
                                "(docs/reliability.md)"));
  return Status::ok();
}

Status parseValue(const Json &j, ManifestValue &v, bool dynamic) {
  // A value with "dims" may have -1 where a dim follows a size symbol.
  const auto dimsIt = j.find("dims");
  bool hasDims = dimsIt != j.end();
  KILN_RETURN_IF_ERROR(
      parseNameTypeShape(j, v.name, v.dtype, v.shape, dynamic || hasDims));
  if (j.contains("bytes")) {
    uint64_t bytes = 0;
    KILN_RETURN_IF_ERROR(Fields(j).count("bytes", bytes));
    v.bytes = bytes;
  }
  if (!hasDims)
    return Status::ok();
  if (!dimsIt->is_array() || dimsIt->size() != v.shape.size())
    return Status::error("'dims' must be an array of one size expression "
                         "per dim of 'shape'");
  for (size_t d = 0; d < v.shape.size(); ++d) {
    const Json &e = (*dimsIt)[d];
    if (!e.is_string())
      return Status::error("'dims' must hold strings");
    Expected<SymbolicDim> dim = SymbolicDim::parse(e.get<std::string>());
    if (!dim)
      return Status::error("'dims': " + dim.status().message());
    if (dim->isConstant() ? dim->den != 1 || dim->num != v.shape[d]
                          : v.shape[d] != -1)
      return Status::error(strCat("'dims' entry '", e.get<std::string>(),
                                  "' disagrees with the shape's size ",
                                  v.shape[d]));
    v.dims.push_back(e.get<std::string>());
  }
  return Status::ok();
}


/// Reads a fill weight's "fill": 2 hex digits per byte of one element of
/// `dtype`, in file order (a bool's is 00 or 01).
Expected<std::vector<uint8_t>> parseFill(const Json &j, DType dtype) {
  size_t size = dtypeSize(dtype);
  std::string what =
      strCat("'fill' must be the bytes of one ", dtypeName(dtype),
             " element as ", 2 * size, " hex digits");
  if (!j.is_string())
    return Status::error(what);
  const std::string &hex = j.get_ref<const std::string &>();
  if (hex.size() != 2 * size)
    return Status::error(strCat(what, ", not \"", hex.substr(0, 64),
                                hex.size() > 64 ? "...\"" : "\""));
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < size; ++i) {
    int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return Status::error(strCat(what, ", not \"", hex, "\""));
    bytes.push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  if (dtype == DType::Bool && bytes[0] > 1)
    return Status::error(
        strCat("'fill' \"", hex, "\" is not a bool (00 or 01)"));
  return bytes;
}

Status parseWeight(const Json &j, ManifestWeight &w) {
  KILN_RETURN_IF_ERROR(parseNameTypeShape(j, w.name, w.dtype, w.shape, false));
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.count("index", w.index));
  KILN_RETURN_IF_ERROR(fields.string("kind", w.kind));
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
  Fields at(*location);
  const char *bytesKey = location->contains("bytes") ? "bytes" : "length";
  w.bytes = expected;
  KILN_RETURN_IF_ERROR(at.count(bytesKey, w.bytes));
  if (auto fill = j.find("fill"); fill != j.end()) {
    // A fill weight: one element, materialised by the loader.
    if (w.external || j.contains("file") || j.contains("location"))
      return Status::error("has both 'fill' and a file; a fill weight has no "
                           "data in a file");
    Expected<std::vector<uint8_t>> bytes = parseFill(*fill, w.dtype);
    if (!bytes)
      return bytes.status();
    w.fill = bytes.take();
    if (w.bytes != expected)
      return Status::error(strCat("holds ", w.bytes, " bytes but ",
                                  dtypeName(w.dtype), shapeToString(w.shape),
                                  " needs ", expected));
    return Status::ok();
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
  KILN_RETURN_IF_ERROR(at.count("offset", w.offset));
  if (w.bytes != expected)
    return Status::error(strCat("holds ", w.bytes, " bytes but ",
                                dtypeName(w.dtype), shapeToString(w.shape),
                                " needs ", expected));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The graph package's records
//===----------------------------------------------------------------------===//

Status parseDims(const Json &j, std::array<int64_t, 3> &out, const char *key) {
  bool ok = j.is_array() && j.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i)
    ok = isCount(j[i]);
  if (!ok)
    return Status::error(
        strCat("'", key, "' must be an array of 3 non-negative integers"));
  for (size_t i = 0; i < 3; ++i)
    out[i] = j[i].get<int64_t>();
  return Status::ok();
}

Status parseKernel(const Json &j, ManifestKernel &k) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("name", k.name));
  KILN_RETURN_IF_ERROR(fields.string("kind", k.kind));
  KILN_RETURN_IF_ERROR(fields.strings("nodes", k.nodes));
  KILN_RETURN_IF_ERROR(fields.string("when", k.when));
  if (k.when != "run" && k.when != "load")
    return Status::error(
        strCat("'when' is '", k.when, "', not \"run\" or \"load\""));
  const Json *grid = fields.find("grid"), *block = fields.find("block");
  if (!grid && !block && !fields.find("shared_bytes"))
    return Status::ok();
  ManifestLaunch launch;
  if (grid)
    KILN_RETURN_IF_ERROR(parseDims(*grid, launch.grid, "grid"));
  if (block)
    KILN_RETURN_IF_ERROR(parseDims(*block, launch.block, "block"));
  KILN_RETURN_IF_ERROR(fields.count("shared_bytes", launch.sharedBytes));
  if (fields.find("launches")) {
    KILN_RETURN_IF_ERROR(fields.count("launches", launch.launches));
    if (launch.launches < 1)
      return Status::error(strCat("'launches' is ", launch.launches,
                                  "; a kernel is launched at least once"));
  }
  k.launch = launch;
  return Status::ok();
}

Status parseRuntimeStep(const Json &j, ManifestRuntimeStep &s) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("op", s.op));
  KILN_RETURN_IF_ERROR(fields.string("kind", s.kind));
  KILN_RETURN_IF_ERROR(fields.string("when", s.when));
  if (s.when != "run" && s.when != "load")
    return Status::error(
        strCat("'when' is '", s.when, "', not \"run\" or \"load\""));
  return fields.strings("nodes", s.nodes);
}

Status parseCounts(const Json &j, ManifestCounts &c) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.count("fused", c.fused));
  KILN_RETURN_IF_ERROR(fields.count("library", c.library));
  KILN_RETURN_IF_ERROR(fields.count("fallback", c.fallback));
  KILN_RETURN_IF_ERROR(fields.count("graphs", c.graphs));
  return fields.count("graph_breaks", c.graphBreaks);
}

Status parseBuffer(const Json &j, ManifestBuffer &b) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("name", b.name));
  KILN_RETURN_IF_ERROR(fields.count("offset", b.offset));
  KILN_RETURN_IF_ERROR(fields.count("bytes", b.bytes));
  KILN_RETURN_IF_ERROR(fields.integer("first", b.first));
  return fields.integer("last", b.last);
}

Status parseArenaValue(const Json &j, ManifestArenaValue &v) {
  KILN_RETURN_IF_ERROR(parseValue(j, v.value, false));
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.count("offset", v.offset));
  std::string role;
  KILN_RETURN_IF_ERROR(fields.string("role", role));
  if (role != "input" && role != "output")
    return Status::error(strCat("'role' is '", role,
                                "'; expected \"input\" or \"output\""));
  v.isInput = role == "input";
  uint64_t expected = static_cast<uint64_t>(numElements(v.value.shape)) *
                      dtypeSize(v.value.dtype);
  if (v.value.bytes && *v.value.bytes != expected)
    return Status::error(strCat("holds ", *v.value.bytes, " bytes but ",
                                dtypeName(v.value.dtype),
                                shapeToString(v.value.shape), " needs ",
                                expected));
  v.value.bytes = expected;
  return Status::ok();
}

Status parseMemoryPlan(const Json &j, ManifestMemoryPlan &plan) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.count("arena_bytes", plan.arenaBytes));
  Expected<const Json *> workspace = fields.object("library_workspace");
  if (!workspace)
    return workspace.status();
  if (*workspace) {
    Fields ws(**workspace);
    Status s = ws.count("offset", plan.libraryWorkspaceOffset);
    if (s)
      s = ws.count("bytes", plan.libraryWorkspaceBytes);
    KILN_RETURN_IF_ERROR(s.withContext("library_workspace"));
  }
  KILN_RETURN_IF_ERROR(
      parseList(fields, "buffers", "", plan.buffers, parseBuffer,
                [](const ManifestBuffer &b) { return b.name; }));
  KILN_RETURN_IF_ERROR(parseList(
      fields, "arena_values", "", plan.arenaValues, parseArenaValue,
      [](const ManifestArenaValue &v) { return v.value.name; }));
  // Each inside the arena (the runtime reads and writes there).
  for (const ManifestArenaValue &v : plan.arenaValues)
    if (v.offset > plan.arenaBytes ||
        static_cast<int64_t>(*v.value.bytes) > plan.arenaBytes - v.offset)
      return Status::error(strCat("arena_values ('", v.value.name,
                                  "'): bytes [", v.offset, ", +",
                                  *v.value.bytes, ") lie outside the ",
                                  plan.arenaBytes, "-byte arena"));
  return Status::ok();
}

Status parseOptions(const Json &j, ManifestOptions &o) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("target", o.target));
  KILN_RETURN_IF_ERROR(fields.string("weights", o.weights));
  KILN_RETURN_IF_ERROR(fields.string("cpu_isa", o.cpuIsa));
  KILN_RETURN_IF_ERROR(fields.string("cxx", o.cxx));
  Expected<const Json *> dims = fields.object("dims");
  if (!dims)
    return dims.status();
  if (*dims)
    for (const auto &[name, size] : (*dims)->items()) {
      if (!size.is_number_integer() || size.get<int64_t>() < 0)
        return Status::error(
            strCat("'dims': '", name, "' must be a non-negative integer"));
      o.dims.emplace_back(name, size.get<int64_t>());
    }
  return Status::ok();
}

Status parseCompileTimes(const Json &j, ManifestCompileTimes &t) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.number("trace", t.trace));
  KILN_RETURN_IF_ERROR(fields.number("kiln_passes", t.kilnPasses));
  KILN_RETURN_IF_ERROR(fields.number("codegen", t.codegen));
  KILN_RETURN_IF_ERROR(fields.number("host_compiler", t.hostCompiler));
  KILN_RETURN_IF_ERROR(fields.number("nvrtc", t.nvrtc));
  return fields.number("graphs", t.graphs);
}

Status parseCuda(const Json &j, ManifestCuda &c) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("arch", c.arch));
  KILN_RETURN_IF_ERROR(fields.string("cubin", c.cubin));
  KILN_RETURN_IF_ERROR(fields.string("ptx", c.ptx));
  return fields.string("source", c.source);
}

//===----------------------------------------------------------------------===//
// The program package's records
//===----------------------------------------------------------------------===//

Status parseGraph(const Json &j, ManifestGraph &g) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("name", g.name));
  KILN_RETURN_IF_ERROR(fields.string("package", g.package));
  KILN_RETURN_IF_ERROR(fields.string("where", g.where));
  return fields.count("ops", g.ops);
}

Status parseBreakOp(const Json &j, ManifestBreakOp &op) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("node", op.node));
  KILN_RETURN_IF_ERROR(fields.string("op_type", op.opType));
  return fields.string("kiln_op", op.kilnOp);
}

Status parseGraphBreak(const Json &j, ManifestGraphBreak &b) {
  KILN_RETURN_IF_ERROR(parseBreakOp(j, b.op));
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("kind", b.kind));
  KILN_RETURN_IF_ERROR(fields.string("reason", b.reason));
  KILN_RETURN_IF_ERROR(fields.string("detail", b.detail));
  KILN_RETURN_IF_ERROR(fields.string("hint", b.hint));
  KILN_RETURN_IF_ERROR(fields.string("where", b.where));
  return parseList(fields, "ops", "", b.ops, parseBreakOp,
                   [](const ManifestBreakOp &op) { return op.node; });
}

//===----------------------------------------------------------------------===//
// The training package's section
//===----------------------------------------------------------------------===//

Status parseGradient(const Json &j, ManifestGradient &g) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("parameter", g.parameter));
  KILN_RETURN_IF_ERROR(fields.string("value", g.value));
  if (g.parameter.empty() || g.value.empty())
    return Status::error("needs a 'parameter' and a 'value'");
  return Status::ok();
}

Status parseUpdate(const Json &j, ManifestUpdate &u) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("value", u.value));
  KILN_RETURN_IF_ERROR(fields.string("target", u.target));
  if (u.value.empty() || u.target.empty())
    return Status::error("needs a 'value' and a 'target'");
  return Status::ok();
}

Status parseOptimizer(const Json &j, ManifestOptimizer &o) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("kind", o.kind));
  if (o.kind != "sgd" && o.kind != "momentum" && o.kind != "adamw")
    return Status::error(strCat("'kind' is '", o.kind,
                                "'; expected \"sgd\", \"momentum\" or "
                                "\"adamw\""));
  for (auto [key, field] : {std::pair{"lr", &o.lr},
                            {"momentum", &o.momentum},
                            {"beta1", &o.beta1},
                            {"beta2", &o.beta2},
                            {"eps", &o.eps},
                            {"weight_decay", &o.weightDecay}})
    KILN_RETURN_IF_ERROR(fields.number(key, *field));
  return Status::ok();
}

/// A path inside the package: relative, not empty, without "..".
Status checkRelativePath(const char *key, const std::string &path) {
  bool ok = !path.empty() && path[0] != '/';
  for (size_t begin = 0; ok && begin <= path.size();) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos)
      end = path.size();
    ok = path.compare(begin, end - begin, "..") != 0;
    begin = end + 1;
  }
  if (!ok)
    return Status::error(strCat("'", key, "' is '", path,
                                "'; it must be a relative path inside the "
                                "package, without '..'"));
  return Status::ok();
}

Status parseTrainingGraphs(const Json &j, ManifestTrainingGraphs &g) {
  Fields fields(j);
  for (auto [key, field] : {std::pair{"forward", &g.forward},
                            {"backward", &g.backward},
                            {"optimizer", &g.optimizer},
                            {"accumulate", &g.accumulate}}) {
    KILN_RETURN_IF_ERROR(fields.string(key, *field));
    if (field == &g.accumulate && g.accumulate.empty())
      continue; // optional
    KILN_RETURN_IF_ERROR(checkRelativePath(key, *field));
  }
  return Status::ok();
}

/// Checks the names of a training section: unique parameters, state and
/// saved values; gradients and updates naming known tensors, once each.
Status checkTrainingNames(const ManifestTraining &t) {
  std::set<std::string> parameters, state, saved;
  for (const ManifestValue &v : t.parameters)
    if (!parameters.insert(v.name).second)
      return Status::error(strCat("parameter '", v.name, "' is listed twice"));
  for (const ManifestValue &v : t.state) {
    if (parameters.count(v.name))
      return Status::error(
          strCat("state '", v.name, "' has the name of a parameter"));
    if (!state.insert(v.name).second)
      return Status::error(strCat("state '", v.name, "' is listed twice"));
  }
  for (const ManifestValue &v : t.saved)
    if (!saved.insert(v.name).second)
      return Status::error(
          strCat("saved value '", v.name, "' is listed twice"));
  std::set<std::string> withGradient, gradientValues;
  for (const ManifestGradient &g : t.gradients) {
    if (!parameters.count(g.parameter))
      return Status::error(
          strCat("gradients: '", g.parameter, "' is not a parameter"));
    if (!withGradient.insert(g.parameter).second)
      return Status::error(
          strCat("gradients: parameter '", g.parameter, "' has two gradients"));
    if (!gradientValues.insert(g.value).second)
      return Status::error(
          strCat("gradients: value '", g.value, "' is listed twice"));
  }
  std::set<std::string> updated, updateValues;
  for (const ManifestUpdate &u : t.updates) {
    if (!parameters.count(u.target) && !state.count(u.target))
      return Status::error(strCat("updates: target '", u.target,
                                  "' is neither a parameter nor a state "
                                  "tensor"));
    if (!updated.insert(u.target).second)
      return Status::error(
          strCat("updates: '", u.target, "' is updated twice"));
    if (!updateValues.insert(u.value).second)
      return Status::error(
          strCat("updates: value '", u.value, "' is listed twice"));
  }
  return Status::ok();
}

Status parseTraining(const Json &j, ManifestTraining &t) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("loss", t.loss));
  KILN_RETURN_IF_ERROR(fields.string("weights_file", t.weightsFile));
  KILN_RETURN_IF_ERROR(checkRelativePath("weights_file", t.weightsFile));
  auto parse = [](const Json &e, ManifestValue &v) {
    return parseValue(e, v, false);
  };
  auto nameOf = [](const ManifestValue &v) { return v.name; };
  for (auto [key, list] : {std::pair{"parameters", &t.parameters},
                           {"state", &t.state},
                           {"saved", &t.saved}})
    KILN_RETURN_IF_ERROR(
        parseList(fields, key, "", *list, parse, nameOf, kNameTypeShape));
  KILN_RETURN_IF_ERROR(parseList(fields, "gradients", "", t.gradients,
                                 parseGradient,
                                 [](const auto &g) { return g.parameter; }));
  KILN_RETURN_IF_ERROR(parseList(fields, "updates", "", t.updates, parseUpdate,
                                 [](const auto &u) { return u.target; }));
  KILN_RETURN_IF_ERROR(fields.count("saved_bytes", t.savedBytes));
  KILN_RETURN_IF_ERROR(fields.count("recomputed_ops", t.recomputedOps));
  KILN_RETURN_IF_ERROR(fields.count("recompute_flops", t.recomputeFlops));
  KILN_RETURN_IF_ERROR(
      fields.count("saved_bytes_no_recompute", t.savedBytesNoRecompute));
  KILN_RETURN_IF_ERROR(
      parseObject(fields, "optimizer", t.optimizer, parseOptimizer));
  KILN_RETURN_IF_ERROR(
      parseObject(fields, "graphs", t.graphs, parseTrainingGraphs));
  return checkTrainingNames(t);
}

Status parseFile(const Json &j, ManifestFile &f) {
  Fields fields(j);
  KILN_RETURN_IF_ERROR(fields.string("path", f.path));
  KILN_RETURN_IF_ERROR(fields.count("bytes", f.bytes));
  KILN_RETURN_IF_ERROR(fields.string("checksum", f.checksum));
  if (f.path.empty() || f.checksum.empty())
    return Status::error("needs 'path', 'bytes' and 'checksum'");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The top level
//===----------------------------------------------------------------------===//

Status parseHeader(const Fields &fields, PackageManifest &m) {
  if (const Json *format = fields.find("format")) {
    if (!format->is_string() || format->get<std::string>() != kManifestFormat)
      return Status::error(strCat("'format' is ", format->dump(), ", not \"",
                                  kManifestFormat,
                                  "\" (not a Kiln package manifest)"));
    m.format = format->get<std::string>();
  }
  KILN_RETURN_IF_ERROR(fields.integer("format_version", m.formatVersion));
  if (m.formatVersion < 1 ||
      m.formatVersion > kManifestSizeSymbolsFormatVersion)
    return Status::error(strCat("'format_version' is ", m.formatVersion,
                                "; this runtime reads 1 to ",
                                kManifestSizeSymbolsFormatVersion,
                                " (recompile the package with this Kiln)"));
  if (const Json *kind = fields.find("kind")) {
    std::string k = kind->is_string() ? kind->get<std::string>() : "";
    if (k != "program" && k != "training")
      return Status::error(
          "'kind' must be \"program\" or \"training\" when present");
    m.kind = k == "program" ? PackageKind::Program : PackageKind::Training;
  }
  KILN_RETURN_IF_ERROR(fields.integer("abi_version", m.abiVersion));
  if (const Json *target = fields.find("target");
      target && !target->is_string())
    return Status::error("'target' must be a string (\"cpu\" or \"cuda\")");
  for (auto [key, field] : {std::pair{"model", &m.model},
                            {"source", &m.source},
                            {"target", &m.target},
                            {"library", &m.library},
                            {"symbol_prefix", &m.symbolPrefix},
                            {"weights_file", &m.weightsFile},
                            {"isa", &m.isa}})
    KILN_RETURN_IF_ERROR(fields.string(key, *field));
  // The library is opened and its symbols looked up by these names: a
  // file of the package folder and a C identifier, nothing else.
  if (!m.library.empty() &&
      (m.library == "." || m.library == ".." ||
       m.library.find_first_of("/\\") != std::string::npos))
    return Status::error("'library' must be a file name in the package "
                         "folder, not '" +
                         m.library + "'");
  for (size_t i = 0; i < m.symbolPrefix.size(); ++i) {
    unsigned char c = m.symbolPrefix[i];
    if (!(std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c))))
      return Status::error("'symbol_prefix' must be a C identifier, not '" +
                           m.symbolPrefix + "'");
  }
  return Status::ok();
}

Status parseSignature(const Fields &fields, PackageManifest &m) {
  Expected<const Json *> sig = fields.object("signature");
  if (!sig)
    return sig.status();
  m.hasSignature = *sig != nullptr;
  if (!*sig)
    return Status::ok();
  // A program's signature may have sizes known only at run time (-1).
  bool dynamic = m.kind == PackageKind::Program;
  auto parse = [dynamic](const Json &j, ManifestValue &v) {
    return parseValue(j, v, dynamic);
  };
  auto nameOf = [](const ManifestValue &v) { return v.name; };
  Fields sigFields(**sig);
  KILN_RETURN_IF_ERROR(parseList(sigFields, "inputs", "signature.", m.inputs,
                                 parse, nameOf, kNameTypeShape));
  return parseList(sigFields, "outputs", "signature.", m.outputs, parse, nameOf,
                   kNameTypeShape);
}

Expected<PackageManifest> parseRoot(const Json &root) {
  if (!root.is_object())
    return Status::error("the top level is not a JSON object");
  PackageManifest m;
  Fields fields(root);
  KILN_RETURN_IF_ERROR(parseHeader(fields, m));
  KILN_RETURN_IF_ERROR(parseSignature(fields, m));
  KILN_RETURN_IF_ERROR(parseSizeSymbols(fields, m));

  if (Expected<const Json *> program = fields.object("program"); !program)
    return program.status();
  else if (*program) {
    Fields files(**program);
    Status s = files.string("json", m.programJson);
    if (s)
      s = files.string("data", m.programData);
    KILN_RETURN_IF_ERROR(s.withContext("program"));
  }
  KILN_RETURN_IF_ERROR(parseList(
      fields, "weights", "", m.weights, parseWeight,
      [](const auto &w) { return w.name; }, kNameTypeShape));
  KILN_RETURN_IF_ERROR(parseList(fields, "kernels", "", m.kernels, parseKernel,
                                 [](const auto &k) { return k.name; }));
  KILN_RETURN_IF_ERROR(parseList(fields, "reference_ops", "", m.referenceOps,
                                 parseRuntimeStep,
                                 [](const auto &s) { return s.op; }));
  KILN_RETURN_IF_ERROR(parseList(fields, "graphs", "", m.graphs, parseGraph,
                                 [](const auto &g) { return g.name; }));
  KILN_RETURN_IF_ERROR(
      fields.strings("custom_op_libraries", m.customOpLibraries));
  KILN_RETURN_IF_ERROR(parseList(fields, "graph_breaks", "", m.graphBreaks,
                                 parseGraphBreak,
                                 [](const auto &b) { return b.op.node; }));
  if (fields.find("counts")) {
    m.counts.emplace();
    KILN_RETURN_IF_ERROR(parseObject(fields, "counts", *m.counts, parseCounts));
  }
  KILN_RETURN_IF_ERROR(
      parseObject(fields, "memory_plan", m.memoryPlan, parseMemoryPlan));
  KILN_RETURN_IF_ERROR(parseObject(fields, "options", m.options, parseOptions));
  if (Expected<const Json *> versions = fields.object("versions"); !versions)
    return versions.status();
  else if (*versions) {
    Fields v(**versions);
    Status s = v.string("kiln", m.kilnVersion);
    if (s)
      s = v.integer("abi", m.versionsAbi);
    KILN_RETURN_IF_ERROR(s.withContext("versions"));
  }
  if (Expected<const Json *> host = fields.object("host_compiler"); !host)
    return host.status();
  else if (*host) {
    Fields h(**host);
    Status s = h.string("command", m.hostCompilerCommand);
    if (s)
      s = h.string("warnings", m.hostCompilerWarnings);
    KILN_RETURN_IF_ERROR(s.withContext("host_compiler"));
  }
  KILN_RETURN_IF_ERROR(parseObject(fields, "compile_times_s", m.compileTimes,
                                   parseCompileTimes));
  if (fields.find("cuda")) {
    m.cuda.emplace();
    KILN_RETURN_IF_ERROR(parseObject(fields, "cuda", *m.cuda, parseCuda));
  }
  if (fields.find("training")) {
    m.training.emplace();
    KILN_RETURN_IF_ERROR(
        parseObject(fields, "training", *m.training, parseTraining));
  }
  KILN_RETURN_IF_ERROR(parseList(fields, "files", "", m.files, parseFile,
                                 [](const auto &f) { return f.path; }));
  if (m.kind == PackageKind::Training && !m.training)
    return Status::error("a training package (\"kind\": \"training\") "
                         "needs a 'training' section");
  return m;
}

} // namespace

Expected<PackageManifest> parseManifest(const std::string &text,
                                        const std::string &path) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception &e) {
    return Status::error(strCat(path, ": not valid JSON: ", e.what()));
  }
  try {
    Expected<PackageManifest> m = parseRoot(root);
    if (!m)
      return m.status().withContext(path);
    return m;
  } catch (const Json::exception &e) {
    return Status::error(strCat(path, ": malformed manifest: ", e.what()));
  }
}

Expected<PackageManifest> readManifest(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(strCat(path,
                                ": cannot open the package manifest (is the "
                                "folder a package written by kiln compile?)"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parseManifest(buffer.str(), path);
}

} // namespace kiln
