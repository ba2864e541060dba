//===- BitCast.cpp - The reference BitCast kernel -------------------------===//
//
// This file implements the CPU reference kernel of kiln.bitcast (ONNX
// BitCast): each element's bits read as another dtype of the same width.
// Elements of a byte or more are copied as bytes (the runtime's memory is
// little endian, as ONNX requires); a bool result is true where the byte is
// not zero; the sub-byte integers (one byte per element in memory, i4 and
// i2 sign-extended) keep their low 4 or 2 bits, sign-extended for a signed
// result.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <cstring>

namespace kiln {

namespace {

Status bitcastKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 1, "bitcast: expected 1 operand, got ",
             ctx.numInputs());
  const Tensor x = ctx.input(0).contiguous();
  const DType to = ctx.attrs.getDType("to", x.dtype());
  KILN_CHECK(packedBits(to) == packedBits(x.dtype()),
             "bitcast: ", dtypeName(x.dtype()), " and ", dtypeName(to),
             " differ in width");
  Tensor out = Tensor::empty(to, x.shape());
  const int64_t n = x.numel();
  const auto *src = static_cast<const uint8_t *>(x.rawData());
  auto *dst = static_cast<uint8_t *>(out.rawData());
  if (to == DType::Bool) {
    for (int64_t i = 0; i < n; ++i)
      dst[i] = src[i] != 0;
  } else if (isSubByteInteger(to)) {
    const int bits = packedBits(to);
    const bool isSigned = to == DType::I4 || to == DType::I2;
    for (int64_t i = 0; i < n; ++i) {
      uint8_t v = src[i] & ((1u << bits) - 1);
      if (isSigned && (v >> (bits - 1)))
        v |= static_cast<uint8_t>(0xFFu << bits);
      dst[i] = v;
    }
  } else if (n > 0) {
    std::memcpy(dst, src, static_cast<size_t>(n) * dtypeSize(to));
  }
  ctx.outputs.resize(1);
  ctx.outputs[0] = out;
  return Status::ok();
}

} // namespace

/// Registers kiln.bitcast for every dtype (the dispatcher keys it by the
/// operand's).
void registerBitCastKernels(Dispatcher &d) {
  d.add("bitcast", Device::CPU, kAllTypes, bitcastKernel);
}

} // namespace kiln
