//===- CudaMatmulKernel.cpp - The CUDA kernel of the other matmuls --------===//
//
// This file implements the CUDA kernel of a top-level kiln.matmul that
// cuBLASLt does not take (kiln-lower-cuda hands it f32/f16/bf16 matrices
// whose batches have one stride): vectors (a 1-D operand, promoted and its
// dim dropped as numpy's matmul does), batch dims that broadcast against
// each other ([3,1,..] x [1,2,..]), f64 and the integer types.
//
//   one thread per output element (grid-stride): the output's batch
//   coordinates give each operand's matrix (a size-1 batch dim broadcasts),
//   then a loop over k; floats accumulate in float (double for f64), as the
//   reference's BLAS calls do, integers in wrapping 64 bits.
//
// These matmuls are small in the models that have them (the node tests, a
// vector times a matrix); a large one of these forms would want a GEMM
// library call after a broadcast copy instead.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <string>

using namespace mlir;

namespace kiln {

std::optional<CudaKernel> emitCudaMatmulKernel(Operation *op,
                                               llvm::StringRef name) {
  auto mm = dyn_cast<MatMulOp>(op);
  if (!mm)
    return std::nullopt;
  auto ta = dyn_cast<RankedTensorType>(mm.getA().getType());
  auto tb = dyn_cast<RankedTensorType>(mm.getB().getType());
  auto td = dyn_cast<RankedTensorType>(mm.getResult().getType());
  if (!ta || !tb || !td || !ta.hasStaticShape() || !tb.hasStaticShape() ||
      !td.hasStaticShape() || ta.getRank() < 1 || tb.getRank() < 1 ||
      td.getNumElements() == 0 || ta.getElementType() != td.getElementType() ||
      tb.getElementType() != td.getElementType())
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(td.getElementType());
  if (!st || *st == codegen::ScalarType::Bool)
    return std::nullopt;
  // Promote vectors: a [K] is a [1, K] (A) or a [K, 1] (B).
  SmallVector<int64_t> as(ta.getShape()), bs(tb.getShape());
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    return std::nullopt;
  size_t batchRank = std::max(as.size(), bs.size()) - 2;
  // Each operand's batch dims, right-aligned, with their strides (0 where
  // the dim broadcasts).
  SmallVector<int64_t> batch(batchRank), strideA(batchRank), strideB(batchRank);
  auto place = [&](ArrayRef<int64_t> shape, int64_t matrix,
                   SmallVector<int64_t> &strides) {
    int64_t stride = matrix;
    size_t own = shape.size() - 2;
    for (size_t i = 0; i < own; ++i) {
      size_t d = own - 1 - i, b = batchRank - 1 - i;
      strides[b] = shape[d] == 1 ? 0 : stride;
      if (shape[d] != 1)
        batch[b] = shape[d];
      stride *= shape[d];
    }
  };
  for (int64_t &b : batch)
    b = 1;
  place(as, m * k, strideA);
  place(bs, k * n, strideB);
  int64_t total = m * n;
  for (int64_t b : batch)
    total *= b;
  if (total != td.getNumElements() || total >= (int64_t(1) << 62))
    return std::nullopt;
  std::string storage = codegen::storageCType(*st);
  ProductAccumulator accumulator(*st, /*f64ForFloats=*/false);
  const std::string &acc = accumulator.type;
  CudaKernel kernel;
  std::string head = beginElementKernel(
      kernel, op, name, total,
      "const " + storage + " *__restrict__ in0, const " + storage +
          " *__restrict__ in1, " + storage + " *__restrict__ out0");
  std::string shapes = "[" + std::to_string(m) + "x" + std::to_string(k) +
                       "] x [" + std::to_string(k) + "x" + std::to_string(n) +
                       "]";
  std::string s = opKernelComment(
      kernel,
      "matmul " + shapes + " over " + std::to_string(total / (m * n)) +
          " broadcast batches",
      "one thread per output element, grid-stride; a loop over k, " + acc +
          " accumulation");
  s += head + " {\n";
  s += elementLoopHead(kernel, total);
  s += "    const long long kiln_m = (kiln_i / " + llLiteral(n) + ") % " +
       llLiteral(m) + ", kiln_col = kiln_i % " + llLiteral(n) + ";\n";
  s += "    long long kiln_a = kiln_m * " + llLiteral(k) +
       ", kiln_b = kiln_col;\n";
  s += "    long long kiln_r = kiln_i / " + llLiteral(m * n) + ";\n";
  for (int64_t d = static_cast<int64_t>(batchRank) - 1; d >= 0; --d) {
    if (batch[d] == 1)
      continue;
    s += "    {\n      const long long c = kiln_r % " + llLiteral(batch[d]) +
         ";\n";
    if (strideA[d])
      s += "      kiln_a += c * " + llLiteral(strideA[d]) + ";\n";
    if (strideB[d])
      s += "      kiln_b += c * " + llLiteral(strideB[d]) + ";\n";
    s += "      kiln_r /= " + llLiteral(batch[d]) + ";\n    }\n";
  }
  const std::string &load = accumulator.load;
  s += "    " + acc + " kiln_acc = 0;\n";
  s += "    for (long long kk = 0; kk < " + llLiteral(k) + "; ++kk)\n";
  s += "      kiln_acc += " + load + "in0[kiln_a + kk] * " + load +
       "in1[kiln_b + kk * " + llLiteral(n) + "];\n";
  s += "    out0[kiln_i] = " + accumulator.store("kiln_acc") + ";\n";
  s += "  }\n}\n";
  kernel.definition = s;
  return kernel;
}

} // namespace kiln
