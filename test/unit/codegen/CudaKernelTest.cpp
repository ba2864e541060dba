//===- CudaKernelTest.cpp - Generated CUDA kernels through NVRTC ----------===//
//
// This file implements the tests of the CUDA printer and the NVRTC driver
// (this machine has no GPU: kernels are printed and compiled, not run). Each
// test builds kiln.fusion regions from MLIR text, prints them as CUDA,
// checks the mapping the printer chose (launch bounds, vector access, one
// block or warp per row, shuffles) and compiles the kernels.cu with NVRTC to
// a non-empty cubin and PTX; the op coverage cases are the C++ kernel tests'
// regions, so every prelude helper is instantiated in device code. A broken
// source must give a diagnostic naming the kernel and the line.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"
#include "targets/cpu/CppKernel.h"
#include "targets/cuda/CudaKernel.h"
#include "targets/cuda/NvrtcCompiler.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::test;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}


/// Prints every case as CUDA, compiles them as one kernels.cu and returns
/// the kernels; `seconds` gets NVRTC's time.
std::vector<CudaKernel> printAndCompile(const std::vector<CudaCase> &cases,
                                        double *seconds = nullptr,
                                        CudaBinary *binaryOut = nullptr) {
  std::string text;
  for (const CudaCase &c : cases)
    text += fusionText(c.name, c.kind, c.inTypes, c.outTypes, c.body);
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(m.ctx.get(), [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    for (mlir::Diagnostic &note : d.getNotes())
      diagnostics += note.str() + "\n";
    return mlir::success();
  });
  std::vector<CudaKernel> kernels;
  for (FusionOp op : m.fusions()) {
    mlir::FailureOr<CudaKernel> k = emitCudaKernel(op);
    INFO(diagnostics);
    REQUIRE(mlir::succeeded(k));
    kernels.push_back(*k);
  }
  REQUIRE(kernels.size() == cases.size());
  std::string file = emitCudaKernelsFile(kernels, "test");
  if (!haveNvrtc()) {
    // Built without the CUDA toolkit, or libnvrtc missing: print only.
    WARN("NVRTC unavailable: CUDA kernels printed but not compiled");
    return kernels;
  }
  mlir::FailureOr<CudaBinary> binary = compileCudaSource(
      file, "kernels.cu", kernels, mlir::UnknownLoc::get(m.ctx.get()));
  if (mlir::failed(binary))
    FAIL(diagnostics << "\n" << file);
  // No warnings either (unused variables, narrowing, ...).
  INFO(binary->log);
  CHECK(binary->log.empty());
  CHECK(!binary->cubin.empty());
  CHECK(binary->cubin.compare(0, 4, "\x7f"
                                    "ELF") == 0);
  CHECK(contains(binary->ptx, ".target sm_90"));
  for (const CudaKernel &k : kernels)
    CHECK(contains(binary->ptx, ".entry " + k.name));
  if (seconds)
    *seconds = binary->seconds;
  if (binaryOut)
    *binaryOut = *binary;
  return kernels;
}

} // namespace

TEST_CASE("the CUDA prelude is device code without standard headers",
          "[codegen][cuda]") {
  std::string cuda = cudaKernelPrelude();
  std::string cpp = cppKernelPrelude();
  CHECK(!contains(cuda, "#include"));
  CHECK(!contains(cuda, "memcpy"));
  CHECK(!contains(cuda, "KILN_"));
  CHECK(contains(cuda, "__device__ __forceinline__ float kiln_sigmoid"));
  CHECK(contains(cuda, "__float_as_uint"));
  CHECK(contains(cuda, "cvt.rn.f16.f32"));
  CHECK(contains(cuda, "cvt.rn.bf16.f32"));
  // The C++ prelude is host code.
  CHECK(contains(cpp, "#include <cmath>"));
  CHECK(contains(cpp, "static inline float kiln_expf(float x) {"));
  CHECK(contains(cpp, "  kiln_f16(float f) : bits("));
  CHECK(!contains(cpp, "__device__"));
  CHECK(!contains(cpp, "KILN_"));
}

TEST_CASE("pointwise kernels: vector access when the last dim allows it",
          "[codegen][cuda]") {
  std::string body = R"(
    %m = kiln.mul %x0, %x1 : (T, tensor<LASTxDT>) -> T
    %g = kiln.gelu %m {approximate = "none"} : (T) -> T
    %r = kiln.relu %g : (T) -> T
    kiln.yield %r : T)";
  auto pointwise = [&](const std::string &name, int64_t rows, int64_t last,
                       const std::string &dt) {
    std::string t = "tensor<" + std::to_string(rows) + "x" +
                    std::to_string(last) + "x" + dt + ">";
    std::string b = body;
    for (size_t p; (p = b.find("LAST")) != std::string::npos;)
      b.replace(p, 4, std::to_string(last));
    for (size_t p; (p = b.find("DT")) != std::string::npos;)
      b.replace(p, 2, dt);
    for (size_t p; (p = b.find("T")) != std::string::npos;)
      b.replace(p, 1, t);
    return CudaCase{name,
                "pointwise",
                {t, "tensor<" + std::to_string(last) + "x" + dt + ">"},
                {t},
                b};
  };
  CudaBinary binary;
  std::vector<CudaKernel> ks = printAndCompile(
      {pointwise("k0_f32", 64, 1024, "f32"), pointwise("k1_f32_odd", 10, 6, "f32"),
       pointwise("k2_f16", 32, 256, "f16"), pointwise("k3_bf16", 8, 12, "bf16")},
      nullptr, &binary);
  INFO(ks[0].definition);
  CHECK(contains(ks[0].declaration,
                 "extern \"C\" __global__ void __launch_bounds__(128)\n"
                 "k0_f32(const float *__restrict__ in0, const float "
                 "*__restrict__ in1, float *__restrict__ out0);"));
  CHECK(contains(ks[0].definition, "kiln_vec<float, 4>"));
  CHECK(contains(ks[0].definition, "% 16 == 0"));
  // 16384 float4 steps: blocks of 128 threads make 128 blocks.
  CHECK(ks[0].block[0] == 128);
  CHECK(ks[0].grid[0] == 64 * 1024 / 4 / 128);
  CHECK(ks[0].sharedBytes == 0);
  // 6 is not a multiple of 4: no float4 (pairs instead).
  CHECK(!contains(ks[1].definition, "kiln_vec<float, 4>"));
  CHECK(contains(ks[1].definition, "kiln_vec<float, 2>"));
  CHECK(ks[1].block[0] == 32); // 30 pairs: one warp
  CHECK(contains(ks[2].definition, "kiln_vec<kiln_f16, 8>"));
  CHECK(contains(ks[2].declaration, "const kiln_f16 *__restrict__ in0"));
  // 12 is not a multiple of 8: bf16 by 4.
  CHECK(contains(ks[3].definition, "kiln_vec<kiln_bf16, 4>"));
  // The stored bf16 result (relu's) is narrowed once, from its float value.
  INFO(ks[3].definition);
  CHECK(contains(ks[3].definition, "const float t4_0_x = "));
  CHECK(contains(ks[3].definition, "kiln_s.v[0] = kiln_bf16(t4_0_x);"));
  // Indices fit 32 bits here; the grid covers the domain.
  CHECK(contains(ks[0].definition, "for (int kiln_i = kiln_gtid;"));
  // The vector accesses are single 128-bit instructions.
  CHECK(contains(binary.ptx, "ld.global.nc.v4.f32"));
  CHECK(contains(binary.ptx, "st.global.v4.f32"));
}

TEST_CASE("huge domains index in 64 bits and cap the grid",
          "[codegen][cuda]") {
  std::string t = "tensor<65536x32768xf32>";
  std::vector<CudaKernel> ks = printAndCompile(
      {{"k0_huge",
        "pointwise",
        {t},
        {t},
        "    %n = kiln.neg %x0 : (" + t + ") -> " + t +
            "\n    kiln.yield %n : " + t},
       softmax("k1_rows", "tensor<4194304x512xf32>", "tensor<4194304x1xf32>")});
  INFO(ks[0].definition);
  CHECK(contains(ks[0].definition, "for (int64_t kiln_i = kiln_gtid;"));
  CHECK(ks[0].grid[0] == 65535);
  CHECK(contains(ks[1].definition, "for (int64_t kiln_row ="));
  CHECK(ks[1].grid[0] == 65535);
}

TEST_CASE("broadcasting and transposed views print and compile",
          "[codegen][cuda]") {
  std::vector<CudaKernel> ks = printAndCompile({
      {"k0_bcast_transpose",
       "pointwise",
       {"tensor<64x32xf32>", "tensor<32x64xf32>", "tensor<64x1xf32>"},
       {"tensor<32x64xf32>"},
       R"(
    %t = kiln.transpose %x0 {perm = array<i64: 1, 0>} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %a = kiln.add %t, %x1 : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    %tb = kiln.transpose %x2 {perm = array<i64: 1, 0>} : (tensor<64x1xf32>) -> tensor<1x64xf32>
    %m = kiln.mul %a, %tb : (tensor<32x64xf32>, tensor<1x64xf32>) -> tensor<32x64xf32>
    kiln.yield %m : tensor<32x64xf32>)"},
      {"k1_views",
       "pointwise",
       {"tensor<3x1xf32>", "tensor<2x3x4xf32>"},
       {"tensor<2x12xf32>", "tensor<3x4xf32>", "tensor<2x1x4xf32>"},
       R"(
    %shape = kiln.constant dense<[2, 3, 4]> : tensor<3xi64>
    %e = kiln.expand %x0, %shape : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
    %m = kiln.mul %e, %x1 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %f = kiln.flatten %m {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    %starts = kiln.constant dense<[-1, 5]> : tensor<2xi64>
    %ends = kiln.constant dense<[-100, -100]> : tensor<2xi64>
    %ax = kiln.constant dense<[0, 1]> : tensor<2xi64>
    %steps = kiln.constant dense<[-1, -4]> : tensor<2xi64>
    %sl = kiln.slice %x1, %starts, %ends, %ax, %steps : (tensor<2x3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x1x4xf32>
    %t = kiln.transpose %x1 {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
    %st = kiln.constant dense<[1]> : tensor<1xi64>
    %en = kiln.constant dense<[2]> : tensor<1xi64>
    %ax1 = kiln.constant dense<[1]> : tensor<1xi64>
    %one = kiln.constant dense<[1]> : tensor<1xi64>
    %row = kiln.slice %t, %st, %en, %ax1, %one : (tensor<3x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x1x4xf32>
    %a1b = kiln.constant dense<[1]> : tensor<1xi64>
    %r2 = kiln.squeeze %row, %a1b : (tensor<3x1x4xf32>, tensor<1xi64>) -> tensor<3x4xf32>
    kiln.yield %f, %r2, %sl : tensor<2x12xf32>, tensor<3x4xf32>, tensor<2x1x4xf32>)"},
  });
  INFO(ks[0].definition);
  // The transposed input is strided in the last dim: no vector access.
  CHECK(!contains(ks[0].definition, "kiln_vec"));
  CHECK(contains(ks[0].definition, "in0[i0 + i1*32]"));
  // Several result shapes: one grid-stride nest each.
  CHECK(contains(ks[1].definition, "mapping: pointwise over 24"));
  CHECK(contains(ks[1].definition, "mapping: pointwise over 12"));
}

TEST_CASE("softmax: one block per long row, one warp per short row",
          "[codegen][cuda]") {
  double seconds = 0;
  std::vector<CudaKernel> ks = printAndCompile(
      {softmax("k0_softmax", "tensor<8x4096xf32>", "tensor<8x1xf32>")},
      &seconds);
  const CudaKernel &k = ks[0];
  INFO(k.definition);
  WARN("NVRTC compiled a [8, 4096] softmax in " << seconds << " s");
  CHECK(k.block[0] == 256);
  CHECK(k.grid[0] == 8);
  CHECK(contains(k.declaration, "__launch_bounds__(256)"));
  CHECK(contains(k.definition, "one block of 256 threads per row of 4096"));
  CHECK(contains(k.definition, "kiln_row = (int)blockIdx.x"));
  CHECK(contains(k.definition, "kiln_shfl_xor("));
  CHECK(contains(k.definition, "__syncthreads();"));
  CHECK(contains(k.definition, "__shared__ float kiln_red"));
  // The exp of the row is cached in registers (16 per thread), not
  // recomputed.
  CHECK(contains(k.definition, "float c0[16];"));
  CHECK(contains(k.definition, "#pragma unroll"));
  // The row is read from global memory once: the max loop keeps its loads
  // for the sum loop (4 runs of 4 floats per thread; the strided fallback
  // for misaligned buffers reads each element once too).
  CHECK(contains(k.definition, "4 runs of 4 contiguous"));
  CHECK(contains(k.definition, "float kiln_l0[16];"));
  CHECK(contains(k.definition, "= kiln_l0[kiln_k * 4 + kiln_u];"));
  CHECK(contains(k.definition, "= kiln_l0[kiln_k];"));
  auto count = [&](const std::string &part) {
    size_t n = 0;
    for (size_t p = k.definition.find(part); p != std::string::npos;
         p = k.definition.find(part, p + 1))
      ++n;
    return n;
  };
  CHECK(count("in0[") == 1);
  CHECK(count("*>(in0 + (") == 1);
  CHECK(contains(k.definition, "kiln_max<float>("));

  std::vector<CudaKernel> short_ = printAndCompile(
      {softmax("k1_softmax", "tensor<100x300xf32>", "tensor<100x1xf32>"),
       softmax("k2_softmax", "tensor<64x8xf16>", "tensor<64x1xf16>")});
  INFO(short_[0].definition);
  CHECK(contains(short_[0].definition, "one warp per row of 300"));
  CHECK(contains(short_[0].definition, "threadIdx.x & 31"));
  CHECK(!contains(short_[0].definition, "__syncthreads"));
  // 100 rows: a warp per block, so that 100 SMs get work.
  CHECK(short_[0].block[0] == 32);
  CHECK(short_[0].grid[0] == 100);
  // Rows of 8: one thread per row.
  CHECK(contains(short_[1].definition, "one thread per row of 8"));
}

TEST_CASE("layer norm, reductions to a scalar and integer reductions",
          "[codegen][cuda]") {
  std::vector<CudaKernel> ks = printAndCompile({
      layerNorm("k0_layer_norm", 16, 768, "f32"),
      layerNorm("k1_layer_norm", 4, 2048, "f16"),
      {"k2_total",
       "reduction",
       {"tensor<1000x37xf32>"},
       {"tensor<f32>", "tensor<f32>"},
       R"(
    %axes = kiln.constant dense<> : tensor<0xi64>
    %s = kiln.reduce_sum %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1000x37xf32>, tensor<0xi64>) -> tensor<f32>
    %m = kiln.reduce_min %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1000x37xf32>, tensor<0xi64>) -> tensor<f32>
    kiln.yield %s, %m : tensor<f32>, tensor<f32>)"},
      {"k3_int",
       "reduction",
       {"tensor<16x50xi32>", "tensor<16x50xi64>"},
       {"tensor<16x1xi32>", "tensor<16x1xi64>", "tensor<16x1xi32>"},
       R"(
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %s = kiln.reduce_sum %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<16x50xi32>, tensor<1xi64>) -> tensor<16x1xi32>
    %m = kiln.reduce_max %x1, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<16x50xi64>, tensor<1xi64>) -> tensor<16x1xi64>
    %a = kiln.reduce_mean %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<16x50xi32>, tensor<1xi64>) -> tensor<16x1xi32>
    kiln.yield %s, %m, %a : tensor<16x1xi32>, tensor<16x1xi64>, tensor<16x1xi32>)"},
      {"k4_col_sum",
       "reduction",
       {"tensor<8x5x3xf32>"},
       {"tensor<5x3xf32>", "tensor<5x3xf32>"},
       R"(
    %axes = kiln.constant dense<0> : tensor<1xi64>
    %s = kiln.reduce_sum %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x5x3xf32>, tensor<1xi64>) -> tensor<5x3xf32>
    %p = kiln.reduce_prod %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x5x3xf32>, tensor<1xi64>) -> tensor<5x3xf32>
    kiln.yield %s, %p : tensor<5x3xf32>, tensor<5x3xf32>)"},
      {"k6_columns",
       "reduction",
       {"tensor<512x4096xf32>"},
       {"tensor<1x4096xf32>"},
       R"(
    %axes = kiln.constant dense<0> : tensor<1xi64>
    %s = kiln.reduce_mean %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<512x4096xf32>, tensor<1xi64>) -> tensor<1x4096xf32>
    kiln.yield %s : tensor<1x4096xf32>)"},
      // A gradient beside its bias gradient: the elementwise result reads
      // no reduction, so the reduce loop stores it (no row cache) and the
      // column sum keeps its thread per column.
      {"k7_grad_and_bias_grad",
       "reduction",
       {"tensor<2048x1024xf32>", "tensor<2048x1024xf32>"},
       {"tensor<2048x1024xf32>", "tensor<1x1024xf32>"},
       R"(
    %axes = kiln.constant dense<0> : tensor<1xi64>
    %g = kiln.mul %x0, %x1 : (tensor<2048x1024xf32>, tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
    %s = kiln.reduce_sum %g, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2048x1024xf32>, tensor<1xi64>) -> tensor<1x1024xf32>
    kiln.yield %g, %s : tensor<2048x1024xf32>, tensor<1x1024xf32>)"},
      {"k5_middle",
       "reduction",
       {"tensor<3x7x5xf64>", "tensor<4x6xi32>"},
       {"tensor<3x7x5xf64>"},
       R"(
    %axes = kiln.constant dense<[1]> : tensor<1xi64>
    %m = kiln.reduce_mean %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<3x7x5xf64>, tensor<1xi64>) -> tensor<3x1x5xf64>
    %d = kiln.sub %x0, %m : (tensor<3x7x5xf64>, tensor<3x1x5xf64>) -> tensor<3x7x5xf64>
    kiln.yield %d : tensor<3x7x5xf64>)"},
  });
  INFO(ks[0].definition);
  CHECK(contains(ks[0].definition, "one warp per row of 768"));
  // f16 rows of 2048: runs of 8 (16 bytes), 16 elements per thread.
  CHECK(contains(ks[1].definition, "one block of 128 threads per row of 2048"));
  CHECK(contains(ks[1].definition, "2 runs of 8 contiguous"));
  CHECK(contains(ks[1].definition, "kiln_round_f16("));
  INFO(ks[2].definition);
  CHECK(contains(ks[2].definition, "one block of 1024 threads per row of 37000"));
  CHECK(ks[2].grid[0] == 1);
  // The sum's and the min's results are written once, by lane 0.
  CHECK(contains(ks[2].definition, "if (kiln_lane == 0) out0[0] = "));
  CHECK(contains(ks[2].definition, "kiln_min<float>("));
  INFO(ks[3].definition);
  // Integer sums wrap in u64; max starts at the type's lowest value.
  CHECK(contains(ks[3].definition, "uint64_t acc"));
  CHECK(contains(ks[3].definition, "kiln_lowest<int64_t>()"));
  CHECK(contains(ks[3].definition, "one warp per row of 50"));
  CHECK(contains(ks[4].definition, "one thread per row of 8"));
  CHECK(contains(ks[4].definition, "double acc")); // products in f64
  // A mean over the leading axis: lanes take consecutive columns (coalesced
  // reads), 8 warps a slice of the rows each, combined in shared memory.
  INFO(ks[5].definition);
  CHECK(contains(ks[5].definition, "32 rows per block, 8 threads per row of 512 elements"));
  CHECK(contains(ks[5].definition, "4096 rows"));
  CHECK(contains(ks[5].definition, "kiln_col1[kiln_s * 32 + threadIdx.x]"));
  CHECK(ks[5].block[0] == 256);
  CHECK(ks[5].grid[0] == 4096 / 32);
  INFO(ks[6].definition);
  CHECK(contains(ks[6].definition, "32 rows per block, 8 threads per row of 2048 elements"));
  CHECK(!contains(ks[6].definition, "c0["));
  CHECK(contains(ks[6].definition, "out0[j0*1024 + i0] = "));
}

TEST_CASE("every op of the C++ kernel tests prints as valid CUDA",
          "[codegen][cuda]") {
  printAndCompile({
      {"k0_activations",
       "pointwise",
       {"tensor<3x40xf32>"},
       {"tensor<3x40xf32>", "tensor<3x40xf32>", "tensor<3x40xf32>",
        "tensor<3x40xf32>"},
       R"(
    %a = kiln.leaky_relu %x0 {alpha = 0.1 : f32} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %b = kiln.elu %a {alpha = 1.5 : f32} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %c = kiln.selu %x0 {alpha = 1.67326319 : f32, gamma = 1.05070102 : f32} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %d = kiln.celu %x0 {alpha = 2.0 : f32} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %e = kiln.hard_swish %d : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %f = kiln.mish %c : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %g = kiln.softplus %x0 : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %h = kiln.hard_sigmoid %g {alpha = 0.2 : f32, beta = 0.5 : f32} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %i = kiln.swish %x0 {alpha = 1.0 : f32} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %j = kiln.shrink %i {bias = 0.1 : f32, lambd = 0.5 : f32} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %k = kiln.round %j : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %l = kiln.mod %x0, %k {fmod = 0 : i64} : (tensor<3x40xf32>, tensor<3x40xf32>) -> tensor<3x40xf32>
    %m = kiln.softsign %l : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %n = kiln.thresholded_relu %m {alpha = 0.2 : f32} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %o = kiln.abs %x0 : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %p = kiln.sqrt %o : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %q = kiln.log %p : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %r = kiln.sign %q : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %s = kiln.erf %x0 : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %t = kiln.atan %s : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %u = kiln.gelu %t {approximate = "tanh"} : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %v = kiln.sigmoid %u : (tensor<3x40xf32>) -> tensor<3x40xf32>
    %c5 = kiln.constant dense<0.5> : tensor<f32>
    %w = kiln.pow %v, %c5 : (tensor<3x40xf32>, tensor<f32>) -> tensor<3x40xf32>
    %z = kiln.is_inf %w {detect_positive = 1 : i64, detect_negative = 1 : i64} : (tensor<3x40xf32>) -> tensor<3x40xi1>
    %y = kiln.where %z, %r, %w : (tensor<3x40xi1>, tensor<3x40xf32>, tensor<3x40xf32>) -> tensor<3x40xf32>
    kiln.yield %b, %e, %n, %y : tensor<3x40xf32>, tensor<3x40xf32>, tensor<3x40xf32>, tensor<3x40xf32>)"},
      {"k1_casts",
       "pointwise",
       {"tensor<5x7xf32>", "tensor<5x7xi64>", "tensor<5x7xf64>"},
       {"tensor<5x7xi32>", "tensor<5x7xf16>", "tensor<5x7xi1>",
        "tensor<5x7xf32>", "tensor<5x7xbf16>", "tensor<5x7xui8>",
        "tensor<5x7xi8>", "tensor<5x7xf64>"},
       R"(
    %a = kiln.cast %x0 {to = i32} : (tensor<5x7xf32>) -> tensor<5x7xi32>
    %b = kiln.cast %x0 {to = f16} : (tensor<5x7xf32>) -> tensor<5x7xf16>
    %c = kiln.cast %x0 {to = i1} : (tensor<5x7xf32>) -> tensor<5x7xi1>
    %d = kiln.cast %x1 {to = f32} : (tensor<5x7xi64>) -> tensor<5x7xf32>
    %e = kiln.cast %b {to = f32} : (tensor<5x7xf16>) -> tensor<5x7xf32>
    %f = kiln.add %d, %e : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %g = kiln.cast %f {to = bf16} : (tensor<5x7xf32>) -> tensor<5x7xbf16>
    %h = kiln.cast %x1 {to = ui8} : (tensor<5x7xi64>) -> tensor<5x7xui8>
    %i = kiln.cast %x2 {to = i8} : (tensor<5x7xf64>) -> tensor<5x7xi8>
    %j = kiln.exp %x2 : (tensor<5x7xf64>) -> tensor<5x7xf64>
    %k = kiln.sigmoid %j : (tensor<5x7xf64>) -> tensor<5x7xf64>
    %l = kiln.softplus %k : (tensor<5x7xf64>) -> tensor<5x7xf64>
    %m = kiln.mod %l, %x2 {fmod = 1 : i64} : (tensor<5x7xf64>, tensor<5x7xf64>) -> tensor<5x7xf64>
    %n = kiln.erf %m : (tensor<5x7xf64>) -> tensor<5x7xf64>
    kiln.yield %a, %b, %c, %f, %g, %h, %i, %n : tensor<5x7xi32>, tensor<5x7xf16>, tensor<5x7xi1>, tensor<5x7xf32>, tensor<5x7xbf16>, tensor<5x7xui8>, tensor<5x7xi8>, tensor<5x7xf64>)"},
      {"k2_int",
       "pointwise",
       {"tensor<6x9xi32>", "tensor<9xi32>", "tensor<6x9xi64>"},
       {"tensor<6x9xi32>", "tensor<6x9xi32>", "tensor<6x9xi32>",
        "tensor<6x9xi64>", "tensor<6x9xi32>"},
       R"(
    %a = kiln.div %x0, %x1 : (tensor<6x9xi32>, tensor<9xi32>) -> tensor<6x9xi32>
    %b = kiln.mod %x0, %x1 {fmod = 0 : i64} : (tensor<6x9xi32>, tensor<9xi32>) -> tensor<6x9xi32>
    %c = kiln.mod %x0, %x1 {fmod = 1 : i64} : (tensor<6x9xi32>, tensor<9xi32>) -> tensor<6x9xi32>
    %d = kiln.mul %a, %b : (tensor<6x9xi32>, tensor<6x9xi32>) -> tensor<6x9xi32>
    %e = kiln.max %d, %c : (tensor<6x9xi32>, tensor<6x9xi32>) -> tensor<6x9xi32>
    %f = kiln.neg %e : (tensor<6x9xi32>) -> tensor<6x9xi32>
    %g = kiln.abs %f : (tensor<6x9xi32>) -> tensor<6x9xi32>
    %h = kiln.bitwise_xor %g, %x0 : (tensor<6x9xi32>, tensor<6x9xi32>) -> tensor<6x9xi32>
    %i = kiln.bitwise_not %h : (tensor<6x9xi32>) -> tensor<6x9xi32>
    %two = kiln.constant dense<2> : tensor<i64>
    %p = kiln.pow %x2, %two : (tensor<6x9xi64>, tensor<i64>) -> tensor<6x9xi64>
    %q = kiln.sub %p, %x2 : (tensor<6x9xi64>, tensor<6x9xi64>) -> tensor<6x9xi64>
    %s = kiln.sign %x0 : (tensor<6x9xi32>) -> tensor<6x9xi32>
    %m = kiln.min %s, %x1 : (tensor<6x9xi32>, tensor<9xi32>) -> tensor<6x9xi32>
    kiln.yield %b, %c, %i, %q, %m : tensor<6x9xi32>, tensor<6x9xi32>, tensor<6x9xi32>, tensor<6x9xi64>, tensor<6x9xi32>)"},
      {"k3_shift",
       "pointwise",
       {"tensor<16xui8>", "tensor<16xui8>"},
       {"tensor<16xui8>", "tensor<16xui8>"},
       R"(
    %l = kiln.bit_shift %x0, %x1 {direction = "left"} : (tensor<16xui8>, tensor<16xui8>) -> tensor<16xui8>
    %r = kiln.bit_shift %x0, %x1 {direction = "right"} : (tensor<16xui8>, tensor<16xui8>) -> tensor<16xui8>
    kiln.yield %l, %r : tensor<16xui8>, tensor<16xui8>)"},
      {"k4_where",
       "pointwise",
       {"tensor<4x10xf32>", "tensor<10xf32>", "tensor<4x10xi64>"},
       {"tensor<4x10xf32>", "tensor<4x10xi1>", "tensor<4x10xi64>"},
       R"(
    %c = kiln.less %x0, %x1 : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xi1>
    %w = kiln.where %c, %x0, %x1 : (tensor<4x10xi1>, tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
    %z = kiln.constant dense<0> : tensor<i64>
    %g = kiln.greater_equal %x2, %z : (tensor<4x10xi64>, tensor<i64>) -> tensor<4x10xi1>
    %e = kiln.equal %c, %g : (tensor<4x10xi1>, tensor<4x10xi1>) -> tensor<4x10xi1>
    %n = kiln.not %e : (tensor<4x10xi1>) -> tensor<4x10xi1>
    %o = kiln.or %n, %c : (tensor<4x10xi1>, tensor<4x10xi1>) -> tensor<4x10xi1>
    %nan = kiln.is_nan %x0 : (tensor<4x10xf32>) -> tensor<4x10xi1>
    %x = kiln.xor %o, %nan : (tensor<4x10xi1>, tensor<4x10xi1>) -> tensor<4x10xi1>
    %m = kiln.constant dense<-7> : tensor<i64>
    %i = kiln.where %x, %x2, %m : (tensor<4x10xi1>, tensor<4x10xi64>, tensor<i64>) -> tensor<4x10xi64>
    kiln.yield %w, %x, %i : tensor<4x10xf32>, tensor<4x10xi1>, tensor<4x10xi64>)"},
      {"k5_bool_reduce",
       "reduction",
       {"tensor<6x40xi1>", "tensor<6x40xi8>"},
       {"tensor<6x1xi1>", "tensor<6x1xi8>"},
       R"(
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %m = kiln.reduce_max %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<6x40xi1>, tensor<1xi64>) -> tensor<6x1xi1>
    %n = kiln.reduce_min %x1, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<6x40xi8>, tensor<1xi64>) -> tensor<6x1xi8>
    kiln.yield %m, %n : tensor<6x1xi1>, tensor<6x1xi8>)"},
      // A transposed reduction input: the reduced axis is strided.
      {"k6_transposed_softmax",
       "reduction",
       {"tensor<64x8xf32>"},
       {"tensor<8x64xf32>"},
       R"(
    %t = kiln.transpose %x0 {perm = array<i64: 1, 0>} : (tensor<64x8xf32>) -> tensor<8x64xf32>
    %axes = kiln.constant dense<1> : tensor<1xi64>
    %m = kiln.reduce_max %t, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x64xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %d = kiln.sub %t, %m : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
    %e = kiln.exp %d : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %s = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x64xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %l = kiln.log %s : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %y = kiln.sub %d, %l : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32>
    kiln.yield %y : tensor<8x64xf32>)"},
      // The dtypes of issue 19: 16/32/64-bit unsigned and 16-bit integer
      // arithmetic, float8 storage and casts, sub-byte integer wrapping.
      {"k7_new_dtypes",
       "pointwise",
       {"tensor<4x32xui16>", "tensor<4x32xi16>", "tensor<4x32xui64>",
        "tensor<4x32xf32>", "tensor<4x32xf8E5M2>"},
       {"tensor<4x32xui16>", "tensor<4x32xi16>", "tensor<4x32xui32>",
        "tensor<4x32xf8E4M3FN>", "tensor<4x32xf8E4M3FNUZ>",
        "tensor<4x32xf8E5M2FNUZ>", "tensor<4x32xf32>", "tensor<4x32xi4>",
        "tensor<4x32xui2>", "tensor<4x32xui64>"},
       R"(
    %a = kiln.mul %x0, %x0 : (tensor<4x32xui16>, tensor<4x32xui16>) -> tensor<4x32xui16>
    %s = kiln.bit_shift %a, %x0 {direction = "left"} : (tensor<4x32xui16>, tensor<4x32xui16>) -> tensor<4x32xui16>
    %b = kiln.mod %x1, %x1 {fmod = 0 : i64} : (tensor<4x32xi16>, tensor<4x32xi16>) -> tensor<4x32xi16>
    %c = kiln.cast %x2 {to = ui32} : (tensor<4x32xui64>) -> tensor<4x32xui32>
    %d = kiln.cast %x3 {to = f8E4M3FN} : (tensor<4x32xf32>) -> tensor<4x32xf8E4M3FN>
    %e = kiln.cast %x3 {to = f8E4M3FNUZ} : (tensor<4x32xf32>) -> tensor<4x32xf8E4M3FNUZ>
    %f = kiln.cast %x3 {to = f8E5M2FNUZ} : (tensor<4x32xf32>) -> tensor<4x32xf8E5M2FNUZ>
    %g = kiln.cast %x4 {to = f32} : (tensor<4x32xf8E5M2>) -> tensor<4x32xf32>
    %h = kiln.cast %x3 {to = i4} : (tensor<4x32xf32>) -> tensor<4x32xi4>
    %i = kiln.cast %x3 {to = ui2} : (tensor<4x32xf32>) -> tensor<4x32xui2>
    %j = kiln.div %x2, %x2 : (tensor<4x32xui64>, tensor<4x32xui64>) -> tensor<4x32xui64>
    kiln.yield %s, %b, %c, %d, %e, %f, %g, %h, %i, %j : tensor<4x32xui16>, tensor<4x32xi16>, tensor<4x32xui32>, tensor<4x32xf8E4M3FN>, tensor<4x32xf8E4M3FNUZ>, tensor<4x32xf8E5M2FNUZ>, tensor<4x32xf32>, tensor<4x32xi4>, tensor<4x32xui2>, tensor<4x32xui64>)"},
  });
}

TEST_CASE("NVRTC errors name the kernel, its ONNX nodes and the line",
          "[codegen][cuda]") {
  std::string text = R"(
#loc1 = loc(fused<"Relu">["/blk/Relu"("m.onnx":1:0)])
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = kiln.fusion "k7_relu" ins(%a : tensor<4x8xf32>) kind("pointwise") {
  ^bb0(%x: tensor<4x8xf32>):
    %y = kiln.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32> loc(#loc1)
    kiln.yield %y : tensor<4x8xf32>
  } -> (tensor<4x8xf32>)
  return %r : tensor<4x8xf32>
}
)";
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  mlir::FailureOr<CudaKernel> k = emitCudaKernel(m.fusions()[0]);
  REQUIRE(mlir::succeeded(k));
  CHECK(contains(k->definition, "// ONNX nodes: /blk/Relu"));
  // The kernels.cu of the model reads as documentation.
  std::string file = emitCudaKernelsFile({*k}, "tiny");
  CHECK(file.rfind("//===- kernels.cu - CUDA kernels of tiny (generated by kiln)",
                   0) == 0);
  CHECK(contains(file, "Generated code: do not edit."));
  CHECK(contains(file, "// k7_relu: pointwise kernel over [4, 8]\n"
                       "// ONNX nodes: /blk/Relu\n// mapping: "));
  CHECK(contains(file, "extern \"C\" __global__ void __launch_bounds__(32)\n"
                       "k7_relu(const float *__restrict__ in0, float "
                       "*__restrict__ out0) {"));

  // Break one line of the kernel.
  CudaKernel broken = *k;
  size_t at = broken.definition.find("  const float t");
  REQUIRE(at != std::string::npos);
  broken.definition.insert(at, "  kiln_no_such_function(in0);\n");
  std::string bad = emitCudaKernelsFile({broken}, "tiny");
  size_t line = 1;
  for (size_t i = 0; i < bad.find("kiln_no_such_function"); ++i)
    line += bad[i] == '\n';
  std::string message;
  mlir::ScopedDiagnosticHandler handler(m.ctx.get(), [&](mlir::Diagnostic &d) {
    message += d.str() + "\n";
    for (mlir::Diagnostic &note : d.getNotes())
      message += note.str() + "\n";
    return mlir::success();
  });
  mlir::FailureOr<CudaBinary> binary = compileCudaSource(
      bad, "kernels.cu", {broken}, mlir::UnknownLoc::get(m.ctx.get()));
  INFO(message);
  if (!haveNvrtc()) {
    CHECK(mlir::failed(binary));
    CHECK(contains(message, "cannot compile kernels.cu for CUDA"));
    return;
  }
  CHECK(mlir::failed(binary));
  CHECK(contains(message, "in kernel 'k7_relu' (ONNX nodes: /blk/Relu)"));
  CHECK(contains(message, "kernels.cu:" + std::to_string(line) + ": "));
  CHECK(contains(message, "kiln_no_such_function"));
  CHECK(contains(message, std::to_string(line) +
                              " | kiln_no_such_function(in0);"));
  CHECK(contains(message, "NVRTC log:"));
}

// Hidden ([.dump]): prints the kernels.cu and PTX of a softmax and a layer
// norm, for reading the printer's output.
TEST_CASE("dump CUDA kernels", "[.dump]") {
  CudaBinary binary;
  std::vector<CudaKernel> ks = printAndCompile(
      {softmax("k0_softmax", "tensor<8x4096xf32>", "tensor<8x1xf32>"),
       layerNorm("k1_layer_norm", 16, 768, "f16")},
      nullptr, &binary);
  for (const CudaKernel &k : ks)
    std::printf("%s\n", k.definition.c_str());
  std::printf("%s\n", binary.ptx.c_str());
}

// Hidden ([.bench]): NVRTC's time for kernels.cu files of 1, 10 and 40
// kernels (softmax, layer norm and pointwise kernels in turn).
TEST_CASE("NVRTC compile time by kernel count", "[.bench]") {
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<CudaCase> one = {
        kind == 0 ? softmax("k_softmax", "tensor<64x4096xf32>",
                            "tensor<64x1xf32>")
        : kind == 1
            ? layerNorm("k_ln", 64, 768, "f16")
            : CudaCase{"k_gelu",
                       "pointwise",
                       {"tensor<64x3072xf32>"},
                       {"tensor<64x3072xf32>"},
                       R"(
    %g = kiln.gelu %x0 {approximate = "none"} : (tensor<64x3072xf32>) -> tensor<64x3072xf32>
    kiln.yield %g : tensor<64x3072xf32>)"}};
    double seconds = 0;
    printAndCompile(one, &seconds);
    std::printf("%s: %.3f s\n", one[0].name.c_str(), seconds);
  }
  for (int n : {1, 10, 40}) {
    std::vector<CudaCase> cases;
    for (int i = 0; i < n; ++i) {
      std::string id = std::to_string(i);
      if (i % 3 == 0)
        cases.push_back(softmax("k" + id + "_softmax", "tensor<64x4096xf32>",
                                "tensor<64x1xf32>"));
      else if (i % 3 == 1)
        cases.push_back(layerNorm("k" + id + "_ln", 64, 768, "f16"));
      else
        cases.push_back({"k" + id + "_gelu",
                         "pointwise",
                         {"tensor<64x3072xf32>"},
                         {"tensor<64x3072xf32>"},
                         R"(
    %g = kiln.gelu %x0 {approximate = "none"} : (tensor<64x3072xf32>) -> tensor<64x3072xf32>
    kiln.yield %g : tensor<64x3072xf32>)"});
    }
    double seconds = 0;
    printAndCompile(cases, &seconds);
    std::printf("%d kernels: %.3f s\n", n, seconds);
  }
}

TEST_CASE("row reductions read and write contiguous 16-byte runs per thread",
          "[codegen][cuda]") {
  // A bf16 row scaled by an f32 weight cast to bf16 (the weight's runs of 8
  // floats take two 16-byte accesses).
  std::string t = "tensor<64x2048xbf16>", r = "tensor<64x1xbf16>";
  CudaCase weighted{
      "k3_weighted",
      "reduction",
      {t, "tensor<2048xf32>"},
      {t},
      "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n"
      "    %w = kiln.cast %x1 {to = bf16} : (tensor<2048xf32>) -> "
      "tensor<2048xbf16>\n"
      "    %a = kiln.mul %x0, %w : (" + t + ", tensor<2048xbf16>) -> " + t +
          "\n    %s = kiln.reduce_sum %a, %axes " + kKeep + " : (" + t +
          ", tensor<1xi64>) -> " + r + "\n    %y = kiln.sub %a, %s : (" + t +
          ", " + r + ") -> " + t + "\n    kiln.yield %y : " + t};
  CudaBinary binary;
  std::vector<CudaKernel> ks = printAndCompile(
      {softmax("k0_sm_bf16", "tensor<16x8192xbf16>", "tensor<16x1xbf16>"),
       layerNorm("k1_ln_bf16", 64, 4096, "bf16"),
       softmax("k2_sm_warp", "tensor<100x300xf32>", "tensor<100x1xf32>"),
       weighted,
       softmax("k4_odd", "tensor<8x1031xbf16>", "tensor<8x1xbf16>"),
       softmax("k5_pairs", "tensor<8x1030xbf16>", "tensor<8x1xbf16>")},
      nullptr, &binary);
  INFO(ks[0].definition);
  // bf16 rows of 8192: 256 threads, 4 runs of 8 each (32 elements).
  CHECK(ks[0].block[0] == 256);
  CHECK(contains(ks[0].definition, "4 runs of 8 contiguous"));
  CHECK(contains(ks[0].definition,
                 "if ((unsigned long long)in0 % 16 == 0 && "
                 "(unsigned long long)out0 % 16 == 0) {"));
  CHECK(contains(ks[0].definition,
                 "const kiln_vec<kiln_bf16, 8> kiln_v0 = "
                 "*reinterpret_cast<const kiln_vec<kiln_bf16, 8> *>(in0 + "
                 "(i0*8192 + j0));"));
  CHECK(contains(ks[0].definition, "const int j0 = kiln_r * 8;"));
  CHECK(contains(ks[0].definition, "float c0[32];"));
  CHECK(contains(ks[0].definition, "kiln_s0.v[kiln_u] = kiln_bf16("));
  CHECK(contains(ks[0].definition,
                 "*reinterpret_cast<kiln_vec<kiln_bf16, 8> *>(out0 + "
                 "(i0*8192 + j0)) = kiln_s0;"));
  // One set of shared partials for both paths.
  CHECK(ks[0].sharedBytes == 0);
  CHECK(contains(ks[0].definition, "static shared 256 bytes"));
  // bf16 rows of 4096: 128 threads, 32 elements each.
  INFO(ks[1].definition);
  CHECK(ks[1].block[0] == 128);
  CHECK(contains(ks[1].definition, "(32 per thread: 4 runs of 8"));
  // A warp per row of 300 floats: 75 runs of 4, the last lanes guarded.
  INFO(ks[2].definition);
  CHECK(contains(ks[2].definition, "one warp per row of 300"));
  CHECK(contains(ks[2].definition, "3 runs of 4 contiguous"));
  CHECK(contains(ks[2].definition, "if (kiln_r < 75) {"));
  INFO(ks[3].definition);
  CHECK(contains(ks[3].definition, "kiln_vec<float, 8>"));
  CHECK(contains(ks[3].definition, "(unsigned long long)in1 % 32 == 0"));
  // Rows of odd length keep the strided mapping; even ones take pairs.
  CHECK(!contains(ks[4].definition, "kiln_vec"));
  CHECK(!contains(ks[4].definition, "runs of"));
  CHECK(contains(ks[5].definition, "runs of 2 contiguous"));
  // The runs are single 128-bit accesses (the weight's: two).
  CHECK(contains(binary.ptx, "ld.global.nc.v4.u32"));
  CHECK(contains(binary.ptx, "st.global.v4.u32"));
  CHECK(contains(binary.ptx, "ld.global.nc.v4.f32"));
  CHECK(!contains(binary.ptx, ".local"));
}
