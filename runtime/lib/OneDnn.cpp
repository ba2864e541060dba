//===- OneDnn.cpp - oneDNN primitives of a compiled CPU model -------------===//
//
// This file implements OneDnnPrimitives (kiln/runtime/OneDnn.h) on oneDNN's
// C++ API: a matmul or convolution primitive per library call (or the
// runtime's PanelMatmul, for a cpu.panel_matmul), its epilogue
// as post-ops (a bias is the primitive's own, then the residual: a binary
// add, or a sum post-op when it is in the destination already; then an
// eltwise activation), its constant weights reordered at
// creation into the layout the primitive chose (format_tag::any), and the
// scratch memory of a run in the calling thread's own buffer (user
// scratchpad mode), so that runs of one model on several threads share no
// mutable state. Operands are described by their strides, so a transposed
// matrix or a channels-last tensor is read in place; a Winograd convolution,
// whose activations oneDNN keeps in its blocked layout, reorders them from
// and to the caller's layout in that scratch memory.
//
// oneDNN runs on the calling thread's OpenMP pool, but its kernels split
// the work for the thread count they were created for (and then ask OpenMP
// for that many threads). So each primitive is made once per thread count
// its runs use (omp_get_max_threads() of the running thread, which
// <package>_set_threads sets from RunOptions::threads): the first run with a
// new count creates that variant, later ones find it; variants whose
// weights layout is the same share the packed weights.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/OneDnn.h"
#include "HugePageMemory.h"
#include "OneDnnRecurrence.h"
#include "PanelConv.h"
#include "PanelMatmul.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace kiln {

using dnnl::algorithm;
using dnnl::memory;

namespace {

using Dims = memory::dims;

/// The process's CPU engine.
dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// An f32 memory descriptor of `dims` with `strides` (in elements).
memory::desc f32Desc(const Dims &dims, const Dims &strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

/// Contiguous row-major strides of `dims`.
Dims rowMajor(const Dims &dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    s[i - 1] = s[i] * dims[i];
  return s;
}

/// An activation [N, C, spatial...] of `size`, channels first or last.
memory::desc activationDesc(int64_t batch, int64_t c,
                            const std::vector<int64_t> &size,
                            bool channelsLast) {
  Dims dims = {batch, c};
  dims.insert(dims.end(), size.begin(), size.end());
  if (!channelsLast)
    return f32Desc(dims, rowMajor(dims));
  Dims strides(dims.size());
  int64_t s = c;
  strides[1] = 1;
  for (size_t i = size.size(); i-- > 0;) {
    strides[2 + i] = s;
    s *= size[i];
  }
  strides[0] = s;
  return f32Desc(dims, strides);
}

/// The primitive attributes of `e` (residual of layout `dst`): post-ops and
/// the user-managed scratchpad.
dnnl::primitive_attr attributesOf(const OneDnnEpilogue &e,
                                  const memory::desc &dst) {
  dnnl::post_ops ops;
  if (e.residual && e.residualInPlace)
    ops.append_sum(1.f);
  else if (e.residual)
    ops.append_binary(algorithm::binary_add, dst);
  switch (e.activation) {
  case OneDnnActivation::None:
    break;
  case OneDnnActivation::Relu:
    ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
    break;
  case OneDnnActivation::GeluTanh:
    ops.append_eltwise(1.f, algorithm::eltwise_gelu_tanh, 0.f, 0.f);
    break;
  case OneDnnActivation::GeluErf:
    ops.append_eltwise(1.f, algorithm::eltwise_gelu_erf, 0.f, 0.f);
    break;
  case OneDnnActivation::Sigmoid:
    ops.append_eltwise(1.f, algorithm::eltwise_logistic, 0.f, 0.f);
    break;
  case OneDnnActivation::Tanh:
    ops.append_eltwise(1.f, algorithm::eltwise_tanh, 0.f, 0.f);
    break;
  case OneDnnActivation::HardSwish:
    // x * max(0, min(1, x / 6 + 1 / 2)) (alpha and beta as oneDNN 3 names
    // them; 2.x's fixed form is the same).
    ops.append_eltwise(1.f, algorithm::eltwise_hardswish, 1.f / 6, 0.5f);
    break;
  case OneDnnActivation::Relu6:
    // Clipped to [alpha, beta].
    ops.append_eltwise(1.f, algorithm::eltwise_clip, 0.f, 6.f);
    break;
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// The calling thread's stream.
dnnl::stream &threadStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

/// The calling thread's scratch memory, at least `bytes` long, aligned to
/// 64 bytes.
char *threadScratch(size_t bytes) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < bytes + 64)
    scratch.resize(bytes + 64);
  auto at = reinterpret_cast<uintptr_t>(scratch.data());
  return scratch.data() + ((64 - at % 64) % 64);
}

/// `bytes` rounded up to a multiple of 64.
size_t roundUp64(size_t bytes) { return (bytes + 63) / 64 * 64; }

/// Weights in a primitive's layout and the buffer that holds them (shared
/// by the variants whose primitives want the same layout).
struct PackedWeights {
  memory packed;
  std::shared_ptr<void> storage;
};

/// `from` (the user's plain layout, at `data`) reordered into `to`, in
/// huge-page memory (HugePageMemory.h: a run streams the packed weights of
/// a large model from memory). A layout oneDNN reaches only from a dense one
/// (Winograd's weights, from channels-last weights) goes through a dense
/// row-major copy.
PackedWeights reordered(const memory::desc &from, const void *data,
                        const memory::desc &to) {
  memory src(from, cpuEngine(), const_cast<void *>(data));
  std::shared_ptr<void> storage(allocateHugePageMemory(to.get_size()),
                                std::free);
  if (!storage)
    throw dnnl::error(dnnl_out_of_memory, "out of memory packing weights");
  memory dst(to, cpuEngine(), storage.get());
  try {
    dnnl::reorder(src, dst).execute(threadStream(), src, dst);
  } catch (const dnnl::error &) {
    memory dense(f32Desc(from.dims(), rowMajor(from.dims())), cpuEngine());
    dnnl::reorder(src, dense).execute(threadStream(), src, dense);
    dnnl::reorder(dense, dst).execute(threadStream(), dense, dst);
  }
  threadStream().wait();
  return {dst, std::move(storage)};
}

} // namespace

/// One primitive made for one thread count.
struct Variant {
  /// Unique in the process (the key of the threads' bound arguments).
  uint64_t id = 0;
  dnnl::primitive primitive;
  /// The weights in the primitive's layout, when packed.
  PackedWeights weights;
  memory::desc scratch;
  /// The primitive's own layouts of x and y where they are not the
  /// caller's (a Winograd convolution's blocked activations), and the
  /// reorders into and out of them; empty otherwise.
  memory::desc xOwn, yOwn;
  dnnl::primitive toOwn, fromOwn;
  /// oneDNN's name of the kernel.
  std::string implementation;
};

struct OneDnnPrimitives::Primitive {
  /// A GRU or LSTM recurrence (addRecurrence): its own matmuls, no
  /// primitive of this object.
  std::unique_ptr<OneDnnRecurrence> recurrence;
  /// A GEMM of few rows (OneDnnMatmulDesc::panels): no oneDNN primitive.
  std::unique_ptr<PanelMatmul> panel;
  /// A convolution of few output pixels (OneDnnConvDesc::panels): no
  /// oneDNN primitive.
  std::unique_ptr<PanelConv> panelConv;
  /// The operands' layouts as the caller stores them.
  memory::desc x, w, bias, y;
  bool packs = false, hasBias = false, hasResidual = false;
  /// The residual is read from the destination (OneDnnEpilogue).
  bool residualInPlace = false;
  /// The constant weights (the caller's, alive as long as the model) that
  /// each variant packs.
  const void *weights = nullptr;
  /// The primitive descriptor for the calling thread's thread count.
  std::function<dnnl::primitive_desc()> describe;

  /// The variant for the calling thread's thread count, made on first use.
  const Variant &variant() const {
    int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    std::lock_guard<std::mutex> lock(mutex);
    auto found = variants.find(threads);
    if (found != variants.end())
      return found->second;
    dnnl::primitive_desc pd = describe();
    Variant v;
    v.scratch = pd.scratchpad_desc();
    v.implementation = pd.impl_info_str();
    memory::desc xWanted = pd.query_md(dnnl::query::src_md),
                 yWanted = pd.query_md(dnnl::query::dst_md);
    if (xWanted != x) {
      v.xOwn = xWanted;
      v.toOwn = dnnl::reorder(
          dnnl::reorder::primitive_desc(cpuEngine(), x, cpuEngine(), xWanted));
    }
    if (yWanted != y) {
      v.yOwn = yWanted;
      v.fromOwn = dnnl::reorder(
          dnnl::reorder::primitive_desc(cpuEngine(), yWanted, cpuEngine(), y));
    }
    if (packs) {
      memory::desc want = pd.weights_desc();
      for (const auto &[n, other] : variants)
        if (other.weights.packed.get_desc() == want) {
          v.weights = other.weights;
          break;
        }
      if (!v.weights.packed)
        v.weights = reordered(w, weights, want);
    }
    static std::atomic<uint64_t> nextId{1};
    v.id = nextId++;
    v.primitive = dnnl::primitive(pd);
    return variants.emplace(threads, std::move(v)).first->second;
  }

private:
  mutable std::mutex mutex;
  mutable std::map<int, Variant> variants;
};

OneDnnPrimitives::OneDnnPrimitives() = default;
OneDnnPrimitives::~OneDnnPrimitives() = default;

size_t OneDnnPrimitives::size() const { return primitives_.size(); }

std::string OneDnnPrimitives::implementation(size_t index) const {
  if (index >= primitives_.size())
    return "";
  const Primitive &p = *primitives_[index];
  if (p.panel || p.panelConv)
    return "panels";
  if (p.recurrence)
    return "recurrence";
  try {
    return p.variant().implementation;
  } catch (const dnnl::error &) {
    return "";
  }
}

Status OneDnnPrimitives::addMatmul(const OneDnnMatmulDesc &d, const void *b) {
  if (d.panels) {
    const OneDnnEpilogue &e = d.epilogue;
    if (d.batch != 1 || d.m < 1 || d.m > PanelMatmul::kMaxRows || d.n < 1 ||
        d.k < 1 || !d.packB || d.transA || !b ||
        (e.activation != OneDnnActivation::None &&
         e.activation != OneDnnActivation::Relu))
      return Status::error("panel matmul: needs batch 1, 1 to " +
                           std::to_string(PanelMatmul::kMaxRows) +
                           " rows, a packed B, A not transposed and at most "
                           "ReLU after the adds");
    try {
      auto p = std::make_unique<Primitive>();
      p->hasBias = e.bias;
      p->hasResidual = e.residual;
      p->panel = std::make_unique<PanelMatmul>(
          d.m, d.n, d.k, static_cast<const float *>(b), d.transB,
          e.activation == OneDnnActivation::Relu);
      primitives_.push_back(std::move(p));
      return Status::ok();
    } catch (const std::bad_alloc &) {
      return Status::error("panel matmul: out of memory packing B");
    }
  }
  try {
    auto p = std::make_unique<Primitive>();
    bool batched = d.batch > 1;
    auto matrix = [&](int64_t rows, int64_t cols, int64_t stride,
                      bool transposed) {
      Dims dims = {rows, cols},
           strides = {transposed ? 1 : cols, transposed ? rows : 1};
      if (batched) {
        dims.insert(dims.begin(), stride == 0 ? 1 : d.batch);
        strides.insert(strides.begin(), stride == 0 ? rows * cols : stride);
      }
      return f32Desc(dims, strides);
    };
    p->x = matrix(d.m, d.k, d.strideA, d.transA);
    p->w = matrix(d.k, d.n, d.strideB, d.transB);
    Dims yDims = batched ? Dims{d.batch, d.m, d.n} : Dims{d.m, d.n};
    p->y = f32Desc(yDims, rowMajor(yDims));
    Dims biasDims = batched ? Dims{1, 1, d.n} : Dims{1, d.n};
    p->hasBias = d.epilogue.bias;
    p->hasResidual = d.epilogue.residual;
    p->residualInPlace = d.epilogue.residual && d.epilogue.residualInPlace;
    if (p->hasBias)
      p->bias = f32Desc(biasDims, rowMajor(biasDims));
    memory::desc w = d.packB ? memory::desc(p->w.dims(), memory::data_type::f32,
                                            memory::format_tag::any)
                             : p->w;
    dnnl::matmul::desc op = p->hasBias
                                ? dnnl::matmul::desc(p->x, w, p->bias, p->y)
                                : dnnl::matmul::desc(p->x, w, p->y);
    dnnl::primitive_attr attr = attributesOf(d.epilogue, p->y);
    p->describe = [op, attr] {
      return dnnl::matmul::primitive_desc(op, attr, cpuEngine());
    };
    p->packs = d.packB;
    p->weights = b;
    // The variant for the creating thread's count: a description oneDNN
    // rejects fails here, at load, and the weights are packed once.
    (void)p->variant();
    primitives_.push_back(std::move(p));
    return Status::ok();
  } catch (const dnnl::error &e) {
    return Status::error(std::string("oneDNN matmul: ") + e.what());
  }
}

Status OneDnnPrimitives::addPanelConv(const OneDnnConvDesc &d,
                                      const void *weights) {
  const OneDnnEpilogue &e = d.epilogue;
  bool twoD = d.kernel.size() == 2 && d.inSize.size() == 2 &&
              d.outSize.size() == 2 && d.strides.size() == 2 &&
              d.dilations.size() == 2 && d.padsBegin.size() == 2;
  int64_t rows = twoD ? d.batch * d.outSize[0] * d.outSize[1] : 0;
  if (!twoD || !d.channelsLast || d.group != 1 || !d.packWeights || !weights ||
      rows < 1 || rows > PanelConv::kMaxRows || d.channels < 1 ||
      d.outChannels < 1 || d.kernel[0] < 1 || d.kernel[1] < 1 ||
      d.strides[0] < 1 || d.strides[1] < 1 || d.dilations[0] != 1 ||
      d.dilations[1] != 1 ||
      (e.activation != OneDnnActivation::None &&
       e.activation != OneDnnActivation::Relu))
    return Status::error(
        "panel convolution: needs a 2-D channels-last convolution of one "
        "group, packed weights, 1 to " +
        std::to_string(PanelConv::kMaxRows) +
        " output pixels, strides of at least 1, dilation 1 and at most "
        "ReLU after the adds");
  PanelConv::Geometry g;
  g.batch = d.batch, g.channels = d.channels, g.outChannels = d.outChannels;
  g.inH = d.inSize[0], g.inW = d.inSize[1];
  g.outH = d.outSize[0], g.outW = d.outSize[1];
  g.kernelH = d.kernel[0], g.kernelW = d.kernel[1];
  g.strideH = d.strides[0], g.strideW = d.strides[1];
  g.padH = d.padsBegin[0], g.padW = d.padsBegin[1];
  try {
    auto p = std::make_unique<Primitive>();
    p->hasBias = e.bias;
    p->hasResidual = e.residual;
    p->residualInPlace = e.residual && e.residualInPlace;
    p->panelConv = std::make_unique<PanelConv>(
        g, static_cast<const float *>(weights), d.weightsChannelsFirst,
        e.activation == OneDnnActivation::Relu);
    primitives_.push_back(std::move(p));
    return Status::ok();
  } catch (const std::bad_alloc &) {
    return Status::error("panel convolution: out of memory packing the "
                         "weights");
  }
}

Status OneDnnPrimitives::addConv(const OneDnnConvDesc &d, const void *weights) {
  if (d.winograd && (d.kernel != std::vector<int64_t>{3, 3} || d.group != 1 ||
                     d.strides != std::vector<int64_t>{1, 1} ||
                     d.dilations != std::vector<int64_t>{1, 1} ||
                     !d.packWeights || d.epilogue.residual))
    return Status::error("oneDNN convolution: Winograd needs a 3x3 window of "
                         "stride and dilation 1, one group, packed weights "
                         "and no residual");
  if (d.panels)
    return addPanelConv(d, weights);
  try {
    auto p = std::make_unique<Primitive>();
    size_t nsp = d.kernel.size();
    p->x = activationDesc(d.batch, d.channels, d.inSize, d.channelsLast);
    p->y = activationDesc(d.batch, d.outChannels, d.outSize, d.channelsLast);
    // The weights [O, C/g, k...] (channels last: [O, k..., C/g]) as
    // oneDNN's [g, O/g, C/g, k...].
    int64_t cg = d.channels / d.group, og = d.outChannels / d.group;
    int64_t window = 1;
    for (int64_t k : d.kernel)
      window *= k;
    Dims wDims = {d.group, og, cg}, wStrides(3 + nsp);
    wDims.insert(wDims.end(), d.kernel.begin(), d.kernel.end());
    bool wLast = d.channelsLast && !d.weightsChannelsFirst;
    int64_t s = wLast ? cg : 1;
    for (size_t i = nsp; i-- > 0;) {
      wStrides[3 + i] = s;
      s *= d.kernel[i];
    }
    wStrides[2] = wLast ? 1 : window;
    wStrides[1] = cg * window;
    wStrides[0] = og * cg * window;
    if (d.group == 1) {
      wDims.erase(wDims.begin());
      wStrides.erase(wStrides.begin());
    }
    p->w = f32Desc(wDims, wStrides);
    p->hasBias = d.epilogue.bias;
    p->hasResidual = d.epilogue.residual;
    p->residualInPlace = d.epilogue.residual && d.epilogue.residualInPlace;
    if (p->hasBias)
      p->bias = f32Desc({d.outChannels}, {1});
    memory::desc w = d.packWeights ? memory::desc(wDims, memory::data_type::f32,
                                                  memory::format_tag::any)
                                   : p->w;
    Dims strides(d.strides.begin(), d.strides.end()), dilations,
        padsBegin(d.padsBegin.begin(), d.padsBegin.end()),
        padsEnd(d.padsEnd.begin(), d.padsEnd.end());
    for (int64_t dil : d.dilations)
      dilations.push_back(dil - 1);
    using Conv = dnnl::convolution_forward;
    // The convolution by `alg` of activations laid out as `x` and `y`.
    auto convOf = [&](algorithm alg, const memory::desc &x,
                      const memory::desc &y) {
      return p->hasBias ? Conv::desc(dnnl::prop_kind::forward_inference, alg,
                                     x, w, p->bias, y, strides, dilations,
                                     padsBegin, padsEnd)
                        : Conv::desc(dnnl::prop_kind::forward_inference, alg,
                                     x, w, y, strides, dilations, padsBegin,
                                     padsEnd);
    };
    Conv::desc op = convOf(algorithm::convolution_direct, p->x, p->y);
    dnnl::primitive_attr attr = attributesOf(d.epilogue, p->y);
    std::optional<Conv::desc> winograd;
    if (d.winograd) {
      // Activations in the layout oneDNN's Winograd kernel wants.
      auto any = [](const memory::desc &m) {
        return memory::desc(m.dims(), memory::data_type::f32,
                            memory::format_tag::any);
      };
      winograd =
          convOf(algorithm::convolution_winograd, any(p->x), any(p->y));
    }
    p->describe = [op, winograd, attr] {
      if (winograd) {
        try {
          return Conv::primitive_desc(*winograd, attr, cpuEngine());
        } catch (const dnnl::error &) {
          // No Winograd kernel for this CPU: the direct algorithm.
        }
      }
      return Conv::primitive_desc(op, attr, cpuEngine());
    };
    p->packs = d.packWeights;
    p->weights = weights;
    (void)p->variant();
    primitives_.push_back(std::move(p));
    return Status::ok();
  } catch (const dnnl::error &e) {
    return Status::error(std::string("oneDNN convolution: ") + e.what());
  }
}

Status OneDnnPrimitives::addMaxPool(const OneDnnPoolDesc &d) {
  return addPool(d, static_cast<int>(algorithm::pooling_max), "max");
}

Status OneDnnPrimitives::addAvgPool(const OneDnnPoolDesc &d, bool includePad) {
  algorithm kind = includePad ? algorithm::pooling_avg_include_padding
                              : algorithm::pooling_avg_exclude_padding;
  return addPool(d, static_cast<int>(kind), "average");
}

Status OneDnnPrimitives::addPool(const OneDnnPoolDesc &d, int kind,
                                 const char *what) {
  try {
    auto p = std::make_unique<Primitive>();
    p->x = activationDesc(d.batch, d.channels, d.inSize, d.channelsLast);
    p->y = activationDesc(d.batch, d.channels, d.outSize, d.channelsLast);
    Dims strides(d.strides.begin(), d.strides.end()),
        kernel(d.kernel.begin(), d.kernel.end()), dilations,
        padsBegin(d.padsBegin.begin(), d.padsBegin.end()), padsEnd;
    for (size_t i = 0; i < d.kernel.size(); ++i) {
      dilations.push_back(d.dilations[i] - 1);
      // The end pad that makes the last window the output's last one.
      int64_t window = d.dilations[i] * (d.kernel[i] - 1) + 1;
      padsEnd.push_back(std::max<int64_t>(0, (d.outSize[i] - 1) * d.strides[i] +
                                                 window - d.inSize[i] -
                                                 d.padsBegin[i]));
    }
    using Pool = dnnl::pooling_v2_forward;
    Pool::desc op(dnnl::prop_kind::forward_inference,
                  static_cast<algorithm>(kind), p->x, p->y,
                  strides, kernel, dilations, padsBegin, padsEnd);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    p->describe = [op, attr] {
      return Pool::primitive_desc(op, attr, cpuEngine());
    };
    (void)p->variant();
    primitives_.push_back(std::move(p));
    return Status::ok();
  } catch (const dnnl::error &e) {
    return Status::error(std::string("oneDNN ") + what +
                         " pooling: " + e.what());
  }
}

Status OneDnnPrimitives::addRecurrence(const OneDnnRecurrenceDesc &d,
                                       const void *r) {
  auto p = std::make_unique<Primitive>();
  Status s = OneDnnRecurrence::create(d, r, p->recurrence);
  if (!s)
    return s;
  primitives_.push_back(std::move(p));
  return Status::ok();
}

Status OneDnnPrimitives::runRecurrence(size_t index,
                                       const OneDnnRecurrenceArgs &args) const {
  if (index >= primitives_.size() || !primitives_[index]->recurrence)
    return Status::error("oneDNN recurrence " + std::to_string(index) +
                         " was not created");
  try {
    return primitives_[index]->recurrence->run(args);
  } catch (const dnnl::error &e) {
    return Status::error(std::string("oneDNN: ") + e.what());
  }
}

Status OneDnnPrimitives::run(size_t index, const void *x, const void *w,
                             const void *bias, const void *residual,
                             void *y) const {
  if (index >= primitives_.size())
    return Status::error("oneDNN primitive " + std::to_string(index) +
                         " was not created");
  const Primitive &p = *primitives_[index];
  if (p.recurrence)
    return Status::error("oneDNN primitive " + std::to_string(index) +
                         " is a recurrence");
  if (p.residualInPlace && residual != y)
    return Status::error("oneDNN primitive " + std::to_string(index) +
                         " adds the residual in its destination, but the "
                         "residual is not in the result's buffer");
  if (p.panelConv) {
    p.panelConv->run(static_cast<const float *>(x),
                     p.hasBias ? static_cast<const float *>(bias) : nullptr,
                     p.hasResidual ? static_cast<const float *>(residual)
                                   : nullptr,
                     static_cast<float *>(y));
    return Status::ok();
  }
  if (p.panel) {
    p.panel->run(static_cast<const float *>(x),
                 p.hasBias ? static_cast<const float *>(bias) : nullptr,
                 p.hasResidual ? static_cast<const float *>(residual) : nullptr,
                 static_cast<float *>(y));
    return Status::ok();
  }
  dnnl::engine &engine = cpuEngine();
  auto wrap = [&](const memory::desc &desc, const void *data) {
    return memory(desc, engine, const_cast<void *>(data));
  };
  try {
    const Variant &v = p.variant();
    // The thread's scratch memory: oneDNN's scratchpad, then x and y in the
    // primitive's own layouts when they are not the caller's.
    size_t scratchBytes = v.scratch.get_size(), xOwnBytes = v.xOwn.get_size(),
           yOwnBytes = v.yOwn.get_size();
    size_t xAt = roundUp64(scratchBytes), yAt = xAt + roundUp64(xOwnBytes);
    char *threadMemory = scratchBytes || xOwnBytes || yOwnBytes
                             ? threadScratch(yAt + yOwnBytes)
                             : nullptr;
    void *scratch = scratchBytes ? threadMemory : nullptr;
    if (v.toOwn) {
      void *xOwn = threadMemory + xAt;
      v.toOwn.execute(threadStream(), {{DNNL_ARG_FROM, wrap(p.x, x)},
                                       {DNNL_ARG_TO, wrap(v.xOwn, xOwn)}});
      x = xOwn;
    }
    void *yCaller = y;
    if (v.fromOwn)
      y = threadMemory + yAt;
    const int residualArg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;
    // The calling thread's arguments of this variant, made on its first
    // run and pointed at this run's buffers afterwards (making oneDNN
    // memory objects costs microseconds: a recurrence runs one small
    // matmul per step).
    thread_local std::unordered_map<uint64_t, std::unordered_map<int, memory>>
        bound;
    if (bound.size() > 4096)
      bound.clear(); // variants of models long gone
    auto [found, fresh] = bound.try_emplace(v.id);
    std::unordered_map<int, memory> &args = found->second;
    if (fresh) {
      args = {{DNNL_ARG_SRC, wrap(v.toOwn ? v.xOwn : p.x, x)},
              {DNNL_ARG_DST, wrap(v.fromOwn ? v.yOwn : p.y, y)}};
      if (p.packs)
        args.emplace(DNNL_ARG_WEIGHTS, v.weights.packed);
      else if (w)
        args.emplace(DNNL_ARG_WEIGHTS, wrap(p.w, w));
      if (p.hasBias)
        args.emplace(DNNL_ARG_BIAS, wrap(p.bias, bias));
      if (p.hasResidual && !p.residualInPlace)
        args.emplace(residualArg, wrap(p.y, residual));
      if (scratchBytes)
        args.emplace(DNNL_ARG_SCRATCHPAD, wrap(v.scratch, scratch));
    } else {
      auto point = [&](int arg, const void *data) {
        auto it = args.find(arg);
        if (it != args.end())
          it->second.set_data_handle(const_cast<void *>(data));
      };
      point(DNNL_ARG_SRC, x);
      point(DNNL_ARG_DST, y);
      if (!p.packs)
        point(DNNL_ARG_WEIGHTS, w);
      point(DNNL_ARG_BIAS, bias);
      point(residualArg, residual);
      point(DNNL_ARG_SCRATCHPAD, scratch);
    }
    v.primitive.execute(threadStream(), args);
    if (v.fromOwn)
      v.fromOwn.execute(threadStream(), {{DNNL_ARG_FROM, wrap(v.yOwn, y)},
                                         {DNNL_ARG_TO, wrap(p.y, yCaller)}});
    threadStream().wait();
    return Status::ok();
  } catch (const dnnl::error &e) {
    return Status::error(std::string("oneDNN: ") + e.what());
  }
}

} // namespace kiln
