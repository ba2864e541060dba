//===- CudaConvTransposeKernel.cpp - CUDA kernels for conv_transpose ------===//
//
// This file implements the CUDA kernel of a top-level kiln.conv_transpose
// (ONNX ConvTranspose without its bias, which kiln-fuse adds in the next
// fusion), so that it runs on the device instead of on the host: a direct
// kernel, one thread per output element [n, m, o...], grid-stride. The
// output gathers what the forward scatter would add to it: for each input
// channel c of m's group and each tap k, the input position
// i = (o + pad_begin - k * dilation) / stride when that division is exact
// and i is inside the input, and accumulates x[n, c, i] * w[c, m % M/g, k] in
// f32 (the compute type of f16 and bf16). Every size, stride, pad and
// dilation is a literal, the taps unrolled by the compiler. This suits the
// up-sampling layers of decoders (U-Net's 2x2 stride-2 ConvTranspose: one
// tap per output and input channel); a large transposed convolution would
// rather be cuDNN's backward-data convolution.
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

std::optional<CudaKernel> emitCudaConvTransposeKernel(Operation *op,
                                                      llvm::StringRef name) {
  auto convT = dyn_cast<ConvTransposeOp>(op);
  if (!convT)
    return std::nullopt;
  auto xt = dyn_cast<RankedTensorType>(convT.getX().getType());
  auto wt = dyn_cast<RankedTensorType>(convT.getW().getType());
  auto yt = dyn_cast<RankedTensorType>(convT.getResult().getType());
  if (!xt || !wt || !yt || !xt.hasStaticShape() || !wt.hasStaticShape() ||
      !yt.hasStaticShape() || yt.getNumElements() == 0 ||
      xt.getNumElements() == 0 || yt.getNumElements() >= (int64_t(1) << 62) ||
      xt.getNumElements() >= (int64_t(1) << 62))
    return std::nullopt;
  int64_t rank = xt.getRank(), nsp = rank - 2, group = convT.getGroup();
  ArrayRef<int64_t> strides = convT.getStrides(), pads = convT.getPads(),
                    dilations = convT.getDilations();
  if (nsp < 1 || nsp > 3 || wt.getRank() != rank || yt.getRank() != rank ||
      (int64_t)strides.size() != nsp || (int64_t)dilations.size() != nsp ||
      (int64_t)pads.size() != 2 * nsp || group < 1)
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  if (!st || !codegen::isFloatType(*st) ||
      wt.getElementType() != xt.getElementType())
    return std::nullopt;
  int64_t channels = xt.getDimSize(1), outChannels = yt.getDimSize(1);
  int64_t perGroupIn = channels / group, perGroupOut = wt.getDimSize(1);
  if (channels % group != 0 || wt.getDimSize(0) != channels ||
      perGroupOut * group != outChannels)
    return std::nullopt;
  for (int64_t d = 0; d < nsp; ++d)
    if (strides[d] < 1 || dilations[d] < 1)
      return std::nullopt;

  ArrayRef<int64_t> in = xt.getShape().drop_front(2);
  ArrayRef<int64_t> out = yt.getShape().drop_front(2);
  ArrayRef<int64_t> taps = wt.getShape().drop_front(2);
  int64_t inPlane = 1, tapCount = 1, total = yt.getNumElements();
  for (int64_t d : in)
    inPlane *= d;
  for (int64_t d : taps)
    tapCount *= d;

  std::string storage = codegen::storageCType(*st);
  std::string compute = codegen::computeCType(*st);
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + storage +
          " *__restrict__ in1, " + storage + " *__restrict__ out0");

  auto str = [](int64_t v) { return std::to_string(v); };
  std::string s = "// " + k.name + ": conv_transpose of [";
  for (int64_t d = 0; d < rank; ++d)
    s += (d ? ", " : "") + str(xt.getDimSize(d));
  s += "] into [";
  for (int64_t d = 0; d < rank; ++d)
    s += (d ? ", " : "") + str(yt.getDimSize(d));
  s += "], group " + str(group) + "\n// ONNX nodes:";
  for (const std::string &node : k.sourceNodes)
    s += " " + node;
  s += "\n// mapping: one thread per output element, grid-stride; the taps "
       "that reach it gathered\n";
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += "    long long kiln_r = kiln_i;\n";
  for (int64_t d = nsp - 1; d >= 0; --d) {
    s += "    const int o" + str(d) + " = (int)(kiln_r % " + str(out[d]) +
         "LL);\n";
    s += "    kiln_r /= " + str(out[d]) + "LL;\n";
  }
  s += "    const int kiln_m = (int)(kiln_r % " + str(outChannels) + "LL);\n";
  s += "    const long long kiln_b = kiln_r / " + str(outChannels) + "LL;\n";
  s += "    const int kiln_g = kiln_m / " + str(perGroupOut) + ";\n";
  s += "    const " + storage + " *kiln_x = in0 + (kiln_b * " + str(channels) +
       "LL + kiln_g * " + str(perGroupIn) + "LL) * " + str(inPlane) + "LL;\n";
  s += "    const " + storage + " *kiln_w = in1 + (kiln_g * " +
       str(perGroupIn) + "LL * " + str(perGroupOut) + "LL + kiln_m % " +
       str(perGroupOut) + ") * " + str(tapCount) + "LL;\n";
  s += "    " + compute + " kiln_acc = 0;\n";
  std::string indent = "    ", xOffset, wOffset;
  for (int64_t d = 0; d < nsp; ++d) {
    std::string ds = str(d);
    s += indent + "#pragma unroll\n";
    s += indent + "for (int k" + ds + " = 0; k" + ds + " < " + str(taps[d]) +
         "; ++k" + ds + ") {\n";
    indent += "  ";
    s += indent + "const int q" + ds + " = o" + ds + " + " + str(pads[d]) +
         " - k" + ds + " * " + str(dilations[d]) + ";\n";
    if (strides[d] != 1)
      s += indent + "if (q" + ds + " < 0 || q" + ds + " % " + str(strides[d]) +
           " != 0)\n" + indent + "  continue;\n";
    s += indent + "const int p" + ds + " = q" + ds +
         (strides[d] != 1 ? " / " + str(strides[d]) : "") + ";\n";
    s += indent + "if (p" + ds + " < 0 || p" + ds + " >= " + str(in[d]) +
         ")\n" + indent + "  continue;\n";
    int64_t xStride = 1, wStride = 1;
    for (int64_t e = d + 1; e < nsp; ++e) {
      xStride *= in[e];
      wStride *= taps[e];
    }
    xOffset += (xOffset.empty() ? "" : " + ") + std::string("p") + ds +
               (xStride == 1 ? "" : " * " + str(xStride));
    wOffset += (wOffset.empty() ? "" : " + ") + std::string("k") + ds +
               (wStride == 1 ? "" : " * " + str(wStride));
  }
  s += indent + "for (int kiln_c = 0; kiln_c < " + str(perGroupIn) +
       "; ++kiln_c)\n";
  s += indent + "  kiln_acc += (" + compute + ")kiln_x[kiln_c * " +
       str(inPlane) + "LL + " + xOffset + "] * (" + compute +
       ")kiln_w[kiln_c * " + str(perGroupOut * tapCount) + "LL + " + wOffset +
       "];\n";
  for (int64_t d = 0; d < nsp; ++d) {
    indent.resize(indent.size() - 2);
    s += indent + "}\n";
  }
  s += "    out0[kiln_i] = " + storage + "(kiln_acc);\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
