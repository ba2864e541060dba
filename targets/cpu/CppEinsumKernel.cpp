//===- CppEinsumKernel.cpp - The C++ kernel of kiln.einsum ----------------===//
//
// This file implements the CPU target's kernel of a top-level kiln.einsum
// that the graph passes left as one op (any number of operands, repeated
// labels such as diagonals, `...`, broadcasting), so that it runs as
// generated code instead of the runtime's reference kernel (issue 20). The
// contraction is planned at compile time with the reference's planner
// (runtime/kernels/EinsumPlan.h), as the CUDA kernel
// (targets/cuda/CudaEinsumKernel.cpp), and printed as
//
//   one walk per output element: the output labels' coordinates give each
//   operand's base offset, then one nested loop per summed label walks the
//   operands with the plan's strides (a label repeated in an operand adds
//   its strides: a diagonal), summing the products in double for floats and
//   in wrapping 64-bit integers for integers, in the order of the
//   reference's einsumLoop (runtime/kernels/Linalg.cpp), so the results are
//   bit-identical.
//
// An f32 or f64 einsum of two operands that the reference computes as a
// batched GEMM (einsumAsMatmul: no repeated label, no broadcasting, each
// label batch, M, N or K) stays a reference step: a loop cannot round as the
// GEMM does.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/StaticEinsum.h"
#include "ir/KilnOps.h"
#include "runtime/kernels/EinsumPlan.h"
#include "targets/cpu/CppKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <string>

using namespace mlir;

namespace kiln {
namespace {

/// True when the reference computes the two-operand einsum `p` of
/// `shapes` as a batched GEMM (Linalg.cpp's einsumAsMatmul conditions).
bool referenceUsesGemm(const einsum::EinsumPlan &p,
                       const std::vector<Shape> &shapes) {
  if (shapes.size() != 2)
    return false;
  const std::vector<int> &la = p.inputLabels[0], &lb = p.inputLabels[1];
  for (const auto &[label, size] : p.sizes) {
    auto ca = llvm::count(la, label), cb = llvm::count(lb, label),
         co = llvm::count(p.outLabels, label);
    if (ca > 1 || cb > 1)
      return false;
    // Batch or K (in both), M (a and out) or N (b and out).
    if (!((ca && cb) || (ca && co) || (cb && co)))
      return false;
  }
  for (size_t i = 0; i < 2; ++i)
    for (size_t d = 0; d < p.inputLabels[i].size(); ++d)
      if (shapes[i][d] != p.sizes.at(p.inputLabels[i][d]))
        return false; // Broadcasting.
  return true;
}

} // namespace

std::optional<CppKernel> emitCppEinsumKernel(Operation *op, StringRef name) {
  auto einsumOp = dyn_cast<EinsumOp>(op);
  if (!einsumOp)
    return std::nullopt;
  std::optional<codegen::StaticEinsum> e = codegen::planStaticEinsum(einsumOp);
  if (!e || e->type == codegen::ScalarType::Bool ||
      codegen::isFloat8Type(e->type) ||
      llvm::is_contained({codegen::ScalarType::I4, codegen::ScalarType::U4,
                          codegen::ScalarType::I2, codegen::ScalarType::U2},
                         e->type))
    return std::nullopt;
  std::optional<codegen::ScalarType> st = e->type;
  const std::vector<Shape> &shapes = e->shapes;
  const einsum::EinsumPlan &p = e->plan;
  bool isFloat = codegen::isFloatType(*st),
       isDouble = *st == codegen::ScalarType::F64;
  if ((*st == codegen::ScalarType::F32 || isDouble) &&
      referenceUsesGemm(p, shapes))
    return std::nullopt;
  // The joint index space: output labels, then the summed ones.
  const std::vector<int> &order = e->loops.order;
  const std::vector<std::vector<int64_t>> &strides = e->loops.strides;
  size_t nOut = e->loops.numOutput, nIn = shapes.size();
  int64_t total = e->outputElements;
  // The reference's accumulator and conversions (Linalg.cpp's toAcc).
  std::string storage = codegen::storageCType(*st);
  std::string acc = isFloat ? "double" : "uint64_t";
  std::string load = isDouble  ? ""
                     : isFloat ? "(double)(float)"
                               : "(uint64_t)(int64_t)";
  std::string store = isDouble  ? "kiln_acc"
                      : isFloat ? "(" + storage + ")(float)kiln_acc"
                                : "(" + storage + ")kiln_acc";
  std::string summed;
  for (size_t d = nOut; d < order.size(); ++d)
    summed += (summed.empty() ? "" : ", ") + codegen::einsumLabelName(order[d]) + "=" +
              std::to_string(p.sizes.at(order[d]));
  std::string what = "einsum \"" + einsumOp.getEquation().str() +
                     "\": per output element a loop per summed label (" +
                     (summed.empty() ? std::string("none") : summed) + "), " +
                     acc + " accumulation, as the reference";
  std::string s;
  if (total > 1 && total * (int64_t)std::max<size_t>(1, order.size()) >= 32768)
    s += "  #pragma omp parallel for\n";
  s += "  for (int64_t kiln_i = 0; kiln_i < " + std::to_string(total) +
       "; ++kiln_i) {\n";
  // The output coordinates, innermost label first.
  for (size_t i = 0; i < nIn; ++i)
    s += "    int64_t kiln_o" + std::to_string(i) + " = 0;\n";
  s += "    int64_t kiln_r = kiln_i;\n";
  for (int64_t d = static_cast<int64_t>(nOut) - 1; d >= 0; --d) {
    std::string size = std::to_string(p.sizes.at(order[d]));
    s += "    {\n      const int64_t c = kiln_r % " + size + "; // label " +
         codegen::einsumLabelName(order[d]) + "\n";
    for (size_t i = 0; i < nIn; ++i)
      if (strides[i][d])
        s += "      kiln_o" + std::to_string(i) + " += c * " +
             std::to_string(strides[i][d]) + ";\n";
    s += "      kiln_r /= " + size + ";\n    }\n";
  }
  s += "    " + acc + " kiln_acc = 0;\n";
  std::string indent = "    ";
  for (size_t d = nOut; d < order.size(); ++d) {
    std::string var = "kiln_s" + std::to_string(d - nOut);
    s += indent + "for (int64_t " + var + " = 0; " + var + " < " +
         std::to_string(p.sizes.at(order[d])) + "; ++" + var + ") { // label " +
         codegen::einsumLabelName(order[d]) + "\n";
    indent += "  ";
  }
  std::string product;
  for (size_t i = 0; i < nIn; ++i) {
    std::string offset = "kiln_o" + std::to_string(i);
    for (size_t d = nOut; d < order.size(); ++d)
      if (strides[i][d])
        offset += " + kiln_s" + std::to_string(d - nOut) + " * " +
                  std::to_string(strides[i][d]);
    product += (product.empty() ? "" : " * ") + load + "in" +
               std::to_string(i) + "[" + offset + "]";
  }
  s += indent + "kiln_acc += " + product + ";\n";
  for (size_t d = nOut; d < order.size(); ++d) {
    indent.resize(indent.size() - 2);
    s += indent + "}\n";
  }
  s += "    out0[kiln_i] = " + store + ";\n  }\n  return 0;\n";
  return makeCppOpKernel(op, name, cppKernelParams(op), s, what);
}

} // namespace kiln
