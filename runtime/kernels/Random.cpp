//===- Random.cpp - The reference random-number kernels -------------------===//
//
// This file implements the CPU reference kernels of kiln.random_uniform,
// kiln.random_normal and kiln.multinomial. Draws come from a counter-based
// generator: draw i of a seed is SplitMix64 of (SplitMix64(seed) + i), so a
// value depends only on the seed and its position (never on threads, run
// count or the other draws), which makes the ops pure functions that fold,
// CSE and compile like any other.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/SizeLimits.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln {

namespace {

uint64_t splitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The generator of one op: draw i is a pure function of (seed, i).
class CounterRng {
public:
  explicit CounterRng(int64_t seed)
      : key_(splitMix64(static_cast<uint64_t>(seed))) {}
  /// Draw i as a multiple of 2^-bits in [0, 1) (bits <= 53): exact in any
  /// float type with a mantissa of `bits` bits.
  double uniform(uint64_t i, int bits = 53) const {
    return static_cast<double>(splitMix64(key_ + i) >> (64 - bits)) *
           std::ldexp(1.0, -bits);
  }

private:
  uint64_t key_;
};

/// The mantissa bits (with the implicit one) of a float dtype.
int mantissaBits(DType t) {
  switch (t) {
  case DType::F16:
    return 11;
  case DType::BF16:
    return 8;
  case DType::F32:
    return 24;
  default:
    return 53;
  }
}

/// The result shape of a draw (its shape operand) and dtype attribute.
Expected<Tensor> drawResult(const KernelContext &ctx, const char *op) {
  KILN_CHECK(ctx.numInputs() == 1, op, ": expected 1 operand, got ",
             ctx.numInputs());
  Tensor shapeT = ctx.input(0).to(DType::I64);
  KILN_CHECK(shapeT.rank() <= 1, op, ": the shape operand must be 1-D, got ",
             ctx.input(0).typeString());
  Shape shape(shapeT.data<int64_t>(), shapeT.data<int64_t>() + shapeT.numel());
  int64_t count = 1;
  for (int64_t d : shape) {
    KILN_CHECK(d >= 0 && d <= kMaxTensorElements, op, ": bad dim ", d);
    count = saturatingMul(count, d);
  }
  KILN_CHECK(count <= kMaxTensorElements, op, ": ", count,
             " elements is more than the limit");
  DType dtype = ctx.attrs.getDType("dtype", DType::F32);
  KILN_CHECK(isFloatingPoint(dtype), op, ": dtype must be a float type, got ",
             dtypeName(dtype));
  return Tensor::empty(DType::F64, shape);
}

Status randomUniformKernel(KernelContext &ctx) {
  Expected<Tensor> out = drawResult(ctx, "random_uniform");
  KILN_RETURN_IF_ERROR(out.status());
  Tensor t = out.take();
  DType dtype = ctx.attrs.getDType("dtype", DType::F32);
  const double low = ctx.attrs.getFloat("low", 0.0),
               high = ctx.attrs.getFloat("high", 1.0);
  CounterRng rng(ctx.attrs.getInt("seed", 0));
  const int bits = mantissaBits(dtype);
  double *p = t.data<double>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    p[i] = low + (high - low) * rng.uniform(static_cast<uint64_t>(i), bits);
  ctx.outputs.resize(1);
  ctx.outputs[0] = t.to(dtype);
  return Status::ok();
}

Status randomNormalKernel(KernelContext &ctx) {
  Expected<Tensor> out = drawResult(ctx, "random_normal");
  KILN_RETURN_IF_ERROR(out.status());
  Tensor t = out.take();
  DType dtype = ctx.attrs.getDType("dtype", DType::F32);
  const double mean = ctx.attrs.getFloat("mean", 0.0),
               scale = ctx.attrs.getFloat("scale", 1.0);
  CounterRng rng(ctx.attrs.getInt("seed", 0));
  const double twoPi = 2.0 * std::acos(-1.0);
  double *p = t.data<double>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    // Box-Muller of draws 2i and 2i+1; 1 - u is in (0, 1], so the log is
    // finite.
    uint64_t k = 2 * static_cast<uint64_t>(i);
    double u1 = 1.0 - rng.uniform(k), u2 = rng.uniform(k + 1);
    p[i] = mean + scale * std::sqrt(-2.0 * std::log(u1)) * std::cos(twoPi * u2);
  }
  ctx.outputs.resize(1);
  ctx.outputs[0] = t.to(dtype);
  return Status::ok();
}

Status multinomialKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 1, "multinomial: expected 1 operand, got ",
             ctx.numInputs());
  const Tensor &xIn = ctx.input(0);
  KILN_CHECK(xIn.rank() == 2 && xIn.dim(1) >= 1,
             "multinomial: the operand must be [batch, classes] with at "
             "least one class, got ",
             xIn.typeString());
  const int64_t samples = ctx.attrs.getInt("sample_size", 1);
  DType dtype = ctx.attrs.getDType("dtype", DType::I32);
  KILN_CHECK(samples >= 1 && samples <= kMaxTensorElements &&
                 (dtype == DType::I32 || dtype == DType::I64),
             "multinomial: bad sample_size ", samples, " or dtype ",
             dtypeName(dtype));
  const int64_t batch = xIn.dim(0), classes = xIn.dim(1);
  KILN_CHECK(saturatingMul(batch, samples) <= kMaxTensorElements,
             "multinomial: the result is over the size limit");
  Tensor x = xIn.to(DType::F64);
  Tensor out = Tensor::empty(DType::I64, {batch, samples});
  CounterRng rng(ctx.attrs.getInt("seed", 0));
  std::vector<double> cdf(classes);
  const double *xp = x.data<double>();
  int64_t *op = out.data<int64_t>();
  for (int64_t b = 0; b < batch; ++b) {
    const double *row = xp + b * classes;
    double top = *std::max_element(row, row + classes);
    double total = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      double e = std::isfinite(top) ? std::exp(row[c] - top) : 0.0;
      total += std::isnan(e) ? 0.0 : e;
      cdf[c] = total;
    }
    for (int64_t s = 0; s < samples; ++s) {
      double u = rng.uniform(static_cast<uint64_t>(b * samples + s)) * total;
      // The first class whose cumulative mass exceeds u; the last class
      // when the row has no mass (all -inf or NaN).
      auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
      op[b * samples + s] = std::min<int64_t>(it - cdf.begin(), classes - 1);
    }
  }
  ctx.outputs.resize(1);
  ctx.outputs[0] = out.to(dtype);
  return Status::ok();
}

} // namespace

/// Registers kiln.random_uniform and kiln.random_normal (keyed by their i64
/// shape operand) and kiln.multinomial (by the float operand).
void registerRandomKernels(Dispatcher &d) {
  d.add("random_uniform", Device::CPU, DType::I64, randomUniformKernel);
  d.add("random_normal", Device::CPU, DType::I64, randomNormalKernel);
  d.add("multinomial", Device::CPU, kFloatTypes, multinomialKernel);
}

} // namespace kiln
