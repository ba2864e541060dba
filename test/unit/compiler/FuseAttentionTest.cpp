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
// its reference kernel gives the same values. The CUDA kernel itself is
// checked on the GPU against `kiln run` (gpu-pack/run.sh attention).
//
//===----------------------------------------------------------------------===//

#include "ReferenceRun.h"
#include "compiler/ProgramBuilder.h"
#include "ir/KilnDialect.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/TensorCompare.h"
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
  %a = kiln.attention %qt, %kt, %vt {causal = 1 : i64, scale = 2.500000e-01 : f32} : (tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>) -> tensor<2x2x64x16xf16>
  %b = kiln.transpose %a {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x64x16xf16>) -> tensor<2x64x2x16xf16>
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
