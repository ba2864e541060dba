//===- ElementwiseActivation.cpp - Activation function kernels ------------===//
//
// This file implements the activation ops of the elementwise family, with
// ONNX semantics and attribute defaults: sigmoid, tanh, softplus, softsign,
// mish, hard_swish, leaky_relu, elu, celu, selu, hard_sigmoid,
// thresholded_relu, shrink, gelu (erf and tanh forms) and swish. Float
// kernels compute in the compute type (f32 for f16/bf16).
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

#include <cmath>

namespace kiln {
namespace elementwise {

namespace {

template <typename C> C sigmoid(C x) {
  if (x >= C(0))
    return C(1) / (C(1) + std::exp(-x));
  C e = std::exp(x);
  return e / (C(1) + e);
}

/// log(1 + exp(x)) without overflow.
template <typename C> C softplus(C x) {
  return (x > C(0) ? x : C(0)) + std::log1p(std::exp(-std::fabs(x)));
}

template <typename C> C clamp01(C v) {
  if (std::isnan(v))
    return v;
  return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
}

} // namespace

void registerActivationKernels(Dispatcher &d) {
  addUnary<Cat::Float>(d, "sigmoid", [](auto x) { return sigmoid(x); });
  addUnary<Cat::Float>(d, "tanh", [](auto x) { return std::tanh(x); });
  addUnary<Cat::Float>(d, "softplus", [](auto x) { return softplus(x); });
  addUnary<Cat::Float>(d, "softsign", [](auto x) {
    using C = decltype(x);
    return x / (C(1) + std::fabs(x));
  });
  addUnary<Cat::Float>(d, "mish",
                       [](auto x) { return x * std::tanh(softplus(x)); });
  addUnary<Cat::Float>(d, "hard_swish", [](auto x) {
    using C = decltype(x);
    return x * clamp01(x / C(6) + C(0.5));
  });

  addUnaryWithAttrs<Cat::Float>(d, "leaky_relu",
                                [](const Attributes &attrs, Status &) {
                                  double alpha = attrs.getFloat("alpha", 0.01);
                                  return [alpha](auto x) {
                                    using C = decltype(x);
                                    return x < C(0) ? C(alpha) * x : x;
                                  };
                                });
  addUnaryWithAttrs<Cat::Float>(
      d, "elu", [](const Attributes &attrs, Status &) {
        double alpha = attrs.getFloat("alpha", 1.0);
        return [alpha](auto x) {
          using C = decltype(x);
          return x < C(0) ? C(alpha) * (std::exp(x) - C(1)) : x;
        };
      });
  addUnaryWithAttrs<Cat::Float>(
      d, "celu", [](const Attributes &attrs, Status &st) {
        double alpha = attrs.getFloat("alpha", 1.0);
        if (alpha == 0)
          st = Status::error("attribute alpha must not be 0");
        return [alpha](auto x) {
          using C = decltype(x);
          C a = C(alpha);
          C neg = a * (std::exp(x / a) - C(1));
          return (x > C(0) ? x : C(0)) + (neg < C(0) ? neg : C(0));
        };
      });
  addUnaryWithAttrs<Cat::Float>(
      d, "selu", [](const Attributes &attrs, Status &) {
        double alpha = attrs.getFloat("alpha", 1.67326319217681884765625);
        double gamma = attrs.getFloat("gamma", 1.05070102214813232421875);
        return [alpha, gamma](auto x) {
          using C = decltype(x);
          return x <= C(0) ? C(gamma) * (C(alpha) * std::exp(x) - C(alpha))
                           : C(gamma) * x;
        };
      });
  addUnaryWithAttrs<Cat::Float>(d, "hard_sigmoid",
                                [](const Attributes &attrs, Status &) {
                                  double alpha = attrs.getFloat("alpha", 0.2);
                                  double beta = attrs.getFloat("beta", 0.5);
                                  return [alpha, beta](auto x) {
                                    using C = decltype(x);
                                    return clamp01(C(alpha) * x + C(beta));
                                  };
                                });
  addUnaryWithAttrs<Cat::Float>(d, "thresholded_relu",
                                [](const Attributes &attrs, Status &) {
                                  double alpha = attrs.getFloat("alpha", 1.0);
                                  return [alpha](auto x) {
                                    using C = decltype(x);
                                    return x > C(alpha) ? x : C(0);
                                  };
                                });
  addUnaryWithAttrs<Cat::Numeric>(d, "shrink",
                                  [](const Attributes &attrs, Status &) {
                                    double bias = attrs.getFloat("bias", 0.0);
                                    double lambd = attrs.getFloat("lambd", 0.5);
                                    return [bias, lambd](auto x) {
                                      using C = decltype(x);
                                      double v = static_cast<double>(x);
                                      if (v < -lambd)
                                        return static_cast<C>(v + bias);
                                      if (v > lambd)
                                        return static_cast<C>(v - bias);
                                      return C(0);
                                    };
                                  });
  addUnaryWithAttrs<Cat::Float>(
      d, "gelu", [](const Attributes &attrs, Status &st) {
        std::string approx = attrs.getString("approximate", "none");
        if (approx != "none" && approx != "tanh")
          st = Status::error(strCat("attribute approximate must be \"none\" "
                                    "or \"tanh\", got \"",
                                    approx, "\""));
        bool useTanh = approx == "tanh";
        return [useTanh](auto x) {
          using C = decltype(x);
          if (useTanh) {
            const C k = C(0.7978845608028654); // sqrt(2/pi)
            return C(0.5) * x *
                   (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
          }
          return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));
        };
      });
  addUnaryWithAttrs<Cat::Float>(d, "swish",
                                [](const Attributes &attrs, Status &) {
                                  double alpha = attrs.getFloat("alpha", 1.0);
                                  return [alpha](auto x) {
                                    using C = decltype(x);
                                    return x * sigmoid(C(alpha) * x);
                                  };
                                });
}

} // namespace elementwise
} // namespace kiln
