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
  int64_t r = xt.getRank();
  if (static_cast<int64_t>(pads->size()) != 2 * r)
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  if (!st)
    return std::nullopt;
  // Per axis: the cropped start lo and size c, and the begin pad.
  SmallVector<int64_t> lo(r), c(r), pb(r), strides(r);
  int64_t stride = 1;
  for (int64_t d = r - 1; d >= 0; --d) {
    int64_t begin = (*pads)[d], end = (*pads)[r + d];
    lo[d] = std::max<int64_t>(-begin, 0);
    c[d] = xt.getDimSize(d) - lo[d] - std::max<int64_t>(-end, 0);
    pb[d] = std::max<int64_t>(begin, 0);
    int64_t pe = std::max<int64_t>(end, 0);
    if (c[d] < 0 || c[d] + pb[d] + pe != yt.getDimSize(d) ||
        (mode != "constant" && c[d] == 0 && (pb[d] || pe)))
      return std::nullopt;
    strides[d] = stride;
    stride *= xt.getDimSize(d);
  }
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
  s += "    long long kiln_r = kiln_i, kiln_x = 0;\n";
  if (mode == "constant")
    s += "    bool kiln_inside = true;\n";
  for (int64_t d = r - 1; d >= 0; --d) {
    int64_t out = yt.getDimSize(d);
    s += "    {\n      long long j = kiln_r % " + llLiteral(out) + " - " +
         llLiteral(pb[d]) + "; // axis " + std::to_string(d) + "\n";
    s += "      kiln_r /= " + llLiteral(out) + ";\n";
    bool padded = pb[d] != 0 || out != c[d];
    if (padded) {
      std::string outside = "j < 0 || j >= " + llLiteral(c[d]);
      if (mode == "constant")
        s += "      kiln_inside = kiln_inside && !(" + outside + ");\n";
      else if (mode == "edge")
        s += "      j = j < 0 ? 0 : j >= " + llLiteral(c[d]) + " ? " +
             llLiteral(c[d] - 1) + " : j;\n";
      else if (mode == "wrap")
        s += "      j = ((j % " + llLiteral(c[d]) + ") + " + llLiteral(c[d]) +
             ") % " + llLiteral(c[d]) + ";\n";
      else if (c[d] == 1)
        s += "      j = 0;\n";
      else {
        int64_t period = 2 * (c[d] - 1);
        s += "      if (" + outside +
             ") {\n        const long long m = ((j % " + llLiteral(period) +
             ") + " + llLiteral(period) + ") % " + llLiteral(period) +
             ";\n        j = m < " + llLiteral(c[d]) +
             " ? m : " + llLiteral(period) + " - m;\n      }\n";
      }
    }
    s += "      kiln_x += (j + " + llLiteral(lo[d]) + ") * " +
         llLiteral(strides[d]) + ";\n    }\n";
  }
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
