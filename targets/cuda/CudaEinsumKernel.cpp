//===- CudaEinsumKernel.cpp - The CUDA kernel of kiln.einsum --------------===//
//
// This file implements the CUDA kernel of a top-level kiln.einsum that the
// graph passes left as one op (any number of operands, repeated labels such
// as diagonals, `...`, broadcasting): the contraction is planned at compile
// time with the reference's planner (runtime/kernels/EinsumPlan.h), so both
// agree on labels and sizes, and printed as
//
//   one thread per output element (grid-stride): the output labels'
//   coordinates give each operand's base offset, then one nested loop per
//   summed label walks the operands with the plan's strides (a label that
//   repeats in an operand adds its strides: a diagonal) and sums the
//   products in double for floats, wrapping 64-bit integers for integers,
//   as the reference kernel does.
//
// Einsums that are matmuls in disguise are the graph passes' business (they
// become kiln.matmul and library calls); this kernel is for the rest, which
// in real models are small.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/StaticEinsum.h"
#include "ir/KilnOps.h"
#include "runtime/kernels/EinsumPlan.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <string>

using namespace mlir;

namespace kiln {

std::optional<CudaKernel> emitCudaEinsumKernel(Operation *op,
                                               llvm::StringRef name) {
  auto einsumOp = dyn_cast<EinsumOp>(op);
  if (!einsumOp)
    return std::nullopt;
  std::optional<codegen::StaticEinsum> e = codegen::planStaticEinsum(einsumOp);
  if (!e || e->type == codegen::ScalarType::Bool)
    return std::nullopt;
  std::optional<codegen::ScalarType> st = e->type;
  const einsum::EinsumPlan &p = e->plan;
  // The joint index space: output labels, then the summed ones.
  const std::vector<int> &order = e->loops.order;
  const std::vector<std::vector<int64_t>> &strides = e->loops.strides;
  size_t nOut = e->loops.numOutput, nIn = e->shapes.size();
  int64_t total = e->outputElements;
  std::string storage = codegen::storageCType(*st);
  ProductAccumulator accumulator(*st, /*f64ForFloats=*/true);
  const std::string &acc = accumulator.type;
  std::string params;
  for (size_t i = 0; i < nIn; ++i)
    params +=
        "const " + storage + " *__restrict__ in" + std::to_string(i) + ", ";
  params += storage + " *__restrict__ out0";
  CudaKernel k;
  std::string head = beginElementKernel(k, op, name, total, params);
  std::string summed;
  for (size_t d = nOut; d < order.size(); ++d)
    summed += (summed.empty() ? "" : ", ") + codegen::einsumLabelName(order[d]) + "=" +
              std::to_string(p.sizes.at(order[d]));
  std::string s = opKernelComment(
      k, "einsum \"" + einsumOp.getEquation().str() + "\"",
      "one thread per output element, grid-stride; a loop per summed label (" +
          (summed.empty() ? std::string("none") : summed) + "), " + acc +
          " accumulation");
  s += head + " {\n";
  s += elementLoopHead(k, total);
  // The output coordinates, innermost label first.
  for (size_t i = 0; i < nIn; ++i)
    s += "    long long kiln_o" + std::to_string(i) + " = 0;\n";
  s += "    long long kiln_r = kiln_i;\n";
  for (int64_t d = static_cast<int64_t>(nOut) - 1; d >= 0; --d) {
    int64_t size = p.sizes.at(order[d]);
    s += "    {\n      const long long c = kiln_r % " + llLiteral(size) +
         "; // label " + codegen::einsumLabelName(order[d]) + "\n";
    for (size_t i = 0; i < nIn; ++i)
      if (strides[i][d])
        s += "      kiln_o" + std::to_string(i) + " += c * " +
             llLiteral(strides[i][d]) + ";\n";
    s += "      kiln_r /= " + llLiteral(size) + ";\n    }\n";
  }
  s += "    " + acc + " kiln_acc = 0;\n";
  std::string indent = "    ";
  for (size_t d = nOut; d < order.size(); ++d) {
    std::string var = "kiln_s" + std::to_string(d - nOut);
    s += indent + "for (long long " + var + " = 0; " + var + " < " +
         llLiteral(p.sizes.at(order[d])) + "; ++" + var + ") { // label " +
         codegen::einsumLabelName(order[d]) + "\n";
    indent += "  ";
  }
  std::string product;
  for (size_t i = 0; i < nIn; ++i) {
    std::string offset = "kiln_o" + std::to_string(i);
    for (size_t d = nOut; d < order.size(); ++d)
      if (strides[i][d])
        offset += " + kiln_s" + std::to_string(d - nOut) + " * " +
                  llLiteral(strides[i][d]);
    std::string value = "in" + std::to_string(i) + "[" + offset + "]";
    value = accumulator.load + value;
    product += (product.empty() ? "" : " * ") + value;
  }
  s += indent + "kiln_acc += " + product + ";\n";
  for (size_t d = nOut; d < order.size(); ++d) {
    indent.resize(indent.size() - 2);
    s += indent + "}\n";
  }
  s += "    out0[kiln_i] = " + accumulator.store("kiln_acc") + ";\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
