//===- CudaRecurrenceKernel.cpp - CUDA kernel of a GRU's recurrence -------===//
//
// This file implements the CUDA kernel of a top-level kiln.gru_recurrence
// (kiln-cuda-split-recurrent's second half of a kiln.gru: the input
// projection is already a GEMM), launched once per step (the launch index
// is its last argument, kiln_step; CudaKernel::launches), so that a GRU runs
// on the device instead of on the host. One launch computes the hidden state
// of one step for every batch entry and direction: a block per `U` hidden
// units of one direction (grid-stride over direction x unit groups), its
// 3·U rows of the recurrence weights staged in shared memory transposed
// ([hidden][gate·U + unit], so the threads of a warp read consecutive words)
// with the previous state [batch][hidden] (padded rows: no bank conflicts);
// a thread per (batch entry, unit) computes the three dot products of
// R·h_prev + Rb in f32, the gates (sigmoid, tanh, the clip), and writes the
// new state into y at this step's position, from which the next launch reads
// it (y_h at the last step, unless y_h is unused: the wrapper passes null
// for a result no op reads). The previous state is initial_h at the first
// step. Only linear_before_reset = 1 (PyTorch's GRU): the other form applies
// the reset gate of every unit before the product, which needs all of the
// step's reset gates in every block; such a GRU runs on the host.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdio>
#include <string>

using namespace mlir;

namespace kiln {

namespace {

/// Static shared memory a block may use.
constexpr int64_t kSharedBytes = 48 * 1024;
constexpr unsigned kBlock = 256;

std::string floatLiteral(double v) {
  return codegen::printLiteral(codegen::ScalarType::F32, v, 0);
}

} // namespace

std::optional<CudaKernel> emitCudaGRURecurrenceKernel(Operation *op,
                                                      llvm::StringRef name) {
  auto gru = dyn_cast<GRURecurrenceOp>(op);
  if (!gru || gru.getLinearBeforeReset() == 0)
    return std::nullopt;
  for (Value v : op->getOperands())
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return std::nullopt;
  auto xt = cast<RankedTensorType>(gru.getXw().getType());
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  if (!st || !codegen::isFloatType(*st) || *st == codegen::ScalarType::F64)
    return std::nullopt;
  for (Value v : op->getOperands())
    if (cast<RankedTensorType>(v.getType()).getElementType() !=
        xt.getElementType())
      return std::nullopt;
  int64_t seq = xt.getDimSize(0), batch = xt.getDimSize(1);
  int64_t hidden = gru.getHiddenSize();
  int64_t dirs = gru.getDirection() == "bidirectional" ? 2 : 1;
  bool reverseOnly = gru.getDirection() == "reverse";
  if (seq < 1 || batch < 1 || seq > (int64_t(1) << 30) ||
      xt.getNumElements() >= (int64_t(1) << 62))
    return std::nullopt;
  // Units per block: a thread per (batch entry, unit), the staged weights
  // and state within the shared memory.
  int64_t units = kBlock / batch;
  while (units > 1 &&
         (hidden % units != 0 ||
          (3 * units * hidden + batch * (hidden + 1)) * 4 > kSharedBytes))
    --units;
  if (units < 1 ||
      (3 * units * hidden + batch * (hidden + 1)) * 4 > kSharedBytes)
    return std::nullopt;
  int64_t groups = hidden / units, work = dirs * groups;

  std::string storage = codegen::storageCType(*st);
  auto str = [](int64_t v) { return std::to_string(v); };
  CudaKernel k;
  k.name = name.str();
  k.sourceNodes = sourceNodeNames(op);
  k.grid[0] = static_cast<unsigned>(work);
  k.block[0] = kBlock;
  k.launches = static_cast<unsigned>(seq);
  std::string params =
      "const " + storage + " *__restrict__ in0, const " + storage +
      " *__restrict__ in1, const " + storage + " *__restrict__ in2, const " +
      storage + " *__restrict__ in3, " + storage + " *__restrict__ out0, " +
      storage + " *__restrict__ out1";
  if (seq > 1)
    params += ", int kiln_step";
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     str(kBlock) + ")\n" + k.name + "(" + params + ")";
  k.declaration = head + ";";

  std::string H = str(hidden), U = str(units), B = str(batch);
  std::string G = str(3 * hidden), HP = str(hidden + 1);
  double clip = gru.getClip().convertToDouble();
  auto clipped = [&](const std::string &e) {
    return clip > 0 ? "fminf(fmaxf(" + e + ", -" + floatLiteral(clip) + "), " +
                          floatLiteral(clip) + ")"
                    : e;
  };
  std::string s = "// " + k.name + ": GRU recurrence (" +
                  gru.getDirection().str() + ", hidden " + H + ", batch " + B +
                  "), one launch per step of " + str(seq) + "\n// ONNX nodes:";
  for (const std::string &node : k.sourceNodes)
    s += " " + node;
  s += "\n// mapping: a block per " + U +
       " units of one direction (grid-stride), a thread per (batch entry, "
       "unit); R's rows and the previous state in shared memory\n";
  s += head + " {\n";
  if (seq == 1)
    s += "  const int kiln_step = 0;\n";
  s += "  __shared__ float kiln_r[" + str(3 * units * hidden) +
       "]; // [hidden][gate * " + U + " + unit]\n";
  s += "  __shared__ float kiln_h[" + str(batch * (hidden + 1)) +
       "]; // [batch][hidden + 1]\n";
  s += "  const int kiln_u = threadIdx.x % " + U + ", kiln_b = threadIdx.x / " +
       U + ";\n";
  s += "  for (int kiln_w = blockIdx.x; kiln_w < " + str(work) +
       "; kiln_w += gridDim.x) {\n";
  s += "    const int kiln_d = kiln_w / " + str(groups) +
       ", kiln_j0 = (kiln_w % " + str(groups) + ") * " + U + ";\n";
  std::string reverse =
      reverseOnly ? "true" : (dirs == 2 ? "kiln_d == 1" : "false");
  s += "    const bool kiln_reverse = " + reverse + ";\n";
  s += "    const int kiln_t = kiln_reverse ? " + str(seq - 1) +
       " - kiln_step : kiln_step;\n";
  s += "    // The previous state: initial_h, or y at the previous step.\n";
  s += "    const " + storage +
       " *kiln_prev = kiln_step == 0 ? in3 + kiln_d * " + str(batch * hidden) +
       " : out0 + ((long long)(kiln_reverse ? kiln_t + 1 "
       ": kiln_t - 1) * " +
       str(dirs) + " + kiln_d) * " + str(batch * hidden) + ";\n";
  s += "    __syncthreads(); // the previous work item's reads are done\n";
  s += "    for (int i = threadIdx.x; i < " + str(3 * units * hidden) +
       "; i += blockDim.x) {\n";
  s += "      const int g = i / " + str(units * hidden) + ", u = (i / " + H +
       ") % " + U + ", c = i % " + H + ";\n";
  s += "      kiln_r[c * " + str(3 * units) + " + g * " + U +
       " + u] = (float)in1[((long long)kiln_d * " + G + " + g * " + H +
       " + kiln_j0 + u) * " + H + " + c];\n";
  s += "    }\n";
  s += "    for (int i = threadIdx.x; i < " + str(batch * hidden) +
       "; i += blockDim.x)\n";
  s += "      kiln_h[(i / " + H + ") * " + HP + " + i % " + H +
       "] = (float)kiln_prev[i];\n";
  s += "    __syncthreads();\n";
  s += "    if (kiln_b < " + B + ") {\n";
  s += "      const int j = kiln_j0 + kiln_u;\n";
  s += "      const " + storage + " *rb = in2 + kiln_d * " + G + ";\n";
  s += "      float az = (float)rb[j], ar = (float)rb[" + H +
       " + j], ah = (float)rb[" + str(2 * hidden) + " + j];\n";
  s += "      const float *hb = kiln_h + kiln_b * " + HP + ";\n";
  s += "      for (int c = 0; c < " + H + "; ++c) {\n";
  s += "        const float *rc = kiln_r + c * " + str(3 * units) +
       " + kiln_u;\n";
  s += "        const float hc = hb[c];\n";
  s += "        az += rc[0] * hc;\n";
  s += "        ar += rc[" + U + "] * hc;\n";
  s += "        ah += rc[" + str(2 * units) + "] * hc;\n";
  s += "      }\n";
  s += "      const " + storage + " *xw = in0 + ((long long)kiln_t * " + B +
       " + kiln_b) * " + str(dirs * 3 * hidden) + " + kiln_d * " + G + ";\n";
  s += "      const float z = 1.0f / (1.0f + expf(-" +
       clipped("((float)xw[j] + az)") + "));\n";
  s += "      const float r = 1.0f / (1.0f + expf(-" +
       clipped("((float)xw[" + H + " + j] + ar)") + "));\n";
  s += "      const float n = tanhf(" +
       clipped("((float)xw[" + str(2 * hidden) + " + j] + r * ah)") + ");\n";
  s += "      const float h = (1.0f - z) * n + z * hb[j];\n";
  s += "      out0[((long long)kiln_t * " + str(dirs) + " + kiln_d) * " +
       str(batch * hidden) + " + kiln_b * " + H + " + j] = " + storage +
       "(h);\n";
  s += "      if (out1 && kiln_step == " + str(seq - 1) +
       ") // y_h, unless unused (null)\n";
  s += "        out1[kiln_d * " + str(batch * hidden) + " + kiln_b * " + H +
       " + j] = " + storage + "(h);\n";
  s += "    }\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
