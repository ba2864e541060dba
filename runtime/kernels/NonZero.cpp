//===- NonZero.cpp - The reference NonZero kernel -------------------------===//
//
// This file implements the CPU reference kernel of kiln.non_zero (ONNX
// NonZero): for an operand of any dtype and rank r, an i64 tensor of shape
// [r, nnz] whose column j holds the multi-index of the j-th non-zero element
// in row-major order. A rank-0 operand gives shape [0, nnz] (nnz is 1 when
// the scalar is non-zero), as ONNX's shape inference says and the traced type
// declares; ONNX Runtime and NumPy 1.x answer [1, nnz] there, which no ONNX
// node test checks.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <type_traits>
#include <vector>

namespace kiln {

namespace {

Status nonZeroKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 1, "non_zero: expected 1 operand, got ",
             ctx.numInputs());
  KILN_CHECK(ctx.outputs.size() == 1, "non_zero: expected 1 result slot, got ",
             ctx.outputs.size());
  const Tensor &x = ctx.input(0);
  KILN_CHECK(x.device() == Device::CPU, "non_zero: the operand is on ",
             deviceName(x.device()), "; the reference kernels run on the cpu");
  Tensor c = x.contiguous();
  const int64_t n = c.numel();
  const int64_t rank = c.rank();
  // Flat positions of the non-zero elements.
  std::vector<int64_t> positions;
  visitDType(c.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *p = c.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      bool nonZero;
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        nonZero = static_cast<float>(p[i]) != 0.0f;
      else
        nonZero = p[i] != T(0);
      if (nonZero)
        positions.push_back(i);
    }
  });
  const int64_t nnz = static_cast<int64_t>(positions.size());
  Tensor out = Tensor::empty(DType::I64, {rank, nnz});
  int64_t *o = out.data<int64_t>();
  const Shape &shape = c.shape();
  for (int64_t j = 0; j < nnz; ++j) {
    int64_t rest = positions[j];
    for (int64_t d = rank - 1; d >= 0; --d) {
      o[d * nnz + j] = rest % shape[d];
      rest /= shape[d];
    }
  }
  ctx.outputs[0] = std::move(out);
  return Status::ok();
}

} // namespace

/// Registers kiln.non_zero for every dtype.
void registerNonZeroKernels(Dispatcher &d) {
  d.add("non_zero", Device::CPU, kAllTypes, nonZeroKernel);
}

} // namespace kiln
