//===- cpu_conv_onednn_versions.cpp - A model's convolutions, any oneDNN ---===//
//
// This file implements the measurement behind keeping Debian's oneDNN 2.6.3
// for the CPU target (BENCHMARKS.md, issue 20): it replays the convolutions
// a package runs, as `ONEDNN_VERBOSE=1 kiln bench PKG --iterations 1
// --warmup 1` logs them (the second half of the log: one run), through the
// oneDNN it is built against (2.x or 3.x API): the same problem, NHWC
// activations, weights in the primitive's chosen layout, the logged
// post-ops (bias, residual add or sum, ReLU, clip, swish, logistic). It
// prints the sum over the model of each convolution's median time (20 runs
// after 3), in ms; with a second argument, each convolution and the kernel
// oneDNN chose. Two variants (BENCHMARKS.md, twenty-first session):
// BLOCKED=1 gives the activations oneDNN's nChw16c layout (nchw for an
// input of fewer than 16 channels) instead of NHWC; WINO=1 asks for
// convolution_winograd, on nChw16c, for the 3x3 stride-1 convolutions
// (timed with the reorders from and to NHWC around it).
//
//   ONEDNN_VERBOSE=1 build/bin/kiln bench PKG --threads 1 --iterations 1 \
//     --warmup 1 | grep exec,cpu,convolution > convs.log
//   g++ -O2 -std=c++17 bench/cpu_conv_onednn_versions.cpp -ldnnl -o /tmp/c26
//   # oneDNN 3.2: pip download onednn-cpu-gomp onednn-devel-cpu-gomp, unzip
//   g++ -O2 -std=c++17 -I$DEVEL/include bench/cpu_conv_onednn_versions.cpp \
//     -L$LIB -l:libdnnl.so.3 -Wl,-rpath,$LIB -o /tmp/c32
//   OMP_NUM_THREADS=1 /tmp/c26 convs.log; OMP_NUM_THREADS=1 /tmp/c32 convs.log
//
//===----------------------------------------------------------------------===//

#include <oneapi/dnnl/dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>
#include <algorithm>
#include <cstdlib>
#include <unordered_map>
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
static long field(const std::string &p, const char *k, long def) {
  std::smatch m;
  // The key preceded by the start, a digit or '_' ("ic" in "mb1_ic3oc64").
  std::regex r2(std::string("(?:^|[0-9_])") + k + "([0-9]+)");
  if (std::regex_search(p, m, r2)) return std::stol(m[1]);
  return def;
}
int main(int argc, char **argv) {
  engine eng(engine::kind::cpu, 0); stream s(eng);
  std::ifstream in(argv[1]); std::string line; double total = 0; int count = 0;
  std::vector<std::string> lines; while (std::getline(in, line)) lines.push_back(line);
  lines.erase(lines.begin(), lines.begin() + lines.size() / 2);
  for (auto &l : lines) {
    std::vector<std::string> f; size_t a = 0, b;
    while ((b = l.find(',', a)) != std::string::npos) { f.push_back(l.substr(a, b - a)); a = b + 1; }
    f.push_back(l.substr(a));
    std::string mds = f[6], attrs = f[7], prob = f[9];
    bool bias = mds.find("bia_undef") == std::string::npos;
    long g = field(prob, "g", 1), mb = field(prob, "mb", 1), ic = field(prob, "ic", 0), oc = field(prob, "oc", 0);
    long ih = field(prob, "ih", 0), oh = field(prob, "oh", 0), kh = field(prob, "kh", 1), sh = field(prob, "sh", 1), dh = field(prob, "dh", 0), ph = field(prob, "ph", 0);
    long iw = field(prob, "iw", 0), ow = field(prob, "ow", 0), kw = field(prob, "kw", 1), sw = field(prob, "sw", 1), dw = field(prob, "dw", 0), pw = field(prob, "pw", 0);
    long prh = (oh - 1) * sh - ih + ((kh - 1) * (dh + 1) + 1) - ph, prw = (ow - 1) * sw - iw + ((kw - 1) * (dw + 1) + 1) - pw;
    const bool blocked = std::getenv("BLOCKED") != nullptr;
    const tag srcTag = blocked ? (ic % 16 == 0 ? tag::nChw16c : tag::nchw) : tag::nhwc;
    const tag dstTag = blocked && oc % 16 == 0 ? tag::nChw16c : tag::nhwc;
    memory::desc src({mb, ic, ih, iw}, dt::f32, srcTag), dst({mb, oc, oh, ow}, dt::f32, dstTag);
    memory::desc wei = g > 1 ? memory::desc({g, oc / g, ic / g, kh, kw}, dt::f32, tag::any) : memory::desc({oc, ic, kh, kw}, dt::f32, tag::any);
    memory::desc bmd({oc}, dt::f32, tag::a);
    post_ops po;
    bool residual = attrs.find("binary_add") != std::string::npos;
    if (residual) po.append_binary(algorithm::binary_add, dst);
    if (attrs.find("sum") != std::string::npos) po.append_sum(1.f);
#if DNNL_VERSION_MAJOR >= 3
#define ELT(alg, a, b) po.append_eltwise(alg, a, b)
#else
#define ELT(alg, a, b) po.append_eltwise(1.f, alg, a, b)
#endif
    if (attrs.find("eltwise_relu") != std::string::npos) ELT(algorithm::eltwise_relu, 0.f, 0.f);
    if (attrs.find("eltwise_clip") != std::string::npos) ELT(algorithm::eltwise_clip, 0.f, 6.f);
    if (attrs.find("eltwise_swish") != std::string::npos) ELT(algorithm::eltwise_swish, 1.f, 0.f);
    if (attrs.find("eltwise_logistic") != std::string::npos) ELT(algorithm::eltwise_logistic, 0.f, 0.f);
    primitive_attr attr; attr.set_post_ops(po);
    const bool winograd = std::getenv("WINO") && kh == 3 && kw == 3 && sh == 1 && sw == 1;
    const algorithm alg = winograd ? algorithm::convolution_winograd : algorithm::convolution_direct;
    if (winograd) {
      src = memory::desc({mb, ic, ih, iw}, dt::f32, tag::nChw16c);
      dst = memory::desc({mb, oc, oh, ow}, dt::f32, tag::nChw16c);
    }
    memory::dims st{sh, sw}, di{dh, dw}, pl{ph, pw}, pr{prh, prw};
#if DNNL_VERSION_MAJOR >= 3
    auto pd = bias ? convolution_forward::primitive_desc(eng, prop_kind::forward_inference, alg, src, wei, bmd, dst, st, di, pl, pr, attr)
                   : convolution_forward::primitive_desc(eng, prop_kind::forward_inference, alg, src, wei, dst, st, di, pl, pr, attr);
#else
    auto d = bias ? convolution_forward::desc(prop_kind::forward_inference, alg, src, wei, bmd, dst, st, di, pl, pr)
                  : convolution_forward::desc(prop_kind::forward_inference, alg, src, wei, dst, st, di, pl, pr);
    auto pd = convolution_forward::primitive_desc(d, attr, eng);
#endif
    memory ms(src, eng), mw(pd.weights_desc(), eng), md(dst, eng), mbias(bmd, eng), mres(dst, eng);
    memory msp(pd.scratchpad_desc(), eng);
    std::fill((float*)ms.get_data_handle(), (float*)ms.get_data_handle() + src.get_size()/4, 0.5f);
    std::fill((float*)mw.get_data_handle(), (float*)mw.get_data_handle() + pd.weights_desc().get_size()/4, 0.01f);
    convolution_forward conv(pd);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, md}, {DNNL_ARG_SCRATCHPAD, msp}};
    if (bias) args[DNNL_ARG_BIAS] = mbias;
    if (residual) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = mres;
    std::vector<double> t;
    // Winograd's blocked activations are reordered from and to NHWC around
    // it, inside the timed run (as a model of NHWC tensors would have to).
    memory::desc srcNhwc({mb, ic, ih, iw}, dt::f32, tag::nhwc), dstNhwc({mb, oc, oh, ow}, dt::f32, tag::nhwc);
    memory msNhwc(srcNhwc, eng), mdNhwc(dstNhwc, eng);
    std::fill((float*)msNhwc.get_data_handle(), (float*)msNhwc.get_data_handle() + srcNhwc.get_size()/4, 0.5f);
    reorder toBlocked, toNhwc;
    if (winograd) toBlocked = reorder(msNhwc, ms), toNhwc = reorder(md, mdNhwc);
    for (int i = 0; i < 23; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      if (winograd) toBlocked.execute(s, msNhwc, ms);
      conv.execute(s, args);
      if (winograd) toNhwc.execute(s, md, mdNhwc);
      s.wait(); t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()); }
    std::sort(t.begin() + 3, t.end()); double med = t[3 + 10]; total += med; ++count;
    if (argc > 2) printf("%8.4f %s %s %s\n", med, pd.impl_info_str(), prob.c_str(), attrs.c_str());
  }
  printf("%s: %d convs, total %.3f ms\n", argv[1], count, total);
}
