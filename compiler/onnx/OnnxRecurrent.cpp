//===- OnnxRecurrent.cpp - LSTM and GRU to kiln ---------------------------===//
//
// This file implements the mappings of the ONNX recurrent operators LSTM and
// GRU onto kiln.lstm and kiln.gru, whose operand lists are fixed: the absent
// optional inputs become zeros (bias, initial states, peepholes) or full
// sequence lengths, shaped from the input (through constant_of_shape, which
// folds when the shapes are static). Non-default activations are rejected.
// RNN, which has no kiln op, is unrolled over its static sequence length.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

#include "passes/TensorConversion.h"

#include "llvm/ADT/StringExtras.h"

namespace kiln {
namespace tracer {
namespace {

/// A tensor of `shape` (a 1-D i64 value) filled with `value` of `elem`.
Value fill(NodeContext &nc, double value, mlir::Type elem, Value shape) {
  if (!shape || !elem)
    return Value();
  std::optional<DType> dtype = fromMlirElementType(elem);
  if (!dtype) {
    nc.setError("unsupported element type");
    return Value();
  }
  Tensor one = Tensor::fromVector<double>({value}, {1}).to(*dtype);
  return nc.op(
      "kiln.constant_of_shape", {shape},
      {nc.builder().getNamedAttr("value", toElementsAttr(nc.ctx(), one))});
}

/// concat of 1-D i64 pieces.
Value concatShape(NodeContext &nc, llvm::ArrayRef<Value> parts) {
  for (Value p : parts)
    if (!p)
      return Value();
  return nc.op("kiln.concat", parts, {nc.aInt("axis", 0)});
}

struct RnnCommon {
  Value x;
  int64_t numDirections = 1;
  int64_t hidden = 0;
  int64_t layout = 0;
  std::string direction;
  Value batchDim; // 1-D [1] i64
  Value seqDim;   // 1-D [1] i64
};

LogicalResult readCommon(NodeContext &nc, RnnCommon &c,
                         llvm::ArrayRef<llvm::StringRef> defaultActivations) {
  c.x = nc.input(0);
  if (nc.rankOf(c.x) != 3)
    return nc.fail("input X must be 3-D");
  c.direction = nc.attrString("direction", "forward");
  if (c.direction != "forward" && c.direction != "reverse" &&
      c.direction != "bidirectional")
    return nc.fail("unsupported direction '" + c.direction + "'");
  c.numDirections = c.direction == "bidirectional" ? 2 : 1;
  c.layout = nc.version() >= 14 ? nc.attrInt("layout", 0) : 0;
  c.hidden = nc.attrInt("hidden_size", 0);
  if (c.hidden <= 0) {
    mlir::RankedTensorType r = nc.typeOf(nc.input(2));
    if (!r || r.getRank() != 3 || r.isDynamicDim(2))
      return nc.fail("attribute 'hidden_size' is required");
    c.hidden = r.getDimSize(2);
  }
  const onnx::AttributeProto *acts = nc.attr("activations");
  if (acts) {
    size_t n = defaultActivations.size();
    if (static_cast<size_t>(acts->strings_size()) !=
        n * static_cast<size_t>(c.numDirections))
      return nc.fail("attribute 'activations' has the wrong length");
    for (int i = 0; i < acts->strings_size(); ++i)
      if (!llvm::StringRef(acts->strings(i))
               .equals_insensitive(defaultActivations[i % n]))
        return nc.fail("non-default activation '" + acts->strings(i) +
                       "' is not supported; Kiln supports the default "
                       "activations only");
  }
  int64_t batchAxis = c.layout == 0 ? 1 : 0;
  c.batchDim = nc.shapeOf(c.x, batchAxis, batchAxis + 1);
  c.seqDim = nc.shapeOf(c.x, 1 - batchAxis, 2 - batchAxis);
  return mlir::success();
}

/// Initial state: given, or zeros [D, batch, H] (layout 0) / [batch, D, H].
Value initialState(NodeContext &nc, const RnnCommon &c, size_t input) {
  mlir::Type elem = nc.elemOf(c.x);
  if (nc.hasInput(input))
    return nc.cast(nc.input(input), elem);
  Value d = nc.constI64({c.numDirections}), h = nc.constI64({c.hidden});
  Value shape = c.layout == 0 ? concatShape(nc, {d, c.batchDim, h})
                              : concatShape(nc, {c.batchDim, d, h});
  return fill(nc, 0, elem, shape);
}

Value sequenceLens(NodeContext &nc, const RnnCommon &c) {
  mlir::Type i32 = nc.builder().getI32Type();
  if (nc.hasInput(4))
    return nc.cast(nc.input(4), i32);
  // Every sequence has the full length: expand the length over the batch.
  Value len = nc.reshape(nc.cast(c.seqDim, i32), {});
  return nc.op("kiln.expand", {len, c.batchDim});
}

Value zerosOptional(NodeContext &nc, const RnnCommon &c, size_t input,
                    int64_t width) {
  mlir::Type elem = nc.elemOf(c.x);
  if (nc.hasInput(input))
    return nc.cast(nc.input(input), elem);
  return fill(nc, 0, elem, nc.constI64({c.numDirections, width * c.hidden}));
}

LogicalResult setResults(NodeContext &nc, llvm::ArrayRef<Value> r,
                         size_t expected) {
  if (r.size() != expected)
    return nc.fail("the recurrent op did not produce its results");
  for (size_t i = 0; i < r.size(); ++i)
    if (failed(nc.setOutput(i, r[i])))
      return mlir::failure();
  return mlir::success();
}

llvm::SmallVector<mlir::NamedAttribute> commonAttrs(NodeContext &nc,
                                                    const RnnCommon &c) {
  return {nc.aStr("direction", c.direction), nc.aInt("hidden_size", c.hidden),
          nc.aFloat("clip", nc.attrFloat("clip", 0.0f)),
          nc.aInt("layout", c.layout)};
}

LogicalResult mapLSTM(NodeContext &nc) {
  RnnCommon c;
  if (failed(readCommon(nc, c, {"Sigmoid", "Tanh", "Tanh"})))
    return mlir::failure();
  mlir::Type elem = nc.elemOf(c.x);
  llvm::SmallVector<Value> operands = {c.x,
                                       nc.cast(nc.input(1), elem),
                                       nc.cast(nc.input(2), elem),
                                       zerosOptional(nc, c, 3, 8),
                                       sequenceLens(nc, c),
                                       initialState(nc, c, 5),
                                       initialState(nc, c, 6),
                                       zerosOptional(nc, c, 7, 3)};
  llvm::SmallVector<mlir::NamedAttribute> attrs = commonAttrs(nc, c);
  attrs.push_back(nc.aInt("input_forget", nc.attrInt("input_forget", 0)));
  return setResults(nc, nc.ops("kiln.lstm", operands, attrs), 3);
}

LogicalResult mapGRU(NodeContext &nc) {
  RnnCommon c;
  if (failed(readCommon(nc, c, {"Sigmoid", "Tanh"})))
    return mlir::failure();
  mlir::Type elem = nc.elemOf(c.x);
  llvm::SmallVector<Value> operands = {c.x,
                                       nc.cast(nc.input(1), elem),
                                       nc.cast(nc.input(2), elem),
                                       zerosOptional(nc, c, 3, 6),
                                       sequenceLens(nc, c),
                                       initialState(nc, c, 5)};
  llvm::SmallVector<mlir::NamedAttribute> attrs = commonAttrs(nc, c);
  attrs.push_back(
      nc.aInt("linear_before_reset", nc.attrInt("linear_before_reset", 0)));
  return setResults(nc, nc.ops("kiln.gru", operands, attrs), 2);
}

/// x[start:start+1] along `axis`, without that axis.
Value step(NodeContext &nc, Value x, int64_t index, int64_t axis) {
  Value s =
      nc.op("kiln.slice", {x, nc.constI64({index}), nc.constI64({index + 1}),
                           nc.constI64({axis}), nc.constI64({1})});
  return nc.squeeze(s, {axis});
}

/// RNN has no kiln op: it is unrolled over its (static) sequence length.
LogicalResult mapRNN(NodeContext &nc) {
  constexpr int64_t kMaxUnroll = 1024;
  RnnCommon c;
  if (failed(readCommon(nc, c, {"Tanh"})))
    return mlir::failure();
  if (nc.hasInput(4))
    return nc.fail("sequence_lens is not supported for RNN (Kiln unrolls "
                   "the full sequence)");
  // readCommon accepted the default activation (Tanh) only.
  std::vector<std::string> acts(c.numDirections, "kiln.tanh");
  Value x = c.layout == 0 ? c.x : nc.transpose(c.x, {1, 0, 2});
  mlir::RankedTensorType xt = nc.typeOf(x);
  if (!xt || xt.isDynamicDim(0) || xt.getDimSize(0) > kMaxUnroll)
    return nc.fail("Kiln unrolls RNN and needs a static sequence length "
                   "(at most 1024)");
  int64_t seq = xt.getDimSize(0);
  mlir::Type fe = nc.elemOf(x);
  Value w = nc.cast(nc.input(1), fe), rw = nc.cast(nc.input(2), fe);
  Value b = zerosOptional(nc, c, 3, 2);
  Value h0 = initialState(nc, c, 5);
  if (c.layout != 0)
    h0 = nc.transpose(h0, {1, 0, 2});
  float clip = nc.attrFloat("clip", 0.0f);
  llvm::SmallVector<Value> ys, hs;
  for (int64_t d = 0; d < c.numDirections; ++d) {
    bool reverse = c.direction == "reverse" || d == 1;
    Value wt = nc.transpose(step(nc, w, d, 0), {1, 0});
    Value rt = nc.transpose(step(nc, rw, d, 0), {1, 0});
    Value bd = step(nc, b, d, 0);
    Value bias = nc.op(
        "kiln.add",
        {nc.op("kiln.slice", {bd, nc.constI64({0}), nc.constI64({c.hidden}),
                              nc.constI64({0}), nc.constI64({1})}),
         nc.op("kiln.slice",
               {bd, nc.constI64({c.hidden}), nc.constI64({2 * c.hidden}),
                nc.constI64({0}), nc.constI64({1})})});
    Value h = step(nc, h0, d, 0);
    std::vector<Value> outs(seq);
    for (int64_t i = 0; i < seq; ++i) {
      int64_t t = reverse ? seq - 1 - i : i;
      Value pre = nc.op(
          "kiln.add",
          {nc.op("kiln.add", {nc.op("kiln.matmul", {step(nc, x, t, 0), wt}),
                              nc.op("kiln.matmul", {h, rt})}),
           bias});
      if (clip > 0)
        pre = nc.op("kiln.min",
                    {nc.op("kiln.max", {pre, nc.scalarLike(-clip, pre)}),
                     nc.scalarLike(clip, pre)});
      h = nc.op(acts[d], {pre});
      outs[t] = nc.unsqueeze(h, {0});
    }
    if (nc.failed())
      return mlir::failure();
    Value y = seq == 1
                  ? outs[0]
                  : nc.op("kiln.concat",
                          llvm::SmallVector<Value>(outs.begin(), outs.end()),
                          {nc.aInt("axis", 0)});
    ys.push_back(nc.unsqueeze(y, {1}));
    hs.push_back(nc.unsqueeze(h, {0}));
  }
  Value y =
      ys.size() == 1 ? ys[0] : nc.op("kiln.concat", ys, {nc.aInt("axis", 1)});
  Value yh =
      hs.size() == 1 ? hs[0] : nc.op("kiln.concat", hs, {nc.aInt("axis", 0)});
  if (c.layout != 0) {
    y = nc.transpose(y, {2, 0, 1, 3});
    yh = nc.transpose(yh, {1, 0, 2});
  }
  if (failed(nc.setOutput(0, y)))
    return mlir::failure();
  return nc.setOutput(1, yh);
}

} // namespace

void addRecurrentMappings(MappingRegistry &r) {
  addMapping(r, "RNN", mapRNN, 7);
  addMapping(r, "LSTM", mapLSTM, 7);
  addMapping(r, "GRU", mapGRU, 7);
}

} // namespace tracer
} // namespace kiln
