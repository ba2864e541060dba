//===- OnnxReduction.cpp - Reduction ONNX ops to kiln ---------------------===//
//
// This file implements the mappings of the ONNX reductions: ReduceSum, Mean,
// Max, Min and Prod onto the kiln reductions (axes from the attribute of the
// older versions or from the input of the newer ones); ReduceL1, L2, LogSum,
// LogSumExp (stabilized by subtracting the max) and SumSquare as
// compositions; ArgMax/ArgMin, CumSum/CumProd and TopK.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

namespace kiln {
namespace tracer {
namespace {

/// The kind of a reduction and the version whose axes became an input.
enum class Reduce {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

MappingFn reduction(Reduce kind, int axesInputSince) {
  return [kind, axesInputSince](NodeContext &nc) {
    Value x = nc.input(0);
    Value axes;
    int64_t noop = 0;
    if (nc.version() < axesInputSince) {
      axes = nc.constI64(nc.attrInts("axes").value_or(std::vector<int64_t>{}));
    } else {
      noop = nc.attrInt("noop_with_empty_axes", 0);
      axes = nc.hasInput(1) ? nc.cast(nc.input(1), nc.builder().getI64Type())
                            : nc.constI64({});
    }
    int64_t keepdims = nc.attrInt("keepdims", 1);
    auto red = [&](llvm::StringRef name, Value v, int64_t keep) {
      return nc.op(
          name, {v, axes},
          {nc.aInt("keepdims", keep), nc.aInt("noop_with_empty_axes", noop)});
    };
    Value y;
    switch (kind) {
    case Reduce::Sum:
      y = red("kiln.reduce_sum", x, keepdims);
      break;
    case Reduce::Mean:
      y = red("kiln.reduce_mean", x, keepdims);
      break;
    case Reduce::Max:
      y = red("kiln.reduce_max", x, keepdims);
      break;
    case Reduce::Min:
      y = red("kiln.reduce_min", x, keepdims);
      break;
    case Reduce::Prod:
      y = red("kiln.reduce_prod", x, keepdims);
      break;
    case Reduce::L1:
      y = red("kiln.reduce_sum", nc.op("kiln.abs", {x}), keepdims);
      break;
    case Reduce::L2:
      y = nc.op("kiln.sqrt",
                {red("kiln.reduce_sum", nc.op("kiln.mul", {x, x}), keepdims)});
      break;
    case Reduce::SumSquare:
      y = red("kiln.reduce_sum", nc.op("kiln.mul", {x, x}), keepdims);
      break;
    case Reduce::LogSum:
      y = nc.op("kiln.log", {red("kiln.reduce_sum", x, keepdims)});
      break;
    case Reduce::LogSumExp: {
      Value mKeep = red("kiln.reduce_max", x, 1);
      Value m = keepdims ? mKeep : red("kiln.reduce_max", x, 0);
      Value s =
          red("kiln.reduce_sum",
              nc.op("kiln.exp", {nc.op("kiln.sub", {x, mKeep})}), keepdims);
      y = nc.op("kiln.add", {nc.op("kiln.log", {s}), m});
      break;
    }
    }
    return nc.setOutput(0, y);
  };
}

MappingFn argReduce(std::string name) {
  return [name](NodeContext &nc) {
    Value x = nc.input(0);
    std::optional<int64_t> axis =
        nc.normAxis(nc.attrInt("axis", 0), nc.rankOf(x));
    if (!axis)
      return mlir::failure();
    return nc.setOutput(0,
                        nc.op(name, {x},
                              {nc.aInt("axis", *axis),
                               nc.aInt("keepdims", nc.attrInt("keepdims", 1)),
                               nc.aInt("select_last_index",
                                       nc.attrInt("select_last_index", 0))}));
  };
}

MappingFn cumulative(std::string name) {
  return [name](NodeContext &nc) {
    Value axis = nc.cast(nc.input(1), nc.builder().getI64Type());
    return nc.setOutput(0,
                        nc.op(name, {nc.input(0), axis},
                              {nc.aInt("exclusive", nc.attrInt("exclusive", 0)),
                               nc.aInt("reverse", nc.attrInt("reverse", 0))}));
  };
}

LogicalResult mapTopK(NodeContext &nc) {
  Value x = nc.input(0);
  Value k;
  if (nc.version() < 10) {
    if (!nc.hasAttr("k"))
      return nc.fail("attribute 'k' is required");
    k = nc.constI64({nc.attrInt("k", 0)});
  } else {
    k = nc.cast(nc.input(1), nc.builder().getI64Type());
    if (k && nc.rankOf(k) != 1)
      k = nc.reshape(k, {1});
  }
  std::optional<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", -1), nc.rankOf(x));
  if (!axis)
    return mlir::failure();
  llvm::SmallVector<Value> r = nc.ops(
      "kiln.topk", {x, k},
      {nc.aInt("axis", *axis), nc.aInt("largest", nc.attrInt("largest", 1)),
       nc.aInt("sorted", nc.attrInt("sorted", 1))});
  if (r.size() != 2)
    return nc.fail("kiln.topk did not produce two results");
  if (failed(nc.setOutput(0, r[0])))
    return mlir::failure();
  return nc.setOutput(1, r[1]);
}

} // namespace

void addReductionMappings(MappingRegistry &r) {
  addMapping(r, "ReduceSum", reduction(Reduce::Sum, 13));
  addMapping(r, "ReduceMean", reduction(Reduce::Mean, 18));
  addMapping(r, "ReduceMax", reduction(Reduce::Max, 18));
  addMapping(r, "ReduceMin", reduction(Reduce::Min, 18));
  addMapping(r, "ReduceProd", reduction(Reduce::Prod, 18));
  addMapping(r, "ReduceL1", reduction(Reduce::L1, 18));
  addMapping(r, "ReduceL2", reduction(Reduce::L2, 18));
  addMapping(r, "ReduceLogSum", reduction(Reduce::LogSum, 18));
  addMapping(r, "ReduceLogSumExp", reduction(Reduce::LogSumExp, 18));
  addMapping(r, "ReduceSumSquare", reduction(Reduce::SumSquare, 18));
  addMapping(r, "ArgMax", argReduce("kiln.argmax"));
  addMapping(r, "ArgMin", argReduce("kiln.argmin"));
  addMapping(r, "CumSum", cumulative("kiln.cumsum"));
  addMapping(r, "CumProd", cumulative("kiln.cumprod"));
  addMapping(r, "TopK", mapTopK);
}

} // namespace tracer
} // namespace kiln
