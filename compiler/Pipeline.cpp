//===- Pipeline.cpp - The compile pipeline, in one place ------------------===//
//
// This file implements the compile pipeline of Kiln as readable functions
// with a comment per step: graph-break planning (runCompilePipeline), the
// graph passes (runGraphPasses), and per graph the back half (compileGraph):
// fusion, the target's lowering, kernels, memory plan, wrapper, package
// writer, the target's build.
// Passes run on each graph function; the verifier runs after every pass.
// It also writes the IR dumps of `--dump-ir` and the KILN_LOGS artifacts.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"
#include "codegen/ModelHeaderEmitter.h"
#include "codegen/PackageNames.h"
#include "codegen/Packager.h"
#include "codegen/WrapperEmitter.h"
#include "compiler/GraphBreakReport.h"
#include "compiler/IrPrinting.h"
#include "compiler/ProgramBuilder.h"
#include "compiler/ProgramPackager.h"
#include "ir/KilnOps.h"
#include "kiln/runtime/Counted.h"
#include "passes/FusionPasses.h"
#include "passes/GraphBreaks.h"
#include "passes/LoweringPasses.h"
#include "passes/Passes.h"
#include "targets/TargetRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <fstream>
#include <sstream>

using namespace mlir;

namespace kiln {

LogicalResult checkStaticShapes(ModuleOp module) {
  bool ok = true;
  module.walk([&](func::FuncOp graph) {
    for (BlockArgument arg : graph.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.hasStaticShape())
        continue;
      unsigned i = arg.getArgNumber();
      auto name = graph.getArgAttrOfType<StringAttr>(i, "kiln.name");
      auto dimNames = graph.getArgAttrOfType<ArrayAttr>(i, "kiln.dim_names");
      for (auto [d, size] : llvm::enumerate(type.getShape())) {
        if (!ShapedType::isDynamic(size))
          continue;
        StringRef dimName;
        if (dimNames && d < dimNames.size())
          if (auto s = dyn_cast<StringAttr>(dimNames[d]))
            dimName = s.getValue();
        InFlightDiagnostic diag = emitError(arg.getLoc())
                                  << "input '" << (name ? name.getValue() : "?")
                                  << "' dimension " << d;
        if (!dimName.empty())
          diag << " ('" << dimName
               << "') is dynamic; compiled models need static shapes: give "
                  "its size with --dim "
               << dimName << "=SIZE";
        else
          diag << " is dynamic and unnamed; compiled models need static "
                  "shapes: re-export the model with a fixed size or a "
                  "named dimension (then use --dim NAME=SIZE)";
        ok = false;
        break;
      }
    }
  });
  return success(ok);
}

namespace {
/// The compiled graph of a module (tagged `kiln.graph`), else @main.
func::FuncOp graphFunction(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr("kiln.graph"))
      return func;
  return module.lookupSymbol<func::FuncOp>("main");
}

/// Runs `pm` (anchored on func.func) on each function tagged `kiln.graph`.
LogicalResult runOnGraphs(PassManager &pm, ModuleOp module) {
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (func->hasAttr("kiln.graph") && failed(pm.run(func)))
      return failure();
  return success();
}
} // namespace

bool hasStaticInputs(ModuleOp module) {
  bool ok = true;
  module.walk([&](func::FuncOp graph) {
    for (BlockArgument arg : graph.getArguments())
      if (auto type = dyn_cast<RankedTensorType>(arg.getType()))
        ok &= type.hasStaticShape();
  });
  return ok;
}

LogicalResult applyAutocast(ModuleOp module, const AutocastOptions &options) {
  PassManager pm(module.getContext(), func::FuncOp::getOperationName());
  pm.addPass(createAutocastPass(options));
  return runOnGraphs(pm, module);
}

LogicalResult runGraphPasses(ModuleOp module, PipelineStage stage,
                             const Target *target, double *seconds) {
  auto start = std::chrono::steady_clock::now();
  PassManager pm(module.getContext(), func::FuncOp::getOperationName());
  pm.enableVerifier(true);

  // 1. Fold ops whose operands are all constants (through the runtime's
  //    kernels, exactly like the tracer).
  pm.addPass(createFoldConstantsPass());
  // 2. Algebraic and view simplifications (x*1, reshape of reshape, ...).
  pm.addPass(createSimplifyPass());
  // 3. Common subexpressions (also erases dead ops).
  pm.addPass(createCSEPass());
  // 4. Composites (softmax, norms, gelu) into the primitives fusion groups.
  pm.addPass(createDecomposePass());
  // 5. Simplify what decomposition exposed.
  pm.addPass(createSimplifyPass());
  // 5b. Reductions with few outputs (a loss's mean, a bias gradient) in two
  //     stages, so their kernels have parallel work.
  pm.addPass(createSplitReductionsPass());
  // 6. Cancel transposes through elementwise chains.
  pm.addPass(createLayoutCleanupPass());
  // 7. Common subexpressions again.
  pm.addPass(createCSEPass());
  if (target) {
    // 7b. The target's layout (CUDA: convolutions channels last), then fold
    //     the weights' transposes and cancel what meets.
    target->addLayoutPasses(pm);
    pm.addPass(createLayoutCleanupPass());
    // 7b'. An embedding lookup's projection (a recurrent layer's input
    //      projection after kiln-split-recurrent) as a lookup in the
    //      projected table, which the model computes once, at load.
    pm.addPass(createFoldEmbeddingProjectionPass());
    // 7b''. The views the new layout left: a reshape of a reshape is one (a
    //       channels-last global pool's [N, 1, 1, C] -> [N, C, 1, 1] ->
    //       [N, C] becomes one view, which the pool's kernel takes with the
    //       cast after it).
    pm.addPass(createSimplifyPass());
    pm.addPass(createCSEPass());
    // 7c. Reductions the new layout made strided (a channels-last global
    //     average pool: a column sum of H·W rows per channel) in two stages.
    pm.addPass(createSplitReductionsPass());
    // 7d. The target's own kernels take their neighbours (CUDA: the
    //     activations around a depthwise convolution).
    target->addPreFusionPasses(pm);
  }
  if (stage == PipelineStage::Fused) {
    // 8. Group elementwise ops, reductions and views into kiln.fusion
    //    regions, one generated kernel each (the verifier runs after it).
    pm.addPass(createFuseOpsPass(target ? target->fuseOptions()
                                        : FuseOptions{}));
  }
  // The passes run on the compiled graphs only: a program's @main (glue,
  // eager regions, control flow) is not compiled.
  LogicalResult result = runOnGraphs(pm, module);
  if (seconds)
    *seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  return result;
}

LogicalResult dumpIr(Operation *op, const CompileOptions &options,
                     const std::string &file) {
  if (options.dumpIrDir.empty())
    return success();
  if (std::error_code ec =
          llvm::sys::fs::create_directories(options.dumpIrDir))
    return emitError(op->getLoc())
           << "--dump-ir: cannot create '" << options.dumpIrDir
           << "': " << ec.message();
  std::string path = options.dumpIrDir + "/" + file;
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return emitError(op->getLoc())
           << "--dump-ir: cannot write '" << path << "': " << ec.message();
  printIr(op, out, options.printConstants);
  out << "\n";
  return success();
}

namespace {

/// KILN_LOGS=fusion: each kernel of a fused graph and the ONNX nodes in it.
void logFusion(func::FuncOp graph, const std::string &name) {
  llvm::errs() << "[kiln fusion] " << name << ": "
               << formatFusionSummary(summarizeFusion(graph)) << "\n";
  for (FusionOp fusion : graph.getBody().front().getOps<FusionOp>()) {
    llvm::errs() << "[kiln fusion]   " << fusion.getName() << " ("
                 << fusion.getKind() << "):";
    bool first = true;
    fusion.getBody().walk([&](Operation *op) {
      if (isa<ConstantOp, YieldOp>(op))
        return;
      GraphBreakSource source = getGraphBreakSource(op->getLoc());
      llvm::errs() << (first ? " " : ", ") << op->getName().stripDialect();
      if (!source.node.empty())
        llvm::errs() << " '" << source.node << "'";
      first = false;
    });
    llvm::errs() << "\n";
  }
}

/// KILN_LOGS=output_code: the generated kernel source of a package.
void logOutputCode(const std::string &packageDir, const std::string &name,
                   const GraphCodegen &codegen) {
  std::string file = codegen.kernelSourceFile().str();
  std::ifstream in(packageDir + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  llvm::errs() << "[kiln output_code] " << name << ": " << packageDir << "/"
               << file << "\n"
               << text.str() << "\n";
}

/// The package writer's options for one graph of `options`.
PackageOptions packageOptionsOf(const CompileOptions &options,
                                const std::string &outputDir) {
  PackageOptions package;
  package.outputDir = outputDir;
  package.cxx = options.cxx;
  package.cpuIsa = options.cpuIsa;
  package.weights = options.weights;
  package.modelPath = options.modelPath;
  package.dimSizes = options.dimSizes;
  package.traceSeconds = options.traceSeconds;
  return package;
}

} // namespace

void logFusedGraphs(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr("kiln.graph"))
      logFusion(func, func.getName().str());
}

void logGraphBreaks(ModuleOp module, const std::string &target) {
  GraphBreakReport report = collectGraphBreaks(module, target);
  llvm::errs() << "[kiln graph_breaks] ";
  printGraphBreakReport(report, llvm::errs());
}

LogicalResult planGraphBreaks(ModuleOp module, const std::string &target) {
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  const Target *t = lookupTarget(target);
  if (!t)
    return emitError(module.getLoc()) << "unknown --target '" << target
                                      << "' (supported: " << targetNameList()
                                      << ")";
  pm.addPass(createPlanGraphBreaksPass(GraphBreakTarget{
      target, [t](Operation *op) { return t->compilesOp(op); }}));
  return pm.run(module);
}

bool isProgramModule(ModuleOp module) {
  func::FuncOp main = findProgramFunction(module);
  return main && main->hasAttr("kiln.program");
}

LogicalResult lowerGraphs(ModuleOp module, const Target &target) {
  PassManager pm(module.getContext(), func::FuncOp::getOperationName());
  pm.enableVerifier(true);
  target.addLoweringPasses(pm);
  pm.addPass(createMarkLoadTimeStepsPass());
  pm.addPass(createMarkInPlacePass(target.residualInPlaceCallees()));
  return runOnGraphs(pm, module);
}

/// Seconds since `start`.
static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The names of the package of graph `graphName`: the package's own for a
/// model compiled whole ("main"), <name>_<graph> for a graph of a program or
/// training package.
static PackageNames packageNamesOf(const CompileOptions &options,
                                   const std::string &graphName) {
  PackageNames names{options.packageName.empty()
                         ? defaultPackageName(options.modelPath)
                         : options.packageName};
  return graphName == "main" ? names : names.forGraph(graphName);
}

LogicalResult lowerGraph(ModuleOp module, const CompileOptions &options,
                         const std::string &graphName) {
  const Target *target = lookupTarget(options.target);
  if (!target)
    return emitError(module.getLoc())
           << "unknown --target '" << options.target
           << "' (supported: " << targetNameList() << ")";
  const CompileProgress &progress = options.progress;

  // 1. Kiln's graph passes (fold, simplify, CSE, decompose, layout), with
  //    the target's layout passes.
  progress.enter(graphName, "graph passes");
  if (failed(runGraphPasses(module, PipelineStage::Optimized, target)) ||
      failed(dumpIr(module, options, "02-optimized." + graphName + ".mlir")))
    return failure();

  // 2. Fusion into kiln.fusion regions, one generated kernel each.
  progress.enter(graphName, "fusion");
  PassManager fuse(module.getContext(), func::FuncOp::getOperationName());
  fuse.enableVerifier(true);
  fuse.addPass(createFuseOpsPass(target->fuseOptions()));
  if (failed(runOnGraphs(fuse, module)) ||
      failed(dumpIr(module, options, "03-fused." + graphName + ".mlir")))
    return failure();
  if (options.logs.count("fusion")) {
    progress.pauseForLog();
    logFusion(graphFunction(module), graphName);
  }

  // 3. The target's lowering: library calls with their folds, kernels of
  //    single ops, reference steps; then the steps that read only weights
  //    are tagged to run once, at load. After this the IR says exactly what
  //    runs (`kiln dump --stage lowered`).
  progress.enter(graphName, "lowering");
  return success(
      succeeded(lowerGraphs(module, *target)) &&
      succeeded(dumpIr(module, options, "04-lowered." + graphName + ".mlir")));
}

LogicalResult emitGraphPackage(ModuleOp module, const CompileOptions &options,
                               const std::string &graphName,
                               const std::string &outputDir, double passSeconds,
                               StepCounts *counts,
                               std::map<std::string, int64_t> *arenaOffsets) {
  const Target *target = lookupTarget(options.target);
  assert(target && "lowerGraph checked the target");
  const CompileProgress &progress = options.progress;
  func::FuncOp graph = graphFunction(module);
  PackageOptions packageOptions = packageOptionsOf(options, outputDir);
  packageOptions.passSeconds = passSeconds;

  // 4. Kernels: one per kiln.fusion and per op tagged kiln.kernel, printed
  //    by the target (C++ or CUDA), for the package's names.
  progress.enter(graphName, "kernels");
  std::unique_ptr<GraphCodegen> codegen =
      target->createGraphCodegen(packageNamesOf(options, graphName));
  if (failed(codegen->emitKernels(graph)))
    return failure();

  // 5. The memory plan: inputs, weights, outputs, one arena reused by
  //    lifetime, the load-time steps' memory, the libraries' workspace.
  progress.enter(graphName, "memory plan");
  FailureOr<MemoryPlan> plan = planMemory(graph);
  if (failed(plan))
    return failure();
  if (arenaOffsets)
    for (const ArenaValue &v : plan->arenaValues)
      (*arenaOffsets)[v.entry.name] = v.offset;

  // 6. The wrapper (the C ABI, the steps in order, the kernels' exports)
  //    and the package header.
  progress.enter(graphName, "wrapper");
  FailureOr<std::string> wrapper = emitWrapper(graph, *plan, *codegen);
  if (failed(wrapper))
    return failure();
  std::string header = emitModelHeader(*plan, *codegen);

  // 7. The package writer: a temp folder with wrapper.cpp, the header and
  //    weights.bin.
  progress.enter(graphName, "weights");
  PackageWriter package(module.getLoc(), *target, packageOptions);
  if (failed(package.begin()) ||
      failed(package.writeSources(codegen->names(), *wrapper, header)) ||
      failed(package.writeWeights(graph, *plan)))
    return failure();

  // 8. The target's build: kernel sources, device code (NVRTC), the
  //    library (the host compiler).
  progress.enter(graphName, "host compiler (" +
                                codegen->kernelSourceFile().str() +
                                ", wrapper.cpp)");
  if (failed(codegen->build(module.getLoc(), package.buildInfo())))
    return failure();

  // 9. The manifest, then the folder into place.
  progress.enter(graphName, "manifest");
  FailureOr<StepCounts> steps = countSteps(module);
  if (failed(steps) || failed(package.finish(graph, *plan, *codegen, *steps)) ||
      failed(package.install()))
    return failure();
  if (counts)
    *counts = *steps;
  if (options.logs.count("output_code")) {
    progress.pauseForLog();
    logOutputCode(outputDir, graphName, *codegen);
  }
  return success();
}

LogicalResult compileGraph(ModuleOp module, const CompileOptions &options,
                           const std::string &graphName,
                           const std::string &outputDir, StepCounts *counts,
                           std::map<std::string, int64_t> *arenaOffsets) {
  auto start = std::chrono::steady_clock::now();
  if (failed(lowerGraph(module, options, graphName)))
    return failure();
  return emitGraphPackage(module, options, graphName, outputDir,
                          secondsSince(start), counts, arenaOffsets);
}

LogicalResult runCompilePipeline(ModuleOp module,
                                 const CompileOptions &options) {
  // Static shapes are required: every dynamic dim must have come with --dim.
  // Dynamic input dims (no --dim) are planned as explain plans them: the
  // ops whose shapes depend on them are graph breaks (step 1) and run
  // eagerly, on any size; --dim NAME=SIZE compiles them.
  if (failed(dumpIr(module, options, "00-traced.mlir")))
    return failure();
  // 0. --precision bf16|f16: GEMMs and convolutions in the low precision,
  //    statistics in f32 (the policy table of passes/Autocast.cpp).
  if (options.autocastEnabled) {
    options.progress.enter("", "autocast");
    if (failed(applyAutocast(module, options.autocast)))
      return failure();
  }

  // 1. Graph breaks: ops no code generator of the target compiles, and
  //    data-dependent shapes, run eagerly; control flow decided at run time
  //    becomes program glue; what is left is one or more compiled graphs.
  options.progress.enter("", "planning graph breaks");
  if (failed(planGraphBreaks(module, options.target)) ||
      failed(dumpIr(module, options, "01-planned.mlir")))
    return failure();
  GraphBreakReport report = collectGraphBreaks(module, options.target);
  size_t dynamicBreaks = llvm::count_if(
      report.breaks, [](const GraphBreakEntry &e) {
        return e.reason.reason == "dynamic-shape";
      });
  if (dynamicBreaks && !options.fullgraph)
    emitWarning(module.getLoc())
        << dynamicBreaks << " of the "
        << counted(report.breaks.size(), "graph break", "graph breaks")
        << (dynamicBreaks == 1 ? " comes" : " come")
        << " from dynamic input dimensions: their ops run "
           "eagerly (reference kernels, any size); give the sizes with --dim "
           "NAME=SIZE to compile them (`kiln explain` lists them)";
  if (options.logs.count("graph_breaks")) {
    options.progress.pauseForLog();
    llvm::errs() << "[kiln graph_breaks] ";
    printGraphBreakReport(report, llvm::errs());
  }
  if (options.fullgraph && !report.breaks.empty()) {
    InFlightDiagnostic diag = emitError(module.getLoc());
    diag << "--fullgraph: '" << options.modelPath << "' does not compile into "
         << "one graph for target " << options.target << ": "
         << counted(report.breaks.size(), "graph break", "graph breaks");
    for (const GraphBreakEntry &entry : report.breaks)
      diag << "\n  " << formatGraphBreakLine(entry);
    diag << "\n(`kiln explain` shows the hints; without --fullgraph the "
            "breaks run eagerly)";
    return failure();
  }

  // 2. A model without breaks is one graph: the passes, code generation and
  //    one package (the fast path: no interpreter between kernels).
  if (options.progress.graphs)
    options.progress.graphs(
        isProgramModule(module) ? static_cast<int>(report.graphs.size()) : 1);
  if (!isProgramModule(module))
    return compileGraph(module, options, "main", options.outputDir);

  // 3. A program: each graph is compiled into a package of its own, the glue
  //    (eager regions, control flow, calls) into program.json.
  return writeProgramPackage(module, options, report);
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

} // namespace kiln
