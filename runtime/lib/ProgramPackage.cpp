//===- ProgramPackage.cpp - Running packages with graph breaks ------------===//
//
// This file implements ProgramPackage: loading reads the glue with
// readProgramFiles and loads each called graph as a kiln::Model; running
// hands the glue to runProgram with a callGraph hook that runs graph
// `index` through its Model (inputs matched to the graph's input names in
// order, outputs returned on the CPU, where the glue and the eager regions
// run). The generated wrapper of each graph stays the fast path inside it.
//
//===----------------------------------------------------------------------===//

#include "ProgramPackage.h"

#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/ProgramIO.h"

#include <chrono>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace kiln {

namespace {
bool containsName(const std::vector<ValueSignature> &list,
                        const std::string &name) {
  for (const ValueSignature &sig : list)
    if (sig.name == name)
      return true;
  return false;
}
} // namespace

Expected<std::unique_ptr<ProgramPackage>>
ProgramPackage::load(const std::string &dir, const std::string &target,
                     const LoadOptions &options) {
  auto package = std::make_unique<ProgramPackage>();
  Expected<Program> program = readProgramFiles(dir);
  if (!program)
    return program.status();
  package->program_ = program.take();
  package->device_ = target == "cuda" ? Device::CUDA : Device::CPU;
  std::set<std::string> seen, declared;
  for (const std::string &name : package->program_.graphs) {
    // Graph names are folder names under graphs/, nothing else.
    if (name.empty() || name.find('/') != std::string::npos ||
        name.find("..") != std::string::npos || !seen.insert(name).second)
      return Status::error(strCat(dir, "/program.json: graph name '", name,
                                  "' is empty, a path or listed twice (a "
                                  "corrupt package: recompile it)"));
    std::string graphDir = (fs::path(dir) / "graphs" / name).string();
    // Each graph gets the caller's weights it declares, and only those.
    LoadOptions graphOptions = options;
    graphOptions.weights.clear();
    Expected<PackageManifest> manifest =
        readManifest((fs::path(graphDir) / "manifest.json").string());
    if (manifest)
      for (const ManifestWeight &w : manifest->weights)
        for (const auto &entry : options.weights)
          if (entry.first == w.name) {
            graphOptions.weights.push_back(entry);
            declared.insert(w.name);
          }
    Expected<Model> graph = Model::load(graphDir, graphOptions);
    if (!graph)
      return graph.status().withContext(
          strCat(dir, ": compiled graph '", name, "'"));
    for (const ValueSignature &w : graph->weights())
      if (containsName(package->weights_, w.name) == false)
        package->weights_.push_back(w);
    package->graphs_.push_back(graph.take());
  }
  for (const auto &entry : options.weights)
    if (!declared.count(entry.first))
      return Status::error(strCat(dir, ": unknown weight '", entry.first,
                                  "': no compiled graph of the program "
                                  "declares it"));
  return package;
}

size_t ProgramPackage::arenaBytes() const {
  size_t bytes = 0;
  for (const Model &graph : graphs_)
    bytes += graph.arenaBytes();
  return bytes;
}

Expected<NamedTensors> ProgramPackage::run(const NamedTensors &inputs,
                                           const RunOptions &options) const {
  // The glue runs on the host.
  NamedTensors hostInputs;
  hostInputs.reserve(inputs.size());
  for (const auto &[name, tensor] : inputs) {
    if (tensor.defined() && tensor.device() != Device::CPU) {
      Expected<Tensor> host = tensor.to(Device::CPU);
      if (!host)
        return host.status().withContext(strCat("input '", name, "'"));
      if (options.stats)
        options.stats->copiedBytes += host->nbytes();
      hostInputs.emplace_back(name, host.take());
    } else {
      hostInputs.emplace_back(name, tensor);
    }
  }

  ProgramHooks hooks;
  hooks.callGraph = [&](int index, const std::vector<Tensor> &args)
      -> Expected<std::vector<Tensor>> {
    if (index < 0 || index >= (int)graphs_.size())
      return Status::error(
          strCat("malformed program: call of graph #", index, " of ",
                 graphs_.size()));
    const Model &graph = graphs_[index];
    const std::string &name = program_.graphs[index];
    if (args.size() != graph.inputs().size())
      return Status::error(strCat("malformed program: graph '", name,
                                  "' takes ", graph.inputs().size(),
                                  " inputs but the call passes ", args.size()));
    NamedTensors named;
    named.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      named.emplace_back(graph.inputs()[i].name, args[i]);
      if (options.stats && device_ == Device::CUDA)
        options.stats->copiedBytes += args[i].nbytes();
    }
    // A profiled run profiles its graphs: each adds its run span and its
    // steps' spans.
    RunOptions graphOptions;
    graphOptions.trace = options.trace;
    Expected<NamedTensors> outputs = graph.run(named, graphOptions);
    if (!outputs)
      return outputs.status().withContext(strCat("compiled graph '", name,
                                                 "'"));
    std::vector<Tensor> results;
    results.reserve(outputs->size());
    for (auto &entry : *outputs) {
      if (options.stats && device_ == Device::CUDA)
        options.stats->copiedBytes += entry.second.nbytes();
      results.push_back(std::move(entry.second));
    }
    return results;
  };

  Expected<NamedTensors> outputs =
      runProgram(program_, hostInputs, {}, &hooks, options.stats,
                 options.checkNan, options.trace);
  if (!outputs || options.outputDevice == Device::CPU)
    return outputs;
  for (auto &entry : *outputs) {
    Expected<Tensor> moved = entry.second.to(options.outputDevice);
    if (!moved)
      return moved.status().withContext(strCat("output '", entry.first, "'"));
    if (options.stats)
      options.stats->copiedBytes += moved->nbytes();
    entry.second = moved.take();
  }
  return outputs;
}

} // namespace kiln
