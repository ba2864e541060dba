//===- CppKernel.h - C++ kernels of fusion regions --------------*- C++ -*-===//
//
// This file declares the C++ kernel printer's API, the calling convention
// that the wrapper emitter relies on: each fusion region becomes one C++
// function in namespace kiln_kernels,
//
//   void k3_layer_norm(const float *__restrict in0, const float *__restrict
//   in1,
//                      float *__restrict out0, float *__restrict out1);
//
// with the inputs in fusion operand order, then the outputs in result order;
// element types float, double, int64_t, int32_t, int8_t, uint8_t, bool,
// kiln_f16, kiln_bf16 (the prelude's 16-bit storage types); every buffer
// contiguous and row-major with the static shape of its type.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CPPKERNEL_H
#define KILN_CODEGEN_CPPKERNEL_H

#include "codegen/KernelIR.h"
#include "ir/KilnOps.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// One generated C++ kernel.
struct CppKernel {
  /// The function name (the fusion's `name`), e.g. "k3_layer_norm".
  std::string name;
  /// The prototype, without namespace, e.g. `void k3(const float
  /// *__restrict in0, float *__restrict out0);`.
  std::string declaration;
  /// The function definition, preceded by a comment naming its ONNX nodes.
  std::string definition;
  /// The ONNX node names of the region's ops, in op order.
  std::vector<std::string> sourceNodes;
};

/// Lowers one fusion op (kiln.fusion: one region whose block arguments
/// mirror the operands, `kiln.yield` terminator, string attributes `name`
/// and `kind`) to a C++ kernel; emits diagnostics and fails on ops or
/// shapes the kernel IR cannot express.
mlir::FailureOr<CppKernel> emitCppKernel(FusionOp op);

/// Prints a kernel of the kernel IR as C++.
CppKernel printCppKernel(const codegen::Kernel &kernel);

/// The stem of the kernel name of `op` when the CPU target prints a kernel
/// of that single top-level op (CppOpKernels.cpp: "gather", "concat"), or
/// nullopt.
std::optional<llvm::StringRef> cppOpKernelStem(mlir::Operation *op);

/// The kernel `name` of the single top-level op `op` (a kiln.gather,
/// kiln.concat, ... of static shapes), `int name(inputs..., output)` returning
/// nonzero on a bad index; nullopt when `op` does not qualify. kiln-lower-cpu
/// tags what qualifies `kiln.kernel = name`; the CPU printer emits it.
std::optional<CppKernel> emitCppOpKernel(mlir::Operation *op,
                                         llvm::StringRef name);

/// True when CppIndexKernels.cpp has a kernel for ops of `op`'s kind
/// (kiln.trilu, kiln.hardmax, kiln.scatter_elements, kiln.scatter_nd,
/// kiln.gather_nd, kiln.grid_sample).
bool hasCppIndexKernel(mlir::Operation *op);

/// The kernel `name` of such an op (CppIndexKernels.cpp), as
/// emitCppOpKernel's; nullopt when this op does not qualify (a dynamic
/// shape, an element type or attribute the kernel does not take).
std::optional<CppKernel> emitCppIndexKernel(mlir::Operation *op,
                                            llvm::StringRef name);

/// True when CppWindowKernels.cpp has a kernel for ops of `op`'s kind
/// (kiln.pad, kiln.max_pool, kiln.avg_pool).
bool hasCppWindowKernel(mlir::Operation *op);

/// The kernel `name` of such an op (CppWindowKernels.cpp: a pad with
/// constant pads, a channels-first pooling), as emitCppOpKernel's; nullopt
/// when this op does not qualify.
std::optional<CppKernel> emitCppWindowKernel(mlir::Operation *op,
                                             llvm::StringRef name);

/// The kernel `name` of a kiln.einsum (CppEinsumKernel.cpp: the reference's
/// loop over the joint index space, planned at compile time), as
/// emitCppOpKernel's; nullopt for an einsum the reference computes as a GEMM
/// (f32 or f64 of two operands in matmul form), dynamic shapes or types the
/// kernel does not take.
std::optional<CppKernel> emitCppEinsumKernel(mlir::Operation *op,
                                             llvm::StringRef name);

/// The kernel `name` of a kiln.dft (CppSignalKernels.cpp: the reference's
/// direct sums in double complex arithmetic, f32 or f64, static shapes), as
/// emitCppOpKernel's; nullopt for other ops and for a dft it does not take.
std::optional<CppKernel> emitCppSignalKernel(mlir::Operation *op,
                                             llvm::StringRef name);

/// The kernel `name` of a kiln.roi_align or kiln.deform_conv
/// (CppImageKernels.cpp: the reference's bilinear samples in double, f32 or
/// f64, static shapes), as emitCppOpKernel's; a roi_align returns 1 on a
/// batch index outside the input and 3 on a region that is not finite or
/// needs too large a sampling grid. nullopt for other ops and for one it
/// does not take.
std::optional<CppKernel> emitCppImageKernel(mlir::Operation *op,
                                            llvm::StringRef name);

/// `[const ]type *__restrict name`: the parameter of a single-op kernel for
/// the buffer of `v` (const for an input).
std::string cppKernelParam(mlir::Value v, const std::string &name,
                           bool isConst);

/// The parameters `in0, in1, ..., out0` of the single-op kernel of `op`
/// (cppKernelParam of each operand, then of its first result).
std::string cppKernelParams(mlir::Operation *op);

/// The type of `v` when it is a static-shaped tensor of fewer than
/// `maxElements` elements (sizes the kernels print as literals), else null.
mlir::RankedTensorType cppStaticType(mlir::Value v,
                                     int64_t maxElements = int64_t(1) << 62);

/// cppStaticType of `v` (fewer than 2^40 elements) when its elements are f32
/// or f64 (the kernels that compute in double as the reference), else null.
mlir::RankedTensorType cppStaticFloatType(mlir::Value v);

/// The single-op kernel `int name(params) { body }` of `op`, after a comment
/// naming its ONNX nodes and, when not empty, a line saying `what` it
/// computes.
CppKernel makeCppOpKernel(mlir::Operation *op, llvm::StringRef name,
                          const std::string &params, const std::string &body,
                          const std::string &what = "");

/// The text of kernels.cpp: the prelude (see cppKernelPrelude), then every
/// definition inside namespace kiln_kernels.
std::string emitKernelsFile(llvm::ArrayRef<CppKernel> kernels,
                            llvm::StringRef modelName);

/// The prelude of kernels.cpp (<cmath>, <cstdint>, <cstring>, kiln_f16,
/// kiln_bf16 and scalar helpers); the wrapper includes it too when it
/// declares kernels taking kiln_f16/kiln_bf16 buffers.
std::string cppKernelPrelude();

} // namespace kiln

#endif // KILN_CODEGEN_CPPKERNEL_H
