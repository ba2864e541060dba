//===- CppKernelTest.cpp - Generated C++ kernels against the oracle -------===//
//
// This file implements the end-to-end tests of the C++ kernel path: each
// test builds kiln.fusion regions from MLIR text, prints them as C++,
// compiles the file with the host compiler, runs every kernel on random
// inputs and compares its outputs with the region interpreted op by op by
// the runtime's reference kernels. A hidden benchmark ([.bench]) times a
// generated softmax against the runtime's softmax on [4096, 4096] f32.
//
//===----------------------------------------------------------------------===//

#include "CodegenTestUtils.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>

using namespace kiln;
using namespace kiln::test;

namespace {

struct Case {
  std::string name, kind;
  std::vector<std::string> inTypes, outTypes;
  std::string body;
  float lo = -4.0f, hi = 4.0f; ///< input range
};

/// Compiles all cases into one library and checks each against the oracle.
void checkCases(const std::vector<Case> &cases) {
  std::string text;
  for (const Case &c : cases)
    text += fusionText(c.name, c.kind, c.inTypes, c.outTypes, c.body);
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  std::vector<FusionOp> ops = m.fusions();
  REQUIRE(ops.size() == cases.size());
  CompiledKernels lib;
  std::string error;
  bool built = lib.build(ops, "-O2 -fopenmp", error);
  if (!built)
    FAIL(error << "\n" << lib.source);
  std::mt19937 rng(42);
  for (size_t i = 0; i < ops.size(); ++i) {
    INFO("kernel " << cases[i].name);
    std::vector<Tensor> inputs;
    for (mlir::Type t : ops[i].getOperandTypes()) {
      auto [dtype, shape] = typeOf(t);
      inputs.push_back(
          randomTensor(dtype, shape, rng, cases[i].lo, cases[i].hi));
    }
    std::vector<Tensor> expected = interpret(ops[i], inputs);
    std::vector<Tensor> actual = lib.run(ops[i], inputs);
    REQUIRE(expected.size() == actual.size());
    for (size_t r = 0; r < actual.size(); ++r) {
      Status st = compareTensors(actual[r], expected[r],
                                 defaultTolerance(expected[r].dtype()));
      INFO("result " << r << ": " << st.message());
      CHECK(st);
    }
  }
}

const char *kReduceAttrs =
    "{keepdims = 1 : i64, noop_with_empty_axes = 0 : i64}";

} // namespace

TEST_CASE("pointwise chains with broadcasting", "[codegen]") {
  std::string t3 = "tensor<4x8x16xf32>";
  std::vector<Case> cases = {
      {"k0_gelu",
       "pointwise",
       {t3, "tensor<16xf32>", "tensor<4x1x16xf32>"},
       {t3, t3},
       R"(
    %m = kiln.mul %x0, %x2 : (tensor<4x8x16xf32>, tensor<4x1x16xf32>) -> tensor<4x8x16xf32>
    %a = kiln.add %m, %x1 : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
    %g = kiln.gelu %a {approximate = "none"} : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %h = kiln.gelu %a {approximate = "tanh"} : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %s = kiln.sigmoid %h : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %c = kiln.constant dense<0.5> : tensor<f32>
    %p = kiln.pow %s, %c : (tensor<4x8x16xf32>, tensor<f32>) -> tensor<4x8x16xf32>
    %mx = kiln.max %p, %g : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    kiln.yield %g, %mx : tensor<4x8x16xf32>, tensor<4x8x16xf32>)"},
      {"k1_activations",
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
    kiln.yield %b, %e, %n, %t : tensor<3x40xf32>, tensor<3x40xf32>, tensor<3x40xf32>, tensor<3x40xf32>)"},
      // Big enough for the OpenMP path.
      {"k2_large",
       "pointwise",
       {"tensor<64x1024xf32>", "tensor<64x1xf32>"},
       {"tensor<64x1024xf32>"},
       R"(
    %a = kiln.sub %x0, %x1 : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
    %b = kiln.relu %a : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %c = kiln.tanh %b : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
    kiln.yield %c : tensor<64x1024xf32>)"},
  };
  checkCases(cases);
}

TEST_CASE("softmax and layer norm (decomposed) as reduction kernels",
          "[codegen]") {
  std::string axes = "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n";
  auto softmax = [&](const std::string &name, const std::string &t,
                     const std::string &r) {
    return Case{name,
                "reduction",
                {t},
                {t, r},
                axes + "    %m = kiln.reduce_max %x0, %axes " + kReduceAttrs +
                    " : (" + t + ", tensor<1xi64>) -> " + r +
                    "\n    %d = kiln.sub %x0, %m : (" + t + ", " + r + ") -> " +
                    t + "\n    %e = kiln.exp %d : (" + t + ") -> " + t +
                    "\n    %s = kiln.reduce_sum %e, %axes " + kReduceAttrs +
                    " : (" + t + ", tensor<1xi64>) -> " + r +
                    "\n    %y = kiln.div %e, %s : (" + t + ", " + r + ") -> " +
                    t + "\n    kiln.yield %y, %m : " + t + ", " + r};
  };
  std::string t = "tensor<6x32xf32>", r = "tensor<6x1xf32>";
  Case layerNorm{
      "k2_layer_norm",
      "reduction",
      {t, "tensor<32xf32>", "tensor<32xf32>"},
      {t, r, r},
      axes +
          R"(    %mean = kiln.reduce_mean %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<6x32xf32>, tensor<1xi64>) -> tensor<6x1xf32>
    %d = kiln.sub %x0, %mean : (tensor<6x32xf32>, tensor<6x1xf32>) -> tensor<6x32xf32>
    %sq = kiln.mul %d, %d : (tensor<6x32xf32>, tensor<6x32xf32>) -> tensor<6x32xf32>
    %var = kiln.reduce_mean %sq, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<6x32xf32>, tensor<1xi64>) -> tensor<6x1xf32>
    %eps = kiln.constant dense<1.0e-05> : tensor<f32>
    %v = kiln.add %var, %eps : (tensor<6x1xf32>, tensor<f32>) -> tensor<6x1xf32>
    %sd = kiln.sqrt %v : (tensor<6x1xf32>) -> tensor<6x1xf32>
    %inv = kiln.reciprocal %sd : (tensor<6x1xf32>) -> tensor<6x1xf32>
    %n = kiln.mul %d, %inv : (tensor<6x32xf32>, tensor<6x1xf32>) -> tensor<6x32xf32>
    %w = kiln.mul %n, %x1 : (tensor<6x32xf32>, tensor<32xf32>) -> tensor<6x32xf32>
    %y = kiln.add %w, %x2 : (tensor<6x32xf32>, tensor<32xf32>) -> tensor<6x32xf32>
    kiln.yield %y, %mean, %inv : tensor<6x32xf32>, tensor<6x1xf32>, tensor<6x1xf32>)"};
  // k4: 67 rows, enough work for threads: the exp loop of row i prefetches
  // row i + 1 in two blocks of 256 columns, an odd row count split over the
  // threads, the max an output too.
  Case prefetched =
      softmax("k4_softmax", "tensor<67x512xf32>", "tensor<67x1xf32>");
  checkCases(
      {softmax("k0_softmax", "tensor<8x16xf32>", "tensor<8x1xf32>"),
       softmax("k1_softmax", "tensor<2x64x300xf32>", "tensor<2x64x1xf32>"),
       layerNorm, softmax("k3_softmax", "tensor<4x8xf16>", "tensor<4x1xf16>"),
       prefetched});
  FusionModule m = parseModule(
      fusionText(prefetched.name, prefetched.kind, prefetched.inTypes,
                 prefetched.outTypes, prefetched.body));
  REQUIRE(m.module);
  mlir::FailureOr<CppKernel> cpp = emitCppKernel(m.fusions()[0]);
  REQUIRE(mlir::succeeded(cpp));
  INFO(cpp->definition);
  CHECK(cpp->definition.find("kiln_nx = i0 + 1 < 67 ? i0 + 1 : i0;") !=
        std::string::npos);
  CHECK(cpp->definition.find("kiln_jb += 256") != std::string::npos);
  CHECK(
      cpp->definition.find("__builtin_prefetch(&in0[kiln_nx*512 + kiln_k]);") !=
      std::string::npos);
}

TEST_CASE("reductions over leading axes, all axes and without keepdims",
          "[codegen]") {
  checkCases({
      {"k0_col_sum",
       "reduction",
       {"tensor<8x5x3xf32>"},
       {"tensor<5x3xf32>", "tensor<5x3xf32>"},
       R"(
    %axes = kiln.constant dense<0> : tensor<1xi64>
    %s = kiln.reduce_sum %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x5x3xf32>, tensor<1xi64>) -> tensor<5x3xf32>
    %p = kiln.reduce_prod %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x5x3xf32>, tensor<1xi64>) -> tensor<5x3xf32>
    kiln.yield %s, %p : tensor<5x3xf32>, tensor<5x3xf32>)",
       0.5f,
       1.5f},
      {"k1_all_max",
       "reduction",
       {"tensor<4x6xi32>"},
       {"tensor<1x1xi32>", "tensor<1x1xi32>", "tensor<1x1xi32>"},
       R"(
    %axes = kiln.constant dense<> : tensor<0xi64>
    %m = kiln.reduce_max %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x6xi32>, tensor<0xi64>) -> tensor<1x1xi32>
    %n = kiln.reduce_min %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x6xi32>, tensor<0xi64>) -> tensor<1x1xi32>
    %s = kiln.reduce_mean %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x6xi32>, tensor<0xi64>) -> tensor<1x1xi32>
    kiln.yield %m, %n, %s : tensor<1x1xi32>, tensor<1x1xi32>, tensor<1x1xi32>)",
       -50.0f,
       50.0f},
      {"k2_middle",
       "reduction",
       {"tensor<3x7x5xf64>"},
       {"tensor<3x7x5xf64>"},
       R"(
    %axes = kiln.constant dense<[1]> : tensor<1xi64>
    %m = kiln.reduce_mean %x0, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<3x7x5xf64>, tensor<1xi64>) -> tensor<3x1x5xf64>
    %d = kiln.sub %x0, %m : (tensor<3x7x5xf64>, tensor<3x1x5xf64>) -> tensor<3x7x5xf64>
    kiln.yield %d : tensor<3x7x5xf64>)"},
      // Reduced dims of extent 1 only (a ReduceMean over axis 1 of [1, 1]
      // without keepdims): the reduce loop has no variables left and is
      // its body once, with no `omp simd` pragma before it.
      {"k3_unit_axis",
       "reduction",
       {"tensor<1x1xf32>"},
       {"tensor<1xf32>"},
       R"(
    %axes = kiln.constant dense<[1]> : tensor<1xi64>
    %m = kiln.reduce_mean %x0, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<1x1xf32>, tensor<1xi64>) -> tensor<1xf32>
    kiln.yield %m : tensor<1xf32>)"},
  });
}

TEST_CASE("views inside regions become index arithmetic", "[codegen]") {
  checkCases({
      {"k0_views",
       "pointwise",
       {"tensor<4x6xf32>", "tensor<2x8xf32>"},
       {"tensor<2x8xf32>", "tensor<2x1x8xf32>"},
       R"(
    %t = kiln.transpose %x0 {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %shape = kiln.constant dense<[3, 8]> : tensor<2xi64>
    %r = kiln.reshape %t, %shape {allowzero = 0 : i64} : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<3x8xf32>
    %starts = kiln.constant dense<[1]> : tensor<1xi64>
    %ends = kiln.constant dense<[3]> : tensor<1xi64>
    %ax = kiln.constant dense<[0]> : tensor<1xi64>
    %steps = kiln.constant dense<[1]> : tensor<1xi64>
    %s = kiln.slice %r, %starts, %ends, %ax, %steps : (tensor<3x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8xf32>
    %a = kiln.add %s, %x1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %u1 = kiln.constant dense<[1]> : tensor<1xi64>
    %u = kiln.unsqueeze %a, %u1 : (tensor<2x8xf32>, tensor<1xi64>) -> tensor<2x1x8xf32>
    kiln.yield %a, %u : tensor<2x8xf32>, tensor<2x1x8xf32>)"},
      {"k1_expand_flatten",
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
    %sq = kiln.constant dense<[0]> : tensor<1xi64>
    %t = kiln.transpose %x1 {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
    %sh = kiln.constant dense<[3, 2, 4]> : tensor<3xi64>
    %rs = kiln.reshape %t, %sh {allowzero = 0 : i64} : (tensor<3x2x4xf32>, tensor<3xi64>) -> tensor<3x2x4xf32>
    %st = kiln.constant dense<[1]> : tensor<1xi64>
    %en = kiln.constant dense<[2]> : tensor<1xi64>
    %ax1 = kiln.constant dense<[1]> : tensor<1xi64>
    %one = kiln.constant dense<[1]> : tensor<1xi64>
    %row = kiln.slice %rs, %st, %en, %ax1, %one : (tensor<3x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x1x4xf32>
    %a1b = kiln.constant dense<[1]> : tensor<1xi64>
    %r2 = kiln.squeeze %row, %a1b : (tensor<3x1x4xf32>, tensor<1xi64>) -> tensor<3x4xf32>
    kiln.yield %f, %r2, %sl : tensor<2x12xf32>, tensor<3x4xf32>, tensor<2x1x4xf32>)"},
      // A transposed reduction input: the reduced axis is strided.
      {"k2_transposed_softmax",
       "reduction",
       {"tensor<16x8xf32>"},
       {"tensor<8x16xf32>"},
       R"(
    %t = kiln.transpose %x0 {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
    %axes = kiln.constant dense<1> : tensor<1xi64>
    %m = kiln.reduce_max %t, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %d = kiln.sub %t, %m : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    %e = kiln.exp %d : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %s = kiln.reduce_sum %e, %axes {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    %l = kiln.log %s : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %y = kiln.sub %d, %l : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    kiln.yield %y : tensor<8x16xf32>)"},
  });
}

TEST_CASE("casts, f16/bf16 inputs, integer ops, where and comparisons",
          "[codegen]") {
  checkCases({
      {"k0_casts",
       "pointwise",
       {"tensor<5x7xf32>", "tensor<5x7xi64>"},
       {"tensor<5x7xi32>", "tensor<5x7xf16>", "tensor<5x7xi1>",
        "tensor<5x7xf32>", "tensor<5x7xbf16>", "tensor<5x7xui8>"},
       R"(
    %a = kiln.cast %x0 {to = i32} : (tensor<5x7xf32>) -> tensor<5x7xi32>
    %b = kiln.cast %x0 {to = f16} : (tensor<5x7xf32>) -> tensor<5x7xf16>
    %c = kiln.cast %x0 {to = i1} : (tensor<5x7xf32>) -> tensor<5x7xi1>
    %d = kiln.cast %x1 {to = f32} : (tensor<5x7xi64>) -> tensor<5x7xf32>
    %e = kiln.cast %b {to = f32} : (tensor<5x7xf16>) -> tensor<5x7xf32>
    %f = kiln.add %d, %e : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
    %g = kiln.cast %f {to = bf16} : (tensor<5x7xf32>) -> tensor<5x7xbf16>
    %h = kiln.cast %x1 {to = ui8} : (tensor<5x7xi64>) -> tensor<5x7xui8>
    kiln.yield %a, %b, %c, %f, %g, %h : tensor<5x7xi32>, tensor<5x7xf16>, tensor<5x7xi1>, tensor<5x7xf32>, tensor<5x7xbf16>, tensor<5x7xui8>)",
       -300.0f,
       300.0f},
      {"k1_half",
       "pointwise",
       {"tensor<8x32xf16>", "tensor<32xf16>", "tensor<8x32xbf16>"},
       {"tensor<8x32xf16>", "tensor<8x32xbf16>"},
       R"(
    %a = kiln.mul %x0, %x1 : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
    %b = kiln.exp %a : (tensor<8x32xf16>) -> tensor<8x32xf16>
    %c = kiln.add %b, %x0 : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
    %d = kiln.tanh %x2 : (tensor<8x32xbf16>) -> tensor<8x32xbf16>
    %e = kiln.mul %d, %x2 : (tensor<8x32xbf16>, tensor<8x32xbf16>) -> tensor<8x32xbf16>
    kiln.yield %c, %e : tensor<8x32xf16>, tensor<8x32xbf16>)",
       -2.0f,
       2.0f},
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
    kiln.yield %b, %c, %i, %q, %m : tensor<6x9xi32>, tensor<6x9xi32>, tensor<6x9xi32>, tensor<6x9xi64>, tensor<6x9xi32>)",
       -20.0f,
       20.0f},
      {"k3_shift",
       "pointwise",
       {"tensor<16xui8>", "tensor<16xui8>"},
       {"tensor<16xui8>", "tensor<16xui8>"},
       R"(
    %l = kiln.bit_shift %x0, %x1 {direction = "left"} : (tensor<16xui8>, tensor<16xui8>) -> tensor<16xui8>
    %r = kiln.bit_shift %x0, %x1 {direction = "right"} : (tensor<16xui8>, tensor<16xui8>) -> tensor<16xui8>
    kiln.yield %l, %r : tensor<16xui8>, tensor<16xui8>)",
       0.0f,
       10.0f},
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
  });
}

TEST_CASE("the 16-, 32- and 64-bit unsigned and 16-bit signed integers, "
          "float8 and the sub-byte integers",
          "[codegen][dtype]") {
  checkCases({
      {"k0_u16",
       "pointwise",
       {"tensor<6x9xui16>", "tensor<9xui16>"},
       {"tensor<6x9xui16>", "tensor<6x9xui16>", "tensor<6x9xui16>",
        "tensor<6x9xi1>", "tensor<6x9xui16>"},
       R"(
    %k = kiln.constant dense<9000> : tensor<ui16>
    %big = kiln.add %x0, %k : (tensor<6x9xui16>, tensor<ui16>) -> tensor<6x9xui16>
    %m = kiln.mul %big, %big : (tensor<6x9xui16>, tensor<6x9xui16>) -> tensor<6x9xui16>
    %d = kiln.div %m, %x1 : (tensor<6x9xui16>, tensor<9xui16>) -> tensor<6x9xui16>
    %r = kiln.mod %m, %x1 {fmod = 0 : i64} : (tensor<6x9xui16>, tensor<9xui16>) -> tensor<6x9xui16>
    %g = kiln.greater %m, %big : (tensor<6x9xui16>, tensor<6x9xui16>) -> tensor<6x9xi1>
    %s = kiln.bit_shift %big, %x1 {direction = "left"} : (tensor<6x9xui16>, tensor<9xui16>) -> tensor<6x9xui16>
    kiln.yield %m, %d, %r, %g, %s : tensor<6x9xui16>, tensor<6x9xui16>, tensor<6x9xui16>, tensor<6x9xi1>, tensor<6x9xui16>)",
       0.0f,
       15.0f},
      {"k1_u32_u64_i16",
       "pointwise",
       {"tensor<5x7xui32>", "tensor<5x7xui64>", "tensor<5x7xi16>"},
       {"tensor<5x7xui32>", "tensor<5x7xui64>", "tensor<5x7xi16>",
        "tensor<5x7xi16>", "tensor<5x7xf32>"},
       R"(
    %k = kiln.constant dense<4000000000> : tensor<ui32>
    %a = kiln.add %x0, %k : (tensor<5x7xui32>, tensor<ui32>) -> tensor<5x7xui32>
    %m = kiln.mul %a, %a : (tensor<5x7xui32>, tensor<5x7xui32>) -> tensor<5x7xui32>
    %k64 = kiln.constant dense<18446744073709551000> : tensor<ui64>
    %b = kiln.add %x1, %k64 : (tensor<5x7xui64>, tensor<ui64>) -> tensor<5x7xui64>
    %mx = kiln.max %b, %x1 : (tensor<5x7xui64>, tensor<5x7xui64>) -> tensor<5x7xui64>
    %k16 = kiln.constant dense<-300> : tensor<i16>
    %c = kiln.mul %x2, %k16 : (tensor<5x7xi16>, tensor<i16>) -> tensor<5x7xi16>
    %n = kiln.mul %c, %c : (tensor<5x7xi16>, tensor<5x7xi16>) -> tensor<5x7xi16>
    %r = kiln.mod %c, %x2 {fmod = 0 : i64} : (tensor<5x7xi16>, tensor<5x7xi16>) -> tensor<5x7xi16>
    %f = kiln.cast %mx {to = f32} : (tensor<5x7xui64>) -> tensor<5x7xf32>
    kiln.yield %m, %mx, %n, %r, %f : tensor<5x7xui32>, tensor<5x7xui64>, tensor<5x7xi16>, tensor<5x7xi16>, tensor<5x7xf32>)",
       -9.0f,
       9.0f},
      {"k2_float8",
       "pointwise",
       {"tensor<4x8xf32>", "tensor<4x8xf8E4M3FN>"},
       {"tensor<4x8xf8E4M3FN>", "tensor<4x8xf8E4M3FNUZ>", "tensor<4x8xf8E5M2>",
        "tensor<4x8xf8E5M2FNUZ>", "tensor<4x8xf32>", "tensor<4x8xf16>"},
       R"(
    %s = kiln.constant dense<300.0> : tensor<f32>
    %x = kiln.mul %x0, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %a = kiln.cast %x {to = f8E4M3FN} : (tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN>
    %b = kiln.cast %x {to = f8E4M3FNUZ} : (tensor<4x8xf32>) -> tensor<4x8xf8E4M3FNUZ>
    %c = kiln.cast %x {to = f8E5M2} : (tensor<4x8xf32>) -> tensor<4x8xf8E5M2>
    %d = kiln.cast %x0 {to = f8E5M2FNUZ} : (tensor<4x8xf32>) -> tensor<4x8xf8E5M2FNUZ>
    %e = kiln.cast %x1 {to = f32} : (tensor<4x8xf8E4M3FN>) -> tensor<4x8xf32>
    %h = kiln.cast %c {to = f16} : (tensor<4x8xf8E5M2>) -> tensor<4x8xf16>
    kiln.yield %a, %b, %c, %d, %e, %h : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FNUZ>, tensor<4x8xf8E5M2>, tensor<4x8xf8E5M2FNUZ>, tensor<4x8xf32>, tensor<4x8xf16>)"},
      {"k3_int4",
       "pointwise",
       {"tensor<4x8xf32>", "tensor<4x8xi4>"},
       {"tensor<4x8xi4>", "tensor<4x8xui4>", "tensor<4x8xi2>",
        "tensor<4x8xui2>", "tensor<4x8xi8>", "tensor<4x8xf32>"},
       R"(
    %a = kiln.cast %x0 {to = i4} : (tensor<4x8xf32>) -> tensor<4x8xi4>
    %b = kiln.cast %x0 {to = ui4} : (tensor<4x8xf32>) -> tensor<4x8xui4>
    %c = kiln.cast %x0 {to = i2} : (tensor<4x8xf32>) -> tensor<4x8xi2>
    %d = kiln.cast %x0 {to = ui2} : (tensor<4x8xf32>) -> tensor<4x8xui2>
    %e = kiln.cast %x1 {to = i8} : (tensor<4x8xi4>) -> tensor<4x8xi8>
    %f = kiln.cast %x1 {to = f32} : (tensor<4x8xi4>) -> tensor<4x8xf32>
    kiln.yield %a, %b, %c, %d, %e, %f : tensor<4x8xi4>, tensor<4x8xui4>, tensor<4x8xi2>, tensor<4x8xui2>, tensor<4x8xi8>, tensor<4x8xf32>)",
       -20.0f,
       20.0f},
  });
}

TEST_CASE("unsupported regions get diagnostics, not crashes", "[codegen]") {
  std::string text = fusionText("k0_dyn", "pointwise", {"tensor<?x4xf32>"},
                                {"tensor<?x4xf32>"}, R"(
    %e = kiln.exp %x0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
    kiln.yield %e : tensor<?x4xf32>)");
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  std::string message;
  mlir::ScopedDiagnosticHandler handler(m.ctx.get(), [&](mlir::Diagnostic &d) {
    message += d.str();
    return mlir::success();
  });
  CHECK(mlir::failed(emitCppKernel(m.fusions()[0])));
  CHECK(message.find("static shapes") != std::string::npos);
  CHECK(message.find("--dim") != std::string::npos);
}

TEST_CASE("outputs larger than a last-level cache are stored non-temporally",
          "[codegen]") {
  // A 64 MB f32 output is computed in chunks and streamed; a [4096, 2048]
  // output (32 MB) is stored as usual. Both match the oracle (the SSE2 copy
  // here; the AVX-512 one below where the CPU has it).
  std::string big = "tensor<4096x4096xf32>", half = "tensor<4096x2048xf32>";
  auto relu = [](const std::string &name, const std::string &t) {
    return Case{name,
                "pointwise",
                {t, t},
                {t},
                "    %a = kiln.add %x0, %x1 : (" + t + ", " + t + ") -> " + t +
                    "\n    %r = kiln.relu %a : (" + t + ") -> " + t +
                    "\n    kiln.yield %r : " + t};
  };
  Case streamed = relu("k0_big", big), plain = relu("k1_half", half);
  checkCases({streamed, plain});
  FusionModule m = parseModule(
      fusionText(streamed.name, streamed.kind, streamed.inTypes,
                 streamed.outTypes, streamed.body) +
      fusionText(plain.name, plain.kind, plain.inTypes, plain.outTypes,
                 plain.body));
  REQUIRE(m.module);
  mlir::FailureOr<CppKernel> a = emitCppKernel(m.fusions()[0]),
                             b = emitCppKernel(m.fusions()[1]);
  REQUIRE(mlir::succeeded(a));
  REQUIRE(mlir::succeeded(b));
  INFO(a->definition);
  CHECK(a->definition.find("kiln_c += 256") != std::string::npos);
  CHECK(a->definition.find("kiln_stream_store(&out0[i0*4096 + kiln_c], "
                           "kiln_chunk2, sizeof(kiln_chunk2));") !=
        std::string::npos);
  CHECK(a->definition.find("kiln_stream_fence();") != std::string::npos);
  CHECK(b->definition.find("kiln_stream_store") == std::string::npos);
  if (__builtin_cpu_supports("avx512f")) {
    CompiledKernels lib;
    std::string error;
    if (!lib.build({m.fusions()[0]}, "-O2 -march=x86-64-v4 -fopenmp", error))
      FAIL(error);
    std::mt19937 rng(3);
    std::vector<Tensor> in = {randomTensor(DType::F32, {4096, 4096}, rng),
                              randomTensor(DType::F32, {4096, 4096}, rng)};
    std::vector<Tensor> want = interpret(m.fusions()[0], in);
    std::vector<Tensor> got = lib.run(m.fusions()[0], in);
    CHECK(compareTensors(got[0], want[0], Tolerance{}));
  }
}

TEST_CASE("rows with large outputs are pipelined with non-temporal stores",
          "[codegen]") {
  // Softmax over [1025, 4096] f32 (16 MB and more: an odd row count split
  // over the threads, the max an output stored per row too) and softmax
  // times a second input read in the store loop (row-indexed, so the
  // pending row's index must be used): each row's outputs are stored a row
  // late. LayerNorm over [1024, 4096] then GELU, its mean an output, carries
  // the reciprocal of the deviation to the pending row. [512, 4096] (8 MB)
  // keeps the prefetched schedule; an f16 softmax over [1024, 8192] (16 MB)
  // streams f16 chunks from an f32 cache row.
  std::string axes = "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n";
  auto softmax = [&](const std::string &name, int64_t rows, bool times,
                     const std::string &shape = "x4096xf32>") {
    std::string t = "tensor<" + std::to_string(rows) + shape,
                r = "tensor<" + std::to_string(rows) + "x1" +
                    shape.substr(shape.rfind('x'));
    std::string body =
        axes + "    %m = kiln.reduce_max %x0, %axes " + kReduceAttrs + " : (" +
        t + ", tensor<1xi64>) -> " + r + "\n    %d = kiln.sub %x0, %m : (" + t +
        ", " + r + ") -> " + t + "\n    %e = kiln.exp %d : (" + t + ") -> " +
        t + "\n    %s = kiln.reduce_sum %e, %axes " + kReduceAttrs + " : (" +
        t + ", tensor<1xi64>) -> " + r + "\n    %y = kiln.div %e, %s : (" + t +
        ", " + r + ") -> " + t + "\n";
    if (times)
      return Case{name,
                  "reduction",
                  {t, t},
                  {t},
                  body + "    %z = kiln.mul %y, %x1 : (" + t + ", " + t +
                      ") -> " + t + "\n    kiln.yield %z : " + t};
    return Case{name,
                "reduction",
                {t},
                {t, r},
                body + "    kiln.yield %y, %m : " + t + ", " + r};
  };
  std::string t = "tensor<1024x4096xf32>", r = "tensor<1024x1xf32>",
              w = "tensor<4096xf32>";
  Case layerNormGelu{
      "k2_layer_norm",
      "reduction",
      {t, w, w},
      {t, r},
      axes + "    %mean = kiln.reduce_mean %x0, %axes " + kReduceAttrs +
          " : (" + t + ", tensor<1xi64>) -> " + r +
          "\n    %d = kiln.sub %x0, %mean : (" + t + ", " + r + ") -> " + t +
          "\n    %sq = kiln.mul %d, %d : (" + t + ", " + t + ") -> " + t +
          "\n    %var = kiln.reduce_mean %sq, %axes " + kReduceAttrs + " : (" +
          t + ", tensor<1xi64>) -> " + r +
          "\n    %eps = kiln.constant dense<1.0e-05> : tensor<f32>"
          "\n    %v = kiln.add %var, %eps : (" +
          r + ", tensor<f32>) -> " + r + "\n    %sd = kiln.sqrt %v : (" + r +
          ") -> " + r + "\n    %inv = kiln.reciprocal %sd : (" + r + ") -> " +
          r + "\n    %n = kiln.mul %d, %inv : (" + t + ", " + r + ") -> " + t +
          "\n    %g = kiln.mul %n, %x1 : (" + t + ", " + w + ") -> " + t +
          "\n    %b = kiln.add %g, %x2 : (" + t + ", " + w + ") -> " + t +
          "\n    %y = kiln.gelu %b {approximate = \"none\"} : (" + t + ") -> " +
          t + "\n    kiln.yield %y, %mean : " + t + ", " + r};
  std::vector<Case> cases = {softmax("k0_softmax", 1025, false),
                             softmax("k1_softmax", 1024, true), layerNormGelu,
                             softmax("k3_softmax", 512, false),
                             softmax("k4_softmax", 1024, false, "x8192xf16>")};
  checkCases(cases);
  std::vector<std::string> code;
  for (const Case &c : cases) {
    FusionModule m =
        parseModule(fusionText(c.name, c.kind, c.inTypes, c.outTypes, c.body));
    REQUIRE(m.module);
    mlir::FailureOr<CppKernel> cpp = emitCppKernel(m.fusions()[0]);
    REQUIRE(mlir::succeeded(cpp));
    code.push_back(cpp->definition);
  }
  INFO(code[0]);
  CHECK(code[0].find("#pragma omp for schedule(static) nowait") !=
        std::string::npos);
  CHECK(code[0].find("kiln_stream_store(&out0[kiln_pr*4096 + kiln_c], "
                     "kiln_chunk1, sizeof(kiln_chunk1));") !=
        std::string::npos);
  CHECK(code[0].find("out1[i0] = ") != std::string::npos);
  INFO(code[1]);
  CHECK(code[1].find("in1[kiln_pr*4096 + j0]") != std::string::npos);
  INFO(code[2]);
  // The pending row's block is stored from the cache row before the next
  // row computes into it; the next row is prefetched into L2.
  size_t pendingStore = code[2].find("kiln_stream_store(&out0[kiln_pr*4096");
  CHECK(pendingStore < code[2].find("c0[j0] = "));
  CHECK(
      code[2].find("__builtin_prefetch(&in0[kiln_nx*4096 + kiln_k], 0, 2);") !=
      std::string::npos);
  CHECK(code[2].find(" * kiln_p") != std::string::npos);
  INFO(code[3]);
  CHECK(code[3].find("kiln_stream_store") == std::string::npos);
  CHECK(code[3].find("kiln_nx") != std::string::npos);
  INFO(code[4]);
  CHECK(code[4].find("kiln_stream_store(&out0[kiln_pr*8192 + kiln_c]") !=
        std::string::npos);
}

TEST_CASE("the generated erf is accurate near 0, across the switch and in "
          "the tails",
          "[codegen]") {
  // kiln_erff selects x P(x^2) below 0.921875 and Abramowitz & Stegun
  // above: relative accuracy must hold for tiny arguments (A&S alone gave
  // erf(1e-7) = 0) and on both sides of the switch.
  std::vector<float> xs = {0.0f, 1e-30f, 1e-7f, -3e-6f, 1e-4f, -0.01f};
  for (int i = 0; i <= 4000; ++i)
    xs.push_back(-6.0f + 12.0f * float(i) / 4000.0f);
  for (float d : {-1e-6f, 0.0f, 1e-6f})
    xs.push_back(0.921875f + d), xs.push_back(-0.921875f - d);
  xs.push_back(INFINITY);
  xs.push_back(-INFINITY);
  xs.push_back(NAN);
  std::string t = "tensor<" + std::to_string(xs.size()) + "xf32>";
  FusionModule m =
      parseModule(fusionText("k0_erf", "pointwise", {t}, {t},
                             "    %e = kiln.erf %x0 : (" + t + ") -> " + t +
                                 "\n    kiln.yield %e : " + t));
  REQUIRE(m.module);
  CompiledKernels lib;
  std::string error;
  if (!lib.build(m.fusions(), "-O2 -fopenmp", error))
    FAIL(error << "\n" << lib.source);
  Tensor x = Tensor::fromVector<float>(xs, {int64_t(xs.size())});
  std::vector<Tensor> y = lib.run(m.fusions()[0], {x});
  REQUIRE(y.size() == 1);
  for (size_t i = 0; i < xs.size(); ++i) {
    float got = y[0].data<float>()[i];
    double want = std::erf(double(xs[i]));
    INFO("erf(" << xs[i] << ") = " << got << ", want " << want);
    if (std::isnan(xs[i])) {
      CHECK(std::isnan(got));
      continue;
    }
    // 4.1 ulp at most over [-6, 6] (bench/cuda_ln_gelu_variants.cu's
    // accuracy table): allow 5.
    double ulp = std::nextafter(float(std::fabs(want)), INFINITY) -
                 float(std::fabs(want));
    CHECK(std::fabs(got - want) <= 5 * std::max(ulp, 1e-45));
  }
}

TEST_CASE("generated softmax vs the reference softmax on [4096, 4096]",
          "[.bench]") {
  std::string t = "tensor<4096x4096xf32>", r = "tensor<4096x1xf32>";
  std::string text = fusionText(
      "k0_softmax", "reduction", {t}, {t},
      "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n"
      "    %m = kiln.reduce_max %x0, %axes " +
          std::string(kReduceAttrs) + " : (" + t + ", tensor<1xi64>) -> " + r +
          "\n    %d = kiln.sub %x0, %m : (" + t + ", " + r + ") -> " + t +
          "\n    %e = kiln.exp %d : (" + t + ") -> " + t +
          "\n    %s = kiln.reduce_sum %e, %axes " + kReduceAttrs + " : (" + t +
          ", tensor<1xi64>) -> " + r + "\n    %y = kiln.div %e, %s : (" + t +
          ", " + r + ") -> " + t + "\n    kiln.yield %y : " + t);
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  CompiledKernels lib;
  std::string error;
  if (!lib.build(m.fusions(), "-O3 -march=native -fopenmp", error))
    FAIL(error);
  std::mt19937 rng(1);
  Tensor x = randomTensor(DType::F32, {4096, 4096}, rng);
  auto time = [](auto &&fn) {
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
      auto start = std::chrono::steady_clock::now();
      fn();
      best = std::min(best, std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count());
    }
    return best;
  };
  std::vector<Tensor> generated;
  double gen = time([&] { generated = lib.run(m.fusions()[0], {x}); });
  Attributes attrs;
  attrs.set("axis", AttrValue(int64_t(-1)));
  std::vector<Tensor> ref(1);
  double refMs = time(
      [&] { REQUIRE(Dispatcher::global().call("softmax", {x}, attrs, ref)); });
  CHECK(compareTensors(generated[0], ref[0], Tolerance{}));
  WARN("softmax [4096, 4096] f32: generated " << gen << " ms, reference "
                                              << refMs << " ms (best of 5)");
}

TEST_CASE("degenerate shapes: size-1 and size-0 dims and rank 0 in every "
          "kernel kind",
          "[codegen]") {
  checkCases(degenerateShapeCases<Case>());
}
