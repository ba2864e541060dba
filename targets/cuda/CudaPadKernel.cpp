//===- CudaPadKernel.cpp - The CUDA kernel of kiln.pad --------------------===//
//
// This file implements the CUDA kernel of a top-level kiln.pad with
// constant pads (the output's static shape comes from them): constant,
// reflect, edge and wrap modes, negative pads cropping first, as the
// reference kernel (runtime/kernels/PadTile.cpp, mapPadCoordinate) does.
//
//   one thread per output element (grid-stride): per axis, the output
//   coordinate minus the begin pad is mapped into the cropped axis by the
//   mode (printed per axis; axes without pads copy the coordinate), and the
//   element is x's there, or the constant value (read from its rank-0
//   operand, 0 when that has no element) outside it.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/IndexPrinter.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <string>

using namespace mlir;

namespace kiln {

std::optional<CudaKernel> emitCudaPadKernel(Operation *op,
                                            llvm::StringRef name) {
  auto pad = dyn_cast<PadOp>(op);
  if (!pad)
    return std::nullopt;
  auto xt = dyn_cast<RankedTensorType>(pad.getX().getType());
  auto yt = dyn_cast<RankedTensorType>(pad.getResult().getType());
  auto vt = dyn_cast<RankedTensorType>(pad.getValue().getType());
  std::optional<SmallVector<int64_t>> pads =
      passes::getConstantInts(pad.getPads());
  StringRef mode = pad.getMode();
  if (mode.empty())
    mode = "constant";
  if (!xt || !yt || !vt || !xt.hasStaticShape() || !yt.hasStaticShape() ||
      !vt.hasStaticShape() || !pads || yt.getNumElements() == 0 ||
      vt.getElementType() != xt.getElementType() ||
      !llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  if (!st)
    return std::nullopt;
  std::optional<std::string> read = codegen::printPadRead(
      xt.getShape(), yt.getShape(), *pads, mode, "kiln_i");
  if (!read)
    return std::nullopt;
  int64_t total = yt.getNumElements();
  std::string storage = codegen::storageCType(*st);
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage +
          " *__restrict__ in0, const long long *__restrict__ "
          "in1, const " +
          storage + " *__restrict__ in2, " + storage + " *__restrict__ out0");
  std::string padList;
  for (int64_t p : *pads)
    padList += (padList.empty() ? "" : ", ") + std::to_string(p);
  std::string s = opKernelComment(
      k, mode.str() + " pad by [" + padList + "]",
      "one thread per output element, grid-stride; each axis's coordinate "
      "mapped by the mode" +
          std::string(mode == "constant" ? ", the value outside x" : ""));
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += *read;
  if (mode == "constant") {
    std::string value =
        vt.getNumElements() >= 1 ? "in2[0]" : "(" + storage + ")0";
    s += "    out0[kiln_i] = kiln_inside ? in0[kiln_x] : " + value + ";\n";
  } else {
    s += "    out0[kiln_i] = in0[kiln_x];\n";
  }
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
