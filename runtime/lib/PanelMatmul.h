//===- PanelMatmul.h - A GEMM of few rows by a packed constant --*- C++ -*-===//
//
// This file declares PanelMatmul, the runtime's own f32 GEMM for a product
// of few rows (m <= 8: a batch-1 or batch-8 Linear layer) by a constant
// matrix (a weight): y = act(a b + bias + residual), act ReLU or none.
// Such a product reads each weight once per 8 or fewer multiply-adds, so
// its time is the time to stream b from memory; b is packed once, at
// creation, into panels of 32 columns ([ceil(n / 32)][k][32], zero past n),
// so that a run reads it front to back, and the kernel prefetches 4 KB
// ahead of its loads. A run keeps the m x 32 results of a panel in
// registers (AVX-512; a portable loop elsewhere) and splits the panels
// among the calling thread's OpenMP threads.
//
// Why not oneDNN's matmul (kiln-lower-cpu chooses, the IR says which:
// `cpu.panel_matmul`): for mlp's two [8, 1024] x [1024, 4096] and
// [8, 4096] x [4096, 1024] products, 32 MB of weights from memory, oneDNN
// 2.6's brgemm took 3.56 ms on one thread, this kernel 2.90 ms (the
// machine's read bandwidth: 2.8 ms for 32 MB).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PANELMATMUL_H
#define KILN_RUNTIME_PANELMATMUL_H

#include "HugePageMemory.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace kiln {

/// y[m, n] = act(a[m, k] b[k, n] + bias[n] + residual[m, n]) for m <=
/// kMaxRows, b constant (packed at construction).
class PanelMatmul {
public:
  /// The most rows a run computes (its accumulators: 8 x 32 floats, 16
  /// AVX-512 registers).
  static constexpr int64_t kMaxRows = 8;
  /// The columns of a panel.
  static constexpr int64_t kPanelColumns = 32;

  /// Packs `b`, [k, n] row major, or [n, k] when `transB`, into panels.
  /// `portable`: runs the portable loop even where AVX-512 is (tests).
  PanelMatmul(int64_t m, int64_t n, int64_t k, const float *b, bool transB,
              bool relu, bool portable = false);

  /// y = act(a b + bias + residual): a [m, k] row major, bias [n] and
  /// residual [m, n] null when absent; y [m, n] may be residual (each
  /// element is read before it is written, by the thread that writes it).
  void run(const float *a, const float *bias, const float *residual,
           float *y) const;

private:
  int64_t m_, n_, k_;
  bool relu_;
  /// The AVX-512 kernel runs (the CPU has it, and not `portable`).
  bool avx512_;
  /// [ceil(n / 32)][k][32], on huge pages.
  HugePageFloats panels_;
};

} // namespace kiln

#endif // KILN_RUNTIME_PANELMATMUL_H
