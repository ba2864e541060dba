//===- WrapperSupport.h - Pieces shared by the wrapper emitters -*- C++ -*-===//
//
// This file declares the internals that the wrapper emitter
// (WrapperEmitter.cpp) and the targets' step emitters (targets/*/) share: C
// literals and comments, the buffer expressions of planned values, the
// static types of values and the attributes of reference steps.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_WRAPPERSUPPORT_H
#define KILN_CODEGEN_WRAPPERSUPPORT_H

#include "codegen/MemoryPlanner.h"
#include "codegen/Target.h"
#include "codegen/WrapperEmitter.h"
#include "kiln/runtime/Attributes.h"

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

  /// The pointer expression of the buffer of `v`.
  std::string pointer(mlir::Value v) const {
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
    case BufferKind::Prepared:
      return "at(m->prepared, " + std::to_string(loc.offset) + ")";
    case BufferKind::None:
      break;
    }
    return "nullptr";
  }

  /// A comment describing the buffer.
  std::string describe(mlir::Value v) const {
    const BufferLocation &loc = plan_.at(v);
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
    case BufferKind::Prepared:
      return "prepared [" + std::to_string(loc.offset) + ", " +
             std::to_string(loc.offset + loc.bytes) + ")";
    case BufferKind::None:
      break;
    }
    return "unused";
  }

  /// The workspace arguments of a library call that writes `result`: the
  /// plan's library workspace in the arena, or "nullptr, 0" (the runtime's
  /// own) when none is planned or the call runs at load time, which has no
  /// arena.
  std::string libraryWorkspace(mlir::Value result) const {
    if (!plan_.libraryWorkspaceBytes ||
        plan_.at(result).kind == BufferKind::Prepared)
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
};

/// The dtype and static shape of a value (planned, so both are known; in
/// a package compiled for a range of sizes, the shape at the bound), and
/// each dim as C++: a number, or a run-time size where it follows a size
/// symbol (codegen/SymbolicShapes.h).
struct ValueType {
  DType dtype;
  llvm::SmallVector<int64_t> shape;
  std::vector<std::string> dims;
  bool symbolic = false;
};
ValueType valueType(mlir::Value v);

/// The shape of `t` as a C++ initializer: "{kiln_s_batch, 16}".
std::string shapeExpr(const ValueType &t);

/// The bytes of `t` as a C++ expression: a number, or a run-time product.
std::string bytesExpr(const ValueType &t);

/// ", kiln_s_batch, ..." : the size arguments of the kernel of `op` (its
/// kernelSizeSymbols), "" when it has none.
std::string kernelSizeArguments(mlir::Operation *op);

/// `op`'s attributes as the runtime's reference kernel reads them (the
/// lowering's own kiln.* tags left out; a library call's `params`).
Attributes referenceAttributes(mlir::Operation *op);

/// The comment and C++ initializer lines of the attributes of a reference
/// step: appends `kiln::Attributes <builder>() {...}` to `attrs` (tensor
/// data as byte arrays to `globals`).
void emitAttributeBuilder(mlir::Operation *op, llvm::StringRef builder,
                          size_t index, llvm::raw_ostream &attrs,
                          llvm::raw_ostream &globals);

/// The first ONNX node of `op` (its own name when it has none).
std::string firstNode(mlir::Operation *op);

/// The tensor parameters of the exported entry point of the kernel of `op`:
/// `const T *in<i>` per operand, `T *out<i>` per result (f16/bf16 as
/// uint16_t bits), each documented with its type and the buffer the
/// package's run gives it.
std::vector<KernelParameter> kernelParameters(mlir::Operation *op,
                                              const BufferNames &buffers);

/// The comment lines of a kernel's entry point: its name, kind and ONNX
/// nodes.
std::vector<std::string> kernelDoc(mlir::Operation *op,
                                   llvm::StringRef kernelName,
                                   llvm::StringRef kind);

} // namespace wrapper
} // namespace kiln

#endif // KILN_CODEGEN_WRAPPERSUPPORT_H
