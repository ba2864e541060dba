//===- CudaDepthwiseConvKernel.cpp - CUDA kernel of a depthwise conv ------===//
//
// This file implements the direct CUDA kernel of a top-level depthwise
// kiln.conv (2-D, group = input channels, each output channel reading one
// input channel: MobileNet's and EfficientNet's 3x3 and 5x5 convolutions).
// cuDNN runs these as grouped direct convolutions far from the memory
// bandwidth (its channels-last bf16 kernel took 57 us a call on mobilenet_v2
// at batch 8, against a few microseconds for the bytes it moves), so the
// CUDA target prints its own: one thread per output pixel and vector of V
// channels (channels last: 16-byte loads and stores of V consecutive
// channels, V = 8 for 16-bit types), or per output element (channels first:
// consecutive threads on consecutive columns), grid-stride, accumulating in
// f32 over the taps inside the input (pads and borders skipped), with any
// stride, dilation and pads. `KILN_CUDA_DEPTHWISE_KERNEL=0` at compile time
// leaves them to cuDNN (to compare).
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace mlir;

namespace kiln {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// The geometry of a depthwise convolution, channels first.
struct Depthwise {
  int64_t batch, channels, multiplier, inH, inW, outH, outW, kH, kW;
  int64_t strideH, strideW, dilH, dilW, padTop, padLeft;
  bool channelsLast;
};

std::optional<Depthwise> depthwiseGeometry(ConvOp conv) {
  auto xt = cast<RankedTensorType>(conv.getX().getType());
  auto wt = cast<RankedTensorType>(conv.getW().getType());
  auto yt = cast<RankedTensorType>(conv.getResult().getType());
  if (!xt.hasStaticShape() || !wt.hasStaticShape() || !yt.hasStaticShape() ||
      xt.getRank() != 4 || wt.getRank() != 4 || yt.getRank() != 4 ||
      yt.getNumElements() == 0 || xt.getNumElements() >= (int64_t(1) << 40) ||
      yt.getNumElements() >= (int64_t(1) << 40))
    return std::nullopt;
  if (xt.getElementType() != yt.getElementType() ||
      wt.getElementType() != yt.getElementType())
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(yt.getElementType());
  if (!st || !codegen::isFloatType(*st) || *st == codegen::ScalarType::F64)
    return std::nullopt;
  bool last = conv.getLayout() == "nhwc";
  if (conv.getLayout() && !last)
    return std::nullopt;
  // Dims read channels first: x [N, C, H, W], w [M, 1, kH, kW], y [N, M, ...].
  auto dim = [&](RankedTensorType t, int64_t d) {
    static const int64_t toLast[4] = {0, 3, 1, 2};
    return t.getDimSize(last ? toLast[d] : d);
  };
  ArrayRef<int64_t> strides = conv.getStrides(), dil = conv.getDilations(),
                    pads = conv.getPads();
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return std::nullopt;
  Depthwise g{dim(xt, 0), dim(xt, 1), 0, dim(xt, 2), dim(xt, 3),
              dim(yt, 2), dim(yt, 3), dim(wt, 2), dim(wt, 3),
              strides[0], strides[1], dil[0], dil[1], pads[0], pads[1], last};
  int64_t group = conv.getGroup();
  if (group != g.channels || group < 2 || dim(wt, 1) != 1 ||
      dim(wt, 0) % group != 0 || dim(yt, 1) != dim(wt, 0) ||
      dim(yt, 0) != g.batch)
    return std::nullopt;
  g.multiplier = dim(wt, 0) / group;
  for (int64_t v : {g.strideH, g.strideW, g.dilH, g.dilW})
    if (v < 1)
      return std::nullopt;
  // The output size the attributes give (ONNX's floor formula).
  auto outSize = [](int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0,
                    int64_t p1) {
    int64_t span = in + p0 + p1 - ((k - 1) * d + 1);
    return span < 0 ? -1 : span / s + 1;
  };
  if (outSize(g.inH, g.kH, g.strideH, g.dilH, pads[0], pads[2]) != g.outH ||
      outSize(g.inW, g.kW, g.strideW, g.dilW, pads[1], pads[3]) != g.outW)
    return std::nullopt;
  return g;
}

} // namespace

bool cudaDepthwiseConvQualifies(Operation *op) {
  auto conv = dyn_cast<ConvOp>(op);
  if (!conv || !depthwiseGeometry(conv))
    return false;
  const char *env = std::getenv("KILN_CUDA_DEPTHWISE_KERNEL");
  return !(env && std::strcmp(env, "0") == 0);
}

std::optional<CudaKernel> emitCudaDepthwiseConvKernel(Operation *op,
                                                      llvm::StringRef name) {
  if (!cudaDepthwiseConvQualifies(op))
    return std::nullopt;
  auto conv = cast<ConvOp>(op);
  Depthwise g = *depthwiseGeometry(conv);
  auto yt = cast<RankedTensorType>(conv.getResult().getType());
  codegen::ScalarType st = *codegen::scalarTypeOf(yt.getElementType());
  std::string storage = codegen::storageCType(st);
  int64_t bytes = st == codegen::ScalarType::F32 ? 4 : 2;
  int64_t outChannels = g.channels * g.multiplier;
  // Channels last: V consecutive channels per thread, the widest vector of
  // at most 16 bytes that divides the channels (one input channel per
  // output channel: a multiplier of 1).
  int64_t vec = 1;
  if (g.channelsLast && g.multiplier == 1)
    for (int64_t v = 16 / bytes; v > 1; v /= 2)
      if (outChannels % v == 0) {
        vec = v;
        break;
      }
  int64_t total = yt.getNumElements() / vec;
  int64_t taps = g.kH * g.kW;

  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + storage +
          " *__restrict__ in1, " + storage + " *__restrict__ out0");
  std::string vt = k.name + "_vec";
  std::string s = "// " + k.name + ": depthwise convolution (" +
                  (g.channelsLast ? "channels last" : "channels first") +
                  ") of " + str(g.channels) + " channels, " + str(g.inH) +
                  "x" + str(g.inW) + " -> " + str(g.outH) + "x" +
                  str(g.outW) + ", taps " + str(g.kH) + "x" + str(g.kW) +
                  ", strides " + str(g.strideH) + "x" + str(g.strideW) +
                  ", dilations " + str(g.dilH) + "x" + str(g.dilW) +
                  ", pads top/left " + str(g.padTop) + "/" + str(g.padLeft) +
                  (g.multiplier > 1 ? ", multiplier " + str(g.multiplier)
                                    : "") +
                  ", batch " + str(g.batch) + "\n// ONNX nodes:";
  for (const std::string &node : k.sourceNodes)
    s += " " + node;
  s += "\n// mapping: one thread per output " +
       (vec > 1 ? "pixel and " + str(vec) + " channels (" +
                      str(vec * bytes) + "-byte loads and stores)"
                : std::string("element")) +
       ", grid-stride; taps outside the input skipped; f32 accumulation\n";
  if (vec > 1)
    s += "struct alignas(" + str(vec * bytes) + ") " + vt + " { " + storage +
         " v[" + str(vec) + "]; };\n";
  s += head + " {\n";
  s += elementLoopHead(total);
  s += "    long long kiln_r = kiln_i;\n";
  // The output coordinates, innermost first.
  auto split = [&](const std::string &var, int64_t size) {
    s += "    const int " + var + " = (int)(kiln_r % " + str(size) + "LL);\n";
    s += "    kiln_r /= " + str(size) + "LL;\n";
  };
  if (g.channelsLast) {
    split("kiln_c", outChannels / vec);
    split("kiln_ox", g.outW);
    split("kiln_oy", g.outH);
  } else {
    split("kiln_ox", g.outW);
    split("kiln_oy", g.outH);
    split("kiln_c", outChannels);
  }
  s += "    const long long kiln_n = kiln_r;\n";
  std::string c0 = vec > 1 ? "kiln_c * " + str(vec) : "kiln_c";
  std::string inC = g.multiplier > 1 ? "(" + c0 + ") / " + str(g.multiplier)
                                     : c0;
  s += "    float kiln_acc[" + str(vec) + "] = {};\n";
  s += "    const " + storage + " *kiln_w = in1 + (long long)(" + c0 +
       ") * " + str(taps) + ";\n";
  s += "#pragma unroll\n";
  s += "    for (int ky = 0; ky < " + str(g.kH) + "; ++ky) {\n";
  s += "      const int iy = kiln_oy * " + str(g.strideH) + " - " +
       str(g.padTop) + " + ky * " + str(g.dilH) + ";\n";
  s += "      if (iy < 0 || iy >= " + str(g.inH) + ")\n        continue;\n";
  s += "#pragma unroll\n";
  s += "      for (int kx = 0; kx < " + str(g.kW) + "; ++kx) {\n";
  s += "        const int ix = kiln_ox * " + str(g.strideW) + " - " +
       str(g.padLeft) + " + kx * " + str(g.dilW) + ";\n";
  s += "        if (ix < 0 || ix >= " + str(g.inW) + ")\n          continue;\n";
  std::string pixel =
      g.channelsLast
          ? "((kiln_n * " + str(g.inH) + " + iy) * " + str(g.inW) + " + ix) * " +
                str(g.channels) + " + " + inC
          : "((kiln_n * " + str(g.channels) + " + " + inC + ") * " +
                str(g.inH) + " + iy) * " + str(g.inW) + " + ix";
  if (vec > 1) {
    s += "        const " + vt + " xv = *reinterpret_cast<const " + vt +
         " *>(in0 + " + pixel + ");\n";
    s += "#pragma unroll\n";
    s += "        for (int v = 0; v < " + str(vec) + "; ++v)\n";
    s += "          kiln_acc[v] += (float)xv.v[v] * (float)kiln_w[v * " +
         str(taps) + " + ky * " + str(g.kW) + " + kx];\n";
  } else {
    s += "        kiln_acc[0] += (float)in0[" + pixel +
         "] * (float)kiln_w[ky * " + str(g.kW) + " + kx];\n";
  }
  s += "      }\n    }\n";
  if (vec > 1) {
    s += "    " + vt + " yv;\n";
    s += "#pragma unroll\n";
    s += "    for (int v = 0; v < " + str(vec) + "; ++v)\n";
    s += "      yv.v[v] = " + storage + "(kiln_acc[v]);\n";
    s += "    *reinterpret_cast<" + vt + " *>(out0 + kiln_i * " + str(vec) +
         ") = yv;\n";
  } else {
    s += "    out0[kiln_i] = " + storage + "(kiln_acc[0]);\n";
  }
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
