//===- PartitionJoint.cpp - Split the joint graph by a min-cut ------------===//
//
// This file implements `kiln-partition`: the joint graph (kiln.joint, from
// kiln-autodiff) becomes @forward and @backward, both kiln.graph, as
// AOTAutograd's min-cut rematerialization partitioner does:
//
//   * backward ops are those that depend on the seed (kiln.grad_seed);
//   * every value is a node split in two (in -> out) whose capacity is its
//     size in bytes — what saving it costs; arguments and constants cost
//     nothing (the backward graph reads arguments itself and re-creates
//     constants);
//   * the source feeds the arguments, the constants, the loss and every
//     forward op that must not be recomputed (anything but elementwise
//     ops and views: matmuls, convolutions, reductions, norms); backward
//     values drain into the sink;
//   * the minimum cut separates what the forward graph computes from what
//     the backward graph computes: forward values that backward ops read
//     are saved (outputs of @forward after the loss, named "saved.<i>"),
//     and cheap forward ops on the sink's side are recomputed in @backward
//     instead of being saved.
//
// @forward takes the joint graph's arguments that it reads and returns the
// loss, then the saved values; @backward takes the saved values, then the
// joint graph's arguments it reads, and returns the gradients. Both keep
// the joint graph's names, locations and result attributes;
// kiln.saved_bytes and kiln.recomputed_ops on them say what was chosen,
// kiln.recompute_flops what the recomputation costs (an estimate) and
// kiln.saved_bytes_no_recompute what saving everything would take.
// With recompute=false every forward value backward reads is saved.
//
// A memory budget F < 1 (memory-budget=F) limits the saved bytes to F times
// the no-recompute plan's: while the min-cut's plan saves more, the matmul
// or convolution with the lowest recompute cost per byte of its saved
// results is allowed to be recomputed too, and the cut is made again (each
// such permission can only lower the saved bytes: the cut is by bytes).
//
//===----------------------------------------------------------------------===//

#include "passes/TrainingPasses.h"

#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <deque>
#include <limits>

using namespace mlir;

namespace kiln {

namespace {

//===----------------------------------------------------------------------===//
// Max flow (Dinic) on a small graph
//===----------------------------------------------------------------------===//

class FlowGraph {
public:
  static constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

  int addNode() {
    adjacency.emplace_back();
    return static_cast<int>(adjacency.size()) - 1;
  }
  void addEdge(int from, int to, int64_t capacity) {
    adjacency[from].push_back(static_cast<int>(edges.size()));
    edges.push_back({to, capacity});
    adjacency[to].push_back(static_cast<int>(edges.size()));
    edges.push_back({from, 0});
  }
  /// Runs max flow from `s` to `t`; returns the nodes on the source's side
  /// of a minimum cut.
  std::vector<bool> minCut(int s, int t) {
    while (buildLevels(s, t)) {
      next.assign(adjacency.size(), 0);
      while (push(s, t, kInfinite) > 0) {
      }
    }
    buildLevels(s, t);
    std::vector<bool> side(adjacency.size());
    for (size_t i = 0; i < adjacency.size(); ++i)
      side[i] = level[i] >= 0;
    return side;
  }

private:
  struct Edge {
    int to;
    int64_t capacity;
  };
  bool buildLevels(int s, int t) {
    level.assign(adjacency.size(), -1);
    std::deque<int> queue = {s};
    level[s] = 0;
    while (!queue.empty()) {
      int u = queue.front();
      queue.pop_front();
      for (int e : adjacency[u])
        if (edges[e].capacity > 0 && level[edges[e].to] < 0) {
          level[edges[e].to] = level[u] + 1;
          queue.push_back(edges[e].to);
        }
    }
    return level[t] >= 0;
  }
  int64_t push(int u, int t, int64_t limit) {
    if (u == t)
      return limit;
    for (size_t &i = next[u]; i < adjacency[u].size(); ++i) {
      Edge &edge = edges[adjacency[u][i]];
      if (edge.capacity <= 0 || level[edge.to] != level[u] + 1)
        continue;
      int64_t pushed = push(edge.to, t, std::min(limit, edge.capacity));
      if (pushed > 0) {
        edge.capacity -= pushed;
        edges[adjacency[u][i] ^ 1].capacity += pushed;
        return pushed;
      }
    }
    return 0;
  }
  std::vector<std::vector<int>> adjacency;
  std::vector<Edge> edges;
  std::vector<int> level;
  std::vector<size_t> next;
};

//===----------------------------------------------------------------------===//
// The partition
//===----------------------------------------------------------------------===//

int64_t bytesOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return type.getNumElements() * std::max<int64_t>(1, bits / 8);
}

/// Whether the backward graph may compute `op` again instead of reading
/// its saved result without a memory budget: cheap ops only (elementwise,
/// views).
bool isRecomputable(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() || op->hasTrait<OpTrait::View>();
}

int64_t elementsOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

/// The estimated cost of computing `op` once (kRecomputeFlopsAttr's units).
int64_t flopsOf(Operation *op) {
  if (op->getNumResults() == 0)
    return 0;
  int64_t out = elementsOf(op->getResult(0));
  if (isa<MatMulOp>(op)) {
    auto a = cast<RankedTensorType>(op->getOperand(0).getType());
    return 2 * out * a.getShape().back();
  }
  if (isa<ConvOp>(op)) {
    auto w = cast<RankedTensorType>(op->getOperand(1).getType());
    return 2 * out *
           (w.getNumElements() / std::max<int64_t>(1, w.getDimSize(0)));
  }
  if (isa<ConvTransposeOp>(op)) {
    auto w = cast<RankedTensorType>(op->getOperand(1).getType());
    return 2 * elementsOf(op->getOperand(0)) *
           (w.getNumElements() / std::max<int64_t>(1, w.getDimSize(0)));
  }
  int64_t n = 0;
  for (Value v : op->getOperands())
    n += elementsOf(v);
  for (Value v : op->getResults())
    n += elementsOf(v);
  return n;
}

class Partitioner {
public:
  Partitioner(func::FuncOp joint, PartitionOptions options)
      : joint(joint), options(options) {}
  LogicalResult run();

private:
  void findBackwardOps();
  /// The min-cut's forward ops when the ops in `allowed` may be recomputed
  /// besides the cheap ones.
  llvm::DenseSet<Operation *>
  chooseForwardOps(const llvm::DenseSet<Operation *> &allowed);
  /// The forward values (not constants) the backward side reads when the
  /// forward graph computes `forward`, in program order.
  llvm::SetVector<Value>
  savedValues(const llvm::DenseSet<Operation *> &forward);
  /// Chooses forwardOps: the min-cut, then more recomputation while the
  /// memory budget is exceeded.
  void planWithinBudget();
  func::FuncOp buildForward(OpBuilder &b);
  func::FuncOp buildBackward(OpBuilder &b);

  func::FuncOp joint;
  PartitionOptions options;
  /// Ops that depend on the seed.
  llvm::DenseSet<Operation *> backwardOps;
  /// Ops the forward graph computes.
  llvm::DenseSet<Operation *> forwardOps;
  /// Forward values the backward graph reads, in program order.
  llvm::SetVector<Value> saved;
  int64_t savedBytes = 0, recomputed = 0, recomputeFlops = 0;
  int64_t savedBytesNoRecompute = 0;
};

void Partitioner::findBackwardOps() {
  Block &body = joint.getBody().front();
  for (Operation &op : body.without_terminator()) {
    bool seed = op.hasAttr(kGradSeedAttr);
    bool fromBackward = llvm::any_of(op.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && backwardOps.contains(def);
    });
    if (seed || fromBackward)
      backwardOps.insert(&op);
  }
}

llvm::DenseSet<Operation *>
Partitioner::chooseForwardOps(const llvm::DenseSet<Operation *> &allowed) {
  llvm::DenseSet<Operation *> chosen;
  Block &body = joint.getBody().front();
  Value loss = body.getTerminator()->getOperand(0);
  FlowGraph graph;
  int source = graph.addNode(), sink = graph.addNode();
  llvm::DenseMap<Value, std::pair<int, int>> nodes; // value -> (in, out)
  auto addValue = [&](Value v, int64_t capacity) {
    int in = graph.addNode(), out = graph.addNode();
    graph.addEdge(in, out, capacity);
    nodes[v] = {in, out};
    return in;
  };
  for (BlockArgument arg : body.getArguments())
    graph.addEdge(source, addValue(arg, 0), FlowGraph::kInfinite);
  for (Operation &op : body.without_terminator()) {
    bool backward = backwardOps.contains(&op);
    bool constant = isa<ConstantOp>(op);
    // Twice the bytes, plus one for a value no cheap op computes: between
    // cuts saving as many bytes, the one that saves values later in a
    // recomputable chain wins (a matmul's output plus its bias add is the
    // bias add's output; saving that spares @backward the recomputation,
    // a kernel of its own when its reader is a library call or kernel op).
    int64_t tieBreak = isRecomputable(&op) ? 0 : 1;
    for (Value r : op.getResults()) {
      int in = addValue(r, constant ? 0 : 2 * bytesOf(r) + tieBreak);
      for (Value operand : op.getOperands())
        graph.addEdge(nodes[operand].second, in, FlowGraph::kInfinite);
      if (backward)
        graph.addEdge(in, sink, FlowGraph::kInfinite);
      else if (constant || r == loss || !options.recompute ||
               (!isRecomputable(&op) && !allowed.contains(&op)))
        graph.addEdge(source, in, FlowGraph::kInfinite);
    }
  }
  // The gradients are computed by the backward graph.
  for (Value v : body.getTerminator()->getOperands().drop_front())
    graph.addEdge(nodes[v].second, sink, FlowGraph::kInfinite);
  std::vector<bool> sourceSide = graph.minCut(source, sink);
  for (Operation &op : body.without_terminator())
    if (!backwardOps.contains(&op) && op.getNumResults() > 0 &&
        sourceSide[nodes[op.getResult(0)].first])
      chosen.insert(&op);
  return chosen;
}

llvm::SetVector<Value>
Partitioner::savedValues(const llvm::DenseSet<Operation *> &forward) {
  Block &body = joint.getBody().front();
  llvm::SetVector<Value> values;
  auto readByBackward = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && !isa<ConstantOp>(def) && forward.contains(def))
      values.insert(v);
  };
  for (Operation &op : body.without_terminator())
    if (!forward.contains(&op))
      for (Value v : op.getOperands())
        readByBackward(v);
  for (Value v : body.getTerminator()->getOperands().drop_front())
    readByBackward(v);
  return values;
}

void Partitioner::planWithinBudget() {
  auto bytesOfAll = [](const llvm::SetVector<Value> &values) {
    int64_t n = 0;
    for (Value v : values)
      n += bytesOf(v);
    return n;
  };
  // The no-recompute plan: the forward graph computes every forward op.
  llvm::DenseSet<Operation *> everything;
  for (Operation &op : joint.getBody().front().without_terminator())
    if (!backwardOps.contains(&op))
      everything.insert(&op);
  savedBytesNoRecompute = bytesOfAll(savedValues(everything));

  llvm::DenseSet<Operation *> allowed;
  forwardOps = chooseForwardOps(allowed);
  if (!options.recompute || options.memoryBudget >= 1.0)
    return;
  Value loss = joint.getBody().front().getTerminator()->getOperand(0);
  auto limit = static_cast<int64_t>(options.memoryBudget *
                                    static_cast<double>(savedBytesNoRecompute));
  while (true) {
    llvm::SetVector<Value> values = savedValues(forwardOps);
    if (bytesOfAll(values) <= limit)
      return;
    // The saved value whose producer is cheapest to recompute per byte:
    // the matmul or convolution computing it, directly or through cheap
    // (recomputable) ops such as a bias add.
    Operation *best = nullptr;
    double bestCost = 0;
    for (Value v : values) {
      if (bytesOf(v) == 0)
        continue;
      llvm::SmallVector<Value> work = {v};
      llvm::DenseSet<Operation *> seen;
      while (!work.empty()) {
        Operation *def = work.pop_back_val().getDefiningOp();
        if (!def || !seen.insert(def).second || backwardOps.contains(def))
          continue;
        if (isRecomputable(def)) {
          llvm::append_range(work, def->getOperands());
          continue;
        }
        // Matmuls and convolutions only: a recomputed reduction (a
        // softmax) can meet its backward users in a fusion region that
        // kiln-fuse forms but the kernel lowering rejects (two reduction
        // domains), a fusion bug left for later.
        if (!def->hasTrait<OpTrait::Library>() || allowed.contains(def) ||
            llvm::is_contained(def->getResults(), loss))
          continue;
        double cost = static_cast<double>(flopsOf(def)) / bytesOf(v);
        if (!best || cost < bestCost)
          best = def, bestCost = cost;
      }
    }
    if (!best)
      return; // nothing more can be recomputed: the closest plan
    allowed.insert(best);
    forwardOps = chooseForwardOps(allowed);
  }
}

func::FuncOp Partitioner::buildForward(OpBuilder &b) {
  Block &body = joint.getBody().front();
  Operation *terminator = body.getTerminator();
  // The forward values the backward side (its ops and the gradients)
  // reads, constants aside (the backward graph makes its own).
  saved = savedValues(forwardOps);
  for (Value v : saved)
    savedBytes += bytesOf(v);

  // Which ops the forward graph needs: those the loss and the saved values
  // depend on.
  llvm::DenseSet<Operation *> live;
  SmallVector<Value> work(saved.begin(), saved.end());
  work.push_back(terminator->getOperand(0));
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !live.insert(def).second)
      continue;
    for (Value v : def->getOperands())
      work.push_back(v);
  }

  SmallVector<Value> results = {terminator->getOperand(0)};
  results.append(saved.begin(), saved.end());
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  auto f = b.create<func::FuncOp>(
      joint.getLoc(), "forward",
      b.getFunctionType(joint.getArgumentTypes(), resultTypes));
  Block *entry = f.addEntryBlock();
  IRMapping map;
  for (auto [from, to] :
       llvm::zip(body.getArguments(), entry->getArguments())) {
    map.map(from, to);
    to.setLoc(from.getLoc());
  }
  OpBuilder inner = OpBuilder::atBlockEnd(entry);
  for (Operation &op : body.without_terminator())
    if (live.contains(&op))
      inner.clone(op, map);
  SmallVector<Value> mapped;
  for (Value v : results)
    mapped.push_back(map.lookup(v));
  inner.create<func::ReturnOp>(terminator->getLoc(), mapped);
  for (unsigned i = 0; i < joint.getNumArguments(); ++i)
    f.setArgAttrs(i, joint.getArgAttrDict(i));
  f.setResultAttrs(0, joint.getResultAttrDict(0));
  for (unsigned i = 0; i < saved.size(); ++i)
    f.setResultAttr(i + 1, "kiln.name",
                    b.getStringAttr("saved." + std::to_string(i)));
  return f;
}

func::FuncOp Partitioner::buildBackward(OpBuilder &b) {
  Block &body = joint.getBody().front();
  Operation *terminator = body.getTerminator();
  // The ops the gradients need, computed on the backward side: what they
  // read that is not saved (constants are re-created).
  llvm::DenseSet<Operation *> live;
  SmallVector<Value> work(terminator->getOperands().drop_front());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || saved.contains(v) || !live.insert(def).second)
      continue;
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  // Arguments: the saved values, then the joint graph's arguments those
  // ops (or the results) read.
  SmallVector<Value> inputs(saved.begin(), saved.end());
  llvm::SetVector<BlockArgument> args;
  auto noteArgument = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      args.insert(arg);
  };
  for (Operation &op : body.without_terminator())
    if (live.contains(&op))
      for (Value v : op.getOperands())
        noteArgument(v);
  for (Value v : terminator->getOperands().drop_front())
    noteArgument(v);
  inputs.append(args.begin(), args.end());

  SmallVector<Type> argTypes, resultTypes;
  for (Value v : inputs)
    argTypes.push_back(v.getType());
  for (Value v : terminator->getOperands().drop_front())
    resultTypes.push_back(v.getType());
  auto f = b.create<func::FuncOp>(joint.getLoc(), "backward",
                                  b.getFunctionType(argTypes, resultTypes));
  Block *entry = f.addEntryBlock();
  IRMapping map;
  for (auto [from, to] : llvm::zip(inputs, entry->getArguments())) {
    map.map(from, to);
    to.setLoc(from.getLoc());
  }
  OpBuilder inner = OpBuilder::atBlockEnd(entry);
  for (Operation &op : body.without_terminator()) {
    if (!live.contains(&op))
      continue;
    Operation *copy = inner.clone(op, map);
    copy->removeAttr(kGradSeedAttr);
    if (!backwardOps.contains(&op) && !isa<ConstantOp>(op)) {
      ++recomputed;
      recomputeFlops += flopsOf(&op);
    }
  }
  SmallVector<Value> mapped;
  for (Value v : terminator->getOperands().drop_front())
    mapped.push_back(map.lookup(v));
  inner.create<func::ReturnOp>(terminator->getLoc(), mapped);
  for (unsigned i = 0; i < saved.size(); ++i)
    f.setArgAttr(i, "kiln.name", b.getStringAttr("saved." + std::to_string(i)));
  for (auto [i, arg] : llvm::enumerate(args))
    f.setArgAttrs(saved.size() + i, joint.getArgAttrDict(arg.getArgNumber()));
  for (unsigned i = 1; i < joint.getNumResults(); ++i)
    f.setResultAttrs(i - 1, joint.getResultAttrDict(i));
  return f;
}

LogicalResult Partitioner::run() {
  findBackwardOps();
  planWithinBudget();
  OpBuilder b(joint);
  func::FuncOp forward = buildForward(b);
  func::FuncOp backward = buildBackward(b);
  for (func::FuncOp f : {forward, backward}) {
    f->setAttr("kiln.graph", b.getUnitAttr());
    f->setAttr(kSavedBytesAttr, b.getI64IntegerAttr(savedBytes));
    f->setAttr(kRecomputedOpsAttr, b.getI64IntegerAttr(recomputed));
    f->setAttr(kRecomputeFlopsAttr, b.getI64IntegerAttr(recomputeFlops));
    f->setAttr(kSavedBytesNoRecomputeAttr,
               b.getI64IntegerAttr(savedBytesNoRecompute));
  }
  joint.erase();
  return success();
}

struct PartitionPass
    : public PassWrapper<PartitionPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PartitionPass)
  PartitionPass() = default;
  PartitionPass(const PartitionPass &other) : PassWrapper(other) {}
  explicit PartitionPass(PartitionOptions options) {
    recompute = options.recompute;
    memoryBudget = options.memoryBudget;
  }
  StringRef getArgument() const final { return "kiln-partition"; }
  StringRef getDescription() const final {
    return "Split the joint graph into @forward and @backward, saving or "
           "recomputing activations by a min-cut";
  }
  void runOnOperation() final {
    func::FuncOp joint;
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (f->hasAttr(kJointAttr))
        joint = f;
    if (!joint) {
      getOperation().emitError("no joint graph (kiln.joint) to partition; "
                               "run kiln-autodiff first");
      return signalPassFailure();
    }
    if (!(memoryBudget > 0.0 && memoryBudget <= 1.0)) {
      getOperation().emitError("kiln-partition: memory-budget must be in "
                               "(0, 1], not ")
          << memoryBudget.getValue();
      return signalPassFailure();
    }
    if (failed(Partitioner(joint, PartitionOptions{recompute, memoryBudget})
                   .run()))
      signalPassFailure();
  }
  Option<bool> recompute{*this, "recompute",
                         llvm::cl::desc("Recompute cheap forward ops in the "
                                        "backward graph instead of saving "
                                        "their results"),
                         llvm::cl::init(true)};
  Option<double> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Saved activations at most this fraction (0, 1] of the "
                     "no-recompute plan's; expensive ops are recomputed as "
                     "needed"),
      llvm::cl::init(1.0)};
};

} // namespace

std::unique_ptr<Pass> createPartitionPass(PartitionOptions options) {
  return std::make_unique<PartitionPass>(options);
}

} // namespace kiln
