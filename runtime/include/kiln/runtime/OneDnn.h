//===- OneDnn.h - oneDNN primitives of a compiled CPU model -----*- C++ -*-===//
//
// This file declares OneDnnPrimitives, what a cpu package's wrapper calls for
// its `onednn.matmul` and `onednn.conv` library calls (targets/cpu/): each
// call's oneDNN primitive (and its max pooling, and the GRU and LSTM
// recurrences built on oneDNN matmuls), created once when the model
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
#include <string>
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
  HardSwish,
  /// min(max(x, 0), 6).
  Relu6
};

/// The epilogue of a oneDNN call: act(result + bias + residual).
struct OneDnnEpilogue {
  /// A bias: [n] for a matmul, [channels] for a convolution.
  bool bias = false;
  /// A residual of the result's shape and layout.
  bool residual = false;
  /// The residual is in the result's buffer when the call runs (the
  /// compiler gave both one buffer: kiln.in_place): oneDNN adds what it finds
  /// in its destination (its sum post-op) instead of a second tensor (a
  /// binary add), and run() takes the residual pointer equal to the
  /// result's. oneDNN 2.6 runs a 1x1 convolution with a sum post-op on its
  /// `brgconv_1x1` kernel, with a binary add on the older `jit_1x1`.
  bool residualInPlace = false;
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
  /// Computed by the runtime's own GEMM for few rows (runtime/lib/
  /// PanelMatmul.h: B packed into 32-column panels and streamed), not by
  /// oneDNN (kiln.library_call "cpu.panel_matmul"): needs batch 1,
  /// m <= 8, packB, A not transposed, and an epilogue of a bias, a residual
  /// and ReLU at most.
  bool panels = false;
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
  /// Winograd's algorithm (oneDNN's convolution_winograd: F(2x2, 3x3) for
  /// one image), which the compiler asks for (kiln.library_call's
  /// `algorithm = "winograd"`) where it is faster than the direct one: a 2-D
  /// 3x3 convolution of stride and dilation 1, one group, packed weights,
  /// no residual. Its activations are in oneDNN's blocked layout, so a run
  /// reorders x into it and the result out of it, in the calling thread's
  /// scratch memory. Where oneDNN has no Winograd kernel for this CPU (it
  /// needs AVX-512), the direct algorithm runs.
  bool winograd = false;
  /// Computed by the runtime's own convolution for few output pixels
  /// (runtime/lib/PanelConv.h: the weights packed into 64-column panels and
  /// streamed, the input copied im2col), not by oneDNN (kiln.library_call's
  /// `algorithm = "panels"`): needs a 2-D channels-last convolution of one
  /// group and dilation 1, packed weights, at most 64 output pixels (all
  /// images) and an epilogue of a bias, a residual and ReLU at most.
  bool panels = false;
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

/// The recurrence of a GRU or LSTM whose input projection is done
/// (kiln.gru_recurrence, kiln.lstm_recurrence; f32, default activations):
/// per step and direction, a oneDNN matmul of the state [batch, H] by the
/// recurrence weights (packed once, at creation), then the gates.
struct OneDnnRecurrenceDesc {
  /// A GRU (gates z, r, h) or an LSTM (gates i, o, f, c), ONNX's orders.
  bool lstm = false;
  int64_t seq = 0, batch = 0, hidden = 0;
  /// 1, or 2 for a bidirectional recurrence (the second direction reverse).
  int64_t directions = 1;
  /// The only direction runs from the end ("reverse").
  bool reverse = false;
  /// Pre-activations clipped to [-clip, clip] when > 0.
  float clip = 0.f;
  /// GRU: the h gate's recurrence product is taken before the reset gate
  /// multiplies it (linear_before_reset = 1, what PyTorch exports).
  bool linearBeforeReset = false;
  /// LSTM: the forget gate is 1 - the input gate.
  bool inputForget = false;
  /// The sequence lengths are an operand (else every one is `seq`).
  bool hasLengths = false;
  /// The recurrence weights are constant for the model's life: reordered
  /// once, at creation (else read from OneDnnRecurrenceArgs::r each run).
  bool packR = true;
};

/// The operands and results of a recurrence run, as kiln.gru_recurrence and
/// kiln.lstm_recurrence have them (layout 0). A result pointer may be null
/// (the result is not used).
struct OneDnnRecurrenceArgs {
  /// [seq, batch, directions * gates * hidden]: W x + Wb (+ Rb for LSTM).
  const float *xw = nullptr;
  /// The recurrence weights [directions, gates * hidden, hidden], when the
  /// descriptor does not pack them (else null).
  const float *r = nullptr;
  /// GRU: rb [directions, 3 * hidden]; LSTM: the peepholes p [directions,
  /// 3 * hidden].
  const float *bias = nullptr;
  /// [directions, batch, hidden]; c0 for an LSTM only.
  const float *h0 = nullptr, *c0 = nullptr;
  /// [batch], when the descriptor has lengths.
  const int32_t *lengths = nullptr;
  /// y [seq, directions, batch, hidden] (zero past a length), y_h, y_c
  /// [directions, batch, hidden].
  float *y = nullptr, *yh = nullptr, *yc = nullptr;
};

/// The oneDNN primitives of one loaded model, in the order of its library
/// calls, each made for the thread counts its runs use (the running
/// thread's OpenMP thread count), and the runtime's own kernels that take
/// the place of one (a panel GEMM, a recurrence's gates). Creating is not
/// thread-safe; run() may be called from several threads at once.
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
  /// Creates an average-pooling primitive and appends it: the divisor is
  /// the whole window when `includePad`, else the input elements it covers.
  Status addAvgPool(const OneDnnPoolDesc &desc, bool includePad);

  /// Creates a recurrence, its state product's matmul primitives packing
  /// `r` ([directions, gates * hidden, hidden]) now when desc.packR (`r`
  /// stays alive as long as this object; else null), and appends it.
  Status addRecurrence(const OneDnnRecurrenceDesc &desc, const void *r);

  /// Runs recurrence `index` (made by addRecurrence).
  Status runRecurrence(size_t index, const OneDnnRecurrenceArgs &args) const;

  /// Runs primitive `index`: x (A or the input), w (B or the weights; null
  /// when packed), bias and residual (null when the epilogue has none),
  /// into y.
  Status run(size_t index, const void *x, const void *w, const void *bias,
             const void *residual, void *y) const;

  /// The number of primitives.
  size_t size() const;

  /// The oneDNN kernel that primitive `index` runs with the calling
  /// thread's thread count (oneDNN's implementation name, e.g.
  /// "brgconv:avx512_core"; "panels" or "recurrence" for the runtime's own).
  std::string implementation(size_t index) const;

private:
  struct Primitive;
  /// addMaxPool and addAvgPool: `kind` is the dnnl::algorithm, `what` names
  /// it in errors.
  Status addPool(const OneDnnPoolDesc &desc, int kind, const char *what);
  /// addConv for desc.panels: the runtime's PanelConv.
  Status addPanelConv(const OneDnnConvDesc &desc, const void *weights);
  std::vector<std::unique_ptr<Primitive>> primitives_;
};

} // namespace kiln

#endif // KILN_RUNTIME_ONEDNN_H
