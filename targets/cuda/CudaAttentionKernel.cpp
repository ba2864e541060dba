//===- CudaAttentionKernel.cpp - Flash attention kernels ------------------===//
//
// This file implements the CUDA kernel of a top-level kiln.attention or
// kiln.packed_attention (formed by kiln-cuda-attention, FuseAttention.cpp):
// flash attention with tensor-core MMA, so the [B, H, T, T] scores and
// probabilities stay in registers.
//
//   grid  [ceil(T / 64), B * H], block 128 (4 warps); each block owns 64
//         queries of one (batch, head), each warp 16 of them (past T, the
//         last tile's rows are zeros, never stored);
//   Q     the warp's 16 x D query rows as mma A fragments, loaded once;
//   loop  over key tiles of 64 (with `causal`, up to the diagonal tile):
//         K and V tiles through shared memory (16-byte cp.async copies into
//         two buffers for D up to 64, so the next tile's copies overlap
//         this tile's products; keys past T zeros and masked), S = Q K^T
//         with mma.sync.m16n8k16 (f32 accumulators; B fragments by
//         ldmatrix), the causal mask on the diagonal tile, the online
//         softmax (running max and sum per row,
//         exp2 of log2(e)-scaled scores, O rescaled when the max grows),
//         then O += P V with P (rounded to the input type) taken straight
//         from the S accumulators as the A operand;
//   end   O / sum, rounded once, stored; each row's log-sum-exp (lse, f32
//         [B, H, T], the op's second result) for the backward pass.
//
// f32 operands get the CUDA-core kernel of CudaAttentionF32Kernel.cpp
// instead (D up to 64). Requirements (the pass checks them too): f16/bf16
// (or f32), static shapes,
// Tq = Tk = T (any: ViT's 197), D = Dv a multiple of 16 up to 128; q, k, v
// and the result contiguous [B, H, T, D], or, for kiln.packed_attention,
// q, k and v the heads of one [B, T, 3 * H * D] tensor and the result
// [B, T, H, D] (only the row strides and the first elements differ). The scores
// are f32 (not rounded to the input type, unlike the written-out ops' first
// matmul), the probabilities are rounded to the input type for the second MMA,
// as PyTorch's flash attention does.
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaAttentionKernel.h"
#include "codegen/SymbolicShapes.h"
#include "codegen/MemoryPlanner.h"
#include "ir/KilnOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdio>
#include <string>

using namespace mlir;

namespace kiln {

void replaceAllText(std::string &text, const std::string &from,
                    const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string attentionMmaHelpers(std::string &body, const std::string &kernel,
                                const std::string &mmaType) {
  std::string helpers =
      "// " + kernel + "'s helpers: one m16n8k16 MMA (" + mmaType +
      " inputs, f32 accumulators), B fragments of two k steps or two column "
      "tiles by ldmatrix (.trans), and two floats rounded into a " +
      mmaType + "x2 register (the first in the low half).\n";
  // Each kernel gets its own helper names so several attention kernels
  // can share kernels.cu.
  std::string mma = kernel + "_mma", pack = kernel + "_pack2";
  helpers += "__device__ __forceinline__ void " + mma +
             "(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t "
             "b1) {\n"
             "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32." +
             mmaType + "." + mmaType +
             ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, "
             "%2, %3};\"\n"
             "               : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), "
             "\"+f\"(c[3])\n"
             "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), "
             "\"r\"(a[3]), \"r\"(b0), \"r\"(b1));\n}\n";
  // B fragments of two k steps (n 8 rows x k 32 columns of a row-major
  // [n][k] tile, K rows for Q K^T) in one ldmatrix: lane l gives the
  // address of row l & 7, column 16 (l >> 4) + 8 ((l >> 3) & 1).
  std::string ldsmRows = kernel + "_ldsm";
  helpers += "__device__ __forceinline__ void " + ldsmRows +
             "(uint32_t (&r)[4], const uint16_t *p) {\n"
             "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
             "{%0, %1, %2, %3}, [%4];\"\n"
             "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), "
             "\"=r\"(r[3])\n"
             "               : \"r\"((uint32_t)__cvta_generic_to_shared(p)));"
             "\n}\n";
  // B fragments of two 8-column tiles (k 16 rows x n 16 columns of a
  // row-major [k][n] tile in shared memory) in one ldmatrix .trans: lane l
  // gives the address of row (l & 7) + 8 ((l >> 3) & 1), column 8 (l >> 4).
  std::string ldsm = kernel + "_ldsm_t";
  helpers += "__device__ __forceinline__ void " + ldsm +
             "(uint32_t (&r)[4], const uint16_t *p) {\n"
             "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
             "{%0, %1, %2, %3}, [%4];\"\n"
             "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), "
             "\"=r\"(r[3])\n"
             "               : \"r\"((uint32_t)__cvta_generic_to_shared(p)));"
             "\n}\n";
  // 16 bytes copied global -> shared without the registers (cp.async.cg,
  // zeros when !valid), a group's commit, and the wait for all but the
  // last group committed.
  std::string cp = kernel + "_cp16", commit = kernel + "_cp_commit",
              waitPrevious = kernel + "_cp_wait_previous";
  helpers +=
      "__device__ __forceinline__ void " + cp +
      "(void *dst, const void *src, bool valid) {\n"
      "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, "
      "%2;\"\n"
      "               :: \"r\"((uint32_t)__cvta_generic_to_shared(dst)), "
      "\"l\"(src), \"r\"(valid ? 16 : 0));\n}\n";
  helpers += "__device__ __forceinline__ void " + commit +
             "() {\n  asm volatile(\"cp.async.commit_group;\" ::);\n}\n";
  helpers += "__device__ __forceinline__ void " + waitPrevious +
             "() {\n  asm volatile(\"cp.async.wait_group 1;\" ::);\n}\n";
  helpers += "__device__ __forceinline__ uint32_t " + pack +
             "(float lo, float hi) {\n"
             "  uint32_t r;\n"
             "  asm(\"cvt.rn." +
             mmaType +
             "x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
             "  return r;\n}\n";
  // Use this kernel's helper names in its body.
  replaceAllText(body, "kiln_mma(", mma + "(");
  replaceAllText(body, "kiln_pack2(", pack + "(");
  replaceAllText(body, "kiln_ldsm_t(", ldsm + "(");
  replaceAllText(body, "kiln_ldsm(", ldsmRows + "(");
  replaceAllText(body, "kiln_cp16(", cp + "(");
  replaceAllText(body, "kiln_cp_commit(", commit + "(");
  replaceAllText(body, "kiln_cp_wait_previous(", waitPrevious + "(");
  return helpers;
}

namespace {

/// The run-time sequence length of an attention op (its result's T dim:
/// [B, T, H, D] packed, [B, H, T, D] otherwise) as C++ in the size
/// variables, or "" when static.
std::string runTimeSeqOf(Operation *op) {
  std::vector<std::string> dims = symbolicDimsOf(op->getResult(0));
  size_t at = isa<PackedAttentionOp>(op) ? 1 : 2;
  return at < dims.size() && !dims[at].empty()
             ? parseSizeExpr(dims[at]).cExpr()
             : "";
}

} // namespace

bool cudaAttentionTakesRunTimeSizes(Operation *op) {
  auto packed = dyn_cast<PackedAttentionOp>(op);
  if (packed && packed.getLayout() && *packed.getLayout() == "seq_first")
    return false;
  // Static from `from` on: packed q/k/v [B, T, 3HD] and result [B, T, H,
  // D]; otherwise [B, H, T, D] each, H and D static.
  auto staticBeyond = [](Value v, std::initializer_list<size_t> dynamic) {
    std::vector<std::string> dims = symbolicDimsOf(v);
    for (size_t d = 0; d < dims.size(); ++d)
      if (!dims[d].empty() && std::find(dynamic.begin(), dynamic.end(), d) ==
                                  dynamic.end())
        return false;
    return true;
  };
  Value result = op->getResult(0);
  if (packed)
    return staticBeyond(packed.getQkv(), {0, 1}) &&
           staticBeyond(result, {0, 1});
  return llvm::all_of(op->getOperands(),
                      [&](Value v) { return staticBeyond(v, {0, 2}); }) &&
         staticBeyond(result, {0, 2});
}

std::optional<CudaKernel> emitCudaAttentionKernel(Operation *op,
                                                  llvm::StringRef name) {
  // The operands' geometry: [B, H, T, D] each (kiln.attention), or the
  // heads of one [B, T, 3 * H * D] tensor (kiln.packed_attention).
  auto attention = dyn_cast<AttentionOp>(op);
  auto packedOp = dyn_cast<PackedAttentionOp>(op);
  if (!attention && !packedOp)
    return std::nullopt;
  bool packed = packedOp != nullptr, seqFirst = false;
  int64_t b, h, t, d;
  Type e;
  if (packed) {
    auto xt = dyn_cast<RankedTensorType>(packedOp.getQkv().getType());
    auto ot = dyn_cast<RankedTensorType>(packedOp.getOutput().getType());
    if (!xt || !ot || !xt.hasStaticShape() || !ot.hasStaticShape() ||
        ot.getRank() != 4)
      return std::nullopt;
    std::optional<StringRef> layout = packedOp.getLayout();
    if (layout && *layout != "batch_first" && *layout != "seq_first")
      return std::nullopt;
    seqFirst = layout && *layout == "seq_first";
    e = xt.getElementType();
    // The result is [B, T, H, D] ([T, B, H, D] seq-first).
    b = ot.getDimSize(seqFirst ? 1 : 0), t = ot.getDimSize(seqFirst ? 0 : 1),
    h = ot.getDimSize(2), d = ot.getDimSize(3);
  } else {
    auto qt = dyn_cast<RankedTensorType>(attention.getQ().getType());
    auto kt = dyn_cast<RankedTensorType>(attention.getK().getType());
    auto vt = dyn_cast<RankedTensorType>(attention.getV().getType());
    if (!qt || !kt || !vt || !qt.hasStaticShape() || qt != kt || qt != vt)
      return std::nullopt;
    e = qt.getElementType();
    b = qt.getDimSize(0), h = qt.getDimSize(1), t = qt.getDimSize(2),
    d = qt.getDimSize(3);
  }
  bool f32 = e.isF32();
  if ((!e.isBF16() && !e.isF16() && !f32) ||
      (f32 && d > kMaxF32AttentionHeadDim))
    return std::nullopt;
  if (t < 1 || t > (int64_t(1) << 30) || d % 16 != 0 || d == 0 || d > 128 ||
      b * h == 0 || b * h > 65535)
    return std::nullopt;
  bool causal = (packed ? packedOp.getCausal() : attention.getCausal()) != 0;
  float scale =
      (packed ? packedOp.getScale() : attention.getScale()).convertToFloat();
  if (f32) {
    CudaKernel k;
    k.name = name.str();
    k.sourceNodes = sourceNodeNames(op);
    return emitCudaAttentionF32Kernel(
        AttentionGeometry{b, h, t, d, packed, causal, seqFirst, scale,
                          runTimeBatchOf(op), runTimeSeqOf(op),
                          sizeParameterList(op)},
        std::move(k));
  }
  bool bf16 = e.isBF16();
  std::string storage = bf16 ? "kiln_bf16" : "kiln_f16";
  std::string mmaType = bf16 ? "bf16" : "f16";

  CudaKernel k;
  k.name = name.str();
  k.sourceNodes = sourceNodeNames(op);
  AttentionGeometry geometry{b,
                             h,
                             t,
                             d,
                             packed,
                             causal,
                             seqFirst,
                             scale,
                             runTimeBatchOf(op),
                             runTimeSeqOf(op),
                             sizeParameterList(op)};
  geometry.setGrid(k, 64);
  k.block[0] = 128;
  k.gridStride = false; // a block per query tile
  std::string params =
      (packed ? "const " + storage + " *__restrict__ in0, " + storage +
                    " *__restrict__ out0"
              : "const " + storage + " *__restrict__ in0, const " + storage +
                    " *__restrict__ in1, const " + storage +
                    " *__restrict__ in2, " + storage + " *__restrict__ out0") +
      ", float *__restrict__ out1" + geometry.sizeParams;
  std::string head = "extern \"C\" __global__ void __launch_bounds__(128)\n" +
                     k.name + "(" + params + ")";
  k.declaration = head + ";";

  // Exponent form: always a valid float literal with the `f` suffix.
  char scaleText[64];
  snprintf(scaleText, sizeof(scaleText), "%.9e", scale);
  std::string s;
  s += "// " + k.name + ": flash attention, softmax(" + scaleText + " * Q K^T" +
       (causal ? " + causal mask" : "") + ") V over [" + std::to_string(b) +
       ", " + std::to_string(h) + ", " + std::to_string(t) + ", " +
       std::to_string(d) + "] " + mmaType +
       (packed ? seqFirst
                     ? ", q, k and v read in place from [T, B, 3 * H * D], the "
                       "result written [T, B, H, D]"
                     : ", q, k and v read in place from [B, T, 3 * H * D], the "
                       "result written [B, T, H, D]"
               : "") +
       "\n";
  s += "// ONNX nodes:";
  for (const std::string &n : k.sourceNodes)
    s += " " + n;
  s += "\n// mapping: a block per 64 queries of one (batch, head), a warp per "
       "16; key tiles of 64 through shared memory; mma.sync m16n8k16, online "
       "softmax in registers\n";
  s += "// launch: grid [" + std::to_string(k.grid[0]) + ", " +
       std::to_string(k.grid[1]) + ", 1], block [128, 1, 1]\n";
  s += head + " {\n";
  s += geometry.seqDeclaration();
  s += "  constexpr int D = " + std::to_string(d) + ", BC = 64, LD = D + 8;\n";
  // RS: elements from one position's q (k, v) row to the next; OS: the
  // same for the result.
  int64_t c = h * d;
  s += "  constexpr int RS = " + std::to_string(geometry.rowStride()) +
       ", OS = " + std::to_string(geometry.outRowStride()) + ";\n";
  s += "  constexpr bool kCausal = " + std::string(causal ? "true" : "false") +
       ";\n";
  s += "  // log2(e) * scale: the softmax runs on exp2.\n";
  s += "  const float kScaleLog2 = " + std::string(scaleText) +
       "f * 1.4426950408889634f;\n";
  s +=
      R"cu(  // Two buffers of K and V where they fit the 48 KiB of static shared
  // memory (D up to 64): the next key tile's cp.async copies overlap this
  // tile's products.
  constexpr int NS = D <= 64 ? 2 : 1;
  __shared__ __align__(16) uint16_t ksb[NS][BC][LD];
  __shared__ __align__(16) uint16_t vsb[NS][BC][LD];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t4 = lane & 3;
  // With the causal mask the last query tiles loop over the most key
  // tiles: they take the first blocks, so the grid's tail is short work.
  const int qt = kCausal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
KILN_ATTENTION_POINTERS  const int row0 = qt * 64 + warp * 16; // the warp's first query
  // Whether the thread's rows g and g + 8 are queries (past T: zeros).
  const bool q0 = row0 + g < T, q1 = row0 + g + 8 < T;
  // The warp's queries as A fragments: rows g and g + 8, columns 2 t4 (+1)
  // and 2 t4 + 8 (+1) of each 16-wide k step.
  uint32_t qa[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const uint16_t *r0 = q + (size_t)(row0 + g) * RS + kk * 16 + 2 * t4;
    const uint16_t *r1 = r0 + 8 * RS;
    qa[kk][0] = q0 ? *reinterpret_cast<const uint32_t *>(r0) : 0u;
    qa[kk][1] = q1 ? *reinterpret_cast<const uint32_t *>(r1) : 0u;
    qa[kk][2] = q0 ? *reinterpret_cast<const uint32_t *>(r0 + 8) : 0u;
    qa[kk][3] = q1 ? *reinterpret_cast<const uint32_t *>(r1 + 8) : 0u;
  }
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f; // rows g, g + 8
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  const int tiles = kCausal ? qt + 1 : (T + BC - 1) / BC;
  // Key tile `kt` into buffer `b` (cp.async): K and V rows; keys past T
  // zeros (their scores are masked; V's zeros keep P V finite).
  auto stage = [&](int kt, int b) {
    for (int c = threadIdx.x; c < BC * D / 8; c += 128) {
      const int r = c / (D / 8), col = (c % (D / 8)) * 8;
      const bool valid = kt * BC + r < T;
      const size_t at = valid ? (size_t)(kt * BC + r) * RS + col : 0;
      kiln_cp16(&ksb[b][r][col], k + at, valid);
      kiln_cp16(&vsb[b][r][col], v + at, valid);
    }
    kiln_cp_commit();
  };
  stage(0, 0);
  for (int kt = 0; kt < tiles; ++kt) {
    const int b = NS == 2 ? (kt & 1) : 0;
    // The next tile's copies start (two buffers); this tile's are done.
    if (NS == 2 && kt + 1 < tiles)
      stage(kt + 1, b ^ 1);
    else
      kiln_cp_commit();
    kiln_cp_wait_previous();
    __syncthreads();
    uint16_t (*ks)[LD] = ksb[b], (*vs)[LD] = vsb[b];
    // S = Q K^T: 8 tiles of 8 keys; B fragment (k = d, n = key) from K rows.
    float s[BC / 8][4];
#pragma unroll
    for (int j = 0; j < BC / 8; ++j) {
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
      if constexpr (D % 32 == 0) {
        // Two k steps' B fragments per ldmatrix.
#pragma unroll
        for (int kk = 0; kk < D / 16; kk += 2) {
          uint32_t b[4];
          kiln_ldsm(b, &ks[j * 8 + (lane & 7)]
                          [(kk + (lane >> 4)) * 16 + ((lane >> 3) & 1) * 8]);
          kiln_mma(s[j], qa[kk], b[0], b[1]);
          kiln_mma(s[j], qa[kk + 1], b[2], b[3]);
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          const uint32_t b0 = *reinterpret_cast<const uint32_t *>(
              &ks[j * 8 + g][kk * 16 + 2 * t4]);
          const uint32_t b1 = *reinterpret_cast<const uint32_t *>(
              &ks[j * 8 + g][kk * 16 + 2 * t4 + 8]);
          kiln_mma(s[j], qa[kk], b0, b1);
        }
      }
    }
    // The online softmax: scale, mask, running max and sum per row.
    float mx0 = m0, mx1 = m1;
#pragma unroll
    for (int j = 0; j < BC / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int key = kt * BC + j * 8 + 2 * t4 + e;
        float x0 = s[j][e] * kScaleLog2, x1 = s[j][2 + e] * kScaleLog2;
        if (kCausal && key > row0 + g)
          x0 = -INFINITY;
        if (kCausal && key > row0 + g + 8)
          x1 = -INFINITY;
        if (T % BC != 0 && key >= T)
          x0 = x1 = -INFINITY;
        s[j][e] = x0;
        s[j][2 + e] = x1;
        mx0 = fmaxf(mx0, x0);
        mx1 = fmaxf(mx1, x1);
      }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    // A row whose keys so far are all masked keeps max -inf: subtract 0.
    const float b0m = mx0 == -INFINITY ? 0.f : mx0;
    const float b1m = mx1 == -INFINITY ? 0.f : mx1;
    const float alpha0 = exp2f(m0 - b0m), alpha1 = exp2f(m1 - b1m);
    m0 = mx0;
    m1 = mx1;
    float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
    for (int j = 0; j < BC / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        s[j][e] = exp2f(s[j][e] - b0m);
        s[j][2 + e] = exp2f(s[j][2 + e] - b1m);
        rs0 += s[j][e];
        rs1 += s[j][2 + e];
      }
    rs0 += __shfl_xor_sync(0xffffffffu, rs0, 1);
    rs0 += __shfl_xor_sync(0xffffffffu, rs0, 2);
    rs1 += __shfl_xor_sync(0xffffffffu, rs1, 1);
    rs1 += __shfl_xor_sync(0xffffffffu, rs1, 2);
    l0 = l0 * alpha0 + rs0;
    l1 = l1 * alpha1 + rs1;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      acc[n][0] *= alpha0;
      acc[n][1] *= alpha0;
      acc[n][2] *= alpha1;
      acc[n][3] *= alpha1;
    }
    // O += P V: P's A fragments are the S accumulators of two key tiles;
    // B fragment (k = key, n = d) from V columns.
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) {
      uint32_t pa[4] = {kiln_pack2(s[2 * kk][0], s[2 * kk][1]),
                        kiln_pack2(s[2 * kk][2], s[2 * kk][3]),
                        kiln_pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                        kiln_pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
      // B fragments (k = key, n = d) of V, two column tiles per ldmatrix.
#pragma unroll
      for (int n = 0; n < D / 8; n += 2) {
        uint32_t b[4];
        kiln_ldsm_t(b, &vs[kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8]
                          [(n + (lane >> 4)) * 8]);
        kiln_mma(acc[n], pa, b[0], b[1]);
        kiln_mma(acc[n + 1], pa, b[2], b[3]);
      }
    }
    __syncthreads(); // buffer b is read before the next tile's copies
    if (NS == 1 && kt + 1 < tiles)
      stage(kt + 1, 0);
  }
  // O / sum, rounded once: rows g and g + 8, columns 2 t4 (+1) of each tile.
  const float inv0 = 1.f / l0, inv1 = 1.f / l1;
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    const int c = n * 8 + 2 * t4;
    if (q0)
      *reinterpret_cast<uint32_t *>(o + (size_t)(row0 + g) * OS + c) =
          kiln_pack2(acc[n][0] * inv0, acc[n][1] * inv0);
    if (q1)
      *reinterpret_cast<uint32_t *>(o + (size_t)(row0 + g + 8) * OS + c) =
          kiln_pack2(acc[n][2] * inv1, acc[n][3] * inv1);
  }
  // lse, each row's ln(sum exp(scale q k^T)) = (m + log2(l)) ln 2 (m in
  // log2 units), for the backward pass.
  float *lse = out1 + (size_t)blockIdx.y * T;
  if (t4 == 0 && q0)
    lse[row0 + g] = (m0 + log2f(l0)) * 0.6931471805599453f;
  if (t4 == 0 && q1)
    lse[row0 + g + 8] = (m1 + log2f(l1)) * 0.6931471805599453f;
}
)cu";
  // The operands' first elements for this block's (batch, head).
  std::string pointers =
      packed
          ? "  const int bi = blockIdx.y / " + std::to_string(h) +
                ", hi = blockIdx.y % " + std::to_string(h) +
                ";\n"
                "  const uint16_t *q = reinterpret_cast<const uint16_t "
                "*>(in0) + (size_t)bi * " +
                geometry.batchStrideText() +
                " + hi * D;\n"
                "  const uint16_t *k = q + " +
                std::to_string(c) + ", *v = q + " + std::to_string(2 * c) +
                ";\n"
                "  uint16_t *o = reinterpret_cast<uint16_t *>(out0) + "
                "(size_t)bi * " +
                geometry.outBatchStrideText() + " + hi * D;\n"
          : "  const size_t base = (size_t)blockIdx.y * T * D;\n"
            "  const uint16_t *q = reinterpret_cast<const uint16_t *>(in0) + "
            "base;\n"
            "  const uint16_t *k = reinterpret_cast<const uint16_t *>(in1) + "
            "base;\n"
            "  const uint16_t *v = reinterpret_cast<const uint16_t *>(in2) + "
            "base;\n"
            "  uint16_t *o = reinterpret_cast<uint16_t *>(out0) + base;\n";
  replaceAllText(s, "KILN_ATTENTION_POINTERS", pointers);
  // The helpers, specialised to the type, ahead of the kernel.
  std::string helpers = attentionMmaHelpers(s, k.name, mmaType);
  k.definition = helpers + s;
  return k;
}

} // namespace kiln
