//===- CudaGatherKernel.cpp - CUDA kernels for gather ---------------------===//
//
// This file implements the CUDA kernel of a top-level kiln.gather (ONNX
// Gather: embedding lookups, token or class selection by run-time indices),
// so that it runs on the device instead of on the host. A gather by constant
// consecutive indices never gets here: kiln-simplify makes it a slice (a
// view that fusions read in place).
//
// The result is [x.shape[:axis], indices.shape, x.shape[axis+1:]], read as
// [outer, count, inner]: one thread per output element, grid-stride, the
// element's index read from `indices` (i32 or i64, negative values count
// from the end), then one element of x. Neighbouring threads read
// neighbouring elements of a row when inner > 1 (an embedding row is read
// coalesced). An index outside [-size, size) is a bad input that the kernel
// cannot report through a status: the kernel executes `__trap()`, so the run
// fails with a CUDA error instead of reading outside x (PyTorch's CUDA gather
// asserts on the device the same way). Sizes are literals.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <string>

using namespace mlir;

namespace kiln {

std::optional<CudaKernel> emitCudaGatherKernel(Operation *op,
                                               llvm::StringRef name) {
  auto gather = dyn_cast<GatherOp>(op);
  if (!gather)
    return std::nullopt;
  auto xt = dyn_cast<RankedTensorType>(gather.getX().getType());
  auto it = dyn_cast<RankedTensorType>(gather.getIndices().getType());
  auto yt = dyn_cast<RankedTensorType>(gather.getResult().getType());
  if (!xt || !it || !yt || !xt.hasStaticShape() || !it.hasStaticShape() ||
      !yt.hasStaticShape() || yt.getNumElements() == 0 ||
      xt.getNumElements() >= (int64_t(1) << 62) ||
      yt.getNumElements() >= (int64_t(1) << 62))
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  std::optional<codegen::ScalarType> indexType =
      codegen::scalarTypeOf(it.getElementType());
  if (!st || !indexType)
    return std::nullopt;
  int64_t axis = gather.getAxis();
  if (axis < 0)
    axis += xt.getRank();
  if (axis < 0 || axis >= xt.getRank())
    return std::nullopt;
  int64_t size = xt.getDimSize(axis), inner = 1;
  for (int64_t d = axis + 1; d < xt.getRank(); ++d)
    inner *= xt.getDimSize(d);
  int64_t count = it.getNumElements(), total = yt.getNumElements();
  if (size == 0)
    return std::nullopt;

  std::string storage = codegen::storageCType(*st);
  std::string index = codegen::storageCType(*indexType);
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + index +
          " *__restrict__ in1, " + storage + " *__restrict__ out0");

  std::string in = std::to_string(inner) + "LL";
  std::string n = std::to_string(count) + "LL";
  std::string sz = std::to_string(size) + "LL";
  std::string s = "// " + k.name + ": gather along axis " +
                  std::to_string(axis) + " of " + std::to_string(size) +
                  " by " + std::to_string(count) + " indices, rows of " +
                  std::to_string(inner) + " elements\n// ONNX nodes:";
  for (const std::string &node : k.sourceNodes)
    s += " " + node;
  s += "\n// mapping: one thread per output element, grid-stride; an index "
       "out of range traps\n";
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += "    const long long kiln_inner = kiln_i % " + in + ";\n";
  s += "    const long long kiln_j = (kiln_i / " + in + ") % " + n + ";\n";
  s += "    const long long kiln_outer = kiln_i / (" + in + " * " + n + ");\n";
  s += "    long long kiln_idx = (long long)in1[kiln_j];\n";
  s += wrapAndCheckIndex("kiln_idx", size, "    ");
  s += "    out0[kiln_i] = in0[(kiln_outer * " + sz + " + kiln_idx) * " + in +
       " + kiln_inner];\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
