//===- StaticEinsum.cpp - A kiln.einsum planned at compile time -----------===//
//
// This file implements planStaticEinsum and einsumLabelName (StaticEinsum.h):
// the operands' static shapes, einsum::planEinsum and einsum::planLoops, as
// the reference kernel computes them at run time.
//
//===----------------------------------------------------------------------===//

#include "codegen/StaticEinsum.h"

#include "mlir/IR/BuiltinTypes.h"

namespace kiln {
namespace codegen {

std::string einsumLabelName(int label) {
  return label < einsum::kEllipsisBase
             ? std::string(1, static_cast<char>(label))
             : "..." + std::to_string(label - einsum::kEllipsisBase);
}

std::optional<StaticEinsum> planStaticEinsum(EinsumOp op) {
  auto yt = mlir::dyn_cast<mlir::RankedTensorType>(op.getResult().getType());
  if (!yt || !yt.hasStaticShape() || yt.getNumElements() == 0 ||
      yt.getNumElements() >= (int64_t(1) << 62))
    return std::nullopt;
  std::optional<ScalarType> st = scalarTypeOf(yt.getElementType());
  if (!st)
    return std::nullopt;
  StaticEinsum e;
  e.type = *st;
  for (mlir::Value v : op.getInputs()) {
    auto t = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || t.getElementType() != yt.getElementType())
      return std::nullopt;
    e.shapes.emplace_back(t.getShape().begin(), t.getShape().end());
  }
  Expected<einsum::EinsumPlan> planned =
      einsum::planEinsum(op.getEquation().str(), e.shapes);
  if (!planned)
    return std::nullopt;
  e.plan = std::move(*planned);
  e.loops = einsum::planLoops(e.plan, e.shapes);
  e.outputElements = 1;
  for (size_t d = 0; d < e.loops.numOutput; ++d)
    e.outputElements *= e.loops.sizes[d];
  if (e.outputElements != yt.getNumElements())
    return std::nullopt;
  return e;
}

} // namespace codegen
} // namespace kiln
