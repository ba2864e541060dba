//===- OnnxNN.cpp - Neural-network ONNX ops to kiln -----------------------===//
//
// This file implements the mappings of the ONNX operators of linear algebra,
// convolution, pooling, normalization and softmax: MatMul, Gemm (transposes,
// alpha, beta and C become transpose/matmul/mul/add), Conv and ConvTranspose
// (auto_pad and output_shape resolved to pads, bias added separately), the
// pools, the normalizations (BatchNormalization for inference, Layer, RMS,
// Instance, Group, MeanVariance, Lp, LRN) and Softmax/LogSoftmax/Hardmax
// (the pre-13 flatten-to-2D forms through reshapes), and Einsum.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

namespace kiln {
namespace tracer {
namespace {

//===----------------------------------------------------------------------===//
// MatMul, Gemm, Einsum
//===----------------------------------------------------------------------===//

LogicalResult mapMatMul(NodeContext &nc) {
  return nc.setOutput(0, nc.op("kiln.matmul", {nc.input(0), nc.input(1)}));
}

LogicalResult mapGemm(NodeContext &nc) {
  Value a = nc.input(0), b = nc.input(1);
  if (nc.rankOf(a) != 2 || nc.rankOf(b) != 2)
    return nc.fail("inputs A and B must be 2-D");
  if (nc.attrInt("transA", 0))
    a = nc.transpose(a, {1, 0});
  if (nc.attrInt("transB", 0))
    b = nc.transpose(b, {1, 0});
  Value y = nc.op("kiln.matmul", {a, b});
  float alpha = nc.attrFloat("alpha", 1.0f);
  float beta = nc.attrFloat("beta", 1.0f);
  if (alpha != 1.0f)
    y = nc.op("kiln.mul", {y, nc.scalarLike(alpha, y)});
  if (nc.hasInput(2) && beta != 0.0f) {
    Value c = nc.input(2);
    if (beta != 1.0f)
      c = nc.op("kiln.mul", {c, nc.scalarLike(beta, c)});
    y = nc.op("kiln.add", {y, c});
  }
  return nc.setOutput(0, y);
}

/// Det: kiln.det (eager-only).
LogicalResult mapDet(NodeContext &nc) {
  return nc.setOutput(0, nc.op("kiln.det", {nc.input(0)}));
}

LogicalResult mapEinsum(NodeContext &nc) {
  return nc.setOutput(
      0, nc.op("kiln.einsum", nc.inputs(),
               {nc.aStr("equation", nc.attrString("equation", ""))}));
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Window attributes of a conv or pool, with auto_pad resolved.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

/// Checks the window attributes read from the node: kernel sizes, strides
/// and dilations in [1, 2^40], pads in [0, 2^40] (they divide and multiply).
LogicalResult checkWindowAttrs(NodeContext &nc, llvm::ArrayRef<int64_t> kernel,
                               llvm::ArrayRef<int64_t> strides,
                               llvm::ArrayRef<int64_t> dilations,
                               llvm::ArrayRef<int64_t> pads) {
  auto check = [&](const char *name, llvm::ArrayRef<int64_t> values,
                   int64_t minimum) -> LogicalResult {
    for (int64_t v : values)
      if (v < minimum || v > kMaxTensorElements)
        return nc.fail(strCat("attribute '", name, "' has value ", v,
                              ", outside [", minimum, ", 2^40]"));
    return mlir::success();
  };
  return mlir::success(succeeded(check("kernel_shape", kernel, 1)) &&
                       succeeded(check("strides", strides, 1)) &&
                       succeeded(check("dilations", dilations, 1)) &&
                       succeeded(check("pads", pads, 0)));
}

/// Reads strides/dilations/pads and resolves auto_pad for a forward window
/// op over x (N, C, spatial...).
LogicalResult resolveWindow(NodeContext &nc, Value x,
                            std::vector<int64_t> kernel, Window &w) {
  int64_t rank = nc.rankOf(x);
  if (rank < 3)
    return nc.fail("input must have rank >= 3 (N, C, spatial...)");
  size_t n = static_cast<size_t>(rank - 2);
  if (kernel.size() != n)
    return nc.fail(strCat("kernel_shape has ", kernel.size(),
                          " dims, the input has ", n, " spatial dims"));
  w.kernel = kernel;
  w.strides = nc.attrInts("strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = nc.attrInts("dilations").value_or(std::vector<int64_t>(n, 1));
  w.pads = nc.attrInts("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n ||
      w.pads.size() != 2 * n)
    return nc.fail("strides, dilations or pads do not match the spatial "
                   "rank of the input");
  if (failed(checkWindowAttrs(nc, w.kernel, w.strides, w.dilations, w.pads)))
    return mlir::failure();
  std::string autoPad = nc.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return mlir::success();
  if (autoPad == "VALID") {
    w.pads.assign(2 * n, 0);
    return mlir::success();
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return nc.fail("unsupported auto_pad '" + autoPad + "'");
  mlir::RankedTensorType t = nc.typeOf(x);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = t.getDimSize(static_cast<int64_t>(i + 2));
    if (in == mlir::ShapedType::kDynamic)
      return nc.fail("auto_pad " + autoPad +
                     " needs static spatial dims; export with explicit pads");
    // Every term is in [0, 2^40] (checkWindowAttrs); the products saturate
    // and shape inference rejects a saturated window.
    int64_t out = (in + w.strides[i] - 1) / w.strides[i];
    int64_t span = saturatingAdd(
        saturatingMul(std::max<int64_t>(out - 1, 0), w.strides[i]),
        saturatingAdd(saturatingMul(w.kernel[i] - 1, w.dilations[i]), 1));
    int64_t total = std::max<int64_t>(span - in, 0);
    int64_t small = total / 2, large = total - total / 2;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    w.pads[i + n] = autoPad == "SAME_UPPER" ? large : small;
  }
  return mlir::success();
}

/// Spatial kernel shape: the attribute, or the weight's dims 2...
std::optional<std::vector<int64_t>> kernelFromWeight(NodeContext &nc, Value w) {
  if (std::optional<std::vector<int64_t>> k = nc.attrInts("kernel_shape"))
    return k;
  mlir::RankedTensorType t = nc.typeOf(w);
  if (!t)
    return std::nullopt;
  std::vector<int64_t> k;
  for (int64_t d = 2; d < t.getRank(); ++d) {
    if (t.isDynamicDim(d)) {
      nc.setError("the weight's kernel dims are dynamic and kernel_shape is "
                  "absent");
      return std::nullopt;
    }
    k.push_back(t.getDimSize(d));
  }
  return k;
}

/// y + bias reshaped to [C, 1, ...] (broadcast over N and spatial dims).
Value addChannelBias(NodeContext &nc, Value y, Value bias) {
  int64_t rank = nc.rankOf(y);
  if (!bias || rank < 2)
    return y;
  std::vector<int64_t> axes;
  for (int64_t d = 1; d < rank - 1; ++d)
    axes.push_back(d);
  return nc.op("kiln.add", {y, nc.unsqueeze(bias, axes)});
}

LogicalResult mapConv(NodeContext &nc) {
  Value y = traceConv(nc, nc.input(0), nc.input(1));
  return nc.setOutput(0, addChannelBias(nc, y, nc.input(2)));
}

LogicalResult mapConvTranspose(NodeContext &nc) {
  Value x = nc.input(0), w = nc.input(1);
  std::optional<std::vector<int64_t>> kernel = kernelFromWeight(nc, w);
  if (!kernel)
    return nc.fail("cannot resolve the kernel shape");
  int64_t rank = nc.rankOf(x);
  if (rank < 3)
    return nc.fail("input must have rank >= 3 (N, C, spatial...)");
  size_t n = static_cast<size_t>(rank - 2);
  std::vector<int64_t> strides =
      nc.attrInts("strides").value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> dilations =
      nc.attrInts("dilations").value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads =
      nc.attrInts("pads").value_or(std::vector<int64_t>(2 * n, 0));
  std::vector<int64_t> outPad =
      nc.attrInts("output_padding").value_or(std::vector<int64_t>(n, 0));
  if (kernel->size() != n || strides.size() != n || dilations.size() != n ||
      pads.size() != 2 * n || outPad.size() != n)
    return nc.fail("kernel_shape, strides, dilations, pads or "
                   "output_padding do not match the spatial rank");
  if (failed(checkWindowAttrs(nc, *kernel, strides, dilations, pads)) ||
      failed(checkWindowAttrs(nc, {}, {}, {}, outPad)))
    return mlir::failure();
  std::string autoPad = nc.attrString("auto_pad", "NOTSET");
  std::optional<std::vector<int64_t>> outShape = nc.attrInts("output_shape");
  if (outShape && outShape->size() == n + 2)
    outShape = std::vector<int64_t>(outShape->begin() + 2, outShape->end());
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (autoPad == "VALID")
    pads.assign(2 * n, 0);
  if (outShape || same) {
    if (outShape && outShape->size() != n)
      return nc.fail("output_shape does not match the spatial rank");
    mlir::RankedTensorType t = nc.typeOf(x);
    for (size_t i = 0; i < n; ++i) {
      int64_t in = t.getDimSize(static_cast<int64_t>(i + 2));
      if (in == mlir::ShapedType::kDynamic)
        return nc.fail("output_shape/auto_pad need static spatial dims");
      int64_t out = outShape ? (*outShape)[i] : saturatingMul(in, strides[i]);
      if (out < 0 || out > kMaxTensorElements)
        return nc.fail(strCat("output spatial dim ", i, " would be ", out,
                              ", outside [0, 2^40]"));
      int64_t grown = saturatingAdd(
          saturatingAdd(saturatingMul(strides[i], in - 1), outPad[i]),
          saturatingAdd(saturatingMul((*kernel)[i] - 1, dilations[i]), 1));
      if (grown > kMaxTensorElements)
        return nc.fail("the transposed convolution's window is larger than "
                       "the limit of 2^40");
      int64_t total = grown - out;
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); // floor
      int64_t begin, end;
      if (autoPad == "SAME_UPPER") {
        begin = half;
        end = total - half;
      } else {
        begin = total - half;
        end = half;
      }
      if (end < 0) {
        outPad[i] += -end;
        end = 0;
      }
      if (begin < 0)
        return nc.fail("output_shape is larger than the transposed "
                       "convolution can produce with these pads");
      pads[i] = begin;
      pads[i + n] = end;
    }
  } else if (autoPad != "NOTSET" && autoPad != "VALID") {
    return nc.fail("unsupported auto_pad '" + autoPad + "'");
  }
  Value y =
      nc.op("kiln.conv_transpose", {x, w},
            {nc.aInts("strides", strides), nc.aInts("dilations", dilations),
             nc.aInts("pads", pads), nc.aInts("output_padding", outPad),
             nc.aInt("group", nc.attrInt("group", 1))});
  return nc.setOutput(0, addChannelBias(nc, y, nc.input(2)));
}

LogicalResult mapPool(NodeContext &nc, bool isMax) {
  Value x = nc.input(0);
  std::optional<std::vector<int64_t>> kernel = nc.attrInts("kernel_shape");
  if (!kernel)
    return nc.fail("attribute 'kernel_shape' is required");
  Window win;
  if (failed(resolveWindow(nc, x, *kernel, win)))
    return mlir::failure();
  if (isMax && nc.wantsOutput(1))
    return nc.fail("the Indices output of MaxPool is not supported");
  if (nc.attrInt("storage_order", 0) != 0 && nc.wantsOutput(1))
    return nc.fail("storage_order is not supported");
  llvm::SmallVector<mlir::NamedAttribute> attrs = {
      nc.aInts("kernel_shape", win.kernel), nc.aInts("strides", win.strides),
      nc.aInts("dilations", win.dilations), nc.aInts("pads", win.pads),
      nc.aInt("ceil_mode", nc.attrInt("ceil_mode", 0))};
  if (!isMax)
    attrs.push_back(
        nc.aInt("count_include_pad", nc.attrInt("count_include_pad", 0)));
  return nc.setOutput(
      0, nc.op(isMax ? "kiln.max_pool" : "kiln.avg_pool", {x}, attrs));
}

/// LpPool: (sum over the window of |x|^p)^(1/p), the sum as an average
/// pool counting the (zero) padding times the window size.
LogicalResult mapLpPool(NodeContext &nc) {
  Value x = nc.input(0);
  std::optional<std::vector<int64_t>> kernel = nc.attrInts("kernel_shape");
  if (!kernel)
    return nc.fail("attribute 'kernel_shape' is required");
  Window win;
  if (failed(resolveWindow(nc, x, *kernel, win)))
    return mlir::failure();
  int64_t p = nc.attrInt("p", 2);
  if (p <= 0)
    return nc.fail("attribute 'p' must be positive");
  int64_t windowSize = 1;
  for (int64_t k : win.kernel)
    windowSize *= k;
  Value powered =
      p == 1 ? nc.op("kiln.abs", {x})
      : p == 2
          ? nc.op("kiln.mul", {x, x})
          : nc.op("kiln.pow", {nc.op("kiln.abs", {x}), nc.scalarLike(p, x)});
  Value avg = nc.op(
      "kiln.avg_pool", {powered},
      {nc.aInts("kernel_shape", win.kernel), nc.aInts("strides", win.strides),
       nc.aInts("dilations", win.dilations), nc.aInts("pads", win.pads),
       nc.aInt("ceil_mode", nc.attrInt("ceil_mode", 0)),
       nc.aInt("count_include_pad", 1)});
  Value sum = nc.op("kiln.mul", {avg, nc.scalarLike(windowSize, x)});
  if (p == 1)
    return nc.setOutput(0, sum);
  if (p == 2)
    return nc.setOutput(0, nc.op("kiln.sqrt", {sum}));
  return nc.setOutput(
      0, nc.op("kiln.pow", {sum, nc.scalarLike(1.0 / double(p), x)}));
}

MappingFn globalPool(std::string reduction) {
  return [reduction](NodeContext &nc) {
    Value x = nc.input(0);
    int64_t rank = nc.rankOf(x);
    if (rank < 2)
      return nc.fail("input must have rank >= 2");
    std::vector<int64_t> axes;
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    if (axes.empty())
      return nc.setOutput(0, x);
    return nc.setOutput(0, nc.reduce(reduction, x, axes, true));
  };
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult mapBatchNorm(NodeContext &nc) {
  if (nc.attrInt("training_mode", 0) != 0)
    return nc.fail("training_mode=1 is not supported; Kiln traces "
                   "BatchNormalization for inference only");
  if (nc.version() < 9 && nc.attrInt("spatial", 1) != 1)
    return nc.fail("spatial=0 is not supported");
  for (size_t i = 1; i < nc.numOutputs(); ++i)
    if (nc.wantsOutput(i))
      return nc.fail("the training outputs (running/saved mean and var) "
                     "are not supported; Kiln supports inference only");
  Value x = nc.input(0);
  mlir::Type elem = nc.elemOf(x);
  llvm::SmallVector<Value> operands = {x};
  for (size_t i = 1; i <= 4; ++i)
    operands.push_back(nc.cast(nc.input(i), elem));
  return nc.setOutput(
      0, nc.op("kiln.batch_norm", operands,
               {nc.aFloat("epsilon", nc.attrFloat("epsilon", 1e-5f))}));
}

/// Zeros shaped like `like` (rank-0 when its shape is not static).
Value zerosLike(NodeContext &nc, Value like, mlir::Type elem) {
  mlir::RankedTensorType t = nc.typeOf(like);
  if (!t)
    return Value();
  Shape shape;
  if (t.hasStaticShape())
    shape.assign(t.getShape().begin(), t.getShape().end());
  return nc.constFill(0, elem, shape);
}

LogicalResult mapLayerNorm(NodeContext &nc) {
  if (nc.attrInt("stash_type", 1) != 1)
    return nc.fail("stash_type " + std::to_string(nc.attrInt("stash_type", 1)) +
                   " is not supported (Kiln computes statistics in float, "
                   "stash_type 1)");
  Value x = nc.input(0);
  std::optional<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", -1), nc.rankOf(x));
  if (!axis)
    return mlir::failure();
  Value scale = nc.cast(nc.input(1), nc.elemOf(x));
  Value bias = nc.hasInput(2) ? nc.cast(nc.input(2), nc.elemOf(x))
                              : zerosLike(nc, scale, nc.elemOf(x));
  llvm::SmallVector<Value> r =
      nc.ops("kiln.layer_norm", {x, scale, bias},
             {nc.aInt("axis", *axis),
              nc.aFloat("epsilon", nc.attrFloat("epsilon", 1e-5f))});
  if (r.size() != 3)
    return nc.fail("kiln.layer_norm did not produce three results");
  for (size_t i = 0; i < 3; ++i)
    if (failed(nc.setOutput(i, r[i])))
      return mlir::failure();
  return mlir::success();
}

LogicalResult mapRMSNorm(NodeContext &nc) {
  if (nc.attrInt("stash_type", 1) != 1)
    return nc.fail("stash_type other than 1 (float) is not supported");
  Value x = nc.input(0);
  std::optional<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", -1), nc.rankOf(x));
  if (!axis)
    return mlir::failure();
  return nc.setOutput(
      0, nc.op("kiln.rms_norm", {x, nc.cast(nc.input(1), nc.elemOf(x))},
               {nc.aInt("axis", *axis),
                nc.aFloat("epsilon", nc.attrFloat("epsilon", 1e-5f))}));
}

LogicalResult mapInstanceNorm(NodeContext &nc) {
  Value x = nc.input(0);
  return nc.setOutput(
      0, nc.op("kiln.instance_norm",
               {x, nc.cast(nc.input(1), nc.elemOf(x)),
                nc.cast(nc.input(2), nc.elemOf(x))},
               {nc.aFloat("epsilon", nc.attrFloat("epsilon", 1e-5f))}));
}

LogicalResult mapGroupNorm(NodeContext &nc) {
  if (nc.attrInt("stash_type", 1) != 1)
    return nc.fail("stash_type other than 1 (float) is not supported");
  Value x = nc.input(0);
  int64_t groups = nc.attrInt("num_groups", 0);
  if (groups <= 0)
    return nc.fail("attribute 'num_groups' must be positive");
  Value scale = nc.cast(nc.input(1), nc.elemOf(x));
  Value bias = nc.cast(nc.input(2), nc.elemOf(x));
  if (nc.version() < 21) {
    // GroupNormalization-18: one scale/bias per group; repeat per channel.
    mlir::RankedTensorType t = nc.typeOf(x);
    if (!t || t.getRank() < 2 || t.isDynamicDim(1))
      return nc.fail("GroupNormalization-18 needs a static channel dim");
    int64_t c = t.getDimSize(1);
    if (c % groups != 0)
      return nc.fail(strCat("channels (", c,
                            ") are not divisible by "
                            "num_groups (",
                            groups, ")"));
    auto expand = [&](Value v) {
      Value g = nc.reshape(v, {groups, 1});
      g = nc.op("kiln.expand", {g, nc.constI64({groups, c / groups})});
      return nc.reshape(g, {c});
    };
    scale = expand(scale);
    bias = expand(bias);
  }
  return nc.setOutput(
      0, nc.op("kiln.group_norm", {x, scale, bias},
               {nc.aInt("num_groups", groups),
                nc.aFloat("epsilon", nc.attrFloat("epsilon", 1e-5f))}));
}

LogicalResult mapMVN(NodeContext &nc) {
  Value x = nc.input(0);
  std::vector<int64_t> axes =
      nc.attrInts("axes").value_or(std::vector<int64_t>{0, 2, 3});
  Value mean = nc.reduce("kiln.reduce_mean", x, axes, true);
  Value meanSq =
      nc.reduce("kiln.reduce_mean", nc.op("kiln.mul", {x, x}), axes, true);
  Value var = nc.op("kiln.sub", {meanSq, nc.op("kiln.mul", {mean, mean})});
  Value std =
      nc.op("kiln.add", {nc.op("kiln.sqrt", {var}), nc.scalarLike(1e-9, x)});
  return nc.setOutput(0,
                      nc.op("kiln.div", {nc.op("kiln.sub", {x, mean}), std}));
}

LogicalResult mapLpNorm(NodeContext &nc) {
  Value x = nc.input(0);
  std::optional<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", -1), nc.rankOf(x));
  if (!axis)
    return mlir::failure();
  int64_t p = nc.attrInt("p", 2);
  Value norm;
  if (p == 1)
    norm = nc.reduce("kiln.reduce_sum", nc.op("kiln.abs", {x}), {*axis}, true);
  else if (p == 2)
    norm = nc.op("kiln.sqrt",
                 {nc.reduce("kiln.reduce_sum", nc.op("kiln.mul", {x, x}),
                            {*axis}, true)});
  else
    return nc.fail("attribute 'p' must be 1 or 2");
  // A zero norm gives 0 (not 0/0).
  Value zero = nc.scalarLike(0, x);
  Value isZero = nc.op("kiln.equal", {norm, zero});
  Value safe = nc.op("kiln.where", {isZero, nc.scalarLike(1, x), norm});
  return nc.setOutput(
      0, nc.op("kiln.where", {isZero, zero, nc.op("kiln.div", {x, safe})}));
}

LogicalResult mapLRN(NodeContext &nc) {
  Value x = nc.input(0);
  int64_t rank = nc.rankOf(x);
  int64_t size = nc.attrInt("size", 0);
  if (rank < 3 || rank > 4)
    return nc.fail("Kiln supports LRN on inputs of rank 3 or 4");
  if (size <= 0)
    return nc.fail("attribute 'size' must be positive");
  float alpha = nc.attrFloat("alpha", 1e-4f),
        beta = nc.attrFloat("beta", 0.75f), bias = nc.attrFloat("bias", 1.0f);
  // Sum of squares over a channel window: an average pool (counting the
  // padding) over [N, 1, C, spatial...] with a window of `size` channels.
  Value sq = nc.unsqueeze(nc.op("kiln.mul", {x, x}), {1});
  int64_t n = rank - 1;
  std::vector<int64_t> kernel(n, 1), ones(n, 1), pads(2 * n, 0);
  kernel[0] = size;
  pads[0] = (size - 1) / 2;
  pads[n] = size - 1 - (size - 1) / 2;
  Value avg =
      nc.op("kiln.avg_pool", {sq},
            {nc.aInts("kernel_shape", kernel), nc.aInts("strides", ones),
             nc.aInts("dilations", ones), nc.aInts("pads", pads),
             nc.aInt("ceil_mode", 0), nc.aInt("count_include_pad", 1)});
  // bias + alpha/size * sum = bias + alpha * avg.
  Value s = nc.squeeze(avg, {1});
  Value denom =
      nc.op("kiln.add", {nc.scalarLike(bias, x),
                         nc.op("kiln.mul", {s, nc.scalarLike(alpha, x)})});
  denom = nc.op("kiln.pow", {denom, nc.scalarLike(beta, x)});
  return nc.setOutput(0, nc.op("kiln.div", {x, denom}));
}

/// Softmax, LogSoftmax, Hardmax: opset 13 along one axis; earlier versions
/// flatten to 2-D at `axis` (default 1) and restore the shape.
MappingFn softmaxLike(std::string name) {
  return [name](NodeContext &nc) {
    Value x = nc.input(0);
    int64_t rank = nc.rankOf(x);
    if (nc.version() >= 13) {
      std::optional<int64_t> axis = nc.normAxis(nc.attrInt("axis", -1), rank);
      if (!axis)
        return mlir::failure();
      return nc.setOutput(0, nc.op(name, {x}, {nc.aInt("axis", *axis)}));
    }
    int64_t axis = nc.attrInt("axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      return nc.fail(strCat("axis ", nc.attrInt("axis", 1),
                            " is out of range for rank ", rank));
    if (rank == 2 && axis == 1)
      return nc.setOutput(0, nc.op(name, {x}, {nc.aInt("axis", 1)}));
    Value flat = nc.op("kiln.flatten", {x}, {nc.aInt("axis", axis)});
    Value y = nc.op(name, {flat}, {nc.aInt("axis", 1)});
    return nc.setOutput(0, nc.op("kiln.reshape", {y, nc.shapeOf(x)},
                                 {nc.aInt("allowzero", 1)}));
  };
}

} // namespace

/// kiln.conv of x and w with the node's window attributes (kernel_shape,
/// strides, dilations, pads, auto_pad, group); null after an error.
Value traceConv(NodeContext &nc, Value x, Value w) {
  std::optional<std::vector<int64_t>> kernel = kernelFromWeight(nc, w);
  Window win;
  if (!kernel || failed(resolveWindow(nc, x, *kernel, win))) {
    nc.setError("cannot resolve the convolution window");
    return Value();
  }
  return nc.op(
      "kiln.conv", {x, w},
      {nc.aInts("strides", win.strides), nc.aInts("dilations", win.dilations),
       nc.aInts("pads", win.pads), nc.aInt("group", nc.attrInt("group", 1))});
}

void addNNMappings(MappingRegistry &r) {
  addMapping(r, "MatMul", mapMatMul);
  addMapping(r, "Gemm", mapGemm, 7);
  addMapping(r, "Einsum", mapEinsum);
  addMapping(r, "Det", mapDet, 11);
  addMapping(r, "Conv", mapConv);
  addMapping(r, "ConvTranspose", mapConvTranspose);
  addMapping(r, "MaxPool", [](NodeContext &nc) { return mapPool(nc, true); });
  addMapping(
      r, "AveragePool", [](NodeContext &nc) { return mapPool(nc, false); }, 7);
  addMapping(r, "LpPool", mapLpPool, 2);
  addMapping(r, "GlobalAveragePool", globalPool("kiln.reduce_mean"));
  addMapping(r, "GlobalMaxPool", globalPool("kiln.reduce_max"));
  addMapping(r, "BatchNormalization", mapBatchNorm, 7);
  addMapping(r, "LayerNormalization", mapLayerNorm);
  addMapping(r, "RMSNormalization", mapRMSNorm);
  addMapping(r, "InstanceNormalization", mapInstanceNorm, 6);
  addMapping(r, "GroupNormalization", mapGroupNorm);
  addMapping(r, "MeanVarianceNormalization", mapMVN);
  addMapping(r, "LpNormalization", mapLpNorm);
  addMapping(r, "LRN", mapLRN);
  addMapping(r, "Softmax", softmaxLike("kiln.softmax"));
  addMapping(r, "LogSoftmax", softmaxLike("kiln.log_softmax"));
  addMapping(r, "Hardmax", softmaxLike("kiln.hardmax"));
}

} // namespace tracer
} // namespace kiln
