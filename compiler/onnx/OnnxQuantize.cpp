//===- OnnxQuantize.cpp - ONNX (de)quantization as kiln primitives --------===//
//
// This file implements QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear for the 2-, 4-, 8- and 16-bit (and int32) integer
// types and the float8 types, as
// compositions of kiln ops: casts, the affine map with the scale and the
// zero point (per tensor, or per axis through a reshape that broadcasts them
// along `axis`), round-half-to-even and saturation (float8: the conversion
// rounds, saturation is ONNX's `saturate`). Blocked quantization is
// rejected.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

#include "passes/TensorConversion.h"

namespace kiln {
namespace tracer {
namespace {

/// Reshapes a 1-D per-axis parameter to broadcast along `axis` of x.
Value alongAxis(NodeContext &nc, Value param, Value x) {
  int64_t rank = nc.rankOf(x);
  if (!param || nc.rankOf(param) != 1 || rank <= 1)
    return param;
  std::optional<int64_t> axis = nc.normAxis(nc.attrInt("axis", 1), rank);
  if (!axis)
    return Value();
  std::vector<int64_t> shape(static_cast<size_t>(rank - *axis), 1);
  shape[0] = -1;
  return nc.reshape(param, shape);
}

LogicalResult checkNotBlocked(NodeContext &nc) {
  if (nc.attrInt("block_size", 0) != 0)
    return nc.fail("blocked quantization (block_size) is not supported");
  return mlir::success();
}

/// Saturation bounds of an integer element type.
std::optional<std::pair<double, double>> bounds(mlir::Type t) {
  if (t.isUnsignedInteger(8))
    return std::make_pair(0.0, 255.0);
  if (t.isSignlessInteger(8) || t.isSignedInteger(8))
    return std::make_pair(-128.0, 127.0);
  if (auto it = mlir::dyn_cast<mlir::IntegerType>(t);
      it && (it.getWidth() == 4 || it.getWidth() == 2)) {
    double n = double(1 << it.getWidth());
    return it.isUnsigned() ? std::make_pair(0.0, n - 1)
                           : std::make_pair(-n / 2, n / 2 - 1);
  }
  if (t.isUnsignedInteger(16))
    return std::make_pair(0.0, 65535.0);
  if (t.isSignlessInteger(16) || t.isSignedInteger(16))
    return std::make_pair(-32768.0, 32767.0);
  if (t.isSignlessInteger(32) || t.isSignedInteger(32))
    return std::make_pair(-2147483648.0, 2147483647.0);
  return std::nullopt;
}

LogicalResult mapDequantize(NodeContext &nc) {
  if (failed(checkNotBlocked(nc)))
    return mlir::failure();
  Value x = nc.input(0);
  Value scale = nc.input(1);
  mlir::Type fe = nc.elemOf(scale);
  Value y = nc.cast(x, fe);
  if (nc.hasInput(2))
    y = nc.op("kiln.sub", {y, alongAxis(nc, nc.cast(nc.input(2), fe), x)});
  return nc.setOutput(0, nc.op("kiln.mul", {y, alongAxis(nc, scale, x)}));
}

LogicalResult mapQuantize(NodeContext &nc) {
  if (failed(checkNotBlocked(nc)))
    return mlir::failure();
  Value x = nc.input(0);
  mlir::Type fe = nc.elemOf(x);
  mlir::Type out = nc.builder().getIntegerType(8, /*isSigned=*/false);
  if (nc.hasInput(2)) {
    out = nc.elemOf(nc.input(2));
  } else if (nc.hasAttr("output_dtype") && nc.attrInt("output_dtype", 0)) {
    int32_t t = static_cast<int32_t>(nc.attrInt("output_dtype", 0));
    std::optional<DType> d = dtypeFromOnnx(t);
    if (!d)
      return nc.fail("unsupported dtype: output_dtype " + onnxTypeName(t));
    out = toMlirElementType(nc.ctx(), *d);
  }
  if (!out)
    return mlir::failure();
  std::optional<DType> outType = fromMlirElementType(out);
  if (outType && isFloat8(*outType)) {
    // x / scale + zero point, rounded to nearest even by the conversion.
    Value q =
        nc.op("kiln.div", {x, alongAxis(nc, nc.cast(nc.input(1), fe), x)});
    if (nc.hasInput(2))
      q = nc.op("kiln.add", {q, alongAxis(nc, nc.cast(nc.input(2), fe), x)});
    return nc.setOutput(
        0, nc.castSaturating(q, out, nc.attrInt("saturate", 1) != 0));
  }
  std::optional<std::pair<double, double>> range = bounds(out);
  if (!range)
    return nc.fail("unsupported dtype: Kiln quantizes to the integer types "
                   "up to int32 and the float8 types only");
  Value q = nc.op("kiln.div", {x, alongAxis(nc, nc.cast(nc.input(1), fe), x)});
  q = nc.op("kiln.round", {q});
  if (nc.hasInput(2))
    q = nc.op("kiln.add", {q, alongAxis(nc, nc.cast(nc.input(2), fe), x)});
  q = nc.op("kiln.max", {q, nc.scalarLike(range->first, x)});
  q = nc.op("kiln.min", {q, nc.scalarLike(range->second, x)});
  return nc.setOutput(0, nc.cast(q, out));
}

LogicalResult mapDynamicQuantize(NodeContext &nc) {
  Value x = nc.input(0);
  Value zero = nc.scalarLike(0, x);
  Value hi =
      nc.op("kiln.max", {nc.reduce("kiln.reduce_max", x, {}, false), zero});
  Value lo =
      nc.op("kiln.min", {nc.reduce("kiln.reduce_min", x, {}, false), zero});
  Value scale =
      nc.op("kiln.div", {nc.op("kiln.sub", {hi, lo}), nc.scalarLike(255, x)});
  auto saturate = [&](Value v) {
    v = nc.op("kiln.max", {v, zero});
    return nc.op("kiln.min", {v, nc.scalarLike(255, x)});
  };
  Value zp = saturate(nc.op(
      "kiln.round", {nc.op("kiln.div", {nc.op("kiln.neg", {lo}), scale})}));
  Value y = saturate(nc.op(
      "kiln.add", {nc.op("kiln.round", {nc.op("kiln.div", {x, scale})}), zp}));
  mlir::Type u8 = nc.builder().getIntegerType(8, /*isSigned=*/false);
  if (failed(nc.setOutput(0, nc.cast(y, u8))) || failed(nc.setOutput(1, scale)))
    return mlir::failure();
  return nc.setOutput(2, nc.cast(zp, u8));
}


/// v (an 8-bit integer tensor) in element type `t`, minus its zero point
/// when the node gives input `zpIndex`. With `perRow`, a 1-D zero point
/// holds one value per row of a matrix operand (the second-to-last dim);
/// with `perChannel`, one per output channel of a weight (dim 0).
Value shifted(NodeContext &nc, Value v, size_t zpIndex, mlir::Type t,
              bool perRow = false, bool perChannel = false) {
  Value r = nc.cast(v, t);
  if (!nc.hasInput(zpIndex))
    return r;
  Value zp = nc.cast(nc.input(zpIndex), t);
  int64_t rank = nc.rankOf(v);
  if (zp && nc.rankOf(zp) == 1 && rank >= 2) {
    if (perRow)
      zp = nc.unsqueeze(zp, {1});
    if (perChannel) {
      std::vector<int64_t> axes;
      for (int64_t d = 1; d < rank; ++d)
        axes.push_back(d);
      zp = nc.unsqueeze(zp, axes);
    }
  }
  return nc.op("kiln.sub", {r, zp});
}

/// round(y) + the output zero point, saturated and cast to the output type
/// (the zero point's, else `dflt`'s). y is f64.
LogicalResult requantize(NodeContext &nc, Value y, size_t zpIndex,
                         mlir::Type dflt) {
  mlir::Type out = nc.hasInput(zpIndex) ? nc.elemOf(nc.input(zpIndex)) : dflt;
  if (!y || !out)
    return mlir::failure();
  std::optional<std::pair<double, double>> range = bounds(out);
  if (!range || !out.isInteger(8))
    return nc.fail("unsupported dtype: Kiln's quantized operators produce "
                   "uint8 and int8 only");
  if (nc.hasInput(zpIndex))
    y = nc.op("kiln.add", {y, nc.cast(nc.input(zpIndex), nc.elemOf(y))});
  y = nc.op("kiln.round", {y});
  y = nc.op("kiln.max", {y, nc.scalarLike(range->first, y)});
  y = nc.op("kiln.min", {y, nc.scalarLike(range->second, y)});
  return nc.setOutput(0, nc.cast(y, out));
}

/// Checks that input `index` is an 8-bit integer tensor.
LogicalResult check8Bit(NodeContext &nc, size_t index, const char *name) {
  mlir::Type t = nc.elemOf(nc.input(index));
  if (!t)
    return mlir::failure();
  if (!t.isUnsignedInteger(8) && !t.isSignlessInteger(8) &&
      !t.isSignedInteger(8))
    return nc.fail(strCat("unsupported dtype: input '", name,
                          "' must be uint8 or int8"));
  return mlir::success();
}

/// The exact integer product of two zero-shifted 8-bit matrices, in i32.
Value integerMatMul(NodeContext &nc, size_t a, size_t aZp, size_t b,
                    size_t bZp) {
  mlir::Type i32 = nc.builder().getIntegerType(32);
  return nc.op("kiln.matmul",
               {shifted(nc, nc.input(a), aZp, i32, /*perRow=*/true),
                shifted(nc, nc.input(b), bZp, i32)});
}

/// The exact convolution of two zero-shifted 8-bit tensors, in f64.
Value integerConv(NodeContext &nc, size_t x, size_t xZp, size_t w,
                  size_t wZp) {
  mlir::Type f64 = nc.builder().getF64Type();
  return traceConv(nc, shifted(nc, nc.input(x), xZp, f64),
                   shifted(nc, nc.input(w), wZp, f64, /*perRow=*/false,
                           /*perChannel=*/true));
}

LogicalResult mapMatMulInteger(NodeContext &nc) {
  if (failed(check8Bit(nc, 0, "A")) || failed(check8Bit(nc, 1, "B")))
    return mlir::failure();
  return nc.setOutput(0, integerMatMul(nc, 0, 2, 1, 3));
}

LogicalResult mapConvInteger(NodeContext &nc) {
  if (failed(check8Bit(nc, 0, "x")) || failed(check8Bit(nc, 1, "w")))
    return mlir::failure();
  return nc.setOutput(0, nc.cast(integerConv(nc, 0, 2, 1, 3),
                                 nc.builder().getIntegerType(32)));
}

/// a_scale * b_scale / y_scale in the scales' dtype (as the reference), then
/// in f64.
Value requantScale(NodeContext &nc, size_t aScale, size_t bScale,
                   size_t yScale) {
  Value a = nc.input(aScale);
  mlir::Type fe = nc.elemOf(a);
  Value m = nc.op("kiln.div", {nc.op("kiln.mul", {a, nc.cast(nc.input(bScale), fe)}),
                               nc.cast(nc.input(yScale), fe)});
  return nc.cast(m, nc.builder().getF64Type());
}

/// QLinearMatMul: inputs a, a_scale, a_zero_point, b, b_scale,
/// b_zero_point, y_scale, y_zero_point.
LogicalResult mapQLinearMatMul(NodeContext &nc) {
  if (failed(check8Bit(nc, 0, "a")) || failed(check8Bit(nc, 3, "b")))
    return mlir::failure();
  Value c = nc.cast(integerMatMul(nc, 0, 2, 3, 5), nc.builder().getF64Type());
  Value y = nc.op("kiln.mul", {c, requantScale(nc, 1, 4, 6)});
  return requantize(nc, y, 7, nc.elemOf(nc.input(0)));
}

/// QLinearConv: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point,
/// y_scale, y_zero_point, B (i32 bias); a 1-D w_scale is per channel.
LogicalResult mapQLinearConv(NodeContext &nc) {
  if (failed(check8Bit(nc, 0, "x")) || failed(check8Bit(nc, 3, "w")))
    return mlir::failure();
  mlir::Type f64 = nc.builder().getF64Type();
  Value y = integerConv(nc, 0, 2, 3, 5);
  int64_t rank = nc.rankOf(y);
  std::vector<int64_t> spatial;
  for (int64_t d = 2; d < rank; ++d)
    spatial.push_back(d - 1);
  if (nc.hasInput(8))
    y = nc.op("kiln.add",
              {y, nc.unsqueeze(nc.cast(nc.input(8), f64), spatial)});
  Value scale = requantScale(nc, 1, 4, 6);
  if (scale && nc.rankOf(scale) == 1)
    scale = nc.unsqueeze(scale, spatial);
  return requantize(nc, nc.op("kiln.mul", {y, scale}), 7,
                    nc.elemOf(nc.input(0)));
}

} // namespace

void addQuantizeMappings(MappingRegistry &r) {
  addMapping(r, "QuantizeLinear", mapQuantize);
  addMapping(r, "DequantizeLinear", mapDequantize);
  addMapping(r, "DynamicQuantizeLinear", mapDynamicQuantize);
  addMapping(r, "MatMulInteger", mapMatMulInteger, 10);
  addMapping(r, "ConvInteger", mapConvInteger, 10);
  addMapping(r, "QLinearMatMul", mapQLinearMatMul, 10);
  addMapping(r, "QLinearConv", mapQLinearConv, 10);
}

} // namespace tracer
} // namespace kiln
