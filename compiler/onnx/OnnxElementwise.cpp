//===- OnnxElementwise.cpp - Elementwise ONNX ops to kiln
//------------------===//
//
// This file implements the mappings of the elementwise ONNX operators:
// binary arithmetic, comparisons, logic and bitwise ops, the variadic
// Sum/Mean/Max/Min (chains of binary ops), unary math and activations, Cast
// and CastLike, Clip (max/min, either bound optional), Where, and the
// inference-time passthroughs Identity and Dropout.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

#include "passes/TensorConversion.h"

namespace kiln {
namespace tracer {
namespace {

/// Binary broadcast op: kiln.<name>(input0, input1).
MappingFn binary(std::string name) {
  return [name](NodeContext &nc) {
    return nc.setOutput(0, nc.op(name, {nc.input(0), nc.input(1)}));
  };
}

/// Unary op with attributes copied as F32 from the node (name, default).
MappingFn unary(std::string name,
                std::vector<std::pair<std::string, float>> floatAttrs = {}) {
  return [name, floatAttrs](NodeContext &nc) {
    llvm::SmallVector<mlir::NamedAttribute> attrs;
    for (const auto &[attr, dflt] : floatAttrs)
      attrs.push_back(nc.aFloat(attr, nc.attrFloat(attr, dflt)));
    return nc.setOutput(0, nc.op(name, {nc.input(0)}, attrs));
  };
}

/// Sum/Mean/Max/Min: a left-to-right chain of binary ops.
MappingFn variadic(std::string name, bool mean) {
  return [name, mean](NodeContext &nc) {
    llvm::SmallVector<Value> in = nc.inputs();
    if (in.empty())
      return nc.fail("expects at least one input");
    Value acc = in[0];
    for (size_t i = 1; i < in.size(); ++i)
      acc = nc.op(name, {acc, in[i]});
    if (mean && in.size() > 1)
      acc = nc.op("kiln.div",
                  {acc, nc.scalarLike(static_cast<double>(in.size()), acc)});
    return nc.setOutput(0, acc);
  };
}

LogicalResult mapCast(NodeContext &nc) {
  int64_t to = nc.attrInt("to", 0);
  std::optional<DType> dtype = dtypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype)
    return nc.fail(strCat("unsupported dtype: cast to ",
                          onnxTypeName(static_cast<int32_t>(to)), " ",
                          supportedOnnxTypesNote()));
  Value x = nc.input(0);
  mlir::Type elem = toMlirElementType(nc.ctx(), *dtype);
  // A cast to the same type is still an explicit op in ONNX; keep the value.
  return nc.setOutput(
      0, nc.castSaturating(x, elem, nc.attrInt("saturate", 1) != 0));
}

/// BitCast-26: kiln.bitcast to `to` (the widths are checked by the op).
LogicalResult mapBitCast(NodeContext &nc) {
  int64_t to = nc.attrInt("to", 0);
  std::optional<DType> dtype = dtypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype)
    return nc.fail(strCat("unsupported dtype: bitcast to ",
                          onnxTypeName(static_cast<int32_t>(to)), " ",
                          supportedOnnxTypesNote()));
  return nc.setOutput(
      0, nc.op("kiln.bitcast", {nc.input(0)},
               {nc.aType("to", toMlirElementType(nc.ctx(), *dtype))}));
}

LogicalResult mapCastLike(NodeContext &nc) {
  return nc.setOutput(0, nc.castSaturating(nc.input(0), nc.elemOf(nc.input(1)),
                                           nc.attrInt("saturate", 1) != 0));
}

LogicalResult mapPow(NodeContext &nc) {
  Value base = nc.input(0);
  Value exp = nc.cast(nc.input(1), nc.elemOf(base));
  return nc.setOutput(0, nc.op("kiln.pow", {base, exp}));
}

LogicalResult mapClip(NodeContext &nc) {
  Value x = nc.input(0);
  Value lo, hi;
  if (nc.version() < 11) {
    if (nc.hasAttr("min"))
      lo = nc.scalarLike(nc.attrFloat("min", 0), x);
    if (nc.hasAttr("max"))
      hi = nc.scalarLike(nc.attrFloat("max", 0), x);
  } else {
    lo = nc.input(1);
    hi = nc.input(2);
  }
  if (lo)
    x = nc.op("kiln.max", {x, nc.cast(lo, nc.elemOf(x))});
  if (hi)
    x = nc.op("kiln.min", {x, nc.cast(hi, nc.elemOf(x))});
  return nc.setOutput(0, x);
}

LogicalResult mapMod(NodeContext &nc) {
  return nc.setOutput(0, nc.op("kiln.mod", {nc.input(0), nc.input(1)},
                               {nc.aInt("fmod", nc.attrInt("fmod", 0))}));
}

LogicalResult mapBitShift(NodeContext &nc) {
  std::string dir = nc.attrString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return nc.fail("attribute 'direction' must be LEFT or RIGHT, got '" + dir +
                   "'");
  return nc.setOutput(
      0, nc.op("kiln.bit_shift", {nc.input(0), nc.input(1)},
               {nc.aStr("direction", dir == "LEFT" ? "left" : "right")}));
}

LogicalResult mapIsInf(NodeContext &nc) {
  return nc.setOutput(
      0, nc.op("kiln.is_inf", {nc.input(0)},
               {nc.aInt("detect_positive", nc.attrInt("detect_positive", 1)),
                nc.aInt("detect_negative", nc.attrInt("detect_negative", 1))}));
}

LogicalResult mapGelu(NodeContext &nc) {
  std::string approx = nc.attrString("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return nc.fail("attribute 'approximate' must be 'none' or 'tanh', got '" +
                   approx + "'");
  return nc.setOutput(
      0, nc.op("kiln.gelu", {nc.input(0)}, {nc.aStr("approximate", approx)}));
}

LogicalResult mapIdentity(NodeContext &nc) {
  return nc.setOutput(0, nc.input(0));
}

LogicalResult mapDropout(NodeContext &nc) {
  Value x = nc.input(0);
  if (nc.version() >= 12 && nc.hasInput(2)) {
    std::optional<std::vector<int64_t>> training = nc.constInts(nc.input(2));
    if (!training || training->size() != 1)
      return nc.fail("unsupported: input 'training_mode' must be a constant for "
                     "inference; Kiln traces models for inference only");
    if ((*training)[0] != 0) {
      double ratio = 0.5;
      if (nc.hasInput(1)) {
        std::optional<std::vector<double>> r = nc.constFloats(nc.input(1));
        if (!r || r->size() != 1)
          return nc.fail("training_mode is true and the ratio is not a "
                         "constant; Kiln supports Dropout for inference only");
        ratio = (*r)[0];
      }
      if (ratio != 0)
        return nc.fail(strCat("training_mode is true with a ratio of ", ratio,
                              "; Kiln supports Dropout for inference only (set "
                              "training_mode to false)"));
    }
  }
  if (failed(nc.setOutput(0, x)))
    return mlir::failure();
  if (nc.wantsOutput(1)) {
    mlir::Type i1 = nc.builder().getI1Type();
    Value mask = nc.op("kiln.expand", {nc.constFill(1, i1), nc.shapeOf(x)});
    return nc.setOutput(1, mask);
  }
  return mlir::success();
}

LogicalResult mapWhere(NodeContext &nc) {
  return nc.setOutput(
      0, nc.op("kiln.where", {nc.input(0), nc.input(1), nc.input(2)}));
}

LogicalResult mapPRelu(NodeContext &nc) {
  Value x = nc.input(0);
  return nc.setOutput(
      0, nc.op("kiln.prelu", {x, nc.cast(nc.input(1), nc.elemOf(x))}));
}

} // namespace

void addElementwiseMappings(MappingRegistry &r) {
  // Binary arithmetic (version 7 introduced multidirectional broadcasting).
  for (auto [onnx, kiln] : {std::pair{"Add", "kiln.add"},
                            {"Sub", "kiln.sub"},
                            {"Mul", "kiln.mul"},
                            {"Div", "kiln.div"},
                            {"And", "kiln.and"},
                            {"Or", "kiln.or"},
                            {"Xor", "kiln.xor"},
                            {"Equal", "kiln.equal"},
                            {"Less", "kiln.less"},
                            {"Greater", "kiln.greater"},
                            {"LessOrEqual", "kiln.less_equal"},
                            {"GreaterOrEqual", "kiln.greater_equal"},
                            {"BitwiseAnd", "kiln.bitwise_and"},
                            {"BitwiseOr", "kiln.bitwise_or"},
                            {"BitwiseXor", "kiln.bitwise_xor"}})
    addMapping(r, onnx, binary(kiln), 7);
  addMapping(r, "Pow", mapPow, 7);
  addMapping(r, "Mod", mapMod);
  addMapping(r, "BitShift", mapBitShift);
  addMapping(r, "PRelu", mapPRelu, 7);

  // Variadic (version 6: same shapes; 8: broadcasting; a chain covers both).
  addMapping(r, "Sum", variadic("kiln.add", false), 6);
  addMapping(r, "Mean", variadic("kiln.add", true), 6);
  addMapping(r, "Max", variadic("kiln.max", false), 6);
  addMapping(r, "Min", variadic("kiln.min", false), 6);

  // Unary without attributes (version 1 of some had consumed_inputs).
  for (auto [onnx, kiln] : {std::pair{"Abs", "kiln.abs"},
                            {"Neg", "kiln.neg"},
                            {"Sign", "kiln.sign"},
                            {"Exp", "kiln.exp"},
                            {"Log", "kiln.log"},
                            {"Sqrt", "kiln.sqrt"},
                            {"Reciprocal", "kiln.reciprocal"},
                            {"Floor", "kiln.floor"},
                            {"Ceil", "kiln.ceil"},
                            {"Sin", "kiln.sin"},
                            {"Cos", "kiln.cos"},
                            {"Tan", "kiln.tan"},
                            {"Asin", "kiln.asin"},
                            {"Acos", "kiln.acos"},
                            {"Atan", "kiln.atan"},
                            {"Sinh", "kiln.sinh"},
                            {"Cosh", "kiln.cosh"},
                            {"Asinh", "kiln.asinh"},
                            {"Acosh", "kiln.acosh"},
                            {"Atanh", "kiln.atanh"},
                            {"Erf", "kiln.erf"},
                            {"Round", "kiln.round"},
                            {"Not", "kiln.not"},
                            {"BitwiseNot", "kiln.bitwise_not"},
                            {"Relu", "kiln.relu"},
                            {"Sigmoid", "kiln.sigmoid"},
                            {"Tanh", "kiln.tanh"},
                            {"Softplus", "kiln.softplus"},
                            {"Softsign", "kiln.softsign"},
                            {"Mish", "kiln.mish"},
                            {"HardSwish", "kiln.hard_swish"},
                            {"IsNaN", "kiln.is_nan"}})
    addMapping(r, onnx, unary(kiln));

  // Unary with float attributes.
  addMapping(r, "LeakyRelu", unary("kiln.leaky_relu", {{"alpha", 0.01f}}), 6);
  addMapping(r, "Elu", unary("kiln.elu", {{"alpha", 1.0f}}), 6);
  addMapping(r, "Celu", unary("kiln.celu", {{"alpha", 1.0f}}));
  addMapping(r, "Selu",
             unary("kiln.selu", {{"alpha", 1.67326319217681884765625f},
                                 {"gamma", 1.05070102214813232421875f}}),
             6);
  addMapping(r, "HardSigmoid",
             unary("kiln.hard_sigmoid", {{"alpha", 0.2f}, {"beta", 0.5f}}), 6);
  addMapping(r, "ThresholdedRelu",
             unary("kiln.thresholded_relu", {{"alpha", 1.0f}}));
  addMapping(r, "Shrink",
             unary("kiln.shrink", {{"bias", 0.0f}, {"lambd", 0.5f}}));
  addMapping(r, "Swish", unary("kiln.swish", {{"alpha", 1.0f}}));
  addMapping(r, "Gelu", mapGelu);
  addMapping(r, "IsInf", mapIsInf);

  // Types, selection, passthroughs.
  addMapping(r, "Cast", mapCast, 6);
  addMapping(r, "BitCast", mapBitCast, 26);
  addMapping(r, "CastLike", mapCastLike);
  addMapping(r, "Clip", mapClip, 6);
  addMapping(r, "Where", mapWhere);
  addMapping(r, "Identity", mapIdentity);
  addMapping(r, "Dropout", mapDropout, 7);
}

} // namespace tracer
} // namespace kiln
