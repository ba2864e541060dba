//===- ElementwiseUnary.cpp - Unary math, logic and cast kernels ----------===//
//
// This file implements the unary elementwise ops that are not activations:
// neg, abs, sign, the float math functions (exp ... erf), round (half to
// even), not, bitwise_not, relu, is_nan, is_inf, and cast (ONNX Cast
// semantics through Tensor::to: float to int truncates, x to bool is x != 0,
// float to f16/bf16 rounds to nearest even).
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

#include <cmath>

namespace kiln {
namespace elementwise {

namespace {

template <typename C> C negate(C x) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(U(0) - static_cast<U>(x)));
  } else {
    return -x;
  }
}

Status castKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "cast", 1));
  KILN_CHECK(ctx.attrs.has("to"), "op 'cast': missing attribute 'to'");
  DType to = ctx.attrs.getDType("to", DType::F32);
  setOutput(ctx, ctx.input(0).to(to));
  return Status::ok();
}

} // namespace

void registerUnaryKernels(Dispatcher &d) {
  addUnary<Cat::Numeric>(d, "neg", [](auto x) { return negate(x); });
  addUnary<Cat::Numeric>(d, "abs", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return x < C(0) ? negate(x) : x;
  });
  addUnary<Cat::Numeric>(d, "sign", [](auto x) {
    using C = decltype(x);
    return x > C(0) ? C(1) : (x < C(0) ? C(-1) : x);
  });
  addUnary<Cat::Numeric>(d, "relu", [](auto x) {
    using C = decltype(x);
    return x < C(0) ? C(0) : x;
  });

#define KILN_FLOAT_UNARY(NAME, EXPR)                                           \
  addUnary<Cat::Float>(d, NAME, [](auto x) {                                   \
    using C = decltype(x);                                                     \
    (void)sizeof(C);                                                           \
    return static_cast<C>(EXPR);                                               \
  })
  KILN_FLOAT_UNARY("exp", std::exp(x));
  KILN_FLOAT_UNARY("log", std::log(x));
  KILN_FLOAT_UNARY("sqrt", std::sqrt(x));
  KILN_FLOAT_UNARY("reciprocal", C(1) / x);
  KILN_FLOAT_UNARY("floor", std::floor(x));
  KILN_FLOAT_UNARY("ceil", std::ceil(x));
  KILN_FLOAT_UNARY("round", std::nearbyint(x)); // Half to even.
  KILN_FLOAT_UNARY("sin", std::sin(x));
  KILN_FLOAT_UNARY("cos", std::cos(x));
  KILN_FLOAT_UNARY("tan", std::tan(x));
  KILN_FLOAT_UNARY("asin", std::asin(x));
  KILN_FLOAT_UNARY("acos", std::acos(x));
  KILN_FLOAT_UNARY("atan", std::atan(x));
  KILN_FLOAT_UNARY("sinh", std::sinh(x));
  KILN_FLOAT_UNARY("cosh", std::cosh(x));
  KILN_FLOAT_UNARY("asinh", std::asinh(x));
  KILN_FLOAT_UNARY("acosh", std::acosh(x));
  KILN_FLOAT_UNARY("atanh", std::atanh(x));
  KILN_FLOAT_UNARY("erf", std::erf(x));
#undef KILN_FLOAT_UNARY

  addUnary<Cat::Bool>(d, "not", [](bool x) { return !x; });
  addUnary<Cat::Int>(d, "bitwise_not",
                     [](auto x) { return static_cast<decltype(x)>(~x); });

  addUnary<Cat::Float>(d, "is_nan",
                       [](auto x) -> bool { return std::isnan(x); });
  addUnaryWithAttrs<Cat::Float>(
      d, "is_inf", [](const Attributes &attrs, Status &) {
        bool pos = attrs.getInt("detect_positive", 1) != 0;
        bool neg = attrs.getInt("detect_negative", 1) != 0;
        return [pos, neg](auto x) -> bool {
          using C = decltype(x);
          return std::isinf(x) && ((pos && x > C(0)) || (neg && x < C(0)));
        };
      });

  d.add("cast", Device::CPU, kAllTypes, castKernel);
}

} // namespace elementwise
} // namespace kiln
