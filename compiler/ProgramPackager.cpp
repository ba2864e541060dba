//===- ProgramPackager.cpp - Packages of programs with graph breaks -------===//
//
// This file implements writeProgramPackage: each `kiln.graph` function of a
// planned module is copied into a module of its own and compiled like a
// model without breaks (compileGraph: passes, kernels, package) into
// graphs/<name>/; @main, the program, becomes a runtime Program (eager
// regions, if/loop, calls of the graphs by index) written as program.json +
// program.bin; manifest.json says "kind": "program" and records the
// signature, the graphs, the graph breaks and the counts summed over the
// graphs. Everything is written into a temp folder that replaces the output
// folder at the end, so a failure leaves no half-written package.
//
//===----------------------------------------------------------------------===//

#include "compiler/ProgramPackager.h"
#include "codegen/Packager.h"
#include "compiler/ProgramBuilder.h"

#include "kiln/runtime/ProgramIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FileSystem.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <unistd.h>

using namespace mlir;
using json = nlohmann::json;

namespace kiln {

namespace {

json signatureJson(const ValueSignature &sig) {
  return json{{"name", sig.name},
              {"dtype", dtypeName(sig.dtype)},
              {"shape", sig.shape}};
}

json sourceJson(const GraphBreakOp &op) {
  return json{{"node", op.source.node},
              {"op_type", op.source.opType},
              {"kiln_op", op.kilnOp}};
}

json breaksJson(const GraphBreakReport &report) {
  json list = json::array();
  for (const GraphBreakEntry &entry : report.breaks) {
    json ops = json::array();
    for (const GraphBreakOp &op : entry.ops)
      ops.push_back(sourceJson(op));
    json e = sourceJson(entry.op);
    e["kind"] = entry.kind;
    e["reason"] = entry.reason.reason;
    e["detail"] = entry.reason.detail;
    e["hint"] = entry.reason.hint;
    e["where"] = entry.where;
    e["ops"] = ops;
    list.push_back(std::move(e));
  }
  return list;
}

/// A module holding a copy of `graph` and the source module's attributes.
OwningOpRef<ModuleOp> extractGraph(ModuleOp module, func::FuncOp graph) {
  OwningOpRef<ModuleOp> copy = ModuleOp::create(module.getLoc());
  for (NamedAttribute attr : module->getAttrs())
    if (attr.getName().strref().starts_with("kiln."))
      (*copy)->setAttr(attr.getName(), attr.getValue());
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(copy->getBody());
  builder.clone(*graph.getOperation());
  return copy;
}

} // namespace

LogicalResult writeProgramPackage(ModuleOp module,
                                  const CompileOptions &options,
                                  const GraphBreakReport &report) {
  Location loc = module.getLoc();
  const std::string &dir = options.outputDir;
  if (failed(checkOutputDir(loc, dir)))
    return failure();
  std::string tmp = dir + ".tmp-" + std::to_string(::getpid());
  removeTree(tmp);
  if (std::error_code ec = llvm::sys::fs::create_directories(tmp + "/graphs"))
    return emitError(loc) << "cannot create '" << tmp << "': " << ec.message();
  auto fail = [&] {
    removeTree(tmp);
    return failure();
  };

  // The compiled graphs, each an ordinary package.
  func::FuncOp program = findProgramFunction(module);
  assert(program && program->hasAttr("kiln.program") &&
         "writeProgramPackage on a module without a program");
  SmallVector<func::FuncOp> graphs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr("kiln.graph"))
      graphs.push_back(func);
  json graphsJson = json::array();
  json counts = {{"fused", 0}, {"library", 0}, {"fallback", 0}};
  int64_t arenaBytes = 0;
  double graphSeconds = 0;
  for (func::FuncOp graph : graphs) {
    std::string name = graph.getName().str();
    std::string graphDir = tmp + "/graphs/" + name;
    OwningOpRef<ModuleOp> graphModule = extractGraph(module, graph);
    auto start = std::chrono::steady_clock::now();
    StepCounts steps;
    if (failed(compileGraph(*graphModule, options, name, graphDir, &steps)))
      return fail();
    graphSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    counts["fused"] = counts["fused"].get<int>() + steps.fused;
    counts["library"] = counts["library"].get<int>() + steps.library;
    counts["fallback"] = counts["fallback"].get<int>() + steps.fallback;
    arenaBytes += steps.arenaBytes;
    auto summary = llvm::find_if(report.graphs, [&](const GraphSummary &g) {
      return g.name == name;
    });
    graphsJson.push_back(
        json{{"name", name},
             {"package", "graphs/" + name},
             {"where", summary != report.graphs.end() ? summary->where : ""},
             {"ops", summary != report.graphs.end() ? summary->numOps : 0}});
  }

  // The glue: a runtime Program whose "call" nodes name the graphs.
  Expected<Program> glue = buildProgram(program);
  if (!glue) {
    emitError(loc) << "cannot build the program of '" << options.modelPath
                   << "': " << glue.status().message();
    return fail();
  }
  for (const std::string &name : glue->graphs)
    if (!llvm::sys::fs::exists(tmp + "/graphs/" + name + "/manifest.json")) {
      emitError(loc) << "the program calls graph '" << name
                     << "', which was not compiled (a Kiln bug)";
      return fail();
    }
  if (Status written = writeProgramFiles(*glue, tmp); !written) {
    emitError(loc) << written.message();
    return fail();
  }

  // The manifest.
  json inputs = json::array(), outputs = json::array();
  for (const ValueSignature &sig : glue->inputs)
    inputs.push_back(signatureJson(sig));
  for (const ValueSignature &sig : glue->outputs)
    outputs.push_back(signatureJson(sig));
  counts["graphs"] = graphs.size();
  counts["graph_breaks"] = report.breaks.size();
  json manifest = {
      {"format", "kiln-package"},
      {"format_version", 1},
      {"kind", "program"},
      {"source", options.modelPath},
      {"target", options.target},
      {"program", {{"json", "program.json"}, {"data", "program.bin"}}},
      {"signature", {{"inputs", inputs}, {"outputs", outputs}}},
      {"graphs", graphsJson},
      {"graph_breaks", breaksJson(report)},
      {"counts", counts},
      {"memory_plan", {{"arena_bytes", arenaBytes}}},
      {"compile_times_s",
       {{"trace", options.traceSeconds}, {"graphs", graphSeconds}}},
  };
  std::ofstream out(tmp + "/manifest.json");
  out << manifest.dump(2) << "\n";
  out.close();
  if (!out) {
    emitError(loc) << "cannot write '" << tmp << "/manifest.json'";
    return fail();
  }
  if (failed(installPackage(loc, tmp, dir)))
    return fail();
  return success();
}

} // namespace kiln
