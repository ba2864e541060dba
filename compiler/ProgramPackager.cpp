//===- ProgramPackager.cpp - Packages of programs with graph breaks -------===//
//
// This file implements writeProgramPackage: each `kiln.graph` function of a
// planned module is copied into a module of its own and compiled like a
// model without breaks (compileGraph: passes, kernels, package) into
// graphs/<name>/; @main, the program, becomes a runtime Program (eager
// regions, if/loop, calls of the graphs by index) written as program.json +
// program.bin; manifest.json (written through the runtime's manifest
// schema, kiln/runtime/PackageManifest.h) says "kind": "program" and records
// the signature, the graphs, the graph breaks and the counts summed over the
// graphs. Everything is written into a temp folder that replaces the output
// folder at the end, so a failure leaves no half-written package.
//
//===----------------------------------------------------------------------===//

#include "compiler/ProgramPackager.h"
#include "codegen/CustomOpLibraries.h"
#include "codegen/Packager.h"
#include "compiler/ProgramBuilder.h"

#include "kiln/runtime/PackageManifest.h"
#include "kiln/runtime/ProgramIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FileSystem.h"

#include <chrono>

using namespace mlir;

namespace kiln {

namespace {

ManifestValue manifestValue(const ValueSignature &sig) {
  ManifestValue v;
  v.name = sig.name;
  v.dtype = sig.dtype;
  v.shape = sig.shape;
  v.anyRank = sig.anyRank;
  return v;
}

ManifestBreakOp manifestBreakOp(const GraphBreakOp &op) {
  return ManifestBreakOp{op.source.node, op.source.opType, op.kilnOp};
}

ManifestGraphBreak manifestGraphBreak(const GraphBreakEntry &entry) {
  ManifestGraphBreak b;
  b.op = manifestBreakOp(entry.op);
  b.kind = entry.kind;
  b.reason = entry.reason.reason;
  b.detail = entry.reason.detail;
  b.hint = entry.reason.hint;
  b.where = entry.where;
  for (const GraphBreakOp &op : entry.ops)
    b.ops.push_back(manifestBreakOp(op));
  return b;
}


} // namespace

LogicalResult writeProgramPackage(ModuleOp module,
                                  const CompileOptions &options,
                                  const GraphBreakReport &report) {
  Location loc = module.getLoc();
  StagedPackage staged(loc, options.outputDir);
  if (failed(staged.begin()))
    return failure();
  const std::string &tmp = staged.path();

  // The compiled graphs, each an ordinary package.
  func::FuncOp program = findProgramFunction(module);
  assert(program && program->hasAttr("kiln.program") &&
         "writeProgramPackage on a module without a program");
  SmallVector<func::FuncOp> graphs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr("kiln.graph"))
      graphs.push_back(func);
  PackageManifest manifest;
  manifest.kind = PackageKind::Program;
  manifest.source = options.modelPath;
  manifest.target = options.target;
  ManifestCounts &counts = manifest.counts.emplace();
  for (func::FuncOp graph : graphs) {
    std::string name = graph.getName().str();
    std::string graphDir = tmp + "/graphs/" + name;
    OwningOpRef<ModuleOp> graphModule = extractGraph(module, graph);
    auto start = std::chrono::steady_clock::now();
    StepCounts steps;
    if (failed(compileGraph(*graphModule, options, name, graphDir, &steps)))
      return failure();
    manifest.compileTimes.graphs +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    counts.fused += steps.fused;
    counts.library += steps.library;
    counts.fallback += steps.fallback;
    manifest.memoryPlan.arenaBytes += steps.arenaBytes;
    auto summary = llvm::find_if(report.graphs, [&](const GraphSummary &g) {
      return g.name == name;
    });
    ManifestGraph &entry = manifest.graphs.emplace_back();
    entry.name = name;
    entry.package = "graphs/" + name;
    if (summary != report.graphs.end()) {
      entry.where = summary->where;
      entry.ops = summary->numOps;
    }
  }

  // The glue: a runtime Program whose "call" nodes name the graphs.
  Expected<Program> glue = buildProgram(program);
  if (!glue) {
    emitError(loc) << "cannot build the program of '" << options.modelPath
                   << "': " << glue.status().message();
    return failure();
  }
  for (const std::string &name : glue->graphs)
    if (!llvm::sys::fs::exists(tmp + "/graphs/" + name + "/manifest.json")) {
      emitError(loc) << "the program calls graph '" << name
                     << "', which was not compiled (a Kiln bug)";
      return failure();
    }
  if (Status written = writeProgramFiles(*glue, tmp); !written) {
    emitError(loc) << written.message();
    return failure();
  }

  // The manifest (kiln/runtime/PackageManifest.h, the program form).
  manifest.programJson = "program.json";
  manifest.programData = "program.bin";
  for (const ValueSignature &sig : glue->inputs)
    manifest.inputs.push_back(manifestValue(sig));
  for (const ValueSignature &sig : glue->outputs)
    manifest.outputs.push_back(manifestValue(sig));
  for (const GraphBreakEntry &entry : report.breaks)
    manifest.graphBreaks.push_back(manifestGraphBreak(entry));
  counts.graphs = static_cast<int64_t>(graphs.size());
  counts.graphBreaks = static_cast<int64_t>(report.breaks.size());
  manifest.compileTimes.trace = options.traceSeconds;
  // Custom ops of the glue (eager regions); each graph records its own.
  if (failed(packageCustomOpLibraries(loc, program, tmp,
                                      manifest.customOpLibraries)))
    return failure();
  return staged.install(manifest);
}

} // namespace kiln
