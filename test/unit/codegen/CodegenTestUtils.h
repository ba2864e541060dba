//===- CodegenTestUtils.h - Helpers of the code generator tests -*- C++ -*-===//
//
// This file implements the helpers of the kernel tests: building a module
// with one kiln.fusion from the text of its body, a tiny interpreter that
// runs the region op by op through the runtime's reference kernels (the
// oracle), and compiling generated kernels with the host compiler into a
// shared library that the test loads with dlopen and calls through an
// extern "C" thunk per kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_CODEGEN_CODEGENTESTUTILS_H
#define KILN_TEST_UNIT_CODEGEN_CODEGENTESTUTILS_H

#include "targets/cpu/CppKernel.h"
#include "codegen/ExprPrinter.h"
#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/TensorCompare.h"
#include "passes/TensorConversion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace kiln {
namespace test {

/// A parsed module holding kiln.fusion ops.
struct FusionModule {
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  /// The fusion ops in program order.
  std::vector<FusionOp> fusions() {
    std::vector<FusionOp> ops;
    module->walk([&](FusionOp op) { ops.push_back(op); });
    return ops;
  }
};

/// Parses MLIR text (kiln and func dialects); null module on error.
inline FusionModule parseModule(const std::string &text) {
  FusionModule m;
  m.ctx = std::make_unique<mlir::MLIRContext>();
  m.ctx->loadDialect<KilnDialect, mlir::func::FuncDialect>();
  m.module = mlir::parseSourceString<mlir::ModuleOp>(text, m.ctx.get());
  return m;
}

/// The text of a function holding one fusion `name` whose block arguments
/// are %x0, %x1, ... of `inTypes`, with `body` (ending in kiln.yield) and
/// results of `outTypes`.
inline std::string fusionText(const std::string &name, const std::string &kind,
                              const std::vector<std::string> &inTypes,
                              const std::vector<std::string> &outTypes,
                              const std::string &body) {
  auto join = [](const std::vector<std::string> &v, const std::string &pre) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + pre + (pre.empty() ? "" : std::to_string(i)) +
           (pre.empty() ? "" : ": ") + v[i];
    return s;
  };
  std::string args, operands;
  for (size_t i = 0; i < inTypes.size(); ++i) {
    args += (i ? ", " : "") + std::string("%a") + std::to_string(i) + ": " +
            inTypes[i];
    operands += (i ? ", " : "") + std::string("%a") + std::to_string(i);
  }
  std::string results = join(outTypes, "");
  std::string s =
      "func.func @" + name + "(" + args + ") -> (" + results + ") {\n";
  s += "  %r:" + std::to_string(outTypes.size()) + " = kiln.fusion \"" + name +
       "\" ins(" + operands + " : " + join(inTypes, "") + ") kind(\"" + kind +
       "\") {\n  ^bb0(" + join(inTypes, "%x") + "):\n" + body + "\n  } -> (" +
       results + ")\n  return ";
  for (size_t i = 0; i < outTypes.size(); ++i)
    s += (i ? ", " : "") + std::string("%r#") + std::to_string(i);
  s += " : " + results + "\n}\n";
  return s;
}

/// Runs the region of `op` op by op through the runtime's reference kernels.
inline std::vector<Tensor> interpret(FusionOp op,
                                     const std::vector<Tensor> &inputs) {
  llvm::DenseMap<mlir::Value, Tensor> env;
  for (mlir::BlockArgument arg : op.getBody().getArguments())
    env[arg] = inputs[arg.getArgNumber()];
  for (mlir::Operation &inner : op.getBody()) {
    llvm::StringRef name = inner.getName().getStringRef();
    if (name == "kiln.yield") {
      std::vector<Tensor> results;
      for (mlir::Value v : inner.getOperands())
        results.push_back(env[v]);
      return results;
    }
    if (name == "kiln.constant") {
      env[inner.getResult(0)] =
          *toTensor(inner.getAttrOfType<mlir::ElementsAttr>("value"));
      continue;
    }
    std::vector<Tensor> in;
    for (mlir::Value v : inner.getOperands())
      in.push_back(env[v]);
    std::vector<Tensor> out(inner.getNumResults());
    Status st =
        Dispatcher::global().call(name.drop_front(5).str(), in,
                                  toAttributes(inner.getAttrDictionary()), out);
    if (!st)
      throw std::runtime_error("reference kernel failed: " + st.message());
    for (unsigned i = 0; i < inner.getNumResults(); ++i)
      env[inner.getResult(i)] = out[i];
  }
  return {};
}

/// Random values in [lo, hi), converted to `dtype` (floats truncate toward
/// zero for integer dtypes).
inline Tensor randomTensor(DType dtype, const Shape &shape, std::mt19937 &rng,
                           float lo = -4.0f, float hi = 4.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(numElements(shape));
  for (float &v : values)
    v = dist(rng);
  return Tensor::fromVector<float>(values, shape).to(dtype);
}

/// The runtime dtype and shape of a tensor type.
inline std::pair<DType, Shape> typeOf(mlir::Type type) {
  auto t = mlir::cast<mlir::RankedTensorType>(type);
  return {*fromMlirElementType(t.getElementType()),
          Shape(t.getShape().begin(), t.getShape().end())};
}

/// A shared library of generated kernels, each callable through
/// `kiln_test_<name>(void **buffers)`.
class CompiledKernels {
public:
  /// Writes kernels.cpp (plus the thunks), compiles it with `flags` and
  /// loads it; `error` holds the compiler output on failure.
  bool build(const std::vector<FusionOp> &ops, const std::string &flags,
             std::string &error) {
    std::vector<CppKernel> kernels;
    std::string thunks;
    for (FusionOp op : ops) {
      mlir::FailureOr<CppKernel> k = emitCppKernel(op);
      mlir::FailureOr<codegen::Kernel> ir =
          codegen::lowerFusionToKernelIR(op.getOperation());
      if (mlir::failed(k) || mlir::failed(ir)) {
        error = "lowering failed";
        return false;
      }
      kernels.push_back(*k);
      thunks += "extern \"C\" void kiln_test_" + k->name +
                "(void **b) {\n  kiln_kernels::" + k->name + "(";
      for (size_t i = 0; i < ir->buffers.size(); ++i) {
        const codegen::Buffer &buf = ir->buffers[i];
        thunks +=
            std::string(i ? ", " : "") + "(" + (buf.isOutput ? "" : "const ") +
            codegen::storageCType(buf.type) + " *)b[" + std::to_string(i) + "]";
      }
      thunks += ");\n}\n";
    }
    source = emitKernelsFile(kernels, "test") + "\n" + thunks;
    static int counter = 0;
    dir = "/tmp/kiln-codegen-test-" + std::to_string(getpid()) + "-" +
          std::to_string(counter++);
    std::system(("mkdir -p " + dir).c_str());
    std::ofstream(dir + "/kernels.cpp") << source;
    std::string cmd = std::string(KILN_TEST_CXX) + " " + flags +
                      " -shared -fPIC -o " + dir + "/kernels.so " + dir +
                      "/kernels.cpp > " + dir + "/log.txt 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir + "/log.txt");
      error = std::string(std::istreambuf_iterator<char>(log), {});
      return false;
    }
    handle = dlopen((dir + "/kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      error = dlerror();
      return false;
    }
    return true;
  }

  /// The library stays loaded: unloading it would unload libgomp under its
  /// idle worker threads.
  ~CompiledKernels() {
    if (!dir.empty() && !std::getenv("KILN_KEEP_KERNELS"))
      std::system(("rm -rf " + dir).c_str());
  }

  /// Runs kernel `op` on `inputs`; returns its outputs.
  std::vector<Tensor> run(FusionOp op, const std::vector<Tensor> &inputs) {
    auto fn = reinterpret_cast<void (*)(void **)>(
        dlsym(handle, ("kiln_test_" + op.getName()).str().c_str()));
    std::vector<void *> buffers;
    std::vector<Tensor> inCopies, outputs;
    for (const Tensor &t : inputs) {
      inCopies.push_back(t.contiguous());
      buffers.push_back(inCopies.back().rawData());
    }
    for (mlir::Type type : op.getResultTypes()) {
      auto [dtype, shape] = typeOf(type);
      outputs.push_back(Tensor::empty(dtype, shape));
      buffers.push_back(outputs.back().rawData());
    }
    fn(buffers.data());
    return outputs;
  }

  std::string source;

private:
  std::string dir;
  void *handle = nullptr;
};

/// "tensor<2x1x3xf32>" of `shape` (rank 0: "tensor<f32>").
inline std::string f32TensorType(const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

/// The degenerate-shape family, run through both printers (CppKernelTest,
/// CudaEmulationTest) against the reference: pointwise chains, reduce_sum
/// over the last, the first and all axes (keepdims or not; a sum over an
/// empty axis is 0) and softmax rows, over shapes with dims of size 1 and 0
/// and rank 0 (issue 19: a ReduceMean of [1, 1] over axis 1 did not
/// compile). CaseT is each test's case struct: name, kind, input and output
/// types, body, input range.
template <typename CaseT> std::vector<CaseT> degenerateShapeCases() {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {1}, {1, 1}, {1, 5}, {5, 1}, {2, 1, 3}, {0, 3}, {3, 0}, {1, 0, 2}};
  const std::string keepAttrs =
      "{keepdims = 1 : i64, noop_with_empty_axes = 0 : i64}";
  std::vector<CaseT> cases;
  int n = 0;
  auto name = [&](const std::string &what) {
    return "k" + std::to_string(n++) + "_" + what;
  };
  auto reduce = [&](const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &axes, bool keep) {
    std::vector<int64_t> out;
    std::string list, sep;
    for (size_t d = 0; d < shape.size(); ++d) {
      bool reduced = axes.empty() || std::find(axes.begin(), axes.end(),
                                               int64_t(d)) != axes.end();
      if (!reduced)
        out.push_back(shape[d]);
      else if (keep)
        out.push_back(1);
    }
    for (int64_t a : axes)
      list += sep + std::to_string(a), sep = ", ";
    std::string at = "tensor<" + std::to_string(axes.size()) + "xi64>";
    std::string in = f32TensorType(shape), res = f32TensorType(out);
    cases.push_back(CaseT{
        name("sum"), "reduction", {in}, {res},
        "    %axes = kiln.constant dense<[" + list + "]> : " + at +
            "\n    %s = kiln.reduce_sum %x0, %axes {keepdims = " +
            std::to_string(keep ? 1 : 0) +
            " : i64, noop_with_empty_axes = 0 : i64} : (" + in + ", " + at +
            ") -> " + res + "\n    kiln.yield %s : " + res});
  };
  for (const std::vector<int64_t> &s : shapes) {
    std::string t = f32TensorType(s);
    cases.push_back(CaseT{name("exp_mul"), "pointwise", {t}, {t},
                          "    %a = kiln.exp %x0 : (" + t + ") -> " + t +
                              "\n    %y = kiln.mul %a, %x0 : (" + t + ", " +
                              t + ") -> " + t + "\n    kiln.yield %y : " + t,
                          -1.0f, 1.0f});
    reduce(s, {}, false);
    if (s.empty())
      continue;
    int64_t last = static_cast<int64_t>(s.size()) - 1;
    reduce(s, {last}, false);
    reduce(s, {0}, true);
    if (std::find(s.begin(), s.end(), 0) != s.end())
      continue;
    // Softmax over the last axis, decomposed.
    std::vector<int64_t> kept = s;
    kept.back() = 1;
    std::string r = f32TensorType(kept);
    cases.push_back(CaseT{
        name("softmax"), "reduction", {t}, {t},
        "    %axes = kiln.constant dense<[" + std::to_string(last) +
            "]> : tensor<1xi64>\n    %m = kiln.reduce_max %x0, %axes " +
            keepAttrs + " : (" + t + ", tensor<1xi64>) -> " + r +
            "\n    %d = kiln.sub %x0, %m : (" + t + ", " + r + ") -> " + t +
            "\n    %e = kiln.exp %d : (" + t + ") -> " + t +
            "\n    %z = kiln.reduce_sum %e, %axes " + keepAttrs + " : (" + t +
            ", tensor<1xi64>) -> " + r + "\n    %p = kiln.div %e, %z : (" +
            t + ", " + r + ") -> " + t + "\n    kiln.yield %p : " + t});
  }
  return cases;
}

} // namespace test
} // namespace kiln

#endif // KILN_TEST_UNIT_CODEGEN_CODEGENTESTUTILS_H
