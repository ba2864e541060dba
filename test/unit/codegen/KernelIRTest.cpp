//===- KernelIRTest.cpp - Tests of the kernel IR and its text -------------===//
//
// This file implements the unit tests of the kernel IR: index expressions
// simplify reshapes of contiguous data back to affine indices and keep
// div/mod where a view needs them, the expression printer follows the
// runtime's semantics in its literals and helpers (scalar ops are named by
// op type), and the text of a lowered softmax and its printed C++ have the
// expected shape (key substrings rather than full golden files).
//
//===----------------------------------------------------------------------===//

#include "CodegenTestUtils.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::codegen;
using namespace kiln::test;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// The kernel IR text of the first fusion of the MLIR module `text`.
std::string loweredKernelText(const std::string &text) {
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  mlir::FailureOr<Kernel> kernel =
      lowerFusionToKernelIR(m.fusions()[0].getOperation());
  REQUIRE(mlir::succeeded(kernel));
  return kernel->str();
}

} // namespace

TEST_CASE("index expressions simplify with loop extents", "[codegen][ir]") {
  std::vector<int64_t> extents = {8, 16, 6};
  IndexBuilder b(extents);
  std::vector<std::string> names = {"i0", "i1", "i2"};
  IndexExpr i0 = IndexExpr::var(0), i1 = IndexExpr::var(1);
  IndexExpr i2 = IndexExpr::var(2);

  // [8, 16] -> [128] -> [8, 16] is the identity.
  IndexExpr lin = b.linearize({i0, i1}, {8, 16});
  CHECK(lin.str(names) == "i0*16 + i1");
  std::vector<IndexExpr> back = b.delinearize(lin, {8, 16});
  CHECK(back[0].str(names) == "i0");
  CHECK(back[1].str(names) == "i1");

  // [8, 16] -> [8, 4, 4]: the last dim splits with div/mod of i1 alone.
  std::vector<IndexExpr> split = b.delinearize(lin, {8, 4, 4});
  CHECK(split[0].str(names) == "i0");
  CHECK(split[1].str(names) == "(i1 / 4)");
  CHECK(split[2].str(names) == "(i1 % 4)");

  // A transposed [6, 8] viewed as [48] and re-split as [8, 6] keeps div/mod.
  IndexExpr t = b.linearize({i2, i0}, {6, 8});
  std::vector<IndexExpr> r = b.delinearize(t, {8, 6});
  CHECK(contains(r[0].str(names), "/ 6"));
  CHECK(contains(r[1].str(names), "% 6"));
  // The dividend of / and % is a sum: it must print in parentheses, or C's
  // precedence applies the division to its last term only.
  CHECK(r[0].str(names) == "((i0 + i2*8) / 6)");
  CHECK(r[1].str(names) == "((i0 + i2*8) % 6)");

  // Constants and negative coefficients (slices with negative steps).
  IndexExpr neg = IndexExpr::constant(15) + i1 * -1;
  CHECK(neg.str(names) == "-i1 + 15");
  CHECK(b.range(neg) == std::pair<int64_t, int64_t>(0, 15));
}

namespace {
/// The value of `e` at the loop variables' values `vars`.
int64_t evaluate(const IndexExpr &e, const std::vector<int64_t> &vars) {
  int64_t v = e.getConstant();
  for (const IndexExpr::Term &t : e.getTerms()) {
    int64_t a = 0;
    if (t.atom.kind == IndexExpr::Atom::Var) {
      a = vars[t.atom.var];
    } else {
      int64_t inner = evaluate(*t.atom.inner, vars);
      a = t.atom.kind == IndexExpr::Atom::Div ? inner / t.atom.divisor
                                              : inner % t.atom.divisor;
    }
    v += t.coef * a;
  }
  return v;
}
} // namespace

TEST_CASE("views that split and merge dims at other places simplify",
          "[codegen][ir]") {
  // [2, 7, 7, 1280] read as [2, 49, 1280] (MobileNet's pooled reshape):
  // the division of i1*1280 + i2 by 8960 is i1 / 7, and the dims merge
  // back into the plain row-major index.
  std::vector<int64_t> extents = {2, 49, 1280};
  IndexBuilder b(extents);
  std::vector<std::string> names = {"i0", "i1", "i2"};
  IndexExpr i0 = IndexExpr::var(0), i1 = IndexExpr::var(1),
            i2 = IndexExpr::var(2);
  IndexExpr lin = b.linearize({i0, i1, i2}, {2, 49, 1280});
  std::vector<IndexExpr> idx = b.delinearize(lin, {2, 7, 7, 1280});
  CHECK(idx[1].str(names) == "(i1 / 7)");
  CHECK(idx[2].str(names) == "(i1 % 7)");
  CHECK(b.linearize(idx, {2, 7, 7, 1280}).str(names) ==
        "i0*62720 + i1*1280 + i2");

  // Every reshape between the factorizations of 2*3*4*6 = 144 elements and
  // a read through a transpose, checked element by element against plain
  // integer arithmetic.
  std::vector<std::vector<int64_t>> shapes = {
      {144}, {12, 12}, {2, 72}, {4, 36}, {6, 4, 6}, {2, 3, 4, 6},
      {3, 48}, {8, 18}, {2, 2, 36}, {4, 6, 6}, {9, 16}, {2, 6, 12}};
  for (const auto &from : shapes)
    for (const auto &to : shapes) {
      IndexBuilder ib(from);
      std::vector<IndexExpr> vars;
      for (size_t k = 0; k < from.size(); ++k)
        vars.push_back(IndexExpr::var(static_cast<int>(k)));
      std::vector<IndexExpr> split = ib.delinearize(ib.linearize(vars, from), to);
      // Read the `to` view transposed (last dim first) and merged again.
      std::vector<int64_t> tshape(to.rbegin(), to.rend());
      std::vector<IndexExpr> tidx(split.rbegin(), split.rend());
      IndexExpr merged = ib.linearize(split, to);
      IndexExpr transposed = ib.linearize(tidx, tshape);
      std::vector<int64_t> at(from.size(), 0);
      for (int64_t n = 0; n < 144; ++n) {
        for (int64_t k = static_cast<int64_t>(from.size()) - 1, r = n; k >= 0;
             --k) {
          at[k] = r % from[k];
          r /= from[k];
        }
        REQUIRE(evaluate(merged, at) == n);
        int64_t want = 0, r = n;
        std::vector<int64_t> toIdx(to.size());
        for (int64_t k = static_cast<int64_t>(to.size()) - 1; k >= 0; --k) {
          toIdx[k] = r % to[k];
          r /= to[k];
        }
        for (size_t k = 0; k < to.size(); ++k)
          want = want * tshape[k] + toIdx[to.size() - 1 - k];
        REQUIRE(evaluate(transposed, at) == want);
      }
    }
}

TEST_CASE("the expression printer follows the runtime's semantics",
          "[codegen][ir]") {
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnDialect>();
  // Scalar ops are named by op type.
  mlir::OperationName add = scalarOpOf<AddOp>(&ctx),
                      div = scalarOpOf<DivOp>(&ctx),
                      round = scalarOpOf<RoundOp>(&ctx),
                      cast = scalarOpOf<CastOp>(&ctx),
                      gelu = scalarOpOf<GeluOp>(&ctx),
                      mod = scalarOpOf<ModOp>(&ctx);
  CHECK(isOp<AddOp>(add));
  CHECK(isOp<SubOp, AddOp>(add));
  CHECK_FALSE(isOp<SubOp, MulOp>(add));
  CHECK(isScalarOp(add));
  CHECK_FALSE(isScalarOp(scalarOpOf<ReduceSumOp>(&ctx)));
  CHECK(hasScalarPrinterEntry(gelu));
  CHECK_FALSE(hasScalarPrinterEntry(scalarOpOf<MatMulOp>(&ctx)));
  ScalarAttrs none;
  CHECK(printLiteral(ScalarType::F32, 0.5, 0) == "0.5f");
  CHECK(printLiteral(ScalarType::F32, 2, 0) == "2.0f");
  CHECK(printLiteral(ScalarType::F64, -INFINITY, 0) == "(-(double)INFINITY)");
  CHECK(printLiteral(ScalarType::I8, 0, -3) == "((int8_t)-3LL)");
  CHECK(printScalarOp(add, ScalarType::F16, {ScalarType::F16, ScalarType::F16},
                      {"a", "b"}, none) == "kiln_round_f16((a + b))");
  CHECK(printScalarOp(add, ScalarType::I32, {ScalarType::I32, ScalarType::I32},
                      {"a", "b"},
                      none) == "(int32_t)((uint32_t)a + (uint32_t)b)");
  CHECK(printScalarOp(div, ScalarType::I64, {ScalarType::I64, ScalarType::I64},
                      {"a", "b"}, none) == "kiln_idiv(a, b)");
  CHECK(printScalarOp(round, ScalarType::F32, {ScalarType::F32}, {"a"}, none) ==
        "nearbyintf(a)");
  CHECK(printScalarOp(cast, ScalarType::I32, {ScalarType::F32}, {"a"}, none) ==
        "kiln_f2i<int32_t>(a)");
  CHECK(printScalarOp(cast, ScalarType::Bool, {ScalarType::F16}, {"a"}, none) ==
        "(a != 0.0f)");
  ScalarAttrs tanhForm;
  tanhForm.strings["approximate"] = "tanh";
  CHECK(contains(
      printScalarOp(gelu, ScalarType::F32, {ScalarType::F32}, {"a"}, tanhForm),
      "tanhf("));
  CHECK(contains(
      printScalarOp(gelu, ScalarType::F32, {ScalarType::F32}, {"a"}, none),
      "(1.0f + kiln_erff_absolute("));
  ScalarAttrs python;
  python.numbers["fmod"] = 0;
  CHECK(printScalarOp(mod, ScalarType::I32, {ScalarType::I32, ScalarType::I32},
                      {"a", "b"}, python) == "kiln_imod(a, b, 1)");
}

TEST_CASE("a lowered softmax prints as kernel IR and as C++",
          "[codegen][golden]") {
  std::string text = R"(
#loc1 = loc(fused<"ReduceMax">["/sm/ReduceMax"("m.onnx":1:0)])
#loc2 = loc(fused<"Sub">["/sm/Sub"("m.onnx":2:0)])
#loc3 = loc(fused<"Exp">["/sm/Exp"("m.onnx":3:0)])
#loc4 = loc(fused<"ReduceSum">["/sm/ReduceSum"("m.onnx":4:0)])
#loc5 = loc(fused<"Div">["/sm/Div"("m.onnx":5:0)])
func.func @f(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = kiln.fusion "k3_softmax" ins(%a : tensor<8x16xf32>) kind("reduction") {
  ^bb0(%x: tensor<8x16xf32>):
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32> loc(#loc1)
    %d = kiln.sub %x, %m : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32> loc(#loc2)
    %e = kiln.exp %d : (tensor<8x16xf32>) -> tensor<8x16xf32> loc(#loc3)
    %s = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32> loc(#loc4)
    %y = kiln.div %e, %s : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32> loc(#loc5)
    kiln.yield %y : tensor<8x16xf32>
  } -> (tensor<8x16xf32>)
  return %r : tensor<8x16xf32>
}
)";
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  FusionOp op = m.fusions()[0];
  mlir::FailureOr<Kernel> kernel = lowerFusionToKernelIR(op.getOperation());
  REQUIRE(mlir::succeeded(kernel));
  std::string ir = kernel->str();
  INFO(ir);
  CHECK(contains(ir, "kernel k3_softmax domain [8] x [16] (in0: f32[8,16]) -> "
                     "(out0: f32[8,16]) {"));
  CHECK(contains(ir, "parallel i0 < 8 {"));
  CHECK(contains(ir, "reduce j0 < 16 {"));
  CHECK(contains(ir, "= load in0[i0*16 + j0] : f32"));
  CHECK(contains(ir, "= max_reduce(t"));
  CHECK(contains(ir, "= sum_reduce(t"));
  CHECK(contains(ir, "serial j0 < 16 {"));
  CHECK(contains(ir, "store out0[i0*16 + j0] = t"));
  // The division by the row sum became one reciprocal per row and a multiply
  // per element; exp(x - max) is cached in the output's row.
  std::string epilogue = ir.substr(ir.find("serial j0"));
  CHECK(contains(ir, "= const 1.000000e+00 : f32"));
  CHECK(contains(ir.substr(0, ir.find("serial j0")), "= div(t"));
  CHECK(contains(epilogue, "= mul(t"));
  CHECK(!contains(epilogue, "div("));
  CHECK(contains(ir, "cache c0: f32[16] in out0[i0*16 + ...]"));
  CHECK(kernel->sourceNodes ==
        std::vector<std::string>{"/sm/ReduceMax", "/sm/Sub", "/sm/Exp",
                                 "/sm/ReduceSum", "/sm/Div"});

  mlir::FailureOr<CppKernel> cpp = emitCppKernel(op);
  REQUIRE(mlir::succeeded(cpp));
  INFO(cpp->definition);
  CHECK(cpp->declaration ==
        "void k3_softmax(const float *__restrict in0, float *__restrict "
        "out0);");
  CHECK(contains(cpp->definition, "// ONNX nodes: /sm/ReduceMax /sm/Sub "
                                  "/sm/Exp /sm/ReduceSum /sm/Div"));
  CHECK(contains(cpp->definition, "#pragma omp simd reduction(max:"));
  // Sums of 16 floats accumulate in f32.
  CHECK(contains(cpp->definition, "float acc"));
  CHECK(!contains(cpp->definition, "double acc"));
  CHECK(contains(cpp->definition, "float *c0 = out0 + i0*16;"));
  // exp(x - max x) has no argument above 0: no overflow check.
  CHECK(contains(ir, "exp(t3) nonpositive_arg="));
  CHECK(contains(cpp->definition, "kiln_expf_nonpositive(t3)"));
  // 8 x 16 is too little work for threads.
  CHECK(!contains(cpp->definition, "omp parallel"));
  std::string file = emitKernelsFile({*cpp}, "m");
  CHECK(contains(file, "namespace kiln_kernels {"));
  CHECK(contains(file, "struct kiln_f16"));
  CHECK(!contains(file, "#include <vector>"));
}

TEST_CASE("exp of x minus the max of x, and of nothing else, is nonpositive",
          "[codegen][ir]") {
  // exp(x - max y) and exp(max x - x) may exceed 1: kiln_expf, unmarked;
  // exp(x/2 - max(x/2)) is marked (x/2 computed again from the same loads).
  std::string text = R"(
func.func @f(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %r:3 = kiln.fusion "k0_exps" ins(%a, %b : tensor<8x16xf32>, tensor<8x16xf32>) kind("reduction") {
  ^bb0(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>):
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %mx = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %my = kiln.reduce_max %y, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %d = kiln.sub %x, %my : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    %e = kiln.exp %d : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %n = kiln.sub %mx, %x : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %f = kiln.exp %n : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %half = kiln.constant dense<0.5> : tensor<f32>
    %h = kiln.mul %x, %half : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %mh = kiln.reduce_max %h, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %dh = kiln.sub %h, %mh : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    %g = kiln.exp %dh : (tensor<8x16xf32>) -> tensor<8x16xf32>
    kiln.yield %e, %f, %g : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  } -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>)
  return %r#0, %r#1, %r#2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}
)";
  std::string ir = loweredKernelText(text);
  INFO(ir);
  // Three exps, one marked.
  size_t exps = 0, marked = 0;
  for (size_t at = ir.find("= exp("); at != std::string::npos;
       at = ir.find("= exp(", at + 1)) {
    ++exps;
    marked += ir.substr(at, ir.find('\n', at) - at).find("nonpositive_arg") !=
              std::string::npos;
  }
  CHECK(exps == 3);
  CHECK(marked == 1);
}

TEST_CASE("an erf read only as 1 + erf is computed to an absolute bound",
          "[codegen][ir]") {
  // GELU as exported (x * 0.5 * (1 + erf(x / sqrt 2))) is marked, 1 on
  // either side; an erf that is also stored, also multiplied, or offset by
  // 2 keeps kiln_erff (relatively accurate near 0).
  std::string text = R"(
func.func @f(%a: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %r:5 = kiln.fusion "k0_erfs" ins(%a : tensor<8x16xf32>) kind("pointwise") {
  ^bb0(%x: tensor<8x16xf32>):
    %one = kiln.constant dense<1.0> : tensor<f32>
    %two = kiln.constant dense<2.0> : tensor<f32>
    %c = kiln.constant dense<0.707106769> : tensor<f32>
    %s = kiln.mul %x, %c : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %e1 = kiln.erf %s : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %p1 = kiln.add %e1, %one : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %g = kiln.mul %x, %p1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %e2 = kiln.erf %x : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %p2 = kiln.add %one, %e2 : (tensor<f32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %e3 = kiln.erf %g : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %p3 = kiln.add %e3, %one : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %e4 = kiln.erf %p2 : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %p4 = kiln.add %e4, %one : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %m4 = kiln.mul %e4, %two : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %q4 = kiln.add %p4, %m4 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %e5 = kiln.erf %p3 : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %p5 = kiln.add %e5, %two : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    kiln.yield %g, %p2, %e3, %q4, %p5 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  } -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}
)";
  std::string ir = loweredKernelText(text);
  INFO(ir);
  // Five erfs in order: e1 and e2 marked; e3 (stored), e4 (also
  // multiplied), e5 (plus 2) not.
  std::vector<bool> marked;
  for (size_t at = ir.find("= erf("); at != std::string::npos;
       at = ir.find("= erf(", at + 1))
    marked.push_back(
        ir.substr(at, ir.find('\n', at) - at).find("plus_one_use") !=
        std::string::npos);
  CHECK(marked == std::vector<bool>{true, true, false, false, false});
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  mlir::FailureOr<CppKernel> cpp = emitCppKernel(m.fusions()[0]);
  REQUIRE(mlir::succeeded(cpp));
  INFO(cpp->definition);
  CHECK(contains(cpp->definition, "kiln_erff_absolute("));
  CHECK(contains(cpp->definition, "kiln_erff("));
}

TEST_CASE("comparing the exp's argument with the max's input is linear in "
          "shared subexpressions",
          "[codegen][ir]") {
  // x doubled 40 times (each add reads the previous value twice: 2^40 paths
  // through the expression), then softmax's exp(v - max v): marked, and
  // fast (the lowering's dependencyLevel walked every path before it
  // remembered each op's level: 1.9 s at 24 levels, 2^40 steps here).
  std::string t = "tensor<8x16xf32>", r = "tensor<8x1xf32>", body;
  std::string prev = "%x";
  for (int i = 0; i < 40; ++i) {
    std::string v = "%d" + std::to_string(i);
    body += "    " + v + " = kiln.add " + prev + ", " + prev + " : (" + t +
            ", " + t + ") -> " + t + "\n";
    prev = v;
  }
  std::string text =
      "func.func @f(%a: " + t + ") -> " + t + " {\n  %r = kiln.fusion \"k0_deep\" ins(%a : " +
      t + ") kind(\"reduction\") {\n  ^bb0(%x: " + t + "):\n" + body +
      "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n"
      "    %m = kiln.reduce_max " + prev +
      ", %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (" + t +
      ", tensor<1xi64>) -> " + r + "\n    %s = kiln.sub " + prev + ", %m : (" +
      t + ", " + r + ") -> " + t + "\n    %e = kiln.exp %s : (" + t + ") -> " +
      t + "\n    kiln.yield %e : " + t + "\n  } -> (" + t +
      ")\n  return %r : " + t + "\n}\n";
  std::string ir = loweredKernelText(text);
  INFO(ir);
  CHECK(contains(ir, "nonpositive_arg"));
}

TEST_CASE("a division that feeds a rounding keeps its divisor",
          "[codegen][ir]") {
  // round(x / max(x)): x * (1 / max) may differ in the last bit, which
  // round() can turn into a different integer (DynamicQuantizeLinear).
  FusionModule m = parseModule(R"(
func.func @f(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = kiln.fusion "k0_round" ins(%a : tensor<8x16xf32>) kind("reduction") {
  ^bb0(%x: tensor<8x16xf32>):
    %axes = kiln.constant dense<-1> : tensor<1xi64>
    %m = kiln.reduce_max %x, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %d = kiln.div %x, %m : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    %y = kiln.round %d : (tensor<8x16xf32>) -> tensor<8x16xf32>
    kiln.yield %y : tensor<8x16xf32>
  } -> (tensor<8x16xf32>)
  return %r : tensor<8x16xf32>
}
)");
  REQUIRE(m.module);
  mlir::FailureOr<Kernel> kernel =
      lowerFusionToKernelIR(m.fusions()[0].getOperation());
  REQUIRE(mlir::succeeded(kernel));
  std::string ir = kernel->str();
  INFO(ir);
  std::string epilogue = ir.substr(ir.find("serial j0"));
  CHECK(contains(epilogue, "= div(t"));
  CHECK(!contains(epilogue, "= mul(t"));
}

TEST_CASE("a bf16 division by an immediate becomes an exact multiply",
          "[codegen][ir]") {
  // GELU's x / sqrt(2) in bf16: x * (1 / 1.4140625) rounds to the same bf16
  // for all 65536 x, so it multiplies. A subnormal divisor, whose reciprocal
  // overflows float, keeps its division.
  FusionModule m = parseModule(R"(
func.func @f(%a: tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xbf16>) {
  %r:2 = kiln.fusion "k0_div" ins(%a : tensor<8x16xbf16>) kind("pointwise") {
  ^bb0(%x: tensor<8x16xbf16>):
    %c = kiln.constant dense<1.4140625> : tensor<bf16>
    %s = kiln.constant dense<9.18354962E-41> : tensor<bf16>
    %y = kiln.div %x, %c : (tensor<8x16xbf16>, tensor<bf16>) -> tensor<8x16xbf16>
    %z = kiln.div %x, %s : (tensor<8x16xbf16>, tensor<bf16>) -> tensor<8x16xbf16>
    kiln.yield %y, %z : tensor<8x16xbf16>, tensor<8x16xbf16>
  } -> (tensor<8x16xbf16>, tensor<8x16xbf16>)
  return %r#0, %r#1 : tensor<8x16xbf16>, tensor<8x16xbf16>
}
)");
  REQUIRE(m.module);
  mlir::FailureOr<Kernel> kernel =
      lowerFusionToKernelIR(m.fusions()[0].getOperation());
  REQUIRE(mlir::succeeded(kernel));
  std::string ir = kernel->str();
  INFO(ir);
  CHECK(contains(ir, "= const 7.071823e-01 : f32"));
  CHECK(contains(ir, "= mul(t"));
  CHECK(contains(ir, "= div(t"));
}

TEST_CASE("an f32 division by an immediate multiplies by its reciprocal",
          "[codegen][ir]") {
  // GELU's x / sqrt(2) in f32: x * 0.707106769 (1/c rounded once to f32).
  // A quotient that reaches round() keeps its division (a flipped last bit
  // can change the integer), and so does a subnormal divisor (its
  // reciprocal overflows) and a division by 1.
  FusionModule m = parseModule(R"(
func.func @f(%a: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %r:3 = kiln.fusion "k0_div" ins(%a : tensor<8x16xf32>) kind("pointwise") {
  ^bb0(%x: tensor<8x16xf32>):
    %c = kiln.constant dense<1.41421354> : tensor<f32>
    %q = kiln.constant dense<3.0> : tensor<f32>
    %s = kiln.constant dense<1.0e-39> : tensor<f32>
    %y = kiln.div %x, %c : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %d = kiln.div %x, %q : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %n = kiln.round %d : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %z = kiln.div %x, %s : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    kiln.yield %y, %n, %z : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  } -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>)
  return %r#0, %r#1, %r#2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}
)");
  REQUIRE(m.module);
  mlir::FailureOr<Kernel> kernel =
      lowerFusionToKernelIR(m.fusions()[0].getOperation());
  REQUIRE(mlir::succeeded(kernel));
  std::string ir = kernel->str();
  INFO(ir);
  CHECK(contains(ir, "= const 7.071068e-01 : f32"));
  size_t muls = 0, divs = 0;
  for (size_t at = 0; (at = ir.find("= mul(t", at)) != std::string::npos; ++at)
    ++muls;
  for (size_t at = 0; (at = ir.find("= div(t", at)) != std::string::npos; ++at)
    ++divs;
  CHECK(muls == 1);
  CHECK(divs == 2);
}

TEST_CASE("f32 powers 2 and 3 by an immediate become products",
          "[codegen][ir]") {
  // tanh-GELU's x^3 and its gradient's x^2: products instead of pow calls.
  // Another exponent, and a bf16 power (which rounds once), keep pow.
  FusionModule m = parseModule(R"(
func.func @f(%a: tensor<8x16xf32>, %h: tensor<8x16xbf16>) -> (tensor<8x16xf32>, tensor<8x16xbf16>) {
  %r:2 = kiln.fusion "k0_pow" ins(%a, %h : tensor<8x16xf32>, tensor<8x16xbf16>) kind("pointwise") {
  ^bb0(%x: tensor<8x16xf32>, %y: tensor<8x16xbf16>):
    %two = kiln.constant dense<2.0> : tensor<f32>
    %three = kiln.constant dense<3.0> : tensor<f32>
    %half = kiln.constant dense<0.5> : tensor<f32>
    %b3 = kiln.constant dense<3.0> : tensor<bf16>
    %p2 = kiln.pow %x, %two : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %p3 = kiln.pow %x, %three : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %ps = kiln.pow %x, %half : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
    %s = kiln.add %p2, %p3 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %t = kiln.add %s, %ps : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %q = kiln.pow %y, %b3 : (tensor<8x16xbf16>, tensor<bf16>) -> tensor<8x16xbf16>
    kiln.yield %t, %q : tensor<8x16xf32>, tensor<8x16xbf16>
  } -> (tensor<8x16xf32>, tensor<8x16xbf16>)
  return %r#0, %r#1 : tensor<8x16xf32>, tensor<8x16xbf16>
}
)");
  REQUIRE(m.module);
  mlir::FailureOr<Kernel> kernel =
      lowerFusionToKernelIR(m.fusions()[0].getOperation());
  REQUIRE(mlir::succeeded(kernel));
  std::string ir = kernel->str();
  INFO(ir);
  // x*x (the square), x*x then *x (the cube): three products, two pows left.
  size_t muls = 0, pows = 0;
  for (size_t at = 0; (at = ir.find("= mul(", at)) != std::string::npos; ++at)
    ++muls;
  for (size_t at = 0; (at = ir.find("= pow(", at)) != std::string::npos; ++at)
    ++pows;
  CHECK(muls == 3);
  CHECK(pows == 2);
}
