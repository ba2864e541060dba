//===- WrapperSupport.h - Pieces shared by the wrapper emitters -*- C++ -*-===//
//
// This file declares the internals that the CPU wrapper emitter
// (WrapperEmitter.cpp) and the CUDA step emitter (WrapperEmitterCuda.cpp)
// share: C literals and comments, the buffer expressions of planned values,
// and the static types of values. Not part of codegen's public API.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_WRAPPERSUPPORT_H
#define KILN_CODEGEN_WRAPPERSUPPORT_H

#include "codegen/MemoryPlanner.h"
#include "codegen/WrapperEmitter.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln {
namespace wrapper {

/// "kiln::DType::F32".
std::string dtypeEnum(DType dtype);
/// A C string literal.
std::string quote(llvm::StringRef s);
/// "'/ln/LayerNormalization'" or "'a', 'b'" (for comments and errors).
std::string nodeList(const std::vector<std::string> &names);
/// The ONNX op type recorded in a location, if any.
std::string sourceOpType(mlir::Location loc);

/// Builds the C++ expressions that name the buffer of a value: `inputs[i]`,
/// `m->weights[i]`, `at(arena, offset)` or `outputs[i]` (host pointers in
/// a CPU wrapper, device pointers in a CUDA one).
class BufferNames {
public:
  explicit BufferNames(const MemoryPlan &plan) : plan_(plan) {}

  /// Values computed once at model creation from the weights, with their
  /// offsets in the model's prepared memory (`m->prepared`).
  void setPrepared(const llvm::DenseMap<mlir::Value, int64_t> *prepared) {
    prepared_ = prepared;
  }

  /// The pointer expression of the buffer of `v`.
  std::string pointer(mlir::Value v) const {
    if (prepared_ && prepared_->count(v))
      return "at(m->prepared, " + std::to_string(prepared_->lookup(v)) + ")";
    const BufferLocation &loc = plan_.at(v);
    switch (loc.kind) {
    case BufferKind::Input:
      return "inputs[" + std::to_string(loc.index) + "]";
    case BufferKind::Weight:
      return "m->weights[" + std::to_string(loc.index) + "]";
    case BufferKind::Arena:
      return "at(arena, " + std::to_string(loc.offset) + ")";
    case BufferKind::Output:
      return "outputs[" + std::to_string(loc.index) + "]";
    case BufferKind::None:
      break;
    }
    return "nullptr";
  }

  /// A comment describing the buffer.
  std::string describe(mlir::Value v) const {
    const BufferLocation &loc = plan_.at(v);
    if (prepared_ && prepared_->count(v))
      return "prepared [" + std::to_string(prepared_->lookup(v)) + ", " +
             std::to_string(prepared_->lookup(v) + loc.bytes) + ")";
    switch (loc.kind) {
    case BufferKind::Input:
      return "input '" + commentSafe(plan_.inputs[loc.index].name) + "'";
    case BufferKind::Weight:
      return "weight '" + commentSafe(plan_.weights[loc.index].name) + "'";
    case BufferKind::Arena:
      return "arena [" + std::to_string(loc.offset) + ", " +
             std::to_string(loc.offset + loc.bytes) + ")";
    case BufferKind::Output:
      return "output '" + commentSafe(plan_.outputs[loc.index].name) + "'";
    case BufferKind::None:
      break;
    }
    return "unused";
  }

  /// True when the buffers of `a` and `b` may share bytes (the planner
  /// reuses the arena of dead values: writing one must not clobber the other
  /// when a step is redirected to write another value's buffer).
  bool overlaps(mlir::Value a, mlir::Value b) const {
    if (prepared_ && (prepared_->count(a) || prepared_->count(b)))
      return a == b;
    const BufferLocation &x = plan_.at(a), &y = plan_.at(b);
    if (x.kind != y.kind || x.kind == BufferKind::None)
      return false;
    if (x.kind == BufferKind::Arena)
      return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
    return x.index == y.index;
  }

  /// True for values that live as long as the model: weights and what
  /// weight preparation computed (their buffers are never reused).
  bool isPersistent(mlir::Value v) const {
    return (prepared_ && prepared_->count(v)) ||
           plan_.at(v).kind == BufferKind::Weight;
  }
  /// True for values computed by weight preparation.
  bool isPrepared(mlir::Value v) const {
    return prepared_ && prepared_->count(v);
  }

  /// The workspace arguments of a library call that writes `result`: the
  /// plan's library workspace in the arena, or "nullptr, 0" (the runtime's
  /// own) when none is planned or the call runs in weight preparation, which
  /// has no arena.
  std::string libraryWorkspace(mlir::Value result) const {
    if (!plan_.libraryWorkspaceBytes || isPrepared(result))
      return "nullptr, 0";
    return "at(arena, " + std::to_string(plan_.libraryWorkspaceOffset) +
           "), " + std::to_string(plan_.libraryWorkspaceBytes);
  }

  /// True when `v` has a buffer (results nobody reads have none).
  bool hasBuffer(mlir::Value v) const {
    return plan_.at(v).kind != BufferKind::None;
  }

private:
  const MemoryPlan &plan_;
  const llvm::DenseMap<mlir::Value, int64_t> *prepared_ = nullptr;
};

/// The dtype and static shape of a value (planned, so both are known).
struct ValueType {
  DType dtype;
  llvm::SmallVector<int64_t> shape;
};
ValueType valueType(mlir::Value v);

/// The steps of a graph that read only weights (and what such steps
/// computed): the wrapper runs them once, in kiln_model_create, into memory
/// the model owns (WeightPreparation.cpp).
struct PreparedWeights {
  llvm::DenseSet<mlir::Operation *> ops;
  /// Offsets of their results in the prepared memory (256-byte aligned).
  llvm::DenseMap<mlir::Value, int64_t> offsets;
  int64_t bytes = 0;
};
PreparedWeights planWeightPreparation(const MemoryPlan &plan, bool cuda,
                                      const BufferNames &buffers);

//===----------------------------------------------------------------------===//
// CUDA wrapper pieces (WrapperEmitterCuda.cpp)
//===----------------------------------------------------------------------===//

/// The helpers of a CUDA wrapper (launch, callOnHost), after the common ones.
const char *cudaWrapperHelpers();

/// Emits the launch of the kernel of fusion op `op` (step `index`, kernel
/// `kernelIndex` of kiln_model_kernel_name's list).
void emitCudaKernelStep(llvm::raw_ostream &os, mlir::Operation *op,
                        size_t index, const CudaLaunch &launch,
                        int kernelIndex, const BufferNames &buffers);

/// Emits a cuBLASLt call for a kiln.matmul whose operands and batch
/// broadcasting cuBLASLt takes; returns false (emitting nothing) otherwise.
bool emitCudaMatmulStep(llvm::raw_ostream &os, mlir::Operation *op,
                        size_t index, const BufferNames &buffers);

/// Emits a cuDNN call (kiln_cuda_conv) for a kiln.conv of f32/f16/bf16 with
/// 1 to 3 spatial dims, static shapes and symmetric pads, with the ReLU
/// fusion after it when isFoldedIntoCudaConv (kiln_cuda_conv_relu); returns
/// false (emitting nothing) otherwise.
bool emitCudaConvStep(llvm::raw_ostream &os, mlir::Operation *op,
                      size_t index, const BufferNames &buffers);

/// True for a kiln.transpose of the last two dims whose every user is a
/// cuBLASLt matmul that reads its input transposed instead (the wrapper
/// then emits no step for it).
bool isFoldedIntoCudaMatmuls(mlir::Operation *op, const BufferNames &buffers);

/// True for a kiln.fusion that adds a bias vector to a cuBLASLt matmul's
/// result and/or applies ReLU to it: the matmul's
/// step applies it (cuBLASLt's epilogue) and writes the fusion's result; the
/// fusion has no step.
bool isEpilogueFoldedIntoCudaMatmul(mlir::Operation *fusion,
                                    const BufferNames &buffers);

/// True for a kiln.fusion that cuDNN computes in the call of the kiln.conv
/// just before it (relu(conv + bias + residual): kiln_cuda_conv_relu),
/// which writes the fusion's result; the fusion has no step.
bool isFoldedIntoCudaConv(mlir::Operation *fusion, const BufferNames &buffers);

/// Emits a reference kernel run on the host: operands copied from the
/// device, results copied back (attributes prebuilt as m->attrs[attrIndex]).
void emitCudaHostStep(llvm::raw_ostream &os, mlir::Operation *op,
                      size_t index, llvm::StringRef kindName, int attrIndex,
                      const BufferNames &buffers);

/// Emits the copy of an output that is not written in place.
void emitCudaOutputCopy(llvm::raw_ostream &os, size_t outputIndex,
                        const std::string &source, int64_t bytes,
                        const std::string &comment);

} // namespace wrapper
} // namespace kiln

#endif // KILN_CODEGEN_WRAPPERSUPPORT_H
