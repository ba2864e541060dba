//===- OneDnnTest.cpp - Tests of the oneDNN primitives of cpu packages ----===//
//
// This file implements the unit tests of kiln::OneDnnPrimitives (what a cpu
// package's onednn.* library calls run): matmuls with transposed, batched
// and packed operands and every epilogue part, convolutions channels first
// and last (grouped, weights read channels first; the residual read from
// the destination; Winograd's algorithm), the runtime's panel GEMM for few
// rows and its panel convolution for few output pixels, max pooling with
// ceil mode, against plain loops in the test (referenceProduct,
// referenceConv), at one and two OpenMP threads (a primitive variant each).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/OneDnn.h"

#include "../../../runtime/lib/PanelConv.h"
#include "../../../runtime/lib/PanelMatmul.h"

#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace kiln;

namespace {

std::vector<float> ramp(size_t n, int salt = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] =
        static_cast<float>(static_cast<int>((i * 7 + salt) % 13) - 6) * 0.25f;
  return v;
}

void requireNear(const std::vector<float> &got,
                 const std::vector<float> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(want[i]).margin(1e-4).epsilon(1e-4));
  }
}

/// Runs primitive 0 of `p` at 1 and 2 threads; each result must be `want`.
/// With `residualInY`, y starts as a copy of it and is passed as the
/// residual too (OneDnnEpilogue::residualInPlace).
void runAtThreadCounts(const OneDnnPrimitives &p, const void *x, const void *w,
                       const void *bias, const void *residual, size_t outSize,
                       const std::vector<float> &want,
                       const std::vector<float> *residualInY = nullptr) {
  int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<float> y =
        residualInY ? *residualInY : std::vector<float>(outSize, -99.f);
    Status s =
        p.run(0, x, w, bias, residualInY ? y.data() : residual, y.data());
    INFO(s.message());
    REQUIRE(s.isOk());
    requireNear(y, want);
  }
  omp_set_num_threads(saved);
}

/// a [m, k] times b ([k, n], or [n, k] when `transB`), plus bias [n] and
/// residual [m, n] where given: what each product test's activation is
/// applied to.
std::vector<float> referenceProduct(const std::vector<float> &a,
                                    const std::vector<float> &b, int64_t m,
                                    int64_t n, int64_t k, bool transB,
                                    const float *bias = nullptr,
                                    const float *residual = nullptr) {
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = (bias ? bias[j] : 0.f) + (residual ? residual[i * n + j] : 0.f);
      for (int64_t l = 0; l < k; ++l)
        acc += a[i * k + l] * (transB ? b[j * k + l] : b[l * n + j]);
      y[i * n + j] = acc;
    }
  return y;
}

/// The geometry of a 2-D channels-last convolution of one image.
struct ConvShape {
  int64_t h, w, c, o, group, kh, kw, stride, padTop, padLeft, oh, ow;
};

/// x [h, w, c] (NHWC) convolved with weights [o, c / group, kh, kw] (OIHW),
/// plus bias [o]: [oh, ow, o], what each convolution test's activation is
/// applied to.
std::vector<float> referenceConv(const std::vector<float> &x,
                                 const std::vector<float> &w,
                                 const std::vector<float> &bias,
                                 const ConvShape &s) {
  const int64_t cg = s.c / s.group, og = s.o / s.group;
  std::vector<float> y(s.oh * s.ow * s.o);
  for (int64_t oy = 0; oy < s.oh; ++oy)
    for (int64_t ox = 0; ox < s.ow; ++ox)
      for (int64_t oc = 0; oc < s.o; ++oc) {
        const int64_t group = oc / og;
        float acc = bias[oc];
        for (int64_t ic = 0; ic < cg; ++ic)
          for (int64_t i = 0; i < s.kh; ++i)
            for (int64_t j = 0; j < s.kw; ++j) {
              int64_t iy = oy * s.stride - s.padTop + i,
                      ix = ox * s.stride - s.padLeft + j;
              if (iy < 0 || ix < 0 || iy >= s.h || ix >= s.w)
                continue;
              acc += x[(iy * s.w + ix) * s.c + group * cg + ic] *
                     w[((oc * cg + ic) * s.kh + i) * s.kw + j];
            }
        y[(oy * s.ow + ox) * s.o + oc] = acc;
      }
  return y;
}

} // namespace

TEST_CASE("oneDNN matmul: transposed packed B, bias, residual, ReLU",
          "[onednn]") {
  const int64_t m = 5, k = 7, n = 9;
  std::vector<float> a = ramp(m * k), bt = ramp(n * k, 3), bias = ramp(n, 5),
                     res = ramp(m * n, 1);
  OneDnnMatmulDesc d;
  d.m = m, d.n = n, d.k = k;
  d.transB = true, d.packB = true;
  d.epilogue.bias = d.epilogue.residual = true;
  d.epilogue.activation = OneDnnActivation::Relu;
  OneDnnPrimitives p;
  REQUIRE(p.addMatmul(d, bt.data()).isOk());
  std::vector<float> want = referenceProduct(a, bt, m, n, k, /*transB=*/true,
                                            bias.data(), res.data());
  for (float &v : want)
    v = std::max(0.f, v);
  runAtThreadCounts(p, a.data(), nullptr, bias.data(), res.data(), m * n, want);
}

TEST_CASE("panel matmul: few rows by a packed B, partial panels, bias, "
          "residual (also in the destination), ReLU",
          "[onednn]") {
  // The runtime's own GEMM (cpu.panel_matmul): every row count it
  // takes, a last panel of 13 of its 32 columns, B stored both ways.
  const int64_t k = 37, n = 2 * 32 + 13;
  for (int64_t m : {1, 3, 8})
    for (bool transB : {false, true})
      for (bool relu : {false, true}) {
        INFO("m " << m << " transB " << transB << " relu " << relu);
        std::vector<float> a = ramp(m * k), b = ramp(k * n, 3),
                           bias = ramp(n, 5), res = ramp(m * n, 1);
        OneDnnMatmulDesc d;
        d.m = m, d.n = n, d.k = k;
        d.transB = transB, d.packB = true, d.panels = true;
        d.epilogue.bias = d.epilogue.residual = true;
        if (relu)
          d.epilogue.activation = OneDnnActivation::Relu;
        OneDnnPrimitives p;
        REQUIRE(p.addMatmul(d, b.data()).isOk());
        std::vector<float> want =
            referenceProduct(a, b, m, n, k, transB, bias.data(), res.data());
        if (relu)
          for (float &v : want)
            v = std::max(0.f, v);
        runAtThreadCounts(p, a.data(), nullptr, bias.data(), res.data(), m * n,
                          want);
        // The residual in the result's buffer (kiln.in_place).
        std::vector<float> y = res;
        REQUIRE(p.run(0, a.data(), nullptr, bias.data(), y.data(), y.data())
                    .isOk());
        requireNear(y, want);
      }
  // More rows than a panel's registers hold is refused.
  OneDnnMatmulDesc d;
  d.m = 9, d.n = 32, d.k = 4, d.packB = true, d.panels = true;
  std::vector<float> b = ramp(4 * 32);
  OneDnnPrimitives p;
  Status s = p.addMatmul(d, b.data());
  REQUIRE(!s.isOk());
  REQUIRE(s.message().find("panel matmul") != std::string::npos);
}

TEST_CASE("panel matmul: the portable loop computes what the AVX-512 "
          "kernel does",
          "[onednn]") {
  // Machines without AVX-512 run the portable loop: the same sums, in the
  // same order per element, as the kernel this machine runs.
  const int64_t m = 5, k = 19, n = 40;
  std::vector<float> a = ramp(m * k), b = ramp(n * k, 2), bias = ramp(n, 4),
                     res = ramp(m * n, 6);
  PanelMatmul fast(m, n, k, b.data(), /*transB=*/true, /*relu=*/true);
  PanelMatmul portable(m, n, k, b.data(), /*transB=*/true, /*relu=*/true,
                       /*portable=*/true);
  std::vector<float> y(m * n, -1.f), want(m * n, -2.f);
  fast.run(a.data(), bias.data(), res.data(), y.data());
  portable.run(a.data(), bias.data(), res.data(), want.data());
  requireNear(y, want);
  std::vector<float> sums = referenceProduct(a, b, m, n, k, /*transB=*/true,
                                             bias.data(), res.data());
  for (int64_t i = 0; i < m * n; ++i) {
    INFO("element " << i);
    REQUIRE(want[i] == Approx(std::max(0.f, sums[i])).margin(1e-4));
  }
}

TEST_CASE("oneDNN matmul: ReLU6 (clipped to [0, 6]) after the bias",
          "[onednn]") {
  // Products reach past both bounds: a ramp times 4.
  const int64_t m = 4, k = 6, n = 5;
  std::vector<float> a = ramp(m * k), b = ramp(k * n, 2), bias = ramp(n, 7);
  for (float &v : a)
    v *= 4.f;
  OneDnnMatmulDesc d;
  d.m = m, d.n = n, d.k = k;
  d.epilogue.bias = true;
  d.epilogue.activation = OneDnnActivation::Relu6;
  OneDnnPrimitives p;
  REQUIRE(p.addMatmul(d, nullptr).isOk());
  std::vector<float> want =
      referenceProduct(a, b, m, n, k, /*transB=*/false, bias.data());
  bool low = false, high = false;
  for (float &v : want) {
    low |= v < 0.f, high |= v > 6.f;
    v = std::min(6.f, std::max(0.f, v));
  }
  REQUIRE((low && high));
  runAtThreadCounts(p, a.data(), b.data(), bias.data(), nullptr, m * n, want);
}

TEST_CASE("oneDNN matmul: a batch of transposed A times one B, GELU",
          "[onednn]") {
  const int64_t batch = 3, m = 4, k = 6, n = 5;
  std::vector<float> at = ramp(batch * k * m), b = ramp(k * n, 2);
  for (OneDnnActivation act :
       {OneDnnActivation::GeluErf, OneDnnActivation::GeluTanh}) {
    OneDnnMatmulDesc d;
    d.batch = batch, d.m = m, d.n = n, d.k = k;
    d.strideA = m * k, d.strideB = 0;
    d.transA = true;
    d.epilogue.activation = act;
    OneDnnPrimitives p;
    REQUIRE(p.addMatmul(d, nullptr).isOk());
    std::vector<float> want(batch * m * n);
    for (int64_t t = 0; t < batch; ++t)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float x = 0;
          for (int64_t l = 0; l < k; ++l)
            x += at[t * m * k + l * m + i] * b[l * n + j];
          want[(t * m + i) * n + j] =
              act == OneDnnActivation::GeluErf
                  ? 0.5f * x * (1 + std::erf(x / std::sqrt(2.f)))
                  : 0.5f * x *
                        (1 + std::tanh(0.7978845608f *
                                       (x + 0.044715f * x * x * x)));
        }
    runAtThreadCounts(p, at.data(), b.data(), nullptr, nullptr, batch * m * n,
                      want);
  }
}

TEST_CASE("oneDNN convolution: grouped, channels last, bias, hard swish",
          "[onednn]") {
  // x [1, 5, 6, 4] (NHWC), weights [6, 3, 3, 2] (OIHW, group 2: read
  // channels first), stride 2, pads (1, 0) before and (1, 1) after.
  const int64_t c = 4, h = 5, wd = 6, o = 6, g = 2, cg = c / g, kh = 3, kw = 3;
  const int64_t oh = (h + 1 + 1 - kh) / 2 + 1, ow = (wd + 0 + 1 - kw) / 2 + 1;
  std::vector<float> x = ramp(h * wd * c), w = ramp(o * cg * kh * kw, 4),
                     bias = ramp(o, 6);
  OneDnnConvDesc d;
  d.batch = 1, d.channels = c, d.outChannels = o, d.group = g;
  d.inSize = {h, wd}, d.outSize = {oh, ow}, d.kernel = {kh, kw};
  d.strides = {2, 2}, d.dilations = {1, 1};
  d.padsBegin = {1, 0}, d.padsEnd = {1, 1};
  d.channelsLast = true, d.weightsChannelsFirst = true, d.packWeights = true;
  d.epilogue.bias = true;
  d.epilogue.activation = OneDnnActivation::HardSwish;
  OneDnnPrimitives p;
  REQUIRE(p.addConv(d, w.data()).isOk());
  std::vector<float> want =
      referenceConv(x, w, bias, {h, wd, c, o, g, kh, kw, 2, 1, 0, oh, ow});
  for (float &v : want)
    v *= std::max(0.f, std::min(1.f, v / 6 + 0.5f));
  runAtThreadCounts(p, x.data(), nullptr, bias.data(), nullptr, want.size(),
                    want);
}

TEST_CASE("oneDNN convolution: Winograd, channels last, bias, ReLU",
          "[onednn]") {
  // A ResNet 3x3 convolution, stride 1, pads 1: x [1, 10, 12, 16] (NHWC),
  // weights [32, 16, 3, 3] (OIHW, read channels first) or [32, 3, 3, 16]
  // (OHWI). The activations are reordered into oneDNN's blocked layout and
  // back around the kernel.
  const int64_t c = 16, h = 10, wd = 12, o = 32, k = 3;
  const bool ohwi = GENERATE(false, true);
  std::vector<float> x = ramp(h * wd * c), w = ramp(o * c * k * k, 4),
                     bias = ramp(o, 6);
  std::vector<float> wGiven = w; // w as OIHW, wGiven as the call reads it
  if (ohwi)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t ic = 0; ic < c; ++ic)
        for (int64_t i = 0; i < k * k; ++i)
          wGiven[(oc * k * k + i) * c + ic] = w[(oc * c + ic) * k * k + i];
  OneDnnConvDesc d;
  d.batch = 1, d.channels = c, d.outChannels = o;
  d.inSize = d.outSize = {h, wd}, d.kernel = {k, k};
  d.strides = {1, 1}, d.dilations = {1, 1};
  d.padsBegin = {1, 1}, d.padsEnd = {1, 1};
  d.channelsLast = true, d.weightsChannelsFirst = !ohwi, d.packWeights = true;
  d.epilogue.bias = true;
  d.epilogue.activation = OneDnnActivation::Relu;
  d.winograd = true;
  OneDnnPrimitives p;
  REQUIRE(p.addConv(d, wGiven.data()).isOk());
  // oneDNN's Winograd kernels need AVX-512; elsewhere the direct one runs.
  if (__builtin_cpu_supports("avx512f"))
    REQUIRE(p.implementation(0).find("wino") != std::string::npos);
  std::vector<float> want =
      referenceConv(x, w, bias, {h, wd, c, o, 1, k, k, 1, 1, 1, h, wd});
  for (float &v : want)
    v = std::max(0.f, v);
  runAtThreadCounts(p, x.data(), nullptr, bias.data(), nullptr, want.size(),
                    want);

  // What the kernel cannot do is refused when the model loads.
  OneDnnConvDesc strided = d;
  strided.strides = {2, 2};
  strided.outSize = {5, 6};
  Status s = OneDnnPrimitives().addConv(strided, w.data());
  REQUIRE(!s.isOk());
  REQUIRE(s.message().find("Winograd") != std::string::npos);
  OneDnnConvDesc residual = d;
  residual.epilogue.residual = true;
  REQUIRE(!OneDnnPrimitives().addConv(residual, w.data()).isOk());
}

TEST_CASE("oneDNN convolution: 1x1, channels last, bias, residual in the "
          "destination, ReLU",
          "[onednn]") {
  // ResNet's last convolution of a bottleneck block: the residual is in the
  // result's buffer when the call runs (OneDnnEpilogue::residualInPlace,
  // oneDNN's sum post-op). x [1, 7, 7, 32] (NHWC), weights [64, 32, 1, 1].
  const int64_t c = 32, hw = 7 * 7, o = 64;
  std::vector<float> x = ramp(hw * c), w = ramp(o * c, 4), bias = ramp(o, 6),
                     res = ramp(hw * o, 2);
  OneDnnConvDesc d;
  d.batch = 1, d.channels = c, d.outChannels = o;
  d.inSize = d.outSize = {7, 7}, d.kernel = {1, 1};
  d.strides = d.dilations = {1, 1};
  d.padsBegin = d.padsEnd = {0, 0};
  d.channelsLast = true, d.weightsChannelsFirst = true, d.packWeights = true;
  d.epilogue.bias = d.epilogue.residual = d.epilogue.residualInPlace = true;
  d.epilogue.activation = OneDnnActivation::Relu;
  OneDnnPrimitives p;
  REQUIRE(p.addConv(d, w.data()).isOk());
  // A 1x1 convolution of NHWC x is x [hw, c] times w [o, c] transposed.
  std::vector<float> want = referenceProduct(x, w, hw, o, c, /*transB=*/true,
                                             bias.data(), res.data());
  for (float &v : want)
    v = std::max(0.f, v);
  runAtThreadCounts(p, x.data(), nullptr, bias.data(), nullptr, res.size(),
                    want, &res);
  // The residual elsewhere than the destination is refused, not ignored.
  std::vector<float> y(hw * o);
  Status s = p.run(0, x.data(), nullptr, bias.data(), res.data(), y.data());
  REQUIRE(!s.isOk());
  REQUIRE(s.message().find("not in the result's buffer") != std::string::npos);
}

/// The descriptor of a panel convolution (OneDnnConvDesc::panels) of
/// `batch` images of shape `s`, weights OIHW when `oihw` (else OHWI), bias,
/// the residual in the destination and ReLU.
OneDnnConvDesc panelConvDesc(int64_t batch, const ConvShape &s, bool oihw) {
  OneDnnConvDesc d;
  d.batch = batch, d.channels = s.c, d.outChannels = s.o;
  d.inSize = {s.h, s.w}, d.outSize = {s.oh, s.ow}, d.kernel = {s.kh, s.kw};
  d.strides = {s.stride, s.stride}, d.dilations = {1, 1};
  d.padsBegin = {s.padTop, s.padLeft};
  d.padsEnd = {(s.oh - 1) * s.stride + s.kh - s.h - s.padTop,
               (s.ow - 1) * s.stride + s.kw - s.w - s.padLeft};
  d.channelsLast = true, d.weightsChannelsFirst = oihw, d.packWeights = true;
  d.epilogue.bias = d.epilogue.residual = d.epilogue.residualInPlace = true;
  d.epilogue.activation = OneDnnActivation::Relu;
  d.panels = true;
  return d;
}

/// `w` [o, c, kh, kw] (OIHW) as OHWI.
std::vector<float> toOhwi(const std::vector<float> &w, const ConvShape &s) {
  std::vector<float> out(w.size());
  for (int64_t oc = 0; oc < s.o; ++oc)
    for (int64_t ic = 0; ic < s.c; ++ic)
      for (int64_t i = 0; i < s.kh * s.kw; ++i)
        out[(oc * s.kh * s.kw + i) * s.c + ic] =
            w[(oc * s.c + ic) * s.kh * s.kw + i];
  return out;
}

TEST_CASE("panel convolution: few output pixels by packed weights, im2col "
          "or direct, partial panels, bias, residual, ReLU",
          "[onednn]") {
  // A stride-2 3x3 convolution with pads of two images of 9 x 11 (im2col;
  // 2 x 5 x 6 = 60 rows: eight blocks of 7 and one of 4), 40 channels in
  // (k = 360: three chunks of k) and 70 out (a full panel and one of 6
  // columns); and a 1x1 convolution of stride 1 (x read as it is; 49 rows,
  // k = 200, 64 out).
  const bool strided = GENERATE(true, false);
  const bool oihw = GENERATE(false, true);
  const int64_t batch = strided ? 2 : 1;
  ConvShape s = strided ? ConvShape{9, 11, 40, 70, 1, 3, 3, 2, 1, 1, 5, 6}
                        : ConvShape{7, 7, 200, 64, 1, 1, 1, 1, 0, 0, 7, 7};
  const int64_t image = s.h * s.w * s.c, outImage = s.oh * s.ow * s.o;
  std::vector<float> x = ramp(batch * image),
                     w = ramp(s.o * s.c * s.kh * s.kw, 4), bias = ramp(s.o, 6),
                     res = ramp(batch * outImage, 2);
  std::vector<float> want;
  for (int64_t n = 0; n < batch; ++n) {
    std::vector<float> xn(x.begin() + n * image, x.begin() + (n + 1) * image);
    std::vector<float> yn = referenceConv(xn, w, bias, s);
    for (int64_t i = 0; i < outImage; ++i)
      want.push_back(std::max(0.f, yn[i] + res[n * outImage + i]));
  }
  std::vector<float> wGiven = oihw ? w : toOhwi(w, s);
  OneDnnPrimitives p;
  REQUIRE(p.addConv(panelConvDesc(batch, s, oihw), wGiven.data()).isOk());
  REQUIRE(p.implementation(0) == "panels");
  runAtThreadCounts(p, x.data(), nullptr, bias.data(), nullptr, res.size(),
                    want, &res);

  // The portable loop computes what the AVX-512 kernel does.
  PanelConv::Geometry g;
  g.batch = batch, g.channels = s.c, g.outChannels = s.o;
  g.inH = s.h, g.inW = s.w, g.outH = s.oh, g.outW = s.ow;
  g.kernelH = s.kh, g.kernelW = s.kw, g.strideH = g.strideW = s.stride;
  g.padH = s.padTop, g.padW = s.padLeft;
  PanelConv portable(g, wGiven.data(), oihw, /*relu=*/true, /*portable=*/true);
  std::vector<float> y = res;
  portable.run(x.data(), bias.data(), y.data(), y.data());
  requireNear(y, want);
}

TEST_CASE("panel convolution: what it cannot do is refused when the model "
          "loads",
          "[onednn]") {
  ConvShape s{7, 7, 8, 16, 1, 1, 1, 1, 0, 0, 7, 7};
  std::vector<float> w = ramp(16 * 8);
  auto refused = [&](const OneDnnConvDesc &d) {
    Status st = OneDnnPrimitives().addConv(d, w.data());
    INFO(st.message());
    return !st.isOk() &&
           st.message().find("panel convolution") != std::string::npos;
  };
  OneDnnConvDesc d = panelConvDesc(1, s, true);
  REQUIRE(OneDnnPrimitives().addConv(d, w.data()).isOk());
  OneDnnConvDesc grouped = d;
  grouped.group = 2;
  CHECK(refused(grouped));
  OneDnnConvDesc many = panelConvDesc(2, s, true); // 98 output pixels
  CHECK(refused(many));
  OneDnnConvDesc dilated = d;
  dilated.dilations = {2, 2};
  CHECK(refused(dilated));
  OneDnnConvDesc gelu = d;
  gelu.epilogue.activation = OneDnnActivation::GeluTanh;
  CHECK(refused(gelu));
  OneDnnConvDesc first = d;
  first.channelsLast = false;
  CHECK(refused(first));
}

TEST_CASE("oneDNN max pooling: channels first, ceil mode", "[onednn]") {
  // [1, 2, 5, 5], 2x2 windows, stride 2, ceil mode: 3x3 outputs whose last
  // windows hang over the end.
  const int64_t c = 2, h = 5, oh = 3;
  std::vector<float> x = ramp(c * h * h, 8);
  OneDnnPoolDesc d;
  d.batch = 1, d.channels = c;
  d.inSize = {h, h}, d.outSize = {oh, oh}, d.kernel = {2, 2};
  d.strides = {2, 2}, d.dilations = {1, 1}, d.padsBegin = {0, 0};
  OneDnnPrimitives p;
  REQUIRE(p.addMaxPool(d).isOk());
  std::vector<float> want(c * oh * oh);
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < oh; ++xo) {
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            if (y * 2 + i < h && xo * 2 + j < h)
              best = std::max(best, x[(ch * h + y * 2 + i) * h + xo * 2 + j]);
        want[(ch * oh + y) * oh + xo] = best;
      }
  runAtThreadCounts(p, x.data(), nullptr, nullptr, nullptr, want.size(), want);
}

TEST_CASE("oneDNN: a primitive that was not created is an error", "[onednn]") {
  OneDnnPrimitives p;
  float y = 0;
  Status s = p.run(0, &y, nullptr, nullptr, nullptr, &y);
  REQUIRE_FALSE(s.isOk());
  REQUIRE(s.message().find("was not created") != std::string::npos);
}
