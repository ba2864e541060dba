//===- CudaEmulationTest.cpp - Generated CUDA kernels run on the host -----===//
//
// This file implements the numerical tests of the CUDA printer on a machine
// without a GPU: the generated kernels.cu is compiled as host C++ after a
// small emulation header (CudaEmulation.h), each kernel runs on random
// inputs with a grid smaller than the printer's (the kernels grid-stride)
// and its outputs are compared with the region interpreted op by op by the
// runtime's reference kernels. This checks the mappings' index arithmetic,
// the group reductions and the row caches; it does not check the device
// compiler (CudaKernelTest.cpp compiles the same kernels with NVRTC) nor the
// device's f16/bf16 conversion instructions (replaced by the host's code).
//
//===----------------------------------------------------------------------===//

#include "CudaEmulation.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::test;

namespace {

/// Prints the cases as CUDA, compiles them for the emulation, runs each
/// kernel with a grid of at most `maxGrid` blocks and compares its outputs
/// with the oracle's.
void checkCases(const std::vector<CudaCase> &cases, unsigned maxGrid = 3) {
  std::string text;
  for (const CudaCase &c : cases)
    text += fusionText(c.name, c.kind, c.inTypes, c.outTypes, c.body);
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  std::vector<FusionOp> ops = m.fusions();
  std::vector<CudaKernel> kernels;
  std::string thunks;
  for (FusionOp op : ops) {
    mlir::FailureOr<CudaKernel> k = emitCudaKernel(op);
    mlir::FailureOr<codegen::Kernel> ir =
        codegen::lowerFusionToKernelIR(op.getOperation());
    REQUIRE(mlir::succeeded(k));
    REQUIRE(mlir::succeeded(ir));
    kernels.push_back(*k);
    unsigned grid = std::min(k->grid[0], maxGrid);
    thunks += "extern \"C\" void kiln_emu_" + k->name +
              "(void **b) {\n  kiln_emu_launch(" + std::to_string(grid) +
              ", " + std::to_string(k->block[0]) + ", [=] { " + k->name + "(";
    for (size_t i = 0; i < ir->buffers.size(); ++i) {
      const codegen::Buffer &buf = ir->buffers[i];
      thunks += std::string(i ? ", " : "") + "(" +
                (buf.isOutput ? "" : "const ") +
                codegen::storageCType(buf.type) + " *)b[" + std::to_string(i) +
                "]";
    }
    thunks += "); });\n}\n";
  }
  std::string dir;
  void *handle = buildEmulation(kernels, thunks, dir);
  std::mt19937 rng(7);
  for (size_t i = 0; i < ops.size(); ++i) {
    INFO("kernel " << kernels[i].name << "\n" << kernels[i].definition);
    auto fn = reinterpret_cast<void (*)(void **)>(
        dlsym(handle, ("kiln_emu_" + kernels[i].name).c_str()));
    REQUIRE(fn);
    std::vector<Tensor> inputs;
    for (mlir::Type t : ops[i].getOperandTypes()) {
      auto [dtype, shape] = typeOf(t);
      inputs.push_back(
          randomTensor(dtype, shape, rng, cases[i].lo, cases[i].hi));
    }
    std::vector<Tensor> expected = interpret(ops[i], inputs);
    // Buffers 64-byte aligned (the vector path), then shifted by one element
    // (the scalar fallback of the alignment check).
    for (bool shifted : {false, true}) {
      INFO((shifted ? "misaligned buffers" : "aligned buffers"));
      std::vector<std::vector<char>> storage;
      std::vector<void *> buffers;
      auto place = [&](const Tensor &t) {
        size_t bytes = t.numel() * dtypeSize(t.dtype());
        storage.emplace_back(bytes + 128);
        uintptr_t base = reinterpret_cast<uintptr_t>(storage.back().data());
        base = (base + 63) / 64 * 64 + (shifted ? dtypeSize(t.dtype()) : 0);
        buffers.push_back(reinterpret_cast<void *>(base));
        return bytes;
      };
      for (const Tensor &t : inputs) {
        Tensor c = t.contiguous();
        size_t bytes = place(c);
        std::memcpy(buffers.back(), c.rawData(), bytes);
      }
      std::vector<Tensor> outputs;
      for (mlir::Type type : ops[i].getResultTypes()) {
        auto [dtype, shape] = typeOf(type);
        outputs.push_back(Tensor::empty(dtype, shape));
        place(outputs.back());
      }
      fn(buffers.data());
      REQUIRE(expected.size() == outputs.size());
      for (size_t r = 0; r < outputs.size(); ++r) {
        Tensor &o = outputs[r];
        std::memcpy(o.rawData(), buffers[inputs.size() + r],
                    o.numel() * dtypeSize(o.dtype()));
        Status st = compareTensors(o, expected[r],
                                   defaultTolerance(expected[r].dtype()));
        INFO("result " << r << ": " << st.message());
        CHECK(st);
      }
    }
  }
  if (!std::getenv("KILN_KEEP_KERNELS"))
    std::system(("rm -rf " + dir).c_str());
}

} // namespace

TEST_CASE("emulated CUDA kernels match the reference: pointwise",
          "[codegen][cuda][emulation]") {
  checkCases({
      {"k0_f32_vec",
       "pointwise",
       {"tensor<16x64xf32>", "tensor<64xf32>"},
       {"tensor<16x64xf32>"},
       R"(
    %m = kiln.mul %x0, %x1 : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
    %g = kiln.gelu %m {approximate = "none"} : (tensor<16x64xf32>) -> tensor<16x64xf32>
    kiln.yield %g : tensor<16x64xf32>)"},
      {"k1_f16_vec",
       "pointwise",
       {"tensor<8x32xf16>", "tensor<8x1xf16>"},
       {"tensor<8x32xf16>", "tensor<8x32xf32>"},
       R"(
    %a = kiln.sub %x0, %x1 : (tensor<8x32xf16>, tensor<8x1xf16>) -> tensor<8x32xf16>
    %e = kiln.exp %a : (tensor<8x32xf16>) -> tensor<8x32xf16>
    %c = kiln.cast %e {to = f32} : (tensor<8x32xf16>) -> tensor<8x32xf32>
    kiln.yield %e, %c : tensor<8x32xf16>, tensor<8x32xf32>)",
       -2.0f,
       2.0f},
      {"k2_odd",
       "pointwise",
       {"tensor<10x6xf32>", "tensor<f32>"},
       {"tensor<10x6xf32>"},
       R"(
    %a = kiln.add %x0, %x1 : (tensor<10x6xf32>, tensor<f32>) -> tensor<10x6xf32>
    %t = kiln.tanh %a : (tensor<10x6xf32>) -> tensor<10x6xf32>
    kiln.yield %t : tensor<10x6xf32>)"},
      {"k3_transposed",
       "pointwise",
       {"tensor<64x32xf32>", "tensor<32x64xf32>"},
       {"tensor<32x64xf32>"},
       R"(
    %t = kiln.transpose %x0 {perm = array<i64: 1, 0>} : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %a = kiln.add %t, %x1 : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    kiln.yield %a : tensor<32x64xf32>)"},
      // GPT-2's K^T ([B, T, heads, d] -> [B, heads, d, T]) with odd
      // extents: 32 x 32 shared-memory tiles, partial at the edges.
      {"k6_tiled_transpose",
       "pointwise",
       {"tensor<2x40x3x20xf32>"},
       {"tensor<2x3x20x40xf32>"},
       R"(
    %t = kiln.transpose %x0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x40x3x20xf32>) -> tensor<2x3x20x40xf32>
    %e = kiln.exp %t : (tensor<2x3x20x40xf32>) -> tensor<2x3x20x40xf32>
    kiln.yield %e : tensor<2x3x20x40xf32>)"},
      {"k4_int",
       "pointwise",
       {"tensor<6x9xi32>", "tensor<9xi32>", "tensor<6x9xi64>"},
       {"tensor<6x9xi32>", "tensor<6x9xi64>"},
       R"(
    %a = kiln.div %x0, %x1 : (tensor<6x9xi32>, tensor<9xi32>) -> tensor<6x9xi32>
    %b = kiln.mod %x0, %x1 {fmod = 0 : i64} : (tensor<6x9xi32>, tensor<9xi32>) -> tensor<6x9xi32>
    %d = kiln.mul %a, %b : (tensor<6x9xi32>, tensor<6x9xi32>) -> tensor<6x9xi32>
    %two = kiln.constant dense<2> : tensor<i64>
    %p = kiln.pow %x2, %two : (tensor<6x9xi64>, tensor<i64>) -> tensor<6x9xi64>
    kiln.yield %d, %p : tensor<6x9xi32>, tensor<6x9xi64>)",
       -20.0f,
       20.0f},
      // erf from bf16 to bf16 reads the table of kernels.cu (the GELU of
      // bf16 graphs); the scaled input covers both tails.
      {"k5_bf16_erf",
       "pointwise",
       {"tensor<16x64xbf16>"},
       {"tensor<16x64xbf16>"},
       R"(
    %two = kiln.constant dense<2.0> : tensor<bf16>
    %s = kiln.mul %x0, %two : (tensor<16x64xbf16>, tensor<bf16>) -> tensor<16x64xbf16>
    %e = kiln.erf %s : (tensor<16x64xbf16>) -> tensor<16x64xbf16>
    kiln.yield %e : tensor<16x64xbf16>)",
       -2.5f,
       2.5f},
  });
}

TEST_CASE("emulated CUDA kernels match the reference: 16-, 32- and 64-bit "
          "unsigned, 16-bit, float8 and sub-byte integer types",
          "[codegen][cuda][emulation][dtype]") {
  checkCases({
      {"k0_u16_i16",
       "pointwise",
       {"tensor<8x32xui16>", "tensor<32xui16>", "tensor<8x32xi16>"},
       {"tensor<8x32xui16>", "tensor<8x32xui16>", "tensor<8x32xi16>"},
       R"(
    %k = kiln.constant dense<9000> : tensor<ui16>
    %big = kiln.add %x0, %k : (tensor<8x32xui16>, tensor<ui16>) -> tensor<8x32xui16>
    %m = kiln.mul %big, %big : (tensor<8x32xui16>, tensor<8x32xui16>) -> tensor<8x32xui16>
    %s = kiln.bit_shift %big, %x1 {direction = "left"} : (tensor<8x32xui16>, tensor<32xui16>) -> tensor<8x32xui16>
    %c = kiln.mul %x2, %x2 : (tensor<8x32xi16>, tensor<8x32xi16>) -> tensor<8x32xi16>
    kiln.yield %m, %s, %c : tensor<8x32xui16>, tensor<8x32xui16>, tensor<8x32xi16>)",
       0.0f,
       15.0f},
      {"k1_u32_u64",
       "pointwise",
       {"tensor<8x32xui32>", "tensor<8x32xui64>"},
       {"tensor<8x32xui32>", "tensor<8x32xui64>"},
       R"(
    %k = kiln.constant dense<4000000000> : tensor<ui32>
    %a = kiln.add %x0, %k : (tensor<8x32xui32>, tensor<ui32>) -> tensor<8x32xui32>
    %d = kiln.div %a, %x0 : (tensor<8x32xui32>, tensor<8x32xui32>) -> tensor<8x32xui32>
    %k64 = kiln.constant dense<18446744073709551000> : tensor<ui64>
    %b = kiln.add %x1, %k64 : (tensor<8x32xui64>, tensor<ui64>) -> tensor<8x32xui64>
    %mx = kiln.max %b, %x1 : (tensor<8x32xui64>, tensor<8x32xui64>) -> tensor<8x32xui64>
    kiln.yield %d, %mx : tensor<8x32xui32>, tensor<8x32xui64>)",
       0.0f,
       9.0f},
      {"k2_float8_int4",
       "pointwise",
       {"tensor<8x32xf32>", "tensor<8x32xf8E5M2>"},
       {"tensor<8x32xf8E4M3FN>", "tensor<8x32xf8E4M3FNUZ>",
        "tensor<8x32xf8E5M2FNUZ>", "tensor<8x32xf32>", "tensor<8x32xi4>",
        "tensor<8x32xui2>"},
       R"(
    %s = kiln.constant dense<300.0> : tensor<f32>
    %x = kiln.mul %x0, %s : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
    %a = kiln.cast %x {to = f8E4M3FN} : (tensor<8x32xf32>) -> tensor<8x32xf8E4M3FN>
    %b = kiln.cast %x {to = f8E4M3FNUZ} : (tensor<8x32xf32>) -> tensor<8x32xf8E4M3FNUZ>
    %c = kiln.cast %x0 {to = f8E5M2FNUZ} : (tensor<8x32xf32>) -> tensor<8x32xf8E5M2FNUZ>
    %e = kiln.cast %x1 {to = f32} : (tensor<8x32xf8E5M2>) -> tensor<8x32xf32>
    %i = kiln.cast %x {to = i4} : (tensor<8x32xf32>) -> tensor<8x32xi4>
    %u = kiln.cast %x {to = ui2} : (tensor<8x32xf32>) -> tensor<8x32xui2>
    kiln.yield %a, %b, %c, %e, %i, %u : tensor<8x32xf8E4M3FN>, tensor<8x32xf8E4M3FNUZ>, tensor<8x32xf8E5M2FNUZ>, tensor<8x32xf32>, tensor<8x32xi4>, tensor<8x32xui2>)"},
  });
}

TEST_CASE("emulated CUDA kernels match the reference: row reductions",
          "[codegen][cuda][emulation]") {
  checkCases({
      softmax("k0_block", "tensor<5x2048xf32>", "tensor<5x1xf32>"),
      softmax("k1_warp", "tensor<20x300xf32>", "tensor<20x1xf32>"),
      softmax("k2_thread", "tensor<40x8xf16>", "tensor<40x1xf16>"),
      layerNorm("k3_ln_warp", 9, 96, "f32"),
      layerNorm("k4_ln_block", 3, 1536, "bf16"),
      {"k5_total",
       "reduction",
       {"tensor<100x37xf32>"},
       {"tensor<f32>", "tensor<f32>"},
       R"(
    %axes = kiln.constant dense<> : tensor<0xi64>
    %s = kiln.reduce_sum %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<100x37xf32>, tensor<0xi64>) -> tensor<f32>
    %m = kiln.reduce_min %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<100x37xf32>, tensor<0xi64>) -> tensor<f32>
    kiln.yield %s, %m : tensor<f32>, tensor<f32>)"},
      {"k6_int",
       "reduction",
       {"tensor<16x50xi32>", "tensor<16x50xi64>"},
       {"tensor<16x1xi32>", "tensor<16x1xi64>", "tensor<16x1xi32>"},
       R"(
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %s = kiln.reduce_sum %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<16x50xi32>, tensor<1xi64>) -> tensor<16x1xi32>
    %m = kiln.reduce_max %x1, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<16x50xi64>, tensor<1xi64>) -> tensor<16x1xi64>
    %a = kiln.reduce_mean %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<16x50xi32>, tensor<1xi64>) -> tensor<16x1xi32>
    kiln.yield %s, %m, %a : tensor<16x1xi32>, tensor<16x1xi64>, tensor<16x1xi32>)",
       -50.0f,
       50.0f},
      {"k7_columns",
       "reduction",
       {"tensor<20x1024xf32>"},
       {"tensor<1x1024xf32>", "tensor<1x1024xf32>"},
       R"(
    %axes = kiln.constant dense<0> : tensor<1xi64>
    %s = kiln.reduce_mean %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<20x1024xf32>, tensor<1xi64>) -> tensor<1x1024xf32>
    %p = kiln.reduce_prod %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<20x1024xf32>, tensor<1xi64>) -> tensor<1x1024xf32>
    kiln.yield %s, %p : tensor<1x1024xf32>, tensor<1x1024xf32>)",
       0.5f,
       1.5f},
      {"k8_middle",
       "reduction",
       {"tensor<3x70x5xf64>"},
       {"tensor<3x70x5xf64>"},
       R"(
    %axes = kiln.constant dense<[1]> : tensor<1xi64>
    %m = kiln.reduce_max %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<3x70x5xf64>, tensor<1xi64>) -> tensor<3x1x5xf64>
    %d = kiln.sub %x0, %m : (tensor<3x70x5xf64>, tensor<3x1x5xf64>) -> tensor<3x70x5xf64>
    kiln.yield %d : tensor<3x70x5xf64>)"},
  });
}

TEST_CASE("emulated CUDA kernels match the reference: row reductions in "
          "contiguous runs",
          "[codegen][cuda][emulation]") {
  std::string t = "tensor<6x96xbf16>", r = "tensor<6x1xbf16>";
  CudaCase weighted{
      "k6_weighted",
      "reduction",
      {t, "tensor<96xf32>"},
      {t, r},
      "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n"
      "    %w = kiln.cast %x1 {to = bf16} : (tensor<96xf32>) -> "
      "tensor<96xbf16>\n"
      "    %a = kiln.mul %x0, %w : (" + t + ", tensor<96xbf16>) -> " + t +
          "\n    %m = kiln.reduce_max %a, %axes " + kKeep + " : (" + t +
          ", tensor<1xi64>) -> " + r + "\n    %y = kiln.sub %a, %m : (" + t +
          ", " + r + ") -> " + t + "\n    kiln.yield %y, %m : " + t + ", " +
          r};
  // bf16 softmax outputs of long rows are below bf16's absolute tolerance:
  // a log-softmax checks the same loops with O(1) outputs.
  auto logSoftmax = [](const std::string &name, const std::string &lt,
                       const std::string &lr) {
    return CudaCase{
        name,
        "reduction",
        {lt},
        {lt},
        "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n"
        "    %m = kiln.reduce_max %x0, %axes " + std::string(kKeep) + " : (" +
            lt + ", tensor<1xi64>) -> " + lr +
            "\n    %d = kiln.sub %x0, %m : (" + lt + ", " + lr + ") -> " + lt +
            "\n    %e = kiln.exp %d : (" + lt + ") -> " + lt +
            "\n    %s = kiln.reduce_sum %e, %axes " + kKeep + " : (" + lt +
            ", tensor<1xi64>) -> " + lr + "\n    %l = kiln.log %s : (" + lr +
            ") -> " + lr + "\n    %y = kiln.sub %d, %l : (" + lt + ", " + lr +
            ") -> " + lt + "\n    kiln.yield %y : " + lt};
  };
  // Blocks: 2048 bf16 (128 threads x 2 runs of 8, exact), 1100 f32 (275
  // runs of 4 over 256 threads), 1544 bf16 (193 runs of 8 over 128); warps:
  // 100 f32 (25 runs), 200 bf16, 44 bf16 (runs of 4), an f32 weight with
  // bf16 rows; 1030 bf16 rows take pairs.
  checkCases({
      softmax("k0_bf16_block", "tensor<3x2048xbf16>", "tensor<3x1xbf16>"),
      softmax("k1_f32_block", "tensor<3x1100xf32>", "tensor<3x1xf32>"),
      layerNorm("k2_ln_bf16_block", 3, 1544, "bf16"),
      layerNorm("k3_ln_f32_warp", 9, 100, "f32"),
      softmax("k4_bf16_warp", "tensor<7x200xbf16>", "tensor<7x1xbf16>"),
      layerNorm("k5_ln_bf16_quads", 5, 44, "bf16"),
      weighted,
      softmax("k7_bf16_pairs", "tensor<2x1030xbf16>", "tensor<2x1xbf16>"),
      logSoftmax("k8_bf16_log_softmax", "tensor<3x2048xbf16>",
                 "tensor<3x1xbf16>"),
      logSoftmax("k9_bf16_log_pairs", "tensor<2x1030xbf16>",
                 "tensor<2x1xbf16>"),
  });
}

TEST_CASE("emulated CUDA kernels match the reference: degenerate shapes",
          "[codegen][cuda][emulation]") {
  checkCases(degenerateShapeCases<CudaCase>());
}
