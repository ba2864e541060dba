//===- CudnnConvGpuTest.cpp - kiln_cuda_conv on a GPU ---------------------===//
//
// This file implements the kiln_cuda_conv cases of kiln-runtime-gpu-tests
// (ctest label gpu; they need an NVIDIA GPU and cuDNN 9): 1-, 2- and 3-D
// convolutions in f32 (bias, strides, symmetric pads of 1 and 3, groups,
// depthwise, dilations, 1x1) compared with the CPU reference kernel (the
// dispatcher's "conv" plus the bias added on the host), bf16 and f16 against
// the reference computed in f32 from the same rounded inputs, a run on a
// pooled stream with the cached plan reused, the refusal of asymmetric
// pads, kiln_cuda_conv_relu (bias, residual and ReLU in the same call), and
// channels-last (NHWC) operands of both, in f32, bf16 and f16.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/CudaServices.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/Tensor.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace kiln;

namespace {

struct ConvCase {
  Shape x, w;                 // [N, C, spatial...], [M, C / group, k...]
  int64_t group = 1;
  Shape strides, pads, dilations; // pads: [begin..., end...]
  bool bias = false;
  /// kiln_cuda_conv_relu: relu(conv + bias + residual).
  bool relu = false, residual = false;
  /// KILN_CUDA_LAYOUT_NHWC: x, w, residual and y stored channels last.
  bool channelsLast = false;
};

/// `t` with dim 1 moved to the end (channels first to channels last), or
/// back with `toFirst`, as a contiguous copy.
Tensor moveChannels(const Tensor &t, bool toFirst) {
  int64_t rank = t.rank();
  std::vector<int64_t> perm = {0};
  if (toFirst) {
    perm.push_back(rank - 1);
    for (int64_t d = 1; d + 1 < rank; ++d)
      perm.push_back(d);
  } else {
    for (int64_t d = 2; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(1);
  }
  return t.permute(perm).contiguous();
}

void requireCudaForConv() {
  Status s = cuda::available();
  INFO(s.message());
  REQUIRE(s.isOk());
}

Tensor randomTensor(const Shape &shape, std::mt19937 &rng, DType dtype) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(numElements(shape));
  for (float &x : v)
    x = dist(rng);
  return Tensor::fromVector<float>(v, shape).to(dtype);
}

/// The CPU reference in f32 (inputs converted from `dtype`), bias added per
/// output channel.
std::vector<double> reference(const ConvCase &c, const Tensor &x,
                              const Tensor &w, const Tensor &bias,
                              Shape &yShape) {
  Attributes attrs;
  attrs.set("strides", c.strides);
  attrs.set("pads", c.pads);
  attrs.set("dilations", c.dilations);
  attrs.set("group", c.group);
  std::vector<Tensor> out(1);
  Status s = Dispatcher::global().call(
      "conv", {x.to(DType::F32), w.to(DType::F32)}, attrs, out);
  INFO(s.message());
  REQUIRE(s.isOk());
  yShape = out[0].shape();
  std::vector<double> y = out[0].toDoubleVector();
  if (c.bias) {
    std::vector<double> b = bias.toDoubleVector();
    int64_t channels = yShape[1];
    int64_t inner = numElements(yShape) / (yShape[0] * channels);
    for (size_t i = 0; i < y.size(); ++i)
      y[i] += b[(i / inner) % channels];
  }
  return y;
}

/// Runs `c` through kiln_cuda_conv in `dtype` on `stream` and compares with
/// the reference: |got - expected| <= tolerance * (1 + |expected|).
void checkConv(const ConvCase &c, DType dtype, double tolerance,
               void *stream = nullptr) {
  INFO("x " << shapeToString(c.x) << " w " << shapeToString(c.w) << " group "
            << c.group << " strides " << shapeToString(c.strides) << " pads "
            << shapeToString(c.pads) << " dilations "
            << shapeToString(c.dilations) << " bias " << c.bias << " relu "
            << c.relu << " residual " << c.residual << " channels last "
            << c.channelsLast << " dtype "
            << dtypeName(dtype));
  std::mt19937 rng(7);
  Tensor x = randomTensor(c.x, rng, dtype), w = randomTensor(c.w, rng, dtype);
  Tensor bias = randomTensor({c.w[0]}, rng, dtype);
  Shape yShape;
  std::vector<double> expected = reference(c, x, w, bias, yShape);
  Tensor z = randomTensor(yShape, rng, dtype);
  if (c.residual) {
    std::vector<double> zs = z.to(DType::F32).toDoubleVector();
    for (size_t i = 0; i < expected.size(); ++i)
      expected[i] += zs[i];
  }
  if (c.relu)
    for (double &e : expected)
      e = e < 0 ? 0 : e;
  // The operands as stored (channels last: permuted).
  auto stored = [&](const Tensor &t) {
    return c.channelsLast ? moveChannels(t, /*toFirst=*/false) : t;
  };
  Tensor xs = stored(x), ws = stored(w), zs = stored(z);
  Shape xShape = xs.shape(), wShape = ws.shape();
  Shape yStored = yShape;
  if (c.channelsLast)
    std::rotate(yStored.begin() + 1, yStored.begin() + 2, yStored.end());
  Tensor dz = *zs.to(Device::CUDA);
  Tensor dx = *xs.to(Device::CUDA), dw = *ws.to(Device::CUDA),
         dbias = *bias.to(Device::CUDA);
  Tensor dy = *Tensor::empty(dtype, yStored, Device::CUDA);
  int layout = c.channelsLast ? KILN_CUDA_LAYOUT_NHWC : KILN_CUDA_LAYOUT_NCHW;
  char err[1024] = {0};
  int spatialDims = static_cast<int>(c.x.size()) - 2;
  const void *b = c.bias ? dbias.rawData() : nullptr;
  int rc =
      c.relu
          ? kiln_cuda_conv_relu(static_cast<int>(dtype), spatialDims, layout,
                                xShape.data(), dx.rawData(), wShape.data(),
                                dw.rawData(), b,
                                c.residual ? dz.rawData() : nullptr, c.group,
                                c.strides.data(), c.pads.data(),
                                c.dilations.data(), yStored.data(),
                                dy.rawData(), stream, err, sizeof(err))
          : kiln_cuda_conv(static_cast<int>(dtype), spatialDims, layout,
                           xShape.data(), dx.rawData(), wShape.data(),
                           dw.rawData(), b, c.group, c.strides.data(),
                           c.pads.data(), c.dilations.data(), yStored.data(),
                           dy.rawData(), stream, err, sizeof(err));
  INFO(err);
  REQUIRE(rc == 0);
  REQUIRE(kiln_cuda_stream_synchronize(stream, err, sizeof(err)) == 0);
  Expected<Tensor> host = dy.to(Device::CPU);
  REQUIRE(host.isOk());
  Tensor y = host->to(DType::F32);
  if (c.channelsLast)
    y = moveChannels(y, /*toFirst=*/true);
  std::vector<double> got = y.toDoubleVector();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("y[" << i << "] = " << got[i] << ", expected " << expected[i]);
    REQUIRE(std::abs(got[i] - expected[i]) <=
            tolerance * (1 + std::abs(expected[i])));
  }
}

} // namespace

TEST_CASE("kiln_cuda_conv f32 2-D matches the reference", "[gpu][conv]") {
  requireCudaForConv();
  // f32 computes in fp32 with FMA math (no TF32).
  // 3x3, stride 2, pad 1, bias.
  checkConv({{2, 8, 15, 15}, {16, 8, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, {1, 1},
             true},
            DType::F32, 1e-3);
  // ResNet's stem: 7x7, stride 2, pad 3, bias.
  checkConv({{1, 3, 32, 32}, {8, 3, 7, 7}, 1, {2, 2}, {3, 3, 3, 3}, {1, 1},
             true},
            DType::F32, 1e-3);
  // Depthwise (group = channels), no bias.
  checkConv({{2, 12, 10, 9}, {12, 1, 3, 3}, 12, {1, 1}, {1, 1, 1, 1}, {1, 1},
             false},
            DType::F32, 1e-3);
  // 1x1 with bias.
  checkConv({{1, 32, 7, 7}, {24, 32, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1},
             true},
            DType::F32, 1e-3);
  // Groups of 4 channels, dilation 2, stride 1, wide channels.
  checkConv({{1, 16, 12, 12}, {8, 4, 3, 3}, 4, {1, 1}, {2, 2, 2, 2}, {2, 2},
             true},
            DType::F32, 1e-3);
  // Rectangular kernel, different strides per dim.
  checkConv({{1, 4, 11, 13}, {6, 4, 3, 5}, 1, {1, 2}, {1, 2, 1, 2}, {1, 1},
             false},
            DType::F32, 1e-3);
}

TEST_CASE("kiln_cuda_conv f32 1-D and 3-D match the reference",
          "[gpu][conv]") {
  requireCudaForConv();
  checkConv({{2, 4, 20}, {6, 4, 5}, 1, {1}, {2, 2}, {1}, true}, DType::F32,
            1e-3);
  checkConv({{1, 6, 17}, {6, 3, 3}, 2, {2}, {1, 1}, {2}, false}, DType::F32,
            1e-3);
  checkConv({{1, 2, 6, 6, 6}, {4, 2, 3, 3, 3}, 1, {1, 1, 1},
             {1, 1, 1, 1, 1, 1}, {1, 1, 1}, true},
            DType::F32, 1e-3);
}

TEST_CASE("kiln_cuda_conv bf16 and f16 match the reference", "[gpu][conv]") {
  requireCudaForConv();
  // The output is rounded to 8 (bf16) or 11 (f16) significant bits.
  checkConv({{2, 16, 14, 14}, {32, 16, 3, 3}, 1, {2, 2}, {1, 1, 1, 1},
             {1, 1}, true},
            DType::BF16, 1.5e-2);
  checkConv({{1, 32, 8, 8}, {32, 1, 3, 3}, 32, {1, 1}, {1, 1, 1, 1}, {1, 1},
             false},
            DType::BF16, 1.5e-2);
  checkConv({{1, 64, 7, 7}, {32, 64, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1},
             true},
            DType::BF16, 1.5e-2);
  checkConv({{2, 16, 14, 14}, {32, 16, 3, 3}, 1, {2, 2}, {1, 1, 1, 1},
             {1, 1}, true},
            DType::F16, 3e-3);
}

TEST_CASE("kiln_cuda_conv on a pooled stream reuses its plan",
          "[gpu][conv]") {
  requireCudaForConv();
  ConvCase c{{1, 8, 9, 9}, {8, 8, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, {1, 1},
             true};
  void *stream = *cuda::acquireStream();
  checkConv(c, DType::F32, 1e-3, stream);
  checkConv(c, DType::F32, 1e-3, stream); // the cached plan and workspace
  checkConv(c, DType::F32, 1e-3);         // the same plan, another stream
  cuda::releaseStream(stream);
}

TEST_CASE("kiln_cuda_conv refuses asymmetric pads", "[gpu][conv]") {
  requireCudaForConv();
  // Height padded by 1 at the top only.
  Shape xs = {1, 1, 7, 5}, ws = {1, 1, 3, 3}, ys = {1, 1, 3, 2};
  Shape strides = {2, 2}, pads = {1, 0, 0, 0}, dil = {1, 1};
  Tensor x = *Tensor::empty(DType::F32, xs, Device::CUDA);
  Tensor w = *Tensor::empty(DType::F32, ws, Device::CUDA);
  Tensor y = *Tensor::empty(DType::F32, ys, Device::CUDA);
  char err[512] = {0};
  CHECK(kiln_cuda_conv(0, 2, KILN_CUDA_LAYOUT_NCHW, xs.data(), x.rawData(), ws.data(), w.rawData(),
                       nullptr, 1, strides.data(), pads.data(), dil.data(),
                       ys.data(), y.rawData(), nullptr, err,
                       sizeof(err)) != 0);
  CHECK(std::string(err).find("symmetric pads only") != std::string::npos);
}

TEST_CASE("kiln_cuda_conv_relu: bias, residual and ReLU in the cuDNN call",
          "[gpu][conv]") {
  requireCudaForConv();
  // ResNet's bottleneck end: 1x1, bias, residual, ReLU.
  ConvCase c{{2, 16, 14, 14}, {32, 16, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1},
             true};
  c.relu = c.residual = true;
  checkConv(c, DType::F32, 1e-3);
  // 3x3 with ReLU only (a zero bias stands in), strided.
  ConvCase d{{2, 8, 15, 15}, {16, 8, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, {1, 1},
             false};
  d.relu = true;
  checkConv(d, DType::F32, 1e-3);
  // bf16 and f16 (the fused call or, where cuDNN refuses it, separate calls).
  checkConv(c, DType::BF16, 3e-2);
  checkConv(d, DType::F16, 1e-2);
}

TEST_CASE("kiln_cuda_conv channels last (NHWC) matches the reference",
          "[gpu][conv]") {
  requireCudaForConv();
  std::vector<ConvCase> cases = {
      // 3x3 stride 2 with bias; ResNet's stem; depthwise; grouped + dilated.
      {{2, 8, 15, 15}, {16, 8, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}, true},
      {{1, 3, 32, 32}, {8, 3, 7, 7}, 1, {2, 2}, {3, 3, 3, 3}, {1, 1}, true},
      {{2, 12, 10, 9}, {12, 1, 3, 3}, 12, {1, 1}, {1, 1, 1, 1}, {1, 1}, false},
      {{1, 16, 12, 12}, {8, 4, 3, 3}, 4, {1, 1}, {2, 2, 2, 2}, {2, 2}, true},
  };
  for (ConvCase c : cases) {
    c.channelsLast = true;
    checkConv(c, DType::F32, 1e-3);
    checkConv(c, DType::BF16, 1.5e-2);
  }
  // The fused call: 1x1 + bias + residual + ReLU, and ReLU alone.
  ConvCase r{{2, 16, 14, 14}, {32, 16, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1},
             true};
  r.relu = r.residual = r.channelsLast = true;
  checkConv(r, DType::F32, 1e-3);
  checkConv(r, DType::BF16, 3e-2);
  checkConv(r, DType::F16, 1e-2);
  ConvCase d{{2, 8, 15, 15}, {16, 8, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, {1, 1},
             false};
  d.relu = d.channelsLast = true;
  checkConv(d, DType::BF16, 3e-2);
}
