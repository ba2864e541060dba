//===- AutocastTest.cpp - kiln-autocast keeps values within bf16/f16 ------===//
//
// This file implements the numeric test of passes/Autocast.cpp: a
// transformer MLP block (matmul, a constant bias, erf GELU, matmul,
// residual, layer norm, softmax) run through the reference executor before and after
// kiln-autocast agrees within the low precision's tolerance (bf16: a few
// ulps of 2^-8 relative), and the pass leaves the matmuls in bf16 / f16 and
// the norm and the softmax in f32.
//
//===----------------------------------------------------------------------===//

#include "ReferenceRun.h"
#include "passes/Passes.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

const char *const kMlpBlock = R"mlir(
func.func @main(%x: tensor<8x16xf32> {kiln.name = "x"},
                %w1: tensor<16x32xf32> {kiln.name = "w1"},
                %w2: tensor<32x16xf32> {kiln.name = "w2"})
    -> (tensor<8x16xf32> {kiln.name = "y"}) attributes {kiln.graph} {
  %b1 = kiln.constant dense<1.250000e-01> : tensor<32xf32>
  %g = kiln.constant dense<1.500000e+00> : tensor<16xf32>
  %beta = kiln.constant dense<-2.500000e-01> : tensor<16xf32>
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.000000e+00> : tensor<f32>
  %half = kiln.constant dense<5.000000e-01> : tensor<f32>
  %m = kiln.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a = kiln.add %m, %b1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %d = kiln.div %a, %sqrt2 : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %e = kiln.erf %d : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %e1 = kiln.add %e, %one : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %h = kiln.mul %a, %e1 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %gelu = kiln.mul %h, %half : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  %m2 = kiln.matmul %gelu, %w2 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %r = kiln.add %m2, %x : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %n, %mean, %inv = kiln.layer_norm %r, %g, %beta {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  %y = kiln.softmax %n {axis = 1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
})mlir";

/// The element type of the first operand of the first op named `name`.
mlir::Type operandElementType(mlir::ModuleOp module, llvm::StringRef name) {
  mlir::Type type;
  module->walk([&](mlir::Operation *op) {
    if (!type && op->getName().getStringRef() == name)
      type = mlir::getElementTypeOrSelf(op->getOperand(0).getType());
  });
  return type;
}

void checkBlock(const std::string &precision, Tolerance tolerance) {
  mlir::MLIRContext ctx;
  AutocastOptions options;
  options.precision = precision;
  mlir::OwningOpRef<mlir::ModuleOp> module = test::checkPassKeepsValues(
      ctx, kMlpBlock,
      {{"x", {8, 16}}, {"w1", {16, 32}}, {"w2", {32, 16}}},
      createAutocastPass(options), 5, tolerance);
  mlir::Type low = precision == "bf16" ? mlir::Type(mlir::BFloat16Type::get(&ctx))
                                       : mlir::Type(mlir::Float16Type::get(&ctx));
  CHECK(operandElementType(*module, "kiln.matmul") == low);
  CHECK(operandElementType(*module, "kiln.erf") == low);
  CHECK(operandElementType(*module, "kiln.layer_norm").isF32());
  CHECK(operandElementType(*module, "kiln.softmax").isF32());
}

} // namespace

TEST_CASE("kiln-autocast keeps an MLP block's values within bf16's "
          "tolerance",
          "[passes]") {
  checkBlock("bf16", {2e-2, 2e-3});
}

TEST_CASE("kiln-autocast keeps an MLP block's values within f16's tolerance",
          "[passes]") {
  checkBlock("f16", {4e-3, 4e-4});
}
