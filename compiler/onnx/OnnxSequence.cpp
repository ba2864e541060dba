//===- OnnxSequence.cpp - ONNX sequence operators -------------------------===//
//
// This file maps the ONNX sequence operators whose positions are known at
// trace time: SplitToSequence, SequenceConstruct, SequenceEmpty, SequenceAt,
// SequenceInsert, SequenceErase, SequenceLength and ConcatFromSequence. A
// sequence never becomes a kiln value: the tracer keeps the list of its
// tensors (TraceState::sequences), so `split -> SequenceAt(i)` is one
// kiln.split result (what PyTorch's exports of torch.split produce). A
// position that is not a constant is an error naming the node.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxTraceContext.h"

#include "kiln/runtime/Status.h"

namespace kiln {
namespace tracer {

namespace {

/// The constant position of input `i`, normalized against `size` (`size`
/// itself allowed when `insert`).
std::optional<int64_t> position(NodeContext &nc, size_t i, int64_t size,
                                bool insert = false) {
  std::optional<std::vector<int64_t>> p = nc.constInts(nc.input(i));
  if (!p || p->size() != 1) {
    nc.setError("the sequence position must be a constant (a scalar known "
                "when the model is traced)");
    return std::nullopt;
  }
  int64_t pos = (*p)[0] < 0 ? (*p)[0] + size : (*p)[0];
  if (pos < 0 || pos > size || (pos == size && !insert)) {
    nc.setError(strCat("sequence position ", (*p)[0],
                       " is out of range for a sequence of ", size,
                       " tensors"));
    return std::nullopt;
  }
  return pos;
}

LogicalResult mapSplitToSequence(NodeContext &nc) {
  Value x = nc.input(0);
  mlir::RankedTensorType t = nc.typeOf(x);
  if (!t)
    return nc.fail("input is missing");
  std::optional<int64_t> axis = nc.normAxis(nc.attrInt("axis", 0), t.getRank());
  if (!axis)
    return mlir::failure();
  if (t.isDynamicDim(*axis))
    return nc.fail("splitting a dynamic dim into a sequence is not "
                   "supported");
  int64_t dim = t.getDimSize(*axis);
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!nc.hasInput(1)) {
    // Pieces of size 1; keepdims = 0 removes the axis.
    sizes.assign(static_cast<size_t>(dim), 1);
    squeeze = nc.attrInt("keepdims", 1) == 0;
  } else {
    std::optional<std::vector<int64_t>> split = nc.constInts(nc.input(1));
    if (!split)
      return nc.fail("'split' must be a constant");
    if (nc.rankOf(nc.input(1)) == 0) {
      int64_t chunk = (*split)[0];
      if (chunk <= 0)
        return nc.fail("'split' must be positive");
      for (int64_t left = dim; left > 0; left -= chunk)
        sizes.push_back(std::min(chunk, left));
    } else {
      sizes = *split;
      int64_t total = 0;
      for (int64_t s : sizes) {
        if (s < 0)
          return nc.fail("'split' has a negative size");
        total += s;
      }
      if (total != dim)
        return nc.fail(strCat("'split' sums to ", total, " but the axis has ",
                              dim, " elements"));
    }
  }
  if (sizes.empty())
    return nc.setOutputSequence(0, {});
  llvm::SmallVector<Value> pieces =
      sizes.size() == 1
          ? llvm::SmallVector<Value>{x}
          : nc.ops("kiln.split", {x, nc.constI64(sizes)},
                   {nc.aInt("axis", *axis)});
  if (nc.failed())
    return mlir::failure();
  if (squeeze)
    for (Value &p : pieces)
      p = nc.squeeze(p, {*axis});
  return nc.setOutputSequence(0, pieces);
}

LogicalResult mapSequenceConstruct(NodeContext &nc) {
  return nc.setOutputSequence(0, nc.inputs());
}

LogicalResult mapSequenceEmpty(NodeContext &nc) {
  return nc.setOutputSequence(0, {});
}

LogicalResult mapSequenceAt(NodeContext &nc) {
  std::optional<llvm::SmallVector<Value>> seq = nc.inputSequence(0);
  if (!seq)
    return mlir::failure();
  std::optional<int64_t> pos =
      position(nc, 1, static_cast<int64_t>(seq->size()));
  if (!pos)
    return mlir::failure();
  return nc.setOutput(0, (*seq)[*pos]);
}

LogicalResult mapSequenceInsert(NodeContext &nc) {
  std::optional<llvm::SmallVector<Value>> seq = nc.inputSequence(0);
  if (!seq)
    return mlir::failure();
  int64_t size = static_cast<int64_t>(seq->size());
  int64_t pos = size;
  if (nc.hasInput(2)) {
    std::optional<int64_t> p = position(nc, 2, size, /*insert=*/true);
    if (!p)
      return mlir::failure();
    pos = *p;
  }
  seq->insert(seq->begin() + pos, nc.input(1));
  return nc.setOutputSequence(0, *seq);
}

LogicalResult mapSequenceErase(NodeContext &nc) {
  std::optional<llvm::SmallVector<Value>> seq = nc.inputSequence(0);
  if (!seq)
    return mlir::failure();
  int64_t size = static_cast<int64_t>(seq->size());
  if (size == 0)
    return nc.fail("erasing from an empty sequence");
  int64_t pos = size - 1;
  if (nc.hasInput(1)) {
    std::optional<int64_t> p = position(nc, 1, size);
    if (!p)
      return mlir::failure();
    pos = *p;
  }
  seq->erase(seq->begin() + pos);
  return nc.setOutputSequence(0, *seq);
}

LogicalResult mapSequenceLength(NodeContext &nc) {
  std::optional<llvm::SmallVector<Value>> seq = nc.inputSequence(0);
  if (!seq)
    return mlir::failure();
  return nc.setOutput(0, nc.scalarI64(static_cast<int64_t>(seq->size())));
}

LogicalResult mapConcatFromSequence(NodeContext &nc) {
  std::optional<llvm::SmallVector<Value>> seq = nc.inputSequence(0);
  if (!seq)
    return mlir::failure();
  if (seq->empty())
    return nc.fail("concatenating an empty sequence");
  int64_t rank = nc.rankOf(seq->front());
  bool newAxis = nc.attrInt("new_axis", 0) != 0;
  std::optional<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", 0), newAxis ? rank + 1 : rank);
  if (!axis)
    return mlir::failure();
  llvm::SmallVector<Value> parts = *seq;
  if (newAxis)
    for (Value &p : parts)
      p = nc.unsqueeze(p, {*axis});
  if (parts.size() == 1)
    return nc.setOutput(0, parts.front());
  return nc.setOutput(0,
                      nc.op("kiln.concat", parts, {nc.aInt("axis", *axis)}));
}

} // namespace

void addSequenceMappings(MappingRegistry &r) {
  addMapping(r, "SplitToSequence", mapSplitToSequence);
  addMapping(r, "SequenceConstruct", mapSequenceConstruct);
  addMapping(r, "SequenceEmpty", mapSequenceEmpty);
  addMapping(r, "SequenceAt", mapSequenceAt);
  addMapping(r, "SequenceInsert", mapSequenceInsert);
  addMapping(r, "SequenceErase", mapSequenceErase);
  addMapping(r, "SequenceLength", mapSequenceLength);
  addMapping(r, "ConcatFromSequence", mapConcatFromSequence);
}

} // namespace tracer
} // namespace kiln
