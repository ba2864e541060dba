//===- FuseOps.cpp - Kernel fusion into kiln.fusion regions ---------------===//
//
// This file implements `kiln-fuse`, which groups the ops of a graph into
// kiln.fusion regions, one generated kernel each (Inductor's scheduler in
// miniature). It runs on decomposed graphs (softmax, layer norm, ... are
// already chains of reductions and elementwise ops).
//
// Grouping is greedy producer-consumer fusion in program order: each op that
// may enter a region (FusionRules.h) starts a group and merges with the
// groups of its data producers when the merged group still forms a valid
// region (one reduction domain; values that fit it; pointwise results of one
// shape) and when merging creates no cycle (no path from the group back to
// itself through an op outside it). A value used inside and outside a group
// becomes a result. A view joins a consumer's group only when it has no
// other users, so a view that feeds several ops stays an alias. Splat and
// rank-0 constants and parameter constants (axes, shapes) are cloned into
// the regions; other constants are operands. Every group that holds an
// elementwise op or a reduction becomes a region, even a single op; groups
// of views alone stay as they are.
//
// What it leaves alone: GEMMs and convolutions (library calls, whose
// epilogues fuse into the next region), every other op that may not enter a
// region, and ops in nested regions. Regions are named `k<N>_<op>` in
// program order after the block is sorted topologically, where <op> is the
// ONNX op type of the first reduction (or first elementwise op) when its
// location carries one, else the kiln op name.
//
//===----------------------------------------------------------------------===//

#include "passes/FusionPasses.h"
#include "passes/FusionRules.h"
#include "passes/LoweringPasses.h"
#include "passes/PassDetail.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;

namespace kiln {
namespace {

/// A set of ops that will become one region.
struct Group {
  SmallVector<Operation *> ops;
};

/// The grouping state of one block.
class Grouping {
public:
  Grouping(Block &block, const FuseOptions &options)
      : block(block), options(options) {
    unsigned index = 0;
    for (Operation &op : block)
      position[&op] = index++;
  }

  /// Forms the groups, in program order.
  void run();
  /// Turns each group with a kernel's worth of ops into a kiln.fusion.
  void materialize();

private:
  Group *groupOf(Operation *op) const { return group.lookup(op); }
  /// The values defined in `ops` that are used by ops outside `members`.
  SmallVector<Value> resultsOf(ArrayRef<Operation *> ops,
                               llvm::function_ref<bool(Operation *)> inside);
  /// The op of this block that holds `op` (itself or an ancestor).
  Operation *inBlock(Operation *op) const {
    return block.findAncestorOpInBlock(*op);
  }
  bool tryMerge(Group *producer, Group *consumer);
  bool recomputedPerBroadcast(Group *producer, Value value,
                              Operation *consumer) const;
  bool createsCycle(Group *a, Group *b);
  void materialize(Group &g);

  /// True for an op computed from weights and constants only (weights:
  /// arguments marked `kiln.weight`): it groups only with such ops, so that
  /// the wrapper computes it once at load time (weight preparation) instead
  /// of inside a per-run kernel.
  bool isWeightDerived(Operation *op) const {
    return weightDerived.contains(op);
  }
  void classifyWeightDerived(Operation *op);
  bool isTransposeForGemm(ArrayRef<Operation *> ops) const;

  Block &block;
  FuseOptions options;
  DenseSet<Operation *> weightDerived;
  DenseMap<Operation *, unsigned> position;
  DenseMap<Operation *, Group *> group;
  std::vector<std::unique_ptr<Group>> groups;
};

/// A view that moves data: its result is not the operand's bytes read in
/// order (transpose, slice, expand), so it needs a kernel (a copy with
/// index arithmetic) unless it fuses into one.
static bool isDataMovingView(Operation *op) {
  return isa<TransposeOp, SliceOp, ExpandOp>(op);
}

void Grouping::classifyWeightDerived(Operation *op) {
  if (isa<ConstantOp>(op) || op->getNumOperands() == 0)
    return;
  bool derived = llvm::all_of(op->getOperands(), [&](Value v) {
    return passes::isWeight(v) || weightDerived.contains(v.getDefiningOp());
  });
  if (derived)
    weightDerived.insert(op);
}

void Grouping::run() {
  for (Operation &op : block) {
    classifyWeightDerived(&op);
    if (isa<ConstantOp>(op) || !canEnterRegion(&op))
      continue;
    groups.push_back(std::make_unique<Group>());
    groups.back()->ops.push_back(&op);
    group[&op] = groups.back().get();
    for (OpOperand &operand : op.getOpOperands()) {
      if (FusionOp::isParameterOperand(&op, operand.getOperandNumber()))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      Group *producerGroup = producer ? groupOf(producer) : nullptr;
      Group *consumerGroup = groupOf(&op);
      if (!producerGroup || producerGroup == consumerGroup)
        continue;
      if (isWeightDerived(producer) != isWeightDerived(&op))
        continue;
      // A view with other users stays outside: it aliases, while a region
      // result would be a copy.
      if (FusionOp::isViewOp(producer) &&
          llvm::any_of(producer->getUsers(), [&](Operation *user) {
            Group *g = groupOf(inBlock(user));
            return g != producerGroup && g != consumerGroup;
          }))
        continue;
      if (recomputedPerBroadcast(producerGroup, operand.get(), &op))
        continue;
      tryMerge(producerGroup, consumerGroup);
    }
  }
}

/// True when `options.isolateBroadcastTranscendentals` and merging the
/// elementwise group `producer` into `consumer`, which reads its `value`
/// broadcast to at least 8 times its size, would compute a transcendental op
/// again for every element of the broadcast (EfficientNet's squeeze-excite
/// gate: sigmoid of [1, 1, 1, C] in the multiply of an [1, H, W, C]
/// activation). A group with a reduction merges regardless: its consumer
/// is its epilogue.
bool Grouping::recomputedPerBroadcast(Group *producer, Value value,
                                      Operation *consumer) const {
  if (!options.isolateBroadcastTranscendentals)
    return false;
  auto small = dyn_cast<RankedTensorType>(value.getType());
  auto large = consumer->getNumResults() == 1
                   ? dyn_cast<RankedTensorType>(consumer->getResult(0).getType())
                   : RankedTensorType();
  if (!small || !large || !small.hasStaticShape() || !large.hasStaticShape() ||
      large.getNumElements() < 8 * std::max<int64_t>(small.getNumElements(), 1))
    return false;
  return llvm::none_of(producer->ops,
                       [](Operation *op) {
                         return op->hasTrait<OpTrait::Reduction>();
                       }) &&
         llvm::any_of(producer->ops, [](Operation *op) {
           return op->hasTrait<OpTrait::Transcendental>();
         });
}

SmallVector<Value>
Grouping::resultsOf(ArrayRef<Operation *> ops,
                    llvm::function_ref<bool(Operation *)> inside) {
  SmallVector<Value> results;
  for (Operation *op : ops)
    for (Value value : op->getResults())
      if (llvm::any_of(value.getUsers(),
                       [&](Operation *user) { return !inside(inBlock(user)); }))
        results.push_back(value);
  return results;
}

bool Grouping::tryMerge(Group *producer, Group *consumer) {
  SmallVector<Operation *> ops(producer->ops);
  ops.append(consumer->ops);
  llvm::sort(ops, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  SmallVector<Value> results = resultsOf(ops, [&](Operation *op) {
    Group *g = groupOf(op);
    return g == producer || g == consumer;
  });
  if (!canFormRegion(ops, results) || createsCycle(producer, consumer))
    return false;
  for (Operation *op : producer->ops)
    group[op] = consumer;
  consumer->ops = std::move(ops);
  producer->ops.clear();
  return true;
}

bool Grouping::createsCycle(Group *a, Group *b) {
  auto inUnion = [&](Operation *op) {
    Group *g = groupOf(op);
    return g == a || g == b;
  };
  // Walk forward from the union's outside users; another group counts as one
  // node (all of its ops depend on all of its inputs once it is a region).
  SmallPtrSet<Operation *, 32> visited;
  SmallVector<Operation *> worklist;
  auto visit = [&](Operation *op) {
    if (!visited.insert(op).second)
      return;
    worklist.push_back(op);
    if (Group *g = groupOf(op))
      for (Operation *member : g->ops)
        if (visited.insert(member).second)
          worklist.push_back(member);
  };
  for (Group *g : {a, b})
    for (Operation *op : g->ops)
      for (Operation *user : op->getUsers())
        if (!inUnion(inBlock(user)))
          visit(inBlock(user));
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Operation *user : op->getUsers()) {
      Operation *owner = inBlock(user);
      if (inUnion(owner))
        return true;
      visit(owner);
    }
  }
  return false;
}

/// A lone transpose of the last two dims of a weight, read only by matmuls:
/// GEMM libraries read the weight in place with a transpose flag (Linear
/// layers export as MatMul(x, Transpose(W))), so it gets no copy kernel. (A
/// transpose of a computed value gets one: reading its input later would
/// extend that input's lifetime behind the memory planner's back.)
bool Grouping::isTransposeForGemm(ArrayRef<Operation *> ops) const {
  auto t = ops.size() == 1 ? dyn_cast<TransposeOp>(ops.front()) : nullptr;
  if (!t || !isWeightDerived(t))
    return false;
  ArrayRef<int64_t> perm = t.getPerm();
  int64_t r = perm.size();
  for (int64_t i = 0; i + 2 < r; ++i)
    if (perm[i] != i)
      return false;
  return r >= 2 && perm[r - 2] == r - 1 && perm[r - 1] == r - 2 &&
         llvm::all_of(t->getUsers(),
                      [](Operation *user) { return isa<MatMulOp>(user); });
}

void Grouping::materialize() {
  for (std::unique_ptr<Group> &g : groups)
    if (llvm::any_of(g->ops,
                     [](Operation *op) {
                       return FusionOp::isElementwiseOp(op) ||
                              FusionOp::isReductionOp(op) ||
                              isDataMovingView(op);
                     }) &&
        !isTransposeForGemm(g->ops))
      materialize(*g);
}

void Grouping::materialize(Group &g) {
  llvm::SmallPtrSet<Operation *, 16> members(g.ops.begin(), g.ops.end());
  auto inside = [&](Operation *op) { return members.contains(op); };
  SmallVector<Value> results = resultsOf(g.ops, inside);

  // Inputs, and the constants that are cloned into the region.
  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> inlined;
  bool hasReduction = false;
  for (Operation *op : g.ops) {
    hasReduction |= FusionOp::isReductionOp(op);
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      Operation *def = value.getDefiningOp();
      if (def && members.contains(def))
        continue;
      auto constant = dyn_cast_or_null<ConstantOp>(def);
      if (constant &&
          (FusionOp::isParameterOperand(op, operand.getOperandNumber()) ||
           constant.getValue().isSplat() || constant.getType().getRank() == 0))
        inlined.insert(def);
      else
        inputs.insert(value);
    }
  }

  SmallVector<Location> locs;
  for (Operation *op : g.ops)
    locs.push_back(op->getLoc());
  OpBuilder builder(g.ops.back()->getContext());
  builder.setInsertionPointAfter(g.ops.back());
  SmallVector<Type> resultTypes;
  for (Value result : results)
    resultTypes.push_back(result.getType());
  auto fusion = builder.create<FusionOp>(
      builder.getFusedLoc(locs), resultTypes, inputs.getArrayRef(),
      builder.getStringAttr("k"),
      builder.getStringAttr(hasReduction ? FusionOp::kReduction
                                         : FusionOp::kPointwise));
  for (auto [result, replacement] : llvm::zip(results, fusion.getResults()))
    result.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !inside(inBlock(use.getOwner()));
    });

  Block *body = new Block();
  fusion.getRegion().push_back(body);
  for (Value input : inputs)
    body->addArgument(input.getType(), input.getLoc());
  auto isInRegion = [&](OpOperand &use) {
    return use.getOwner()->getParentOp() == fusion.getOperation();
  };
  for (Operation *op : g.ops)
    op->moveBefore(body, body->end());
  // One clone per distinct constant value (the value attribute holds the
  // type too).
  builder.setInsertionPointToStart(body);
  DenseMap<Attribute, Value> clones;
  for (Operation *constant : inlined) {
    Value &clone = clones[cast<ConstantOp>(constant).getValue()];
    if (!clone)
      clone = builder.clone(*constant)->getResult(0);
    constant->getResult(0).replaceUsesWithIf(clone, isInRegion);
  }
  for (auto [input, arg] : llvm::zip(inputs, body->getArguments()))
    Value(input).replaceUsesWithIf(arg, isInRegion);
  builder.setInsertionPointToEnd(body);
  builder.create<YieldOp>(fusion.getLoc(), results);
  for (Operation *constant : inlined)
    if (constant->use_empty())
      constant->erase();
}

/// `LayerNormalization` -> `layer_normalization`; other characters that are
/// not letters or digits become `_`.
std::string snakeCase(StringRef name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (llvm::isUpper(c)) {
      bool afterLower =
          i > 0 && (llvm::isLower(name[i - 1]) || llvm::isDigit(name[i - 1]));
      bool acronymEnd = i > 0 && llvm::isUpper(name[i - 1]) &&
                        i + 1 < name.size() && llvm::isLower(name[i + 1]);
      if ((afterLower || acronymEnd) && !out.empty() && out.back() != '_')
        out += '_';
      out += llvm::toLower(c);
    } else if (llvm::isAlnum(c)) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  return out;
}

/// The ONNX op type a location names (`loc(fused<"LayerNormalization">[..])`).
std::optional<std::string> onnxOpType(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (auto type = llvm::dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      if (!type.getValue().empty())
        return snakeCase(type.getValue());
  return std::nullopt;
}

/// The `<op>` of a region's name: its first reduction, else its first
/// elementwise op, named by ONNX op type or kiln op name.
std::string kernelSuffix(FusionOp fusion) {
  Operation *chosen = nullptr;
  for (Operation &op : fusion.getBody().without_terminator())
    if (FusionOp::isReductionOp(&op)) {
      chosen = &op;
      break;
    }
  if (!chosen)
    for (Operation &op : fusion.getBody().without_terminator())
      if (FusionOp::isElementwiseOp(&op)) {
        chosen = &op;
        break;
      }
  if (!chosen) // a copy kernel of views: named after its first view
    for (Operation &op : fusion.getBody().without_terminator())
      if (isDataMovingView(&op)) {
        chosen = &op;
        break;
      }
  if (!chosen)
    return "kernel";
  if (std::optional<std::string> type = onnxOpType(chosen->getLoc()))
    return *type;
  return chosen->getName().stripDialect().str();
}

/// Orders `block` topologically, each op as early as its original place
/// allows: an op that comes before one of its producers (a library call
/// reading a region that now sits after the region's last member) moves to
/// just after the op that makes it ready, not to the end of the block
/// (mlir::sortTopologically defers it past every op that was ready first,
/// which held a weight gradient's operands alive through a whole backward
/// graph). Returns false on a cycle.
bool sortKeepingPlaces(Block &block) {
  SmallVector<Operation *> original;
  for (Operation &op : block.without_terminator())
    original.push_back(&op);
  DenseSet<Operation *> unplaced(original.begin(), original.end());
  auto ready = [&](Operation *op) {
    WalkResult r = op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (def && def->getBlock() == &block && unplaced.count(def))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return !r.wasInterrupted();
  };
  SmallVector<Operation *> order, waiting;
  auto place = [&](Operation *op) {
    unplaced.erase(op);
    order.push_back(op);
  };
  for (Operation *op : original) {
    if (!ready(op)) {
      waiting.push_back(op);
      continue;
    }
    place(op);
    // Ops waiting for this one (and for each other), in their order.
    for (bool progress = true; progress;) {
      progress = false;
      for (auto it = waiting.begin(); it != waiting.end();) {
        if (!ready(*it)) {
          ++it;
          continue;
        }
        place(*it);
        it = waiting.erase(it);
        progress = true;
      }
    }
  }
  if (!waiting.empty())
    return false;
  Operation *terminator = block.getTerminator();
  for (Operation *op : order)
    op->moveBefore(terminator);
  return true;
}

struct FuseOpsPass
    : public PassWrapper<FuseOpsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseOpsPass)

  FuseOpsPass() = default;
  FuseOpsPass(const FuseOpsPass &other) : PassWrapper(other) {}
  explicit FuseOpsPass(const FuseOptions &options) {
    isolateBroadcastTranscendentals = options.isolateBroadcastTranscendentals;
  }

  Option<bool> isolateBroadcastTranscendentals{
      *this, "isolate-broadcast-transcendentals",
      llvm::cl::desc("Keep an elementwise group with a transcendental op out "
                     "of a consumer that broadcasts its result (the CPU "
                     "target's choice)"),
      llvm::cl::init(false)};

  StringRef getArgument() const final { return "kiln-fuse"; }
  StringRef getDescription() const final {
    return "Group elementwise ops, reductions and views into kiln.fusion "
           "regions (one kernel each)";
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &block = func.getBody().front();
    FuseOptions options;
    options.isolateBroadcastTranscendentals = isolateBroadcastTranscendentals;
    Grouping grouping(block, options);
    grouping.run();
    grouping.materialize();
    bool sorted = sortKeepingPlaces(block);
    assert(sorted && "kiln-fuse created a cycle between regions");
    (void)sorted;
    int index = 0;
    for (auto fusion : block.getOps<FusionOp>())
      fusion.setName(
          ("k" + llvm::Twine(index++) + "_" + kernelSuffix(fusion)).str());
  }
};

} // namespace

std::unique_ptr<Pass> createFuseOpsPass(const FuseOptions &options) {
  return std::make_unique<FuseOpsPass>(options);
}

void registerFusionPasses() { PassRegistration<FuseOpsPass>(); }

int countKernels(func::FuncOp func) {
  if (func.isExternal())
    return 0;
  return static_cast<int>(
      llvm::range_size(func.getBody().front().getOps<FusionOp>()));
}

FusionSummary summarizeFusion(func::FuncOp func) {
  FusionSummary summary;
  if (func.isExternal())
    return summary;
  std::map<std::string, int> fallback;
  for (Operation &op : func.getBody().front()) {
    // After a target's lowering (kiln-lower-cuda) a kernel the target
    // prints for one op, a library call and an alias count as what they
    // run as; a host op that prepares weights once, at load, is no
    // fallback of the run.
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      ++summary.kernels;
      summary.reductionKernels += fusion.isReduction();
      for (Operation &inner : fusion.getBody().without_terminator())
        summary.fusedOps += !isa<ConstantOp>(inner);
    } else if (op.hasAttr(kKernelAttr)) {
      ++summary.kernels;
    } else if (isa<LibraryCallOp>(op) || isLibraryOp(&op)) {
      ++summary.libraryOps;
    } else if (FusionOp::isViewOp(&op) || op.hasAttr(kAliasAttr)) {
      ++summary.viewOps;
    } else if (op.getDialect() && op.getDialect()->getNamespace() == "kiln" &&
               !isa<ConstantOp>(op)) {
      if (op.hasAttr(kLoadTimeAttr)) {
        ++summary.loadTimeHostOps;
        continue;
      }
      ++summary.fallbackOps;
      ++fallback[op.getName().stripDialect().str()];
    }
  }
  for (auto &entry : fallback)
    summary.fallbackNames.push_back(entry.first);
  return summary;
}

std::string formatFusionSummary(const FusionSummary &s) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << s.kernels << (s.kernels == 1 ? " kernel" : " kernels") << " ("
     << s.reductionKernels << " reduction, " << s.fusedOps << " ops fused), "
     << s.libraryOps << (s.libraryOps == 1 ? " library call" : " library calls")
     << ", " << s.viewOps << (s.viewOps == 1 ? " view" : " views") << ", "
     << s.fallbackOps
     << (s.fallbackOps == 1 ? " fallback op" : " fallback ops");
  if (!s.fallbackNames.empty()) {
    os << " (";
    llvm::interleaveComma(s.fallbackNames, os);
    os << ")";
  }
  return text;
}

} // namespace kiln
