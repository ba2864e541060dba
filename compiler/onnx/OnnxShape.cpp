//===- OnnxShape.cpp - Shape and data-movement ONNX ops to kiln -----------===//
//
// This file implements the mappings of the ONNX operators that move data or
// compute shapes: Reshape, Flatten, Squeeze/Unsqueeze, Transpose, Concat,
// Split, Slice, the gathers and scatters, Compress, ReverseSequence, Expand,
// Tile, Pad, CenterCropPad, Trilu, Shape and Size (folded when the dims are
// static), Constant, ConstantOfShape, Range, the window functions
// (HannWindow, HammingWindow, BlackmanWindow), OneHot, EyeLike, DepthToSpace
// and SpaceToDepth (Resize and Upsample are in OnnxResize.cpp). Older forms
// whose parameters were attributes (Slice-1, Pad-2, Squeeze-1/11,
// Unsqueeze-1/11, Split-2/11, Upsample-7) become constant operands.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

#include "passes/TensorConversion.h"

namespace kiln {
namespace tracer {
namespace {

mlir::Type i64Type(NodeContext &nc) { return nc.builder().getI64Type(); }

/// Parameter operand: input `i` cast to i64 (null when absent).
Value i64Input(NodeContext &nc, size_t i) {
  return nc.hasInput(i) ? nc.cast(nc.input(i), i64Type(nc)) : Value();
}

/// Static length of a 1-D value; nullopt (and an error) otherwise.
std::optional<int64_t> staticLength(NodeContext &nc, Value v,
                                    const char *what) {
  mlir::RankedTensorType t = nc.typeOf(v);
  if (!t)
    return std::nullopt;
  if (t.getRank() > 1 || (t.getRank() == 1 && t.isDynamicDim(0))) {
    nc.setError(strCat("'", what, "' must be a 1-D tensor of static length"));
    return std::nullopt;
  }
  return t.getRank() == 0 ? 1 : t.getDimSize(0);
}

LogicalResult mapReshape(NodeContext &nc) {
  return nc.setOutput(
      0, nc.op("kiln.reshape", {nc.input(0), i64Input(nc, 1)},
               {nc.aInt("allowzero", nc.attrInt("allowzero", 0))}));
}

LogicalResult mapFlatten(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  int64_t axis = nc.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return nc.fail(strCat("axis ", nc.attrInt("axis", 1),
                          " is out of range for rank ", rank));
  return nc.setOutput(0, nc.op("kiln.flatten", {x}, {nc.aInt("axis", axis)}));
}

/// Squeeze/Unsqueeze: axes from the attribute (before 13) or input 1.
MappingFn squeezeLike(std::string name, bool axesRequired) {
  return [name, axesRequired](NodeContext &nc) {
    Value axes;
    if (nc.version() < 13) {
      std::optional<std::vector<int64_t>> a = nc.attrInts("axes");
      if (!a && axesRequired)
        return nc.fail("attribute 'axes' is required");
      axes = nc.constI64(a.value_or(std::vector<int64_t>{}));
    } else if (nc.hasInput(1)) {
      axes = i64Input(nc, 1);
    } else {
      if (axesRequired)
        return nc.fail("input 'axes' is required");
      axes = nc.constI64({});
    }
    return nc.setOutput(0, nc.op(name, {nc.input(0), axes}));
  };
}

LogicalResult mapTranspose(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  std::vector<int64_t> perm;
  if (std::optional<std::vector<int64_t>> p = nc.attrInts("perm")) {
    for (int64_t a : *p) {
      std::optional<int64_t> n = nc.normAxis(a, rank);
      if (!n)
        return mlir::failure();
      perm.push_back(*n);
    }
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  return nc.setOutput(0, nc.transpose(x, perm));
}

LogicalResult mapConcat(NodeContext &nc) {
  llvm::SmallVector<Value> in = nc.inputs();
  if (in.empty())
    return nc.fail("expects at least one input");
  std::optional<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", 0), nc.rankOf(in[0]));
  if (!axis)
    return mlir::failure();
  if (in.size() == 1)
    return nc.setOutput(0, in[0]);
  return nc.setOutput(0, nc.op("kiln.concat", in, {nc.aInt("axis", *axis)}));
}

LogicalResult mapSplit(NodeContext &nc) {
  Value x = nc.input(0);
  mlir::RankedTensorType t = nc.typeOf(x);
  if (!t)
    return nc.fail("input is missing");
  std::optional<int64_t> axis = nc.normAxis(nc.attrInt("axis", 0), t.getRank());
  if (!axis)
    return mlir::failure();
  Value sizes;
  if (nc.version() < 13) {
    if (std::optional<std::vector<int64_t>> s = nc.attrInts("split"))
      if (!s->empty())
        sizes = nc.constI64(*s);
  } else if (nc.hasInput(1)) {
    sizes = i64Input(nc, 1);
  }
  size_t numResults = nc.numOutputs();
  if (nc.version() >= 18 && nc.hasAttr("num_outputs")) {
    int64_t n = nc.attrInt("num_outputs", 0);
    if (n <= 0 || n > kMaxNodeOutputs)
      return nc.fail(strCat("attribute 'num_outputs' = ", n,
                            " is out of range [1, ", kMaxNodeOutputs, "]"));
    if (static_cast<size_t>(n) != nc.numOutputs())
      return nc.fail(strCat("attribute 'num_outputs' = ", n,
                            " but the node has ", nc.numOutputs(), " outputs"));
    numResults = static_cast<size_t>(n);
  }
  if (!sizes) {
    if (t.isDynamicDim(*axis))
      return nc.fail("splitting a dynamic dim into equal parts is not "
                     "supported; give 'split' explicitly");
    int64_t dim = t.getDimSize(*axis);
    int64_t n = static_cast<int64_t>(numResults);
    if (n <= 0)
      return nc.fail("the number of outputs must be positive");
    int64_t chunk = (dim + n - 1) / n;
    std::vector<int64_t> s;
    for (int64_t i = 0, left = dim; i < n; ++i) {
      s.push_back(std::min(chunk, left));
      left -= s.back();
    }
    sizes = nc.constI64(s);
  } else {
    std::optional<int64_t> len = staticLength(nc, sizes, "split");
    if (!len)
      return mlir::failure();
    if (static_cast<size_t>(*len) != numResults)
      return nc.fail(strCat("'split' has ", *len, " entries but the node has ",
                            numResults, " outputs"));
  }
  llvm::SmallVector<Value> r =
      nc.ops("kiln.split", {x, sizes}, {nc.aInt("axis", *axis)});
  if (nc.failed())
    return mlir::failure();
  for (size_t i = 0; i < r.size() && i < nc.numOutputs(); ++i)
    if (failed(nc.setOutput(i, r[i])))
      return mlir::failure();
  return mlir::success();
}

LogicalResult mapSlice(NodeContext &nc) {
  Value x = nc.input(0), starts, ends, axes, steps;
  if (nc.version() < 10) {
    std::optional<std::vector<int64_t>> s = nc.attrInts("starts");
    std::optional<std::vector<int64_t>> e = nc.attrInts("ends");
    if (!s || !e)
      return nc.fail("attributes 'starts' and 'ends' are required");
    starts = nc.constI64(*s);
    ends = nc.constI64(*e);
    if (std::optional<std::vector<int64_t>> a = nc.attrInts("axes"))
      axes = nc.constI64(*a);
  } else {
    starts = i64Input(nc, 1);
    ends = i64Input(nc, 2);
    axes = i64Input(nc, 3);
    steps = i64Input(nc, 4);
  }
  std::optional<int64_t> k = staticLength(nc, starts, "starts");
  if (!k)
    return mlir::failure();
  if (!axes) {
    std::vector<int64_t> a;
    for (int64_t i = 0; i < *k; ++i)
      a.push_back(i);
    axes = nc.constI64(a);
  }
  if (!steps)
    steps = nc.constI64(std::vector<int64_t>(*k, 1));
  return nc.setOutput(0, nc.op("kiln.slice", {x, starts, ends, axes, steps}));
}

/// Gather-like op with a normalized `axis`.
MappingFn withAxis(std::string name, size_t numOperands,
                   bool reduction = false) {
  return [=](NodeContext &nc) {
    Value x = nc.input(0);
    std::optional<int64_t> axis =
        nc.normAxis(nc.attrInt("axis", 0), nc.rankOf(x));
    if (!axis)
      return mlir::failure();
    llvm::SmallVector<Value> operands;
    for (size_t i = 0; i < numOperands; ++i)
      operands.push_back(nc.input(i));
    llvm::SmallVector<mlir::NamedAttribute> attrs = {nc.aInt("axis", *axis)};
    if (reduction)
      attrs.push_back(nc.aStr("reduction", nc.attrString("reduction", "none")));
    return nc.setOutput(0, nc.op(name, operands, attrs));
  };
}

LogicalResult mapGatherND(NodeContext &nc) {
  return nc.setOutput(
      0, nc.op("kiln.gather_nd", {nc.input(0), nc.input(1)},
               {nc.aInt("batch_dims", nc.attrInt("batch_dims", 0))}));
}

LogicalResult mapScatterND(NodeContext &nc) {
  return nc.setOutput(
      0, nc.op("kiln.scatter_nd", {nc.input(0), nc.input(1), nc.input(2)},
               {nc.aStr("reduction", nc.attrString("reduction", "none"))}));
}

LogicalResult mapExpand(NodeContext &nc) {
  return nc.setOutput(0, nc.op("kiln.expand", {nc.input(0), i64Input(nc, 1)}));
}

LogicalResult mapTile(NodeContext &nc) {
  return nc.setOutput(0, nc.op("kiln.tile", {nc.input(0), i64Input(nc, 1)}));
}

/// Scatters `values` (1-D) into `base` (1-D) at constant `indices`.
Value scatterInto(NodeContext &nc, Value base, llvm::ArrayRef<int64_t> indices,
                  Value values) {
  return nc.op("kiln.scatter_elements", {base, nc.constI64(indices), values},
               {nc.aInt("axis", 0), nc.aStr("reduction", "none")});
}

LogicalResult mapPad(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  std::string mode = nc.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return nc.fail("unsupported mode '" + mode + "'");
  Value pads, value;
  if (nc.version() < 11) {
    std::optional<std::vector<int64_t>> p = nc.attrInts("pads");
    if (!p)
      return nc.fail("attribute 'pads' is required");
    pads = nc.constI64(*p);
    value = nc.scalarLike(nc.attrFloat("value", 0.0f), x);
  } else {
    pads = i64Input(nc, 1);
    if (nc.hasInput(2)) {
      value = nc.cast(nc.input(2), nc.elemOf(x));
      if (nc.rankOf(value) != 0)
        value = nc.reshape(value, {});
    } else {
      value = nc.scalarLike(0, x);
    }
    if (nc.hasInput(3)) {
      // Expand `pads` over `axes` into a full [begin..., end...] list.
      Value zeros = nc.constI64(std::vector<int64_t>(2 * rank, 0));
      std::optional<std::vector<int64_t>> axes = nc.constInts(nc.input(3));
      if (axes) {
        std::vector<int64_t> idx;
        for (int64_t a : *axes) {
          std::optional<int64_t> n = nc.normAxis(a, rank);
          if (!n)
            return mlir::failure();
          idx.push_back(*n);
        }
        size_t k = idx.size();
        for (size_t i = 0; i < k; ++i)
          idx.push_back(idx[i] + rank);
        pads = scatterInto(nc, zeros, idx, pads);
      } else {
        // Run-time axes: normalize with a Python-style modulo.
        Value a = nc.op("kiln.mod", {i64Input(nc, 3), nc.scalarI64(rank)},
                        {nc.aInt("fmod", 0)});
        Value idx = nc.op("kiln.concat",
                          {a, nc.op("kiln.add", {a, nc.scalarI64(rank)})},
                          {nc.aInt("axis", 0)});
        pads = nc.op("kiln.scatter_elements", {zeros, idx, pads},
                     {nc.aInt("axis", 0), nc.aStr("reduction", "none")});
      }
    }
  }
  return nc.setOutput(
      0, nc.op("kiln.pad", {x, pads, value}, {nc.aStr("mode", mode)}));
}

/// CenterCropPad: a centered slice where the target is smaller, a centered
/// zero pad where it is larger (the target may be a run-time value).
LogicalResult mapCenterCropPad(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  std::vector<int64_t> axes;
  if (std::optional<std::vector<int64_t>> a = nc.attrInts("axes")) {
    for (int64_t ax : *a) {
      std::optional<int64_t> n = nc.normAxis(ax, rank);
      if (!n)
        return mlir::failure();
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  int64_t k = static_cast<int64_t>(axes.size());
  Value target = i64Input(nc, 1);
  Value dims = nc.op("kiln.gather", {nc.shapeOf(x), nc.constI64(axes)},
                     {nc.aInt("axis", 0)});
  Value zero = nc.scalarI64(0), two = nc.scalarI64(2);
  Value diff = nc.op("kiln.sub", {dims, target});
  Value start = nc.op("kiln.div", {nc.op("kiln.max", {diff, zero}), two});
  Value end = nc.op("kiln.add", {start, nc.op("kiln.min", {target, dims})});
  Value cropped =
      nc.op("kiln.slice", {x, start, end, nc.constI64(axes),
                           nc.constI64(std::vector<int64_t>(k, 1))});
  Value padTotal = nc.op("kiln.max", {nc.op("kiln.neg", {diff}), zero});
  Value begin = nc.op("kiln.div", {padTotal, two});
  Value after = nc.op("kiln.sub", {padTotal, begin});
  std::vector<int64_t> idx = axes;
  for (int64_t a : axes)
    idx.push_back(a + rank);
  Value beginAfter = nc.op("kiln.concat", {begin, after}, {nc.aInt("axis", 0)});
  Value pads = scatterInto(nc, nc.constI64(std::vector<int64_t>(2 * rank, 0)),
                           idx, beginAfter);
  return nc.setOutput(0, nc.op("kiln.pad", {cropped, pads, nc.scalarLike(0, x)},
                               {nc.aStr("mode", "constant")}));
}

LogicalResult mapTrilu(NodeContext &nc) {
  Value k = nc.hasInput(1) ? i64Input(nc, 1) : nc.scalarI64(0);
  if (k && nc.rankOf(k) != 0)
    k = nc.reshape(k, {});
  return nc.setOutput(0, nc.op("kiln.trilu", {nc.input(0), k},
                               {nc.aInt("upper", nc.attrInt("upper", 1))}));
}

LogicalResult mapShape(NodeContext &nc) {
  Value x = nc.input(0);
  std::optional<int64_t> end;
  if (nc.hasAttr("end"))
    end = nc.attrInt("end", 0);
  return nc.setOutput(0, nc.shapeOf(x, nc.attrInt("start", 0), end));
}

LogicalResult mapSize(NodeContext &nc) {
  mlir::RankedTensorType t = nc.typeOf(nc.input(0));
  if (t && t.hasStaticShape())
    return nc.setOutput(0, nc.scalarI64(t.getNumElements()));
  return nc.setOutput(0, nc.op("kiln.size", {nc.input(0)}));
}

/// NonZero: kiln.non_zero (eager-only; folds when x is a constant).
LogicalResult mapNonZero(NodeContext &nc) {
  return nc.setOutput(0, nc.op("kiln.non_zero", {nc.input(0)}));
}

/// Unique-11: kiln.unique (eager-only; folds when x is a constant). Without
/// `axis` x is flattened (axis -1 in the kiln op).
LogicalResult mapUnique(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  if (rank < 0)
    return mlir::failure();
  int64_t axis = -1;
  if (nc.hasAttr("axis")) {
    std::optional<int64_t> a = nc.normAxis(nc.attrInt("axis", 0), rank);
    if (!a)
      return mlir::failure();
    axis = *a;
  }
  int64_t sorted = nc.attrInt("sorted", 1);
  if (sorted != 0 && sorted != 1)
    return nc.fail(strCat("attribute 'sorted' must be 0 or 1, got ", sorted));
  llvm::SmallVector<Value> results = nc.ops(
      "kiln.unique", {x}, {nc.aInt("axis", axis), nc.aInt("sorted", sorted)});
  if (results.size() != 4)
    return mlir::failure();
  for (size_t i = 0; i < 4; ++i)
    if (nc.wantsOutput(i) && failed(nc.setOutput(i, results[i])))
      return mlir::failure();
  return mlir::success();
}

/// Compress: the slices along `axis` (of the flattened input without one)
/// whose condition is true, as gather(x, squeeze(nonzero(condition))): a
/// data-dependent shape. A condition shorter than the axis drops the rest;
/// a longer one with a true element past the axis is the gather's index
/// error.
LogicalResult mapCompress(NodeContext &nc) {
  Value x = nc.input(0), condition = nc.input(1);
  if (nc.rankOf(condition) != 1)
    return nc.fail("'condition' must be 1-D, got rank " +
                   std::to_string(nc.rankOf(condition)));
  int64_t axis = 0;
  if (nc.hasAttr("axis")) {
    std::optional<int64_t> a = nc.normAxis(nc.attrInt("axis", 0), nc.rankOf(x));
    if (!a)
      return mlir::failure();
    axis = *a;
  } else {
    x = nc.reshape(x, {-1});
  }
  Value indices = nc.squeeze(nc.op("kiln.non_zero", {condition}), {0});
  return nc.setOutput(
      0, nc.op("kiln.gather", {x, indices}, {nc.aInt("axis", axis)}));
}

/// Reads a TENSOR attribute into a runtime tensor; records errors.
std::optional<Tensor> tensorAttr(NodeContext &nc,
                                 const onnx::AttributeProto &a) {
  Expected<ProtoTensor> t = readProtoTensor(a.t(), nc.modelDir());
  if (!t) {
    nc.setError("attribute '" + a.name() + "': " + t.status().message());
    return std::nullopt;
  }
  if (t->externalMissing) {
    nc.setError("attribute '" + a.name() +
                "': its external data file is "
                "missing");
    return std::nullopt;
  }
  return t->tensor;
}

LogicalResult mapConstant(NodeContext &nc) {
  for (const onnx::AttributeProto &a : nc.node().attribute()) {
    const std::string &n = a.name();
    if (n == "value") {
      std::optional<Tensor> t = tensorAttr(nc, a);
      return t ? nc.setOutput(0, nc.constant(*t)) : mlir::failure();
    }
    if (n == "value_float")
      return nc.setOutput(0, nc.constant(Tensor::scalar<float>(a.f())));
    if (n == "value_int")
      return nc.setOutput(0, nc.constant(Tensor::scalar<int64_t>(a.i())));
    if (n == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      return nc.setOutput(0, nc.constant(Tensor::fromVector<float>(
                                 v, {static_cast<int64_t>(v.size())})));
    }
    if (n == "value_ints")
      return nc.setOutput(0, nc.constI64(std::vector<int64_t>(a.ints().begin(),
                                                              a.ints().end())));
    if (n == "value_string" || n == "value_strings")
      return nc.fail("unsupported dtype: string constants are not "
                     "supported");
    if (n == "sparse_value")
      return nc.fail("sparse constants are not supported");
  }
  return nc.fail("has no value attribute");
}

LogicalResult mapConstantOfShape(NodeContext &nc) {
  Tensor value = Tensor::fromVector<float>({0.0f}, {1});
  if (const onnx::AttributeProto *a = nc.attr("value")) {
    std::optional<Tensor> t = tensorAttr(nc, *a);
    if (!t)
      return mlir::failure();
    if (t->numel() != 1)
      return nc.fail("attribute 'value' must hold one element");
    value = t->reshape({1});
  }
  mlir::DenseElementsAttr attr = toElementsAttr(nc.ctx(), value);
  return nc.setOutput(0, nc.op("kiln.constant_of_shape", {i64Input(nc, 0)},
                               {nc.builder().getNamedAttr("value", attr)}));
}

/// Reshapes a one-element value to rank 0.
Value toScalar(NodeContext &nc, Value v) {
  if (!v || nc.rankOf(v) == 0)
    return v;
  return nc.reshape(v, {});
}

LogicalResult mapRange(NodeContext &nc) {
  return nc.setOutput(0, nc.op("kiln.range", {toScalar(nc, nc.input(0)),
                                              toScalar(nc, nc.input(1)),
                                              toScalar(nc, nc.input(2))}));
}

/// HannWindow, HammingWindow and BlackmanWindow (opset 17): `a0 - a1
/// cos(2 pi n / N) + a2 cos(4 pi n / N)` for n in [0, size), N = size
/// (periodic) or size - 1 (symmetric), computed in f32 in the order of the
/// operators' ONNX function bodies, then cast to output_datatype. A size
/// known only at run time makes the range (and so the window) a
/// data-dependent shape.
MappingFn window(double a0, double a1, double a2) {
  return [=](NodeContext &nc) -> LogicalResult {
    auto outType = static_cast<int32_t>(nc.attrInt("output_datatype", 1));
    std::optional<DType> dtype = dtypeFromOnnx(outType);
    if (!dtype || !isFloatingPoint(*dtype))
      return nc.fail("output_datatype " + onnxTypeName(outType) +
                     " is not a float type Kiln supports");
    mlir::Type f32 = nc.builder().getF32Type();
    auto scalar = [&](double v) { return nc.constFill(v, f32); };
    Value size = toScalar(nc, nc.cast(nc.input(0), f32));
    Value n = nc.attrInt("periodic", 1) != 0
                  ? size
                  : nc.op("kiln.sub", {size, scalar(1.0)});
    Value step = nc.op("kiln.div", {scalar(6.283185307179586), n});
    Value angle =
        nc.op("kiln.mul",
              {nc.op("kiln.range", {scalar(0.0), size, scalar(1.0)}), step});
    Value y =
        nc.op("kiln.sub",
              {scalar(a0),
               nc.op("kiln.mul", {scalar(a1), nc.op("kiln.cos", {angle})})});
    if (a2 != 0.0)
      y = nc.op("kiln.add",
                {y, nc.op("kiln.mul",
                          {scalar(a2),
                           nc.op("kiln.cos",
                                 {nc.op("kiln.mul", {angle, scalar(2.0)})})})});
    return nc.setOutput(0, nc.cast(y, toMlirElementType(nc.ctx(), *dtype)));
  };
}

/// ReverseSequence: along time_axis, the first sequence_lens[b] elements of
/// each batch entry b reversed, the rest kept, as gather_elements(x, idx)
/// with idx[t, b] = t < len[b] ? len[b] - 1 - t : t broadcast over the
/// trailing dims. A length past the time dimension is gather_elements'
/// index error.
LogicalResult mapReverseSequence(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  int64_t timeAxis = nc.attrInt("time_axis", 0),
          batchAxis = nc.attrInt("batch_axis", 1);
  if (rank < 2)
    return nc.fail("'input' must have rank >= 2, got " + std::to_string(rank));
  if (!((timeAxis == 0 && batchAxis == 1) || (timeAxis == 1 && batchAxis == 0)))
    return nc.fail("time_axis and batch_axis must be 0 and 1 in some order, "
                   "got " +
                   std::to_string(timeAxis) + " and " +
                   std::to_string(batchAxis));
  Value steps = toScalar(nc, nc.shapeOf(x, timeAxis, timeAxis + 1));
  Value t = nc.op("kiln.range", {nc.scalarI64(0), steps, nc.scalarI64(1)});
  Value lens = nc.cast(nc.input(1), i64Type(nc));
  // The [time, batch] (or [batch, time]) grid of source positions.
  Value tg = nc.unsqueeze(t, {batchAxis});
  Value lg = nc.unsqueeze(lens, {timeAxis});
  Value reversed =
      nc.op("kiln.sub", {nc.op("kiln.sub", {lg, nc.scalarI64(1)}), tg});
  Value idx = nc.op("kiln.where", {nc.op("kiln.less", {tg, lg}), reversed, tg});
  if (rank > 2) {
    llvm::SmallVector<int64_t> trailing;
    for (int64_t d = 2; d < rank; ++d)
      trailing.push_back(d);
    idx = nc.op("kiln.expand", {nc.unsqueeze(idx, trailing), nc.shapeOf(x)});
  }
  return nc.setOutput(
      0, nc.op("kiln.gather_elements", {x, idx}, {nc.aInt("axis", timeAxis)}));
}

LogicalResult mapOneHot(NodeContext &nc) {
  Value indices = nc.input(0);
  int64_t outRank = nc.rankOf(indices) + 1;
  std::optional<int64_t> axis = nc.normAxis(nc.attrInt("axis", -1), outRank);
  if (!axis)
    return mlir::failure();
  // Non-integer indices are truncated toward zero (ONNX casts them).
  if (mlir::isa_and_nonnull<mlir::FloatType>(nc.elemOf(indices)))
    indices = nc.cast(indices, i64Type(nc));
  Value depth = toScalar(nc, nc.cast(nc.input(1), i64Type(nc)));
  return nc.setOutput(0, nc.op("kiln.one_hot", {indices, depth, nc.input(2)},
                               {nc.aInt("axis", *axis)}));
}

LogicalResult mapEyeLike(NodeContext &nc) {
  Value x = nc.input(0);
  mlir::RankedTensorType t = nc.typeOf(x);
  if (!t || t.getRank() != 2 || !t.hasStaticShape())
    return nc.fail("EyeLike needs a 2-D input of static shape");
  mlir::Type elem = t.getElementType();
  if (nc.hasAttr("dtype")) {
    int32_t onnxType = static_cast<int32_t>(nc.attrInt("dtype", 1));
    std::optional<DType> d = dtypeFromOnnx(onnxType);
    if (!d)
      return nc.fail("unsupported dtype " + onnxTypeName(onnxType));
    elem = toMlirElementType(nc.ctx(), *d);
  }
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  // rows * cols is an element count: at most 2^40 (checkResultSizes).
  if (rows * cols > kMaxFoldedElements)
    return nc.fail(strCat("EyeLike of ", rows, "x", cols,
                          " is larger than the constants Kiln builds at "
                          "compile time (2^24 elements)"));
  int64_t k = nc.attrInt("k", 0);
  Tensor eye = Tensor::empty(DType::F64, {rows, cols});
  double *p = eye.data<double>();
  for (int64_t i = 0; i < rows; ++i) {
    int64_t j = i + k;
    if (j >= 0 && j < cols)
      p[i * cols + j] = 1.0;
  }
  std::optional<DType> d = fromMlirElementType(elem);
  if (!d)
    return nc.fail("unsupported dtype");
  return nc.setOutput(0, nc.constant(eye.to(*d)));
}

/// DepthToSpace / SpaceToDepth on NCHW inputs with static C, H, W.
MappingFn depthSpace(bool toSpace) {
  return [toSpace](NodeContext &nc) {
    Value x = nc.input(0);
    mlir::RankedTensorType t = nc.typeOf(x);
    int64_t b = nc.attrInt("blocksize", 0);
    if (!t || t.getRank() != 4)
      return nc.fail("input must be 4-D (NCHW)");
    // b * b must not overflow: a block larger than the limit of one tensor
    // fits no input.
    if (b <= 0 || b > (int64_t(1) << 20))
      return nc.fail(
          strCat("attribute 'blocksize' = ", b, " is out of range [1, 2^20]"));
    if (t.isDynamicDim(1) || t.isDynamicDim(2) || t.isDynamicDim(3))
      return nc.fail("Kiln needs static C, H and W here");
    int64_t c = t.getDimSize(1), h = t.getDimSize(2), w = t.getDimSize(3);
    if (toSpace) {
      if (c % (b * b) != 0)
        return nc.fail("channels are not divisible by blocksize^2");
      bool crd = nc.attrString("mode", "DCR") == "CRD";
      Value r = crd ? nc.reshape(x, {-1, c / (b * b), b, b, h, w})
                    : nc.reshape(x, {-1, b, b, c / (b * b), h, w});
      r = crd ? nc.transpose(r, {0, 1, 4, 2, 5, 3})
              : nc.transpose(r, {0, 3, 4, 1, 5, 2});
      return nc.setOutput(0, nc.reshape(r, {-1, c / (b * b), h * b, w * b}));
    }
    if (h % b != 0 || w % b != 0)
      return nc.fail("H and W must be divisible by blocksize");
    Value r = nc.reshape(x, {-1, c, h / b, b, w / b, b});
    r = nc.transpose(r, {0, 3, 5, 1, 2, 4});
    return nc.setOutput(0, nc.reshape(r, {-1, c * b * b, h / b, w / b}));
  };
}

} // namespace

LogicalResult mapResize(NodeContext &nc);
LogicalResult mapUpsample(NodeContext &nc);

void addShapeMappings(MappingRegistry &r) {
  addMapping(r, "Reshape", mapReshape, 5);
  addMapping(r, "Flatten", mapFlatten);
  addMapping(r, "Squeeze", squeezeLike("kiln.squeeze", false));
  addMapping(r, "Unsqueeze", squeezeLike("kiln.unsqueeze", true));
  addMapping(r, "Transpose", mapTranspose);
  addMapping(r, "Concat", mapConcat, 4);
  addMapping(r, "Split", mapSplit, 2);
  addMapping(r, "Slice", mapSlice);
  addMapping(r, "Gather", withAxis("kiln.gather", 2));
  addMapping(r, "GatherElements", withAxis("kiln.gather_elements", 2));
  addMapping(r, "GatherND", mapGatherND);
  addMapping(r, "ScatterElements", withAxis("kiln.scatter_elements", 3, true));
  addMapping(r, "Scatter", withAxis("kiln.scatter_elements", 3, true));
  addMapping(r, "ScatterND", mapScatterND);
  addMapping(r, "Expand", mapExpand);
  addMapping(r, "Tile", mapTile, 6);
  addMapping(r, "Pad", mapPad, 2);
  addMapping(r, "Trilu", mapTrilu);
  addMapping(r, "CenterCropPad", mapCenterCropPad);
  addMapping(r, "Shape", mapShape);
  addMapping(r, "Size", mapSize);
  addMapping(r, "NonZero", mapNonZero, 9);
  addMapping(r, "Unique", mapUnique, 11);
  addMapping(r, "Compress", mapCompress, 9);
  addMapping(r, "ReverseSequence", mapReverseSequence, 10);
  addMapping(r, "Constant", mapConstant);
  addMapping(r, "ConstantOfShape", mapConstantOfShape);
  addMapping(r, "Range", mapRange);
  addMapping(r, "OneHot", mapOneHot);
  addMapping(r, "HannWindow", window(0.5, 0.5, 0.0));
  addMapping(r, "HammingWindow", window(25.0 / 46.0, 21.0 / 46.0, 0.0));
  addMapping(r, "BlackmanWindow", window(0.42, 0.5, 0.08));
  addMapping(r, "EyeLike", mapEyeLike);
  addMapping(r, "DepthToSpace", depthSpace(true));
  addMapping(r, "SpaceToDepth", depthSpace(false));
  addMapping(r, "Resize", mapResize);
  addMapping(r, "Upsample", mapUpsample, 7);
}

} // namespace tracer
} // namespace kiln
