//===- Packager.cpp - Writes a compiled model package ---------------------===//
//
// This file implements the packager. The package layout:
//
//   DIR/model.so       wrapper.cpp + kernels.cpp, one host compiler run:
//                      <cxx> -std=c++17 -O3 -march=x86-64-v3
//                      -fno-tree-slp-vectorize -fno-trapping-math
//                      -fno-math-errno -fopenmp -fPIC
//                      -shared -fvisibility=hidden -Wl,-soname,model.so
//                      -I<runtime include>
//                      kernels.cpp wrapper.cpp -o model.so
//                      (not linked against libkiln_runtime.so: the runtime
//                      symbols resolve from the loading process)
//   DIR/model.h        the typed C++ API
//   DIR/kernels.cpp    the generated kernels (to read); --target cuda:
//   DIR/kernels.cu     the generated CUDA kernels (to read), compiled in
//   DIR/kernels.cubin  process by NVRTC for sm_90, and their PTX
//   DIR/kernels.ptx    (model.so is then wrapper.cpp alone)
//   DIR/wrapper.cpp    the generated host wrapper (to read)
//   DIR/weights.bin    every top-level constant, 64-byte aligned, in weight
//                      order (weight arguments are not in it)
//   DIR/manifest.json  signature, weights (where each lives), kernels with
//                      their ONNX nodes, library and fallback ops, the
//                      memory plan, options, versions, compile times
//
// Weights. Every top-level kiln.constant is a weight stored in weights.bin
// ("file": "weights.bin", "offset", "bytes"). Weight *arguments* of the graph
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
#include "targets/cpu/CppKernel.h"
#include "targets/cuda/CudaKernel.h"
#include "targets/cuda/NvrtcCompiler.h"
#include "codegen/MemoryPlanner.h"
#include "codegen/ModelHeaderEmitter.h"
#include "codegen/WrapperEmitter.h"
#include "ir/KilnOps.h"
#include "passes/TensorConversion.h"

#include "kiln/runtime/ModelABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <unistd.h>

#ifndef KILN_DEFAULT_CXX
#define KILN_DEFAULT_CXX "c++"
#endif
#ifndef KILN_RUNTIME_INCLUDE_DIR
#define KILN_RUNTIME_INCLUDE_DIR ""
#endif
#ifndef KILN_VERSION
#define KILN_VERSION "0.1.0"
#endif

using namespace mlir;
using json = nlohmann::ordered_json;

namespace kiln {

/// cuBLASLt's workspace in the arena of a cuda graph with matmuls: 32 MiB,
/// what NVIDIA recommends for Hopper (and the runtime's own default).
constexpr int64_t kCudaMatmulWorkspaceBytes = int64_t(32) << 20;

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

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The graph function of a module (marked `kiln.graph`, else @main).
func::FuncOp findGraph(ModuleOp module) {
  func::FuncOp found;
  module.walk([&](func::FuncOp f) {
    if (!found && f->hasAttr("kiln.graph"))
      found = f;
  });
  return found ? found : module.lookupSymbol<func::FuncOp>("main");
}

json signatureJson(const SignatureEntry &e) {
  return json{{"name", e.name},
              {"dtype", dtypeName(e.dtype)},
              {"shape", e.shape},
              {"bytes", e.bytes}};
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

/// The host compiler to run.
std::string hostCompiler(const PackageOptions &options) {
  if (!options.cxx.empty())
    return options.cxx;
  if (const char *env = std::getenv("KILN_CXX"); env && *env)
    return env;
  return KILN_DEFAULT_CXX;
}

/// The first lines of a compiler log, with the temp folder's path removed
/// and, after them, the generated source line of the first error.
std::string summarizeCompilerLog(const std::string &log,
                                 const std::string &tmpDir,
                                 const std::string &kernels,
                                 const std::string &wrapper) {
  std::string cleaned;
  std::string prefix = tmpDir + "/";
  for (size_t pos = 0;;) {
    size_t hit = log.find(prefix, pos);
    cleaned += log.substr(pos, hit == std::string::npos ? hit : hit - pos);
    if (hit == std::string::npos)
      break;
    pos = hit + prefix.size();
  }
  std::istringstream lines(cleaned);
  std::string line, head;
  for (int n = 0; n < 30 && std::getline(lines, line); ++n)
    head += "  " + line + "\n";
  std::smatch m;
  static const std::regex errorLine(
      R"(((kernels|wrapper)\.cpp):([0-9]+):[0-9:]* *(fatal )?error:)");
  if (std::regex_search(cleaned, m, errorLine)) {
    const std::string &text = m[2] == "kernels" ? kernels : wrapper;
    int target = std::stoi(m[3]);
    std::istringstream src(text);
    std::string s;
    for (int n = 1; std::getline(src, s); ++n)
      if (n == target) {
        head += "generated source " + m[1].str() + ":" + m[3].str() + ": " + s +
                "\n";
        break;
      }
  }
  return head;
}

} // namespace

/// Removes a folder tree, ignoring errors (cleanup of our own temp dirs).
void removeTree(const std::string &dir) {
  if (!dir.empty() && llvm::sys::fs::exists(dir))
    (void)llvm::sys::fs::remove_directories(dir);
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

FailureOr<StepCounts> countSteps(ModuleOp module) {
  func::FuncOp graph = findGraph(module);
  if (!graph)
    return module.emitError("the module has no graph function");
  StepCounts counts;
  for (Operation &op : graph.getBody().front()) {
    switch (classifyStep(&op)) {
    case StepKind::Kernel:
      ++counts.fused;
      break;
    case StepKind::Library:
      ++counts.library;
      break;
    case StepKind::Fallback:
      ++counts.fallback;
      break;
    default:
      break;
    }
  }
  // The arena needs static shapes; without them it is unknown (-1).
  ScopedDiagnosticHandler quiet(module.getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<MemoryPlan> plan = planMemory(graph);
  counts.arenaBytes = succeeded(plan) ? plan->arenaBytes : -1;
  return counts;
}

LogicalResult writePackage(ModuleOp module, const PackageOptions &options,
                           StepCounts *countsOut) {
  auto start = std::chrono::steady_clock::now();
  Location loc = module.getLoc();
  func::FuncOp graph = findGraph(module);
  if (!graph)
    return module.emitError("the module has no graph function");
  bool cuda = options.target == "cuda";
  if (options.target != "cpu" && !cuda)
    return emitError(loc) << "unknown --target '" << options.target
                          << "' (supported: cpu, cuda)";
  if (cuda && !haveNvrtc())
    return emitError(loc) << "--target cuda needs NVRTC, and this kiln was "
                             "built without it (configure with the CUDA "
                             "toolkit installed)";
  // The instruction-set level the package is compiled for; the manifest
  // records it and kiln::Model refuses a package the CPU cannot run.
  // A cuda package's host code (the wrapper) is not hot: it is built for
  // x86-64-v2 unless --cpu-isa says otherwise, so it loads on any GPU host.
  std::string isa = options.cpuIsa;
  if ((isa.empty() || isa == "host") && cuda)
    isa = "x86-64-v2";
  else if (isa.empty() || isa == "host")
    isa = hostCpuIsa();
  else if (isa != "x86-64-v2" && isa != "x86-64-v3" && isa != "x86-64-v4")
    return emitError(loc) << "unknown --cpu-isa '" << isa
                          << "' (supported: host, x86-64-v2, x86-64-v3, "
                             "x86-64-v4)";
  if (failed(checkOutputDir(loc, options.outputDir)))
    return failure();
  std::string includeDir = KILN_RUNTIME_INCLUDE_DIR;
  if (const char *env = std::getenv("KILN_RUNTIME_INCLUDE"); env && *env)
    includeDir = env;
  if (includeDir.empty() ||
      !llvm::sys::fs::exists(includeDir + "/kiln/runtime/ModelABI.h"))
    return emitError(loc) << "the runtime headers (kiln/runtime/ModelABI.h) "
                             "are not found in '"
                          << includeDir
                          << "'; set KILN_RUNTIME_INCLUDE to the runtime's "
                             "include folder";

  // 1. Kernels: one per fusion region.
  std::string modelName = modelNameOf(module);
  std::vector<CppKernel> kernels;
  std::vector<CudaKernel> cudaKernels;
  WrapperTarget wrapperTarget;
  wrapperTarget.name = options.target;
  int numPools = 0; // printed max-pool kernels (cuda): p0_max_pool, ...
  json kernelsJson = json::array(), refOpsJson = json::array();
  StepCounts counts;
  for (Operation &op : graph.getBody().front()) {
    StepKind kind = classifyStep(&op);
    if (kind == StepKind::Kernel && cuda) {
      FailureOr<CudaKernel> kernel = emitCudaKernel(cast<FusionOp>(op));
      if (failed(kernel))
        return failure();
      CudaLaunch launch;
      launch.name = kernel->name;
      std::copy(kernel->grid, kernel->grid + 3, launch.grid);
      std::copy(kernel->block, kernel->block + 3, launch.block);
      launch.sharedBytes = kernel->sharedBytes;
      wrapperTarget.launches[&op] = launch;
      kernelsJson.push_back(
          json{{"name", kernel->name},
               {"kind", op.getAttrOfType<StringAttr>("kind").getValue()},
               {"nodes", sourceNodeNames(&op)},
               {"grid", launch.grid},
               {"block", launch.block},
               {"shared_bytes", launch.sharedBytes}});
      cudaKernels.push_back(std::move(*kernel));
      ++counts.fused;
    } else if (kind == StepKind::Kernel) {
      FailureOr<CppKernel> kernel = emitCppKernel(cast<FusionOp>(op));
      if (failed(kernel))
        return failure();
      wrapperTarget.kernelDeclarations[&op] = kernel->declaration;
      kernelsJson.push_back(
          json{{"name", kernel->name},
               {"kind", op.getAttrOfType<StringAttr>("kind").getValue()},
               {"nodes", sourceNodeNames(&op)}});
      kernels.push_back(std::move(*kernel));
      ++counts.fused;
    } else if (std::optional<CudaKernel> pool =
                   cuda ? emitCudaMaxPoolKernel(
                              &op, "p" + std::to_string(numPools) + "_max_pool")
                        : std::nullopt) {
      ++numPools;
      // A max pool on the GPU: a printed kernel, launched like a fusion's.
      CudaLaunch launch;
      launch.name = pool->name;
      std::copy(pool->grid, pool->grid + 3, launch.grid);
      std::copy(pool->block, pool->block + 3, launch.block);
      wrapperTarget.launches[&op] = launch;
      kernelsJson.push_back(json{{"name", pool->name},
                                 {"kind", "pool"},
                                 {"nodes", sourceNodeNames(&op)},
                                 {"grid", launch.grid},
                                 {"block", launch.block},
                                 {"shared_bytes", 0}});
      cudaKernels.push_back(std::move(*pool));
      ++counts.fused;
    } else if (kind == StepKind::Library || kind == StepKind::Fallback) {
      (kind == StepKind::Library ? counts.library : counts.fallback)++;
      refOpsJson.push_back(
          json{{"op", op.getName().getStringRef().str()},
               {"kind", kind == StepKind::Library ? "library" : "fallback"},
               {"nodes", sourceNodeNames(&op)}});
    }
  }

  // 2. Memory plan, wrapper and model.h. cuda: cuBLASLt's workspace is part
  // of the arena (each concurrent run has its own), not the runtime's.
  FailureOr<MemoryPlan> plan = planMemory(graph);
  if (failed(plan))
    return failure();
  if (cuda && graph.walk([](Operation *op) {
                     return op->getName().getStringRef() == "kiln.matmul"
                                ? WalkResult::interrupt()
                                : WalkResult::advance();
                   }).wasInterrupted())
    reserveLibraryWorkspace(*plan, kCudaMatmulWorkspaceBytes);
  counts.arenaBytes = plan->arenaBytes;
  FailureOr<std::string> wrapper =
      emitWrapper(graph, *plan, wrapperTarget, modelName);
  if (failed(wrapper))
    return failure();
  std::string header = emitModelHeader(*plan, modelName);
  std::string kernelsText = cuda ? emitCudaKernelsFile(cudaKernels, modelName)
                                 : emitKernelsFile(kernels, modelName);
  std::string kernelsFile = cuda ? "kernels.cu" : "kernels.cpp";

  // 2b. cuda: every kernel in one NVRTC program (sm_90 cubin and PTX).
  std::optional<CudaBinary> binary;
  if (cuda) {
    FailureOr<CudaBinary> compiled =
        compileCudaSource(kernelsText, kernelsFile, cudaKernels, loc);
    if (failed(compiled))
      return failure();
    binary = std::move(*compiled);
  }

  // 3. The files, in a temp folder next to the destination.
  std::string dir = options.outputDir;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  std::string tmp = dir + ".tmp-" + std::to_string(::getpid());
  removeTree(tmp);
  if (std::error_code ec = llvm::sys::fs::create_directories(tmp))
    return emitError(loc) << "cannot create '" << tmp << "': " << ec.message();
  auto fail = [&]() {
    removeTree(tmp);
    return failure();
  };
  if (failed(writeFile(loc, tmp + "/" + kernelsFile, kernelsText)) ||
      (binary &&
       (failed(writeFile(loc, tmp + "/kernels.cubin", binary->cubin)) ||
        failed(writeFile(loc, tmp + "/kernels.ptx", binary->ptx)))) ||
      failed(writeFile(loc, tmp + "/wrapper.cpp", *wrapper)) ||
      failed(writeFile(loc, tmp + "/model.h", header)))
    return fail();

  // weights.bin: the constants, 64-byte aligned, in weight order.
  json weightsJson = json::array();
  {
    std::ofstream bin(tmp + "/weights.bin", std::ios::binary);
    int64_t offset = 0;
    for (auto [i, w] : llvm::enumerate(plan->weights)) {
      json entry = signatureJson(w);
      entry["index"] = i;
      if (!w.constantOp) {
        auto arg = cast<BlockArgument>(w.value);
        entry["kind"] = "argument";
        if (auto ext = graph.getArgAttrOfType<DictionaryAttr>(
                arg.getArgNumber(), "kiln.external_data")) {
          json e;
          if (auto l = ext.getAs<StringAttr>("location"))
            e["file"] = l.getValue().str();
          if (auto o = ext.getAs<IntegerAttr>("offset"))
            e["offset"] = o.getInt();
          e["bytes"] = w.bytes;
          if (auto n = ext.getAs<IntegerAttr>("length"))
            e["bytes"] = n.getInt();
          entry["external"] = e;
        }
        weightsJson.push_back(entry);
        continue;
      }
      auto value = w.constantOp->getAttrOfType<ElementsAttr>("value");
      std::optional<Tensor> t = value ? toTensor(value) : std::nullopt;
      if (!t) {
        w.constantOp->emitError("constant '")
            << w.name << "' has a value the packager cannot store";
        return fail();
      }
      Tensor c = t->contiguous();
      assert(w.fileOffset >= offset && (int64_t)c.nbytes() == w.bytes &&
             "weights.bin layout differs from the plan");
      std::string pad(static_cast<size_t>(w.fileOffset - offset), '\0');
      bin.write(pad.data(), pad.size());
      offset = w.fileOffset;
      bin.write(static_cast<const char *>(c.rawData()), c.nbytes());
      entry["kind"] = "constant";
      entry["file"] = "weights.bin";
      entry["offset"] = offset;
      offset += static_cast<int64_t>(c.nbytes());
      weightsJson.push_back(entry);
    }
    bin.close();
    if (!bin) {
      emitError(loc) << "cannot write '" << tmp << "/weights.bin'";
      return fail();
    }
  }
  double codegenSeconds = secondsSince(start);

  // 4. One host compiler invocation.
  auto compileStart = std::chrono::steady_clock::now();
  std::string cxx = hostCompiler(options);
  std::string cxxPath = cxx;
  if (cxx.find('/') == std::string::npos) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(cxx);
    if (!found) {
      emitError(loc) << "host C++ compiler '" << cxx
                     << "' not found in PATH; pass --cxx PATH or set "
                        "KILN_CXX";
      return fail();
    }
    cxxPath = *found;
  } else if (!llvm::sys::fs::can_execute(cxx)) {
    emitError(loc) << "host C++ compiler '" << cxx
                   << "' is not an executable file; pass --cxx PATH";
    return fail();
  }
  // -march=<isa level> (host: the compiling machine's level; a package for
  // other machines names a lower one with --cpu-isa; the loader checks the
  // CPU). AVX-512 (x86-64-v4) made softmax 1.4x faster than AVX2.
  // -fno-trapping-math, -fno-math-errno: the kernels never read floating-
  // point exception flags or errno; without these GCC keeps the selects of
  // kiln_expf and sqrtf's error branch, and the loops stay scalar (softmax
  // measured 2x slower). IEEE results are unchanged.
  // -fno-tree-slp-vectorize: GCC 12's straight-line (SLP) vectorizer, tuned
  // for some CPUs (Rocket Lake: -march=native or -mtune=native), miscompiles
  // the wrapper's attribute tables (a std::vector<int64_t>{1, 1, 0, 0} held
  // {1, 1, 1, 1}); loop vectorization, which the kernels rely on, stays on.
  std::vector<std::string> flags = {"-std=c++17",
                                    "-O3",
                                    "-march=" + isa,
                                    "-fno-tree-slp-vectorize",
                                    "-fno-trapping-math",
                                    "-fno-math-errno",
                                    "-fPIC",
                                    "-shared",
                                    "-fvisibility=hidden",
                                    "-Wl,-soname,model.so",
                                    "-I" + includeDir};
  if (!cuda) // kernels.cpp's parallel loops; a cuda model.so has none
    flags.push_back("-fopenmp");
  std::vector<std::string> argStrings = {cxx};
  argStrings.insert(argStrings.end(), flags.begin(), flags.end());
  if (!cuda)
    argStrings.push_back(tmp + "/kernels.cpp");
  argStrings.push_back(tmp + "/wrapper.cpp");
  argStrings.push_back("-o");
  argStrings.push_back(tmp + "/model.so");
  std::vector<StringRef> args(argStrings.begin(), argStrings.end());
  std::string logPath = tmp + "/compiler.log";
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(cxxPath, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &execError);
  double compileSeconds = secondsSince(compileStart);
  std::string log;
  {
    std::ifstream in(logPath);
    std::stringstream ss;
    ss << in.rdbuf();
    log = ss.str();
  }
  if (rc != 0) {
    emitError(loc) << "the host C++ compiler failed (" << cxx
                   << (execError.empty() ? "" : ": " + execError)
                   << ", exit status " << rc << ") building model.so:\n"
                   << summarizeCompilerLog(log, tmp, kernelsText, *wrapper)
                   << "no package was written; this is a Kiln bug unless "
                      "the compiler given by --cxx is unusable";
    return fail();
  }
  llvm::sys::fs::remove(logPath);

  // 5. The manifest.
  json bufs = json::array();
  for (const ArenaBuffer &b : plan->buffers)
    bufs.push_back(json{{"name", b.name},
                        {"offset", b.offset},
                        {"bytes", b.bytes},
                        {"first", b.first},
                        {"last", b.last}});
  json inputs = json::array(), outputs = json::array();
  for (const SignatureEntry &e : plan->inputs)
    inputs.push_back(signatureJson(e));
  for (const SignatureEntry &e : plan->outputs)
    outputs.push_back(signatureJson(e));
  json dims = json::object();
  for (const auto &[name, size] : options.dimSizes)
    dims[name] = size;
  std::string commandLine;
  for (const std::string &a : argStrings) {
    std::string shown = a;
    if (StringRef(a).starts_with(tmp + "/"))
      shown = a.substr(tmp.size() + 1);
    commandLine += (commandLine.empty() ? "" : " ") + shown;
  }
  json manifest = {
      {"format", "kiln-package"},
      {"format_version", 1},
      {"abi_version", KILN_MODEL_ABI_VERSION},
      {"model", modelName},
      {"source", options.modelPath},
      {"target", options.target},
      {"library", "model.so"},
      {"signature", {{"inputs", inputs}, {"outputs", outputs}}},
      {"weights_file", "weights.bin"},
      {"weights", weightsJson},
      {"kernels", kernelsJson},
      {"reference_ops", refOpsJson},
      {"counts",
       {{"fused", counts.fused},
        {"library", counts.library},
        {"fallback", counts.fallback}}},
      {"memory_plan",
       {{"arena_bytes", plan->arenaBytes},
        {"library_workspace",
         {{"offset", plan->libraryWorkspaceOffset},
          {"bytes", plan->libraryWorkspaceBytes}}},
        {"buffers", bufs}}},
      {"options",
       {{"target", options.target},
        {"weights", options.weights},
        {"cpu_isa", isa},
        {"dims", dims},
        {"cxx", cxx}}},
      {"versions", {{"kiln", KILN_VERSION}, {"abi", KILN_MODEL_ABI_VERSION}}},
      {"host_compiler", {{"command", commandLine}, {"warnings", log}}},
      {"isa", isa},
      {"compile_times_s",
       {{"trace", options.traceSeconds},
        {"kiln_passes", options.passSeconds},
        {"codegen", codegenSeconds},
        {"host_compiler", compileSeconds},
        {"nvrtc", binary ? binary->seconds : 0.0}}},
  };
  if (binary)
    manifest["cuda"] = {{"arch", "sm_90"},
                        {"cubin", "kernels.cubin"},
                        {"ptx", "kernels.ptx"},
                        {"source", kernelsFile}};
  if (failed(writeFile(loc, tmp + "/manifest.json", manifest.dump(2) + "\n")))
    return fail();

  // 6. Into place.
  if (failed(installPackage(loc, tmp, dir)))
    return fail();
  if (countsOut)
    *countsOut = counts;
  return success();
}

} // namespace kiln
