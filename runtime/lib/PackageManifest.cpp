//===- PackageManifest.cpp - Writing a package's manifest.json ------------===//
//
// This file implements formatManifest and writeManifest, the writer of the
// schema in kiln/runtime/PackageManifest.h (the reader is in
// PackageManifestReader.cpp). The writer uses nlohmann::ordered_json so the
// keys come out in the order the header documents: a graph package's
// manifest looks exactly as it did when codegen/Packager.cpp wrote it by
// hand. Which keys are written follows the manifest's kind; optional
// fields are written only when set.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/PackageManifest.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

namespace kiln {

namespace {

using Json = nlohmann::ordered_json;

Json valueJson(const ManifestValue &v) {
  Json j = {
      {"name", v.name}, {"dtype", dtypeName(v.dtype)}, {"shape", v.shape}};
  if (v.bytes)
    j["bytes"] = *v.bytes;
  if (!v.dims.empty())
    j["dims"] = v.dims;
  if (v.anyRank)
    j["any_rank"] = true;
  return j;
}

Json weightJson(const ManifestWeight &w) {
  Json j = {{"name", w.name},
            {"dtype", dtypeName(w.dtype)},
            {"shape", w.shape},
            {"bytes", w.bytes}};
  if (w.index)
    j["index"] = *w.index;
  if (!w.kind.empty())
    j["kind"] = w.kind;
  if (w.fill) {
    // The element's bytes in file order, two lowercase hex digits each.
    static const char *kDigits = "0123456789abcdef";
    std::string hex;
    for (uint8_t byte : *w.fill) {
      hex += kDigits[byte >> 4];
      hex += kDigits[byte & 15];
    }
    j["fill"] = hex;
  } else if (w.external) {
    j["external"] = {
        {"file", w.file}, {"offset", w.offset}, {"bytes", w.bytes}};
  } else if (!w.file.empty()) {
    j["file"] = w.file;
    j["offset"] = w.offset;
  }
  return j;
}

Json kernelJson(const ManifestKernel &k) {
  Json j = {{"name", k.name},
            {"kind", k.kind},
            {"nodes", k.nodes},
            {"when", k.when}};
  if (k.launch) {
    j["grid"] = k.launch->grid;
    j["block"] = k.launch->block;
    j["shared_bytes"] = k.launch->sharedBytes;
    if (k.launch->launches != 1)
      j["launches"] = k.launch->launches;
  }
  return j;
}

Json breakOpJson(const ManifestBreakOp &op) {
  return Json{
      {"node", op.node}, {"op_type", op.opType}, {"kiln_op", op.kilnOp}};
}

Json graphBreakJson(const ManifestGraphBreak &b) {
  Json j = breakOpJson(b.op);
  j["kind"] = b.kind;
  j["reason"] = b.reason;
  j["detail"] = b.detail;
  j["hint"] = b.hint;
  j["where"] = b.where;
  Json ops = Json::array();
  for (const ManifestBreakOp &op : b.ops)
    ops.push_back(breakOpJson(op));
  j["ops"] = std::move(ops);
  return j;
}

Json countsJson(const ManifestCounts &c) {
  Json j = {
      {"fused", c.fused}, {"library", c.library}, {"fallback", c.fallback}};
  if (c.graphs)
    j["graphs"] = *c.graphs;
  if (c.graphBreaks)
    j["graph_breaks"] = *c.graphBreaks;
  return j;
}

template <typename T, typename Fn>
Json listJson(const std::vector<T> &items, Fn &&toJson) {
  Json list = Json::array();
  for (const T &item : items)
    list.push_back(toJson(item));
  return list;
}

Json signatureJson(const PackageManifest &m) {
  return Json{{"inputs", listJson(m.inputs, valueJson)},
              {"outputs", listJson(m.outputs, valueJson)}};
}

Json graphManifestJson(const PackageManifest &m) {
  Json j = {{"format", m.format}, {"format_version", m.formatVersion}};
  if (m.abiVersion)
    j["abi_version"] = *m.abiVersion;
  j["model"] = m.model;
  j["source"] = m.source;
  j["target"] = m.target;
  j["library"] = m.library;
  if (!m.symbolPrefix.empty())
    j["symbol_prefix"] = m.symbolPrefix;
  if (m.hasSignature)
    j["signature"] = signatureJson(m);
  if (!m.sizeSymbols.empty())
    j["size_symbols"] = listJson(m.sizeSymbols, [](const SizeSymbol &s) {
      return Json{{"name", s.name}, {"min", s.min}, {"max", s.max}};
    });
  j["weights_file"] = m.weightsFile;
  j["weights"] = listJson(m.weights, weightJson);
  j["kernels"] = listJson(m.kernels, kernelJson);
  j["reference_ops"] = listJson(m.referenceOps, [](const auto &s) {
    return Json{
        {"op", s.op}, {"kind", s.kind}, {"nodes", s.nodes}, {"when", s.when}};
  });
  if (m.counts)
    j["counts"] = countsJson(*m.counts);
  const ManifestMemoryPlan &plan = m.memoryPlan;
  j["memory_plan"] = {
      {"arena_bytes", plan.arenaBytes},
      {"library_workspace",
       {{"offset", plan.libraryWorkspaceOffset},
        {"bytes", plan.libraryWorkspaceBytes}}},
      {"buffers", listJson(plan.buffers, [](const ManifestBuffer &b) {
         return Json{{"name", b.name},
                     {"offset", b.offset},
                     {"bytes", b.bytes},
                     {"first", b.first},
                     {"last", b.last}};
       })}};
  if (!plan.arenaValues.empty())
    j["memory_plan"]["arena_values"] =
        listJson(plan.arenaValues, [](const ManifestArenaValue &v) {
          Json value = valueJson(v.value);
          value["offset"] = v.offset;
          value["role"] = v.isInput ? "input" : "output";
          return value;
        });
  Json dims = Json::object();
  for (const auto &[name, size] : m.options.dims)
    dims[name] = size;
  j["options"] = {{"target", m.options.target},
                  {"weights", m.options.weights},
                  {"cpu_isa", m.options.cpuIsa},
                  {"dims", dims},
                  {"cxx", m.options.cxx}};
  j["versions"] = {{"kiln", m.kilnVersion}, {"abi", m.versionsAbi}};
  j["host_compiler"] = {{"command", m.hostCompilerCommand},
                        {"warnings", m.hostCompilerWarnings}};
  j["isa"] = m.isa;
  const ManifestCompileTimes &t = m.compileTimes;
  j["compile_times_s"] = {{"trace", t.trace},
                          {"kiln_passes", t.kilnPasses},
                          {"codegen", t.codegen},
                          {"host_compiler", t.hostCompiler},
                          {"nvrtc", t.nvrtc}};
  if (m.cuda)
    j["cuda"] = {{"arch", m.cuda->arch},
                 {"cubin", m.cuda->cubin},
                 {"ptx", m.cuda->ptx},
                 {"source", m.cuda->source}};
  return j;
}

Json programManifestJson(const PackageManifest &m) {
  Json j = {{"format", m.format},
            {"format_version", m.formatVersion},
            {"kind", "program"},
            {"source", m.source},
            {"target", m.target},
            {"program", {{"json", m.programJson}, {"data", m.programData}}}};
  if (m.hasSignature)
    j["signature"] = signatureJson(m);
  j["graphs"] = listJson(m.graphs, [](const ManifestGraph &g) {
    return Json{{"name", g.name},
                {"package", g.package},
                {"where", g.where},
                {"ops", g.ops}};
  });
  j["graph_breaks"] = listJson(m.graphBreaks, graphBreakJson);
  if (m.counts)
    j["counts"] = countsJson(*m.counts);
  j["memory_plan"] = {{"arena_bytes", m.memoryPlan.arenaBytes}};
  j["compile_times_s"] = {{"trace", m.compileTimes.trace},
                          {"graphs", m.compileTimes.graphs}};
  return j;
}

/// The "graphs" object of a training section (accumulate only when set).
static Json graphsJson(const ManifestTrainingGraphs &g) {
  Json j = {{"forward", g.forward},
            {"backward", g.backward},
            {"optimizer", g.optimizer}};
  if (!g.accumulate.empty())
    j["accumulate"] = g.accumulate;
  return j;
}

Json trainingJson(const ManifestTraining &t) {
  const ManifestOptimizer &o = t.optimizer;
  return Json{
      {"loss", t.loss},
      {"parameters", listJson(t.parameters, valueJson)},
      {"weights_file", t.weightsFile},
      {"state", listJson(t.state, valueJson)},
      {"gradients",
       listJson(t.gradients,
                [](const ManifestGradient &g) {
                  return Json{{"parameter", g.parameter}, {"value", g.value}};
                })},
      {"updates",
       listJson(t.updates,
                [](const ManifestUpdate &u) {
                  return Json{{"value", u.value}, {"target", u.target}};
                })},
      {"saved", listJson(t.saved, valueJson)},
      {"saved_bytes", t.savedBytes},
      {"recomputed_ops", t.recomputedOps},
      {"recompute_flops", t.recomputeFlops},
      {"saved_bytes_no_recompute", t.savedBytesNoRecompute},
      {"optimizer",
       {{"kind", o.kind},
        {"lr", o.lr},
        {"momentum", o.momentum},
        {"beta1", o.beta1},
        {"beta2", o.beta2},
        {"eps", o.eps},
        {"weight_decay", o.weightDecay}}},
      {"graphs", graphsJson(t.graphs)}};
}

Json trainingManifestJson(const PackageManifest &m) {
  Json j = {{"format", m.format},
            {"format_version", m.formatVersion},
            {"kind", "training"},
            {"source", m.source},
            {"target", m.target}};
  if (m.hasSignature)
    j["signature"] = signatureJson(m);
  j["training"] = trainingJson(m.training ? *m.training : ManifestTraining());
  if (m.counts)
    j["counts"] = countsJson(*m.counts);
  j["memory_plan"] = {{"arena_bytes", m.memoryPlan.arenaBytes}};
  j["compile_times_s"] = {{"trace", m.compileTimes.trace},
                          {"graphs", m.compileTimes.graphs}};
  return j;
}

} // namespace

std::string formatManifest(const PackageManifest &manifest) {
  Json j = manifest.kind == PackageKind::Program ? programManifestJson(manifest)
           : manifest.kind == PackageKind::Training
               ? trainingManifestJson(manifest)
               : graphManifestJson(manifest);
  if (!manifest.customOpLibraries.empty())
    j["custom_op_libraries"] = manifest.customOpLibraries;
  if (!manifest.files.empty())
    j["files"] = listJson(manifest.files, [](const ManifestFile &f) {
      return Json{
          {"path", f.path}, {"bytes", f.bytes}, {"checksum", f.checksum}};
    });
  // Invalid UTF-8 (a host compiler's warnings, a path) is replaced, not
  // thrown.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status writeManifest(const PackageManifest &manifest, const std::string &path) {
  std::string text = formatManifest(manifest);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return Status::error(
          strCat(path, ": cannot open '", tmp, "' for writing"));
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::error(strCat(path, ": writing '", tmp, "' failed"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::error(
        strCat(path, ": cannot rename '", tmp, "' to the final name"));
  }
  return Status::ok();
}

} // namespace kiln
