//===- OneDnnRecurrence.h - GRU and LSTM recurrences on oneDNN --*- C++ -*-===//
//
// This file declares OneDnnRecurrence, the runtime side of a cpu package's
// `onednn.gru_recurrence` and `onednn.lstm_recurrence` calls, which
// OneDnnPrimitives (kiln/runtime/OneDnn.h) holds beside its primitives.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_ONEDNNRECURRENCE_H
#define KILN_RUNTIME_LIB_ONEDNNRECURRENCE_H

#include "kiln/runtime/OneDnn.h"

#include <memory>
#include <vector>

namespace kiln {

/// A GRU or LSTM recurrence whose input projection is done: per direction,
/// oneDNN matmuls of the state by the packed recurrence weights, and the
/// gates of each step in a vectorized loop; a packed LSTM (or GRU with
/// linear_before_reset) of a hidden size that is a multiple of 16 computes
/// its products in blocks of hidden units, each block's gates right after
/// its product.
class OneDnnRecurrence {
public:
  /// Creates the recurrence `desc` with the recurrence weights `r` ([D,
  /// gates * H, H], alive as long as the result).
  static Status create(const OneDnnRecurrenceDesc &desc, const void *r,
                       std::unique_ptr<OneDnnRecurrence> &out);

  /// Runs every step of every direction.
  Status run(const OneDnnRecurrenceArgs &args) const;

private:
  Status runFused(const OneDnnRecurrenceArgs &args) const;

  OneDnnRecurrenceDesc desc_;
  /// A packed LSTM, or GRU with linear_before_reset, whose hidden size is a
  /// multiple of 16 runs its own products with the gates fused (runFused):
  /// per direction, R in blocks of 16 hidden units, [H / 16][H][gates x 16
  /// units].
  std::vector<float> blocks_;
  /// Per direction: the state product, [batch, H] x R^T (all gates; for a
  /// GRU without linear_before_reset the z and r gates, then the h gate's
  /// product of the reset state as the next primitive).
  OneDnnPrimitives products_;
};

} // namespace kiln

#endif // KILN_RUNTIME_LIB_ONEDNNRECURRENCE_H
