//===- MarkInPlace.cpp - Kernels that write a result over an operand ------===//
//
// This file implements kiln-mark-in-place, the last pass before code
// generation: it tags a kiln.fusion with `kiln.in_place = array<i64: R, O>`
// when its result R may be stored over its operand O's buffer, because O
// dies there. The memory planner then gives R the buffer of O (one buffer
// instead of two: an elementwise chain of backward steps, or the softmax
// gradient over the gradient of the probabilities), and the kernel printers
// know that the two pointers alias (no row cache in that output; no
// `__restrict__` on the GPU).
//
// With the option `residual-callees` (the CPU target's oneDNN matmul and
// convolution, and its panel GEMM), it also tags a kiln.library_call of
// those callees whose `residual` operand dies there: the call's result
// takes the residual's buffer, and the library adds the residual it finds
// in its destination (oneDNN's sum post-op) instead of reading a second
// tensor. On oneDNN 2.6
// that is more than a buffer saved: with a binary-add post-op it runs a
// 1x1 convolution with its older `jit_1x1` kernel, with a sum post-op with
// `brgconv_1x1` (ResNet-50's 15 residual convolutions).
//
// The conditions make every element of O read before the element of R at
// the same place is written, by the thread that writes it or before a
// reduction completes, and never read afterwards:
//   * graph level: O is computed by a top-level step (not a weight, an
//     alias view or a graph input), is read once by this fusion and by
//     nothing after it, directly or through its alias views; R has O's type
//     and is not a graph output (but may be a value handed over in the
//     arena, kiln.arena_value); a load-time fusion (kiln.load_time) goes over a
//     load-time O that only load-time steps read (they run in order, in
//     the model's prepared memory, before any run), a fusion of the run
//     over a value of the run;
//   * kernel level: every op of the region that reads O's block argument,
//     transitively, is elementwise at R's shape (reading the same element)
//     or a reduction (whose loops all run before the epilogue stores); R is
//     the last full-shape result (results are stored in order, each after
//     the loads it needs); in a reduction kernel R either reads a reduction
//     (stored by the epilogue, after every reduce loop) or, with one level
//     of reductions, is stored by the first reduce loop and no result of
//     the epilogue reads O; no reduction is over leading dims only (a
//     column reduction, whose loads must not wait for stores).
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"
#include "passes/PassDetail.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

#include <functional>

using namespace mlir;

namespace kiln {

namespace {

/// The region's values that depend on block argument `arg`, and whether
/// every use on the way reads the element at the argument's index:
/// elementwise ops at the shape of the dependent operand, and transposes,
/// as long as each dependent value reaches the yield or a reduction with
/// its dims in the argument's order (a channels-last kernel's NCHW body
/// transposes its operand there and back); or reduces (reduction ops).
struct ArgumentReads {
  llvm::DenseSet<Value> dependents;
  bool sameElement = true;
};

ArgumentReads collectReads(BlockArgument arg) {
  ArgumentReads reads;
  // The argument's dim that each dim of a dependent value indexes.
  llvm::DenseMap<Value, SmallVector<int64_t>> dimsOf;
  auto identity = [](ArrayRef<int64_t> dims) {
    for (auto [i, d] : llvm::enumerate(dims))
      if (d != static_cast<int64_t>(i))
        return false;
    return true;
  };
  std::function<void(Value, SmallVector<int64_t>)> visit =
      [&](Value v, SmallVector<int64_t> dims) {
        auto [found, inserted] = dimsOf.try_emplace(v, dims);
        if (!inserted) {
          reads.sameElement &= found->second == dims;
          return;
        }
        reads.dependents.insert(v);
        auto vt = cast<RankedTensorType>(v.getType());
        for (Operation *user : v.getUsers()) {
          if (isa<YieldOp>(user) || user->hasTrait<OpTrait::Reduction>()) {
            reads.sameElement &= identity(dims);
            for (Value r : user->getResults())
              reads.dependents.insert(r);
            continue;
          }
          if (auto transpose = dyn_cast<TransposeOp>(user)) {
            SmallVector<int64_t> moved;
            for (int64_t d : transpose.getPerm())
              moved.push_back(dims[d]);
            visit(transpose.getResult(), moved);
            continue;
          }
          auto t =
              user->getNumResults() == 1
                  ? dyn_cast<RankedTensorType>(user->getResult(0).getType())
                  : RankedTensorType();
          if (!user->hasTrait<OpTrait::Elementwise>() || !t ||
              t.getShape() != vt.getShape()) {
            reads.sameElement = false;
            continue;
          }
          visit(user->getResult(0), dims);
        }
      };
  auto dims = llvm::to_vector(
      llvm::seq<int64_t>(0, cast<RankedTensorType>(arg.getType()).getRank()));
  visit(arg, dims);
  return reads;
}

/// Whether `v` is computed from the result of a reduction in the region.
bool readsReduction(Value v, llvm::DenseMap<Value, bool> &memo) {
  auto found = memo.find(v);
  if (found != memo.end())
    return found->second;
  Operation *def = v.getDefiningOp();
  bool result = false;
  if (def) {
    if (def->hasTrait<OpTrait::Reduction>())
      result = true;
    else
      result = llvm::any_of(def->getOperands(), [&](Value operand) {
        return readsReduction(operand, memo);
      });
  }
  memo[v] = result;
  return result;
}

/// Whether reduction `op` reduces the innermost dim of its operand (a row
/// reduction); false for a column reduction (leading dims only).
bool reducesInnermost(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  std::optional<SmallVector<int64_t>> axes =
      op->getNumOperands() > 1 ? passes::getConstantInts(op->getOperand(1))
                               : std::nullopt;
  if (!type || !axes)
    return true;
  int64_t rank = type.getRank();
  return axes->empty() || llvm::any_of(*axes, [&](int64_t a) {
           return a == rank - 1 || a == -1;
         });
}

/// Whether fusion `op` may store result `result` over operand `operand`
/// (the kernel-level conditions of the file comment).
bool kernelAllowsInPlace(FusionOp op, unsigned operand, unsigned result) {
  Block &block = op.getBody();
  auto type = cast<RankedTensorType>(op->getResult(result).getType());
  Operation *yield = block.getTerminator();
  // The reductions and their levels.
  llvm::DenseMap<Value, bool> memo;
  bool anyReduction = false, nestedReduction = false, columns = false;
  block.walk([&](Operation *inner) {
    if (!inner->hasTrait<OpTrait::Reduction>())
      return;
    anyReduction = true;
    nestedReduction |= readsReduction(inner->getOperand(0), memo);
    columns |= !reducesInnermost(inner);
  });
  // A column reduction's loop (the bias gradient of a Linear layer, fused
  // with the activation's gradient) reads each thread's elements far apart
  // and relies on many loads in flight: stored over its operand, every
  // load would wait for the stores before it (the pointers may alias).
  // Measured on the H200: gpt2_block_train's GELU gradient kernel took
  // 0.227 ms in place, 1.8 TB/s.
  if (columns)
    return false;
  // R is the last result of its shape; in a pointwise kernel every result
  // has that shape (one loop nest).
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    auto t = cast<RankedTensorType>(op->getResult(r).getType());
    if (r > result && t.getShape() == type.getShape())
      return false;
    if (!anyReduction && t.getShape() != type.getShape())
      return false;
  }
  // (The operand has the result's type: the argument's element is R's.)
  ArgumentReads reads = collectReads(block.getArgument(operand));
  if (!reads.sameElement)
    return false;
  if (!anyReduction || readsReduction(yield->getOperand(result), memo))
    return true;
  // R is stored by the first reduce loop: nothing may read O later.
  if (nestedReduction)
    return false;
  // (Results of the reduced shape read O through the reductions only.)
  for (unsigned r = 0; r < yield->getNumOperands(); ++r) {
    Value v = yield->getOperand(r);
    if (r != result &&
        cast<RankedTensorType>(v.getType()).getShape() == type.getShape() &&
        readsReduction(v, memo) &&
        reads.dependents.count(v))
      return false;
  }
  return true;
}

/// Whether every read of `v` (`view`: an alias view of the operand) other
/// than `op`'s own is by a step before `op` that is not the return (and, for
/// a load-time `op`, a load-time step), directly or through alias views of
/// it; `op` reads no view.
bool readOnlyBefore(Value v, Operation *op, bool loadTime, bool view = false) {
  return llvm::all_of(v.getUsers(), [&](Operation *user) {
    if (user == op)
      return !view;
    if (isa<func::ReturnOp>(user) || !user->isBeforeInBlock(op) ||
        (loadTime && !user->hasAttr(kLoadTimeAttr)))
      return false;
    return !user->hasAttr(kAliasAttr) ||
           readOnlyBefore(user->getResult(0), op, loadTime, /*view=*/true);
  });
}

/// Whether `v` is a buffer that no one reads after `op`: computed by a
/// top-level step that is not a weight or an alias view, and a load-time
/// step exactly when `op` is one (the run's memory, or the prepared memory
/// of the load-time steps), read once by `op` and by nothing after it,
/// through its alias views neither (a channels-last activation that a
/// squeeze-excite mean read through a view before the gate's product).
bool diesAt(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<func::FuncOp>(def->getParentOp()) || isa<ConstantOp>(def) ||
      def->hasAttr(kLoadTimeAttr) != op->hasAttr(kLoadTimeAttr) ||
      def->hasAttr(kAliasAttr))
    return false;
  if (llvm::count(op->getOperands(), v) != 1)
    return false;
  // Load-time steps run before every step of a run, in order among
  // themselves: a load-time O is read by load-time steps only.
  return readOnlyBefore(v, op, op->hasAttr(kLoadTimeAttr));
}

/// Whether `result` is a graph output written into the caller's buffer
/// (a value handed over in the arena is not).
bool isCallerOutput(func::FuncOp graph, Value result) {
  return llvm::any_of(result.getUses(), [&](OpOperand &use) {
    return isa<func::ReturnOp>(use.getOwner()) &&
           !graph.getResultAttr(use.getOperandNumber(), kArenaValueAttr);
  });
}

/// The operand number of library call `call`'s residual when its result
/// may take the residual's buffer: the callee accumulates into its result
/// (one of `callees`), the residual has the result's type and dies there.
std::optional<unsigned> residualInPlace(func::FuncOp graph, LibraryCallOp call,
                                        ArrayRef<std::string> callees) {
  if (!llvm::is_contained(callees, call.getCallee().str()) ||
      call->getNumResults() != 1 || call->hasAttr(kLoadTimeAttr) ||
      call->hasAttr(kInPlaceAttr) || isCallerOutput(graph, call->getResult(0)))
    return std::nullopt;
  Value residual = call.getOperandByRole("residual");
  if (!residual || residual.getType() != call->getResult(0).getType() ||
      !diesAt(residual, call))
    return std::nullopt;
  // diesAt: the call reads it as one operand only.
  return llvm::find(call->getOperands(), residual) -
         call->getOperands().begin();
}

struct MarkInPlacePass
    : public PassWrapper<MarkInPlacePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkInPlacePass)

  MarkInPlacePass() = default;
  MarkInPlacePass(const MarkInPlacePass &other) : PassWrapper(other) {}
  explicit MarkInPlacePass(ArrayRef<std::string> callees) {
    for (const std::string &callee : callees)
      residualCallees.push_back(callee);
  }

  StringRef getArgument() const final { return "kiln-mark-in-place"; }
  StringRef getDescription() const final {
    return "Tag the kernels that store a result over an operand that dies "
           "there with kiln.in_place (result, operand)";
  }
  void runOnOperation() override {
    func::FuncOp graph = getOperation();
    if (graph.isExternal())
      return;
    for (FusionOp op : graph.getBody().front().getOps<FusionOp>()) {
      if (op->hasAttr(kInPlaceAttr))
        continue;
      // The candidate result: the last one not returned by the graph (the
      // caller's buffers) other than as a value handed over in the arena.
      for (int r = op->getNumResults() - 1; r >= 0; --r) {
        Value result = op->getResult(r);
        if (isCallerOutput(graph, result))
          continue;
        std::optional<unsigned> chosen;
        for (OpOperand &use : op->getOpOperands())
          if (use.get().getType() == result.getType() &&
              diesAt(use.get(), op) &&
              kernelAllowsInPlace(op, use.getOperandNumber(), r)) {
            chosen = use.getOperandNumber();
            break;
          }
        if (chosen) {
          op->setAttr(kInPlaceAttr,
                      DenseI64ArrayAttr::get(op->getContext(),
                                             {r, int64_t(*chosen)}));
          break;
        }
      }
    }
    for (LibraryCallOp call : graph.getBody().front().getOps<LibraryCallOp>())
      if (std::optional<unsigned> residual =
              residualInPlace(graph, call, residualCallees))
        call->setAttr(kInPlaceAttr,
                      DenseI64ArrayAttr::get(call->getContext(),
                                             {0, int64_t(*residual)}));
  }

  ListOption<std::string> residualCallees{
      *this, "residual-callees",
      llvm::cl::desc("library calls (callee names) that add a residual "
                     "found in their destination: their result may take "
                     "the buffer of a residual that dies there")};
};

} // namespace

std::optional<std::pair<unsigned, unsigned>> inPlacePair(Operation *op) {
  auto attr = op->getAttrOfType<DenseI64ArrayAttr>(kInPlaceAttr);
  if (!attr || attr.size() != 2)
    return std::nullopt;
  return std::pair<unsigned, unsigned>(attr[0], attr[1]);
}

std::unique_ptr<Pass> createMarkInPlacePass() {
  return std::make_unique<MarkInPlacePass>();
}

std::unique_ptr<Pass>
createMarkInPlacePass(ArrayRef<std::string> residualCallees) {
  return std::make_unique<MarkInPlacePass>(residualCallees);
}

} // namespace kiln
