//===- Cudnn.cpp - Convolution through cuDNN ------------------------------===//
//
// This file implements kiln::cuda::conv with cuDNN 9's legacy convolution
// API, loaded with dlopen ("libcudnn.so.9", then "libcudnn.so"; from
// $KILN_CUDNN_DIR, the loader's search path, $CUDA_HOME/lib64, the toolkit
// folder found at configure time and /usr/local/cuda/lib64). The runtime
// needs no cuDNN header: the few types, enum values and signatures it uses
// are declared below, with the values of cuDNN 9's cudnn_graph.h and
// cudnn_cnn.h (checked against those headers at compile time when they are
// installed).
//
// Tensors are packed NCHW (NCDHW), or NHWC (NDHWC) with
// KILN_CUDA_LAYOUT_NHWC, where cuDNN's tensor-core kernels read and write
// them without transposing (the filter is then [M, kernel..., C/group],
// CUDNN_TENSOR_NHWC); a 1-D convolution runs as a 2-D one with a height of 1. f32 computes with CUDNN_FMA_MATH (no TF32 tensor cores:
// CUDNN_DEFAULT_MATH would allow them on Ampere and newer), so results
// match the CPU reference within 1e-3; f16 and bf16 take tensor cores with
// fp32 accumulation. Each stream gets its own cuDNN handle, plans and
// workspace: a plan (descriptors, the heuristic's algorithm and its
// workspace size) is built once per (dtype, shapes, geometry, bias) and
// cached; the workspace grows as plans need (the stream is synchronized
// before an outgrown workspace is freed). The bias is added by cudnnAddTensor
// after the convolution. With a ReLU (ConvArgs::relu), the convolution,
// bias, residual (ConvArgs::z) and ReLU run as one
// cudnnConvolutionBiasActivationForward (a zero bias stands in for a missing
// one; NaN propagates, as ONNX's Relu does); where cuDNN refuses that for a
// configuration, they run as separate cuDNN calls (convolution, cudnnAddTensor
// for the bias and the residual, cudnnActivationForward).
//
//===----------------------------------------------------------------------===//

#include "Cudnn.h"

#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/CudaServices.h"

#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#ifdef KILN_HAVE_CUDA
#include "CudaDriver.h"

#include <dlfcn.h>
#endif

namespace kiln {
namespace cuda {

namespace {

/// The shapes of a convolution read channels first ([N, C, spatial...]),
/// whatever its layout.
struct ChannelsFirstShapes {
  int64_t x[5], w[5], y[5];
};

/// `args` with xShape, wShape and yShape pointing into `shapes`, channels
/// first. The layout, spatial dims and shape pointers must have been
/// checked.
ConvArgs readChannelsFirst(const ConvArgs &args, ChannelsFirstShapes &shapes) {
  int rank = args.spatialDims + 2;
  auto read = [&](const int64_t *from, int64_t *to) {
    to[0] = from[0];
    if (args.layout == KILN_CUDA_LAYOUT_NHWC) {
      to[1] = from[rank - 1];
      for (int i = 2; i < rank; ++i)
        to[i] = from[i - 1];
    } else {
      for (int i = 1; i < rank; ++i)
        to[i] = from[i];
    }
    return to;
  };
  ConvArgs first = args;
  first.xShape = read(args.xShape, shapes.x);
  first.wShape = read(args.wShape, shapes.w);
  first.yShape = read(args.yShape, shapes.y);
  return first;
}

/// The checks of checkConvArgs on shapes read channels first.
Status checkChannelsFirst(const ConvArgs &x) {
  int nsp = x.spatialDims;
  auto shapeText = [&](const int64_t *s) {
    std::string t = "[";
    for (int i = 0; i < nsp + 2; ++i)
      t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
  };
  std::string shapes = strCat("x ", shapeText(x.xShape), ", w ",
                              shapeText(x.wShape), ", y ",
                              shapeText(x.yShape));
  const int64_t intMax = std::numeric_limits<int>::max();
  for (const int64_t *s : {x.xShape, x.wShape, x.yShape})
    for (int i = 0; i < nsp + 2; ++i)
      KILN_CHECK(s[i] >= 1 && s[i] <= intMax,
                 "kiln_cuda_conv: dims must be positive and fit an int (",
                 shapes, ")");
  KILN_CHECK(x.group >= 1 && x.group <= intMax, "kiln_cuda_conv: group ",
             x.group, " must be >= 1");
  KILN_CHECK(x.xShape[1] == x.wShape[1] * x.group, "kiln_cuda_conv: x has ",
             x.xShape[1], " channels but w with group ", x.group,
             " expects ", x.wShape[1] * x.group, " (", shapes, ")");
  KILN_CHECK(x.wShape[0] % x.group == 0, "kiln_cuda_conv: ", x.wShape[0],
             " output channels are not divisible by group ", x.group);
  KILN_CHECK(x.yShape[0] == x.xShape[0] && x.yShape[1] == x.wShape[0],
             "kiln_cuda_conv: y's batch and channels do not match x and w (",
             shapes, ")");
  for (int d = 0; d < nsp; ++d) {
    int64_t s = x.strides[d], dl = x.dilations[d];
    int64_t pb = x.pads[d], pe = x.pads[nsp + d];
    KILN_CHECK(s >= 1 && s <= intMax && dl >= 1 && dl <= intMax,
               "kiln_cuda_conv: strides and dilations must be >= 1 (spatial "
               "dim ",
               d, ": stride ", s, ", dilation ", dl, ")");
    KILN_CHECK(pb >= 0 && pb <= intMax && pe >= 0,
               "kiln_cuda_conv: negative pads (spatial dim ", d, ")");
    KILN_CHECK(pb == pe, "kiln_cuda_conv: spatial dim ", d, " has pads ", pb,
               " (begin) and ", pe,
               " (end): cuDNN takes symmetric pads only");
    int64_t window = dl * (x.wShape[2 + d] - 1) + 1;
    int64_t out = (x.xShape[2 + d] + pb + pe - window) / s + 1;
    KILN_CHECK(x.xShape[2 + d] + pb + pe >= window && out == x.yShape[2 + d],
               "kiln_cuda_conv: spatial dim ", d, " of y is ",
               x.yShape[2 + d], " but the geometry gives ",
               x.xShape[2 + d] + pb + pe >= window ? out : 0, " (", shapes,
               ")");
  }
  return Status::ok();
}

} // namespace

Status checkConvArgs(const ConvArgs &x) {
  KILN_CHECK(x.dtype >= 0 && x.dtype <= 2, "kiln_cuda_conv: dtype code ",
             x.dtype, " is not f32 (0), f16 (1) or bf16 (2)");
  KILN_CHECK(x.layout == KILN_CUDA_LAYOUT_NCHW ||
                 x.layout == KILN_CUDA_LAYOUT_NHWC,
             "kiln_cuda_conv: layout code ", x.layout,
             " is not NCHW (0) or NHWC (1)");
  KILN_CHECK(x.spatialDims >= 1 && x.spatialDims <= 3,
             "kiln_cuda_conv: ", x.spatialDims,
             " spatial dims (cuDNN takes 1 to 3)");
  KILN_CHECK(x.xShape && x.wShape && x.yShape && x.strides && x.pads &&
                 x.dilations,
             "kiln_cuda_conv: a null shape or geometry array");
  KILN_CHECK(x.x && x.w && x.y, "kiln_cuda_conv: a null x, w or y");
  ChannelsFirstShapes shapes;
  return checkChannelsFirst(readChannelsFirst(x, shapes));
}

#ifdef KILN_HAVE_CUDA

namespace {

//===----------------------------------------------------------------------===//
// The cuDNN 9 declarations Kiln uses (values from cudnn_graph.h and
// cudnn_cnn.h of cuDNN 9.x; the legacy API is stable across 9.x).
//===----------------------------------------------------------------------===//

using cudnnStatus = int;     // cudnnStatus_t
using cudnnHandle = void *;  // cudnnHandle_t (struct cudnnContext *)
using cudnnTensorDesc = void *;  // cudnnTensorDescriptor_t
using cudnnFilterDesc = void *;  // cudnnFilterDescriptor_t
using cudnnConvDesc = void *;    // cudnnConvolutionDescriptor_t
using cudnnActDesc = void *;     // cudnnActivationDescriptor_t

constexpr cudnnStatus kStatusSuccess = 0; // CUDNN_STATUS_SUCCESS
constexpr int kDataFloat = 0;             // CUDNN_DATA_FLOAT
constexpr int kDataHalf = 2;              // CUDNN_DATA_HALF
constexpr int kDataBfloat16 = 9;          // CUDNN_DATA_BFLOAT16
constexpr int kTensorNchw = 0;            // CUDNN_TENSOR_NCHW
constexpr int kTensorNhwc = 1;            // CUDNN_TENSOR_NHWC
constexpr int kCrossCorrelation = 1;      // CUDNN_CROSS_CORRELATION
constexpr int kDefaultMath = 0;           // CUDNN_DEFAULT_MATH
constexpr int kTensorOpMath = 1;          // CUDNN_TENSOR_OP_MATH
constexpr int kFmaMath = 3;               // CUDNN_FMA_MATH
constexpr int kFwdAlgoCount = 8;          // CUDNN_CONVOLUTION_FWD_ALGO_COUNT
constexpr int kActivationRelu = 1;        // CUDNN_ACTIVATION_RELU
constexpr int kPropagateNan = 1;          // CUDNN_PROPAGATE_NAN

/// cudnnConvolutionFwdAlgoPerf_t.
struct FwdAlgoPerf {
  int algo;        // cudnnConvolutionFwdAlgo_t
  cudnnStatus status;
  float time;
  size_t memory;
  int determinism; // cudnnDeterminism_t
  int mathType;    // cudnnMathType_t
  int reserved[3];
};

/// The cuDNN entry points.
struct Dnn {
  size_t (*getVersion)();
  const char *(*errorString)(cudnnStatus);
  cudnnStatus (*create)(cudnnHandle *);
  cudnnStatus (*setStream)(cudnnHandle, void *);
  cudnnStatus (*createTensor)(cudnnTensorDesc *);
  cudnnStatus (*setTensorNd)(cudnnTensorDesc, int, int, const int *,
                             const int *);
  cudnnStatus (*destroyTensor)(cudnnTensorDesc);
  cudnnStatus (*createFilter)(cudnnFilterDesc *);
  cudnnStatus (*setFilterNd)(cudnnFilterDesc, int, int, int, const int *);
  cudnnStatus (*destroyFilter)(cudnnFilterDesc);
  cudnnStatus (*createConv)(cudnnConvDesc *);
  cudnnStatus (*setConvNd)(cudnnConvDesc, int, const int *, const int *,
                           const int *, int, int);
  cudnnStatus (*setGroupCount)(cudnnConvDesc, int);
  cudnnStatus (*setMathType)(cudnnConvDesc, int);
  cudnnStatus (*destroyConv)(cudnnConvDesc);
  cudnnStatus (*getFwdAlgo)(cudnnHandle, cudnnTensorDesc, cudnnFilterDesc,
                            cudnnConvDesc, cudnnTensorDesc, int, int *,
                            FwdAlgoPerf *);
  cudnnStatus (*getFwdWorkspace)(cudnnHandle, cudnnTensorDesc,
                                 cudnnFilterDesc, cudnnConvDesc,
                                 cudnnTensorDesc, int, size_t *);
  cudnnStatus (*convForward)(cudnnHandle, const void *, cudnnTensorDesc,
                             const void *, cudnnFilterDesc, const void *,
                             cudnnConvDesc, int, void *, size_t, const void *,
                             cudnnTensorDesc, void *);
  cudnnStatus (*addTensor)(cudnnHandle, const void *, cudnnTensorDesc,
                           const void *, const void *, cudnnTensorDesc,
                           void *);
  cudnnStatus (*createActivation)(cudnnActDesc *);
  cudnnStatus (*setActivation)(cudnnActDesc, int, int, double);
  cudnnStatus (*destroyActivation)(cudnnActDesc);
  cudnnStatus (*activationForward)(cudnnHandle, cudnnActDesc, const void *,
                                   cudnnTensorDesc, const void *,
                                   const void *, cudnnTensorDesc, void *);
  cudnnStatus (*convBiasActivationForward)(
      cudnnHandle, const void *, cudnnTensorDesc, const void *,
      cudnnFilterDesc, const void *, cudnnConvDesc, int, void *, size_t,
      const void *, cudnnTensorDesc, const void *, cudnnTensorDesc,
      const void *, cudnnActDesc, cudnnTensorDesc, void *);
  std::string library;
  size_t version = 0;
};

} // namespace
} // namespace cuda
} // namespace kiln

// Where cuDNN's headers are installed, check the declarations against them.
#if __has_include(<cudnn.h>)
#include <cstddef>
#include <cudnn.h>
#include <type_traits>
namespace kiln {
namespace cuda {
namespace {
static_assert(kStatusSuccess == CUDNN_STATUS_SUCCESS);
static_assert(kDataFloat == CUDNN_DATA_FLOAT && kDataHalf == CUDNN_DATA_HALF &&
              kDataBfloat16 == CUDNN_DATA_BFLOAT16);
static_assert(kTensorNchw == CUDNN_TENSOR_NCHW &&
              kTensorNhwc == CUDNN_TENSOR_NHWC);
static_assert(kCrossCorrelation == CUDNN_CROSS_CORRELATION);
static_assert(kDefaultMath == CUDNN_DEFAULT_MATH &&
              kTensorOpMath == CUDNN_TENSOR_OP_MATH &&
              kFmaMath == CUDNN_FMA_MATH);
static_assert(kFwdAlgoCount == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
static_assert(kActivationRelu == CUDNN_ACTIVATION_RELU &&
              kPropagateNan == CUDNN_PROPAGATE_NAN);
static_assert(sizeof(FwdAlgoPerf) == sizeof(cudnnConvolutionFwdAlgoPerf_t));
static_assert(offsetof(FwdAlgoPerf, memory) ==
              offsetof(cudnnConvolutionFwdAlgoPerf_t, memory));
static_assert(offsetof(FwdAlgoPerf, mathType) ==
              offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType));
static_assert(sizeof(cudnnStatus_t) == sizeof(int) &&
              sizeof(cudnnDataType_t) == sizeof(int));
} // namespace
} // namespace cuda
} // namespace kiln
#endif

namespace kiln {
namespace cuda {
namespace {

struct LoadedDnn {
  Dnn dnn{};
  Status status;
};

LoadedDnn *loadDnn() {
  auto *l = new LoadedDnn();
  void *lib = openCudaLibrary({"libcudnn.so.9", "libcudnn.so"},
                              "KILN_CUDNN_DIR", l->dnn.library);
  if (!lib) {
    l->status = Status::error(
        "cuDNN not found (libcudnn.so.9): install it or add its folder to "
        "LD_LIBRARY_PATH (or set KILN_CUDNN_DIR to it); also tried "
        "libcudnn.so, $CUDA_HOME/lib64 and /usr/local/cuda/lib64");
    return l;
  }
  Dnn &dnn = l->dnn;
  std::string missing;
  auto bind = [&](auto &fn, const char *name) {
    void *p = dlsym(lib, name);
    if (!p && missing.empty())
      missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  bind(dnn.getVersion, "cudnnGetVersion");
  bind(dnn.errorString, "cudnnGetErrorString");
  bind(dnn.create, "cudnnCreate");
  bind(dnn.setStream, "cudnnSetStream");
  bind(dnn.createTensor, "cudnnCreateTensorDescriptor");
  bind(dnn.setTensorNd, "cudnnSetTensorNdDescriptor");
  bind(dnn.destroyTensor, "cudnnDestroyTensorDescriptor");
  bind(dnn.createFilter, "cudnnCreateFilterDescriptor");
  bind(dnn.setFilterNd, "cudnnSetFilterNdDescriptor");
  bind(dnn.destroyFilter, "cudnnDestroyFilterDescriptor");
  bind(dnn.createConv, "cudnnCreateConvolutionDescriptor");
  bind(dnn.setConvNd, "cudnnSetConvolutionNdDescriptor");
  bind(dnn.setGroupCount, "cudnnSetConvolutionGroupCount");
  bind(dnn.setMathType, "cudnnSetConvolutionMathType");
  bind(dnn.destroyConv, "cudnnDestroyConvolutionDescriptor");
  bind(dnn.getFwdAlgo, "cudnnGetConvolutionForwardAlgorithm_v7");
  bind(dnn.getFwdWorkspace, "cudnnGetConvolutionForwardWorkspaceSize");
  bind(dnn.convForward, "cudnnConvolutionForward");
  bind(dnn.addTensor, "cudnnAddTensor");
  bind(dnn.createActivation, "cudnnCreateActivationDescriptor");
  bind(dnn.setActivation, "cudnnSetActivationDescriptor");
  bind(dnn.destroyActivation, "cudnnDestroyActivationDescriptor");
  bind(dnn.activationForward, "cudnnActivationForward");
  bind(dnn.convBiasActivationForward,
       "cudnnConvolutionBiasActivationForward");
  if (!missing.empty()) {
    l->status = Status::error(strCat(dnn.library, ": lacks '", missing,
                                     "': Kiln needs cuDNN 9"));
    return l;
  }
  dnn.version = dnn.getVersion();
  if (dnn.version < 90000)
    l->status = Status::error(strCat(dnn.library, " is cuDNN version ",
                                     dnn.version, ": Kiln needs cuDNN 9"));
  return l;
}

LoadedDnn &loadedDnn() {
  static LoadedDnn *loaded = loadDnn();
  return *loaded;
}

/// cuDNN, loaded once, after the driver's context is current.
Expected<const Dnn *> cudnn() {
  Expected<const Driver *> d = driver();
  if (!d)
    return d.status();
  LoadedDnn &l = loadedDnn();
  if (!l.status)
    return l.status;
  return &l.dnn;
}

Status dnnCheck(const Dnn &dnn, cudnnStatus s, const std::string &what) {
  if (s == kStatusSuccess)
    return Status::ok();
  return Status::error(strCat("cuDNN: ", what, " failed: ",
                              dnn.errorString(s), " (", s, ")"));
}

/// An algorithm and the workspace it needs.
struct Candidate {
  int algo = 0;
  size_t workspaceBytes = 0;
};

/// A convolution configuration's descriptors and algorithms: the heuristic's
/// usable candidates, best first; `current` is the one in use (an algorithm
/// that cuDNN refuses at run time as not supported gives way to the next).
///
/// A plan with a ReLU also holds the activation descriptor, a device buffer
/// of zeros that stands in for a missing bias of the fused call, and whether
/// cuDNN refused the fused call (then the separate calls run).
struct Plan {
  const Dnn *dnn = nullptr;
  cudnnTensorDesc xDesc = nullptr, yDesc = nullptr, biasDesc = nullptr;
  cudnnFilterDesc wDesc = nullptr;
  cudnnConvDesc convDesc = nullptr;
  cudnnActDesc actDesc = nullptr;
  void *zeroBias = nullptr;
  bool fusedRefused = false;
  std::vector<Candidate> candidates;
  size_t current = 0;
  ~Plan() {
    for (cudnnTensorDesc t : {xDesc, yDesc, biasDesc})
      if (t)
        dnn->destroyTensor(t);
    if (wDesc)
      dnn->destroyFilter(wDesc);
    if (convDesc)
      dnn->destroyConv(convDesc);
    if (actDesc)
      dnn->destroyActivation(actDesc);
    deallocate(zeroBias);
  }
};

/// A stream's cuDNN handle (bound to the stream), plans and workspace. Plans
/// are per stream so that a handle and its descriptors are only ever used
/// under the stream's mutex, which serialises calls for the stream from
/// several threads.
struct StreamState {
  cudnnHandle handle = nullptr;
  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  std::mutex mutex;
};

struct Cache {
  std::mutex mutex;
  std::map<void *, std::unique_ptr<StreamState>> streams;
};

Cache &cache() {
  static Cache *c = new Cache();
  return *c;
}

/// The largest workspace an algorithm may ask for.
constexpr size_t kMaxWorkspaceBytes = size_t(1) << 30;

/// A packed tensor descriptor of `dims` ([N, C, spatial...], 4 or 5 of
/// them), stored in that order or, with `channelsLast`, as [N, spatial...,
/// C].
Status makeTensor(const Dnn &dnn, cudnnTensorDesc &desc, int type,
                  const std::vector<int> &dims, bool channelsLast) {
  KILN_RETURN_IF_ERROR(
      dnnCheck(dnn, dnn.createTensor(&desc), "creating a tensor descriptor"));
  int rank = static_cast<int>(dims.size());
  std::vector<int> strides(rank, 1);
  if (channelsLast) {
    // Channels innermost, then the spatial dims, then the batch.
    int stride = dims[1];
    for (int i = rank - 1; i >= 2; --i) {
      strides[i] = stride;
      stride *= dims[i];
    }
    strides[0] = stride;
  } else {
    for (int i = rank - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * dims[i + 1];
  }
  return dnnCheck(dnn,
                  dnn.setTensorNd(desc, type, static_cast<int>(dims.size()),
                                  dims.data(), strides.data()),
                  "setting a tensor descriptor");
}

Expected<std::unique_ptr<Plan>> buildPlan(const Dnn &dnn, cudnnHandle handle,
                                          const ConvArgs &x, int type) {
  auto plan = std::make_unique<Plan>();
  plan->dnn = &dnn;
  // A 1-D convolution is a 2-D one of height 1.
  int nsp = x.spatialDims;
  int lift = nsp == 1 ? 1 : 0, dims = nsp + lift;
  std::vector<int> xd = {int(x.xShape[0]), int(x.xShape[1])};
  std::vector<int> wd = {int(x.wShape[0]), int(x.wShape[1])};
  std::vector<int> yd = {int(x.yShape[0]), int(x.yShape[1])};
  std::vector<int> bd = {1, int(x.yShape[1])};
  std::vector<int> pad, stride, dilation;
  if (lift) {
    for (auto *v : {&xd, &wd, &yd, &bd})
      v->push_back(1);
    pad.push_back(0), stride.push_back(1), dilation.push_back(1);
  }
  for (int d = 0; d < nsp; ++d) {
    xd.push_back(int(x.xShape[2 + d]));
    wd.push_back(int(x.wShape[2 + d]));
    yd.push_back(int(x.yShape[2 + d]));
    bd.push_back(1);
    pad.push_back(int(x.pads[d]));
    stride.push_back(int(x.strides[d]));
    dilation.push_back(int(x.dilations[d]));
  }
  bool last = x.layout == KILN_CUDA_LAYOUT_NHWC;
  KILN_RETURN_IF_ERROR(makeTensor(dnn, plan->xDesc, type, xd, last));
  KILN_RETURN_IF_ERROR(makeTensor(dnn, plan->yDesc, type, yd, last));
  if (x.bias || x.relu)
    KILN_RETURN_IF_ERROR(makeTensor(dnn, plan->biasDesc, type, bd, false));
  if (x.relu) {
    KILN_RETURN_IF_ERROR(dnnCheck(dnn, dnn.createActivation(&plan->actDesc),
                                  "creating an activation descriptor"));
    KILN_RETURN_IF_ERROR(dnnCheck(
        dnn, dnn.setActivation(plan->actDesc, kActivationRelu, kPropagateNan, 0),
        "setting the activation descriptor"));
  }
  KILN_RETURN_IF_ERROR(dnnCheck(dnn, dnn.createFilter(&plan->wDesc),
                                "creating a filter descriptor"));
  KILN_RETURN_IF_ERROR(
      dnnCheck(dnn,
               dnn.setFilterNd(plan->wDesc, type,
                               last ? kTensorNhwc : kTensorNchw,
                               static_cast<int>(wd.size()), wd.data()),
               "setting the filter descriptor"));
  KILN_RETURN_IF_ERROR(dnnCheck(dnn, dnn.createConv(&plan->convDesc),
                                "creating a convolution descriptor"));
  KILN_RETURN_IF_ERROR(dnnCheck(
      dnn,
      dnn.setConvNd(plan->convDesc, dims, pad.data(), stride.data(),
                    dilation.data(), kCrossCorrelation, kDataFloat),
      "setting the convolution descriptor"));
  KILN_RETURN_IF_ERROR(
      dnnCheck(dnn, dnn.setGroupCount(plan->convDesc, int(x.group)),
               "setting the group count"));
  // f32: FMA only (no TF32); f16/bf16: tensor cores, fp32 accumulation.
  int math = type == kDataFloat ? kFmaMath : kTensorOpMath;
  KILN_RETURN_IF_ERROR(dnnCheck(
      dnn, dnn.setMathType(plan->convDesc, math), "setting the math type"));

  FwdAlgoPerf perf[kFwdAlgoCount] = {};
  int found = 0;
  KILN_RETURN_IF_ERROR(dnnCheck(
      dnn,
      dnn.getFwdAlgo(handle, plan->xDesc, plan->wDesc, plan->convDesc,
                     plan->yDesc, kFwdAlgoCount, &found, perf),
      "choosing an algorithm (cudnnGetConvolutionForwardAlgorithm_v7)"));
  for (int i = 0; i < found; ++i) {
    const FwdAlgoPerf &p = perf[i];
    if (p.status != kStatusSuccess || p.memory > kMaxWorkspaceBytes)
      continue;
    if (type == kDataFloat && p.mathType != kFmaMath &&
        p.mathType != kDefaultMath)
      continue;
    size_t bytes = 0;
    if (dnn.getFwdWorkspace(handle, plan->xDesc, plan->wDesc, plan->convDesc,
                            plan->yDesc, p.algo, &bytes) != kStatusSuccess ||
        bytes > kMaxWorkspaceBytes)
      continue;
    plan->candidates.push_back({p.algo, bytes});
  }
  if (plan->candidates.empty()) {
    std::string shape = "x [";
    for (size_t i = 0; i < xd.size(); ++i)
      shape += (i ? ", " : "") + std::to_string(xd[i]);
    shape += "], w [";
    for (size_t i = 0; i < wd.size(); ++i)
      shape += (i ? ", " : "") + std::to_string(wd[i]);
    return Status::error(strCat("cuDNN has no forward algorithm for this "
                                "convolution (",
                                shape, "], group ", x.group, ", dtype code ",
                                x.dtype, "; ", found, " candidates)"));
  }
  return plan;
}

/// The cache key of a convolution: everything the plan depends on.
std::vector<int64_t> planKey(const ConvArgs &x) {
  int nsp = x.spatialDims;
  std::vector<int64_t> key = {x.dtype, nsp, x.layout, x.group,
                              x.bias != nullptr, x.relu};
  for (const int64_t *s : {x.xShape, x.wShape, x.yShape})
    key.insert(key.end(), s, s + nsp + 2);
  key.insert(key.end(), x.strides, x.strides + nsp);
  key.insert(key.end(), x.pads, x.pads + 2 * nsp);
  key.insert(key.end(), x.dilations, x.dilations + nsp);
  return key;
}

} // namespace

Status cudnnAvailable(std::string *library) {
  LoadedDnn &l = loadedDnn();
  if (l.status && library)
    *library = l.dnn.library;
  return l.status;
}

Status conv(const ConvArgs &args) {
  KILN_RETURN_IF_ERROR(checkConvArgs(args));
  // From here on the shapes are read channels first; x.layout says how the
  // tensors are stored.
  ChannelsFirstShapes shapes;
  ConvArgs x = readChannelsFirst(args, shapes);
  Expected<const Dnn *> dnnOr = cudnn();
  if (!dnnOr)
    return dnnOr.status();
  const Dnn &dnn = **dnnOr;
  int type = x.dtype == 0 ? kDataFloat
                          : (x.dtype == 1 ? kDataHalf : kDataBfloat16);

  Cache &c = cache();
  StreamState *state = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    std::unique_ptr<StreamState> &s = c.streams[x.stream];
    if (!s)
      s = std::make_unique<StreamState>();
    state = s.get();
  }

  std::lock_guard<std::mutex> lock(state->mutex);
  if (!state->handle) {
    cudnnHandle handle = nullptr;
    KILN_RETURN_IF_ERROR(dnnCheck(dnn, dnn.create(&handle), "cudnnCreate"));
    KILN_RETURN_IF_ERROR(dnnCheck(dnn, dnn.setStream(handle, x.stream),
                                  "cudnnSetStream"));
    state->handle = handle;
  }
  std::vector<int64_t> key = planKey(x);
  Plan *plan = nullptr;
  auto it = state->plans.find(key);
  if (it != state->plans.end()) {
    plan = it->second.get();
  } else {
    Expected<std::unique_ptr<Plan>> built =
        buildPlan(dnn, state->handle, x, type);
    if (!built)
      return built.status();
    plan = built->get();
    state->plans.emplace(std::move(key), built.take());
  }
  float one = 1.0f, zero = 0.0f;
  bool fused = x.relu && !plan->fusedRefused;
  if (fused && !x.bias && !plan->zeroBias) {
    size_t bytes = size_t(x.yShape[1]) * (x.dtype == 0 ? 4 : 2);
    Expected<void *> p = allocate(bytes);
    if (!p)
      return p.status().withContext("cuDNN: the zero bias of a fused ReLU");
    Expected<const Driver *> d = driver();
    KILN_RETURN_IF_ERROR(check(
        **d,
        (*d)->memsetD8Async(reinterpret_cast<CUdeviceptr>(*p), 0, bytes,
                            static_cast<CUstream>(x.stream)),
        "clearing the zero bias of a fused ReLU"));
    plan->zeroBias = *p;
  }
  for (;;) {
    const Candidate &cand = plan->candidates[plan->current];
    if (cand.workspaceBytes > state->workspaceBytes) {
      // The old workspace may still be read by work enqueued on the stream.
      if (state->workspace) {
        KILN_RETURN_IF_ERROR(synchronize(x.stream));
        deallocate(state->workspace);
        state->workspace = nullptr;
        state->workspaceBytes = 0;
      }
      Expected<void *> p = allocate(cand.workspaceBytes);
      if (!p)
        return p.status().withContext("cuDNN workspace");
      state->workspace = *p;
      state->workspaceBytes = cand.workspaceBytes;
    }
    void *ws = cand.workspaceBytes ? state->workspace : nullptr;
    cudnnStatus st;
    if (fused) {
      // y = relu(conv(x, w) + alpha2 * z + bias); without a residual, y
      // stands in for z with alpha2 = 0.
      float alpha2 = x.z ? 1.0f : 0.0f;
      st = dnn.convBiasActivationForward(
          state->handle, &one, plan->xDesc, x.x, plan->wDesc, x.w,
          plan->convDesc, cand.algo, ws, cand.workspaceBytes, &alpha2,
          plan->yDesc, x.z ? x.z : x.y, plan->biasDesc,
          x.bias ? x.bias : plan->zeroBias, plan->actDesc, plan->yDesc, x.y);
    } else {
      st = dnn.convForward(state->handle, &one, plan->xDesc, x.x, plan->wDesc,
                           x.w, plan->convDesc, cand.algo, ws,
                           cand.workspaceBytes, &zero, plan->yDesc, x.y);
    }
    if (st == kStatusSuccess)
      break;
    // CUDNN_STATUS_NOT_SUPPORTED and its refinements (3000-3999): try the
    // next candidate; when no algorithm takes the fused call, the separate
    // calls.
    if (st >= 3000 && st < 4000) {
      if (plan->current + 1 < plan->candidates.size()) {
        ++plan->current;
        continue;
      }
      if (fused) {
        plan->fusedRefused = true;
        plan->current = 0;
        fused = false;
        continue;
      }
    }
    return dnnCheck(dnn, st,
                    strCat(fused ? "cudnnConvolutionBiasActivationForward"
                                 : "cudnnConvolutionForward",
                           " (algorithm ", cand.algo, ")"));
  }
  if (fused)
    return Status::ok();
  if (x.bias)
    KILN_RETURN_IF_ERROR(
        dnnCheck(dnn,
                 dnn.addTensor(state->handle, &one, plan->biasDesc, x.bias,
                               &one, plan->yDesc, x.y),
                 "cudnnAddTensor (the bias)"));
  if (x.z)
    KILN_RETURN_IF_ERROR(
        dnnCheck(dnn,
                 dnn.addTensor(state->handle, &one, plan->yDesc, x.z, &one,
                               plan->yDesc, x.y),
                 "cudnnAddTensor (the residual)"));
  if (!x.relu)
    return Status::ok();
  return dnnCheck(dnn,
                  dnn.activationForward(state->handle, plan->actDesc, &one,
                                        plan->yDesc, x.y, &zero, plan->yDesc,
                                        x.y),
                  "cudnnActivationForward (the ReLU)");
}

#else // !KILN_HAVE_CUDA

Status cudnnAvailable(std::string *) {
  return Status::error(
      strCat("cuDNN cannot be used: ", available().message()));
}

Status conv(const ConvArgs &args) {
  KILN_RETURN_IF_ERROR(checkConvArgs(args));
  return available();
}

#endif // KILN_HAVE_CUDA

} // namespace cuda
} // namespace kiln
