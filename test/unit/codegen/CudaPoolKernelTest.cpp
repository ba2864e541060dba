//===- CudaPoolKernelTest.cpp - The printed CUDA max-pool kernel ----------===//
//
// This file implements the tests of emitCudaPoolKernel: which max pools
// it takes (static float ones, 1-3 spatial dims), the text of the kernel (the
// window bounds, the clipped positions, NaN propagation) and that NVRTC
// compiles it. Its numbers are checked on the GPU by the compiled-cuda
// conformance (the ONNX MaxPool node tests) and the ResNet-50 benchmark.
//
//===----------------------------------------------------------------------===//

#include "CodegenTestUtils.h"
#include "targets/cuda/CudaKernel.h"
#include "targets/cuda/NvrtcCompiler.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::test;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// The first op named `name` in the module.
mlir::Operation *findOp(mlir::ModuleOp module, llvm::StringRef name) {
  mlir::Operation *found = nullptr;
  module.walk([&](mlir::Operation *op) {
    if (!found && op->getName().getStringRef() == name)
      found = op;
  });
  return found;
}

} // namespace

TEST_CASE("a max pool prints as a CUDA kernel that NVRTC compiles",
          "[codegen][cuda]") {
  FusionModule m = parseModule(R"(
func.func @f(%x: tensor<2x3x7x7xbf16>, %i: tensor<2x3x6xi64>) -> (tensor<2x3x4x4xbf16>, tensor<2x3x3xi64>) {
  %0 = kiln.max_pool %x {ceil_mode = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x7x7xbf16>) -> tensor<2x3x4x4xbf16>
  %1 = kiln.max_pool %i {ceil_mode = 0 : i64, dilations = array<i64: 1>, kernel_shape = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<2x3x6xi64>) -> tensor<2x3x3xi64>
  return %0, %1 : tensor<2x3x4x4xbf16>, tensor<2x3x3xi64>
}
)");
  REQUIRE(m.module);
  mlir::Operation *pool = findOp(*m.module, "kiln.max_pool");
  REQUIRE(pool);
  std::optional<CudaKernel> k = emitCudaPoolKernel(pool, "p0_max_pool");
  REQUIRE(k);
  INFO(k->definition);
  CHECK(k->name == "p0_max_pool");
  CHECK(k->block[0] == 256);
  CHECK(contains(k->definition,
                 "p0_max_pool(const kiln_bf16 *__restrict__ in0, kiln_bf16 "
                 "*__restrict__ out0)"));
  CHECK(contains(k->definition, "kiln_i < 96LL")); // 2 * 3 * 4 * 4 outputs
  CHECK(contains(k->definition, "const int p0 = o0 * 2 - 1 + k0 * 1;"));
  CHECK(contains(k->definition, "if (p1 < 0 || p1 >= 7)"));
  CHECK(contains(k->definition, "kiln_x[p0 * 7 + p1]"));
  CHECK(contains(k->definition, "kiln_nan |= kiln_v != kiln_v;"));

  // An integer max starts from the type's lowest value, with no NaN test.
  mlir::Operation *intPool = pool->getNextNode();
  REQUIRE(intPool);
  std::optional<CudaKernel> ik = emitCudaPoolKernel(intPool, "p1_max_pool");
  REQUIRE(ik);
  CHECK(!contains(ik->definition, "kiln_nan"));
  CHECK(!contains(ik->definition, "INFINITY"));

  if (!haveNvrtc()) {
    WARN("NVRTC unavailable: the kernel was printed, not compiled");
    return;
  }
  std::string file = emitCudaKernelsFile({*k}, "pool");
  mlir::FailureOr<CudaBinary> binary = compileCudaSource(
      file, "kernels.cu", {*k}, mlir::UnknownLoc::get(m.ctx.get()));
  REQUIRE(mlir::succeeded(binary));
  INFO(binary->log);
  CHECK(binary->log.empty());
  CHECK(contains(binary->ptx, ".entry p0_max_pool"));
}
