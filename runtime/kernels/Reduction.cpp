//===- Reduction.cpp - Reference reduction kernels ------------------------===//
//
// This file implements the CPU reference kernels of the kiln reductions:
// reduce_sum, reduce_mean, reduce_max, reduce_min and reduce_prod (axes as an
// i64 operand, ONNX-18 semantics), argmax and argmin, the scans cumsum and
// cumprod, and topk. Every kernel plans its loops once (outer, reduced and
// inner extents, or offset tables when the reduced dims are not adjacent)
// and then runs tight loops over contiguous data; f16/bf16/f32 sums and
// products accumulate in f64, integers in wrapping i64.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

namespace kiln {
namespace {

//===----------------------------------------------------------------------===//
// Element helpers
//===----------------------------------------------------------------------===//

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
constexpr bool kIsFloat = kIsHalf<T> || std::is_floating_point_v<T>;

/// Converts an accumulator value to the storage type T (f16/bf16 through f32,
/// rounding once).
template <typename T, typename A> inline T storeAs(A v) {
  if constexpr (kIsHalf<T>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

/// True when `v` is a floating-point NaN (never for integers and bools).
template <typename A> inline bool isNaN(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return std::isnan(v);
  else
    return false;
}

/// The wide accumulator of sums and products: f64 for floats, i64 else.
template <typename T>
using WideAcc = std::conditional_t<kIsFloat<T>, double, int64_t>;

/// Wrapping add and multiply (two's complement, no signed overflow UB).
template <typename A> inline A wideAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return a + b;
}
template <typename A> inline A wideMul(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return a * b;
}

/// Checks that the kernel's caller sized the outputs.
Status checkOutputs(KernelContext &ctx, const char *op, size_t n) {
  KILN_CHECK(ctx.outputs.size() >= n, op, ": expected ", n,
             " output slot(s), the caller provided ", ctx.outputs.size());
  return Status::ok();
}

/// Reads a parameter operand holding exactly one integer (rank 0 or [1]).
Expected<int64_t> readScalarParam(const Tensor &t, const char *op,
                                  const char *what, size_t index) {
  if (isFloatingPoint(t.dtype()))
    return Status::error(strCat(op, ": operand ", index, " (", what,
                                ") must be an integer tensor, got ",
                                t.typeString()));
  if (t.numel() != 1 || t.rank() > 1)
    return Status::error(strCat(op, ": operand ", index, " (", what,
                                ") must hold exactly one value (rank 0 or "
                                "[1]), got ",
                                t.typeString()));
  return t.getInt(0);
}

/// Splits `shape` around `axis` into (outer, len, inner) element counts.
void splitAround(const Shape &shape, int64_t axis, int64_t &outer, int64_t &len,
                 int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  len = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i)
    inner *= shape[i];
}

//===----------------------------------------------------------------------===//
// Reduction plans
//===----------------------------------------------------------------------===//

/// How to walk a contiguous input for a reduction over a set of dims. When
/// the reduced dims form one block after dropping size-1 dims and merging
/// neighbours, the walk is (outer, reduced, inner); otherwise two offset
/// tables list the kept and the reduced element offsets.
struct ReducePlan {
  bool blocked = true;
  int64_t outer = 1, reduced = 1, inner = 1;
  std::vector<int64_t> keptOffsets, reducedOffsets;
  int64_t numOutputs = 1; ///< elements of the result
  int64_t count = 1;      ///< elements reduced into each result
};

/// All offsets of the dims selected by `mask` (C order over those dims).
std::vector<int64_t> offsetTable(const Shape &shape, const Shape &strides,
                                 const std::vector<bool> &mask, bool want) {
  Shape sub, subStrides;
  for (size_t i = 0; i < shape.size(); ++i)
    if (mask[i] == want) {
      sub.push_back(shape[i]);
      subStrides.push_back(strides[i]);
    }
  std::vector<int64_t> table;
  table.reserve(numElements(sub));
  forEachIndex(sub, [&](const std::vector<int64_t> &idx) {
    table.push_back(offsetOf(idx, subStrides));
  });
  return table;
}

ReducePlan planReduction(const Shape &shape, const std::vector<bool> &mask) {
  ReducePlan plan;
  // Groups of adjacent same-kind dims, size-1 dims dropped.
  std::vector<std::pair<bool, int64_t>> groups;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (mask[i])
      plan.count *= shape[i];
    else
      plan.numOutputs *= shape[i];
    if (shape[i] == 1)
      continue;
    if (!groups.empty() && groups.back().first == mask[i])
      groups.back().second *= shape[i];
    else
      groups.push_back({mask[i], shape[i]});
  }
  int numReducedGroups = 0;
  for (auto &g : groups)
    numReducedGroups += g.first ? 1 : 0;
  if (numReducedGroups <= 1) {
    bool seenReduced = false;
    for (auto &g : groups) {
      if (g.first) {
        plan.reduced = g.second;
        seenReduced = true;
      } else if (seenReduced) {
        plan.inner *= g.second;
      } else {
        plan.outer *= g.second;
      }
    }
    return plan;
  }
  plan.blocked = false;
  Shape strides = contiguousStrides(shape);
  plan.keptOffsets = offsetTable(shape, strides, mask, false);
  plan.reducedOffsets = offsetTable(shape, strides, mask, true);
  return plan;
}

/// Runs a reduction described by `Op` (init / combine / finish) over `plan`.
template <typename T, typename Op>
void runReduction(const ReducePlan &plan, const T *in, T *out) {
  using A = typename Op::Acc;
  if (!plan.blocked) {
    int64_t n = static_cast<int64_t>(plan.keptOffsets.size());
    for (int64_t o = 0; o < n; ++o) {
      const T *base = in + plan.keptOffsets[o];
      A acc = Op::init();
      for (int64_t r : plan.reducedOffsets)
        acc = Op::combine(acc, static_cast<A>(base[r]));
      out[o] = storeAs<T>(Op::finish(acc, plan.count));
    }
    return;
  }
  int64_t R = plan.reduced, I = plan.inner;
  if (I == 1) {
    // Four independent partial results break the dependency chain; combine
    // is associative for every Op (NaN stays NaN in max/min).
    for (int64_t o = 0; o < plan.outer; ++o) {
      const T *row = in + o * R;
      A acc[4] = {Op::init(), Op::init(), Op::init(), Op::init()};
      int64_t r = 0;
      for (; r + 4 <= R; r += 4)
        for (int k = 0; k < 4; ++k)
          acc[k] = Op::combine(acc[k], static_cast<A>(row[r + k]));
      for (; r < R; ++r)
        acc[0] = Op::combine(acc[0], static_cast<A>(row[r]));
      A total =
          Op::combine(Op::combine(acc[0], acc[1]), Op::combine(acc[2], acc[3]));
      out[o] = storeAs<T>(Op::finish(total, plan.count));
    }
    return;
  }
  std::vector<A> acc(I);
  for (int64_t o = 0; o < plan.outer; ++o) {
    std::fill(acc.begin(), acc.end(), Op::init());
    const T *block = in + o * R * I;
    for (int64_t r = 0; r < R; ++r) {
      const T *row = block + r * I;
      for (int64_t i = 0; i < I; ++i)
        acc[i] = Op::combine(acc[i], static_cast<A>(row[i]));
    }
    T *dst = out + o * I;
    for (int64_t i = 0; i < I; ++i)
      dst[i] = storeAs<T>(Op::finish(acc[i], plan.count));
  }
}

template <typename T> struct SumOp {
  using Acc = WideAcc<T>;
  static Acc init() { return Acc(0); }
  static Acc combine(Acc a, Acc x) { return wideAdd(a, x); }
  static Acc finish(Acc a, int64_t) { return a; }
};

template <typename T> struct MeanOp {
  using Acc = WideAcc<T>;
  static Acc init() { return Acc(0); }
  static Acc combine(Acc a, Acc x) { return wideAdd(a, x); }
  static Acc finish(Acc a, int64_t n) {
    if constexpr (std::is_integral_v<Acc>)
      return n == 0 ? Acc(0) : a / n; // integer mean truncates (NumPy's)
    else
      return a / static_cast<double>(n); // NaN for an empty set
  }
};

template <typename T> struct ProdOp {
  using Acc = WideAcc<T>;
  static Acc init() { return Acc(1); }
  static Acc combine(Acc a, Acc x) { return wideMul(a, x); }
  static Acc finish(Acc a, int64_t) { return a; }
};

/// Max and min propagate NaN (as NumPy does); bools act as any / all.
template <typename T> struct MaxOp {
  using Acc = typename ComputeType<T>::type;
  static Acc init() {
    if constexpr (std::numeric_limits<Acc>::has_infinity)
      return -std::numeric_limits<Acc>::infinity();
    else
      return std::numeric_limits<Acc>::lowest();
  }
  static Acc combine(Acc a, Acc x) { return (x > a || isNaN(x)) ? x : a; }
  static Acc finish(Acc a, int64_t) { return a; }
};

template <typename T> struct MinOp {
  using Acc = typename ComputeType<T>::type;
  static Acc init() {
    if constexpr (std::numeric_limits<Acc>::has_infinity)
      return std::numeric_limits<Acc>::infinity();
    else
      return std::numeric_limits<Acc>::max();
  }
  static Acc combine(Acc a, Acc x) { return (x < a || isNaN(x)) ? x : a; }
  static Acc finish(Acc a, int64_t) { return a; }
};

/// The reduce_* kernel for one op template.
template <template <typename> class OpT>
Status reduceKernel(KernelContext &ctx, const char *op) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, op, 1));
  KILN_CHECK(ctx.numInputs() >= 1 && ctx.numInputs() <= 2, op,
             ": expected 2 operands (x, axes), got ", ctx.numInputs());
  const Tensor &x = ctx.input(0);
  int64_t rank = x.rank();
  std::vector<int64_t> axes;
  if (ctx.numInputs() == 2) {
    const Tensor &a = ctx.input(1);
    KILN_CHECK(!isFloatingPoint(a.dtype()) && a.dtype() != DType::Bool, op,
               ": operand 1 (axes) must be an i64 tensor, got ",
               a.typeString());
    KILN_CHECK(a.rank() <= 1, op, ": operand 1 (axes) must be 1-D, got ",
               a.typeString());
    axes = a.toIntVector();
  }
  bool keepdims = ctx.attrs.getInt("keepdims", 1) != 0;
  bool noop = ctx.attrs.getInt("noop_with_empty_axes", 0) != 0;

  if (axes.empty() && noop) {
    ctx.outputs[0] = x.clone();
    return Status::ok();
  }
  std::vector<bool> mask(rank, axes.empty());
  for (int64_t axis : axes) {
    auto norm = normalizeAxis(axis, rank);
    if (!norm)
      return norm.status().withContext(
          strCat(op, ": operand 1 (axes) of x ", x.typeString()));
    KILN_CHECK(!mask[*norm], op, ": axis ", axis, " is listed twice in axes");
    mask[*norm] = true;
  }

  Shape outShape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!mask[i])
      outShape.push_back(x.dim(i));
    else if (keepdims)
      outShape.push_back(1);
  }
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(x.dtype(), outShape);
  ReducePlan plan = planReduction(x.shape(), mask);
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> &&
                  !std::is_same_v<OpT<T>, MaxOp<T>> &&
                  !std::is_same_v<OpT<T>, MinOp<T>>) {
      // Not registered: sums and products of bools are not defined.
    } else {
      runReduction<T, OpT<T>>(plan, in.data<T>(), out.data<T>());
    }
  });
  ctx.outputs[0] = out;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// argmax / argmin
//===----------------------------------------------------------------------===//

/// True when `x` (at a later index) should replace `best`. NaN wins over
/// numbers (NumPy's rule); ties keep the first index unless `last`.
template <bool IsMax, typename C>
inline bool argBetter(C x, C best, bool last) {
  bool xn = isNaN(x), bn = isNaN(best);
  if (bn)
    return last && xn;
  if (xn)
    return true;
  if constexpr (IsMax)
    return last ? x >= best : x > best;
  else
    return last ? x <= best : x < best;
}

template <bool IsMax> Status argKernel(KernelContext &ctx, const char *op) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, op, 1));
  KILN_CHECK(ctx.numInputs() == 1, op, ": expected 1 operand, got ",
             ctx.numInputs());
  const Tensor &x = ctx.input(0);
  KILN_CHECK(x.rank() >= 1, op, ": x must have rank >= 1, got ",
             x.typeString());
  auto axisOr = normalizeAxis(ctx.attrs.getInt("axis", 0), x.rank());
  if (!axisOr)
    return axisOr.status().withContext(strCat(op, ": x ", x.typeString()));
  int64_t axis = *axisOr;
  bool keepdims = ctx.attrs.getInt("keepdims", 1) != 0;
  bool last = ctx.attrs.getInt("select_last_index", 0) != 0;
  KILN_CHECK(x.dim(axis) > 0, op, ": axis ", axis, " of x ", x.typeString(),
             " is empty; there is no element to select");

  Shape outShape;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (i != axis)
      outShape.push_back(x.dim(i));
    else if (keepdims)
      outShape.push_back(1);
  }
  int64_t outer, len, inner;
  splitAround(x.shape(), axis, outer, len, inner);
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(DType::I64, outShape);
  int64_t *dst = out.data<int64_t>();
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeType<T>::type;
    const T *src = in.data<T>();
    std::vector<C> best(inner);
    for (int64_t o = 0; o < outer; ++o) {
      const T *block = src + o * len * inner;
      int64_t *idx = dst + o * inner;
      for (int64_t i = 0; i < inner; ++i) {
        best[i] = static_cast<C>(block[i]);
        idx[i] = 0;
      }
      for (int64_t r = 1; r < len; ++r) {
        const T *row = block + r * inner;
        for (int64_t i = 0; i < inner; ++i) {
          C v = static_cast<C>(row[i]);
          if (argBetter<IsMax, C>(v, best[i], last)) {
            best[i] = v;
            idx[i] = r;
          }
        }
      }
    }
  });
  ctx.outputs[0] = out;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// cumsum / cumprod
//===----------------------------------------------------------------------===//

template <bool IsProd> Status scanKernel(KernelContext &ctx, const char *op) {
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, op, 1));
  KILN_CHECK(ctx.numInputs() == 2, op, ": expected 2 operands (x, axis), got ",
             ctx.numInputs());
  const Tensor &x = ctx.input(0);
  KILN_CHECK(x.rank() >= 1, op, ": x must have rank >= 1, got ",
             x.typeString());
  auto axisParam = readScalarParam(ctx.input(1), op, "axis", 1);
  if (!axisParam)
    return axisParam.status();
  auto axisOr = normalizeAxis(*axisParam, x.rank());
  if (!axisOr)
    return axisOr.status().withContext(strCat(op, ": x ", x.typeString()));
  bool exclusive = ctx.attrs.getInt("exclusive", 0) != 0;
  bool reverse = ctx.attrs.getInt("reverse", 0) != 0;

  int64_t outer, len, inner;
  splitAround(x.shape(), *axisOr, outer, len, inner);
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using A = WideAcc<T>;
      const T *src = in.data<T>();
      T *dst = out.data<T>();
      std::vector<A> acc(inner);
      for (int64_t o = 0; o < outer; ++o) {
        std::fill(acc.begin(), acc.end(), A(IsProd ? 1 : 0));
        for (int64_t step = 0; step < len; ++step) {
          int64_t r = reverse ? len - 1 - step : step;
          int64_t base = (o * len + r) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            A v = static_cast<A>(src[base + i]);
            if (exclusive)
              dst[base + i] = storeAs<T>(acc[i]);
            acc[i] = IsProd ? wideMul(acc[i], v) : wideAdd(acc[i], v);
            if (!exclusive)
              dst[base + i] = storeAs<T>(acc[i]);
          }
        }
      }
    }
  });
  ctx.outputs[0] = out;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// topk
//===----------------------------------------------------------------------===//

Status topkKernel(KernelContext &ctx) {
  const char *op = "topk";
  KILN_RETURN_IF_ERROR(checkOutputs(ctx, op, 2));
  KILN_CHECK(ctx.numInputs() == 2, op, ": expected 2 operands (x, k), got ",
             ctx.numInputs());
  const Tensor &x = ctx.input(0);
  KILN_CHECK(x.rank() >= 1, op, ": x must have rank >= 1, got ",
             x.typeString());
  auto kOr = readScalarParam(ctx.input(1), op, "k", 1);
  if (!kOr)
    return kOr.status();
  int64_t k = *kOr;
  auto axisOr = normalizeAxis(ctx.attrs.getInt("axis", -1), x.rank());
  if (!axisOr)
    return axisOr.status().withContext(strCat(op, ": x ", x.typeString()));
  int64_t axis = *axisOr;
  bool largest = ctx.attrs.getInt("largest", 1) != 0;
  KILN_CHECK(k >= 0 && k <= x.dim(axis), op, ": k = ", k, " must be in [0, ",
             x.dim(axis), "] (dimension ", axis, " of x ", x.typeString(), ")");

  Shape outShape = x.shape();
  outShape[axis] = k;
  int64_t outer, len, inner;
  splitAround(x.shape(), axis, outer, len, inner);
  Tensor in = x.contiguous();
  Tensor values = Tensor::empty(x.dtype(), outShape);
  Tensor indices = Tensor::empty(DType::I64, outShape);
  int64_t *idxOut = indices.data<int64_t>();
  visitDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeType<T>::type;
    const T *src = in.data<T>();
    T *valOut = values.data<T>();
    std::vector<C> line(len);
    std::vector<int64_t> order(len);
    // NaN ranks above every number; ties go to the lower index.
    auto before = [&](int64_t a, int64_t b) {
      C va = line[a], vb = line[b];
      bool na = isNaN(va), nb = isNaN(vb);
      if (na != nb)
        return largest ? na : nb;
      if (!na && va != vb)
        return largest ? va > vb : va < vb;
      return a < b;
    };
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T *base = src + o * len * inner + i;
        for (int64_t r = 0; r < len; ++r)
          line[r] = static_cast<C>(base[r * inner]);
        std::iota(order.begin(), order.end(), int64_t(0));
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          before);
        int64_t outBase = o * k * inner + i;
        for (int64_t j = 0; j < k; ++j) {
          valOut[outBase + j * inner] = base[order[j] * inner];
          idxOut[outBase + j * inner] = order[j];
        }
      }
    }
  });
  ctx.outputs[0] = values;
  ctx.outputs[1] = indices;
  return Status::ok();
}

} // namespace

void registerReductionKernels(Dispatcher &d) {
  const Device cpu = Device::CPU;
  d.add("reduce_sum", cpu, kNumericTypes, [](KernelContext &ctx) {
    return reduceKernel<SumOp>(ctx, "reduce_sum");
  });
  d.add("reduce_mean", cpu, kNumericTypes, [](KernelContext &ctx) {
    return reduceKernel<MeanOp>(ctx, "reduce_mean");
  });
  d.add("reduce_prod", cpu, kNumericTypes, [](KernelContext &ctx) {
    return reduceKernel<ProdOp>(ctx, "reduce_prod");
  });
  d.add("reduce_max", cpu, kAllTypes, [](KernelContext &ctx) {
    return reduceKernel<MaxOp>(ctx, "reduce_max");
  });
  d.add("reduce_min", cpu, kAllTypes, [](KernelContext &ctx) {
    return reduceKernel<MinOp>(ctx, "reduce_min");
  });
  d.add("argmax", cpu, kAllTypes,
        [](KernelContext &ctx) { return argKernel<true>(ctx, "argmax"); });
  d.add("argmin", cpu, kAllTypes,
        [](KernelContext &ctx) { return argKernel<false>(ctx, "argmin"); });
  d.add("cumsum", cpu, kNumericTypes,
        [](KernelContext &ctx) { return scanKernel<false>(ctx, "cumsum"); });
  d.add("cumprod", cpu, kNumericTypes,
        [](KernelContext &ctx) { return scanKernel<true>(ctx, "cumprod"); });
  d.add("topk", cpu, kNumericTypes, topkKernel);
}

} // namespace kiln
