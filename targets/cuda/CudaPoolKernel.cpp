//===- CudaPoolKernel.cpp - CUDA kernels for max and average pooling ------===//
//
// This file implements the CUDA kernel of a top-level kiln.max_pool (ONNX
// MaxPool) or kiln.avg_pool (ONNX AveragePool, channels first): pooling
// windows are not expressible in the kernel IR (a window
// is a reduction over positions that depend on the output index and are
// clipped at the borders), so instead of running it on the host, the CUDA
// target prints it directly: one thread per output element, grid-stride, the
// window loops unrolled by the compiler (kernel, strides, pads and dilations
// are literals), positions outside the input skipped, NaN propagated (max;
// a max also of integers, from the type's lowest value),
// as the reference kernel (runtime/kernels/Pooling.cpp) computes. An average
// sums in f32 and divides by the positions inside the input, or with
// count_include_pad by those inside the explicitly padded input (a product
// of per-dim counts; positions added by ceil_mode never count). The output
// shape (floor or ceil mode) is the op's static result type. A channels-last
// pool (layout = "nhwc", kiln-channels-last) reads [N, spatial..., C]: a
// thread's channel is its index's innermost part, so neighbouring threads read
// neighbouring channels (coalesced). The kernel goes into
// kernels.cu with the fusion kernels and is launched the same way.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/MemoryPlanner.h"
#include "ir/KilnOps.h"
#include "targets/cuda/CudaKernel.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <string>

using namespace mlir;

namespace kiln {

namespace {

std::string join(ArrayRef<int64_t> v, const char *sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

} // namespace

std::optional<CudaKernel> emitCudaPoolKernel(Operation *op,
                                             llvm::StringRef name) {
  bool average = isa<AvgPoolOp>(op);
  if (!(average || isa<MaxPoolOp>(op)) || op->getNumResults() != 1)
    return std::nullopt;
  auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto yt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto kernel = op->getAttrOfType<DenseI64ArrayAttr>("kernel_shape");
  auto strides = op->getAttrOfType<DenseI64ArrayAttr>("strides");
  auto dilations = op->getAttrOfType<DenseI64ArrayAttr>("dilations");
  auto pads = op->getAttrOfType<DenseI64ArrayAttr>("pads");
  if (!xt || !yt || !xt.hasStaticShape() || !yt.hasStaticShape() || !kernel ||
      !strides || !dilations || !pads)
    return std::nullopt;
  int64_t nsp = xt.getRank() - 2;
  if (nsp < 1 || nsp > 3 || (int64_t)kernel.size() != nsp ||
      (int64_t)strides.size() != nsp || (int64_t)dilations.size() != nsp ||
      (int64_t)pads.size() != 2 * nsp || yt.getRank() != xt.getRank())
    return std::nullopt;
  std::optional<codegen::ScalarType> st =
      codegen::scalarTypeOf(xt.getElementType());
  // Averages are of floats; a max also of integers (not bool).
  if (!st || *st == codegen::ScalarType::Bool ||
      (average && !codegen::isFloatType(*st)))
    return std::nullopt;
  bool isFloat = codegen::isFloatType(*st);
  int64_t total = yt.getNumElements();
  if (total == 0 || xt.getNumElements() >= (int64_t(1) << 62))
    return std::nullopt;

  auto layout = op->getAttrOfType<StringAttr>("layout");
  if (layout && layout.getValue() != "nhwc")
    return std::nullopt;
  bool channelsLast = static_cast<bool>(layout);
  std::string storage = codegen::storageCType(*st);
  std::string compute = codegen::computeCType(*st);
  // Spatial dims: [2, rank) channels first, [1, rank - 1) channels last.
  ArrayRef<int64_t> in = xt.getShape().drop_front(channelsLast ? 1 : 2);
  ArrayRef<int64_t> out = yt.getShape().drop_front(channelsLast ? 1 : 2);
  int64_t channels = channelsLast ? xt.getShape().back() : 1;
  if (channelsLast) {
    in = in.drop_back();
    out = out.drop_back();
  }
  int64_t inPlane = 1;
  for (int64_t d : in)
    inPlane *= d;

  CudaKernel k;
  std::string head = beginElementKernel(
      k, op, name, total,
      "const " + storage + " *__restrict__ in0, " + storage +
          " *__restrict__ out0");

  std::string s;
  s += "// " + k.name + ": " + (average ? "avg_pool" : "max_pool") + " over [" +
       join(yt.getShape(), ", ") + "] (window " +
       join(kernel.asArrayRef(), "x") + ", strides " +
       join(strides.asArrayRef(), "x") + ", dilations " +
       join(dilations.asArrayRef(), "x") + ", pads " +
       join(pads.asArrayRef(), ",") + ")" +
       (channelsLast ? ", channels last" : "") + "\n";
  s += "// ONNX nodes:";
  for (const std::string &n : k.sourceNodes)
    s += " " + n;
  s += "\n// mapping: one thread per output element, grid-stride; positions "
       "outside the input are skipped\n";
  s += head + " {\n";
  s += elementLoopHead(k, total);
  s += "    long long kiln_r = kiln_i;\n";
  if (channelsLast) {
    s += "    const int kiln_c = (int)(kiln_r % " + std::to_string(channels) +
         "LL);\n";
    s += "    kiln_r /= " + std::to_string(channels) + "LL;\n";
  }
  for (int64_t d = nsp - 1; d >= 0; --d) {
    s += "    const int o" + std::to_string(d) + " = (int)(kiln_r % " +
         std::to_string(out[d]) + "LL);\n";
    s += "    kiln_r /= " + std::to_string(out[d]) + "LL;\n";
  }
  if (channelsLast)
    s += "    const " + storage + " *kiln_x = in0 + kiln_r * " +
         std::to_string(inPlane * channels) +
         "LL + kiln_c; // image n, channel c\n";
  else
    s += "    const " + storage + " *kiln_x = in0 + kiln_r * " +
         std::to_string(inPlane) + "LL; // the (n, c) plane\n";
  bool includePad = false;
  if (average) {
    auto attr = op->getAttrOfType<IntegerAttr>("count_include_pad");
    includePad = attr && attr.getInt() != 0;
    s += "    float kiln_sum = 0.0f;\n";
    if (includePad) {
      // The divisor: the window's positions inside the padded input, per
      // dim.
      s += "    int kiln_count = 1;\n";
      for (int64_t d = 0; d < nsp; ++d) {
        std::string ds = std::to_string(d);
        s += "    {\n      int c = 0;\n";
        s += "      for (int k = 0; k < " + std::to_string(kernel[d]) +
             "; ++k) {\n";
        s += "        const int p = o" + ds + " * " +
             std::to_string(strides[d]) + " - " + std::to_string(pads[d]) +
             " + k * " + std::to_string(dilations[d]) + ";\n";
        s += "        c += p >= -" + std::to_string(pads[d]) + " && p < " +
             std::to_string(in[d] + pads[nsp + d]) + ";\n";
        s += "      }\n      kiln_count *= c;\n    }\n";
      }
    } else {
      s += "    int kiln_count = 0;\n";
    }
  } else {
    // The reference's start: -inf, or the integer type's lowest value.
    std::string lowest =
        isFloat ? "-INFINITY" : "kiln_lowest<" + compute + ">()";
    s += "    " + compute + " kiln_m = " + lowest + ";\n";
    if (isFloat)
      s += "    bool kiln_nan = false;\n";
  }
  std::string indent = "    ";
  std::string offset;
  for (int64_t d = 0; d < nsp; ++d) {
    std::string ds = std::to_string(d);
    s += indent + "#pragma unroll\n";
    s += indent + "for (int k" + ds + " = 0; k" + ds + " < " +
         std::to_string(kernel[d]) + "; ++k" + ds + ") {\n";
    indent += "  ";
    s += indent + "const int p" + ds + " = o" + ds + " * " +
         std::to_string(strides[d]) + " - " + std::to_string(pads[d]) + " + k" +
         ds + " * " + std::to_string(dilations[d]) + ";\n";
    s += indent + "if (p" + ds + " < 0 || p" + ds +
         " >= " + std::to_string(in[d]) + ")\n" + indent + "  continue;\n";
    int64_t stride = channels;
    for (int64_t e = d + 1; e < nsp; ++e)
      stride *= in[e];
    offset += (offset.empty() ? "" : " + ") + std::string("p") + ds +
              (stride == 1 ? "" : " * " + std::to_string(stride));
  }
  if (average) {
    s += indent + "kiln_sum += (float)kiln_x[" + offset + "];\n";
    if (!includePad)
      s += indent + "++kiln_count;\n";
  } else {
    s += indent + "const " + compute + " kiln_v = (" + compute + ")kiln_x[" +
         offset + "];\n";
    if (isFloat)
      s += indent + "kiln_nan |= kiln_v != kiln_v;\n";
    s += indent + "kiln_m = kiln_v > kiln_m ? kiln_v : kiln_m;\n";
  }
  for (int64_t d = 0; d < nsp; ++d) {
    indent.resize(indent.size() - 2);
    s += indent + "}\n";
  }
  if (average)
    s += "    out0[kiln_i] = " + storage +
         "(kiln_sum / (float)kiln_count); // an empty window: 0/0, NaN\n";
  else
    s += "    out0[kiln_i] = " +
         (isFloat ? storage + "(kiln_nan ? (" + compute + ")NAN : kiln_m)"
                  : "(" + storage + ")kiln_m") +
         ";\n";
  s += "  }\n}\n";
  k.definition = s;
  return k;
}

} // namespace kiln
