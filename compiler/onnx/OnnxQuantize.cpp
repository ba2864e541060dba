//===- OnnxQuantize.cpp - ONNX (de)quantization as kiln primitives --------===//
//
// This file implements QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear for the 8-bit (and int32) types Kiln supports, as
// compositions of kiln ops: casts, the affine map with the scale and the
// zero point (per tensor, or per axis through a reshape that broadcasts them
// along `axis`), round-half-to-even and saturation. Blocked quantization and
// the 4-bit, 16-bit and float8 types are rejected.
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
  std::optional<std::pair<double, double>> range = bounds(out);
  if (!range)
    return nc.fail("unsupported dtype: Kiln quantizes to uint8, int8 and "
                   "int32 only");
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

} // namespace

void addQuantizeMappings(MappingRegistry &r) {
  addMapping(r, "QuantizeLinear", mapQuantize);
  addMapping(r, "DequantizeLinear", mapDequantize);
  addMapping(r, "DynamicQuantizeLinear", mapDynamicQuantize);
}

} // namespace tracer
} // namespace kiln
