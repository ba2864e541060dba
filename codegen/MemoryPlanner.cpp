//===- MemoryPlanner.cpp - Where each value of a compiled graph lives -----===//
//
// This file implements the memory planner: it collects the signature of a
// graph (inputs, outputs, weights in ABI order), places every value
// (input, weight, output buffer or arena), computes arena lifetimes in
// program order and assigns 64-byte aligned offsets with reuse by a greedy
// best-fit over lifetime intervals, largest buffers first. A kernel tagged
// kiln.in_place by kiln-mark-in-place stores its result in the buffer of the
// operand that dies there (the buffer's lifetime grows), so an elementwise
// chain of backward steps holds one buffer instead of two. Results of
// load-time steps (kiln.load_time) go to the model's prepared memory,
// planned the same way over the load-time steps (which run in program
// order, once): a result that a run reads lives as long as the model, one
// that only load-time steps read is reused after its last reader. The
// largest workspace a kiln.library_call asks for goes at the arena's end.
//
//===----------------------------------------------------------------------===//

#include "codegen/MemoryPlanner.h"
#include "codegen/FillWeights.h"
#include "codegen/SymbolicShapes.h"
#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"
#include "passes/TensorConversion.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>
#include <set>

using namespace mlir;

namespace kiln {

int64_t alignBuffer(int64_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

const BufferLocation &MemoryPlan::at(Value v) const {
  auto it = locations.find(v);
  assert(it != locations.end() && "value without a planned location");
  return it->second;
}

static void collectNames(Location loc, std::vector<std::string> &names) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collectNames(inner, names);
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string n = name.getName().str();
    if (!llvm::is_contained(names, n))
      names.push_back(n);
  } else if (auto callSite = dyn_cast<CallSiteLoc>(loc)) {
    collectNames(callSite.getCallee(), names);
  }
}

std::vector<std::string> sourceNodeNames(Location loc) {
  std::vector<std::string> names;
  collectNames(loc, names);
  return names;
}

std::vector<std::string> sourceNodeNames(Operation *op) {
  std::vector<std::string> names;
  collectNames(op->getLoc(), names);
  op->walk([&](Operation *inner) {
    if (inner != op)
      collectNames(inner->getLoc(), names);
  });
  return names;
}

int64_t staticTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return -1;
  std::optional<DType> dtype = fromMlirElementType(tensor.getElementType());
  if (!dtype)
    return -1;
  return tensor.getNumElements() * static_cast<int64_t>(dtypeSize(*dtype));
}

/// A signature entry for `value` named `name`; fails on dynamic shapes.
static FailureOr<SignatureEntry> makeEntry(Value value, std::string name,
                                           Location loc, const char *kind) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  std::optional<DType> dtype =
      tensor ? fromMlirElementType(tensor.getElementType()) : std::nullopt;
  if (!tensor || !dtype)
    return emitError(loc) << kind << " '" << name << "' has type "
                          << value.getType()
                          << ", which compiled models do not support";
  if (!tensor.hasStaticShape())
    return emitError(loc)
           << kind << " '" << name << "' has a dynamic shape " << tensor
           << "; compiled models need static shapes (give the sizes of "
              "named dimensions with --dim NAME=SIZE)";
  SignatureEntry e;
  e.name = std::move(name);
  e.dtype = *dtype;
  e.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  e.bytes = staticTensorBytes(tensor);
  e.symbolicDims = symbolicDimsOf(value);
  e.value = value;
  return e;
}

/// A readable, unique name for a top-level constant (its initializer or
/// ONNX node name when it has one).
static std::string constantName(Operation *op, int index,
                                std::set<std::string> &used) {
  std::vector<std::string> names = sourceNodeNames(op->getLoc());
  std::string base =
      names.empty() ? "const" + std::to_string(index) : names.front();
  std::string name = base;
  for (int k = 1; used.count(name); ++k)
    name = base + "." + std::to_string(k);
  used.insert(name);
  return name;
}

/// "k3_layer_norm" for a fusion, "matmul" for another kiln op.
static std::string stepName(Operation *op) {
  if (auto name = op->getAttrOfType<StringAttr>("name");
      name && isa<FusionOp>(op))
    return name.getValue().str();
  StringRef n = op->getName().getStringRef();
  n.consume_front("kiln.");
  return n.str();
}

int64_t assignArenaOffsets(std::vector<ArenaBuffer> &buffers) {
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  // Largest first; ties by definition order, so plans are stable.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  int64_t peak = 0;
  // Pinned buffers first, at their offsets.
  for (size_t i : order) {
    ArenaBuffer &buf = buffers[i];
    if (buf.pinnedOffset < 0)
      continue;
    buf.offset = buf.pinnedOffset;
    for ([[maybe_unused]] size_t j : placed)
      assert((buffers[j].last < buf.first || buf.last < buffers[j].first ||
              buffers[j].offset + alignBuffer(buffers[j].bytes) <= buf.offset ||
              buf.offset + alignBuffer(buf.bytes) <= buffers[j].offset) &&
             "pinned arena buffers overlap");
    peak = std::max(peak, buf.offset + alignBuffer(buf.bytes));
    placed.push_back(i);
  }
  for (size_t i : order) {
    ArenaBuffer &buf = buffers[i];
    if (buf.pinnedOffset >= 0)
      continue;
    int64_t size = alignBuffer(buf.bytes);
    if (size == 0) {
      buf.offset = 0;
      continue;
    }
    // Placed buffers live at the same time as this one, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const ArenaBuffer &other = buffers[j];
      if (other.last < buf.first || buf.last < other.first)
        continue;
      busy.push_back({other.offset, other.offset + alignBuffer(other.bytes)});
    }
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds the buffer; else after the end.
    int64_t best = -1, bestGap = INT64_MAX, cursor = 0;
    for (auto [begin, end] : busy) {
      if (begin > cursor && begin - cursor >= size &&
          begin - cursor < bestGap) {
        best = cursor;
        bestGap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    buf.offset = best >= 0 ? best : cursor;
    peak = std::max(peak, buf.offset + size);
    placed.push_back(i);
  }
  return peak;
}

/// Adds `bytes` of library workspace at the end of `plan`'s arena (256-byte
/// aligned: cuBLASLt's requirement), for calls that run one at a time on the
/// run's stream.
static void reserveLibraryWorkspace(MemoryPlan &plan, int64_t bytes) {
  plan.libraryWorkspaceOffset = (plan.arenaBytes + 255) / 256 * 256;
  plan.libraryWorkspaceBytes = bytes;
  plan.arenaBytes = alignBuffer(plan.libraryWorkspaceOffset + bytes);
}

/// For a graph output `v` computed by a chain of kiln.alias views, the value
/// at the bottom of the chain when it may be computed straight into the
/// output buffer: each value of the chain has this one use, and the bottom
/// one is the result of a top-level step that runs every time (no constant,
/// argument, load-time step or in-place result) and is not placed yet.
/// Null otherwise.
static Value outputViewBase(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  Operation *def = v.getDefiningOp();
  if (!def || !def->hasAttr(kAliasAttr))
    return nullptr;
  Value base = def->getOperand(0);
  while (Operation *inner = base.getDefiningOp()) {
    if (!base.hasOneUse())
      return nullptr;
    if (!inner->hasAttr(kAliasAttr))
      break;
    base = inner->getOperand(0);
  }
  Operation *producer = base.getDefiningOp();
  if (!producer || !base.hasOneUse() || isa<ConstantOp>(producer) ||
      !isa<func::FuncOp>(producer->getParentOp()) ||
      producer->hasAttr(kLoadTimeAttr) || producer->hasAttr(kInPlaceAttr))
    return nullptr;
  return base;
}

FailureOr<MemoryPlan> planMemory(func::FuncOp graph) {
  MemoryPlan plan;
  Block &body = graph.getBody().front();

  // Every value computed at the top level needs a static shape; a dynamic
  // one (static inputs given) depends on values known only at run time.
  for (Operation &op : body)
    for (OpResult r : op.getResults())
      if (staticTensorBytes(r.getType()) < 0)
        return op.emitError()
               << "result " << r.getResultNumber() << " has type "
               << r.getType()
               << ", whose shape is not known at compile time (it depends "
                  "on values computed at run time, or on a dynamic input "
                  "dimension): not supported by kiln compile, which needs "
                  "static shapes; give named input dimensions with --dim "
                  "NAME=SIZE, make a parameter input a constant with "
                  "--input-value NAME=FILE, or run this model on the "
                  "reference runtime (kiln run MODEL)";

  // Arguments: runtime inputs, then weight arguments; values handed over
  // in the arena are not in the signature.
  std::vector<std::pair<BlockArgument, Attribute>> arenaArguments;
  for (BlockArgument arg : graph.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto nameAttr = graph.getArgAttrOfType<StringAttr>(i, "kiln.name");
    std::string name =
        nameAttr ? nameAttr.getValue().str() : "arg" + std::to_string(i);
    if (Attribute handed = graph.getArgAttr(i, kArenaValueAttr)) {
      FailureOr<SignatureEntry> entry =
          makeEntry(arg, name, arg.getLoc(), "arena value");
      if (failed(entry))
        return failure();
      plan.arenaValues.push_back(ArenaValue{*entry, /*isArgument=*/true});
      arenaArguments.push_back({arg, handed});
      continue;
    }
    bool isWeight = graph.getArgAttr(i, "kiln.weight") != nullptr;
    FailureOr<SignatureEntry> entry =
        makeEntry(arg, name, arg.getLoc(), isWeight ? "weight" : "input");
    if (failed(entry))
      return failure();
    std::vector<SignatureEntry> &list = isWeight ? plan.weights : plan.inputs;
    plan.locations[arg] =
        BufferLocation{isWeight ? BufferKind::Weight : BufferKind::Input,
                       static_cast<int>(list.size()), 0, entry->bytes};
    list.push_back(*entry);
  }

  // Top-level ops: constants become weights; the return names outputs.
  std::set<std::string> usedNames;
  for (const SignatureEntry &w : plan.weights)
    usedNames.insert(w.name);
  func::ReturnOp ret;
  llvm::DenseMap<Operation *, int> opIndex;
  for (Operation &op : body) {
    opIndex[&op] = static_cast<int>(plan.ops.size());
    plan.ops.push_back(&op);
    if (auto r = dyn_cast<func::ReturnOp>(op)) {
      ret = r;
      continue;
    }
    if (isa<ConstantOp>(op)) {
      std::string name =
          constantName(&op, static_cast<int>(plan.weights.size()), usedNames);
      FailureOr<SignatureEntry> entry =
          makeEntry(op.getResult(0), name, op.getLoc(), "constant");
      if (failed(entry))
        return failure();
      entry->constantOp = &op;
      plan.locations[op.getResult(0)] = BufferLocation{
          BufferKind::Weight, static_cast<int>(plan.weights.size()), 0,
          entry->bytes};
      plan.weights.push_back(*entry);
    }
  }
  if (!ret)
    return graph.emitError("graph function has no return");

  // Outputs: the first output naming a value computed by a top-level op is
  // written in place; the others are copied at the end. Arena values are
  // placed below, with the arena.
  std::vector<std::pair<unsigned, Attribute>> arenaResults;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto nameAttr = graph.getResultAttrOfType<StringAttr>(i, "kiln.name");
    std::string name =
        nameAttr ? nameAttr.getValue().str() : "output" + std::to_string(i);
    ReturnSlot slot;
    if (Attribute handed = graph.getResultAttr(i, kArenaValueAttr)) {
      FailureOr<SignatureEntry> entry =
          makeEntry(v, name, ret.getLoc(), "arena value");
      if (failed(entry))
        return failure();
      slot.arenaValue = static_cast<int>(plan.arenaValues.size());
      plan.arenaValues.push_back(ArenaValue{*entry, /*isArgument=*/false});
      arenaResults.push_back({static_cast<unsigned>(i), handed});
      plan.returns.push_back(slot);
      continue;
    }
    FailureOr<SignatureEntry> entry =
        makeEntry(v, name, ret.getLoc(), "output");
    if (failed(entry))
      return failure();
    slot.output = static_cast<int>(plan.outputs.size());
    if (!plan.locations.count(v) && v.getDefiningOp()) {
      BufferLocation out{BufferKind::Output, slot.output, 0, entry->bytes};
      plan.locations[v] = out;
      // An output that is a view (kiln.alias) of a value computed only for
      // it: that value is computed into the output buffer, so the view
      // costs nothing. Otherwise the view lives where its operand does and
      // the return copies it.
      if (Value base = outputViewBase(v); base && !plan.locations.count(base))
        plan.locations[base] = out;
    }
    plan.outputs.push_back(*entry);
    plan.returns.push_back(slot);
  }

  // The last use of a value, counting the uses of the aliases (kiln.alias
  // views) that share its buffer.
  std::function<int(Value, int)> lastUse = [&](Value v, int last) {
    for (Operation *user : v.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      assert(top && "use outside the graph body");
      last = std::max(last, opIndex[top]);
      if (top->hasAttr(kAliasAttr))
        last = lastUse(top->getResult(0), last);
    }
    return last;
  };

  // Everything else computed at the top level: the arena (or nowhere for an
  // unused result of a fallback op, which the wrapper never stores; a
  // generated kernel writes every result, so an unused one of those gets
  // scratch space that lives for its step only).
  llvm::DenseMap<Value, size_t> bufferOf; ///< value -> plan.buffers index
  std::vector<ArenaBuffer> preparedBuffers;
  llvm::DenseMap<Value, size_t> preparedBufferOf; ///< -> preparedBuffers
  // Whether a step of the run (or the return) reads `v` or an alias of it.
  std::function<bool(Value)> readByRun = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      Operation *top = body.findAncestorOpInBlock(*user);
      assert(top && "use outside the graph body");
      if (!top->hasAttr(kLoadTimeAttr) || isa<func::ReturnOp>(top))
        return true;
      return top->hasAttr(kAliasAttr) && readByRun(top->getResult(0));
    });
  };
  for (Operation *op : plan.ops) {
    if (isa<func::ReturnOp>(op) || isa<ConstantOp>(op) ||
        op->hasAttr(kAliasAttr))
      continue;
    bool isFusion = isa<FusionOp>(op);
    bool loadTime = op->hasAttr(kLoadTimeAttr);
    int first = opIndex[op];
    for (OpResult r : op->getResults()) {
      if (plan.locations.count(r))
        continue;
      int64_t bytes = staticTensorBytes(r.getType());
      if (bytes < 0)
        return op->emitError()
               << "result " << r.getResultNumber() << " has type "
               << r.getType()
               << "; compiled models need static shapes of supported "
                  "element types (give the sizes of named dimensions with "
                  "--dim NAME=SIZE)";
      int last = lastUse(r, first);
      if (r.use_empty() && !isFusion && !op->hasAttr(kKernelAttr)) {
        plan.locations[r] = BufferLocation{BufferKind::None, -1, 0, bytes};
        continue;
      }
      std::string name = "%" + stepName(op) + "@" +
                         std::to_string(opIndex[op]) + "#" +
                         std::to_string(r.getResultNumber());
      // A load-time result goes to prepared memory, planned like the arena
      // over the order of the load-time steps: one that a run reads lives
      // as long as the model, one that only load-time steps read dies after
      // the last of them.
      std::vector<ArenaBuffer> &buffers =
          loadTime ? preparedBuffers : plan.buffers;
      llvm::DenseMap<Value, size_t> &bufferIndex =
          loadTime ? preparedBufferOf : bufferOf;
      if (loadTime)
        last = readByRun(r) ? INT_MAX : last;
      // In place (kiln-mark-in-place): the result takes the buffer of the
      // operand that dies here (the buffer's lifetime grows to the result's).
      if (std::optional<std::pair<unsigned, unsigned>> pair = inPlacePair(op);
          pair && pair->first == r.getResultNumber()) {
        auto found = bufferIndex.find(op->getOperand(pair->second));
        assert(found != bufferIndex.end() &&
               "in place over a value not in the arena");
        ArenaBuffer &base = buffers[found->second];
        assert(base.last == first && base.bytes == bytes &&
               "in place over a value that lives on");
        base.inPlace.push_back(r);
        base.name += " = " + name + " (in place)";
        base.last = last;
        bufferIndex[r] = found->second;
        continue;
      }
      ArenaBuffer buf;
      buf.value = r;
      buf.name = name;
      // Prepared buffers start at multiples of 256 bytes.
      buf.bytes = loadTime ? (bytes + 255) / 256 * 256 : bytes;
      buf.first = first;
      buf.last = last;
      bufferIndex[r] = buffers.size();
      buffers.push_back(buf);
    }
  }
  plan.preparedBytes = assignArenaOffsets(preparedBuffers);
  for (const ArenaBuffer &buf : preparedBuffers) {
    BufferLocation at{BufferKind::Prepared, -1, buf.offset,
                      staticTensorBytes(buf.value.getType())};
    plan.locations[buf.value] = at;
    for (Value v : buf.inPlace)
      plan.locations[v] = at;
  }
  // Arena values: an argument lives from the start to its last use; a
  // result's buffer lives to the end (or, for a value that lives elsewhere,
  // a slot that the end of the graph copies it into).
  auto pinOf = [](Attribute handed) -> int64_t {
    auto offset = dyn_cast<IntegerAttr>(handed);
    return offset ? offset.getInt() : -1;
  };
  std::vector<size_t> arenaValueBuffer; ///< plan.arenaValues -> buffers
  for (auto [arg, handed] : arenaArguments) {
    ArenaBuffer buf;
    buf.value = arg;
    buf.name = "%" + plan.arenaValues[arenaValueBuffer.size()].entry.name +
               " (handed over)";
    buf.bytes = staticTensorBytes(arg.getType());
    buf.first = 0;
    buf.last = lastUse(arg, 0);
    buf.pinnedOffset = pinOf(handed);
    bufferOf[arg] = plan.buffers.size();
    arenaValueBuffer.push_back(plan.buffers.size());
    plan.buffers.push_back(buf);
  }
  int end = opIndex[ret];
  for (auto [i, handed] : arenaResults) {
    Value v = ret.getOperand(i);
    ArenaValue &value = plan.arenaValues[arenaValueBuffer.size()];
    auto found = bufferOf.find(v);
    bool owned = found != bufferOf.end() && v.getDefiningOp() &&
                 plan.buffers[found->second].pinnedOffset < 0 &&
                 !llvm::is_contained(arenaValueBuffer, found->second) &&
                 llvm::count(ret.getOperands(), v) == 1;
    if (owned) {
      ArenaBuffer &buf = plan.buffers[found->second];
      buf.last = end;
      buf.pinnedOffset = pinOf(handed);
      buf.name += " -> " + value.entry.name;
      arenaValueBuffer.push_back(found->second);
      continue;
    }
    ArenaBuffer slot;
    slot.name = "%" + value.entry.name + " (copy)";
    slot.bytes = value.entry.bytes;
    slot.first = slot.last = end;
    slot.pinnedOffset = pinOf(handed);
    value.copied = true;
    arenaValueBuffer.push_back(plan.buffers.size());
    plan.buffers.push_back(slot);
  }

  // weights.bin: the constants, each 64-byte aligned, in weight order;
  // fill weights (splats, codegen/FillWeights.h) take no bytes there.
  for (SignatureEntry &w : plan.weights) {
    if (!w.constantOp || fillWeightElement(w))
      continue;
    w.fileOffset = alignBuffer(plan.weightFileBytes);
    plan.weightFileBytes = w.fileOffset + w.bytes;
  }

  plan.arenaBytes = assignArenaOffsets(plan.buffers);
  for (auto [value, index] : llvm::zip(plan.arenaValues, arenaValueBuffer))
    value.offset = plan.buffers[index].offset;
  for (const ArenaBuffer &buf : plan.buffers) {
    if (buf.value)
      plan.locations[buf.value] =
          BufferLocation{BufferKind::Arena, -1, buf.offset, buf.bytes};
    for (Value v : buf.inPlace)
      plan.locations[v] =
          BufferLocation{BufferKind::Arena, -1, buf.offset, buf.bytes};
  }
  // Aliases live where their operand lives (in program order, so chains of
  // them resolve).
  for (Operation *op : plan.ops)
    if (op->hasAttr(kAliasAttr)) {
      auto base = plan.locations.find(op->getOperand(0));
      assert(base != plan.locations.end() && "an alias of an unplaced value");
      // Copy before inserting: the insertion may grow the map and move it.
      BufferLocation location = base->second;
      plan.locations[op->getResult(0)] = location;
    }

  // The library calls' workspace (calls run one at a time; load-time calls
  // use the library's own).
  int64_t workspace = 0;
  for (auto call : body.getOps<LibraryCallOp>())
    if (!call->hasAttr(kLoadTimeAttr))
      workspace = std::max<int64_t>(workspace, call.getWorkspace());
  if (workspace > 0)
    reserveLibraryWorkspace(plan, workspace);
  return plan;
}

} // namespace kiln
