//===- ElementwiseBinary.cpp - Binary, comparison and where kernels -------===//
//
// This file implements the broadcasting binary ops (arithmetic, max/min with
// NaN propagation, mod in both ONNX modes, bitwise and logical ops, bit
// shifts, prelu), the comparisons (bool results) and `where`, and the family
// entry point registerElementwiseKernels. Integer arithmetic wraps (computed
// in the unsigned type), integer division truncates toward zero, and
// division or modulo by zero yields 0 instead of trapping.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

#include <cctype>
#include <cmath>
#include <limits>

namespace kiln {

using namespace elementwise;

namespace {

template <typename C> constexpr bool isIntegral() {
  return std::is_integral_v<C> && !std::is_same_v<C, bool>;
}

template <typename C> C wrapAdd(C a, C b) {
  if constexpr (isIntegral<C>()) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(
        static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename C> C wrapSub(C a, C b) {
  if constexpr (isIntegral<C>()) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(
        static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}

template <typename C> C wrapMul(C a, C b) {
  if constexpr (isIntegral<C>()) {
    using U = std::make_unsigned_t<C>;
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<C>(static_cast<U>(static_cast<W>(static_cast<U>(a)) *
                                         static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

template <typename C> C divide(C a, C b) {
  if constexpr (isIntegral<C>()) {
    if (b == 0)
      return 0;
    if constexpr (std::is_signed_v<C>)
      if (b == -1)
        return wrapSub<C>(0, a); // Avoids the trap on min / -1.
    return static_cast<C>(a / b);
  } else {
    return a / b;
  }
}

template <typename C> C power(C a, C b) {
  if constexpr (isIntegral<C>()) {
    if (b < 0) {
      // Only |a| == 1 gives a non-zero integer result.
      if (a == 1)
        return 1;
      if constexpr (std::is_signed_v<C>)
        if (a == -1)
          return (b % 2) ? C(-1) : C(1);
      return 0;
    }
    C result = 1, base = a;
    for (C e = b; e > 0; e = static_cast<C>(e >> 1)) {
      if (e & 1)
        result = wrapMul(result, base);
      base = wrapMul(base, base);
    }
    return result;
  } else {
    return std::pow(a, b);
  }
}

/// ONNX Mod: fmod=1 is C fmod (sign of the dividend); fmod=0 gives the
/// result the sign of the divisor (Python's %).
template <typename C> C modulo(C a, C b, bool cFmod) {
  if constexpr (isIntegral<C>()) {
    if (b == 0)
      return 0;
    if constexpr (std::is_signed_v<C>)
      if (b == -1)
        return 0;
    C r = static_cast<C>(a % b);
    if constexpr (std::is_signed_v<C>)
      if (!cFmod && r != 0 && ((r < 0) != (b < 0)))
        r = static_cast<C>(r + b);
    return r;
  } else {
    C r = std::fmod(a, b);
    if (!cFmod && r != 0 && ((r < 0) != (b < 0)))
      r += b;
    return r;
  }
}

template <typename C> C maxOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<C>::quiet_NaN();
  return a < b ? b : a;
}

template <typename C> C minOf(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<C>::quiet_NaN();
  return b < a ? b : a;
}

template <typename C> C shift(C a, C b, bool left) {
  constexpr int bits = static_cast<int>(sizeof(C) * 8);
  using U = std::make_unsigned_t<C>;
  if (b < 0 || b >= bits) {
    if (!left && std::is_signed_v<C> && a < 0)
      return C(-1);
    return 0;
  }
  // Shift in at least `unsigned`: a narrower U would promote to int, where
  // a shift into the sign bit is undefined.
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  if (left)
    return static_cast<C>(
        static_cast<U>(static_cast<W>(static_cast<U>(a)) << b));
  return static_cast<C>(a >> b); // Arithmetic for signed types.
}

/// `where(cond, x, y)` for the value type T.
template <typename T> Status whereKernel(KernelContext &ctx) {
  const Tensor &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  Expected<Shape> s1 = broadcastShapes(c.shape(), x.shape());
  if (!s1)
    return s1.status().withContext("op 'where'");
  Expected<Shape> shape = broadcastShapes(*s1, y.shape());
  if (!shape)
    return shape.status().withContext("op 'where'");
  Tensor out = Tensor::empty(x.dtype(), *shape);
  T *o = out.data<T>();
  int64_t n = out.numel();
  if (c.isContiguous() && x.isContiguous() && y.isContiguous() &&
      c.numel() == n && x.numel() == n && y.numel() == n) {
    const bool *pc = c.data<bool>();
    const T *px = x.data<T>(), *py = y.data<T>();
    for (int64_t i = 0; i < n; ++i)
      o[i] = pc[i] ? px[i] : py[i];
  } else {
    const Shape strides[3] = {broadcastStrides(c, *shape),
                              broadcastStrides(x, *shape),
                              broadcastStrides(y, *shape)};
    const int64_t start[3] = {c.offset(), x.offset(), y.offset()};
    const bool *pc = storageBase<bool>(c);
    const T *px = storageBase<T>(x), *py = storageBase<T>(y);
    int64_t i = 0;
    forEachOffset(*shape, strides, start, [&](const int64_t(&off)[3]) {
      o[i++] = pc[off[0]] ? px[off[1]] : py[off[2]];
    });
  }
  setOutput(ctx, std::move(out));
  return Status::ok();
}

Status where(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "where", 3));
  const Tensor &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  KILN_CHECK(c.dtype() == DType::Bool,
             "op 'where': the condition must be bool but is ", c.typeString());
  KILN_CHECK(x.dtype() == y.dtype(),
             "op 'where': x and y must have the same dtype but got ",
             x.typeString(), " and ", y.typeString());
  return visitDType(x.dtype(),
                    [&](auto tag) { return whereKernel<decltype(tag)>(ctx); });
}

} // namespace

void registerElementwiseKernels(Dispatcher &d) {
  // Arithmetic.
  addBinary<Cat::Numeric>(d, "add",
                          [](auto a, auto b) { return wrapAdd(a, b); });
  addBinary<Cat::Numeric>(d, "sub",
                          [](auto a, auto b) { return wrapSub(a, b); });
  addBinary<Cat::Numeric>(d, "mul",
                          [](auto a, auto b) { return wrapMul(a, b); });
  addBinary<Cat::Numeric>(d, "div",
                          [](auto a, auto b) { return divide(a, b); });
  addBinary<Cat::Numeric>(d, "pow", [](auto a, auto b) { return power(a, b); });
  addBinary<Cat::Numeric>(d, "max", [](auto a, auto b) { return maxOf(a, b); });
  addBinary<Cat::Numeric>(d, "min", [](auto a, auto b) { return minOf(a, b); });
  addBinaryWithAttrs<Cat::Numeric>(
      d, "mod", [](const Attributes &attrs, Status &st) {
        int64_t f = attrs.getInt("fmod", 0);
        if (f != 0 && f != 1)
          st = Status::error(strCat("attribute fmod must be 0 or 1, got ", f));
        bool cFmod = f == 1;
        return [cFmod](auto a, auto b) { return modulo(a, b, cFmod); };
      });
  addBinary<Cat::Numeric>(d, "prelu", [](auto x, auto slope) {
    using C = decltype(x);
    return x < C(0) ? wrapMul(slope, x) : x;
  });

  // Bitwise and logical.
  addBinary<Cat::Int>(d, "bitwise_and", [](auto a, auto b) {
    return static_cast<decltype(a)>(a & b);
  });
  addBinary<Cat::Int>(d, "bitwise_or", [](auto a, auto b) {
    return static_cast<decltype(a)>(a | b);
  });
  addBinary<Cat::Int>(d, "bitwise_xor", [](auto a, auto b) {
    return static_cast<decltype(a)>(a ^ b);
  });
  addBinaryWithAttrs<Cat::Int>(
      d, "bit_shift", [](const Attributes &attrs, Status &st) {
        // The contract says "left"/"right"; ONNX spells them in capitals.
        std::string dir = attrs.getString("direction", "");
        for (char &c : dir)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (dir != "left" && dir != "right")
          st = Status::error(strCat("attribute direction must be \"left\" or "
                                    "\"right\", got \"",
                                    dir, "\""));
        bool left = dir == "left";
        return [left](auto a, auto b) { return shift(a, b, left); };
      });
  addBinary<Cat::Bool>(d, "and", [](bool a, bool b) { return a && b; });
  addBinary<Cat::Bool>(d, "or", [](bool a, bool b) { return a || b; });
  addBinary<Cat::Bool>(d, "xor", [](bool a, bool b) { return a != b; });

  // Comparisons.
  addBinary<Cat::All>(d, "equal", [](auto a, auto b) { return a == b; });
  addBinary<Cat::All>(d, "less", [](auto a, auto b) { return a < b; });
  addBinary<Cat::All>(d, "less_equal", [](auto a, auto b) { return a <= b; });
  addBinary<Cat::All>(d, "greater", [](auto a, auto b) { return a > b; });
  addBinary<Cat::All>(d, "greater_equal",
                      [](auto a, auto b) { return a >= b; });

  // Selection: keyed by the condition's dtype (bool).
  d.add("where", Device::CPU, DType::Bool, where);

  registerUnaryKernels(d);
  registerActivationKernels(d);
}

} // namespace kiln
