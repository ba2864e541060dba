//===- GradientCheckTest.cpp - Gradient rules vs finite differences -------===//
//
// This file implements the gradient checks of every gradient rule
// (ir/GradientRules.cpp): for each case — one op, or a few, in float64 with
// shapes that broadcast and have size-1 dims — the loss sum(y * R) (R a
// fixed random tensor) is differentiated by kiln-autodiff, the joint graph
// runs on the reference runtime, and each gradient element is compared
// with a central finite difference of the loss computed by the same
// runtime. A rule that is wrong, or builds ops of the wrong shape, fails
// here naming the case, the argument and the element.
//
//===----------------------------------------------------------------------===//

#include "compiler/ProgramBuilder.h"
#include "ir/KilnDialect.h"
#include "ir/KilnOpBuilder.h"
#include "ir/KilnOps.h"
#include "kiln/runtime/Executor.h"
#include "passes/TrainingPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace kiln;

namespace {

/// One gradient check: `body` computes %y from the arguments `args` (all
/// trainable, float64); inputs are drawn uniformly from [lo, hi].
struct GradientCase {
  std::string name;
  std::string args; ///< "%x: tensor<2x3xf64>, %w: tensor<3xf64>"
  std::string body; ///< ops ending in a value named %y
  std::string yType;
  double lo = -1.0, hi = 1.0;
};

/// `%x: tensor<...>` -> `%x: tensor<...> {kiln.name = "x", kiln.trainable}`.
std::string trainableArgs(const std::string &args) {
  std::string out;
  size_t pos = 0;
  while (pos < args.size()) {
    size_t comma = args.find(", %", pos);
    std::string arg = args.substr(pos, comma == std::string::npos
                                           ? std::string::npos
                                           : comma - pos);
    std::string name = arg.substr(1, arg.find(':') - 1);
    out += (out.empty() ? "" : ", ") + arg + " {kiln.name = \"" + name +
           "\", kiln.trainable}";
    if (comma == std::string::npos)
      break;
    pos = comma + 2;
  }
  return out;
}

int64_t elementsOf(const std::string &type) {
  // tensor<2x3xf64> / tensor<f64>
  int64_t n = 1;
  std::string dims = type.substr(7, type.size() - 8);
  size_t pos = 0;
  while (true) {
    size_t x = dims.find('x', pos);
    if (x == std::string::npos)
      break;
    n *= std::stoll(dims.substr(pos, x - pos));
    pos = x + 1;
  }
  return n;
}

/// "2, 3" of tensor<2x3xf64>.
std::string dimsOf(const std::string &type) {
  std::string dims = type.substr(7, type.size() - 8), out;
  size_t pos = 0;
  while (true) {
    size_t x = dims.find('x', pos);
    if (x == std::string::npos)
      break;
    out += (out.empty() ? "" : ", ") + dims.substr(pos, x - pos);
    pos = x + 1;
  }
  return out;
}

int64_t rankOf(const std::string &type) {
  int64_t rank = 0;
  for (char ch : type)
    rank += ch == 'x';
  return rank;
}

/// The module of a case: loss = reduce_sum(y * R).
std::string caseModule(const GradientCase &c, const std::string &weights) {
  return "func.func @main(" + trainableArgs(c.args) +
         ") -> (tensor<f64> {kiln.name = \"loss\"}) attributes {kiln.graph} "
         "{\n" +
         c.body + "\n  %r0 = kiln.constant " + weights + " : tensor<" +
         std::to_string(elementsOf(c.yType)) + "xf64>\n  %rs = kiln.constant "
         "dense<[" + dimsOf(c.yType) + "]> : tensor<" +
         std::to_string(rankOf(c.yType)) + "xi64>\n  %r = kiln.reshape %r0, "
         "%rs {allowzero = 0 : i64} : (tensor<" +
         std::to_string(elementsOf(c.yType)) + "xf64>, tensor<" +
         std::to_string(rankOf(c.yType)) + "xi64>) -> " + c.yType +
         "\n  %yr = kiln.mul %y, %r : (" + c.yType + ", " + c.yType +
         ") -> " + c.yType + "\n  %axes = kiln.constant dense<[]> : " +
         "tensor<0xi64>\n  %loss = kiln.reduce_sum %yr, %axes {keepdims = 0 "
         ": i64, noop_with_empty_axes = 0 : i64} : (" +
         c.yType + ", tensor<0xi64>) -> tensor<f64>\n  return %loss : "
         "tensor<f64>\n}\n";
}

/// dense<[...]> of `n` random values for the loss weights.
std::string randomDense(int64_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::string s = "dense<[";
  for (int64_t i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(d(rng));
  return s + "]>";
}

void checkGradients(const GradientCase &c) {
  INFO("case " << c.name);
  std::mt19937 rng(1234);
  mlir::MLIRContext ctx;
  ctx.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  std::string source = caseModule(c, randomDense(elementsOf(c.yType), rng));
  INFO(source);
  mlir::OwningOpRef<mlir::ModuleOp> forward =
      mlir::parseSourceString<mlir::ModuleOp>(source, &ctx);
  REQUIRE(forward);
  mlir::OwningOpRef<mlir::ModuleOp> joint = forward->clone();
  mlir::PassManager pm(&ctx);
  pm.enableVerifier(true);
  pm.addPass(createAutodiffPass());
  REQUIRE(mlir::succeeded(pm.run(*joint)));

  Expected<Program> lossProgram = buildProgram(findGraphFunction(*forward));
  REQUIRE(lossProgram.isOk());
  mlir::func::FuncOp jointFunc;
  for (auto f : joint->getOps<mlir::func::FuncOp>())
    jointFunc = f;
  Expected<Program> jointProgram = buildProgram(jointFunc);
  REQUIRE(jointProgram.isOk());

  // Random inputs.
  std::uniform_real_distribution<double> d(c.lo, c.hi);
  NamedTensors inputs;
  for (const ValueSignature &sig : lossProgram->inputs) {
    Tensor t = Tensor::empty(DType::F64, sig.shape);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.data<double>()[i] = d(rng);
    inputs.emplace_back(sig.name, t);
  }
  Expected<NamedTensors> analytic = runProgram(*jointProgram, inputs);
  REQUIRE(analytic.isOk());
  auto lossAt = [&](const NamedTensors &in) {
    Expected<NamedTensors> out = runProgram(*lossProgram, in);
    REQUIRE(out.isOk());
    return (*out)[0].second.data<double>()[0];
  };
  const double h = 1e-6;
  for (size_t a = 0; a < inputs.size(); ++a) {
    const Tensor &grad = (*analytic)[a + 1].second;
    REQUIRE(grad.numel() == inputs[a].second.numel());
    for (int64_t i = 0; i < grad.numel(); ++i) {
      NamedTensors plus = inputs, minus = inputs;
      plus[a].second = inputs[a].second.clone();
      minus[a].second = inputs[a].second.clone();
      plus[a].second.data<double>()[i] += h;
      minus[a].second.data<double>()[i] -= h;
      double fd = (lossAt(plus) - lossAt(minus)) / (2 * h);
      double g = grad.data<double>()[i];
      INFO("argument " << inputs[a].first << " element " << i << ": rule "
                       << g << ", finite difference " << fd);
      CHECK(std::abs(g - fd) <= 1e-6 + 1e-5 * std::abs(fd));
    }
  }
}

/// A unary elementwise op on a [2, 3] tensor.
GradientCase unaryCase(const std::string &op, double lo = -1.0,
                       double hi = 1.0, const std::string &attrs = "") {
  return {op, "%x: tensor<2x3xf64>",
          "  %y = kiln." + op + " %x " + attrs +
              " : (tensor<2x3xf64>) -> tensor<2x3xf64>",
          "tensor<2x3xf64>", lo, hi};
}

/// A binary elementwise op broadcasting [2, 1, 3] with [4, 1].
GradientCase binaryCase(const std::string &op, double lo = -1.0,
                        double hi = 1.0) {
  return {op + " (broadcast)", "%a: tensor<2x1x3xf64>, %b: tensor<4x1xf64>",
          "  %y = kiln." + op +
              " %a, %b : (tensor<2x1x3xf64>, tensor<4x1xf64>) -> "
              "tensor<2x4x3xf64>",
          "tensor<2x4x3xf64>", lo, hi};
}

} // namespace

TEST_CASE("gradient rules of binary ops match finite differences",
          "[gradients]") {
  for (const GradientCase &c :
       {binaryCase("add"), binaryCase("sub"), binaryCase("mul"),
        binaryCase("div", 0.5, 2.0), binaryCase("pow", 0.5, 2.0),
        binaryCase("max"), binaryCase("min")})
    checkGradients(c);
}

TEST_CASE("gradient rules of unary ops match finite differences",
          "[gradients]") {
  for (const GradientCase &c : {
           unaryCase("neg"),
           unaryCase("abs", 0.1, 1.0),
           unaryCase("exp"),
           unaryCase("log", 0.5, 2.0),
           unaryCase("sqrt", 0.5, 2.0),
           unaryCase("reciprocal", 0.5, 2.0),
           unaryCase("sin"),
           unaryCase("cos"),
           unaryCase("tan"),
           unaryCase("asin", -0.8, 0.8),
           unaryCase("acos", -0.8, 0.8),
           unaryCase("atan"),
           unaryCase("sinh"),
           unaryCase("cosh"),
           unaryCase("asinh"),
           unaryCase("acosh", 1.5, 3.0),
           unaryCase("atanh", -0.8, 0.8),
           unaryCase("erf"),
           unaryCase("tanh"),
           unaryCase("sigmoid"),
           unaryCase("relu", 0.1, 1.0),
           unaryCase("relu", -1.0, -0.1),
           unaryCase("leaky_relu", -1.0, 1.0, "{alpha = 0.1 : f32}"),
           unaryCase("elu", -1.0, 1.0, "{alpha = 0.7 : f32}"),
           unaryCase("celu", -1.0, 1.0, "{alpha = 0.7 : f32}"),
           unaryCase("selu", -1.0, 1.0,
                     "{alpha = 1.67 : f32, gamma = 1.05 : f32}"),
           unaryCase("softplus"),
           unaryCase("softsign"),
           unaryCase("swish", -1.0, 1.0, "{alpha = 1.5 : f32}"),
           unaryCase("mish"),
           unaryCase("hard_sigmoid", -1.0, 1.0,
                     "{alpha = 0.2 : f32, beta = 0.5 : f32}"),
           unaryCase("hard_swish", -4.0, 4.0),
           unaryCase("thresholded_relu", -1.0, 1.0, "{alpha = 0.3 : f32}"),
           unaryCase("gelu", -2.0, 2.0, "{approximate = \"none\"}"),
           unaryCase("gelu", -2.0, 2.0, "{approximate = \"tanh\"}"),
           unaryCase("floor", 0.1, 0.9),
       })
    checkGradients(c);
}

TEST_CASE("gradient rules of linear algebra and normalization match finite "
          "differences",
          "[gradients]") {
  for (const GradientCase &c : std::vector<GradientCase>{
           {"matmul 2-D", "%a: tensor<2x3xf64>, %b: tensor<3x4xf64>",
            "  %y = kiln.matmul %a, %b : (tensor<2x3xf64>, tensor<3x4xf64>) "
            "-> tensor<2x4xf64>",
            "tensor<2x4xf64>"},
           {"matmul batch x weight",
            "%a: tensor<2x2x3xf64>, %b: tensor<3x4xf64>",
            "  %y = kiln.matmul %a, %b : (tensor<2x2x3xf64>, tensor<3x4xf64>) "
            "-> tensor<2x2x4xf64>",
            "tensor<2x2x4xf64>"},
           {"matmul batch broadcast",
            "%a: tensor<2x1x2x3xf64>, %b: tensor<3x3x2xf64>",
            "  %y = kiln.matmul %a, %b : (tensor<2x1x2x3xf64>, "
            "tensor<3x3x2xf64>) -> tensor<2x3x2x2xf64>",
            "tensor<2x3x2x2xf64>"},
           {"matmul vector x matrix", "%a: tensor<3xf64>, %b: tensor<3x4xf64>",
            "  %y = kiln.matmul %a, %b : (tensor<3xf64>, tensor<3x4xf64>) -> "
            "tensor<4xf64>",
            "tensor<4xf64>"},
           {"matmul matrix x vector", "%a: tensor<2x3xf64>, %b: tensor<3xf64>",
            "  %y = kiln.matmul %a, %b : (tensor<2x3xf64>, tensor<3xf64>) -> "
            "tensor<2xf64>",
            "tensor<2xf64>"},
           {"softmax", "%x: tensor<2x4xf64>",
            "  %y = kiln.softmax %x {axis = 1 : i64} : (tensor<2x4xf64>) -> "
            "tensor<2x4xf64>",
            "tensor<2x4xf64>"},
           // Flash attention's backward (kiln.attention_grad): Tq != Tk
           // and Dv != D, then causal, then q, k, v packed in one tensor
           // (batch-first, then seq-first).
           {"attention",
            "%q: tensor<1x2x3x4xf64>, %k: tensor<1x2x5x4xf64>, %v: "
            "tensor<1x2x5x3xf64>",
            "  %y, %lse = kiln.attention %q, %k, %v {causal = 0 : i64, scale = "
            "0.5 : f32} : (tensor<1x2x3x4xf64>, tensor<1x2x5x4xf64>, "
            "tensor<1x2x5x3xf64>) -> (tensor<1x2x3x3xf64>, tensor<1x2x3xf64>)",
            "tensor<1x2x3x3xf64>"},
           {"attention (causal)",
            "%q: tensor<2x1x4x2xf64>, %k: tensor<2x1x4x2xf64>, %v: "
            "tensor<2x1x4x2xf64>",
            "  %y, %lse = kiln.attention %q, %k, %v {causal = 1 : i64, scale = "
            "0.75 : f32} : (tensor<2x1x4x2xf64>, tensor<2x1x4x2xf64>, "
            "tensor<2x1x4x2xf64>) -> (tensor<2x1x4x2xf64>, tensor<2x1x4xf64>)",
            "tensor<2x1x4x2xf64>"},
           {"packed_attention (causal)", "%qkv: tensor<1x3x12xf64>",
            "  %y, %lse = kiln.packed_attention %qkv {causal = 1 : i64, heads "
            "= "
            "2 : i64, scale = 0.5 : f32} : (tensor<1x3x12xf64>) -> "
            "(tensor<1x3x2x2xf64>, tensor<1x2x3xf64>)",
            "tensor<1x3x2x2xf64>"},
           // Seq-first ([T, B, 3 * H * D]): the rule transposes around the
           // batch-first backward op.
           {"packed_attention (seq_first)", "%qkv: tensor<3x2x12xf64>",
            "  %y, %lse = kiln.packed_attention %qkv {causal = 0 : i64, heads "
            "= 2 : i64, layout = \"seq_first\", scale = 0.5 : f32} : "
            "(tensor<3x2x12xf64>) -> (tensor<3x2x2x2xf64>, tensor<2x2x3xf64>)",
            "tensor<3x2x2x2xf64>"},
           {"log_softmax", "%x: tensor<2x4xf64>",
            "  %y = kiln.log_softmax %x {axis = 0 : i64} : (tensor<2x4xf64>) "
            "-> tensor<2x4xf64>",
            "tensor<2x4xf64>"},
           {"layer_norm",
            "%x: tensor<2x5xf64>, %s: tensor<5xf64>, %b: tensor<5xf64>",
            "  %y, %m, %i = kiln.layer_norm %x, %s, %b {axis = 1 : i64, "
            "epsilon = 1.0e-05 : f32} : (tensor<2x5xf64>, tensor<5xf64>, "
            "tensor<5xf64>) -> (tensor<2x5xf64>, tensor<2x1xf64>, "
            "tensor<2x1xf64>)",
            "tensor<2x5xf64>"},
           {"rms_norm", "%x: tensor<2x5xf64>, %s: tensor<5xf64>",
            "  %y = kiln.rms_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : "
            "f32} : (tensor<2x5xf64>, tensor<5xf64>) -> tensor<2x5xf64>",
            "tensor<2x5xf64>"},
           {"batch_norm",
            "%x: tensor<2x3x2xf64>, %s: tensor<3xf64>, %b: tensor<3xf64>, %m: "
            "tensor<3xf64>, %v: tensor<3xf64>",
            "  %y = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : "
            "f32} : (tensor<2x3x2xf64>, tensor<3xf64>, tensor<3xf64>, "
            "tensor<3xf64>, tensor<3xf64>) -> tensor<2x3x2xf64>",
            "tensor<2x3x2xf64>", 0.5, 1.5},
           {"conv 2-D, stride 2, pads",
            "%x: tensor<1x2x5x5xf64>, %w: tensor<3x2x3x3xf64>",
            "  %y = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 "
            ": i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, "
            "2>} : (tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) -> "
            "tensor<1x3x3x3xf64>",
            "tensor<1x3x3x3xf64>"},
           {"conv, 2 groups, dilation 2",
            "%x: tensor<1x4x5x5xf64>, %w: tensor<4x2x2x2xf64>",
            "  %y = kiln.conv %x, %w {dilations = array<i64: 2, 2>, group = 2 "
            ": i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, "
            "1>} : (tensor<1x4x5x5xf64>, tensor<4x2x2x2xf64>) -> "
            "tensor<1x4x3x3xf64>",
            "tensor<1x4x3x3xf64>"},
           {"conv_transpose, stride 2, pads, output padding",
            "%x: tensor<1x2x3x3xf64>, %w: tensor<2x3x3x3xf64>",
            "  %y = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, "
            "group = 1 : i64, output_padding = array<i64: 1, 1>, pads = "
            "array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : "
            "(tensor<1x2x3x3xf64>, tensor<2x3x3x3xf64>) -> tensor<1x3x6x6xf64>",
            "tensor<1x3x6x6xf64>"},
           {"conv_transpose, 2 groups",
            "%x: tensor<2x4x3x3xf64>, %w: tensor<4x1x2x2xf64>",
            "  %y = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, "
            "group = 2 : i64, output_padding = array<i64: 0, 0>, pads = "
            "array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : "
            "(tensor<2x4x3x3xf64>, tensor<4x1x2x2xf64>) -> tensor<2x2x4x4xf64>",
            "tensor<2x2x4x4xf64>"},
           {"avg_pool 3x3, stride 2, pads", "%x: tensor<1x2x5x5xf64>",
            "  %y = kiln.avg_pool %x {ceil_mode = 0 : i64, count_include_pad "
            "= 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = "
            "array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = "
            "array<i64: 2, 2>} : (tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64>",
            "tensor<1x2x3x3xf64>"},
           {"max_pool 2x2", "%x: tensor<1x2x4x6xf64>",
            "  %y = kiln.max_pool %x {ceil_mode = 0 : i64, dilations = "
            "array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = "
            "array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : "
            "(tensor<1x2x4x6xf64>) -> tensor<1x2x2x3xf64>",
            "tensor<1x2x2x3xf64>"},
       })
    checkGradients(c);
}

TEST_CASE("gradient rules of reductions and data movement match finite "
          "differences",
          "[gradients]") {
  for (const GradientCase &c : std::vector<GradientCase>{
           {"reduce_sum keepdims", "%x: tensor<2x3x1xf64>",
            "  %a = kiln.constant dense<[1]> : tensor<1xi64>\n"
            "  %y = kiln.reduce_sum %x, %a {keepdims = 1 : i64, "
            "noop_with_empty_axes = 0 : i64} : (tensor<2x3x1xf64>, "
            "tensor<1xi64>) -> tensor<2x1x1xf64>",
            "tensor<2x1x1xf64>"},
           {"reduce_mean", "%x: tensor<2x3xf64>",
            "  %a = kiln.constant dense<[-1]> : tensor<1xi64>\n"
            "  %y = kiln.reduce_mean %x, %a {keepdims = 0 : i64, "
            "noop_with_empty_axes = 0 : i64} : (tensor<2x3xf64>, "
            "tensor<1xi64>) -> tensor<2xf64>",
            "tensor<2xf64>"},
           {"reduce_max", "%x: tensor<2x3xf64>",
            "  %a = kiln.constant dense<[1]> : tensor<1xi64>\n"
            "  %y = kiln.reduce_max %x, %a {keepdims = 0 : i64, "
            "noop_with_empty_axes = 0 : i64} : (tensor<2x3xf64>, "
            "tensor<1xi64>) -> tensor<2xf64>",
            "tensor<2xf64>"},
           {"reshape, transpose", "%x: tensor<2x3xf64>",
            "  %s = kiln.constant dense<[3, 2]> : tensor<2xi64>\n"
            "  %t = kiln.reshape %x, %s {allowzero = 0 : i64} : "
            "(tensor<2x3xf64>, tensor<2xi64>) -> tensor<3x2xf64>\n"
            "  %y = kiln.transpose %t {perm = array<i64: 1, 0>} : "
            "(tensor<3x2xf64>) -> tensor<2x3xf64>",
            "tensor<2x3xf64>"},
           {"expand", "%x: tensor<3x1xf64>",
            "  %s = kiln.constant dense<[2, 3, 4]> : tensor<3xi64>\n"
            "  %y = kiln.expand %x, %s : (tensor<3x1xf64>, tensor<3xi64>) -> "
            "tensor<2x3x4xf64>",
            "tensor<2x3x4xf64>"},
           {"slice", "%x: tensor<4x5xf64>",
            "  %st = kiln.constant dense<[1, -4]> : tensor<2xi64>\n"
            "  %en = kiln.constant dense<[3, 100]> : tensor<2xi64>\n"
            "  %ax = kiln.constant dense<[0, 1]> : tensor<2xi64>\n"
            "  %sp = kiln.constant dense<[1, 1]> : tensor<2xi64>\n"
            "  %y = kiln.slice %x, %st, %en, %ax, %sp : (tensor<4x5xf64>, "
            "tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> "
            "tensor<2x4xf64>",
            "tensor<2x4xf64>"},
           {"concat, split", "%a: tensor<2x2xf64>, %b: tensor<2x3xf64>",
            "  %c = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x2xf64>, "
            "tensor<2x3xf64>) -> tensor<2x5xf64>\n"
            "  %sz = kiln.constant dense<[1, 4]> : tensor<2xi64>\n"
            "  %p:2 = kiln.split %c, %sz {axis = 1 : i64} : (tensor<2x5xf64>, "
            "tensor<2xi64>) -> (tensor<2x1xf64>, tensor<2x4xf64>)\n"
            "  %y = kiln.mul %p#1, %p#1 : (tensor<2x4xf64>, tensor<2x4xf64>) "
            "-> tensor<2x4xf64>",
            "tensor<2x4xf64>"},
           {"pad", "%x: tensor<2x3xf64>",
            "  %p = kiln.constant dense<[1, 0, 0, 2]> : tensor<4xi64>\n"
            "  %v = kiln.constant dense<0.5> : tensor<f64>\n"
            "  %y = kiln.pad %x, %p, %v {mode = \"constant\"} : "
            "(tensor<2x3xf64>, tensor<4xi64>, tensor<f64>) -> tensor<3x5xf64>",
            "tensor<3x5xf64>"},
           {"tile", "%x: tensor<2x3xf64>",
            "  %rep = kiln.constant dense<[2, 1]> : tensor<2xi64>\n"
            "  %y = kiln.tile %x, %rep : (tensor<2x3xf64>, tensor<2xi64>) -> "
            "tensor<4x3xf64>",
            "tensor<4x3xf64>"},
           {"gather (embedding, repeated and negative indices)",
            "%x: tensor<5x3xf64>",
            "  %i = kiln.constant dense<[[0, 4], [-1, 2]]> : tensor<2x2xi64>\n"
            "  %y = kiln.gather %x, %i {axis = 0 : i64} : (tensor<5x3xf64>, "
            "tensor<2x2xi64>) -> tensor<2x2x3xf64>",
            "tensor<2x2x3xf64>"},
           {"gather along axis 1", "%x: tensor<2x4x3xf64>",
            "  %i = kiln.constant dense<[3, 0, 3]> : tensor<3xi64>\n"
            "  %y = kiln.gather %x, %i {axis = 1 : i64} : (tensor<2x4x3xf64>, "
            "tensor<3xi64>) -> tensor<2x3x3xf64>",
            "tensor<2x3x3xf64>"},
           {"gather_elements", "%x: tensor<2x3xf64>",
            "  %i = kiln.constant dense<[[0, 2], [1, 1]]> : tensor<2x2xi64>\n"
            "  %y = kiln.gather_elements %x, %i {axis = 1 : i64} : "
            "(tensor<2x3xf64>, tensor<2x2xi64>) -> tensor<2x2xf64>",
            "tensor<2x2xf64>"},
           {"where", "%x: tensor<2x3xf64>, %z: tensor<3xf64>",
            "  %c = kiln.constant dense<[true, false, true]> : tensor<3xi1>\n"
            "  %y = kiln.where %c, %x, %z : (tensor<3xi1>, tensor<2x3xf64>, "
            "tensor<3xf64>) -> tensor<2x3xf64>",
            "tensor<2x3xf64>"},
           // A cast through f64 -> f64 keeps the differences exact (through
           // f32 they would measure f32 rounding, not the rule).
           {"cast", "%x: tensor<2x3xf64>",
            "  %y = kiln.cast %x {to = f64} : (tensor<2x3xf64>) -> "
            "tensor<2x3xf64>",
            "tensor<2x3xf64>"},
           {"trilu", "%x: tensor<3x3xf64>",
            "  %k = kiln.constant dense<0> : tensor<i64>\n"
            "  %y = kiln.trilu %x, %k {upper = 1 : i64} : (tensor<3x3xf64>, "
            "tensor<i64>) -> tensor<3x3xf64>",
            "tensor<3x3xf64>"},
       })
    checkGradients(c);
}
