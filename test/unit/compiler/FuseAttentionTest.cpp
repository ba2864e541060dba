//===- FuseAttentionTest.cpp - kiln-cuda-attention keeps the values -------===//
//
// This file implements the numeric test of targets/cuda/FuseAttention.cpp
// and of kiln.attention's reference kernel: written-out causal attention in
// f16 (matmul, scale, causal where, softmax decomposed in f32 between casts,
// matmul), as the tracer and kiln-decompose leave a bf16/f16 model, runs
// through the reference executor before and after kiln-cuda-attention + cse,
// and the results agree within f16's tolerance; the pass leaves one
// kiln.attention {causal = 1} and no matmul. A second test packs an
// attention over slices of one tensor into kiln.packed_attention and checks
// its reference kernel gives the same values. A third runs a bf16 training
// forward through kiln-autodiff with and without kiln-cuda-attention
// {training} and compares the gradients (kiln.packed_attention_grad's
// reference against the written-out ops' rules). The CUDA kernels
// themselves are checked emulated (CudaOpKernelTest.cpp) and on the GPU
// against `kiln run` (gpu-pack/run.sh attention, train).
//
//===----------------------------------------------------------------------===//

#include "ReferenceRun.h"
#include "compiler/ProgramBuilder.h"
#include "ir/KilnDialect.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/TensorCompare.h"
#include "passes/TrainingPasses.h"
#include "targets/cuda/CudaTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>

using namespace kiln;

namespace {

/// Causal attention over q, k, v of [1, 2, 64, 16] f16, written out.
std::string writtenOutAttention() {
  std::string mask = "[";
  for (int i = 0; i < 64; ++i) {
    mask += i ? ", [" : "[";
    for (int j = 0; j < 64; ++j)
      mask += std::string(j ? ", " : "") + (j > i ? "true" : "false");
    mask += "]";
  }
  mask += "]";
  return R"mlir(
func.func @main(%q: tensor<1x2x64x16xf16> {kiln.name = "q"},
                %k: tensor<1x2x64x16xf16> {kiln.name = "k"},
                %v: tensor<1x2x64x16xf16> {kiln.name = "v"})
    -> (tensor<1x2x64x16xf16> {kiln.name = "y"}) attributes {kiln.graph} {
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x64x16xf16>) -> tensor<1x2x16x64xf16>
  %s = kiln.matmul %q, %kt : (tensor<1x2x64x16xf16>, tensor<1x2x16x64xf16>) -> tensor<1x2x64x64xf16>
  %c = kiln.constant dense<2.500000e-01> : tensor<f16>
  %z = kiln.mul %s, %c : (tensor<1x2x64x64xf16>, tensor<f16>) -> tensor<1x2x64x64xf16>
  %mask = kiln.constant dense<)mlir" +
         mask + R"mlir(> : tensor<64x64xi1>
  %ninf = kiln.constant dense<0xFC00> : tensor<f16>
  %w = kiln.where %mask, %ninf, %z : (tensor<64x64xi1>, tensor<f16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %x = kiln.cast %w {to = f32} : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf32>
  %axes = kiln.constant dense<3> : tensor<1xi64>
  %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x2x64x64xf32>, tensor<1xi64>) -> tensor<1x2x64x1xf32>
  %d = kiln.sub %x, %m : (tensor<1x2x64x64xf32>, tensor<1x2x64x1xf32>) -> tensor<1x2x64x64xf32>
  %e = kiln.exp %d : (tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  %sum = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x2x64x64xf32>, tensor<1xi64>) -> tensor<1x2x64x1xf32>
  %p = kiln.div %e, %sum : (tensor<1x2x64x64xf32>, tensor<1x2x64x1xf32>) -> tensor<1x2x64x64xf32>
  %pc = kiln.cast %p {to = f16} : (tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf16>
  %y = kiln.matmul %pc, %v : (tensor<1x2x64x64xf16>, tensor<1x2x64x16xf16>) -> tensor<1x2x64x16xf16>
  return %y : tensor<1x2x64x16xf16>
})mlir";
}

Tensor randomF16(const Shape &shape, std::mt19937 &rng) {
  std::normal_distribution<float> dist(0, 1);
  std::vector<float> v(numElements(shape));
  for (float &e : v)
    e = dist(rng);
  return Tensor::fromVector<float>(v, shape).to(DType::F16);
}

} // namespace

TEST_CASE("kiln-cuda-attention forms kiln.attention with the same values",
          "[passes]") {
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(writtenOutAttention(), &ctx);
  REQUIRE(module);
  std::mt19937 rng(3);
  NamedTensors inputs = {{"q", randomF16({1, 2, 64, 16}, rng)},
                         {"k", randomF16({1, 2, 64, 16}, rng)},
                         {"v", randomF16({1, 2, 64, 16}, rng)}};
  NamedTensors before = test::runOnReference(*module, inputs);

  mlir::PassManager pm(&ctx);
  mlir::OpPassManager &fn = pm.nest<mlir::func::FuncOp>();
  fn.addPass(createFuseAttentionPass());
  fn.addPass(mlir::createCSEPass());
  REQUIRE(mlir::succeeded(pm.run(*module)));
  int attentions = 0, matmuls = 0;
  module->walk([&](mlir::Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    if (name == "kiln.attention") {
      ++attentions;
      CHECK(op->getAttrOfType<mlir::IntegerAttr>("causal").getInt() == 1);
      CHECK(op->getAttrOfType<mlir::FloatAttr>("scale").getValueAsDouble() ==
            0.25);
    }
    matmuls += name == "kiln.matmul";
  });
  CHECK(attentions == 1);
  CHECK(matmuls == 0);

  NamedTensors after = test::runOnReference(*module, inputs);
  REQUIRE(after.size() == 1);
  CHECK(after[0].second.shape() == before[0].second.shape());
  // The reference rounds the scores to f16 before the softmax; the op does
  // not: f16's tolerance.
  Status s = compareTensors(after[0].second.to(DType::F32),
                            before[0].second.to(DType::F32), {1e-2, 1e-2});
  INFO(s.message());
  CHECK(s.isOk());
}

TEST_CASE("kiln-cuda-attention packs q, k and v slices of one tensor with the "
          "same values",
          "[passes]") {
  // GPT-2's layout: one [B, T, 3 * H * D] projection, split, reshaped into
  // heads, transposed; the result transposed back.
  const char *ir = R"mlir(
func.func @main(%x: tensor<2x64x96xf16> {kiln.name = "x"})
    -> (tensor<2x64x32xf16> {kiln.name = "y"}) attributes {kiln.graph} {
  %s0 = kiln.constant dense<0> : tensor<1xi64>
  %s1 = kiln.constant dense<32> : tensor<1xi64>
  %s2 = kiln.constant dense<64> : tensor<1xi64>
  %s3 = kiln.constant dense<96> : tensor<1xi64>
  %ax = kiln.constant dense<2> : tensor<1xi64>
  %one = kiln.constant dense<1> : tensor<1xi64>
  %heads = kiln.constant dense<[2, 64, 2, 16]> : tensor<4xi64>
  %merged = kiln.constant dense<[2, 64, 32]> : tensor<3xi64>
  %qs = kiln.slice %x, %s0, %s1, %ax, %one : (tensor<2x64x96xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x64x32xf16>
  %ks = kiln.slice %x, %s1, %s2, %ax, %one : (tensor<2x64x96xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x64x32xf16>
  %vs = kiln.slice %x, %s2, %s3, %ax, %one : (tensor<2x64x96xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x64x32xf16>
  %qh = kiln.reshape %qs, %heads {allowzero = 0 : i64} : (tensor<2x64x32xf16>, tensor<4xi64>) -> tensor<2x64x2x16xf16>
  %kh = kiln.reshape %ks, %heads {allowzero = 0 : i64} : (tensor<2x64x32xf16>, tensor<4xi64>) -> tensor<2x64x2x16xf16>
  %vh = kiln.reshape %vs, %heads {allowzero = 0 : i64} : (tensor<2x64x32xf16>, tensor<4xi64>) -> tensor<2x64x2x16xf16>
  %qt = kiln.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x64x2x16xf16>) -> tensor<2x2x64x16xf16>
  %kt = kiln.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x64x2x16xf16>) -> tensor<2x2x64x16xf16>
  %vt = kiln.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x64x2x16xf16>) -> tensor<2x2x64x16xf16>
  %a:2 = kiln.attention %qt, %kt, %vt {causal = 1 : i64, scale = 2.500000e-01 : f32} : (tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>) -> (tensor<2x2x64x16xf16>, tensor<2x2x64xf32>)
  %b = kiln.transpose %a#0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x64x16xf16>) -> tensor<2x64x2x16xf16>
  %y = kiln.reshape %b, %merged {allowzero = 0 : i64} : (tensor<2x64x2x16xf16>, tensor<3xi64>) -> tensor<2x64x32xf16>
  return %y : tensor<2x64x32xf16>
})mlir";
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  REQUIRE(module);
  std::mt19937 rng(4);
  NamedTensors inputs = {{"x", randomF16({2, 64, 96}, rng)}};
  NamedTensors before = test::runOnReference(*module, inputs);

  mlir::PassManager pm(&ctx);
  pm.nest<mlir::func::FuncOp>().addPass(createFuseAttentionPass());
  REQUIRE(mlir::succeeded(pm.run(*module)));
  int packed = 0, copies = 0;
  module->walk([&](mlir::Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    packed += name == "kiln.packed_attention";
    copies += name == "kiln.slice" || name == "kiln.transpose" ||
              name == "kiln.attention";
  });
  CHECK(packed == 1);
  CHECK(copies == 0);

  // The same arithmetic on the same values: equal.
  NamedTensors after = test::runOnReference(*module, inputs);
  REQUIRE(after.size() == 1);
  Status s = compareTensors(after[0].second.to(DType::F32),
                            before[0].second.to(DType::F32), {0, 0});
  INFO(s.message());
  CHECK(s.isOk());
}

TEST_CASE("kiln-cuda-attention packs nn.MultiheadAttention's seq-first "
          "projection with the same values",
          "[passes]") {
  // ViT's export: [T, B, 3 * E] reshaped, transposed to [3, T, B, 1, E],
  // squeezed, sliced, split into heads through [T, B * H, D]; the result
  // transposed to [T, B, H, D] for the out-projection.
  const char *ir = R"mlir(
func.func @main(%x: tensor<10x2x96xf32> {kiln.name = "x"})
    -> (tensor<20x32xf32> {kiln.name = "y"}) attributes {kiln.graph} {
  %five = kiln.constant dense<[1, 10, 2, 3, 32]> : tensor<5xi64>
  %m2 = kiln.constant dense<-2> : tensor<1xi64>
  %c0 = kiln.constant dense<0> : tensor<1xi64>
  %c1 = kiln.constant dense<1> : tensor<1xi64>
  %c2 = kiln.constant dense<2> : tensor<1xi64>
  %c3 = kiln.constant dense<3> : tensor<1xi64>
  %rows = kiln.constant dense<[10, 4, 16]> : tensor<3xi64>
  %heads = kiln.constant dense<[2, 2, 10, 16]> : tensor<4xi64>
  %headsT = kiln.constant dense<[2, 2, 16, 10]> : tensor<4xi64>
  %merged = kiln.constant dense<[20, 32]> : tensor<2xi64>
  %r = kiln.reshape %x, %five {allowzero = 1 : i64} : (tensor<10x2x96xf32>, tensor<5xi64>) -> tensor<1x10x2x3x32xf32>
  %t = kiln.transpose %r {perm = array<i64: 3, 1, 2, 0, 4>} : (tensor<1x10x2x3x32xf32>) -> tensor<3x10x2x1x32xf32>
  %p = kiln.squeeze %t, %m2 : (tensor<3x10x2x1x32xf32>, tensor<1xi64>) -> tensor<3x10x2x32xf32>
  %qs = kiln.slice %p, %c0, %c1, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %ks = kiln.slice %p, %c1, %c2, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %vs = kiln.slice %p, %c2, %c3, %c0, %c1 : (tensor<3x10x2x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x10x2x32xf32>
  %qr = kiln.reshape %qs, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %qt = kiln.transpose %qr {perm = array<i64: 1, 0, 2>} : (tensor<10x4x16xf32>) -> tensor<4x10x16xf32>
  %q = kiln.reshape %qt, %heads {allowzero = 1 : i64} : (tensor<4x10x16xf32>, tensor<4xi64>) -> tensor<2x2x10x16xf32>
  %kr = kiln.reshape %ks, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %kt0 = kiln.transpose %kr {perm = array<i64: 1, 2, 0>} : (tensor<10x4x16xf32>) -> tensor<4x16x10xf32>
  %kt1 = kiln.reshape %kt0, %headsT {allowzero = 0 : i64} : (tensor<4x16x10xf32>, tensor<4xi64>) -> tensor<2x2x16x10xf32>
  %k = kiln.transpose %kt1 {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x16x10xf32>) -> tensor<2x2x10x16xf32>
  %vr = kiln.reshape %vs, %rows {allowzero = 1 : i64} : (tensor<1x10x2x32xf32>, tensor<3xi64>) -> tensor<10x4x16xf32>
  %vt = kiln.transpose %vr {perm = array<i64: 1, 0, 2>} : (tensor<10x4x16xf32>) -> tensor<4x10x16xf32>
  %v = kiln.reshape %vt, %heads {allowzero = 1 : i64} : (tensor<4x10x16xf32>, tensor<4xi64>) -> tensor<2x2x10x16xf32>
  %a:2 = kiln.attention %q, %k, %v {causal = 0 : i64, scale = 2.500000e-01 : f32} : (tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>, tensor<2x2x10x16xf32>) -> (tensor<2x2x10x16xf32>, tensor<2x2x10xf32>)
  %b = kiln.transpose %a#0 {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x2x10x16xf32>) -> tensor<10x2x2x16xf32>
  %y = kiln.reshape %b, %merged {allowzero = 1 : i64} : (tensor<10x2x2x16xf32>, tensor<2xi64>) -> tensor<20x32xf32>
  return %y : tensor<20x32xf32>
})mlir";
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  REQUIRE(module);
  std::mt19937 rng(5);
  NamedTensors inputs = {{"x", randomF16({10, 2, 96}, rng).to(DType::F32)}};
  NamedTensors before = test::runOnReference(*module, inputs);

  mlir::PassManager pm(&ctx);
  pm.nest<mlir::func::FuncOp>().addPass(createFuseAttentionPass());
  REQUIRE(mlir::succeeded(pm.run(*module)));
  int packed = 0, copies = 0;
  module->walk([&](mlir::Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    if (name == "kiln.packed_attention")
      packed += op->getAttrOfType<mlir::StringAttr>("layout") &&
                op->getAttrOfType<mlir::StringAttr>("layout").getValue() ==
                    "seq_first";
    copies += name == "kiln.slice" || name == "kiln.transpose" ||
              name == "kiln.attention";
  });
  CHECK(packed == 1);
  CHECK(copies == 0);

  NamedTensors after = test::runOnReference(*module, inputs);
  REQUIRE(after.size() == 1);
  Status s = compareTensors(after[0].second, before[0].second, {0, 0});
  INFO(s.message());
  CHECK(s.isOk());
}

TEST_CASE("flash attention's gradients match the written-out ops'",
          "[passes][gradients]") {
  // A bf16 training forward as the tracer leaves GPT-2's attention under
  // --precision bf16 (q, k, v results of a split, kiln.softmax in f32
  // between casts, a causal where): kiln-autodiff with and without
  // kiln-cuda-attention{training} before it. The joint graphs run on the
  // reference executor: the loss and qkv's gradient (through
  // kiln.packed_attention_grad, or through the written-out ops' rules)
  // agree within bf16 rounding.
  const char *ir = R"mlir(
func.func @main(%qkv: tensor<2x16x96xbf16> {kiln.name = "qkv", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
  %sizes = kiln.constant dense<32> : tensor<3xi64>
  %parts:3 = kiln.split %qkv, %sizes {axis = 2 : i64} : (tensor<2x16x96xbf16>, tensor<3xi64>) -> (tensor<2x16x32xbf16>, tensor<2x16x32xbf16>, tensor<2x16x32xbf16>)
  %heads = kiln.constant dense<[2, 16, 2, 16]> : tensor<4xi64>
  %qh = kiln.reshape %parts#0, %heads {allowzero = 1 : i64} : (tensor<2x16x32xbf16>, tensor<4xi64>) -> tensor<2x16x2x16xbf16>
  %kh = kiln.reshape %parts#1, %heads {allowzero = 1 : i64} : (tensor<2x16x32xbf16>, tensor<4xi64>) -> tensor<2x16x2x16xbf16>
  %vh = kiln.reshape %parts#2, %heads {allowzero = 1 : i64} : (tensor<2x16x32xbf16>, tensor<4xi64>) -> tensor<2x16x2x16xbf16>
  %q = kiln.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xbf16>) -> tensor<2x2x16x16xbf16>
  %k = kiln.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xbf16>) -> tensor<2x2x16x16xbf16>
  %v = kiln.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xbf16>) -> tensor<2x2x16x16xbf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %s = kiln.matmul %q, %kt : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %c = kiln.constant dense<2.500000e-01> : tensor<bf16>
  %z = kiln.mul %s, %c : (tensor<2x2x16x16xbf16>, tensor<bf16>) -> tensor<2x2x16x16xbf16>
  %mask = kiln.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<16x16xi1>
  %ninf = kiln.constant dense<0xFF80> : tensor<bf16>
  %y = kiln.where %mask, %ninf, %z : (tensor<16x16xi1>, tensor<bf16>, tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %x = kiln.cast %y {to = f32} : (tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xf32>
  %p = kiln.softmax %x {axis = 3 : i64} : (tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xf32>
  %pc = kiln.cast %p {to = bf16} : (tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xbf16>
  %o = kiln.matmul %pc, %v : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %ot = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x16x16xbf16>) -> tensor<2x16x2x16xbf16>
  %merged = kiln.constant dense<[2, 16, 32]> : tensor<3xi64>
  %r = kiln.reshape %ot, %merged {allowzero = 1 : i64} : (tensor<2x16x2x16xbf16>, tensor<3xi64>) -> tensor<2x16x32xbf16>
  %rf = kiln.cast %r {to = f32} : (tensor<2x16x32xbf16>) -> tensor<2x16x32xf32>
  %sq = kiln.mul %rf, %rf : (tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %axes = kiln.constant dense<[]> : tensor<0xi64>
  %loss = kiln.reduce_sum %sq, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<2x16x32xf32>, tensor<0xi64>) -> tensor<f32>
  return %loss : tensor<f32>
})mlir";
  std::string source = ir;
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  std::mt19937 rng(7);
  Tensor qkv = randomF16({2, 16, 96}, rng).to(DType::BF16);
  auto jointGradients = [&](bool flash, int &attentionGrads) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(source, &ctx);
    REQUIRE(module);
    mlir::PassManager pm(&ctx);
    pm.enableVerifier(true);
    if (flash)
      pm.nest<mlir::func::FuncOp>().addPass(
          createFuseAttentionPass(/*trainingForward=*/true));
    pm.nest<mlir::func::FuncOp>().addPass(mlir::createCSEPass());
    pm.addPass(createAutodiffPass());
    REQUIRE(mlir::succeeded(pm.run(*module)));
    attentionGrads = 0;
    module->walk([&](mlir::Operation *op) {
      attentionGrads +=
          op->getName().getStringRef() == "kiln.packed_attention_grad";
    });
    mlir::func::FuncOp joint;
    for (auto f : module->getOps<mlir::func::FuncOp>())
      joint = f;
    Expected<Program> program = buildProgram(joint);
    INFO((program ? std::string() : program.status().message()));
    REQUIRE(program.isOk());
    Expected<NamedTensors> out = runProgram(*program, {{"qkv", qkv}});
    INFO((out ? std::string() : out.status().message()));
    REQUIRE(out.isOk());
    return *out;
  };
  int flashGrads = 0, writtenGrads = 0;
  NamedTensors flash = jointGradients(true, flashGrads);
  NamedTensors written = jointGradients(false, writtenGrads);
  CHECK(flashGrads == 1);
  CHECK(writtenGrads == 0);
  REQUIRE(flash.size() == 2);
  REQUIRE(written.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    Status s = compareTensors(flash[i].second.to(DType::F32),
                              written[i].second.to(DType::F32), {3e-2, 3e-2});
    INFO(flash[i].first << ": " << s.message());
    CHECK(s.isOk());
  }
}
