//===- Elementwise.h - Machinery of the elementwise kernels ----*- C++ -*-===//
//
// This file declares the templates shared by the elementwise kernel files:
// dtype categories (which C++ element types an op is instantiated for), the
// broadcasting binary kernel, the unary kernel, and the registration helpers
// that instantiate one kernel per dtype of a category. Ops are written as
// generic lambdas over the compute type (float for f16/bf16); a lambda that
// returns bool makes a bool-valued op (comparisons, is_nan).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_KERNELS_ELEMENTWISE_H
#define KILN_RUNTIME_KERNELS_ELEMENTWISE_H

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <type_traits>

namespace kiln {
namespace elementwise {

/// Which element types an op supports.
enum class Cat { All, Numeric, Float, Int, Bool };

/// True for the types stored as bits and computed in float (f16, bf16 and
/// the float8 formats).
template <typename T> constexpr bool isHalfLike() {
  return std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
         (std::is_same_v<typename ComputeType<T>::type, float> &&
          !std::is_same_v<T, float>);
}
template <typename T> constexpr bool isFloatLike() {
  return std::is_floating_point_v<T> || isHalfLike<T>();
}

/// True when the C++ element type T belongs to category C. The
/// storage-only types (float8, sub-byte integers) belong to All only.
template <typename T, Cat C> constexpr bool inCat() {
  constexpr bool isBool = std::is_same_v<T, bool>;
  constexpr bool isInt = std::is_integral_v<T> && !isBool;
  constexpr bool storageOnly = IsStorageOnly<T>::value;
  switch (C) {
  case Cat::All:
    return true;
  case Cat::Numeric:
    return !isBool && !storageOnly;
  case Cat::Float:
    return isFloatLike<T>() && !storageOnly;
  case Cat::Int:
    return isInt;
  case Cat::Bool:
    return isBool;
  }
  return false;
}

/// Converts a computed value back to the storage type.
template <typename T, typename V> inline T storeAs(V v) {
  using CT = typename ComputeType<T>::type;
  if constexpr (std::is_same_v<T, bool>)
    return static_cast<bool>(v);
  else if constexpr (IsStorageOnly<T>::value)
    return T(v);
  else if constexpr (isHalfLike<T>())
    return T(static_cast<float>(v));
  else
    return static_cast<T>(static_cast<CT>(v));
}

/// Checks the input count of a kernel.
inline Status checkArity(const KernelContext &ctx, const char *op, size_t n) {
  KILN_CHECK(ctx.numInputs() == n, "op '", op, "' expects ", n,
             " operand(s) but got ", ctx.numInputs());
  return Status::ok();
}

/// Assigns result 0, growing the outputs when the caller left them empty.
inline void setOutput(KernelContext &ctx, Tensor t) {
  if (ctx.outputs.empty())
    ctx.outputs.resize(1);
  ctx.outputs[0] = std::move(t);
}

/// out[i] = fn(a[i], b[i]) with NumPy broadcasting; T is the operand type,
/// Fn maps two compute values to a compute value or bool.
template <typename T, typename Fn>
Status binaryKernel(KernelContext &ctx, const char *op, Fn fn) {
  using CT = typename ComputeType<T>::type;
  using CR = decltype(fn(CT{}, CT{}));
  using R = std::conditional_t<std::is_same_v<CR, bool>, bool, T>;
  KILN_RETURN_IF_ERROR(checkArity(ctx, op, 2));
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  KILN_CHECK(a.dtype() == b.dtype(), "op '", op,
             "': operands must have the same dtype but got ", a.typeString(),
             " and ", b.typeString());
  Expected<Shape> shape = broadcastShapes(a.shape(), b.shape());
  if (!shape)
    return shape.status().withContext(strCat("op '", op, "'"));
  Tensor out = Tensor::empty(DTypeOf<R>::value, *shape);
  R *o = out.data<R>();
  int64_t n = out.numel();
  bool ac = a.isContiguous(), bc = b.isContiguous();
  if (ac && bc && a.numel() == n && b.numel() == n) {
    const T *pa = a.data<T>(), *pb = b.data<T>();
    for (int64_t i = 0; i < n; ++i)
      o[i] = storeAs<R>(fn(static_cast<CT>(pa[i]), static_cast<CT>(pb[i])));
  } else if (ac && a.numel() == n && b.numel() == 1) {
    const T *pa = a.data<T>();
    CT vb = static_cast<CT>(*b.data<T>());
    for (int64_t i = 0; i < n; ++i)
      o[i] = storeAs<R>(fn(static_cast<CT>(pa[i]), vb));
  } else if (bc && b.numel() == n && a.numel() == 1) {
    const T *pb = b.data<T>();
    CT va = static_cast<CT>(*a.data<T>());
    for (int64_t i = 0; i < n; ++i)
      o[i] = storeAs<R>(fn(va, static_cast<CT>(pb[i])));
  } else {
    const Shape strides[2] = {broadcastStrides(a, *shape),
                              broadcastStrides(b, *shape)};
    const int64_t start[2] = {a.offset(), b.offset()};
    const T *pa = storageBase<T>(a), *pb = storageBase<T>(b);
    int64_t i = 0;
    forEachOffset(*shape, strides, start, [&](const int64_t(&off)[2]) {
      o[i++] = storeAs<R>(
          fn(static_cast<CT>(pa[off[0]]), static_cast<CT>(pb[off[1]])));
    });
  }
  setOutput(ctx, std::move(out));
  return Status::ok();
}

/// out[i] = fn(x[i]); the result dtype is bool when fn returns bool.
template <typename T, typename Fn>
Status unaryKernel(KernelContext &ctx, const char *op, Fn fn) {
  using CT = typename ComputeType<T>::type;
  using CR = decltype(fn(CT{}));
  using R = std::conditional_t<std::is_same_v<CR, bool>, bool, T>;
  KILN_RETURN_IF_ERROR(checkArity(ctx, op, 1));
  Tensor x = ctx.input(0).contiguous();
  Tensor out = Tensor::empty(DTypeOf<R>::value, x.shape());
  const T *px = x.data<T>();
  R *o = out.data<R>();
  int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i)
    o[i] = storeAs<R>(fn(static_cast<CT>(px[i])));
  setOutput(ctx, std::move(out));
  return Status::ok();
}

/// Registers a binary op for every dtype of category C. `maker(attrs,
/// status)` returns the generic scalar lambda; it may set `status` to an
/// error for bad attribute values.
template <Cat C, typename Maker>
void addBinaryWithAttrs(Dispatcher &d, const char *name, Maker maker) {
  for (DType t : kAllTypes)
    visitDType(t, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (inCat<T, C>()) {
        d.add(name, Device::CPU, t, [name, maker](KernelContext &ctx) {
          Status st;
          auto fn = maker(ctx.attrs, st);
          if (!st)
            return st.withContext(strCat("op '", name, "'"));
          return binaryKernel<T>(ctx, name, fn);
        });
      }
    });
}

template <Cat C, typename Fn>
void addBinary(Dispatcher &d, const char *name, Fn fn) {
  addBinaryWithAttrs<C>(d, name,
                        [fn](const Attributes &, Status &) { return fn; });
}

/// Registers a unary op for every dtype of category C (see
/// addBinaryWithAttrs for `maker`).
template <Cat C, typename Maker>
void addUnaryWithAttrs(Dispatcher &d, const char *name, Maker maker) {
  for (DType t : kAllTypes)
    visitDType(t, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (inCat<T, C>()) {
        d.add(name, Device::CPU, t, [name, maker](KernelContext &ctx) {
          Status st;
          auto fn = maker(ctx.attrs, st);
          if (!st)
            return st.withContext(strCat("op '", name, "'"));
          return unaryKernel<T>(ctx, name, fn);
        });
      }
    });
}

template <Cat C, typename Fn>
void addUnary(Dispatcher &d, const char *name, Fn fn) {
  addUnaryWithAttrs<C>(d, name,
                       [fn](const Attributes &, Status &) { return fn; });
}

/// Registration of the unary ops and cast (ElementwiseUnary.cpp).
void registerUnaryKernels(Dispatcher &d);
/// Registration of the activation ops (ElementwiseActivation.cpp).
void registerActivationKernels(Dispatcher &d);

} // namespace elementwise
} // namespace kiln

#endif // KILN_RUNTIME_KERNELS_ELEMENTWISE_H
