//===- CudaRecurrenceKernel.cpp - CUDA kernels of GRU/LSTM recurrences ----===//
//
// This file implements the CUDA kernels of a top-level kiln.gru_recurrence
// and kiln.lstm_recurrence (kiln-cuda-split-recurrent's second half of a
// kiln.gru / kiln.lstm: the input projection is already a GEMM), launched
// once per step (the launch index is the last argument, kiln_step;
// CudaKernel::launches), so that a GRU or an LSTM runs on the device instead
// of on the host. One launch computes the hidden state of one step for
// every batch entry and direction: a block per `U` hidden units of one
// direction (grid-stride over direction x unit groups), its G·U rows of the
// recurrence weights (G = 3 gates for a GRU, 4 for an LSTM) staged in shared
// memory transposed ([hidden][gate·U + unit], so the threads of a warp read
// consecutive words) with the previous state [batch][hidden] (padded rows:
// no bank conflicts); a thread per (batch entry, unit) computes the G dot
// products of R·h_prev in f32, the gates (sigmoid, tanh, the clip), and
// writes the new state into y at this step's position, from which the next
// launch reads it (y_h at the last step). The previous state is initial_h at
// the first step. An LSTM's cell state is the thread's own element: it
// lives in y_c, read and rewritten in place by the same thread each step
// (initial_c at the first), with the peepholes. Every result has a buffer
// (an unused one is the memory planner's scratch for a generated kernel).
// A GRU takes linear_before_reset = 1 only (PyTorch's GRU): the other form
// applies the reset gate of every unit before the product, which needs all
// of the step's reset gates in every block; such a GRU runs on the host.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <string>

using namespace mlir;

namespace kiln {

namespace {

/// Static shared memory a block may use.
constexpr int64_t kSharedBytes = 48 * 1024;
constexpr unsigned kBlock = 256;

std::string str(int64_t v) { return std::to_string(v); }

/// The launch and the names shared by both recurrences' kernels.
struct RecurrencePlan {
  int64_t seq = 0, batch = 0, hidden = 0, dirs = 1, gates = 3;
  int64_t units = 0, groups = 0;
  bool reverseOnly = false;
  double clip = 0;
  std::string storage;

  /// `e` clipped to [-clip, clip] when the op clips.
  std::string clipped(const std::string &e) const {
    if (clip <= 0)
      return e;
    std::string c = codegen::printLiteral(codegen::ScalarType::F32, clip, 0);
    return "fminf(fmaxf(" + e + ", -" + c + "), " + c + ")";
  }
};

/// Plans the kernel of a recurrence op with `gates` gates, operands
/// (xw, r, ...) of one float element type and static shapes; nullopt when
/// it does not qualify (it then runs on the host).
std::optional<RecurrencePlan> planRecurrence(Operation *op, int64_t gates,
                                             int64_t hidden,
                                             StringRef direction, double clip) {
  for (Value v : op->getOperands())
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return std::nullopt;
  auto xt = cast<RankedTensorType>(op->getOperand(0).getType());
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  if (!st || !codegen::isFloatType(*st) || *st == codegen::ScalarType::F64)
    return std::nullopt;
  for (Value v : op->getOperands())
    if (cast<RankedTensorType>(v.getType()).getElementType() !=
        xt.getElementType())
      return std::nullopt;
  RecurrencePlan p;
  p.seq = xt.getDimSize(0);
  p.batch = xt.getDimSize(1);
  p.hidden = hidden;
  p.dirs = direction == "bidirectional" ? 2 : 1;
  p.reverseOnly = direction == "reverse";
  p.gates = gates;
  p.clip = clip;
  p.storage = codegen::storageCType(*st);
  if (p.seq < 1 || p.batch < 1 || p.hidden < 1 || p.seq > (int64_t(1) << 30) ||
      xt.getNumElements() >= (int64_t(1) << 62))
    return std::nullopt;
  // Units per block: a thread per (batch entry, unit), the staged weights
  // and state within the shared memory.
  auto sharedBytes = [&](int64_t u) {
    return (gates * u * p.hidden + p.batch * (p.hidden + 1)) * 4;
  };
  int64_t units = kBlock / p.batch;
  while (units > 1 &&
         (p.hidden % units != 0 || sharedBytes(units) > kSharedBytes))
    --units;
  if (units < 1 || sharedBytes(units) > kSharedBytes)
    return std::nullopt;
  p.units = units;
  p.groups = p.hidden / units;
  return p;
}

/// Fills in `k`'s launch and declaration for `inputs` operands and
/// `outputs` results; returns the definition up to the point where the
/// block has staged R's rows of its units (kiln_r) and the previous state
/// (kiln_h), with kiln_d (direction), kiln_j0 (first unit), kiln_t (time
/// step), kiln_reverse, kiln_u and kiln_b (the thread's unit and batch
/// entry) defined; the caller closes `if (kiln_b < batch) {`, the work loop
/// and the function.
std::string beginRecurrenceKernel(CudaKernel &k, Operation *op,
                                  llvm::StringRef name, const RecurrencePlan &p,
                                  unsigned inputs, unsigned outputs,
                                  const std::string &what) {
  int64_t work = p.dirs * p.groups, G = p.gates;
  k.name = name.str();
  k.sourceNodes = sourceNodeNames(op);
  k.grid[0] = static_cast<unsigned>(work);
  k.block[0] = kBlock;
  k.launches = static_cast<unsigned>(p.seq);
  std::string params;
  for (unsigned i = 0; i < inputs; ++i)
    params += "const " + p.storage + " *__restrict__ in" + str(i) + ", ";
  for (unsigned i = 0; i < outputs; ++i)
    params += p.storage + " *__restrict__ out" + str(i) +
              (i + 1 < outputs ? ", " : "");
  if (p.seq > 1)
    params += ", int kiln_step";
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     str(kBlock) + ")\n" + k.name + "(" + params + ")";
  k.declaration = head + ";";

  std::string H = str(p.hidden), U = str(p.units), HP = str(p.hidden + 1);
  std::string BH = str(p.batch * p.hidden), RU = str(G * p.units * p.hidden);
  std::string s = opKernelComment(
      k,
      what + " (" +
          (p.reverseOnly ? "reverse"
           : p.dirs == 2 ? "bidirectional"
                         : "forward") +
          ", hidden " + H + ", batch " + str(p.batch) +
          "), one launch per step of " + str(p.seq),
      "a block per " + U +
          " units of one direction (grid-stride), a thread per (batch entry, "
          "unit); R's rows and the previous state in shared memory");
  s += head + " {\n";
  if (p.seq == 1)
    s += "  const int kiln_step = 0;\n";
  s += "  __shared__ float kiln_r[" + RU + "]; // [hidden][gate * " + U +
       " + unit]\n";
  s += "  __shared__ float kiln_h[" + str(p.batch * (p.hidden + 1)) +
       "]; // [batch][hidden + 1]\n";
  s += "  const int kiln_u = threadIdx.x % " + U + ", kiln_b = threadIdx.x / " +
       U + ";\n";
  s += "  for (int kiln_w = blockIdx.x; kiln_w < " + str(work) +
       "; kiln_w += gridDim.x) {\n";
  s += "    const int kiln_d = kiln_w / " + str(p.groups) +
       ", kiln_j0 = (kiln_w % " + str(p.groups) + ") * " + U + ";\n";
  std::string reverse =
      p.reverseOnly ? "true" : (p.dirs == 2 ? "kiln_d == 1" : "false");
  s += "    const bool kiln_reverse = " + reverse + ";\n";
  s += "    const int kiln_t = kiln_reverse ? " + str(p.seq - 1) +
       " - kiln_step : kiln_step;\n";
  s += "    // The previous state: initial_h, or y at the previous step.\n";
  // initial_h is operand 3 of both ops.
  s += "    const " + p.storage +
       " *kiln_prev = kiln_step == 0 ? in3 + kiln_d * " + BH +
       " : out0 + ((long long)(kiln_reverse ? kiln_t + 1 : kiln_t - 1) * " +
       str(p.dirs) + " + kiln_d) * " + BH + ";\n";
  s += "    __syncthreads(); // the previous work item's reads are done\n";
  s += "    for (int i = threadIdx.x; i < " + RU + "; i += blockDim.x) {\n";
  s += "      const int g = i / " + str(p.units * p.hidden) + ", u = (i / " +
       H + ") % " + U + ", c = i % " + H + ";\n";
  s += "      kiln_r[c * " + str(G * p.units) + " + g * " + U +
       " + u] = (float)in1[((long long)kiln_d * " + str(G * p.hidden) +
       " + g * " + H + " + kiln_j0 + u) * " + H + " + c];\n";
  s += "    }\n";
  s += "    for (int i = threadIdx.x; i < " + BH + "; i += blockDim.x)\n";
  s += "      kiln_h[(i / " + H + ") * " + HP + " + i % " + H +
       "] = (float)kiln_prev[i];\n";
  s += "    __syncthreads();\n";
  s += "    if (kiln_b < " + str(p.batch) + ") {\n";
  s += "      const int j = kiln_j0 + kiln_u;\n";
  s += "      const float *hb = kiln_h + kiln_b * " + HP + ";\n";
  // The G dot products R_g · h_prev.
  s += "      float a[" + str(G) + "] = {};\n";
  s += "      for (int c = 0; c < " + H + "; ++c) {\n";
  s += "        const float *rc = kiln_r + c * " + str(G * p.units) +
       " + kiln_u;\n";
  s += "        const float hc = hb[c];\n";
  s += "#pragma unroll\n";
  s += "        for (int g = 0; g < " + str(G) + "; ++g)\n";
  s += "          a[g] += rc[g * " + U + "] * hc;\n";
  s += "      }\n";
  // This step's projection of the thread's batch entry and direction.
  s += "      const " + p.storage + " *xw = in0 + ((long long)kiln_t * " +
       str(p.batch) + " + kiln_b) * " + str(p.dirs * G * p.hidden) +
       " + kiln_d * " + str(G * p.hidden) + ";\n";
  return s;
}

/// The end of a recurrence kernel: the new state h into y at this step (and
/// y_h at the last step), the batch guard, the work loop and the function.
std::string endRecurrenceKernel(const RecurrencePlan &p) {
  std::string H = str(p.hidden), BH = str(p.batch * p.hidden);
  std::string s;
  s += "      out0[((long long)kiln_t * " + str(p.dirs) + " + kiln_d) * " + BH +
       " + kiln_b * " + H + " + j] = " + p.storage + "(h);\n";
  s += "      if (kiln_step == " + str(p.seq - 1) + ") // y_h\n";
  s += "        out1[kiln_d * " + BH + " + kiln_b * " + H +
       " + j] = " + p.storage + "(h);\n";
  s += "    }\n";
  s += "  }\n}\n";
  return s;
}

} // namespace

std::optional<CudaKernel> emitCudaGRURecurrenceKernel(Operation *op,
                                                      llvm::StringRef name) {
  auto gru = dyn_cast<GRURecurrenceOp>(op);
  if (!gru || gru.getLinearBeforeReset() == 0)
    return std::nullopt;
  std::optional<RecurrencePlan> p =
      planRecurrence(op, 3, gru.getHiddenSize(), gru.getDirection(),
                     gru.getClip().convertToDouble());
  if (!p)
    return std::nullopt;
  CudaKernel k;
  std::string s =
      beginRecurrenceKernel(k, op, name, *p, 4, 2, "GRU recurrence");
  std::string H = str(p->hidden), H2 = str(2 * p->hidden);
  // Gates z, r, h; the recurrence bias rb inside the reset gate's product.
  s += "      const " + p->storage + " *rb = in2 + kiln_d * " +
       str(3 * p->hidden) + ";\n";
  s += "      const float z = 1.0f / (1.0f + expf(-" +
       p->clipped("((float)xw[j] + a[0] + (float)rb[j])") + "));\n";
  s += "      const float r = 1.0f / (1.0f + expf(-" +
       p->clipped("((float)xw[" + H + " + j] + a[1] + (float)rb[" + H +
                  " + j])") +
       "));\n";
  s += "      const float n = tanhf(" +
       p->clipped("((float)xw[" + H2 + " + j] + r * (a[2] + (float)rb[" + H2 +
                  " + j]))") +
       ");\n";
  s += "      const float h = (1.0f - z) * n + z * hb[j];\n";
  s += endRecurrenceKernel(*p);
  k.definition = s;
  return k;
}

std::optional<CudaKernel> emitCudaLSTMRecurrenceKernel(Operation *op,
                                                       llvm::StringRef name) {
  auto lstm = dyn_cast<LSTMRecurrenceOp>(op);
  if (!lstm)
    return std::nullopt;
  std::optional<RecurrencePlan> p =
      planRecurrence(op, 4, lstm.getHiddenSize(), lstm.getDirection(),
                     lstm.getClip().convertToDouble());
  if (!p)
    return std::nullopt;
  CudaKernel k;
  std::string s =
      beginRecurrenceKernel(k, op, name, *p, 5, 3, "LSTM recurrence");
  std::string H = str(p->hidden), BH = str(p->batch * p->hidden);
  auto sigmoid = [&](const std::string &e) {
    return "1.0f / (1.0f + expf(-" + p->clipped(e) + "))";
  };
  // Gates i, o, f, c; peepholes i, o, f; the cell state in y_c (out2), the
  // thread's own element.
  s += "      const " + p->storage + " *pp = in2 + kiln_d * " +
       str(3 * p->hidden) + ";\n";
  s += "      const long long kiln_s = (long long)kiln_d * " + BH +
       " + kiln_b * " + H + " + j;\n";
  s += "      const float cp = (float)(kiln_step == 0 ? in4 : out2)[kiln_s];\n";
  s += "      const float gi = " +
       sigmoid("((float)xw[j] + a[0] + (float)pp[j] * cp)") + ";\n";
  if (lstm.getInputForget() != 0)
    s += "      const float gf = 1.0f - gi;\n";
  else
    s += "      const float gf = " +
         sigmoid("((float)xw[" + str(2 * p->hidden) +
                 " + j] + a[2] + "
                 "(float)pp[" +
                 str(2 * p->hidden) + " + j] * cp)") +
         ";\n";
  s += "      const float gc = tanhf(" +
       p->clipped("((float)xw[" + str(3 * p->hidden) + " + j] + a[3])") +
       ");\n";
  s += "      const float c = gf * cp + gi * gc;\n";
  s += "      const float go = " +
       sigmoid("((float)xw[" + H + " + j] + a[1] + (float)pp[" + H +
               " + j] * c)") +
       ";\n";
  s += "      out2[kiln_s] = " + p->storage + "(c);\n";
  s += "      const float h = go * tanhf(c);\n";
  s += endRecurrenceKernel(*p);
  k.definition = s;
  return k;
}

} // namespace kiln
