//===- WrapperEmitter.h - The generated host wrapper and model.h -*- C++
//-*-===//
//
// This file declares the emitters of the two host-side sources of a package:
// wrapper.cpp, which implements every function of the C ABI
// (runtime/include/kiln/runtime/ModelABI.h) for one graph and runs its ops in
// program order without an interpreter (a call of the generated kernel per
// fusion region, a call of the runtime's reference kernel through
// kiln::Dispatcher per library/fallback op), and model.h, the typed C++ API
// of the model (constexpr shapes, Inputs/Outputs structs, run()).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_WRAPPEREMITTER_H
#define KILN_CODEGEN_WRAPPEREMITTER_H

#include "codegen/MemoryPlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln {

/// How the wrapper runs one top-level op.
enum class StepKind {
  Constant, ///< nothing to do: the value is a weight.
  Kernel,   ///< a generated kernel (a kiln.fusion region).
  Library,  ///< a reference kernel backed by a library (matmul, conv: BLAS).
  Fallback, ///< a reference kernel of the runtime.
  Return,   ///< copies of outputs that are not written in place.
};

/// The kind of a top-level op of a fused graph.
StepKind classifyStep(mlir::Operation *op);

/// The C type of a dtype in generated kernels ("float", "kiln_f16", ...).
const char *kernelCType(DType dtype);

/// A C++ identifier made from `name` (other characters become '_').
std::string toIdentifier(llvm::StringRef name);

/// The model name of a traced module: the stem of its `kiln.source`
/// ("tiny_mlp" for "tiny_mlp.onnx"), else "model".
std::string modelNameOf(mlir::ModuleOp module);

/// How a CUDA wrapper launches one generated kernel (CudaKernel's name and
/// launch shape).
struct CudaLaunch {
  std::string name;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
};

/// What a wrapper is generated for.
struct WrapperTarget {
  /// "cpu": steps call kernels.cpp's functions on the caller's thread;
  /// "cuda": steps launch kernels.cubin's kernels, cuBLASLt and copies on
  /// the run's stream (docs/cuda-backend.md).
  std::string name = "cpu";
  /// cpu: the C++ declaration of each kiln.fusion op's kernel
  /// (CppKernel::declaration).
  llvm::DenseMap<mlir::Operation *, std::string> kernelDeclarations;
  /// cuda: the launch of each kiln.fusion op's kernel.
  llvm::DenseMap<mlir::Operation *, CudaLaunch> launches;
};

/// Emits wrapper.cpp for `graph` and `target`. Fails with a diagnostic when
/// an attribute of a fallback op cannot be rebuilt.
mlir::FailureOr<std::string> emitWrapper(mlir::func::FuncOp graph,
                                         const MemoryPlan &plan,
                                         const WrapperTarget &target,
                                         llvm::StringRef modelName);

/// Emits model.h: the C ABI (ModelABI.h) plus typed inline helpers in a
/// namespace named after the model.
// Formatting shared by the wrapper and model.h emitters.

/// The C type of a dtype in public headers (f16/bf16 as uint16_t bits).
const char *publicCType(DType dtype);
/// `s` with comment terminators and newlines made harmless.
std::string commentSafe(llvm::StringRef s);
/// "{2, 3}".
std::string formatShape(llvm::ArrayRef<int64_t> shape);
/// "f32[2, 3]".
std::string typeString(DType dtype, llvm::ArrayRef<int64_t> shape);

} // namespace kiln

#endif // KILN_CODEGEN_WRAPPEREMITTER_H
