//===- CudaDepthwiseConvKernel.cpp - CUDA kernel of a depthwise conv ------===//
//
// This file implements the direct CUDA kernel of a top-level depthwise
// kiln.conv or kiln.depthwise_conv (2-D, group = input channels, each output
// channel reading one input channel: MobileNet's and EfficientNet's 3x3 and
// 5x5 convolutions).
// cuDNN runs these as grouped direct convolutions far from the memory
// bandwidth (its channels-last bf16 kernel took 57 us a call on mobilenet_v2
// at batch 8, against a few microseconds for the bytes it moves), so the
// CUDA target prints its own: one thread per output pixel and vector of V
// channels (channels last: 16-byte loads and stores of V consecutive
// channels, V = 8 for 16-bit types), or per output element (channels first:
// consecutive threads on consecutive columns), grid-stride, accumulating in
// f32 over the taps inside the input (pads and borders skipped), with any
// stride, dilation and pads. Channels last, a block takes a group of
// channels and stages their weights tap-major in shared memory, so that the
// V weights of a tap are consecutive words (read from the weight tensor
// [C, kH, kW, 1], they were V loads of V different lines per tap). A
// kiln.depthwise_conv (kiln-cuda-fuse-depthwise) is the same kernel with its
// input activation applied in f32 to every loaded element and its output
// activation to every accumulator before the store.
// `KILN_CUDA_DEPTHWISE_KERNEL=0` at compile time leaves them to cuDNN (to
// compare).
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

using namespace mlir;

namespace kiln {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// Shared memory for a block's staged weights (f32), below the 48 KiB of
/// static shared memory a kernel may use.
constexpr int64_t kStagedWeightBytes = 40 * 1024;

/// The geometry of a depthwise convolution, channels first, and the
/// activations of a kiln.depthwise_conv ("none" for a kiln.conv).
struct Depthwise {
  int64_t batch, channels, multiplier, inH, inW, outH, outW, kH, kW;
  int64_t strideH, strideW, dilH, dilW, padTop, padLeft;
  bool channelsLast;
  std::string inputActivation = "none", activation = "none";
};

/// The f32 C expression of the depthwise activation `name` of `v` (a
/// parenthesized or simple expression).
std::string activate(const std::string &name, const std::string &v) {
  if (name == "relu")
    return "fmaxf(" + v + ", 0.0f)";
  if (name == "relu6")
    return "fminf(fmaxf(" + v + ", 0.0f), 6.0f)";
  if (name == "silu")
    return "kiln_silu(" + v + ")";
  if (name == "hard_swish")
    return "kiln_hard_swish(" + v + ")";
  return v;
}

/// The device functions `activate` calls for the activations of `g`
/// (guarded: every depthwise kernel of kernels.cu may need them).
std::string activationHelpers(const Depthwise &g) {
  std::string s;
  auto uses = [&](const char *name) {
    return g.inputActivation == name || g.activation == name;
  };
  if (uses("silu"))
    s += "#ifndef KILN_SILU\n#define KILN_SILU\n"
         "static __device__ __forceinline__ float kiln_silu(float v) { "
         "return v / (1.0f + expf(-v)); }\n#endif\n";
  if (uses("hard_swish"))
    s += "#ifndef KILN_HARD_SWISH\n#define KILN_HARD_SWISH\n"
         "static __device__ __forceinline__ float kiln_hard_swish(float v) {\n"
         "  return v * fminf(fmaxf(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);\n"
         "}\n#endif\n";
  return s;
}

template <typename OpT> std::optional<Depthwise> depthwiseGeometry(OpT conv) {
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
  Depthwise g{dim(xt, 0), dim(xt, 1), 0,          dim(xt, 2),
              dim(xt, 3), dim(yt, 2), dim(yt, 3), dim(wt, 2),
              dim(wt, 3), strides[0], strides[1], dil[0],
              dil[1],     pads[0],    pads[1],    last};
  int64_t group = conv.getGroup();
  if (group != g.channels || group < 2 || dim(wt, 1) != 1 ||
      dim(wt, 0) % group != 0 || dim(yt, 1) != dim(wt, 0) ||
      dim(yt, 0) != g.batch)
    return std::nullopt;
  g.multiplier = dim(wt, 0) / group;
  if constexpr (std::is_same_v<OpT, DepthwiseConvOp>) {
    g.inputActivation = conv.getInputActivation().str();
    g.activation = conv.getActivation().str();
  }
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

/// The geometry of a depthwise kiln.conv or a kiln.depthwise_conv.
std::optional<Depthwise> geometryOf(Operation *op) {
  if (auto conv = dyn_cast<ConvOp>(op))
    return depthwiseGeometry(conv);
  if (auto conv = dyn_cast<DepthwiseConvOp>(op))
    return depthwiseGeometry(conv);
  return std::nullopt;
}

} // namespace

bool cudaDepthwiseConvQualifies(Operation *op) {
  if (!geometryOf(op))
    return false;
  const char *env = std::getenv("KILN_CUDA_DEPTHWISE_KERNEL");
  return !(env && std::strcmp(env, "0") == 0);
}

namespace {

/// The kernel's comment: what it convolves and how it is mapped.
std::string describe(const CudaKernel &k, const Depthwise &g,
                     const std::string &mapping) {
  return opKernelComment(
      k,
      std::string("depthwise convolution (") +
          (g.channelsLast ? "channels last" : "channels first") + ") of " +
          str(g.channels) + " channels, " + str(g.inH) + "x" + str(g.inW) +
          " -> " + str(g.outH) + "x" + str(g.outW) + ", taps " + str(g.kH) +
          "x" + str(g.kW) + ", strides " + str(g.strideH) + "x" +
          str(g.strideW) + ", dilations " + str(g.dilH) + "x" + str(g.dilW) +
          ", pads top/left " + str(g.padTop) + "/" + str(g.padLeft) +
          (g.multiplier > 1 ? ", multiplier " + str(g.multiplier) : "") +
          ", batch " + str(g.batch) +
          (g.inputActivation != "none"
               ? ", " + g.inputActivation + " on its input"
               : "") +
          (g.activation != "none" ? ", " + g.activation + " on its output"
                                  : ""),
      mapping);
}

/// The loops over the taps inside the input around output (kiln_oy,
/// kiln_ox), each tap's body `body` (iy, ix and the tap index kiln_t
/// defined), indented for the caller's `indent`.
std::string tapLoops(const Depthwise &g, const std::string &indent,
                     const std::string &body) {
  std::string s;
  s += indent + "#pragma unroll\n";
  s += indent + "for (int ky = 0; ky < " + str(g.kH) + "; ++ky) {\n";
  s += indent + "  const int iy = kiln_oy * " + str(g.strideH) + " - " +
       str(g.padTop) + " + ky * " + str(g.dilH) + ";\n";
  s += indent + "  if (iy < 0 || iy >= " + str(g.inH) + ")\n" + indent +
       "    continue;\n";
  s += indent + "#pragma unroll\n";
  s += indent + "  for (int kx = 0; kx < " + str(g.kW) + "; ++kx) {\n";
  s += indent + "    const int ix = kiln_ox * " + str(g.strideW) + " - " +
       str(g.padLeft) + " + kx * " + str(g.dilW) + ";\n";
  s += indent + "    if (ix < 0 || ix >= " + str(g.inW) + ")\n" + indent +
       "      continue;\n";
  s += indent + "    const int kiln_t = ky * " + str(g.kW) + " + kx;\n";
  s += body;
  s += indent + "  }\n" + indent + "}\n";
  return s;
}

/// Channels first (or a multiplier above 1): a thread per output element,
/// consecutive threads on consecutive columns of one channel (its weights
/// read by the whole warp at once).
CudaKernel emitChannelsFirst(Operation *op, llvm::StringRef name,
                             const Depthwise &g, const std::string &storage,
                             int64_t total) {
  int64_t taps = g.kH * g.kW, outChannels = g.channels * g.multiplier;
  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + storage +
          " *__restrict__ in1, " + storage + " *__restrict__ out0");
  std::string s = describe(k, g,
                           "one thread per output element, grid-stride; taps "
                           "outside the input skipped; f32 accumulation");
  s += activationHelpers(g);
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += "    long long kiln_r = kiln_i;\n";
  auto split = [&](const std::string &var, int64_t size) {
    s += "    const int " + var + " = (int)(kiln_r % " + str(size) + "LL);\n";
    s += "    kiln_r /= " + str(size) + "LL;\n";
  };
  if (g.channelsLast) {
    split("kiln_c", outChannels);
    split("kiln_ox", g.outW);
    split("kiln_oy", g.outH);
  } else {
    split("kiln_ox", g.outW);
    split("kiln_oy", g.outH);
    split("kiln_c", outChannels);
  }
  s += "    const long long kiln_n = kiln_r;\n";
  std::string inC = g.multiplier > 1 ? "kiln_c / " + str(g.multiplier)
                                     : std::string("kiln_c");
  std::string pixel =
      g.channelsLast ? "((kiln_n * " + str(g.inH) + " + iy) * " + str(g.inW) +
                           " + ix) * " + str(g.channels) + " + " + inC
                     : "((kiln_n * " + str(g.channels) + " + " + inC + ") * " +
                           str(g.inH) + " + iy) * " + str(g.inW) + " + ix";
  s += "    const " + storage + " *kiln_w = in1 + (long long)kiln_c * " +
       str(taps) + ";\n";
  s += "    float kiln_acc = 0.0f;\n";
  s += tapLoops(g, "    ",
                "        kiln_acc += " +
                    activate(g.inputActivation, "(float)in0[" + pixel + "]") +
                    " * (float)kiln_w[kiln_t];\n");
  s += "    out0[kiln_i] = " + storage + "(" +
       activate(g.activation, "kiln_acc") + ");\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

/// Channels last, a multiplier of 1: V consecutive channels per thread
/// (16-byte loads and stores). A block takes a group of CB channels and
/// stages their weights in shared memory tap-major ([tap][channel], f32),
/// so each thread reads its V weights of a tap as consecutive words; its
/// threads cover CB/V channel vectors of 256·V/CB output pixels, and it
/// walks pixel tiles grid-stride (the grid is a multiple of the groups, so
/// a block keeps one group; it restages when the group changes).
CudaKernel emitChannelsLast(Operation *op, llvm::StringRef name,
                            const Depthwise &g, const std::string &storage,
                            int64_t bytes, int64_t vec) {
  constexpr unsigned kBlock = 256;
  int64_t taps = g.kH * g.kW, vectors = g.channels / vec;
  // Channel vectors per block: the most (up to 32) that divide the
  // channels' and whose weights fit the shared memory.
  int64_t perBlock = 1;
  for (int64_t c = std::min<int64_t>(vectors, 32); c >= 1; --c)
    if (vectors % c == 0 && c * vec * taps * 4 <= kStagedWeightBytes) {
      perBlock = c;
      break;
    }
  int64_t cb = perBlock * vec, groups = vectors / perBlock;
  int64_t pixelsPerTile = kBlock / perBlock;
  int64_t pixels = g.batch * g.outH * g.outW;
  int64_t tiles = (pixels + pixelsPerTile - 1) / pixelsPerTile;
  int64_t tileBlocks = std::min<int64_t>(
      tiles, std::max<int64_t>(1, (8192 + groups - 1) / groups));

  CudaKernel k;
  k.name = name.str();
  k.sourceNodes = sourceNodeNames(op);
  k.grid[0] = static_cast<unsigned>(groups * tileBlocks);
  k.block[0] = kBlock;
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     str(kBlock) + ")\n" + k.name + "(const " + storage +
                     " *__restrict__ in0, const " + storage +
                     " *__restrict__ in1, " + storage + " *__restrict__ out0)";
  k.declaration = head + ";";
  std::string vt = k.name + "_vec";
  std::string s = describe(
      k, g,
      "a block per " + str(cb) +
          " channels (weights staged tap-major in "
          "shared memory) and tiles of " +
          str(pixelsPerTile) +
          " output pixels (grid-stride); a thread per pixel and " + str(vec) +
          " channels (" + str(vec * bytes) +
          "-byte loads and stores); taps outside the input skipped; f32 "
          "accumulation");
  s += activationHelpers(g);
  s += "struct alignas(" + str(vec * bytes) + ") " + vt + " { " + storage +
       " v[" + str(vec) + "]; };\n";
  s += head + " {\n";
  s +=
      "  __shared__ float kiln_ws[" + str(taps * cb) + "]; // [tap][channel]\n";
  s += "  const int kiln_cv = threadIdx.x % " + str(perBlock) +
       ", kiln_pl = threadIdx.x / " + str(perBlock) + ";\n";
  s += "  int kiln_staged = -1;\n";
  s += "  for (long long kiln_w = blockIdx.x; kiln_w < " + str(groups * tiles) +
       "LL; kiln_w += gridDim.x) {\n";
  s += "    const int kiln_g = (int)(kiln_w % " + str(groups) + ");\n";
  s += "    const long long kiln_tile = kiln_w / " + str(groups) + ";\n";
  s += "    if (kiln_g != kiln_staged) { // uniform across the block\n";
  s += "      __syncthreads();\n";
  s += "      for (int i = threadIdx.x; i < " + str(taps * cb) +
       "; i += blockDim.x)\n";
  s += "        kiln_ws[i] = (float)in1[((long long)kiln_g * " + str(cb) +
       " + i % " + str(cb) + ") * " + str(taps) + " + i / " + str(cb) + "];\n";
  s += "      __syncthreads();\n";
  s += "      kiln_staged = kiln_g;\n";
  s += "    }\n";
  s += "    const long long kiln_p = kiln_tile * " + str(pixelsPerTile) +
       " + kiln_pl;\n";
  s += "    if (kiln_pl >= " + str(pixelsPerTile) +
       " || kiln_p >= " + str(pixels) + "LL)\n      continue;\n";
  s += "    const int kiln_ox = (int)(kiln_p % " + str(g.outW) + ");\n";
  s += "    const int kiln_oy = (int)((kiln_p / " + str(g.outW) + ") % " +
       str(g.outH) + ");\n";
  s += "    const long long kiln_n = kiln_p / " + str(g.outW * g.outH) + ";\n";
  s += "    const int kiln_c0 = kiln_g * " + str(cb) + " + kiln_cv * " +
       str(vec) + ";\n";
  s += "    float kiln_acc[" + str(vec) + "] = {};\n";
  std::string body =
      "        const " + vt + " xv = *reinterpret_cast<const " + vt +
      " *>(in0 + ((kiln_n * " + str(g.inH) + " + iy) * " + str(g.inW) +
      " + ix) * " + str(g.channels) + " + kiln_c0);\n" +
      "        const float *wv = kiln_ws + kiln_t * " + str(cb) +
      " + kiln_cv * " + str(vec) + ";\n" + "#pragma unroll\n" +
      "        for (int v = 0; v < " + str(vec) + "; ++v)\n" +
      "          kiln_acc[v] += " +
      activate(g.inputActivation, "(float)xv.v[v]") + " * wv[v];\n";
  s += tapLoops(g, "    ", body);
  s += "    " + vt + " yv;\n";
  s += "#pragma unroll\n";
  s += "    for (int v = 0; v < " + str(vec) + "; ++v)\n";
  s += "      yv.v[v] = " + storage + "(" +
       activate(g.activation, "kiln_acc[v]") + ");\n";
  s += "    *reinterpret_cast<" + vt + " *>(out0 + kiln_p * " +
       str(g.channels) + " + kiln_c0) = yv;\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace

std::optional<CudaKernel> emitCudaDepthwiseConvKernel(Operation *op,
                                                      llvm::StringRef name) {
  if (!cudaDepthwiseConvQualifies(op))
    return std::nullopt;
  Depthwise g = *geometryOf(op);
  auto yt = cast<RankedTensorType>(op->getResult(0).getType());
  codegen::ScalarType st = *codegen::scalarTypeOf(yt.getElementType());
  std::string storage = codegen::storageCType(st);
  int64_t bytes = st == codegen::ScalarType::F32 ? 4 : 2;
  // Channels last: V consecutive channels per thread, the widest vector of
  // at most 16 bytes that divides the channels (one input channel per
  // output channel: a multiplier of 1), when one vector's weights fit the
  // shared memory (a huge window takes a thread per element instead).
  int64_t vec = 1;
  if (g.channelsLast && g.multiplier == 1 &&
      g.kH * g.kW * (16 / bytes) * 4 <= kStagedWeightBytes)
    for (int64_t v = 16 / bytes; v > 1; v /= 2)
      if (g.channels % v == 0) {
        vec = v;
        break;
      }
  if (vec > 1)
    return emitChannelsLast(op, name, g, storage, bytes, vec);
  return emitChannelsFirst(op, name, g, storage, yt.getNumElements());
}

} // namespace kiln
