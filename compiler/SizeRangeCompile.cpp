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

FailureOr<SizeRangePlan>
planForSizeRanges(MLIRContext &context, const CompileOptions &options,
                  const TraceOptions &trace,
                  const std::vector<SizeSymbol> &symbols) {
  using Why = SizeRangePlan;
  if (options.target != "cpu")
    return Why("sizes as run-time values are compiled for the cpu target "
               "only so far");
  for (const SizeSymbol &s : symbols)
    if (!isSymbolName(s.name))
      return Why("the dimension name '" + s.name +
                 "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  auto start = std::chrono::steady_clock::now();

  // The bound (every symbol at its maximum) and one probe per symbol, each
  // traced, planned and lowered on its own.
  // A probe whose trace fails (a Reshape that needs an even batch) is
  // tried again at the next candidate size (probeSizesOf).
  std::vector<std::map<std::string, int64_t>> sizes(1 + symbols.size());
  for (size_t p = 0; p < sizes.size(); ++p)
    for (const SizeSymbol &s : symbols)
      sizes[p][s.name] = s.max;
  std::vector<OwningOpRef<ModuleOp>> modules;
  std::vector<int64_t> probeSizes;
  for (size_t p = 0; p < sizes.size(); ++p) {
    bool isBound = p == 0;
    std::vector<int64_t> candidates =
        isBound ? std::vector<int64_t>{symbols.front().max}
                : probeSizesOf(symbols[p - 1]);
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (!isBound)
        sizes[p][symbols[p - 1].name] = candidates[c];
      bool lastCandidate = c + 1 == candidates.size();
      // The probes' diagnostics are collected: a probe that does not compile
      // is a reason to fall back, not an error.
      std::string probeError;
      std::optional<ScopedDiagnosticHandler> quiet;
      if (!isBound)
        quiet.emplace(&context, [&](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error &&
              probeError.empty())
            probeError = d.str();
          return success();
        });
      TraceOptions at = trace;
      for (const auto &[name, size] : sizes[p])
        at.dimSizes[name] = size;
      std::string where;
      for (const auto &[name, size] : sizes[p])
        where +=
            (where.empty() ? "" : ", ") + name + " = " + std::to_string(size);
      Expected<OwningOpRef<ModuleOp>> module =
          traceOnnxFile(context, options.modelPath, at);
      if (!module && !lastCandidate)
        continue;
      if (!module)
        return Why("tracing at " + where +
                   " failed: " + module.status().message());
      CompileOptions quietOptions = options;
      if (!isBound) {
        quietOptions.dumpIrDir.clear();
        quietOptions.logs.clear();
        quietOptions.progress = CompileProgress{};
      }
      if (options.autocastEnabled &&
          failed(applyAutocast(**module, options.autocast)))
        return isBound ? FailureOr<Why>(failure()) : Why(probeError);
      if (failed(planGraphBreaks(**module, options.target)))
        return isBound ? FailureOr<Why>(failure()) : Why(probeError);
      if (isProgramModule(**module))
        return Why("at " + where +
                   " the model still has graph breaks (`kiln explain --dim` "
                   "lists them); programs are compiled for fixed sizes only");
      if (failed(lowerGraph(**module, quietOptions, "main")))
        return isBound
                   ? FailureOr<Why>(failure())
                   : Why("compiling at " + where + " failed: " + probeError);
      modules.push_back(module.take());
      if (!isBound)
        probeSizes.push_back(candidates[c]);
      break;
    }
  }

  // Which sizes follow the symbols: the bound graph against the probes.
  options.progress.enter("main", "symbolic sizes");
  std::vector<SizeProbe> probes;
  for (size_t s = 0; s < symbols.size(); ++s)
    probes.push_back(SizeProbe{
        modules[s + 1]->lookupSymbol<func::FuncOp>("main"), s, probeSizes[s]});
  auto bound = modules[0]->lookupSymbol<func::FuncOp>("main");
  if (std::optional<std::string> why =
          inferSymbolicSizes(bound, symbols, probes))
    return Why(*why);
  if (failed(dumpIr(*modules[0], options, "05-sized.main.mlir")))
    return failure();
  SizeRangePlan plan;
  plan.bound = std::move(modules[0]);
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
