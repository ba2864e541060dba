//===- CudaTarget.h - The CUDA backend --------------------------*- C++ -*-===//
//
// This file declares the CUDA target (codegen/Target.h, docs/cuda-backend.md):
// CUDA kernels compiled in process by NVRTC for sm_90, cuBLASLt and cuDNN
// library calls with their epilogues, the runtime's reference kernels on the
// host for the rest; its lowering pass, kiln-lower-cuda; and the pieces of
// its wrapper (CudaWrapperSteps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGETS_CUDA_CUDATARGET_H
#define KILN_TARGETS_CUDA_CUDATARGET_H

#include "codegen/Target.h"
#include "codegen/WrapperSupport.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace kiln {

/// The CUDA target.
std::unique_ptr<Target> createCudaTarget();

/// kiln-lower-cuda (LowerCudaLibraryCalls.cpp).
std::unique_ptr<mlir::Pass> createLowerCudaPass();
/// kiln-cuda-attention (FuseAttention.cpp): written-out attention as
/// kiln.attention, for the flash-attention kernel; with `trainingForward`,
/// on a training graph before autodiff, only the attention whose gradient
/// kernel exists.
std::unique_ptr<mlir::Pass>
createFuseAttentionPass(bool trainingForward = false);
/// kiln-cuda-fuse-depthwise (FuseDepthwise.cpp): the activations around a
/// depthwise convolution into one kiln.depthwise_conv.
std::unique_ptr<mlir::Pass> createFuseDepthwisePass();
/// kiln-cuda-conv-transpose-as-matmul (ConvTransposeAsMatmul.cpp): an
/// up-sampling kiln.conv_transpose (stride = kernel) as a GEMM and a shuffle.
std::unique_ptr<mlir::Pass> createConvTransposeAsMatmulPass();

namespace cudawrapper {

/// The helpers of a CUDA wrapper (launch, callOnHost), after the common ones.
const char *helpers();

/// The exported launcher of generated kernel `kernel` (of `op`):
/// `int <package>_<kernel>(void *function, <typed pointers>, void *stream,
/// char *err, size_t errlen)`, which enqueues it with its launch shape.
KernelEntryPoint kernelEntryPoint(mlir::Operation *op,
                                  const KernelRecord &kernel,
                                  const PackageNames &names,
                                  const wrapper::BufferNames &buffers);
/// The step that runs generated kernel `kernel` (kernel `kernelIndex` of
/// the package's <package>_kernel_name list) for `op`'s operands and
/// results: a call of its launcher.
void emitKernelLaunch(llvm::raw_ostream &os, mlir::Operation *op, size_t index,
                      const KernelRecord &kernel, int kernelIndex,
                      const PackageNames &names,
                      const wrapper::BufferNames &buffers);

/// The kiln_cuda_matmul call of a "cublaslt.matmul" library call.
void emitMatmulCall(llvm::raw_ostream &os, LibraryCallOp call, size_t index,
                    const wrapper::BufferNames &buffers);

/// The kiln_cuda_conv / kiln_cuda_conv_relu call of a "cudnn.conv" library
/// call.
void emitConvCall(llvm::raw_ostream &os, LibraryCallOp call, size_t index,
                  const wrapper::BufferNames &buffers);

/// A reference kernel run on the host: operands copied from the device,
/// results copied back (attributes prebuilt as m->attrs[attrIndex]).
void emitHostStep(llvm::raw_ostream &os, mlir::Operation *op, size_t index,
                  int attrIndex, const wrapper::BufferNames &buffers);

/// The device-to-device copy of an output not written in place (or of an
/// arena value that lives elsewhere) to `destination`.
void emitCopy(llvm::raw_ostream &os, const std::string &destination,
              const std::string &source, const std::string &bytes,
              const std::string &comment);

} // namespace cudawrapper
} // namespace kiln

#endif // KILN_TARGETS_CUDA_CUDATARGET_H
