//===- Packager.cpp - Writes a compiled model package ---------------------===//
//
// This file implements the package writer: the temp folder next to the
// destination, NAME.h, wrapper.cpp, weights.bin and manifest.json around
// the target's build, then the rename into place. The package layout, for
// a package named NAME (`kiln compile --name`, codegen/PackageNames.h):
//
//   DIR/libNAME.so     the target's build (GraphCodegen::build): one host
//                      compiler run (codegen/HostCompiler.cpp) over
//                      wrapper.cpp and the target's host sources; it
//                      exports only NAME_* symbols (exports.map)
//   DIR/NAME.h         its C and C++ API: entry points, kernels, run()
//   DIR/kernels.cpp    the generated kernels (to read); --target cuda:
//   DIR/kernels.cu     the generated CUDA kernels (to read), compiled in
//   DIR/kernels.cubin  process by NVRTC for sm_90, and their PTX
//   DIR/kernels.ptx    (libNAME.so is then wrapper.cpp alone)
//   DIR/wrapper.cpp    the generated host wrapper (to read)
//   DIR/weights.bin    every top-level constant, 64-byte aligned, in weight
//                      order (weight arguments and fills are not in it)
//   DIR/manifest.json  signature, weights (where each lives), kernels with
//                      their ONNX nodes, library and fallback ops, the
//                      memory plan, options, versions, compile times
//
// Weights. Every top-level kiln.constant is a weight stored in weights.bin
// ("file": "weights.bin", "offset", "bytes"), except a splat larger than
// its 64-byte slot (codegen/FillWeights.h): a fill weight, recorded as its
// one element ("fill": hex bytes) and materialised by the loader, so a
// model of ConstantOfShape weights stays small. Weight *arguments* of the graph
// are not stored: with `--weights external` the tracer keeps every
// initializer stored as ONNX external data as an argument carrying
// `kiln.external_data = {location, offset, length}`, and its manifest entry
// is "external": {"file": <location, relative to the model's folder>,
// "offset", "bytes"}: the loader reads it from LoadOptions::weightsDir (or
// the package folder). Initializers whose external file was absent at
// compile time are arguments too (same entry). An argument without
// external data has neither (bound by name by the caller at load time).
//
//===----------------------------------------------------------------------===//

#include "codegen/Packager.h"
#include "codegen/CustomOpLibraries.h"
#include "codegen/FillWeights.h"
#include "codegen/SymbolicShapes.h"
#include "ir/KilnOps.h"
#include "passes/FusionRules.h"
#include "passes/LoweringPasses.h"
#include "passes/TensorConversion.h"

#include "kiln/runtime/ModelABI.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <fstream>

#include <unistd.h>

#ifndef KILN_DEFAULT_CXX
#define KILN_DEFAULT_CXX "c++"
#endif
#ifndef KILN_RUNTIME_INCLUDE_DIR
#define KILN_RUNTIME_INCLUDE_DIR ""
#endif

/// The runtime headers packages compile against: $KILN_RUNTIME_INCLUDE, else
/// an installed kiln's own (`<prefix>/include`, next to `<prefix>/bin/kiln`),
/// else the source tree this kiln was built from.
static std::string runtimeIncludeDir() {
  if (const char *env = std::getenv("KILN_RUNTIME_INCLUDE"); env && *env)
    return env;
  std::string exe = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&runtimeIncludeDir));
  if (!exe.empty()) {
    llvm::SmallString<256> installed(llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(installed, "include");
    if (llvm::sys::fs::exists(installed + "/kiln/runtime/ModelABI.h"))
      return std::string(installed);
  }
  return KILN_RUNTIME_INCLUDE_DIR;
}

#ifndef KILN_VERSION
#define KILN_VERSION "0.1.0"
#endif

using namespace mlir;

namespace kiln {

/// The x86-64 instruction-set level of the machine running the compiler:
/// x86-64-v4 (AVX-512 F/BW/CD/DQ/VL), x86-64-v3 (AVX2, FMA, BMI2) or
/// x86-64-v2.
static std::string hostCpuIsa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "x86-64-v4";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("bmi2"))
    return "x86-64-v3";
#endif
  return "x86-64-v2";
}

namespace {

/// The graph function of a module (marked `kiln.graph`, else @main).
func::FuncOp findGraph(ModuleOp module) {
  func::FuncOp found;
  module.walk([&](func::FuncOp f) {
    if (!found && f->hasAttr("kiln.graph"))
      found = f;
  });
  return found ? found : module.lookupSymbol<func::FuncOp>("main");
}

/// Writes `text` to `path`; a diagnostic at `loc` on failure.
LogicalResult writeFile(Location loc, const std::string &path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec) {
    out << text;
    out.close();
    ec = out.error();
  }
  if (ec)
    return emitError(loc) << "cannot write '" << path << "': " << ec.message();
  return success();
}

/// The host compiler to run, and its path; a diagnostic when not found.
LogicalResult findHostCompiler(Location loc, const PackageOptions &options,
                               PackageBuild &build) {
  build.cxx = options.cxx;
  if (build.cxx.empty())
    if (const char *env = std::getenv("KILN_CXX"); env && *env)
      build.cxx = env;
  if (build.cxx.empty())
    build.cxx = KILN_DEFAULT_CXX;
  build.cxxPath = build.cxx;
  if (build.cxx.find('/') == std::string::npos) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(build.cxx);
    if (!found)
      return emitError(loc) << "host C++ compiler '" << build.cxx
                            << "' not found in PATH; pass --cxx PATH or set "
                               "KILN_CXX";
    build.cxxPath = *found;
  } else if (!llvm::sys::fs::can_execute(build.cxx)) {
    return emitError(loc) << "host C++ compiler '" << build.cxx
                          << "' is not an executable file; pass --cxx PATH";
  }
  return success();
}

} // namespace

/// Removes a folder tree, ignoring errors (cleanup of our own temp dirs).
void removeTree(const std::string &dir) {
  if (!dir.empty() && llvm::sys::fs::exists(dir))
    (void)llvm::sys::fs::remove_directories(dir);
}

/// Records every file the runtime reads under `dir`, with its size and
/// checksum, in `manifest.files`: the loaders check them before they open
/// anything (runtime/lib/PackageFiles.cpp).
static LogicalResult recordPackageFiles(Location loc, const std::string &dir,
                                        PackageManifest &manifest) {
  Expected<std::vector<ManifestFile>> files = describePackageFiles(dir);
  if (!files)
    return emitError(loc) << files.status().message();
  manifest.files = files.take();
  return success();
}

/// Replaces `dir` by `tmp` (an existing package is removed only once the
/// new one is in place).
LogicalResult installPackage(Location loc, const std::string &tmp,
                             const std::string &dir) {
  std::string old;
  if (llvm::sys::fs::exists(dir)) {
    old = dir + ".old-" + std::to_string(::getpid());
    removeTree(old);
    if (std::error_code ec = llvm::sys::fs::rename(dir, old))
      return emitError(loc) << "cannot move the existing '" << dir
                            << "' aside: " << ec.message();
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, dir)) {
    if (!old.empty())
      (void)llvm::sys::fs::rename(old, dir);
    return emitError(loc) << "cannot rename '" << tmp << "' to '" << dir
                          << "': " << ec.message();
  }
  removeTree(old);
  return success();
}

/// Checks that `dir` may be written or replaced: absent, empty, or a
/// previous package (has manifest.json).
LogicalResult checkOutputDir(Location loc, const std::string &dir) {
  if (dir.empty())
    return emitError(loc) << "no output folder given (use -o DIR)";
  if (!llvm::sys::fs::exists(dir))
    return success();
  if (!llvm::sys::fs::is_directory(dir))
    return emitError(loc) << "output '" << dir
                          << "' exists and is not a folder; choose another "
                             "-o DIR";
  std::error_code ec;
  llvm::sys::fs::directory_iterator it(dir, ec), end;
  if (ec || it == end)
    return success();
  if (llvm::sys::fs::exists(dir + "/manifest.json"))
    return success();
  return emitError(loc) << "output folder '" << dir
                        << "' is not empty and is not a Kiln package (no "
                           "manifest.json); refusing to replace it: choose "
                           "another -o DIR or remove it";
}

/// Whether `op` is a custom op whose step calls the user's kernel where the
/// data is (the CPU kernel on the CPU target, the CUDA kernel on the
/// device): a library call, not a fallback. On the host of a CUDA package
/// (kiln.reference = "host") it copies like a fallback.
static bool runsCustomKernel(Operation *op) {
  if (!isa<CustomCallOp>(op))
    return false;
  auto place = op->getAttrOfType<StringAttr>(kReferenceAttr);
  return !place || place.getValue() != "host";
}

FailureOr<StepCounts> countSteps(ModuleOp module) {
  func::FuncOp graph = findGraph(module);
  if (!graph)
    return module.emitError("the module has no graph function");
  StepCounts counts;
  for (Operation &op : graph.getBody().front()) {
    // Before lowering (kiln dump --stage fused) the library family counts
    // as library calls, as the targets lower it.
    if (isa<ConstantOp, func::ReturnOp>(op) || op.hasAttr(kAliasAttr))
      continue;
    if (isa<FusionOp>(op) || op.hasAttr(kKernelAttr))
      ++counts.fused;
    else if (isa<LibraryCallOp>(op) || isLibraryOp(&op) ||
             runsCustomKernel(&op))
      ++counts.library;
    else
      ++counts.fallback;
  }
  // The arena needs static shapes; without them it is unknown (-1).
  ScopedDiagnosticHandler quiet(module.getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<MemoryPlan> plan = planMemory(graph);
  counts.arenaBytes = succeeded(plan) ? plan->arenaBytes : -1;
  return counts;
}

PackageWriter::PackageWriter(Location loc, const Target &target,
                             const PackageOptions &options)
    : loc_(loc), target_(target), options_(options),
      start_(std::chrono::steady_clock::now()) {}

PackageWriter::~PackageWriter() {
  if (!installed_)
    removeTree(dir_);
}

LogicalResult PackageWriter::begin() {
  if (failed(target_.checkAvailable(loc_)))
    return failure();
  // The instruction-set level of the package's host code; the manifest
  // records it and kiln::Model refuses a package the CPU cannot run.
  std::string isa = options_.cpuIsa;
  if (isa.empty() || isa == "host")
    isa = target_.defaultCpuIsa(hostCpuIsa());
  else if (isa != "x86-64-v2" && isa != "x86-64-v3" && isa != "x86-64-v4")
    return emitError(loc_) << "unknown --cpu-isa '" << isa
                           << "' (supported: host, x86-64-v2, x86-64-v3, "
                              "x86-64-v4)";
  build_.isa = isa;
  if (failed(checkOutputDir(loc_, options_.outputDir)))
    return failure();
  build_.includeDir = runtimeIncludeDir();
  if (build_.includeDir.empty() ||
      !llvm::sys::fs::exists(build_.includeDir + "/kiln/runtime/ModelABI.h"))
    return emitError(loc_) << "the runtime headers (kiln/runtime/ModelABI.h) "
                              "are not found in '"
                           << build_.includeDir
                           << "'; set KILN_RUNTIME_INCLUDE to the runtime's "
                              "include folder";
  if (failed(findHostCompiler(loc_, options_, build_)))
    return failure();
  // The files go to a temp folder next to the destination.
  finalDir_ = options_.outputDir;
  while (finalDir_.size() > 1 && finalDir_.back() == '/')
    finalDir_.pop_back();
  dir_ = finalDir_ + ".tmp-" + std::to_string(::getpid());
  removeTree(dir_);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir_))
    return emitError(loc_) << "cannot create '" << dir_
                           << "': " << ec.message();
  build_.dir = dir_;
  return success();
}

LogicalResult PackageWriter::writeSources(const PackageNames &names,
                                          const std::string &wrapper,
                                          const std::string &header) {
  build_.wrapper = wrapper;
  build_.library = names.library();
  build_.symbolPrefix = names.name;
  return success(
      succeeded(writeFile(loc_, dir_ + "/wrapper.cpp", wrapper)) &&
      succeeded(writeFile(loc_, dir_ + "/" + names.header(), header)));
}

/// The manifest entry of an input or output.
static ManifestValue manifestValue(const SignatureEntry &e) {
  ManifestValue v;
  v.name = e.name;
  v.dtype = e.dtype;
  v.shape = e.shape;
  v.bytes = static_cast<uint64_t>(e.bytes);
  // A dim that follows a size symbol: -1 in the shape, its expression in
  // "dims" (the bound's bytes stay).
  for (size_t d = 0; d < e.symbolicDims.size(); ++d) {
    bool symbolic = !e.symbolicDims[d].empty();
    v.dims.push_back(symbolic ? e.symbolicDims[d] : std::to_string(e.shape[d]));
    if (symbolic)
      v.shape[d] = -1;
  }
  return v;
}

LogicalResult PackageWriter::writeWeights(func::FuncOp graph,
                                          const MemoryPlan &plan) {
  // weights.bin: the constants, 64-byte aligned, in weight order.
  std::ofstream bin(dir_ + "/weights.bin", std::ios::binary);
  int64_t offset = 0;
  for (auto [i, w] : llvm::enumerate(plan.weights)) {
    ManifestWeight entry;
    entry.name = w.name;
    entry.dtype = w.dtype;
    entry.shape = w.shape;
    entry.bytes = static_cast<uint64_t>(w.bytes);
    entry.index = static_cast<int64_t>(i);
    if (!w.constantOp) {
      // A weight argument: ONNX external data, or bound by the caller.
      auto arg = cast<BlockArgument>(w.value);
      entry.kind = "argument";
      if (auto ext = graph.getArgAttrOfType<DictionaryAttr>(
              arg.getArgNumber(), "kiln.external_data")) {
        entry.external = true;
        if (auto l = ext.getAs<StringAttr>("location"))
          entry.file = l.getValue().str();
        if (auto o = ext.getAs<IntegerAttr>("offset"))
          entry.offset = static_cast<uint64_t>(o.getInt());
        if (auto n = ext.getAs<IntegerAttr>("length"))
          entry.bytes = static_cast<uint64_t>(n.getInt());
      }
      manifest_.weights.push_back(entry);
      continue;
    }
    if (std::optional<std::vector<uint8_t>> fill = fillWeightElement(w)) {
      // A splat: its one element in the manifest, nothing in weights.bin.
      entry.kind = "constant";
      entry.fill = std::move(fill);
      manifest_.formatVersion = kManifestFillsFormatVersion;
      manifest_.weights.push_back(entry);
      continue;
    }
    auto value = w.constantOp->getAttrOfType<ElementsAttr>("value");
    std::optional<Tensor> t = value ? toTensor(value) : std::nullopt;
    if (!t)
      return w.constantOp->emitError("constant '")
             << w.name << "' has a value the packager cannot store";
    Tensor c = t->contiguous();
    assert(w.fileOffset >= offset && (int64_t)c.nbytes() == w.bytes &&
           "weights.bin layout differs from the plan");
    std::string pad(static_cast<size_t>(w.fileOffset - offset), '\0');
    bin.write(pad.data(), pad.size());
    offset = w.fileOffset;
    bin.write(static_cast<const char *>(c.rawData()), c.nbytes());
    entry.kind = "constant";
    entry.file = "weights.bin";
    entry.offset = static_cast<uint64_t>(offset);
    offset += static_cast<int64_t>(c.nbytes());
    manifest_.weights.push_back(entry);
  }
  bin.close();
  if (!bin)
    return emitError(loc_) << "cannot write '" << dir_ << "/weights.bin'";
  codegenSeconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  return success();
}

LogicalResult PackageWriter::finish(func::FuncOp graph, const MemoryPlan &plan,
                                    const GraphCodegen &codegen,
                                    const StepCounts &counts) {
  PackageManifest &m = manifest_;
  if (failed(packageCustomOpLibraries(loc_, graph, dir_, m.customOpLibraries)))
    return failure();
  m.abiVersion = KILN_MODEL_ABI_VERSION;
  m.model = codegen.names().name;
  m.source = options_.modelPath;
  m.target = target_.name().str();
  m.library = codegen.names().library();
  m.symbolPrefix = codegen.names().name;
  for (const SignatureEntry &e : plan.inputs)
    m.inputs.push_back(manifestValue(e));
  for (const SignatureEntry &e : plan.outputs)
    m.outputs.push_back(manifestValue(e));
  m.sizeSymbols = sizeSymbolsOf(graph);
  if (!m.sizeSymbols.empty())
    m.formatVersion = kManifestSizeSymbolsFormatVersion;
  m.weightsFile = "weights.bin";
  for (const KernelRecord &k : codegen.kernels()) {
    ManifestKernel kernel{k.name, k.kind, k.nodes, std::nullopt,
                          k.loadTime ? "load" : "run"};
    if (k.grid && k.block) {
      ManifestLaunch launch;
      for (int d = 0; d < 3; ++d)
        launch.grid[d] = (*k.grid)[d], launch.block[d] = (*k.block)[d];
      launch.sharedBytes = k.sharedBytes;
      launch.launches = k.launches;
      kernel.launch = launch;
    }
    m.kernels.push_back(std::move(kernel));
  }
  // The steps that call the runtime or a library instead of a generated
  // kernel.
  for (Operation &op : graph.getBody().front()) {
    std::string when = op.hasAttr(kLoadTimeAttr) ? "load" : "run";
    if (auto call = dyn_cast<LibraryCallOp>(op))
      m.referenceOps.push_back(
          {call.getCallee().str(), "library", sourceNodeNames(&op), when});
    else if (op.hasAttr(kReferenceAttr))
      m.referenceOps.push_back({op.getName().getStringRef().str(),
                                runsCustomKernel(&op) ? "custom" : "fallback",
                                sourceNodeNames(&op), when});
  }
  m.counts = ManifestCounts{counts.fused, counts.library, counts.fallback,
                            std::nullopt, std::nullopt};
  m.memoryPlan.arenaBytes = plan.arenaBytes;
  m.memoryPlan.libraryWorkspaceOffset = plan.libraryWorkspaceOffset;
  m.memoryPlan.libraryWorkspaceBytes = plan.libraryWorkspaceBytes;
  for (const ArenaBuffer &b : plan.buffers)
    m.memoryPlan.buffers.push_back({b.name, b.offset, b.bytes, b.first, b.last});
  for (const ArenaValue &v : plan.arenaValues)
    m.memoryPlan.arenaValues.push_back(
        {manifestValue(v.entry), v.offset, v.isArgument});
  m.options = {target_.name().str(), options_.weights, build_.isa, {},
               build_.cxx};
  for (const auto &[name, size] : options_.dimSizes)
    m.options.dims.push_back({name, size});
  m.kilnVersion = KILN_VERSION;
  m.versionsAbi = KILN_MODEL_ABI_VERSION;
  m.hostCompilerCommand = build_.command;
  m.hostCompilerWarnings = build_.warnings;
  m.isa = build_.isa;
  m.compileTimes.trace = options_.traceSeconds;
  m.compileTimes.kilnPasses = options_.passSeconds;
  m.compileTimes.codegen = codegenSeconds_;
  m.compileTimes.hostCompiler = build_.hostSeconds;
  m.compileTimes.nvrtc = build_.deviceSeconds;
  m.cuda = build_.deviceBinary;
  if (failed(recordPackageFiles(loc_, dir_, m)))
    return failure();
  return writeFile(loc_, dir_ + "/manifest.json", formatManifest(m));
}

LogicalResult PackageWriter::install() {
  if (failed(installPackage(loc_, dir_, finalDir_)))
    return failure();
  installed_ = true;
  return success();
}

StagedPackage::StagedPackage(Location loc, std::string dir)
    : loc_(loc), dir_(std::move(dir)),
      tmp_(dir_ + ".tmp-" + std::to_string(::getpid())) {}

StagedPackage::~StagedPackage() {
  if (!installed_)
    removeTree(tmp_);
}

LogicalResult StagedPackage::begin() {
  if (failed(checkOutputDir(loc_, dir_)))
    return failure();
  removeTree(tmp_);
  if (std::error_code ec = llvm::sys::fs::create_directories(tmp_ + "/graphs"))
    return emitError(loc_) << "cannot create '" << tmp_
                           << "': " << ec.message();
  return success();
}

LogicalResult StagedPackage::install(const PackageManifest &manifest) {
  PackageManifest recorded = manifest;
  if (failed(recordPackageFiles(loc_, tmp_, recorded)))
    return failure();
  if (Status written = writeManifest(recorded, tmp_ + "/manifest.json");
      !written)
    return emitError(loc_) << written.message();
  if (failed(installPackage(loc_, tmp_, dir_)))
    return failure();
  installed_ = true;
  return success();
}

} // namespace kiln
