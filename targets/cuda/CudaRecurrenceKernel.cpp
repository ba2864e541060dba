//===- CudaRecurrenceKernel.cpp - CUDA kernels of GRU/LSTM recurrences ----===//
//
// This file implements the CUDA kernels of a top-level kiln.gru_recurrence
// and kiln.lstm_recurrence (kiln-split-recurrent's second half of a
// kiln.gru / kiln.lstm: the input projection is already a GEMM), launched
// once per step (the launch index is the last argument, kiln_launch;
// CudaKernel::launches), so that a GRU or an LSTM runs on the device instead
// of on the host. One launch computes the hidden state of one step for
// every batch entry and direction: a block per `U` hidden units of one
// direction (grid-stride over direction x unit groups), the rows of the
// recurrence weights it needs (G·U rows: G = 3 gates for a GRU, 4 for an
// LSTM) staged in shared memory transposed ([hidden][gate·U + unit], so the
// threads of a warp read consecutive words) with the previous state
// [batch][hidden] (padded rows: no bank conflicts); the threads of a
// (batch entry, unit) split its dot products of R·h_prev over up to 8
// slices of the hidden dimension (the serial part of a step: few units per
// block and many blocks, since the batch is small and the GPU wide), and
// the slice-0 thread adds their partial sums (shared memory), computes the
// gates in f32 (sigmoid, tanh, the clip) and writes the new state into y at
// this step's position, from which the next launch reads it (y_h at the last
// step). The previous state is initial_h at the first step. An LSTM's cell
// state is the thread's own element: it lives in y_c, read and rewritten in
// place by the same thread each step (initial_c at the first), with the
// peepholes.
//
// A GRU with linear_before_reset = 0 applies the reset gate of every unit
// before the candidate's product, R_h·(r ⊙ h_prev), which needs all of the
// step's reset gates in every block: it takes two launches a step. Phase 0
// computes z and r, leaves z in y at the step's position and r ⊙ h_prev in
// y_h; phase 1 stages r ⊙ h_prev as its state, computes the candidate and
// the new state into y. A last launch copies each entry's final state into
// y_h (2·seq + 1 launches). In f16/bf16, z and r ⊙ h_prev are rounded to
// the storage type between the phases.
//
// With sequence lengths (an operand when they are not all full length), an
// entry's steps stop at its length: a reverse direction starts at its last
// valid step, y is zero past the length, y_h / y_c hold the state after the
// last valid step (zero for a length of 0, as the reference kernels); a
// length outside [0, seq] traps (the run fails) instead of reading out of
// bounds. Every result has a buffer (an unused one is the memory planner's
// scratch for a generated kernel).
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
  /// The gates whose rows of R one launch stages: `gates`, or 2 for the
  /// two-phase GRU (z and r in phase 0, the candidate in phase 1).
  int64_t staged = 3;
  int64_t units = 0, groups = 0;
  /// Threads that split one dot product over the hidden dimension (each a
  /// slice of hidden / slices), their partial sums added in shared memory.
  int64_t slices = 1;
  bool reverseOnly = false;
  /// A GRU with linear_before_reset = 0: two launches a step and a last one.
  bool twoPhase = false;
  /// The operand holding the sequence lengths, or -1 (all full length).
  int lensOperand = -1;
  double clip = 0;
  std::string storage;

  /// `e` clipped to [-clip, clip] when the op clips.
  std::string clipped(const std::string &e) const {
    if (clip <= 0)
      return e;
    std::string c = codegen::printLiteral(codegen::ScalarType::F32, clip, 0);
    return "fminf(fmaxf(" + e + ", -" + c + "), " + c + ")";
  }
  std::string sigmoid(const std::string &e) const {
    return "1.0f / (1.0f + expf(-" + clipped(e) + "))";
  }
  int64_t launches() const { return twoPhase ? 2 * seq + 1 : seq; }
  /// The sequence length of batch entry `b` (an int expression).
  std::string len(const std::string &b) const {
    return lensOperand < 0 ? str(seq) : "kiln_len(" + b + ")";
  }
  /// Whether direction `d` (an int expression) runs backwards.
  std::string reverse(const std::string &d) const {
    return reverseOnly ? "true" : dirs == 2 ? d + " == 1" : "false";
  }
  /// The offset in y of the thread's element at time step `t`.
  std::string yAt(const std::string &t) const {
    return "((long long)(" + t + ") * " + str(dirs) + " + kiln_d) * " +
           str(batch * hidden) + " + kiln_b * " + str(hidden) + " + j";
  }
  /// The offset in y_h / y_c of the thread's element.
  std::string stateAt() const {
    return "kiln_d * " + str(batch * hidden) + " + kiln_b * " + str(hidden) +
           " + j";
  }
};

/// Plans the kernel of a recurrence op with `gates` gates, float operands
/// (xw, r, ...) of one element type, i32 sequence lengths when it has them,
/// and static shapes; nullopt when it does not qualify (it then runs on the
/// host).
std::optional<RecurrencePlan> planRecurrence(Operation *op, int64_t gates,
                                             int64_t hidden,
                                             StringRef direction, double clip,
                                             Value lens) {
  for (Value v : op->getOperands())
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return std::nullopt;
  auto xt = cast<RankedTensorType>(op->getOperand(0).getType());
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  if (!st || !codegen::isFloatType(*st) || *st == codegen::ScalarType::F64)
    return std::nullopt;
  RecurrencePlan p;
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.get() == lens && lens) {
      p.lensOperand = static_cast<int>(operand.getOperandNumber());
      if (!cast<RankedTensorType>(lens.getType())
               .getElementType()
               .isInteger(32))
        return std::nullopt;
    } else if (cast<RankedTensorType>(operand.get().getType())
                   .getElementType() != xt.getElementType()) {
      return std::nullopt;
    }
  }
  p.seq = xt.getDimSize(0);
  p.batch = xt.getDimSize(1);
  p.hidden = hidden;
  p.dirs = direction == "bidirectional" ? 2 : 1;
  p.reverseOnly = direction == "reverse";
  p.gates = p.staged = gates;
  p.clip = clip;
  p.storage = codegen::storageCType(*st);
  if (p.seq < 1 || p.batch < 1 || p.hidden < 1 || p.seq > (int64_t(1) << 29) ||
      xt.getNumElements() >= (int64_t(1) << 62))
    return std::nullopt;
  return p;
}

/// Chooses the slices and units per block of `p` (a thread per (slice of
/// the hidden dimension, batch entry, unit); the staged rows of R, the state
/// and the partial sums within the shared memory); false when none fits.
/// The serial part of a step is the dot products over the hidden dimension:
/// up to 8 slices of at least 16 each, and few units per block (many
/// blocks: the batch is small, the GPU wide).
bool planUnits(RecurrencePlan &p) {
  p.slices = 1;
  while (p.slices < 8 && p.hidden % (2 * p.slices) == 0 &&
         p.hidden / (2 * p.slices) >= 16 &&
         2 * p.slices * p.batch <= int64_t(kBlock))
    p.slices *= 2;
  auto sharedBytes = [&](int64_t u) {
    return (p.staged * u * p.hidden + p.batch * (p.hidden + 1) +
            (p.slices > 1 ? p.slices * p.batch * u * p.staged : 0)) *
           4;
  };
  int64_t units = kBlock / (p.batch * p.slices);
  while (units > 1 &&
         (p.hidden % units != 0 || sharedBytes(units) > kSharedBytes))
    --units;
  if (units < 1 || sharedBytes(units) > kSharedBytes)
    return false;
  p.units = units;
  p.groups = p.hidden / units;
  return true;
}

/// The two-phase GRU's last launch: y_h from y at each entry's last valid
/// step (until then y_h held r ⊙ h_prev).
std::string finalStateCopy(const RecurrencePlan &p) {
  std::string H = str(p.hidden), BH = str(p.batch * p.hidden);
  std::string s;
  s += "  if (kiln_launch == " + str(2 * p.seq) + ") {\n";
  s += "    // The final states: y at each entry's last step (zero for an "
       "empty sequence).\n";
  s += "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < " +
       str(p.dirs * p.batch * p.hidden) + "; i += gridDim.x * blockDim.x) {\n";
  s += "      const int kiln_d = i / " + BH + ", b = (i / " + H + ") % " +
       str(p.batch) + ", j = i % " + H + ";\n";
  s += "      const int l = " + p.len("b") + ";\n";
  s += "      out1[i] = l == 0 ? " + p.storage + "(0.0f) : out0[((long long)(" +
       p.reverse("kiln_d") + " ? 0 : l - 1) * " + str(p.dirs) +
       " + kiln_d) * " + BH + " + (long long)b * " + H + " + j];\n";
  s += "    }\n    return;\n  }\n";
  return s;
}

/// The staging of a work item: the rows of R of the block's units (the
/// gates this launch needs) and every entry's state of this step (the
/// previous state, or r ⊙ h_prev in the two-phase GRU's phase 1; zeros
/// for an entry past its length) into shared memory.
std::string stageRowsAndState(const RecurrencePlan &p) {
  int64_t G = p.gates, S = p.staged;
  std::string H = str(p.hidden), U = str(p.units), HP = str(p.hidden + 1);
  std::string BH = str(p.batch * p.hidden);
  std::string s;
  s += "    __syncthreads(); // the previous work item's reads are done\n";
  std::string g0 = "0", staged = str(S);
  if (p.twoPhase) {
    s += "    // Phase 0 stages R_z and R_r, phase 1 R_h.\n";
    s += "    const int kiln_g0 = kiln_phase ? 2 : 0, kiln_gates = kiln_phase "
         "? 1 : 2;\n";
    g0 = "kiln_g0";
    staged = "kiln_gates";
  }
  s += "    for (int i = threadIdx.x; i < " + staged + " * " +
       str(p.units * p.hidden) + "; i += blockDim.x) {\n";
  s += "      const int g = i / " + str(p.units * p.hidden) + ", u = (i / " +
       H + ") % " + U + ", c = i % " + H + ";\n";
  s += "      kiln_r[c * " + str(S * p.units) + " + g * " + U +
       " + u] = (float)in1[((long long)kiln_d * " + str(G * p.hidden) + " + (" +
       g0 + " + g) * " + H + " + kiln_j0 + u) * " + H + " + c];\n";
  s += "    }\n";
  s += "    for (int i = threadIdx.x; i < " + BH + "; i += blockDim.x) {\n";
  s += "      const int b = i / " + H + ", c = i % " + H + ";\n";
  std::string active =
      p.lensOperand >= 0 ? "kiln_step < " + p.len("b") + " ? " : "";
  std::string inactive = p.lensOperand >= 0 ? " : 0.0f" : "";
  std::string fromPrev = "(float)kiln_prev(b)[c]";
  if (p.twoPhase)
    fromPrev = "(kiln_phase ? (float)out1[kiln_d * " + BH +
               " + i] : (float)kiln_prev(b)[c])";
  s += "      kiln_h[b * " + HP + " + c] = " + active + fromPrev + inactive +
       ";\n";
  s += "    }\n";
  s += "    __syncthreads();\n";
  return s;
}

/// The dot products of the staged rows of R with the staged state, each
/// thread over its slice of the hidden dimension, and the slices' partial
/// sums added by the slice-0 thread (a[] of the thread's (batch entry,
/// unit)).
std::string dotProducts(const RecurrencePlan &p) {
  int64_t S = p.staged, BU = p.batch * p.units;
  std::string U = str(p.units);
  std::string s;
  int64_t CS = p.hidden / p.slices;
  s += "    float a[" + str(S) + "] = {};\n";
  s += "    if (kiln_s < " + str(p.slices) + ") {\n";
  s += "      for (int c = kiln_s * " + str(CS) + "; c < (kiln_s + 1) * " +
       str(CS) + "; ++c) {\n";
  s += "        const float *rc = kiln_r + c * " + str(S * p.units) +
       " + kiln_u;\n";
  s += "        const float hc = hb[c];\n";
  s += "#pragma unroll\n";
  s += "        for (int g = 0; g < " + str(S) + "; ++g)\n";
  s += std::string(p.twoPhase ? "          if (g < kiln_gates)\n  " : "") +
       "          a[g] += rc[g * " + U + "] * hc;\n";
  s += "      }\n";
  s += "    }\n";
  if (p.slices > 1) {
    s += "    // The slices' partial sums, added by the slice-0 thread.\n";
    s += "    if (kiln_s < " + str(p.slices) + ")\n";
    s += "      for (int g = 0; g < " + str(S) + "; ++g)\n";
    s += "        kiln_p[(kiln_s * " + str(BU) + " + threadIdx.x % " + str(BU) +
         ") * " + str(S) + " + g] = a[g];\n";
    s += "    __syncthreads();\n";
    s += "    if (kiln_s == 0)\n";
    s += "      for (int k = 1; k < " + str(p.slices) + "; ++k)\n";
    s += "        for (int g = 0; g < " + str(S) + "; ++g)\n";
    s += "          a[g] += kiln_p[(k * " + str(BU) + " + threadIdx.x) * " +
         str(S) + " + g];\n";
  }
  return s;
}

/// The opening of the slice-0 thread's branch: its entry's length, the
/// zeros past it, its time step and this step's projection.
std::string entryHead(const RecurrencePlan &p, unsigned outputs) {
  std::string B = str(p.batch);
  std::string s;
  s += "    if (kiln_s == 0) { // the thread of (batch entry, unit)\n";
  s += "      const int kiln_l = " + p.len("kiln_b") + ";\n";
  if (p.lensOperand >= 0) {
    s += "      if (kiln_step >= kiln_l) {\n";
    s += "        // Past the entry's length: y is zero there.\n";
    std::string zero = p.storage + "(0.0f)";
    s += std::string(p.twoPhase ? "        if (kiln_phase == 1)\n  " : "") +
         "        out0[" + p.yAt("kiln_step") + "] = " + zero + ";\n";
    if (!p.twoPhase) {
      s += "        if (kiln_step == 0 && kiln_l == 0) { // an empty "
           "sequence's final states\n";
      for (unsigned i = 1; i < outputs; ++i)
        s += "          out" + str(i) + "[" + p.stateAt() + "] = " + zero +
             ";\n";
      s += "        }\n";
    }
    s += "        continue;\n";
    s += "      }\n";
  }
  s += "      const int kiln_t = kiln_reverse ? kiln_l - 1 - kiln_step : "
       "kiln_step;\n";
  // This step's projection of the thread's batch entry and direction.
  s += "      const " + p.storage + " *xw = in0 + ((long long)kiln_t * " + B +
       " + kiln_b) * " + str(p.dirs * p.gates * p.hidden) + " + kiln_d * " +
       str(p.gates * p.hidden) + ";\n";
  return s;
}

/// Fills in `k`'s launch and declaration for `op`'s operands and `outputs`
/// results; returns the definition up to the point where the slice-0
/// thread of an active (batch entry, unit) has its dot products of the
/// staged rows of R with the staged state (a[]), its time step kiln_t and
/// this step's projection xw; kiln_r, kiln_h (hb: the thread's state row),
/// kiln_d (direction), kiln_j0 (first unit), kiln_reverse, kiln_u, kiln_b,
/// j, kiln_l (the entry's length) and kiln_prev(b) (the previous state of
/// entry b) defined. A thread past its entry's length zeroes y there (and
/// the final states of an empty sequence). The caller closes the branch
/// with endRecurrenceKernel.
std::string beginRecurrenceKernel(CudaKernel &k, Operation *op,
                                  llvm::StringRef name, const RecurrencePlan &p,
                                  unsigned outputs, const std::string &what) {
  int64_t work = p.dirs * p.groups, G = p.gates, S = p.staged;
  unsigned inputs = op->getNumOperands();
  k.name = name.str();
  k.sourceNodes = sourceNodeNames(op);
  k.grid[0] = static_cast<unsigned>(work);
  k.block[0] = kBlock;
  k.launches = static_cast<unsigned>(p.launches());
  std::string params;
  for (unsigned i = 0; i < inputs; ++i)
    params += "const " +
              (static_cast<int>(i) == p.lensOperand ? std::string("int")
                                                    : p.storage) +
              " *__restrict__ in" + str(i) + ", ";
  for (unsigned i = 0; i < outputs; ++i)
    params += p.storage + " *__restrict__ out" + str(i) +
              (i + 1 < outputs ? ", " : "");
  if (k.launches > 1)
    params += ", int kiln_launch";
  std::string head = "extern \"C\" __global__ void __launch_bounds__(" +
                     str(kBlock) + ")\n" + k.name + "(" + params + ")";
  k.declaration = head + ";";

  std::string H = str(p.hidden), U = str(p.units), HP = str(p.hidden + 1);
  std::string B = str(p.batch), BH = str(p.batch * p.hidden);
  std::string RU = str(S * p.units * p.hidden);
  std::string s = opKernelComment(
      k,
      what + " (" +
          (p.reverseOnly ? "reverse"
           : p.dirs == 2 ? "bidirectional"
                         : "forward") +
          ", hidden " + H + ", batch " + B + "), " +
          (p.twoPhase ? "two launches per step of " + str(p.seq) +
                            " and the final states"
                      : "one launch per step of " + str(p.seq)) +
          (p.lensOperand >= 0
               ? ", sequence lengths in operand " + str(p.lensOperand)
               : ""),
      "a block per " + U +
          " units of one direction (grid-stride), a thread per (slice of " +
          str(p.slices) +
          " of the hidden dimension, batch entry, unit); R's rows and the "
          "previous state in shared memory");
  s += head + " {\n";
  if (k.launches == 1)
    s += "  const int kiln_launch = 0;\n";
  if (p.twoPhase)
    s += "  const int kiln_step = kiln_launch / 2, kiln_phase = kiln_launch "
         "% 2;\n";
  else
    s += "  const int kiln_step = kiln_launch;\n";
  if (p.lensOperand >= 0) {
    s += "  // The sequence length of batch entry b; one outside [0, " +
         str(p.seq) + "] is a bad input.\n";
    s += "  auto kiln_len = [&](int b) {\n";
    s += "    const int l = in" + str(p.lensOperand) + "[b];\n";
    s += "    if (l < 0 || l > " + str(p.seq) + ")\n      __trap();\n";
    s += "    return l;\n  };\n";
  }
  if (p.twoPhase)
    s += finalStateCopy(p);
  s += "  __shared__ float kiln_r[" + RU + "]; // [hidden][gate * " + U +
       " + unit]\n";
  s += "  __shared__ float kiln_h[" + str(p.batch * (p.hidden + 1)) +
       "]; // [batch][hidden + 1]\n";
  int64_t BU = p.batch * p.units;
  if (p.slices > 1)
    s += "  __shared__ float kiln_p[" + str(p.slices * BU * S) +
         "]; // partial sums [slice][batch * " + U + " + unit][gate]\n";
  s += "  const int kiln_u = threadIdx.x % " + U +
       ", kiln_b = (threadIdx.x / " + U + ") % " + B +
       ", kiln_s = threadIdx.x / " + str(BU) +
       "; // unit, batch entry, slice\n";
  s += "  for (int kiln_w = blockIdx.x; kiln_w < " + str(work) +
       "; kiln_w += gridDim.x) {\n";
  s += "    const int kiln_d = kiln_w / " + str(p.groups) +
       ", kiln_j0 = (kiln_w % " + str(p.groups) + ") * " + U + ";\n";
  s += "    const bool kiln_reverse = " + p.reverse("kiln_d") + ";\n";
  // initial_h is operand 3 of both ops.
  s += "    // The previous state of entry b: initial_h at its first step, "
       "else y at its previous step.\n";
  s += "    auto kiln_prev = [&](int b) -> const " + p.storage + " * {\n";
  s += "      const int t = kiln_reverse ? " + p.len("b") +
       " - 1 - kiln_step : kiln_step;\n";
  s += "      return kiln_step == 0 ? in3 + ((long long)kiln_d * " + B +
       " + b) * " + H + "\n";
  s += "                            : out0 + ((long long)(kiln_reverse ? t + 1 "
       ": t - 1) * " +
       str(p.dirs) + " + kiln_d) * " + BH + " + (long long)b * " + H + ";\n";
  s += "    };\n";
  s += stageRowsAndState(p);
  s += "    const int j = kiln_j0 + kiln_u;\n";
  s += "    const float *hb = kiln_h + kiln_b * " + HP + ";\n";
  s += dotProducts(p);
  s += entryHead(p, outputs);
  return s;
}

/// The slice-0 thread's branch, the work loop and the function closed.
std::string closeRecurrenceKernel() { return "    }\n  }\n}\n"; }

/// The end of a recurrence kernel: the new state h into y at this step (and
/// y_h at the entry's last step), the batch guard, the work loop and the
/// function.
std::string endRecurrenceKernel(const RecurrencePlan &p) {
  std::string s;
  s += "      out0[" + p.yAt("kiln_t") + "] = " + p.storage + "(h);\n";
  s += "      if (kiln_step == kiln_l - 1) // y_h\n";
  s += "        out1[" + p.stateAt() + "] = " + p.storage + "(h);\n";
  return s + closeRecurrenceKernel();
}

} // namespace

std::optional<CudaKernel> emitCudaGRURecurrenceKernel(Operation *op,
                                                      llvm::StringRef name) {
  auto gru = dyn_cast<GRURecurrenceOp>(op);
  if (!gru)
    return std::nullopt;
  std::optional<RecurrencePlan> p =
      planRecurrence(op, 3, gru.getHiddenSize(), gru.getDirection(),
                     gru.getClip().convertToDouble(), gru.getSequenceLens());
  if (!p)
    return std::nullopt;
  if (gru.getLinearBeforeReset() == 0) {
    p->twoPhase = true;
    p->staged = 2;
  }
  if (!planUnits(*p))
    return std::nullopt;
  CudaKernel k;
  std::string s = beginRecurrenceKernel(k, op, name, *p, 2, "GRU recurrence");
  std::string H = str(p->hidden), H2 = str(2 * p->hidden);
  s += "      const " + p->storage + " *rb = in2 + kiln_d * " +
       str(3 * p->hidden) + ";\n";
  // The update and reset gates, from a[0] and a[1] in both forms.
  std::string z = p->sigmoid("((float)xw[j] + a[0] + (float)rb[j])");
  std::string r = p->sigmoid("((float)xw[" + H + " + j] + a[1] + (float)rb[" +
                             H + " + j])");
  if (!p->twoPhase) {
    // Gates z, r, h; the recurrence bias rb inside the reset gate's product.
    s += "      const float z = " + z + ";\n";
    s += "      const float r = " + r + ";\n";
    s += "      const float n = tanhf(" +
         p->clipped("((float)xw[" + H2 + " + j] + r * (a[2] + (float)rb[" + H2 +
                    " + j]))") +
         ");\n";
    s += "      const float h = (1.0f - z) * n + z * hb[j];\n";
    s += endRecurrenceKernel(*p);
    k.definition = s;
    return k;
  }
  // linear_before_reset = 0: phase 0 leaves z in y and r ⊙ h_prev in y_h;
  // phase 1 has R_h · (r ⊙ h_prev) in a[0].
  s += "      if (kiln_phase == 0) { // z waits in y, r * h_prev in y_h\n";
  s += "        const float z = " + z + ";\n";
  s += "        const float r = " + r + ";\n";
  s += "        out0[" + p->yAt("kiln_t") + "] = " + p->storage + "(z);\n";
  s += "        out1[" + p->stateAt() + "] = " + p->storage + "(r * hb[j]);\n";
  s += "        continue;\n";
  s += "      }\n";
  s += "      // Phase 1: a[0] is R_h . (r * h_prev).\n";
  s += "      const float z = (float)out0[" + p->yAt("kiln_t") + "];\n";
  s += "      const float n = tanhf(" +
       p->clipped("((float)xw[" + H2 + " + j] + a[0] + (float)rb[" + H2 +
                  " + j])") +
       ");\n";
  s += "      const float h = (1.0f - z) * n + z * "
       "(float)kiln_prev(kiln_b)[j];\n";
  s += "      out0[" + p->yAt("kiln_t") + "] = " + p->storage + "(h);\n";
  s += closeRecurrenceKernel();
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
                     lstm.getClip().convertToDouble(), lstm.getSequenceLens());
  if (!p || !planUnits(*p))
    return std::nullopt;
  CudaKernel k;
  std::string s = beginRecurrenceKernel(k, op, name, *p, 3, "LSTM recurrence");
  std::string H = str(p->hidden);
  // Gates i, o, f, c; peepholes i, o, f; the cell state in y_c (out2), the
  // thread's own element.
  s += "      const " + p->storage + " *pp = in2 + kiln_d * " +
       str(3 * p->hidden) + ";\n";
  s += "      const long long kiln_s = " + p->stateAt() + ";\n";
  s += "      const float cp = (float)(kiln_step == 0 ? in4 : out2)[kiln_s];\n";
  s += "      const float gi = " +
       p->sigmoid("((float)xw[j] + a[0] + (float)pp[j] * cp)") + ";\n";
  if (lstm.getInputForget() != 0)
    s += "      const float gf = 1.0f - gi;\n";
  else
    s += "      const float gf = " +
         p->sigmoid("((float)xw[" + str(2 * p->hidden) +
                    " + j] + a[2] + (float)pp[" + str(2 * p->hidden) +
                    " + j] * cp)") +
         ";\n";
  s += "      const float gc = tanhf(" +
       p->clipped("((float)xw[" + str(3 * p->hidden) + " + j] + a[3])") +
       ");\n";
  s += "      const float c = gf * cp + gi * gc;\n";
  s += "      const float go = " +
       p->sigmoid("((float)xw[" + H + " + j] + a[1] + (float)pp[" + H +
                  " + j] * c)") +
       ";\n";
  s += "      out2[kiln_s] = " + p->storage + "(c);\n";
  s += "      const float h = go * tanhf(c);\n";
  s += endRecurrenceKernel(*p);
  k.definition = s;
  return k;
}

} // namespace kiln
