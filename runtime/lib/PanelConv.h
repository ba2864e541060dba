//===- PanelConv.h - A convolution of few output pixels on panels -*- C++
//-*-===//
//
// This file declares PanelConv, the runtime's own f32 2-D convolution for
// few output pixels by large constant weights: ResNet-50's 7x7 stage, whose
// nine convolutions (batch 1: 49 output pixels) multiply 2 to 9 MB of
// weights each, every weight 49 times. Such a convolution is the GEMM
// [pixels, kh*kw*C] x [kh*kw*C, O] (an im2col copy of the input, skipped
// for a 1x1 window of stride 1 without pads), its time streaming the
// weights from memory (a model of 100 MB does not keep them in the L3
// between runs). The weights are packed once, at creation, into panels of
// 64 output channels ([ceil(O / 64)][kh*kw*C][64], zero past O, on huge
// pages), so that a run reads them front to back; a run takes a panel in
// chunks of 128 steps of k (32 KB, held in the L1 while every 7-row block
// of pixels multiplies it, 28 AVX-512 accumulators) and prefetches the next
// chunk into the L2 while it computes this one. The residual is read where
// the result goes (y may be the residual: oneDNN's sum post-op); the bias
// and the residual start the sums, ReLU ends them.
//
// Why not oneDNN (kiln-lower-cpu chooses, the IR says which: the
// onednn.conv call's `algorithm = "panels"`): in ResNet-50's package, one
// thread, the nine convolutions took 14.7 ms on oneDNN 2.6's brgconv and
// 11.2 ms on these panels (per-layer minimum of six profiled runs each,
// BENCHMARKS.md), each 0.70-0.86x. With hot weights oneDNN's matmul beat
// a similar 7-row panel kernel (bench/cpu_small_m_gemm.cpp), and
// EfficientNet-B0's two convolutions on panels, whose weights fit the L3,
// measured neutral.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PANELCONV_H
#define KILN_RUNTIME_PANELCONV_H

#include "HugePageMemory.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace kiln {

/// y = act(conv(x, w) + bias + residual) for a 2-D, one-group, undilated,
/// channels-last convolution of at most kMaxRows output pixels (all images), w
/// constant (packed at construction), act ReLU or none.
class PanelConv {
public:
  /// The most output pixels (batch x height x width) of one (the rows of
  /// its GEMM; measured at 49).
  static constexpr int64_t kMaxRows = 64;

  /// The geometry: x [batch, inH, inW, channels], y [batch, outH, outW,
  /// outChannels]; the window [kernelH, kernelW] (dilation 1) with its
  /// strides and pads before (the pads after follow from the sizes).
  struct Geometry {
    int64_t batch = 0, channels = 0, outChannels = 0;
    int64_t inH = 0, inW = 0, outH = 0, outW = 0;
    int64_t kernelH = 0, kernelW = 0, strideH = 1, strideW = 1;
    int64_t padH = 0, padW = 0;
  };

  /// Packs `w` ([O, kh, kw, C], or [O, C, kh, kw] when `weightsChannelsFirst`)
  /// into panels. `portable`: runs the portable loop even where AVX-512 is
  /// (tests). Throws std::bad_alloc when out of memory.
  PanelConv(const Geometry &g, const float *w, bool weightsChannelsFirst,
            bool relu, bool portable = false);

  /// y = act(conv(x, w) + bias + residual): bias [O] and residual (y's
  /// shape) null when absent; y may be residual.
  void run(const float *x, const float *bias, const float *residual,
           float *y) const;

  /// The rows and the reduction of the GEMM.
  int64_t rows() const { return rows_; }
  int64_t depth() const { return depth_; }

private:
  /// Whether x is the GEMM's [rows, depth] left operand as it is: a 1x1
  /// window of stride 1 without pads.
  bool readsInputDirectly() const;
  /// Rows [r0, r1) of x's im2col copy into `lhs` ([rows, depth]; the
  /// columns in the packed weights' order: ky, kx, channel).
  void copyRows(const float *x, float *lhs, int64_t r0, int64_t r1) const;

  Geometry g_;
  int64_t rows_, depth_;
  bool relu_;
  /// The AVX-512 kernel runs (the CPU has it, and not `portable`).
  bool avx512_;
  /// [ceil(O / 64)][depth][64], on huge pages.
  HugePageFloats panels_;
};

} // namespace kiln

#endif // KILN_RUNTIME_PANELCONV_H
