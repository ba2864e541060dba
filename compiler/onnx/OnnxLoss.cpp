//===- OnnxLoss.cpp - ONNX loss operators as kiln primitives --------------===//
//
// This file implements NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// as compositions of kiln ops: the log-probability of each target class is
// gathered along axis 1, weighted by the class weights (zero for
// ignore_index), and reduced by `reduction` (none, sum, or the weighted
// mean). SoftmaxCrossEntropyLoss takes log_softmax over axis 1 first and can
// return it as its second output.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"

namespace kiln {
namespace tracer {
namespace {

/// The NLL of `logProb` [N, C, d...] at `target` [N, d...].
Value nllLoss(NodeContext &nc, Value logProb, Value target, Value weight) {
  std::string reduction = nc.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    nc.setError("unsupported reduction '" + reduction + "'");
    return Value();
  }
  if (nc.rankOf(logProb) < 2) {
    nc.setError("the input must have rank >= 2 (N, C, ...)");
    return Value();
  }
  Value t = nc.cast(target, nc.builder().getI64Type());
  Value valid;
  if (nc.hasAttr("ignore_index")) {
    valid = nc.op("kiln.not",
                  {nc.op("kiln.equal",
                         {t, nc.scalarI64(nc.attrInt("ignore_index", 0))})});
    t = nc.op("kiln.where", {valid, t, nc.scalarI64(0)});
  }
  Value picked = nc.op("kiln.gather_elements", {logProb, nc.unsqueeze(t, {1})},
                       {nc.aInt("axis", 1)});
  Value loss = nc.op("kiln.neg", {nc.squeeze(picked, {1})});
  Value w;
  if (weight)
    w = nc.op("kiln.gather", {nc.cast(weight, nc.elemOf(logProb)), t},
              {nc.aInt("axis", 0)});
  if (valid)
    w = nc.op("kiln.where", {valid, w ? w : nc.scalarLike(1, logProb),
                             nc.scalarLike(0, logProb)});
  if (w)
    loss = nc.op("kiln.mul", {loss, w});
  if (reduction == "none")
    return loss;
  Value sum = nc.reduce("kiln.reduce_sum", loss, {}, false);
  if (reduction == "sum")
    return sum;
  if (w) // w has the target's shape: the weighted mean.
    return nc.op("kiln.div", {sum, nc.reduce("kiln.reduce_sum", w, {}, false)});
  return nc.reduce("kiln.reduce_mean", loss, {}, false);
}

LogicalResult mapNLL(NodeContext &nc) {
  return nc.setOutput(0, nllLoss(nc, nc.input(0), nc.input(1), nc.input(2)));
}

LogicalResult mapSoftmaxCrossEntropy(NodeContext &nc) {
  Value logProb =
      nc.op("kiln.log_softmax", {nc.input(0)}, {nc.aInt("axis", 1)});
  if (failed(nc.setOutput(0, nllLoss(nc, logProb, nc.input(1), nc.input(2)))))
    return mlir::failure();
  if (nc.wantsOutput(1))
    return nc.setOutput(1, logProb);
  return mlir::success();
}

} // namespace

void addLossMappings(MappingRegistry &r) {
  addMapping(r, "NegativeLogLikelihoodLoss", mapNLL);
  addMapping(r, "SoftmaxCrossEntropyLoss", mapSoftmaxCrossEntropy);
}

} // namespace tracer
} // namespace kiln
