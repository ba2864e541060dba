//===- SizeRangeCompile.cpp - One package for a range of sizes ------------===//
//
// This file implements the symbolic compile of SizeRangeCompile.h: the
// size symbols of a traced model, then tracing and lowering at the bound and
// at each probe, the comparison that annotates the bound graph, and the
// package written from it. Diagnostics of the probes are collected, not
// reported: a probe that does not compile is a reason to fall back.
//
//===----------------------------------------------------------------------===//

#include "compiler/SizeRangeCompile.h"

#include "compiler/SymbolicSizeInference.h"
#include "codegen/MemoryPlanner.h"
#include "codegen/SymbolicShapes.h"
#include "codegen/Target.h"
#include "targets/TargetRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include <chrono>
#include <set>

using namespace mlir;

namespace kiln {

namespace {
/// True for [A-Za-z_][A-Za-z0-9_]*: a name SymbolicDim's text form reads.
bool isSymbolName(StringRef name) {
  if (name.empty() ||
      !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  return llvm::all_of(name, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}
} // namespace

Expected<std::vector<SizeSymbol>>
sizeSymbolsOf(ModuleOp module, const std::map<std::string, SizeSymbol> &ranges,
              bool &unnamed) {
  unnamed = false;
  std::vector<SizeSymbol> symbols;
  std::set<std::string> seen;
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (main)
    for (BlockArgument arg : main.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.hasStaticShape())
        continue;
      auto names = main.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                    "kiln.dim_names");
      for (auto [d, size] : llvm::enumerate(type.getShape())) {
        if (!ShapedType::isDynamic(size))
          continue;
        auto name = names && d < names.size() ? dyn_cast<StringAttr>(names[d])
                                              : StringAttr();
        if (!name || name.getValue().empty()) {
          unnamed = true;
          continue;
        }
        std::string n = name.getValue().str();
        if (!seen.insert(n).second)
          continue;
        auto range = ranges.find(n);
        symbols.push_back(range != ranges.end()
                              ? range->second
                              : SizeSymbol{n, 1, kDefaultSizeMax});
      }
    }
  for (const auto &[name, range] : ranges)
    if (!seen.count(name)) {
      std::string known;
      for (const SizeSymbol &s : symbols)
        known += (known.empty() ? "" : ", ") + s.name;
      return Status::error(strCat(
          "--dim ", name, "=", range.min, "..", range.max,
          ": the graph's inputs have no dynamic dimension named '", name, "'; ",
          known.empty() ? "they have none"
                        : "their dynamic dimensions: " + known));
    }
  return symbols;
}

namespace {
/// A module traced, planned and lowered at some sizes, or why not.
struct LoweredAt {
  OwningOpRef<ModuleOp> module;
  std::string whyNot;
};

/// Traces the model of `options` with `trace` plus `sizes`, plans its graph
/// breaks and lowers it (lowerGraph). For the bound (`quiet` false) errors
/// are reported and fail; for a probe they are collected into `whyNot`,
/// and `options`' dumps, logs and progress are left out.
FailureOr<LoweredAt> lowerAt(MLIRContext &context, const CompileOptions &options,
                             const TraceOptions &trace,
                             const std::map<std::string, int64_t> &sizes,
                             bool quiet) {
  std::string where, probeError;
  for (const auto &[name, size] : sizes)
    where += (where.empty() ? "" : ", ") + name + " = " + std::to_string(size);
  std::optional<ScopedDiagnosticHandler> collect;
  CompileOptions at = options;
  if (quiet) {
    collect.emplace(&context, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && probeError.empty())
        probeError = d.str();
      return success();
    });
    at.dumpIrDir.clear();
    at.logs.clear();
    at.progress = CompileProgress{};
  }
  // A failure of the bound is an error (reported); a probe's is a reason.
  auto failedWith = [&](const std::string &why) -> FailureOr<LoweredAt> {
    if (!quiet)
      return failure();
    return LoweredAt{nullptr, "compiling at " + where + " failed: " + why};
  };
  TraceOptions traceAt = trace;
  for (const auto &[name, size] : sizes)
    traceAt.dimSizes[name] = size;
  Expected<OwningOpRef<ModuleOp>> module =
      traceOnnxFile(context, options.modelPath, traceAt);
  if (!module)
    return LoweredAt{nullptr,
                     "tracing at " + where + " failed: " +
                         module.status().message()};
  if (options.autocastEnabled &&
      failed(applyAutocast(**module, options.autocast)))
    return failedWith(probeError);
  if (failed(planGraphBreaks(**module, options.target)))
    return failedWith(probeError);
  if (isProgramModule(**module))
    return LoweredAt{nullptr,
                     "at " + where +
                         " the model still has graph breaks (`kiln explain "
                         "--dim` lists them); programs are compiled for fixed "
                         "sizes only"};
  (**module)->setAttr(kSizeRangeAttr, UnitAttr::get(&context));
  if (failed(lowerGraph(**module, at, "main")))
    return failedWith(probeError);
  return LoweredAt{module.take(), ""};
}
} // namespace

FailureOr<SizeRangePlan>
planForSizeRanges(MLIRContext &context, const CompileOptions &options,
                  const TraceOptions &trace,
                  const std::vector<SizeSymbol> &symbols) {
  using Why = SizeRangePlan;
  for (const SizeSymbol &s : symbols)
    if (!isSymbolName(s.name))
      return Why("the dimension name '" + s.name +
                 "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  auto start = std::chrono::steady_clock::now();

  // The bound: every symbol at its maximum.
  std::map<std::string, int64_t> bounds;
  for (const SizeSymbol &s : symbols)
    bounds[s.name] = s.max;
  FailureOr<LoweredAt> bound =
      lowerAt(context, options, trace, bounds, /*quiet=*/false);
  if (failed(bound))
    return failure();
  if (!bound->module)
    return Why(bound->whyNot);

  // One probe per symbol, the others at their bounds; a probe size whose
  // trace fails (a Reshape that needs an even batch) gives way to the next
  // candidate (probeSizesOf).
  std::vector<OwningOpRef<ModuleOp>> probeModules;
  std::vector<SizeProbe> probes;
  for (size_t s = 0; s < symbols.size(); ++s) {
    std::string whyNot;
    for (int64_t size : probeSizesOf(symbols[s])) {
      std::map<std::string, int64_t> sizes = bounds;
      sizes[symbols[s].name] = size;
      FailureOr<LoweredAt> probe =
          lowerAt(context, options, trace, sizes, /*quiet=*/true);
      whyNot = probe->whyNot;
      if (!probe->module)
        continue;
      probes.push_back(SizeProbe{
          probe->module->lookupSymbol<func::FuncOp>("main"), s, size});
      probeModules.push_back(std::move(probe->module));
      break;
    }
    if (probes.size() != s + 1)
      return Why(whyNot);
  }

  // Which sizes follow the symbols: the bound graph against the probes.
  options.progress.enter("main", "symbolic sizes");
  auto main = bound->module->lookupSymbol<func::FuncOp>("main");
  if (std::optional<std::string> why =
          inferSymbolicSizes(main, symbols, probes))
    return Why(*why);
  // Every step whose sizes follow the symbols must take them at run time
  // in the target's code.
  const Target *target = lookupTarget(options.target);
  assert(target && "the CLI checks --target");
  for (Operation &op : main.getBody().front()) {
    if (!hasRunTimeSizes(&op))
      continue;
    std::string why = target->whyNotRunTimeSizes(&op);
    if (!why.empty()) {
      std::vector<std::string> nodes = sourceNodeNames(&op);
      return Why((nodes.empty() ? op.getName().getStringRef().str()
                                : "node '" + nodes.front() + "'") +
                 ": " + why + " on the " + options.target + " target");
    }
  }
  if (failed(dumpIr(*bound->module, options, "05-sized.main.mlir")))
    return failure();
  SizeRangePlan plan;
  plan.bound = std::move(bound->module);
  plan.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return plan;
}

FailureOr<std::vector<SizeSymbol>> compileModel(MLIRContext &context,
                                                ModuleOp traced,
                                                const CompileOptions &options,
                                                const TraceOptions &trace) {
  bool unnamed = false;
  Expected<std::vector<SizeSymbol>> symbols =
      sizeSymbolsOf(traced, options.dimRanges, unnamed);
  if (!symbols)
    return emitError(traced.getLoc()) << symbols.status().message();
  if (unnamed && !options.dimRanges.empty())
    return emitError(traced.getLoc())
           << "--dim NAME=LO..HI: '" << options.modelPath
           << "' has a dynamic input dimension without a name; ranges need "
              "named dimensions (give fixed sizes with --dim instead)";
  if (!symbols->empty() && !unnamed) {
    FailureOr<SizeRangePlan> plan =
        planForSizeRanges(context, options, trace, *symbols);
    if (failed(plan))
      return failure();
    if (plan->bound) {
      if (failed(emitGraphPackage(*plan->bound, options, "main",
                                  options.outputDir, plan->seconds)))
        return failure();
      return *symbols;
    }
    emitWarning(traced.getLoc())
        << "'" << options.modelPath
        << "' is not compiled for a range of sizes: " << plan->whyNot
        << "; its dynamic dimensions are planned as graph breaks instead "
           "(or give fixed sizes with --dim NAME=SIZE)";
  }
  if (failed(runCompilePipeline(traced, options)))
    return failure();
  return std::vector<SizeSymbol>{};
}

} // namespace kiln
