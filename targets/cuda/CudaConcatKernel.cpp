//===- CudaConcatKernel.cpp - CUDA kernels for concat ---------------------===//
//
// This file implements the CUDA kernel of a top-level kiln.concat (the
// kernel IR has no op that reads one of several buffers by position), so
// that a concat outside a fusion runs on the device instead of on the host
// (a round trip through host memory): one thread per output element,
// grid-stride; the element's position along the axis picks the input, each
// a contiguous [outer, size_i, inner] block. Sizes are literals. The kernel
// goes into kernels.cu with the fusion kernels and is launched the same way
// (its parameters: the inputs, then the output).
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

std::optional<CudaKernel> emitCudaConcatKernel(Operation *op,
                                               llvm::StringRef name) {
  auto concat = dyn_cast<ConcatOp>(op);
  if (!concat)
    return std::nullopt;
  auto yt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!yt || !yt.hasStaticShape() || yt.getNumElements() == 0 ||
      yt.getNumElements() >= (int64_t(1) << 62))
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(yt.getElementType());
  if (!st)
    return std::nullopt;
  int64_t axis = concat.getAxis();
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < yt.getRank(); ++d)
    inner *= yt.getDimSize(d);
  int64_t total = yt.getNumElements(), along = yt.getDimSize(axis);
  std::vector<int64_t> sizes;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return std::nullopt;
    sizes.push_back(t.getDimSize(axis));
  }

  std::string storage = codegen::storageCType(*st);
  std::string params;
  for (size_t i = 0; i < sizes.size(); ++i)
    params += "const " + storage + " *__restrict__ in" + std::to_string(i) +
              ", ";
  params += storage + " *__restrict__ out0";
  CudaKernel k;
  std::string head = beginElementKernel(k, op, name, total, params);

  std::string s = "// " + k.name + ": concat of " +
                  std::to_string(sizes.size()) + " inputs along axis " +
                  std::to_string(axis) + " into " + std::to_string(total) +
                  " elements\n// ONNX nodes:";
  for (const std::string &n : k.sourceNodes)
    s += " " + n;
  s += "\n// mapping: one thread per output element, grid-stride\n";
  s += head + " {\n";
  s += elementLoopHead(k, total);
  std::string in = std::to_string(inner) + "LL";
  s += "    const long long kiln_inner = kiln_i % " + in + ";\n";
  s += "    const long long kiln_a = (kiln_i / " + in + ") % " +
       std::to_string(along) + "LL;\n";
  s += "    const long long kiln_outer = kiln_i / (" + in + " * " +
       std::to_string(along) + "LL);\n";
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string size = std::to_string(sizes[i]) + "LL";
    std::string read = "in" + std::to_string(i) + "[(kiln_outer * " + size +
                       " + (kiln_a - " + std::to_string(offset) + "LL)) * " +
                       in + " + kiln_inner]";
    if (i + 1 < sizes.size())
      s += std::string(i ? "    else if" : "    if") + " (kiln_a < " +
           std::to_string(offset + sizes[i]) + "LL)\n      out0[kiln_i] = " +
           read + ";\n";
    else
      s += std::string(i ? "    else\n  " : "") + "    out0[kiln_i] = " +
           read + ";\n";
    offset += sizes[i];
  }
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
