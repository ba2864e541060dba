//===- cpu_gemm_libs.cpp - OpenBLAS vs oneDNN on the bench models' GEMMs --===//
//
// This file implements the measurement behind the CPU target's choice of
// GEMM/convolution library (BENCHMARKS.md, issue 20): the sgemm shapes of
// the bench models (mlp, gpt2_block: [M,K]x[K,N], M = batch*seq) and
// resnet50 convolutions, through OpenBLAS's cblas_sgemm (im2col for the
// convolutions, as the runtime's reference kernel does) and through oneDNN
// primitives (weights reordered once into the primitive's blocked layout,
// as a package prepares them at load). Median of timed runs, in ms; the
// thread count is OMP_NUM_THREADS (oneDNN, GNU OpenMP) and
// OPENBLAS_NUM_THREADS.
//
//   g++ -O2 -std=c++17 bench/cpu_gemm_libs.cpp -ldnnl -lopenblas -o /tmp/gl
//   OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /tmp/gl
//
//===----------------------------------------------------------------------===//

#include <oneapi/dnnl/dnnl.hpp>

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

using namespace dnnl;

namespace {

double medianMs(const std::function<void()> &f, int iterations) {
  for (int i = 0; i < 3; ++i)
    f();
  std::vector<double> t;
  for (int i = 0; i < iterations; ++i) {
    auto s = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - s)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void gemm(engine &eng, stream &s, int m, int k, int n) {
  std::vector<float> a(size_t(m) * k, 0.5f), b(size_t(k) * n, 0.25f),
      c(size_t(m) * n), bias(n, 1.f);
  double blas = medianMs(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f,
                    a.data(), k, b.data(), n, 0.f, c.data(), n);
      },
      30);
  memory::desc ad({m, k}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc bAny({k, n}, memory::data_type::f32, memory::format_tag::any);
  memory::desc bd({k, n}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc cd({m, n}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc biasd({1, n}, memory::data_type::f32, memory::format_tag::ab);
  matmul::primitive_desc pd(matmul::desc(ad, bAny, biasd, cd), eng);
  memory bPlain(bd, eng, b.data()), bPacked(pd.weights_desc(), eng);
  reorder(bPlain, bPacked).execute(s, bPlain, bPacked);
  memory am(ad, eng, a.data()), cm(cd, eng, c.data()),
      biasm(biasd, eng, bias.data());
  matmul mm(pd);
  double dnnl = medianMs(
      [&] {
        mm.execute(s, {{DNNL_ARG_SRC, am},
                       {DNNL_ARG_WEIGHTS, bPacked},
                       {DNNL_ARG_BIAS, biasm},
                       {DNNL_ARG_DST, cm}});
        s.wait();
      },
      30);
  std::printf("gemm %5d x %5d x %5d  openblas %8.3f ms  onednn %8.3f ms  "
              "onednn/openblas %.2f\n",
              m, k, n, blas, dnnl, dnnl / blas);
}

void conv(engine &eng, stream &s, int c, int hw, int oc, int kernel,
          int stride) {
  int pad = kernel / 2, ohw = (hw + 2 * pad - kernel) / stride + 1;
  std::vector<float> x(size_t(c) * hw * hw, 0.5f),
      w(size_t(oc) * c * kernel * kernel, 0.25f),
      y(size_t(oc) * ohw * ohw), col(size_t(c) * kernel * kernel * ohw * ohw);
  // im2col + sgemm, as the runtime's reference convolution.
  double blas = medianMs(
      [&] {
        int kk = c * kernel * kernel, n = ohw * ohw;
        for (int ci = 0; ci < c; ++ci)
          for (int ky = 0; ky < kernel; ++ky)
            for (int kx = 0; kx < kernel; ++kx) {
              float *row = &col[size_t((ci * kernel + ky) * kernel + kx) * n];
              for (int oy = 0; oy < ohw; ++oy)
                for (int ox = 0; ox < ohw; ++ox) {
                  int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                  row[oy * ohw + ox] =
                      iy < 0 || ix < 0 || iy >= hw || ix >= hw
                          ? 0.f
                          : x[(size_t(ci) * hw + iy) * hw + ix];
                }
            }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, oc, n, kk, 1.f,
                    w.data(), kk, col.data(), n, 0.f, y.data(), n);
      },
      20);
  auto f32 = memory::data_type::f32;
  memory::desc xd({1, c, hw, hw}, f32, memory::format_tag::nchw);
  memory::desc wd({oc, c, kernel, kernel}, f32, memory::format_tag::oihw);
  memory::desc yd({1, oc, ohw, ohw}, f32, memory::format_tag::nchw);
  auto run = [&](memory::format_tag act) {
    memory::desc xa({1, c, hw, hw}, f32, act), ya({1, oc, ohw, ohw}, f32, act);
    memory::desc wa({oc, c, kernel, kernel}, f32, memory::format_tag::any);
    convolution_forward::primitive_desc pd(
        convolution_forward::desc(prop_kind::forward_inference,
                                  algorithm::convolution_direct, xa, wa, ya,
                                  {stride, stride}, {pad, pad}, {pad, pad}),
        eng);
    memory wPlain(wd, eng, w.data()), wPacked(pd.weights_desc(), eng);
    reorder(wPlain, wPacked).execute(s, wPlain, wPacked);
    memory xm(pd.src_desc(), eng), ym(pd.dst_desc(), eng);
    convolution_forward cv(pd);
    return medianMs(
        [&] {
          cv.execute(s, {{DNNL_ARG_SRC, xm},
                         {DNNL_ARG_WEIGHTS, wPacked},
                         {DNNL_ARG_DST, ym}});
          s.wait();
        },
        20);
  };
  double nchw = run(memory::format_tag::nchw);
  double nhwc = run(memory::format_tag::nhwc);
  double blocked = run(memory::format_tag::any);
  std::printf("conv %4dx%3dx%3d k%d s%d -> %4d  im2col+openblas %7.3f ms  "
              "onednn nchw %7.3f  nhwc %7.3f  blocked %7.3f  "
              "(nchw/openblas %.2f)\n",
              c, hw, hw, kernel, stride, oc, blas, nchw, nhwc, blocked,
              nchw / blas);
}

} // namespace

int main() {
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  int shapes[][3] = {{8, 1024, 4096},  {8, 4096, 1024},  {128, 768, 2304},
                     {128, 768, 768},  {128, 768, 3072}, {128, 3072, 768},
                     {128, 64, 128},   {1, 2048, 1000}};
  for (auto &g : shapes)
    gemm(eng, s, g[0], g[1], g[2]);
  conv(eng, s, 64, 56, 64, 3, 1);
  conv(eng, s, 256, 56, 64, 1, 1);
  conv(eng, s, 256, 14, 256, 3, 1);
  conv(eng, s, 1024, 14, 256, 1, 1);
  conv(eng, s, 3, 224, 64, 7, 2);
  return 0;
}
