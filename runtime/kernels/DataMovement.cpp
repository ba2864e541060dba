//===- DataMovement.cpp - Shape and data-movement kernel family -----------===//
//
// This file implements registerDataMovementKernels, which registers the
// reference CPU kernels of the "Shapes and data movement" ops (all but
// resize and constant) from ShapeOps.cpp, GatherScatter.cpp and PadTile.cpp,
// and the helpers those files share (argument checks, parameter reading,
// axis normalization, index conversion).
//
//===----------------------------------------------------------------------===//

#include "DataMovementKernels.h"

namespace kiln {
namespace datamovement {

Status checkArity(const KernelContext &ctx, const char *op, size_t numInputs,
                  size_t numOutputs) {
  KILN_CHECK(ctx.numInputs() == numInputs, op, ": expected ", numInputs,
             " operands, got ", ctx.numInputs());
  for (size_t i = 0; i < numInputs; ++i)
    KILN_CHECK(ctx.input(i).defined(), op, ": operand ", i, " is absent");
  KILN_CHECK(ctx.outputs.size() >= numOutputs, op, ": expected ", numOutputs,
             " result slots, got ", ctx.outputs.size());
  for (size_t i = 0; i < numInputs; ++i)
    KILN_CHECK(ctx.input(i).device() == Device::CPU, op, ": operand ", i,
               " is on ", deviceName(ctx.input(i).device()),
               "; the reference kernels run on the cpu");
  return Status::ok();
}

bool isIntegerDType(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I8 || t == DType::U8;
}

Expected<std::vector<int64_t>> readIntParam(const Tensor &t, const char *op,
                                            const char *what) {
  if (!t.defined())
    return Status::error(strCat(op, ": operand '", what, "' is absent"));
  if (!isIntegerDType(t.dtype()))
    return Status::error(strCat(op, ": operand '", what,
                                "' must be an integer tensor, got ",
                                t.typeString()));
  if (t.rank() > 1)
    return Status::error(strCat(op, ": operand '", what,
                                "' must be rank 0 or 1, got ", t.typeString()));
  return t.toIntVector();
}

Status normalizeAxisChecked(int64_t &axis, int64_t rank, const char *op,
                            const char *what) {
  int64_t orig = axis;
  if (axis < 0)
    axis += rank;
  KILN_CHECK(axis >= 0 && axis < rank, op, ": ", what, " ", orig,
             " is out of range for rank ", rank);
  return Status::ok();
}

Expected<Tensor> indicesAsI64(const Tensor &t, const char *op,
                              const char *what) {
  if (!isIntegerDType(t.dtype()))
    return Status::error(strCat(op, ": ", what,
                                " must be an integer tensor (i32 or i64), got ",
                                t.typeString()));
  if (t.dtype() == DType::I64)
    return t.contiguous();
  return t.to(DType::I64);
}

} // namespace datamovement

void registerDataMovementKernels(Dispatcher &d) {
  datamovement::registerShapeKernels(d);
  datamovement::registerGatherScatterKernels(d);
  datamovement::registerPadTileKernels(d);
}

} // namespace kiln
