//===- OneDnn.h - oneDNN primitives of a compiled CPU model -----*- C++ -*-===//
//
// This file declares OneDnnPrimitives, what a cpu package's wrapper calls for
// its `onednn.matmul` and `onednn.conv` library calls (targets/cpu/): each
// call's oneDNN primitive (and its max pooling), created once when the model
// is created, with its epilogue as post-ops (bias, residual add, activation)
// and its constant operand (the weights) reordered once into the primitive's
// blocked layout; a run executes it on pointers into the caller's inputs,
// outputs and arena (no copies). oneDNN's types stay behind this header, so
// generated code includes nothing heavy. oneDNN runs on the calling thread's
// OpenMP pool, the one the generated kernels use (<package>_set_threads).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ONEDNN_H
#define KILN_RUNTIME_ONEDNN_H

#include "kiln/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace kiln {

/// What a oneDNN primitive computes after its main operation and its adds
/// (kiln.library_call's epilogue activations).
enum class OneDnnActivation {
  None,
  Relu,
  GeluTanh,
  GeluErf,
  Sigmoid,
  Tanh,
  HardSwish
};

/// The epilogue of a oneDNN call: act(result + bias + residual).
struct OneDnnEpilogue {
  /// A bias: [n] for a matmul, [channels] for a convolution.
  bool bias = false;
  /// A residual of the result's shape and layout.
  bool residual = false;
  OneDnnActivation activation = OneDnnActivation::None;
};

/// An f32 GEMM: `batch` products [m, k] x [k, n] -> [m, n], row major, the
/// result contiguous.
struct OneDnnMatmulDesc {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// Elements between the batch's matrices of A and B (0: one matrix for
  /// all).
  int64_t strideA = 0, strideB = 0;
  /// A is stored [k, m] (B: [n, k]), read transposed.
  bool transA = false, transB = false;
  /// B is constant for the model's life (a weight): reordered once, when
  /// the primitive is created, and not passed to run().
  bool packB = false;
  OneDnnEpilogue epilogue;
};

/// An f32 convolution of 1 to 3 spatial dims, channels first ([N, C, ...]
/// operands, [O, C/group, ...] weights) or channels last ([N, ..., C],
/// [O, ..., C/group]).
struct OneDnnConvDesc {
  int64_t batch = 0, channels = 0, outChannels = 0, group = 1;
  std::vector<int64_t> inSize, outSize, kernel, strides, dilations;
  /// Pads before and after each spatial dim.
  std::vector<int64_t> padsBegin, padsEnd;
  bool channelsLast = false;
  /// The weights are [O, C/group, k...] even when the activations are
  /// channels last (a model's own weights, read without a transpose).
  bool weightsChannelsFirst = false;
  /// The weights are constant (reordered once at creation, not passed to
  /// run()).
  bool packWeights = false;
  OneDnnEpilogue epilogue;
};

/// An f32 max pooling of 1 to 3 spatial dims, channels first or last;
/// padding never wins (it is -inf). The end pads follow from the sizes
/// (ceil mode is a larger end pad).
struct OneDnnPoolDesc {
  int64_t batch = 0, channels = 0;
  std::vector<int64_t> inSize, outSize, kernel, strides, dilations, padsBegin;
  bool channelsLast = false;
};

/// The oneDNN primitives of one loaded model, in the order of its library
/// calls, each made for the thread counts its runs use (the running
/// thread's OpenMP thread count). Creating is not thread-safe; run() may be
/// called from several threads at once.
class OneDnnPrimitives {
public:
  OneDnnPrimitives();
  ~OneDnnPrimitives();
  OneDnnPrimitives(const OneDnnPrimitives &) = delete;
  OneDnnPrimitives &operator=(const OneDnnPrimitives &) = delete;

  /// Creates a matmul primitive, reading `b` (its plain layout as `desc`
  /// says) now when desc.packB, and appends it. `b` stays alive as long as
  /// this object (a run with another thread count packs it again).
  Status addMatmul(const OneDnnMatmulDesc &desc, const void *b);
  /// Creates a convolution primitive, reading `weights` now when
  /// desc.packWeights, and appends it; `weights` stays alive as long as
  /// this object.
  Status addConv(const OneDnnConvDesc &desc, const void *weights);

  /// Creates a max-pooling primitive and appends it.
  Status addMaxPool(const OneDnnPoolDesc &desc);

  /// Runs primitive `index`: x (A or the input), w (B or the weights; null
  /// when packed), bias and residual (null when the epilogue has none),
  /// into y.
  Status run(size_t index, const void *x, const void *w, const void *bias,
             const void *residual, void *y) const;

  /// The number of primitives.
  size_t size() const;

private:
  struct Primitive;
  std::vector<std::unique_ptr<Primitive>> primitives_;
};

} // namespace kiln

#endif // KILN_RUNTIME_ONEDNN_H
