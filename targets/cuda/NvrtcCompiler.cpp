//===- NvrtcCompiler.cpp - CUDA source to cubin and PTX -------------------===//
//
// This file implements the NVRTC driver. One compilation for the real
// architecture yields both the cubin (nvrtcGetCUBIN) and its PTX
// (nvrtcGetPTX). Errors in NVRTC's log read `FILE(LINE): error: MESSAGE`;
// the first one is mapped back to the kernel whose definition spans LINE.
// NVRTC is loaded with dlopen on first use (kiln itself does not need the
// CUDA toolkit to run); without the toolkit's headers at configure time (no
// KILN_HAVE_NVRTC) the driver compiles to an error saying so.
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/NvrtcCompiler.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#ifdef KILN_HAVE_NVRTC
#include <dlfcn.h>
#include <nvrtc.h>
#endif

namespace kiln {

namespace {

/// The 1-based line of `source` holding byte `offset`.
size_t lineOf(llvm::StringRef source, size_t offset) {
  return source.take_front(offset).count('\n') + 1;
}

/// Emits the diagnostic of a failed compilation.
void reportCompileError(llvm::StringRef source, llvm::StringRef fileName,
                        llvm::ArrayRef<CudaKernel> kernels, mlir::Location loc,
                        llvm::StringRef log) {
  llvm::Regex errorLine("^(.*)\\(([0-9]+)\\): (catastrophic )?error: (.*)$");
  size_t line = 0;
  std::string message;
  llvm::SmallVector<llvm::StringRef> logLines;
  log.split(logLines, '\n');
  for (llvm::StringRef l : logLines) {
    llvm::SmallVector<llvm::StringRef> m;
    if (!errorLine.match(l.rtrim(), &m))
      continue;
    m[2].getAsInteger(10, line);
    message = m[4].str();
    break;
  }
  mlir::InFlightDiagnostic diag = mlir::emitError(loc);
  diag << "NVRTC failed to compile " << fileName;
  if (line == 0) {
    diag << ": " << (log.empty() ? llvm::StringRef("(no log)") : log.trim());
    return;
  }
  // The kernel whose definition holds the line.
  const CudaKernel *culprit = nullptr;
  for (const CudaKernel &k : kernels) {
    size_t at = source.find(k.definition);
    if (at == llvm::StringRef::npos)
      continue;
    size_t first = lineOf(source, at);
    size_t last = first + llvm::StringRef(k.definition).count('\n');
    if (line >= first && line < last)
      culprit = &k;
  }
  if (culprit) {
    diag << " in kernel '" << culprit->name << "'";
    if (!culprit->sourceNodes.empty())
      diag << " (ONNX nodes: " << llvm::join(culprit->sourceNodes, ", ")
           << ")";
  } else {
    diag << " (in the prelude, outside every kernel)";
  }
  llvm::SmallVector<llvm::StringRef> sourceLines;
  source.split(sourceLines, '\n');
  llvm::StringRef text =
      line <= sourceLines.size() ? sourceLines[line - 1].trim() : "";
  diag << " at " << fileName << ":" << line << ": " << message << "\n  "
       << line << " | " << text;
  diag.attachNote() << "NVRTC log:\n" << log.trim();
}

} // namespace

#ifdef KILN_HAVE_NVRTC

namespace {

/// NVRTC's entry points, loaded with dlopen on first use so that kiln starts
/// (and compiles for the CPU) on machines without the CUDA toolkit.
struct Nvrtc {
  decltype(&::nvrtcCreateProgram) createProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) destroyProgram = nullptr;
  decltype(&::nvrtcCompileProgram) compileProgram = nullptr;
  decltype(&::nvrtcGetProgramLogSize) getProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) getProgramLog = nullptr;
  decltype(&::nvrtcGetCUBINSize) getCUBINSize = nullptr;
  decltype(&::nvrtcGetCUBIN) getCUBIN = nullptr;
  decltype(&::nvrtcGetPTXSize) getPTXSize = nullptr;
  decltype(&::nvrtcGetPTX) getPTX = nullptr;
  decltype(&::nvrtcGetErrorString) getErrorString = nullptr;
  std::string error; ///< why loading failed; empty when loaded

  Nvrtc() {
    // $KILN_NVRTC, the library of the toolkit kiln was built with, then the
    // loader's search path.
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("KILN_NVRTC"))
      candidates.push_back(env);
    candidates.push_back(KILN_NVRTC_LIBRARY);
    candidates.push_back("libnvrtc.so." KILN_NVRTC_MAJOR);
    candidates.push_back("libnvrtc.so");
    void *handle = nullptr;
    for (const std::string &c : candidates)
      if ((handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!handle) {
      error = "cannot load NVRTC (tried $KILN_NVRTC, " +
              std::string(KILN_NVRTC_LIBRARY) +
              ", libnvrtc.so." KILN_NVRTC_MAJOR ", libnvrtc.so): " +
              dlerror() +
              "; install the CUDA toolkit or point $KILN_NVRTC at libnvrtc";
      return;
    }
    auto load = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(handle, name));
      if (!fn && error.empty())
        error = std::string("NVRTC lacks ") + name;
    };
    load(createProgram, "nvrtcCreateProgram");
    load(destroyProgram, "nvrtcDestroyProgram");
    load(compileProgram, "nvrtcCompileProgram");
    load(getProgramLogSize, "nvrtcGetProgramLogSize");
    load(getProgramLog, "nvrtcGetProgramLog");
    load(getCUBINSize, "nvrtcGetCUBINSize");
    load(getCUBIN, "nvrtcGetCUBIN");
    load(getPTXSize, "nvrtcGetPTXSize");
    load(getPTX, "nvrtcGetPTX");
    load(getErrorString, "nvrtcGetErrorString");
  }

  static const Nvrtc &get() {
    static const Nvrtc nvrtc;
    return nvrtc;
  }
};

} // namespace

bool haveNvrtc() { return Nvrtc::get().error.empty(); }

mlir::FailureOr<CudaBinary> compileCudaSource(llvm::StringRef source,
                                              llvm::StringRef fileName,
                                              llvm::ArrayRef<CudaKernel> kernels,
                                              mlir::Location loc,
                                              llvm::StringRef arch) {
  const Nvrtc &api = Nvrtc::get();
  if (!api.error.empty()) {
    mlir::emitError(loc) << "cannot compile " << fileName
                         << " for CUDA: " << api.error;
    return mlir::failure();
  }
  auto check = [&](nvrtcResult r, const char *what) {
    if (r == NVRTC_SUCCESS)
      return true;
    mlir::emitError(loc) << "NVRTC: " << what << " failed: "
                         << api.getErrorString(r);
    return false;
  };
  std::string src = source.str(), name = fileName.str();
  nvrtcProgram program;
  if (!check(api.createProgram(&program, src.c_str(), name.c_str(), 0,
                                nullptr, nullptr),
             "nvrtcCreateProgram"))
    return mlir::failure();
  struct Destroy {
    const Nvrtc &api;
    nvrtcProgram &p;
    ~Destroy() { api.destroyProgram(&p); }
  } destroy{api, program};

  std::string archOption = "--gpu-architecture=" + arch.str();
  // 186: "pointless comparison of unsigned integer with zero", from the
  // prelude's helpers instantiated for unsigned types. --split-compile=0:
  // optimize the kernels on all cores.
  const char *options[] = {archOption.c_str(), "-std=c++17",
                           "--diag-suppress=186", "--split-compile=0"};
  auto start = std::chrono::steady_clock::now();
  nvrtcResult compiled = api.compileProgram(program, 4, options);
  CudaBinary binary;
  binary.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  size_t logSize = 0;
  if (api.getProgramLogSize(program, &logSize) == NVRTC_SUCCESS &&
      logSize > 1) {
    binary.log.resize(logSize);
    api.getProgramLog(program, binary.log.data());
    binary.log.resize(logSize - 1); // the terminating NUL
  }
  if (compiled != NVRTC_SUCCESS) {
    reportCompileError(source, fileName, kernels, loc, binary.log);
    return mlir::failure();
  }
  size_t size = 0;
  if (!check(api.getCUBINSize(program, &size), "nvrtcGetCUBINSize"))
    return mlir::failure();
  binary.cubin.resize(size);
  if (!check(api.getCUBIN(program, binary.cubin.data()), "nvrtcGetCUBIN"))
    return mlir::failure();
  if (!check(api.getPTXSize(program, &size), "nvrtcGetPTXSize"))
    return mlir::failure();
  binary.ptx.resize(size);
  if (!check(api.getPTX(program, binary.ptx.data()), "nvrtcGetPTX"))
    return mlir::failure();
  if (!binary.ptx.empty() && binary.ptx.back() == '\0')
    binary.ptx.pop_back();
  if (binary.cubin.empty() || binary.ptx.empty()) {
    mlir::emitError(loc) << "NVRTC returned an empty "
                         << (binary.cubin.empty() ? "cubin" : "PTX") << " for "
                         << fileName << " (" << archOption << ")";
    return mlir::failure();
  }
  return binary;
}

#else // !KILN_HAVE_NVRTC

bool haveNvrtc() { return false; }

mlir::FailureOr<CudaBinary> compileCudaSource(llvm::StringRef source,
                                              llvm::StringRef fileName,
                                              llvm::ArrayRef<CudaKernel> kernels,
                                              mlir::Location loc,
                                              llvm::StringRef arch) {
  (void)source;
  (void)kernels;
  (void)arch;
  (void)reportCompileError;
  mlir::emitError(loc)
      << "cannot compile " << fileName
      << " for CUDA: this kiln was built without NVRTC (the CUDA toolkit was "
         "not found at configure time); reconfigure with the toolkit "
         "installed (e.g. -DCUDAToolkit_ROOT=/usr/local/cuda) or compile "
         "with --target cpu";
  return mlir::failure();
}

#endif // KILN_HAVE_NVRTC

} // namespace kiln
