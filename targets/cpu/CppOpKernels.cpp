//===- CppOpKernels.cpp - C++ kernels of single data-movement ops ---------===//
//
// This file implements the CPU target's kernels of single top-level ops
// that no fusion takes and no library runs, so that they run as generated
// code instead of the runtime's reference kernels: kiln.gather (embedding
// lookups and token selection by run-time indices), kiln.concat (a ViT's
// class token joined to its patches, skip connections), kiln.gather_elements
// (a loss's pick of the target class), kiln.cumsum / kiln.cumprod and
// kiln.argmax /
// kiln.argmin (a classifier's or tagger's decision; one walk along the axis
// per output, the step shared with the CUDA kernel, printArgReduceStep),
// kiln.bitcast (a byte copy) and cumsum / cumprod along an axis read at run
// time (a switch over the axes; an axis out of range returns 2, the run's
// error naming the node); trilu, hardmax, the scatters, gather_nd and
// grid_sample are CppIndexKernels.cpp's, pad and the poolings
// CppWindowKernels.cpp's, einsum CppEinsumKernel.cpp's. kiln-lower-cpu tags
// such an op `kiln.kernel = "<name>"` when emitCppOpKernel prints a kernel
// for it (static shapes); the CPU printer puts the kernel into kernels.cpp
// and the wrapper calls it like a fusion's kernel, with the operands, then
// the result. The kernels move whole contiguous rows with std::memcpy; sizes
// are literals. A gather returns nonzero (and writes nothing more) at an
// index outside [-size, size): a bad input the wrapper reports as the run's
// error naming the node, as the reference kernel would.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "codegen/WrapperEmitter.h"
#include "codegen/WrapperSupport.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"
#include "targets/cpu/CppKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <string>

using namespace mlir;

namespace kiln {
namespace {

/// The product of `dims`.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// The static shape of `v`, or nullopt.
std::optional<ArrayRef<int64_t>> staticShape(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape())
    return std::nullopt;
  return t.getShape();
}

std::optional<CppKernel> emitGather(GatherOp gather, StringRef name) {
  auto x = staticShape(gather.getX()),
       indices = staticShape(gather.getIndices());
  auto y = staticShape(gather.getResult());
  if (!x || !indices || !y || x->empty())
    return std::nullopt;
  int64_t rank = x->size(), axis = gather.getAxis();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  int64_t outer = product(x->take_front(axis)), size = (*x)[axis],
          inner = product(x->drop_front(axis + 1)), count = product(*indices);
  std::string params = cppKernelParam(gather.getX(), "in0", true) + ", " +
                       cppKernelParam(gather.getIndices(), "in1", true) + ", " +
                       cppKernelParam(gather.getResult(), "out0", false);
  std::string n = std::to_string(inner);
  std::string body = "  for (int64_t i = 0; i < " + std::to_string(count) +
                     "; ++i)\n"
                     "    if (in1[i] < -" +
                     std::to_string(size) +
                     " || in1[i] >= " + std::to_string(size) +
                     ")\n      return 1;\n"
                     "  for (int64_t o = 0; o < " +
                     std::to_string(outer) +
                     "; ++o)\n"
                     "    for (int64_t i = 0; i < " +
                     std::to_string(count) +
                     "; ++i) {\n"
                     "      int64_t k = in1[i] < 0 ? in1[i] + " +
                     std::to_string(size) +
                     " : in1[i];\n"
                     "      std::memcpy(out0 + (o * " +
                     std::to_string(count) + " + i) * " + n + ", in0 + (o * " +
                     std::to_string(size) + " + k) * " + n +
                     ", sizeof(*out0) * " + n + ");\n    }\n  return 0;\n";
  return makeCppOpKernel(gather, name, params, body);
}

std::optional<CppKernel> emitConcat(ConcatOp concat, StringRef name) {
  auto y = staticShape(concat.getResult());
  if (!y || y->empty())
    return std::nullopt;
  int64_t rank = y->size(), axis = concat.getAxis();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  int64_t outer = product(y->take_front(axis)),
          inner = product(y->drop_front(axis + 1)), row = (*y)[axis] * inner;
  std::string params, copies;
  int64_t offset = 0;
  for (auto [i, v] : llvm::enumerate(concat.getInputs())) {
    auto x = staticShape(v);
    if (!x || static_cast<int64_t>(x->size()) != rank)
      return std::nullopt;
    int64_t chunk = (*x)[axis] * inner;
    std::string in = "in" + std::to_string(i);
    params += cppKernelParam(v, in, true) + ", ";
    if (chunk > 0)
      copies += "    std::memcpy(out0 + o * " + std::to_string(row) + " + " +
                std::to_string(offset) + ", " + in + " + o * " +
                std::to_string(chunk) + ", sizeof(*out0) * " +
                std::to_string(chunk) + ");\n";
    offset += chunk;
  }
  if (offset != row)
    return std::nullopt;
  params += cppKernelParam(concat.getResult(), "out0", false);
  std::string body = "  for (int64_t o = 0; o < " + std::to_string(outer) +
                     "; ++o) {\n" + copies + "  }\n  return 0;\n";
  return makeCppOpKernel(concat, name, params, body);
}

/// Elements of `x` along `axis` at run-time positions, the other
/// coordinates those of the output (GatherElements: NLL losses' and
/// softmax cross-entropy's pick of the target class). The output's linear
/// index is split into coordinates with literal sizes and x's offset summed
/// from them; every index is checked before anything is written.
std::optional<CppKernel> emitGatherElements(GatherElementsOp gather,
                                            StringRef name) {
  auto x = staticShape(gather.getX()), i = staticShape(gather.getIndices());
  auto y = staticShape(gather.getResult());
  if (!x || !i || !y || *i != *y || x->size() != y->size() || y->empty() ||
      product(*y) == 0)
    return std::nullopt;
  int64_t rank = x->size(), axis = gather.getAxis();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  std::string size = std::to_string((*x)[axis]),
              total = std::to_string(product(*y));
  std::string params = cppKernelParam(gather.getX(), "in0", true) + ", " +
                       cppKernelParam(gather.getIndices(), "in1", true) + ", " +
                       cppKernelParam(gather.getResult(), "out0", false);
  std::string body = "  for (int64_t i = 0; i < " + total +
                     "; ++i)\n"
                     "    if (in1[i] < -" +
                     size + " || in1[i] >= " + size +
                     ")\n      return 1;\n"
                     "  for (int64_t i = 0; i < " +
                     total +
                     "; ++i) {\n"
                     "    const int64_t k = in1[i] < 0 ? in1[i] + " +
                     size +
                     " : in1[i];\n"
                     "    int64_t r = i, off = 0;\n";
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    std::string extent = std::to_string((*y)[d]);
    std::string coord = d == axis ? "k" : "(r % " + extent + ")";
    if ((*x)[d] != 1 || d == axis)
      body += "    off += " + coord + " * " + std::to_string(stride) + ";\n";
    if (d > 0)
      body += "    r /= " + extent + ";\n";
    stride *= (*x)[d];
  }
  body += "    out0[i] = in0[off];\n  }\n  return 0;\n";
  return makeCppOpKernel(gather, name, params, body);
}

/// A cumulative sum or product whose axis is read at run time (the ONNX
/// node tests give it as a graph input), as the CUDA kernel: a switch over
/// the possible axes sets the line length and stride, then one walk per
/// line along the axis, accumulated as emitScan's. An axis outside [-rank,
/// rank) makes the kernel return 2, which the wrapper reports as the run's
/// error naming the node (the reference kernel's error).
std::optional<CppKernel> emitScanRuntimeAxis(Operation *op, StringRef name,
                                             ArrayRef<int64_t> x,
                                             codegen::ScalarType st) {
  bool isProd = isa<CumProdOp>(op);
  bool exclusive = op->getAttrOfType<IntegerAttr>("exclusive").getInt() != 0;
  bool reverse = op->getAttrOfType<IntegerAttr>("reverse").getInt() != 0;
  auto at = cast<RankedTensorType>(op->getOperand(1).getType());
  std::optional<codegen::ScalarType> axisType =
      codegen::scalarTypeOf(at.getElementType());
  // A float or bool axis is the reference kernel's error.
  if (!axisType || codegen::isFloatType(*axisType) ||
      *axisType == codegen::ScalarType::Bool || at.getRank() > 1)
    return std::nullopt;
  bool isFloat = codegen::isFloatType(st),
       isDouble = st == codegen::ScalarType::F64;
  std::string acc = isFloat ? "double" : "uint64_t";
  std::string load = isDouble  ? "in0[at]"
                     : isFloat ? "(double)(float)in0[at]"
                               : "(uint64_t)in0[at]";
  std::string store = isDouble  ? "kiln_acc"
                      : isFloat ? "(float)kiln_acc"
                                : "(" + codegen::storageCType(st) + ")kiln_acc";
  int64_t rank = x.size(), total = product(x);
  std::string r = std::to_string(rank);
  std::string body =
      "  // The axis, read at run time: its length and stride per value.\n"
      "  int64_t kiln_axis = (int64_t)in1[0];\n"
      "  if (kiln_axis < -" +
      r + " || kiln_axis >= " + r +
      ")\n"
      "    return 2; // an axis out of range: a bad input\n"
      "  if (kiln_axis < 0)\n    kiln_axis += " +
      r +
      ";\n"
      "  int64_t kiln_len = 1, kiln_inner = 1;\n"
      "  switch (kiln_axis) {\n";
  for (int64_t d = 0; d < rank; ++d)
    body += "  case " + std::to_string(d) +
            ": kiln_len = " + std::to_string(x[d]) +
            ", kiln_inner = " + std::to_string(product(x.drop_front(d + 1))) +
            "; break;\n";
  body += "  default:\n    return 2;\n  }\n";
  std::string step = reverse ? "kiln_len - 1 - s" : "s";
  std::string update = isProd ? "kiln_acc *= v;" : "kiln_acc += v;";
  body +=
      "  // One walk per line along the axis.\n"
      "  for (int64_t kiln_i = 0; kiln_i < " +
      std::to_string(total) +
      " / kiln_len; ++kiln_i) {\n"
      "    const int64_t kiln_base = (kiln_i / kiln_inner) * kiln_len * "
      "kiln_inner + kiln_i % kiln_inner;\n"
      "    " +
      acc + " kiln_acc = " + (isProd ? "1" : "0") +
      ";\n"
      "    for (int64_t s = 0; s < kiln_len; ++s) {\n"
      "      const int64_t at = kiln_base + (" +
      step +
      ") * kiln_inner;\n"
      "      const " +
      acc + " v = " + load + ";\n" +
      (exclusive ? "      out0[at] = " + store + ";\n      " + update + "\n"
                 : "      " + update + "\n      out0[at] = " + store + ";\n") +
      "    }\n  }\n  return 0;\n";
  std::string params = cppKernelParam(op->getOperand(0), "in0", true) + ", " +
                       cppKernelParam(op->getOperand(1), "in1", true) + ", " +
                       cppKernelParam(op->getResult(0), "out0", false);
  return makeCppOpKernel(op, name, params, body,
                         std::string(isProd ? "cumprod" : "cumsum") +
                             " along the axis read at run time" +
                             (exclusive ? ", exclusive" : "") +
                             (reverse ? ", reversed" : "") +
                             "; returns 2 on an axis out of range");
}

/// A cumulative sum or product along a constant axis (position ids from
/// an attention mask), accumulated as the reference kernel does: in double
/// for floats, in wrapping 64-bit integers else, each result stored in the
/// element type. An axis not constant is read at run time
/// (emitScanRuntimeAxis).
std::optional<CppKernel> emitScan(Operation *op, StringRef name) {
  bool isProd = isa<CumProdOp>(op);
  auto x = staticShape(op->getOperand(0));
  std::optional<double> axisValue = passes::getSplatValue(op->getOperand(1));
  auto exclusive = op->getAttrOfType<IntegerAttr>("exclusive");
  auto reverse = op->getAttrOfType<IntegerAttr>("reverse");
  std::optional<codegen::ScalarType> st = codegen::scalarTypeOf(
      cast<RankedTensorType>(op->getOperand(0).getType()).getElementType());
  if (!x || x->empty() || product(*x) == 0 || !exclusive || !reverse || !st ||
      *st == codegen::ScalarType::Bool ||
      cast<RankedTensorType>(op->getOperand(1).getType()).getNumElements() != 1)
    return std::nullopt;
  if (!axisValue)
    return emitScanRuntimeAxis(op, name, *x, *st);
  int64_t rank = x->size(), axis = static_cast<int64_t>(*axisValue);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  bool isFloat = codegen::isFloatType(*st);
  std::string acc = isFloat ? "double" : "uint64_t";
  std::string store =
      isFloat ? (*st == codegen::ScalarType::F64 ? "acc[i]" : "(float)acc[i]")
              : "(" + codegen::storageCType(*st) + ")acc[i]";
  std::string load = isFloat ? "(double)(float)src[i]" : "(uint64_t)src[i]";
  if (*st == codegen::ScalarType::F64)
    load = "src[i]";
  int64_t outer = product(x->take_front(axis)), len = (*x)[axis],
          inner = product(x->drop_front(axis + 1));
  // The accumulators of one slice live in a thread-local array: at most
  // 512 KiB of them (a larger slice stays a reference step).
  if (inner > 65536)
    return std::nullopt;
  std::string params = cppKernelParam(op->getOperand(0), "in0", true) + ", " +
                       cppKernelParam(op->getOperand(1), "in1", true) + ", " +
                       cppKernelParam(op->getResult(0), "out0", false);
  std::string in = std::to_string(inner), l = std::to_string(len);
  std::string step = reverse.getInt() ? l + " - 1 - s" : "s";
  std::string update = isProd ? "acc[i] *= v;" : "acc[i] += v;";
  std::string body =
      "  (void)in1; // the axis, " + std::to_string(axis) + "\n"
      "  static thread_local " + acc + " acc[" + in + "];\n"
      "  for (int64_t o = 0; o < " + std::to_string(outer) + "; ++o) {\n"
      "    for (int64_t i = 0; i < " + in + "; ++i)\n"
      "      acc[i] = " + (isProd ? "1" : "0") + ";\n"
      "    for (int64_t s = 0; s < " + l + "; ++s) {\n"
      "      const int64_t base = (o * " + l + " + " + step + ") * " + in +
      ";\n"
      "      const auto *src = in0 + base;\n"
      "      auto *dst = out0 + base;\n"
      "      for (int64_t i = 0; i < " + in + "; ++i) {\n"
      "        const " + acc + " v = " + load + ";\n" +
      (exclusive.getInt() ? "        dst[i] = " + store + ";\n        " +
                                update + "\n"
                          : "        " + update + "\n        dst[i] = " +
                                store + ";\n") +
      "      }\n    }\n  }\n  return 0;\n";
  return makeCppOpKernel(op, name, params, body);
}

/// The width in bits of a bitcast's element type `t`, as the reference
/// counts it: bool 8, i4/ui4 4, i2/ui2 2.
unsigned bitcastWidth(Type t) {
  return t.isInteger(1) ? 8 : t.getIntOrFloatBitWidth();
}

/// ONNX BitCast: each element's bits read as another dtype of the same
/// width, as the reference kernel (runtime/kernels/BitCast.cpp): a byte
/// copy, except that a bool result is 1 where the byte is not zero and a
/// sub-byte integer (one byte per element) keeps its low bits, sign-extended
/// for i4 and i2.
std::optional<CppKernel> emitBitCast(BitCastOp bitcast, StringRef name) {
  auto xt = dyn_cast<RankedTensorType>(bitcast.getX().getType());
  auto yt = dyn_cast<RankedTensorType>(bitcast.getResult().getType());
  if (!xt || !yt || !xt.hasStaticShape() || xt.getShape() != yt.getShape() ||
      !codegen::scalarTypeOf(xt.getElementType()) ||
      !codegen::scalarTypeOf(yt.getElementType()))
    return std::nullopt;
  Type to = yt.getElementType();
  // Different widths are the reference kernel's error.
  if (bitcastWidth(xt.getElementType()) != bitcastWidth(to))
    return std::nullopt;
  std::string n = std::to_string(xt.getNumElements());
  std::string params = cppKernelParam(bitcast.getX(), "in0", true) + ", " +
                       cppKernelParam(bitcast.getResult(), "out0", false);
  std::string body;
  unsigned bits = bitcastWidth(to);
  if (xt.getNumElements() == 0) {
    body = "  (void)in0;\n  (void)out0; // an empty tensor\n";
  } else if (to.isInteger(1)) {
    body = "  const auto *src = reinterpret_cast<const uint8_t *>(in0);\n"
           "  for (int64_t i = 0; i < " +
           n +
           "; ++i)\n"
           "    out0[i] = src[i] != 0; // true where the byte is not zero\n";
  } else if (bits < 8) {
    std::string mask = std::to_string((1u << bits) - 1);
    body = "  const auto *src = reinterpret_cast<const uint8_t *>(in0);\n"
           "  auto *dst = reinterpret_cast<uint8_t *>(out0);\n"
           "  for (int64_t i = 0; i < " +
           n +
           "; ++i) {\n"
           "    uint8_t v = src[i] & " +
           mask + "; // the low " + std::to_string(bits) + " bits\n";
    if (!to.isUnsignedInteger())
      body += "    if (v >> " + std::to_string(bits - 1) +
              ")\n      v |= (uint8_t)(0xFFu << " + std::to_string(bits) +
              "); // sign-extended\n";
    body += "    dst[i] = v;\n  }\n";
  } else {
    body = "  std::memcpy(out0, in0, sizeof(*out0) * " + n + ");\n";
  }
  body += "  return 0;\n";
  return makeCppOpKernel(bitcast, name, params, body,
                         "the bits of each element read as another type of " +
                             std::to_string(bits) + " bits");
}

std::optional<CppKernel> emitArgReduce(Operation *op, StringRef name) {
  bool isMax = isa<ArgMaxOp>(op);
  auto x = staticShape(op->getOperand(0)), y = staticShape(op->getResult(0));
  auto axisAttr = op->getAttrOfType<IntegerAttr>("axis");
  auto lastAttr = op->getAttrOfType<IntegerAttr>("select_last_index");
  if (!x || !y || x->empty() || !axisAttr || !lastAttr || product(*y) == 0)
    return std::nullopt;
  int64_t rank = x->size(), axis = axisAttr.getInt();
  if (axis < 0)
    axis += rank;
  std::optional<codegen::ScalarType> st = codegen::scalarTypeOf(
      cast<RankedTensorType>(op->getOperand(0).getType()).getElementType());
  if (axis < 0 || axis >= rank || (*x)[axis] == 0 || !st)
    return std::nullopt;
  int64_t len = (*x)[axis], inner = product(x->drop_front(axis + 1)),
          total = product(*y);
  std::string compute = codegen::computeCType(*st);
  std::string params = cppKernelParam(op->getOperand(0), "in0", true) + ", " +
                       cppKernelParam(op->getResult(0), "out0", false);
  std::string body;
  // Parallel once the walk covers a few pages, as the fused kernels.
  if (total > 1 && total * len >= 32768)
    body += "  #pragma omp parallel for\n";
  body += "  for (int64_t kiln_i = 0; kiln_i < " + std::to_string(total) +
          "; ++kiln_i) {\n";
  body += "    const auto *kiln_x = in0 + (kiln_i / " + std::to_string(inner) +
          ") * " + std::to_string(len * inner) + " + kiln_i % " +
          std::to_string(inner) + ";\n";
  body += "    " + compute + " kiln_best = (" + compute + ")kiln_x[0];\n";
  body += "    int64_t kiln_arg = 0;\n";
  body += "    for (int64_t r = 1; r < " + std::to_string(len) + "; ++r) {\n";
  body += "      const " + compute + " v = (" + compute + ")kiln_x[r * " +
          std::to_string(inner) + "];\n";
  body += codegen::printArgReduceStep(isMax, lastAttr.getInt() != 0,
                                      codegen::isFloatType(*st), "      ");
  body += "    }\n    out0[kiln_i] = kiln_arg;\n  }\n  return 0;\n";
  return makeCppOpKernel(op, name, params, body);
}

} // namespace

std::string cppKernelParam(Value v, const std::string &name, bool isConst) {
  return std::string(isConst ? "const " : "") +
         kernelCType(wrapper::valueType(v).dtype) + " *__restrict " + name;
}

std::string cppKernelParams(Operation *op) {
  std::string params;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    params += cppKernelParam(v, "in" + std::to_string(i), true) + ", ";
  return params + cppKernelParam(op->getResult(0), "out0", false);
}

RankedTensorType cppStaticType(Value v, int64_t maxElements) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getNumElements() >= maxElements)
    return nullptr;
  return t;
}

RankedTensorType cppStaticFloatType(Value v) {
  RankedTensorType t = cppStaticType(v, int64_t(1) << 40);
  if (!t || !(t.getElementType().isF32() || t.getElementType().isF64()))
    return nullptr;
  return t;
}

CppKernel makeCppOpKernel(Operation *op, StringRef name,
                          const std::string &params, const std::string &body,
                          const std::string &what) {
  CppKernel k;
  k.name = name.str();
  k.sourceNodes = sourceNodeNames(op);
  std::string nodes;
  for (const std::string &n : k.sourceNodes)
    nodes += (nodes.empty() ? "'" : ", '") + commentSafe(n) + "'";
  k.declaration = "int " + k.name + "(" + params + ");";
  k.definition = "// " + op->getName().getStringRef().str() + " of ONNX node " +
                 nodes + "; returns 0, or 1 on a bad index.\n" +
                 (what.empty() ? "" : "// " + what + "\n") + "int " + k.name +
                 "(" + params + ") {\n" + body + "}\n";
  return k;
}

std::optional<StringRef> cppOpKernelStem(Operation *op) {
  // The op's mnemonic ("gather", "cumsum", ...).
  if (isa<GatherOp, ConcatOp, GatherElementsOp, CumSumOp, CumProdOp, ArgMaxOp,
          ArgMinOp, BitCastOp, EinsumOp, DftOp, RoiAlignOp, DeformConvOp>(op) ||
      hasCppIndexKernel(op) || hasCppWindowKernel(op))
    return op->getName().stripDialect();
  return std::nullopt;
}

std::optional<CppKernel> emitCppOpKernel(Operation *op, StringRef name) {
  if (auto gather = dyn_cast<GatherOp>(op))
    return emitGather(gather, name);
  if (auto concat = dyn_cast<ConcatOp>(op))
    return emitConcat(concat, name);
  if (auto gather = dyn_cast<GatherElementsOp>(op))
    return emitGatherElements(gather, name);
  if (isa<ArgMaxOp, ArgMinOp>(op))
    return emitArgReduce(op, name);
  if (isa<CumSumOp, CumProdOp>(op))
    return emitScan(op, name);
  if (auto bitcast = dyn_cast<BitCastOp>(op))
    return emitBitCast(bitcast, name);
  if (isa<EinsumOp>(op))
    return emitCppEinsumKernel(op, name);
  if (isa<DftOp>(op))
    return emitCppSignalKernel(op, name);
  if (isa<RoiAlignOp, DeformConvOp>(op))
    return emitCppImageKernel(op, name);
  if (hasCppIndexKernel(op))
    return emitCppIndexKernel(op, name);
  if (hasCppWindowKernel(op))
    return emitCppWindowKernel(op, name);
  return std::nullopt;
}

} // namespace kiln
