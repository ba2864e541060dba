//===- CudaOpKernelTest.cpp - Kernels of single ops run on the host -------===//
//
// This file implements the numerical tests of the kernels the CUDA target
// prints for single top-level ops (CudaOpKernels.cpp's table: gather,
// resize, conv_transpose, depthwise conv, avg_pool, gather_elements,
// attention (f32, and f16/bf16 with emulated MMA) and its gradient,
// argmax/argmin, cumsum/cumprod, einsum, gather_nd, scatter_nd,
// matmul, pad, gru_recurrence, lstm_recurrence, concat,
// max_pool) on a machine without a GPU: each case is a function with one such
// op whose operands are its arguments (random values) or constants; the op's
// kernel is printed, built for the emulation (CudaEmulation.h), run with a grid
// smaller than the printer's (the kernels grid-stride), and its output compared
// with the runtime's reference kernel of the op on the same operands. NVRTC
// compiles the same kernels (the last test), and the compiled-cuda conformance
// checks them on the GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaEmulation.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::test;

namespace {

/// One op of a test: the function's text, and the range of its random
/// arguments (integer arguments truncate toward zero).
struct OpCase {
  std::string name;
  std::string function;
  float lo = -4.0f, hi = 4.0f;
  /// The comparison's tolerance when not the result type's default.
  std::optional<Tolerance> tolerance = std::nullopt;
};

/// The one op of `func` that is not a kiln.constant or the return.
mlir::Operation *theOp(mlir::func::FuncOp func) {
  for (mlir::Operation &op : func.getBody().front())
    if (!mlir::isa<ConstantOp, mlir::func::ReturnOp>(op))
      return &op;
  return nullptr;
}

/// Prints each case's op kernel, runs it emulated and compares it with the
/// reference kernel.
void checkOpCases(const std::vector<OpCase> &cases, unsigned maxGrid = 2) {
  std::string text;
  for (const OpCase &c : cases)
    text += c.function + "\n";
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  std::vector<mlir::Operation *> ops;
  std::vector<CudaKernel> kernels;
  std::string thunks;
  size_t index = 0;
  for (auto func : m.module->getOps<mlir::func::FuncOp>()) {
    mlir::Operation *op = theOp(func);
    REQUIRE(op);
    const std::string &name = cases[index++].name;
    std::optional<CudaKernel> k = emitCudaOpKernel(op, name);
    INFO("op " << op->getName().getStringRef().str() << " of " << name);
    REQUIRE(k);
    ops.push_back(op);
    kernels.push_back(*k);
    // A kernel of a recurrence is launched once per step, the step its
    // last argument.
    bool stepped = k->launches > 1;
    thunks += "extern \"C\" void kiln_emu_" + k->name + "(void **b) {\n" +
              (stepped ? "  for (int s = 0; s < " +
                             std::to_string(k->launches) + "; ++s)\n"
                       : "") +
              "  kiln_emu_launch(" +
              std::to_string(k->gridStride ? std::min(k->grid[0], maxGrid)
                                           : k->grid[0]) +
              ", " +
              std::to_string(k->block[0]) + ", [=] { " + k->name + "(";
    std::string gridYZ =
        std::to_string(k->grid[1]) + ", " + std::to_string(k->grid[2]);
    // The kernel's parameters: the operands, then the result (casts to
    // the parameter types through void *, which every pointer accepts).
    size_t n = op->getNumOperands() + op->getNumResults();
    for (size_t i = 0; i < n; ++i) {
      mlir::Type type = i < op->getNumOperands()
                            ? op->getOperand(i).getType()
                            : op->getResult(i - op->getNumOperands()).getType();
      std::string ctype = codegen::storageCType(*codegen::scalarTypeOf(
          mlir::cast<mlir::RankedTensorType>(type).getElementType()));
      thunks += std::string(i ? ", " : "") + "(" +
                (i < op->getNumOperands() ? "const " : "") + ctype + " *)b[" +
                std::to_string(i) + "]";
    }
    thunks += std::string(stepped ? ", s" : "") + "); }, " + gridYZ + ");\n}\n";
  }
  std::string dir;
  void *handle = buildEmulation(kernels, thunks, dir);
  std::mt19937 rng(11);
  for (size_t i = 0; i < ops.size(); ++i) {
    mlir::Operation *op = ops[i];
    INFO("kernel " << kernels[i].name << "\n" << kernels[i].definition);
    auto fn = reinterpret_cast<void (*)(void **)>(
        dlsym(handle, ("kiln_emu_" + kernels[i].name).c_str()));
    REQUIRE(fn);
    std::vector<Tensor> operands;
    for (mlir::Value v : op->getOperands()) {
      if (auto c = v.getDefiningOp<ConstantOp>()) {
        operands.push_back(*toTensor(c.getValue()));
        continue;
      }
      auto [dtype, shape] = typeOf(v.getType());
      operands.push_back(
          randomTensor(dtype, shape, rng, cases[i].lo, cases[i].hi));
    }
    std::vector<Tensor> expected(op->getNumResults());
    Status st = Dispatcher::global().call(
        op->getName().getStringRef().drop_front(5).str(), operands,
        toAttributes(op->getAttrDictionary()), expected);
    INFO("reference: " << st.message());
    REQUIRE(st);
    std::vector<std::vector<char>> storage;
    std::vector<void *> buffers;
    for (const Tensor &t : operands) {
      Tensor c = t.contiguous();
      storage.emplace_back(c.numel() * dtypeSize(c.dtype()) + 64);
      std::memcpy(storage.back().data(), c.rawData(),
                  c.numel() * dtypeSize(c.dtype()));
      buffers.push_back(storage.back().data());
    }
    std::vector<Tensor> outs;
    for (const Tensor &e : expected) {
      outs.push_back(Tensor::empty(e.dtype(), e.shape()));
      storage.emplace_back(e.numel() * dtypeSize(e.dtype()) + 64);
      buffers.push_back(storage.back().data());
    }
    fn(buffers.data());
    for (size_t r = 0; r < outs.size(); ++r) {
      Tensor &out = outs[r];
      std::memcpy(out.rawData(), buffers[operands.size() + r],
                  out.numel() * dtypeSize(out.dtype()));
      Status cmp = compareTensors(
          out, expected[r],
          cases[i].tolerance.value_or(defaultTolerance(out.dtype())));
      INFO("result " << r << ": " << cmp.message());
      CHECK(cmp);
    }
  }
  if (!std::getenv("KILN_KEEP_KERNELS"))
    std::system(("rm -rf " + dir).c_str());
}

/// The attributes of a kiln.resize with `mode` and coordinate mode `coord`.
std::string resizeAttrs(const std::string &mode, const std::string &coord,
                        const std::string &extra = "") {
  return "{antialias = 0 : i64, coordinate_transformation_mode = \"" + coord +
         "\", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : i64, "
         "extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "
         "\"stretch\", mode = \"" +
         mode + "\", nearest_mode = \"round_prefer_floor\", roi = array<f32>" +
         extra + "}";
}

std::vector<OpCase> opCases() {
  std::vector<OpCase> cases;
  // Gathers by run-time indices: the middle axis with i64 indices (negative
  // ones too), an embedding (axis 0) of bf16 rows with i32 ids.
  cases.push_back({"g0_gather", R"(
func.func @g0(%x: tensor<5x4x3xf32>, %i: tensor<2x3xi64>) -> tensor<5x2x3x3xf32> {
  %0 = kiln.gather %x, %i {axis = 1 : i64} : (tensor<5x4x3xf32>, tensor<2x3xi64>) -> tensor<5x2x3x3xf32>
  return %0 : tensor<5x2x3x3xf32>
})"});
  cases.push_back({"g1_gather", R"(
func.func @g1(%x: tensor<10x8xbf16>, %i: tensor<3x5xi32>) -> tensor<3x5x8xbf16> {
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<10x8xbf16>, tensor<3x5xi32>) -> tensor<3x5x8xbf16>
  return %0 : tensor<3x5x8xbf16>
})",
                   -10.0f, 10.0f});
  // Resizes: U-Net's bilinear x2 (half_pixel), non-integer scales,
  // nearest by sizes in f16, cubic with align_corners and exclude_outside,
  // and tf_crop_and_resize with a roi that extrapolates.
  cases.push_back(
      {"r0_resize",
       R"(
func.func @r0(%x: tensor<2x3x5x7xf32>) -> tensor<2x3x10x10xf32> {
  %s = kiln.constant dense<[1.0, 1.0, 2.0, 1.5]> : tensor<4xf32>
  %z = kiln.constant dense<> : tensor<0xi64>
  %0 = kiln.resize %x, %s, %z )" +
           resizeAttrs("linear", "half_pixel") +
           R"( : (tensor<2x3x5x7xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<2x3x10x10xf32>
  return %0 : tensor<2x3x10x10xf32>
})"});
  cases.push_back(
      {"r1_resize",
       R"(
func.func @r1(%x: tensor<1x2x4x6xf16>) -> tensor<1x2x7x3xf16> {
  %s = kiln.constant dense<> : tensor<0xf32>
  %z = kiln.constant dense<[1, 2, 7, 3]> : tensor<4xi64>
  %0 = kiln.resize %x, %s, %z )" +
           resizeAttrs("nearest", "asymmetric") +
           R"( : (tensor<1x2x4x6xf16>, tensor<0xf32>, tensor<4xi64>) -> tensor<1x2x7x3xf16>
  return %0 : tensor<1x2x7x3xf16>
})"});
  std::string cubic = resizeAttrs("cubic", "align_corners");
  cubic.replace(cubic.find("exclude_outside = 0"), 19, "exclude_outside = 1");
  cases.push_back(
      {"r2_resize",
       R"(
func.func @r2(%x: tensor<1x1x6x5xf32>) -> tensor<1x1x9x8xf32> {
  %s = kiln.constant dense<[1.0, 1.0, 1.5, 1.6]> : tensor<4xf32>
  %z = kiln.constant dense<> : tensor<0xi64>
  %0 = kiln.resize %x, %s, %z )" +
           cubic +
           R"( : (tensor<1x1x6x5xf32>, tensor<4xf32>, tensor<0xi64>) -> tensor<1x1x9x8xf32>
  return %0 : tensor<1x1x9x8xf32>
})"});
  std::string crop = resizeAttrs("linear", "tf_crop_and_resize");
  crop.replace(crop.find("extrapolation_value = 0.000000e+00"), 34,
               "extrapolation_value = 2.500000e+00");
  crop.replace(crop.find("roi = array<f32>"), 16,
               "roi = array<f32: 0.0, 0.0, -0.2, 0.3, 1.0, 1.0, 1.1, 0.9>");
  cases.push_back(
      {"r3_resize",
       R"(
func.func @r3(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x6x4xf32> {
  %s = kiln.constant dense<> : tensor<0xf32>
  %z = kiln.constant dense<[1, 2, 6, 4]> : tensor<4xi64>
  %0 = kiln.resize %x, %s, %z )" +
           crop +
           R"( : (tensor<1x2x5x5xf32>, tensor<0xf32>, tensor<4xi64>) -> tensor<1x2x6x4xf32>
  return %0 : tensor<1x2x6x4xf32>
})"});
  // Transposed convolutions: U-Net's 2x2 stride 2, and one with pads,
  // a dilation, output padding and two groups.
  cases.push_back({"t0_conv_transpose", R"(
func.func @t0(%x: tensor<2x4x3x3xf32>, %w: tensor<4x3x2x2xf32>) -> tensor<2x3x6x6xf32> {
  %0 = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>, tensor<4x3x2x2xf32>) -> tensor<2x3x6x6xf32>
  return %0 : tensor<2x3x6x6xf32>
})"});
  cases.push_back({"t1_conv_transpose", R"(
func.func @t1(%x: tensor<1x4x5x4xf32>, %w: tensor<4x1x3x2xf32>) -> tensor<1x2x10x9xf32> {
  %0 = kiln.conv_transpose %x, %w {dilations = array<i64: 1, 2>, group = 2 : i64, output_padding = array<i64: 1, 0>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x4xf32>, tensor<4x1x3x2xf32>) -> tensor<1x2x10x9xf32>
  return %0 : tensor<1x2x10x9xf32>
})"});
  // Depthwise convolutions: channels first with a stride and asymmetric
  // pads, a multiplier of 2; channels last in bf16 (8-channel vectors), in
  // f32 with 6 channels (2-channel vectors: a block of 85 pixels of 3
  // vectors) and a dilation, and in bf16 with two groups of 256 channels.
  cases.push_back({"d0_depthwise_conv", R"(
func.func @d0(%x: tensor<2x4x9x9xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
})"});
  cases.push_back({"d1_depthwise_conv", R"(
func.func @d1(%x: tensor<1x3x6x6xf32>, %w: tensor<6x1x5x5xf32>) -> tensor<1x6x6x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
})"});
  cases.push_back({"d2_depthwise_conv", R"(
func.func @d2(%x: tensor<1x6x7x16xbf16>, %w: tensor<16x3x3x1xbf16>) -> tensor<1x6x7x16xbf16> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 16 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x6x7x16xbf16>, tensor<16x3x3x1xbf16>) -> tensor<1x6x7x16xbf16>
  return %0 : tensor<1x6x7x16xbf16>
})",
                   -1.0f, 1.0f});
  cases.push_back({"d3_depthwise_conv", R"(
func.func @d3(%x: tensor<1x8x8x6xf32>, %w: tensor<6x3x3x1xf32>) -> tensor<1x8x8x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 2, 2>, group = 6 : i64, layout = "nhwc", pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x8x8x6xf32>, tensor<6x3x3x1xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
})"});
  cases.push_back({"d4_depthwise_conv", R"(
func.func @d4(%x: tensor<1x5x5x512xbf16>, %w: tensor<512x3x3x1xbf16>) -> tensor<1x3x3x512xbf16> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 512 : i64, layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x5x5x512xbf16>, tensor<512x3x3x1xbf16>) -> tensor<1x3x3x512xbf16>
  return %0 : tensor<1x3x3x512xbf16>
})",
                   -1.0f, 1.0f});
  // A window whose weights would not fit a block's shared memory: channels
  // last, a thread per element.
  cases.push_back({"d5_depthwise_conv", R"(
func.func @d5(%x: tensor<1x3x3x4xf32>, %w: tensor<4x51x51x1xf32>) -> tensor<1x3x3x4xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, layout = "nhwc", pads = array<i64: 25, 25, 25, 25>, strides = array<i64: 1, 1>} : (tensor<1x3x3x4xf32>, tensor<4x51x51x1xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
})"});
  // kiln.depthwise_conv: the same kernels with the activations on the
  // loaded elements and the accumulators (each activation on each side,
  // both layouts, a multiplier of 2).
  cases.push_back({"d6_depthwise_conv", R"(
func.func @d6(%x: tensor<2x4x9x9xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32> {
  %0 = kiln.depthwise_conv %x, %w {activation = "silu", dilations = array<i64: 1, 1>, group = 4 : i64, input_activation = "relu6", pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
})",
                   -8.0f, 8.0f});
  cases.push_back({"d7_depthwise_conv", R"(
func.func @d7(%x: tensor<1x6x7x16xbf16>, %w: tensor<16x3x3x1xbf16>) -> tensor<1x6x7x16xbf16> {
  %0 = kiln.depthwise_conv %x, %w {activation = "hard_swish", dilations = array<i64: 1, 1>, group = 16 : i64, input_activation = "silu", layout = "nhwc", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x6x7x16xbf16>, tensor<16x3x3x1xbf16>) -> tensor<1x6x7x16xbf16>
  return %0 : tensor<1x6x7x16xbf16>
})",
                   -2.0f, 2.0f});
  cases.push_back({"d8_depthwise_conv", R"(
func.func @d8(%x: tensor<1x8x8x6xf32>, %w: tensor<6x3x3x1xf32>) -> tensor<1x8x8x6xf32> {
  %0 = kiln.depthwise_conv %x, %w {activation = "relu", dilations = array<i64: 2, 2>, group = 6 : i64, input_activation = "hard_swish", layout = "nhwc", pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x8x8x6xf32>, tensor<6x3x3x1xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
})",
                   -5.0f, 5.0f});
  cases.push_back({"d9_depthwise_conv", R"(
func.func @d9(%x: tensor<1x3x6x6xf32>, %w: tensor<6x1x5x5xf32>) -> tensor<1x6x6x6xf32> {
  %0 = kiln.depthwise_conv %x, %w {activation = "relu6", dilations = array<i64: 1, 1>, group = 3 : i64, input_activation = "relu", pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<6x1x5x5xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
})"});
  // Average pools: the divisor with and without the pads, ceil mode.
  cases.push_back({"v0_avg_pool", R"(
func.func @v0(%x: tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32> {
  %0 = kiln.avg_pool %x {ceil_mode = 1 : i64, count_include_pad = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
})"});
  cases.push_back({"v1_avg_pool", R"(
func.func @v1(%x: tensor<2x3x6x5xbf16>) -> tensor<2x3x3x3xbf16> {
  %0 = kiln.avg_pool %x {ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 3>, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x6x5xbf16>) -> tensor<2x3x3x3xbf16>
  return %0 : tensor<2x3x3x3xbf16>
})"});
  // gather_elements along a middle axis (negative indices too) and with
  // indices smaller than x in another dim; arg reductions with ties (small
  // integers) to the first and to the last index; scans.
  cases.push_back({"e0_gather_elements", R"(
func.func @e0(%x: tensor<3x5x4xf32>, %i: tensor<2x7x4xi64>) -> tensor<2x7x4xf32> {
  %0 = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5x4xf32>, tensor<2x7x4xi64>) -> tensor<2x7x4xf32>
  return %0 : tensor<2x7x4xf32>
})",
                   -5.0f, 5.0f});
  cases.push_back({"x0_argmax", R"(
func.func @x0(%x: tensor<4x9x3xi32>) -> tensor<4x1x3xi64> {
  %0 = kiln.argmax %x {axis = 1 : i64, keepdims = 1 : i64, select_last_index = 1 : i64} : (tensor<4x9x3xi32>) -> tensor<4x1x3xi64>
  return %0 : tensor<4x1x3xi64>
})",
                   -3.0f, 3.0f});
  cases.push_back({"n0_argmin", R"(
func.func @n0(%x: tensor<6x5xf32>) -> tensor<5xi64> {
  %0 = kiln.argmin %x {axis = 0 : i64, keepdims = 0 : i64, select_last_index = 0 : i64} : (tensor<6x5xf32>) -> tensor<5xi64>
  return %0 : tensor<5xi64>
})"});
  cases.push_back({"s0_cumsum", R"(
func.func @s0(%x: tensor<3x6x2xf32>) -> tensor<3x6x2xf32> {
  %axis = kiln.constant dense<-2> : tensor<i64>
  %0 = kiln.cumsum %x, %axis {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x6x2xf32>, tensor<i64>) -> tensor<3x6x2xf32>
  return %0 : tensor<3x6x2xf32>
})"});
  cases.push_back({"q0_cumprod", R"(
func.func @q0(%x: tensor<2x5xi64>) -> tensor<2x5xi64> {
  %axis = kiln.constant dense<1> : tensor<i64>
  %0 = kiln.cumprod %x, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<2x5xi64>, tensor<i64>) -> tensor<2x5xi64>
  return %0 : tensor<2x5xi64>
})"});
  cases.push_back({"s1_cumsum", R"(
func.func @s1(%x: tensor<3x4xi32>, %axis: tensor<i32>) -> tensor<3x4xi32> {
  %0 = kiln.cumsum %x, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<3x4xi32>, tensor<i32>) -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
})",
                   0.0f, 1.99f});
  cases.push_back({"h0_hardmax", R"(
func.func @h0(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %0 = kiln.hardmax %x {axis = 1 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
})"});
  // trilu (the diagonal a constant operand, read at run time); scatters
  // with duplicate indices (small random ones): the last wins, sums, max.
  cases.push_back({"w0_trilu", R"(
func.func @w0(%x: tensor<2x4x5xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>) {
  %k = kiln.constant dense<1> : tensor<i64>
  %m = kiln.constant dense<-1> : tensor<i64>
  %0 = kiln.trilu %x, %k {upper = 1 : i64} : (tensor<2x4x5xf32>, tensor<i64>) -> tensor<2x4x5xf32>
  return %0, %0 : tensor<2x4x5xf32>, tensor<2x4x5xf32>
})"});
  cases.push_back({"w1_trilu", R"(
func.func @w1(%x: tensor<3x3xi32>) -> tensor<3x3xi32> {
  %k = kiln.constant dense<-1> : tensor<i64>
  %0 = kiln.trilu %x, %k {upper = 0 : i64} : (tensor<3x3xi32>, tensor<i64>) -> tensor<3x3xi32>
  return %0 : tensor<3x3xi32>
})"});
  cases.push_back({"z0_scatter_elements", R"(
func.func @z0(%x: tensor<4x3xf32>, %i: tensor<5x3xi64>, %u: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<4x3xf32>, tensor<5x3xi64>, tensor<5x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
})",
                   -4.0f, 4.0f});
  cases.push_back({"z1_scatter_elements", R"(
func.func @z1(%x: tensor<2x6xf32>, %i: tensor<2x4xi32>, %u: tensor<2x4xf32>) -> tensor<2x6xf32> {
  %0 = kiln.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<2x6xf32>, tensor<2x4xi32>, tensor<2x4xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
})",
                   -3.0f, 3.0f});
  cases.push_back({"z2_scatter_elements", R"(
func.func @z2(%x: tensor<3x3xi32>, %i: tensor<3x2xi64>, %u: tensor<3x2xi32>) -> tensor<3x3xi32> {
  %0 = kiln.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "max"} : (tensor<3x3xi32>, tensor<3x2xi64>, tensor<3x2xi32>) -> tensor<3x3xi32>
  return %0 : tensor<3x3xi32>
})",
                   -3.0f, 3.0f});
  // GRU recurrences (linear_before_reset, PyTorch's): forward with two
  // blocks of 8 units (a batch of 32 fills them), bidirectional with a clip
  // and a short batch.
  cases.push_back({"u0_gru", R"(
func.func @u0(%xw: tensor<5x32x48xf32>, %r: tensor<1x48x16xf32>, %rb: tensor<1x48xf32>, %h0: tensor<1x32x16xf32>) -> (tensor<5x1x32x16xf32>, tensor<1x32x16xf32>) {
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 16 : i64, linear_before_reset = 1 : i64} : (tensor<5x32x48xf32>, tensor<1x48x16xf32>, tensor<1x48xf32>, tensor<1x32x16xf32>) -> (tensor<5x1x32x16xf32>, tensor<1x32x16xf32>)
  return %y, %yh : tensor<5x1x32x16xf32>, tensor<1x32x16xf32>
})",
                   -1.0f, 1.0f});
  cases.push_back({"u1_gru", R"(
func.func @u1(%xw: tensor<3x2x36xf32>, %r: tensor<2x18x6xf32>, %rb: tensor<2x18xf32>, %h0: tensor<2x2x6xf32>) -> (tensor<3x2x2x6xf32>, tensor<2x2x6xf32>) {
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0 {clip = 1.500000e+00 : f32, direction = "bidirectional", hidden_size = 6 : i64, linear_before_reset = 1 : i64} : (tensor<3x2x36xf32>, tensor<2x18x6xf32>, tensor<2x18xf32>, tensor<2x2x6xf32>) -> (tensor<3x2x2x6xf32>, tensor<2x2x6xf32>)
  return %y, %yh : tensor<3x2x2x6xf32>, tensor<2x2x6xf32>
})",
                   -2.0f, 2.0f});
  // LSTM recurrences with peepholes: forward with a batch of 16 filling a
  // block, bidirectional with a clip and input_forget, reverse.
  cases.push_back({"l0_lstm", R"(
func.func @l0(%xw: tensor<4x16x64xf32>, %r: tensor<1x64x16xf32>, %p: tensor<1x48xf32>, %h0: tensor<1x16x16xf32>, %c0: tensor<1x16x16xf32>) -> (tensor<4x1x16x16xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>) {
  %y, %yh, %yc = kiln.lstm_recurrence %xw, %r, %p, %h0, %c0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 16 : i64, input_forget = 0 : i64} : (tensor<4x16x64xf32>, tensor<1x64x16xf32>, tensor<1x48xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>) -> (tensor<4x1x16x16xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>)
  return %y, %yh, %yc : tensor<4x1x16x16xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>
})",
                   -1.0f, 1.0f});
  cases.push_back({"l1_lstm", R"(
func.func @l1(%xw: tensor<3x2x48xf32>, %r: tensor<2x24x6xf32>, %p: tensor<2x18xf32>, %h0: tensor<2x2x6xf32>, %c0: tensor<2x2x6xf32>) -> (tensor<3x2x2x6xf32>, tensor<2x2x6xf32>, tensor<2x2x6xf32>) {
  %y, %yh, %yc = kiln.lstm_recurrence %xw, %r, %p, %h0, %c0 {clip = 1.500000e+00 : f32, direction = "bidirectional", hidden_size = 6 : i64, input_forget = 1 : i64} : (tensor<3x2x48xf32>, tensor<2x24x6xf32>, tensor<2x18xf32>, tensor<2x2x6xf32>, tensor<2x2x6xf32>) -> (tensor<3x2x2x6xf32>, tensor<2x2x6xf32>, tensor<2x2x6xf32>)
  return %y, %yh, %yc : tensor<3x2x2x6xf32>, tensor<2x2x6xf32>, tensor<2x2x6xf32>
})",
                   -2.0f, 2.0f});
  cases.push_back({"l2_lstm", R"(
func.func @l2(%xw: tensor<2x3x32xf32>, %r: tensor<1x32x8xf32>, %p: tensor<1x24xf32>, %h0: tensor<1x3x8xf32>, %c0: tensor<1x3x8xf32>) -> (tensor<2x1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>) {
  %y, %yh, %yc = kiln.lstm_recurrence %xw, %r, %p, %h0, %c0 {clip = 0.000000e+00 : f32, direction = "reverse", hidden_size = 8 : i64, input_forget = 0 : i64} : (tensor<2x3x32xf32>, tensor<1x32x8xf32>, tensor<1x24xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>) -> (tensor<2x1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>)
  return %y, %yh, %yc : tensor<2x1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>
})",
                   -1.0f, 1.0f});
  // GRUs with linear_before_reset = 0 (two launches a step): forward
  // with two blocks of 8 units, bidirectional with a clip and sequence
  // lengths (one of them 0); a PyTorch-style GRU and an LSTM with
  // lengths, reverse and bidirectional.
  cases.push_back({"u2_gru", R"(
func.func @u2(%xw: tensor<4x32x48xf32>, %r: tensor<1x48x16xf32>, %rb: tensor<1x48xf32>, %h0: tensor<1x32x16xf32>) -> (tensor<4x1x32x16xf32>, tensor<1x32x16xf32>) {
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 16 : i64, linear_before_reset = 0 : i64} : (tensor<4x32x48xf32>, tensor<1x48x16xf32>, tensor<1x48xf32>, tensor<1x32x16xf32>) -> (tensor<4x1x32x16xf32>, tensor<1x32x16xf32>)
  return %y, %yh : tensor<4x1x32x16xf32>, tensor<1x32x16xf32>
})",
                   -1.0f, 1.0f});
  cases.push_back({"u3_gru", R"(
func.func @u3(%xw: tensor<3x3x36xf32>, %r: tensor<2x18x6xf32>, %rb: tensor<2x18xf32>, %h0: tensor<2x3x6xf32>) -> (tensor<3x2x3x6xf32>, tensor<2x3x6xf32>) {
  %len = kiln.constant dense<[3, 0, 2]> : tensor<3xi32>
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0, %len {clip = 1.500000e+00 : f32, direction = "bidirectional", hidden_size = 6 : i64, linear_before_reset = 0 : i64} : (tensor<3x3x36xf32>, tensor<2x18x6xf32>, tensor<2x18xf32>, tensor<2x3x6xf32>, tensor<3xi32>) -> (tensor<3x2x3x6xf32>, tensor<2x3x6xf32>)
  return %y, %yh : tensor<3x2x3x6xf32>, tensor<2x3x6xf32>
})",
                   -2.0f, 2.0f});
  cases.push_back({"u4_gru", R"(
func.func @u4(%xw: tensor<4x3x24xf32>, %r: tensor<1x24x8xf32>, %rb: tensor<1x24xf32>, %h0: tensor<1x3x8xf32>) -> (tensor<4x1x3x8xf32>, tensor<1x3x8xf32>) {
  %len = kiln.constant dense<[2, 4, 0]> : tensor<3xi32>
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0, %len {clip = 0.000000e+00 : f32, direction = "reverse", hidden_size = 8 : i64, linear_before_reset = 1 : i64} : (tensor<4x3x24xf32>, tensor<1x24x8xf32>, tensor<1x24xf32>, tensor<1x3x8xf32>, tensor<3xi32>) -> (tensor<4x1x3x8xf32>, tensor<1x3x8xf32>)
  return %y, %yh : tensor<4x1x3x8xf32>, tensor<1x3x8xf32>
})",
                   -1.0f, 1.0f});
  cases.push_back({"l3_lstm", R"(
func.func @l3(%xw: tensor<4x3x40xf32>, %r: tensor<2x20x5xf32>, %p: tensor<2x15xf32>, %h0: tensor<2x3x5xf32>, %c0: tensor<2x3x5xf32>) -> (tensor<4x2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %len = kiln.constant dense<[4, 1, 0]> : tensor<3xi32>
  %y, %yh, %yc = kiln.lstm_recurrence %xw, %r, %p, %h0, %c0, %len {clip = 0.000000e+00 : f32, direction = "bidirectional", hidden_size = 5 : i64, input_forget = 0 : i64} : (tensor<4x3x40xf32>, tensor<2x20x5xf32>, tensor<2x15xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<3xi32>) -> (tensor<4x2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>)
  return %y, %yh, %yc : tensor<4x2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>
})",
                   -1.0f, 1.0f});
  // A hidden size of 64: the dot products split over 4 slices of 16 (the
  // partial sums added in shared memory), GRU and LSTM, with lengths.
  cases.push_back({"u5_gru", R"(
func.func @u5(%xw: tensor<3x4x192xf32>, %r: tensor<1x192x64xf32>, %rb: tensor<1x192xf32>, %h0: tensor<1x4x64xf32>) -> (tensor<3x1x4x64xf32>, tensor<1x4x64xf32>) {
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 64 : i64, linear_before_reset = 1 : i64} : (tensor<3x4x192xf32>, tensor<1x192x64xf32>, tensor<1x192xf32>, tensor<1x4x64xf32>) -> (tensor<3x1x4x64xf32>, tensor<1x4x64xf32>)
  return %y, %yh : tensor<3x1x4x64xf32>, tensor<1x4x64xf32>
})",
                   -0.5f, 0.5f});
  cases.push_back({"u6_gru", R"(
func.func @u6(%xw: tensor<3x4x384xf32>, %r: tensor<2x192x64xf32>, %rb: tensor<2x192xf32>, %h0: tensor<2x4x64xf32>) -> (tensor<3x2x4x64xf32>, tensor<2x4x64xf32>) {
  %len = kiln.constant dense<[3, 1, 0, 2]> : tensor<4xi32>
  %y, %yh = kiln.gru_recurrence %xw, %r, %rb, %h0, %len {clip = 0.000000e+00 : f32, direction = "bidirectional", hidden_size = 64 : i64, linear_before_reset = 0 : i64} : (tensor<3x4x384xf32>, tensor<2x192x64xf32>, tensor<2x192xf32>, tensor<2x4x64xf32>, tensor<4xi32>) -> (tensor<3x2x4x64xf32>, tensor<2x4x64xf32>)
  return %y, %yh : tensor<3x2x4x64xf32>, tensor<2x4x64xf32>
})",
                   -0.5f, 0.5f});
  cases.push_back({"l4_lstm", R"(
func.func @l4(%xw: tensor<3x4x256xf32>, %r: tensor<1x256x64xf32>, %p: tensor<1x192xf32>, %h0: tensor<1x4x64xf32>, %c0: tensor<1x4x64xf32>) -> (tensor<3x1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>) {
  %len = kiln.constant dense<[2, 3, 3, 0]> : tensor<4xi32>
  %y, %yh, %yc = kiln.lstm_recurrence %xw, %r, %p, %h0, %c0, %len {clip = 0.000000e+00 : f32, direction = "reverse", hidden_size = 64 : i64, input_forget = 0 : i64} : (tensor<3x4x256xf32>, tensor<1x256x64xf32>, tensor<1x192xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<4xi32>) -> (tensor<3x1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>)
  return %y, %yh, %yc : tensor<3x1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>
})",
                   -0.5f, 0.5f});
  // The kernels printed before this file's: concat and max pool.
  cases.push_back({"c0_concat", R"(
func.func @c0(%a: tensor<2x3x4xf32>, %b: tensor<2x1x4xf32>) -> tensor<2x4x4xf32> {
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
})"});
  cases.push_back({"p0_max_pool", R"(
func.func @p0(%x: tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32> {
  %0 = kiln.max_pool %x {ceil_mode = 1 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
})"});
  // einsum: a batched matmul with a broadcast operand, a diagonal with a sum
  // (repeated label), an implicit output over three operands, integers;
  // gather_nd with batch dims; scatter_nd with duplicate tuples (small
  // random indices, negative ones too) combining by add and by max.
  cases.push_back({"i0_einsum", R"(
func.func @i0(%a: tensor<2x3x4xf32>, %b: tensor<1x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = kiln.einsum %a, %b {equation = "...ij,...jk->...ik"} : (tensor<2x3x4xf32>, tensor<1x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
})"});
  cases.push_back({"i1_einsum", R"(
func.func @i1(%a: tensor<3x4x4x2xf64>) -> tensor<2x3xf64> {
  %0 = kiln.einsum %a {equation = "bii j -> jb"} : (tensor<3x4x4x2xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
})"});
  cases.push_back({"i2_einsum", R"(
func.func @i2(%a: tensor<2x3xi32>, %b: tensor<3x4xi32>, %c: tensor<4xi32>) -> tensor<2xi32> {
  %0 = kiln.einsum %a, %b, %c {equation = "ij,jk,k"} : (tensor<2x3xi32>, tensor<3x4xi32>, tensor<4xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
})",
                   -3.0f, 3.0f});
  cases.push_back({"i3_einsum", R"(
func.func @i3(%a: tensor<2x5x3xbf16>) -> tensor<2x3xbf16> {
  %0 = kiln.einsum %a {equation = "...ij->...j"} : (tensor<2x5x3xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
})"});
  cases.push_back({"j0_gather_nd", R"(
func.func @j0(%x: tensor<2x3x4x5xf32>, %i: tensor<2x6x2xi64>) -> tensor<2x6x5xf32> {
  %0 = kiln.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x6x2xi64>) -> tensor<2x6x5xf32>
  return %0 : tensor<2x6x5xf32>
})",
                   -2.0f, 2.99f});
  cases.push_back({"j1_gather_nd", R"(
func.func @j1(%x: tensor<4x3xi32>, %i: tensor<5x2xi32>) -> tensor<5xi32> {
  %0 = kiln.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<4x3xi32>, tensor<5x2xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
})",
                   -2.0f, 2.99f});
  cases.push_back({"o0_scatter_nd", R"(
func.func @o0(%x: tensor<4x3x2xf32>, %i: tensor<5x1xi64>, %u: tensor<5x3x2xf32>) -> tensor<4x3x2xf32> {
  %0 = kiln.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<4x3x2xf32>, tensor<5x1xi64>, tensor<5x3x2xf32>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
})",
                   -3.0f, 3.99f});
  cases.push_back({"o1_scatter_nd", R"(
func.func @o1(%x: tensor<3x4xi32>, %i: tensor<2x3x2xi32>, %u: tensor<2x3xi32>) -> tensor<3x4xi32> {
  %0 = kiln.scatter_nd %x, %i, %u {reduction = "max"} : (tensor<3x4xi32>, tensor<2x3x2xi32>, tensor<2x3xi32>) -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
})",
                   -2.0f, 2.99f});
  // The matmuls cuBLASLt does not take: a vector times a batch, broadcast
  // batches, f64, integers.
  cases.push_back({"m0_matmul", R"(
func.func @m0(%a: tensor<4xf32>, %b: tensor<2x4x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.matmul %a, %b : (tensor<4xf32>, tensor<2x4x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
})"});
  cases.push_back({"m1_matmul", R"(
func.func @m1(%a: tensor<3x1x2x4xf64>, %b: tensor<1x2x4x5xf64>) -> tensor<3x2x2x5xf64> {
  %0 = kiln.matmul %a, %b : (tensor<3x1x2x4xf64>, tensor<1x2x4x5xf64>) -> tensor<3x2x2x5xf64>
  return %0 : tensor<3x2x2x5xf64>
})"});
  cases.push_back({"m2_matmul", R"(
func.func @m2(%a: tensor<2x3x4xi32>, %b: tensor<4xi32>) -> tensor<2x3xi32> {
  %0 = kiln.matmul %a, %b : (tensor<2x3x4xi32>, tensor<4xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
})",
                   -5.0f, 5.0f});
  // Pads: constant (a crop on one side), reflect, edge and wrap wider than
  // the axis; a max pool of unsigned bytes.
  cases.push_back({"b0_pad", R"(
func.func @b0(%x: tensor<2x3x4xf32>, %v: tensor<f32>) -> tensor<3x2x7xf32> {
  %p = kiln.constant dense<[1, -1, 2, 0, 0, 1]> : tensor<6xi64>
  %0 = kiln.pad %x, %p, %v {mode = "constant"} : (tensor<2x3x4xf32>, tensor<6xi64>, tensor<f32>) -> tensor<3x2x7xf32>
  return %0 : tensor<3x2x7xf32>
})"});
  cases.push_back({"b1_pad", R"(
func.func @b1(%x: tensor<3x4xf32>, %v: tensor<f32>) -> tensor<7x10xf32> {
  %p = kiln.constant dense<[2, 3, 2, 3]> : tensor<4xi64>
  %0 = kiln.pad %x, %p, %v {mode = "reflect"} : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<7x10xf32>
  return %0 : tensor<7x10xf32>
})"});
  cases.push_back({"b2_pad", R"(
func.func @b2(%x: tensor<2x3xi64>, %v: tensor<i64>) -> tensor<4x9xi64> {
  %p = kiln.constant dense<[1, 4, 1, 2]> : tensor<4xi64>
  %0 = kiln.pad %x, %p, %v {mode = "edge"} : (tensor<2x3xi64>, tensor<4xi64>, tensor<i64>) -> tensor<4x9xi64>
  return %0 : tensor<4x9xi64>
})"});
  cases.push_back({"b3_pad", R"(
func.func @b3(%x: tensor<2x3xbf16>, %v: tensor<bf16>) -> tensor<5x9xbf16> {
  %p = kiln.constant dense<[2, 4, 1, 2]> : tensor<4xi64>
  %0 = kiln.pad %x, %p, %v {mode = "wrap"} : (tensor<2x3xbf16>, tensor<4xi64>, tensor<bf16>) -> tensor<5x9xbf16>
  return %0 : tensor<5x9xbf16>
})"});
  cases.push_back({"p1_max_pool", R"(
func.func @p1(%x: tensor<1x2x5x5xui8>) -> tensor<1x2x5x5xui8> {
  %0 = kiln.max_pool %x {ceil_mode = 0 : i64, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x5x5xui8>) -> tensor<1x2x5x5xui8>
  return %0 : tensor<1x2x5x5xui8>
})",
                   0.0f, 250.0f});
  // f32 flash attention (the CUDA-core kernel): a partial last query and
  // key tile (T = 100, D = 64: 16-byte loads of V), causal with D = 32
  // (interleaved columns) over two (batch, head) blocks, and q, k and v read
  // in place from one packed tensor (D = 16).
  cases.push_back({"a0_attention", R"(
func.func @a0(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x100x64xf32>, %v: tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32> {
  %0:2 = kiln.attention %q, %k, %v {causal = 0 : i64, scale = 1.250000e-01 : f32} : (tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>) -> (tensor<1x2x100x64xf32>, tensor<1x2x100xf32>)
  return %0#0 : tensor<1x2x100x64xf32>
})"});
  cases.push_back({"a1_attention", R"(
func.func @a1(%q: tensor<2x1x40x32xf32>, %k: tensor<2x1x40x32xf32>, %v: tensor<2x1x40x32xf32>) -> tensor<2x1x40x32xf32> {
  %0:2 = kiln.attention %q, %k, %v {causal = 1 : i64, scale = 0.176776692 : f32} : (tensor<2x1x40x32xf32>, tensor<2x1x40x32xf32>, tensor<2x1x40x32xf32>) -> (tensor<2x1x40x32xf32>, tensor<2x1x40xf32>)
  return %0#0 : tensor<2x1x40x32xf32>
})"});
  cases.push_back({"a2_attention", R"(
func.func @a2(%qkv: tensor<1x70x96xf32>) -> tensor<1x70x2x16xf32> {
  %0:2 = kiln.packed_attention %qkv {causal = 1 : i64, heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<1x70x96xf32>) -> (tensor<1x70x2x16xf32>, tensor<1x2x70xf32>)
  return %0#0 : tensor<1x70x2x16xf32>
})"});
  // Packed seq-first (nn.MultiheadAttention's [T, B, 3 * H * D], the
  // result [T, B, H, D]): two batches, so the batch and row strides differ
  // from the batch-first form's.
  cases.push_back({"a6_attention", R"(
func.func @a6(%qkv: tensor<70x2x192xf32>) -> tensor<70x2x2x32xf32> {
  %0:2 = kiln.packed_attention %qkv {causal = 0 : i64, heads = 2 : i64, layout = "seq_first", scale = 0.176776692 : f32} : (tensor<70x2x192xf32>) -> (tensor<70x2x2x32xf32>, tensor<2x2x70xf32>)
  return %0#0 : tensor<70x2x2x32xf32>
})"});
  // ViT's 197 tokens (three full key tiles of 64 and a partial one), and a
  // causal D = 48 (rows padded, three output columns a thread) whose blocks
  // mask on the diagonal of full key tiles.
  cases.push_back({"a4_attention", R"(
func.func @a4(%q: tensor<1x1x197x64xf32>, %k: tensor<1x1x197x64xf32>, %v: tensor<1x1x197x64xf32>) -> tensor<1x1x197x64xf32> {
  %0:2 = kiln.attention %q, %k, %v {causal = 0 : i64, scale = 1.250000e-01 : f32} : (tensor<1x1x197x64xf32>, tensor<1x1x197x64xf32>, tensor<1x1x197x64xf32>) -> (tensor<1x1x197x64xf32>, tensor<1x1x197xf32>)
  return %0#0 : tensor<1x1x197x64xf32>
})"});
  cases.push_back({"a5_attention", R"(
func.func @a5(%q: tensor<1x1x150x48xf32>, %k: tensor<1x1x150x48xf32>, %v: tensor<1x1x150x48xf32>) -> tensor<1x1x150x48xf32> {
  %0:2 = kiln.attention %q, %k, %v {causal = 1 : i64, scale = 0.144337565 : f32} : (tensor<1x1x150x48xf32>, tensor<1x1x150x48xf32>, tensor<1x1x150x48xf32>) -> (tensor<1x1x150x48xf32>, tensor<1x1x150xf32>)
  return %0#0 : tensor<1x1x150x48xf32>
})"});
  // bf16 flash attention with tensor-core MMA (emulated; a7 packed
  // seq-first), its lse, and its
  // backward kernel (kiln.attention_grad: dK/dV blocks and dQ blocks,
  // grid z = 2): partial last tiles (T = 100), causal, and the packed form
  // reading q, k, v from (and writing dq, dk, dv into) one tensor. lse and
  // delta are random operands here (the kernel's formula holds for any).
  // The kernel rounds P and dS to the input type as MMA operands (as
  // FlashAttention-2 does); with these unnormalized P (up to e^2.3) that
  // costs up to 0.045 (bf16) and 0.006 (f16) times 1 + |exact| (a NumPy
  // model of that arithmetic, 20 seeds), hence the tolerances.
  const Tolerance bf16Grad{6e-2, 6e-2}, f16Grad{1e-2, 1e-2};
  cases.push_back({"a3_attention", R"(
func.func @a3(%q: tensor<1x2x100x32xbf16>, %k: tensor<1x2x100x32xbf16>, %v: tensor<1x2x100x32xbf16>) -> tensor<1x2x100x32xbf16> {
  %0:2 = kiln.attention %q, %k, %v {causal = 1 : i64, scale = 0.176776692 : f32} : (tensor<1x2x100x32xbf16>, tensor<1x2x100x32xbf16>, tensor<1x2x100x32xbf16>) -> (tensor<1x2x100x32xbf16>, tensor<1x2x100xf32>)
  return %0#0 : tensor<1x2x100x32xbf16>
})",
                   -1.0f, 1.0f});
  cases.push_back({"a7_attention", R"(
func.func @a7(%qkv: tensor<70x3x96xbf16>) -> tensor<70x3x2x16xbf16> {
  %0:2 = kiln.packed_attention %qkv {causal = 1 : i64, heads = 2 : i64, layout = "seq_first", scale = 2.500000e-01 : f32} : (tensor<70x3x96xbf16>) -> (tensor<70x3x2x16xbf16>, tensor<3x2x70xf32>)
  return %0#0 : tensor<70x3x2x16xbf16>
})",
                   -1.0f, 1.0f});
  cases.push_back({"y0_attention_grad", R"(
func.func @y0(%q: tensor<2x1x100x32xbf16>, %k: tensor<2x1x100x32xbf16>, %v: tensor<2x1x100x32xbf16>, %g: tensor<2x1x100x32xbf16>, %lse: tensor<2x1x100xf32>, %delta: tensor<2x1x100xf32>) -> tensor<2x1x100x32xbf16> {
  %0:3 = kiln.attention_grad %q, %k, %v, %g, %lse, %delta {causal = 0 : i64, scale = 0.176776692 : f32} : (tensor<2x1x100x32xbf16>, tensor<2x1x100x32xbf16>, tensor<2x1x100x32xbf16>, tensor<2x1x100x32xbf16>, tensor<2x1x100xf32>, tensor<2x1x100xf32>) -> (tensor<2x1x100x32xbf16>, tensor<2x1x100x32xbf16>, tensor<2x1x100x32xbf16>)
  return %0#0 : tensor<2x1x100x32xbf16>
})",
                   -1.0f, 1.0f, bf16Grad});
  cases.push_back({"y1_attention_grad", R"(
func.func @y1(%q: tensor<1x2x80x64xf16>, %k: tensor<1x2x80x64xf16>, %v: tensor<1x2x80x64xf16>, %g: tensor<1x2x80x64xf16>, %lse: tensor<1x2x80xf32>, %delta: tensor<1x2x80xf32>) -> tensor<1x2x80x64xf16> {
  %0:3 = kiln.attention_grad %q, %k, %v, %g, %lse, %delta {causal = 1 : i64, scale = 1.250000e-01 : f32} : (tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80xf32>, tensor<1x2x80xf32>) -> (tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>, tensor<1x2x80x64xf16>)
  return %0#0 : tensor<1x2x80x64xf16>
})",
                   -1.0f, 1.0f, f16Grad});
  cases.push_back({"y2_attention_grad", R"(
func.func @y2(%qkv: tensor<1x70x96xbf16>, %g: tensor<1x70x2x16xbf16>, %lse: tensor<1x2x70xf32>, %delta: tensor<1x2x70xf32>) -> tensor<1x70x96xbf16> {
  %0 = kiln.packed_attention_grad %qkv, %g, %lse, %delta {causal = 1 : i64, heads = 2 : i64, scale = 2.500000e-01 : f32} : (tensor<1x70x96xbf16>, tensor<1x70x2x16xbf16>, tensor<1x2x70xf32>, tensor<1x2x70xf32>) -> tensor<1x70x96xbf16>
  return %0 : tensor<1x70x96xbf16>
})",
                   -1.0f, 1.0f, bf16Grad});
  return cases;
}

} // namespace

TEST_CASE("emulated CUDA kernels of single ops match the reference",
          "[codegen][cuda][emulation]") {
  checkOpCases(opCases());
}

TEST_CASE("the kernels of single ops compile with NVRTC", "[codegen][cuda]") {
  if (!haveNvrtc()) {
    WARN("NVRTC unavailable: the kernels were not compiled");
    return;
  }
  std::string text;
  std::vector<OpCase> cases = opCases();
  for (const OpCase &c : cases)
    text += c.function + "\n";
  FusionModule m = parseModule(text);
  REQUIRE(m.module);
  std::vector<CudaKernel> kernels;
  size_t index = 0;
  for (auto func : m.module->getOps<mlir::func::FuncOp>()) {
    std::optional<CudaKernel> k =
        emitCudaOpKernel(theOp(func), cases[index++].name);
    REQUIRE(k);
    kernels.push_back(*k);
  }
  std::string file = emitCudaKernelsFile(kernels, "ops");
  mlir::FailureOr<CudaBinary> binary = compileCudaSource(
      file, "kernels.cu", kernels, mlir::UnknownLoc::get(m.ctx.get()));
  REQUIRE(mlir::succeeded(binary));
  INFO(binary->log);
  CHECK(binary->log.empty());
  for (const CudaKernel &k : kernels)
    CHECK(binary->ptx.find(".entry " + k.name) != std::string::npos);
}

TEST_CASE("a gather kernel checks its run-time indices", "[codegen][cuda]") {
  FusionModule m = parseModule(R"(
func.func @f(%x: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
})");
  REQUIRE(m.module);
  auto func = *m.module->getOps<mlir::func::FuncOp>().begin();
  std::optional<CudaKernel> k = emitCudaOpKernel(theOp(func), "g0_gather");
  REQUIRE(k);
  CHECK(k->definition.find("if (kiln_idx < 0 || kiln_idx >= 4LL)") !=
        std::string::npos);
  CHECK(k->definition.find("__trap();") != std::string::npos);
}
