//===- OnnxRandom.cpp - ONNX random generators ----------------------------===//
//
// This file implements the mappings of RandomUniform, RandomNormal, their
// -Like forms, Bernoulli and Multinomial onto kiln.random_uniform,
// kiln.random_normal and kiln.multinomial. Kiln's draws are a pure function
// of the seed (docs/op-semantics.md): the node's `seed` attribute (its float
// bits) when present, else a seed derived from the node's first output name,
// so a model gives the same values on every run and path. Bernoulli is a
// uniform draw below the probability, cast to the output dtype.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"
#include "passes/TensorConversion.h"

#include <cstring>

namespace kiln {
namespace tracer {
namespace {

/// The kiln seed of the node: the bits of ONNX's float seed, or (with bit
/// 32 set, so that no float seed gives it) an FNV-1a hash of the first
/// output's name (of the empty name for a node that names no output: a
/// hostile file's; its result is then bound to nothing).
int64_t seedOf(NodeContext &nc) {
  if (nc.hasAttr("seed")) {
    float seed = nc.attrFloat("seed", 0.0f);
    uint32_t bits;
    std::memcpy(&bits, &seed, sizeof(bits));
    return bits;
  }
  uint32_t hash = 2166136261u;
  const std::string &name =
      nc.node().output_size() ? nc.node().output(0) : std::string();
  for (char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return (int64_t(1) << 32) | hash;
}

/// The element type of ONNX attribute `dtype`, `dflt` when absent; null
/// after an error.
mlir::Type dtypeAttr(NodeContext &nc, mlir::Type dflt) {
  if (!nc.hasAttr("dtype"))
    return dflt;
  int64_t code = nc.attrInt("dtype", 0);
  std::optional<DType> dtype = dtypeFromOnnx(static_cast<int32_t>(code));
  if (!dtype) {
    nc.setError(strCat("unsupported dtype ",
                       onnxTypeName(static_cast<int32_t>(code)), " ",
                       supportedOnnxTypesNote()));
    return {};
  }
  return toMlirElementType(nc.ctx(), *dtype);
}

/// A float dtype for a draw; an error naming the op otherwise.
bool checkFloat(NodeContext &nc, mlir::Type t) {
  if (t && mlir::isa<mlir::FloatType>(t) && t.getIntOrFloatBitWidth() >= 16)
    return true;
  if (t)
    nc.setError("unsupported dtype for a random draw (f16, bf16, f32 or f64)");
  return false;
}

/// RandomUniform / RandomNormal (shape attribute) and their -Like forms
/// (the shape of input 0).
MappingFn randomMapping(bool normal, bool like) {
  return [normal, like](NodeContext &nc) -> LogicalResult {
    Value shape;
    mlir::Type dflt = nc.builder().getF32Type();
    if (like) {
      shape = nc.shapeOf(nc.input(0));
      dflt = nc.elemOf(nc.input(0));
    } else {
      std::optional<std::vector<int64_t>> dims = nc.attrInts("shape");
      if (!dims)
        return nc.fail("attribute 'shape' is required");
      shape = nc.constI64(*dims);
    }
    mlir::Type dtype = dtypeAttr(nc, dflt);
    if (!checkFloat(nc, dtype))
      return mlir::failure();
    llvm::SmallVector<mlir::NamedAttribute> attrs = {
        nc.aType("dtype", dtype), nc.aInt("seed", seedOf(nc))};
    if (normal) {
      attrs.push_back(nc.aFloat("mean", nc.attrFloat("mean", 0.0f)));
      attrs.push_back(nc.aFloat("scale", nc.attrFloat("scale", 1.0f)));
    } else {
      attrs.push_back(nc.aFloat("low", nc.attrFloat("low", 0.0f)));
      attrs.push_back(nc.aFloat("high", nc.attrFloat("high", 1.0f)));
    }
    return nc.setOutput(
        0, nc.op(normal ? "kiln.random_normal" : "kiln.random_uniform", {shape},
                 attrs));
  };
}

/// Bernoulli-15: 1 where a uniform draw in [0, 1) is below the probability.
LogicalResult mapBernoulli(NodeContext &nc) {
  Value p = nc.input(0);
  mlir::Type elem = nc.elemOf(p);
  if (!checkFloat(nc, elem))
    return mlir::failure();
  mlir::Type dtype = dtypeAttr(nc, elem);
  if (!dtype)
    return mlir::failure();
  Value u = nc.op("kiln.random_uniform", {nc.shapeOf(p)},
                  {nc.aType("dtype", elem), nc.aInt("seed", seedOf(nc)),
                   nc.aFloat("low", 0.0), nc.aFloat("high", 1.0)});
  return nc.setOutput(0, nc.cast(nc.op("kiln.less", {u, p}), dtype));
}

/// Multinomial-7: sample_size draws per row of unnormalized
/// log-probabilities, i32 unless `dtype` says i64.
LogicalResult mapMultinomial(NodeContext &nc) {
  Value x = nc.input(0);
  if (!checkFloat(nc, nc.elemOf(x)))
    return mlir::failure();
  mlir::Type dtype = dtypeAttr(nc, nc.builder().getIntegerType(32));
  if (!dtype)
    return mlir::failure();
  if (!dtype.isSignlessInteger(32) && !dtype.isSignlessInteger(64))
    return nc.fail("unsupported dtype for Multinomial (int32 or int64)");
  return nc.setOutput(
      0, nc.op("kiln.multinomial", {x},
               {nc.aType("dtype", dtype),
                nc.aInt("sample_size", nc.attrInt("sample_size", 1)),
                nc.aInt("seed", seedOf(nc))}));
}

} // namespace

void addRandomMappings(MappingRegistry &r) {
  addMapping(r, "RandomUniform", randomMapping(false, false));
  addMapping(r, "RandomNormal", randomMapping(true, false));
  addMapping(r, "RandomUniformLike", randomMapping(false, true));
  addMapping(r, "RandomNormalLike", randomMapping(true, true));
  addMapping(r, "Bernoulli", mapBernoulli, 15);
  addMapping(r, "Multinomial", mapMultinomial, 7);
}

} // namespace tracer
} // namespace kiln
