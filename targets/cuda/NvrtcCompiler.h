//===- NvrtcCompiler.h - CUDA source to cubin and PTX -----------*- C++ -*-===//
//
// This file declares the in-process NVRTC driver: it compiles the kernels.cu
// of a package (all kernels in one NVRTC program) to a cubin for the target
// architecture and the PTX of the same compilation (which newer GPUs JIT),
// and turns compile errors into MLIR diagnostics that name the kernel, its
// ONNX nodes and the offending line of kernels.cu.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_NVRTCCOMPILER_H
#define KILN_CODEGEN_NVRTCCOMPILER_H

#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln {

/// The result of compiling a CUDA source.
struct CudaBinary {
  /// The cubin (ELF) for the requested architecture, e.g. sm_90.
  std::string cubin;
  /// The PTX of the same compilation (`.target sm_90`), for the driver to
  /// JIT on GPUs the cubin does not run on.
  std::string ptx;
  /// Wall-clock seconds NVRTC spent compiling.
  double seconds = 0;
  /// NVRTC's log (warnings; empty when clean).
  std::string log;
};

/// True when this kiln was built with NVRTC (the CUDA toolkit was found at
/// configure time).
bool haveNvrtc();

/// Compiles `source` (the text of `fileName`, e.g. "kernels.cu", as
/// emitCudaKernelsFile writes it) with NVRTC in process:
/// `--gpu-architecture=<arch> -std=c++17`, no fast-math. On a compile error,
/// emits an error at `loc` naming the kernel of `kernels` whose definition
/// holds the first failing line (found in `source`), its ONNX nodes, the line
/// number and text, and NVRTC's message, with the full log as a note; then
/// fails. Fails with a clear error when built without NVRTC.
mlir::FailureOr<CudaBinary> compileCudaSource(llvm::StringRef source,
                                              llvm::StringRef fileName,
                                              llvm::ArrayRef<CudaKernel> kernels,
                                              mlir::Location loc,
                                              llvm::StringRef arch = "sm_90");

} // namespace kiln

#endif // KILN_CODEGEN_NVRTCCOMPILER_H
