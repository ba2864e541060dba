//===- BuildScopeTest.cpp - Tests of passes::BuildScope -------------------===//
//
// This file implements the unit test of passes::BuildScope, what a rewrite
// pattern uses to undo a half-built replacement: the ops built before the
// anchor since the scope began are erased, the ops before the scope and the
// anchor itself stay, and the match failure is returned.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

using namespace mlir;

TEST_CASE("a failed build erases what it built and nothing else",
          "[compiler][passes]") {
  MLIRContext ctx;
  ctx.loadDialect<kiln::KilnDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %c = kiln.constant dense<1.0> : tensor<4xf32>\n"
      "  %y = kiln.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> "
      "tensor<4xf32>\n"
      "  return %y : tensor<4xf32>\n}\n",
      &ctx);
  REQUIRE(module);
  auto f = *module->getOps<func::FuncOp>().begin();
  Operation *add = &*std::next(f.getBody().front().begin());
  REQUIRE(isa<kiln::AddOp>(add));
  auto count = [&] { return f.getBody().front().getOperations().size(); };
  size_t before = count();

  IRRewriter rewriter(&ctx);
  rewriter.setInsertionPoint(add);
  kiln::passes::BuildScope scope(rewriter, add);
  Value shape = kiln::passes::buildI64Vector(rewriter, add->getLoc(), {2, 2});
  Value view = kiln::passes::buildKilnValue(
      rewriter, add->getLoc(), "kiln.reshape", {add->getOperand(0), shape},
      {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0))});
  REQUIRE(view);
  REQUIRE(count() == before + 2);
  // A build that fails creates nothing (a reshape to the wrong size).
  Value bad = kiln::passes::buildKilnValue(
      rewriter, add->getLoc(), "kiln.reshape",
      {view, kiln::passes::buildI64Vector(rewriter, add->getLoc(), {3})},
      {rewriter.getNamedAttr("allowzero", rewriter.getI64IntegerAttr(0))});
  CHECK_FALSE(bad);
  CHECK(failed(scope.fail(add, "the test's build failed")));
  CHECK(count() == before);
  CHECK(isa<kiln::ConstantOp>(&f.getBody().front().front()));
  CHECK(&*std::next(f.getBody().front().begin()) == add);
}
