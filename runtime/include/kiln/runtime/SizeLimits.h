//===- SizeLimits.h - Tensor size limits and checked size arithmetic -*- C++
//-*-===//
//
// This file declares the limits every size read from a model file, weights
// file, `.npy`, manifest or program is checked against, and the one set of
// checked arithmetic helpers that size computations (shape inference, the
// kernel IR, the memory planner, the readers) use instead of raw `*` and `+`
// on int64_t. docs/reliability.md lists the limits; they are generous for
// real models (the largest tensor is 2^40 elements, 4 TiB of float32) and
// small enough that no product of two in-range sizes overflows int64_t
// before it is checked.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SIZELIMITS_H
#define KILN_RUNTIME_SIZELIMITS_H

#include <cstddef>
#include <cstdint>
#include <optional>

namespace kiln {

/// The largest number of elements of one tensor (and so the largest
/// dimension): 2^40.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 40;
/// The largest byte size of one tensor or buffer: 2^44 (16 TiB).
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 44;
/// The largest rank of a tensor.
inline constexpr int64_t kMaxTensorRank = 64;
/// The deepest nesting of subgraphs (If/Loop/Scan bodies) the tracer follows.
inline constexpr int kMaxSubgraphDepth = 64;
/// The largest constant the compiler creates itself (an EyeLike, a folded
/// value): 2^24 elements. Larger ones stay ops.
inline constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;
/// The largest number of results of one node (Split's num_outputs, ...).
inline constexpr int64_t kMaxNodeOutputs = int64_t(1) << 16;

/// a * b, or nullopt when it overflows int64_t.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a + b, or nullopt when it overflows int64_t.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a - b, or nullopt when it overflows int64_t.
inline std::optional<int64_t> checkedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a * b clamped to [INT64_MIN, INT64_MAX]: for size computations whose
/// result is checked against the limits afterwards (a saturated size is
/// always out of range).
inline int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r))
    return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

/// a + b clamped to [INT64_MIN, INT64_MAX].
inline int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r))
    return r;
  return a < 0 ? INT64_MIN : INT64_MAX;
}

/// True when `n` is a valid element count or dimension: 0 <= n <=
/// kMaxTensorElements.
inline bool isValidSize(int64_t n) { return n >= 0 && n <= kMaxTensorElements; }

/// The number of elements of a shape given as [begin, end) of int64_t-like
/// values, or nullopt when a dim is negative or the product exceeds
/// kMaxTensorElements. A zero dim makes the count 0, but the product of the
/// other dims must still be within the limit (strides are products of dims,
/// and they must not overflow for an empty tensor either).
template <typename Iterator>
std::optional<int64_t> checkedElementCount(Iterator begin, Iterator end) {
  int64_t count = 1;
  bool zero = false;
  for (Iterator it = begin; it != end; ++it) {
    int64_t d = static_cast<int64_t>(*it);
    if (!isValidSize(d))
      return std::nullopt;
    if (d == 0) {
      zero = true;
      continue;
    }
    std::optional<int64_t> next = checkedMul(count, d);
    if (!next || *next > kMaxTensorElements)
      return std::nullopt;
    count = *next;
  }
  return zero ? 0 : count;
}

/// checkedElementCount over a container (std::vector, llvm::ArrayRef...).
template <typename Range>
std::optional<int64_t> checkedElementCount(const Range &shape) {
  return checkedElementCount(shape.begin(), shape.end());
}

/// True when a shape read from a file is within the limits: rank at most
/// kMaxTensorRank and the product of its known dims (those >= 0; -1 is a
/// size known only at run time) within kMaxTensorElements.
template <typename Range> bool isShapeWithinLimits(const Range &shape) {
  int64_t rank = 0, count = 1;
  for (auto d : shape) {
    ++rank;
    int64_t v = static_cast<int64_t>(d);
    if (v <= 0)
      continue;
    std::optional<int64_t> next = checkedMul(count, v);
    if (!next || *next > kMaxTensorElements)
      return false;
    count = *next;
  }
  return rank <= kMaxTensorRank;
}

/// The byte size of `count` elements of `elementBytes` each, or nullopt when
/// it exceeds kMaxTensorBytes.
inline std::optional<int64_t> checkedByteSize(int64_t count,
                                              int64_t elementBytes) {
  std::optional<int64_t> bytes = checkedMul(count, elementBytes);
  if (!bytes || *bytes < 0 || *bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}

} // namespace kiln

#endif // KILN_RUNTIME_SIZELIMITS_H
