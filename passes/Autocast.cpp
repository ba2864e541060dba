//===- Autocast.cpp - Mixed precision: GEMMs low, statistics f32 ----------===//
//
// This file implements `kiln-autocast` (`kiln compile --precision bf16|f16`),
// the counterpart of torch.autocast for a whole graph: the ops that are
// GEMMs or convolutions compute in the low precision (bf16 or f16 operands,
// f32 accumulation: what cuBLASLt, cuDNN and the reference kernels do for
// those types), the ops whose accuracy needs the range or the precision of
// f32 stay f32, and the rest follow their operands. The policy is the table
// of precisionClassOf, in one place:
//
//   low     the library family (matmul, conv, conv_transpose), einsum,
//           attention;
//   f32     the reduction family, softmax / log_softmax, the norms (layer,
//           batch, instance, group, RMS, LRN, Lp), exp, log, pow, the
//           recurrences (LSTM, GRU, RNN), cumulative sums and products, the
//           losses;
//   follow  everything else (elementwise ops, views, data movement): in the
//           low precision when every float operand is low or weak, else f32.
//
// "Weak" operands are constants and weights (arguments tagged kiln.weight):
// like a Python scalar in PyTorch's type promotion, they take the other
// operands' precision instead of promoting them (a bias added to a bf16 GEMM
// is rounded to bf16, once: kiln-fold-constants folds the cast of a
// constant, kiln-mark-load-time runs that of a weight once, at load). An op
// that takes such a parameter only in f32 (Resize's scales and roi) computes
// in the low precision with the parameter left as it was.
// Overrides per op (`--precision-override NAME=f32|low|follow`, pass option
// `overrides=NAME=CLASS,...`, NAME the op's name without `kiln.`) replace a
// row of the table.
//
// What changes is the element type of f32 values only: f64 and integer
// values, explicit kiln.cast ops (the model's own conversions keep their
// targets) and ops with regions (control flow: their operands are cast back
// to their original types) are left alone. The graph's interface does not
// change either: f32 inputs stay f32 (the first low op casts them, a cast
// that fuses into the kernel producing its operand) and results are cast
// back to their declared types; with `low-interface` (`--io-precision low`)
// the f32 inputs that are not weights and the f32 results become low too,
// as a model converted to bf16 has them (PyTorch's `model.to(bfloat16)`). Casts
// are inserted once per value and precision (a value read by three GEMMs is
// cast once).
//
//===----------------------------------------------------------------------===//

#include "passes/PassDetail.h"
#include "passes/Passes.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <map>

using namespace mlir;

namespace kiln {

std::optional<PrecisionClass> parsePrecisionClass(StringRef name) {
  return llvm::StringSwitch<std::optional<PrecisionClass>>(name)
      .Case("low", PrecisionClass::Low)
      .Case("f32", PrecisionClass::F32)
      .Case("follow", PrecisionClass::Follow)
      .Default(std::nullopt);
}

PrecisionClass precisionClassOf(Operation *op) {
  if (op->hasTrait<OpTrait::Library>())
    return PrecisionClass::Low;
  if (op->hasTrait<OpTrait::Reduction>())
    return PrecisionClass::F32;
  StringRef name = op->getName().getStringRef();
  name.consume_front("kiln.");
  return llvm::StringSwitch<PrecisionClass>(name)
      .Cases("einsum", "attention", "packed_attention", PrecisionClass::Low)
      .Cases("softmax", "log_softmax", "layer_norm", "batch_norm",
             "instance_norm", "group_norm", "rms_norm", PrecisionClass::F32)
      .Cases("lrn", "lp_normalization", "mean_variance_normalization",
             PrecisionClass::F32)
      .Cases("exp", "log", "pow", "lstm", "gru", "rnn", "cumsum", "cumprod",
             PrecisionClass::F32)
      .Cases("softmax_cross_entropy_loss", "negative_log_likelihood_loss",
             PrecisionClass::F32)
      .Default(PrecisionClass::Follow);
}

namespace {

bool isF32Tensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.getElementType().isF32();
}

/// True for values that take their users' precision: constants and weights.
bool isWeak(Value v) {
  if (v.getDefiningOp<ConstantOp>())
    return true;
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return false;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func && (func.getArgAttr(arg.getArgNumber(), "kiln.weight") ||
                  func.getArgAttr(arg.getArgNumber(), "kiln.trainable"));
}

class Autocaster {
public:
  Autocaster(func::FuncOp func, Type low,
             const std::map<std::string, PrecisionClass> &overrides,
             bool lowInterface)
      : func(func), low(low), overrides(overrides), lowInterface(lowInterface),
        rewriter(func.getContext()) {}

  LogicalResult run();

private:
  /// With lowInterface: each f32 input that is not a weight becomes a new
  /// argument of the low type, which the old one maps to (the old one is
  /// erased once nothing reads it).
  void lowerInputs();
  /// The results' element types: the declared ones, or the low type for
  /// f32 results with lowInterface.
  Type resultElementType(Type declared) const {
    Type e = cast<RankedTensorType>(declared).getElementType();
    return lowInterface && e.isF32() ? low : e;
  }
  PrecisionClass classOf(Operation *op) const {
    StringRef name = op->getName().getStringRef();
    name.consume_front("kiln.");
    auto it = overrides.find(name.str());
    return it != overrides.end() ? it->second : precisionClassOf(op);
  }
  /// `v` (the current value of an original one) as element type `to` (f32
  /// or low), through one cast per value and type.
  Value as(Value v, Type to) {
    auto rt = cast<RankedTensorType>(v.getType());
    if (rt.getElementType() == to)
      return v;
    auto key = std::make_pair(v, to);
    auto it = casts.find(key);
    if (it != casts.end())
      return it->second;
    OpBuilder::InsertionGuard guard(rewriter);
    if (Operation *def = v.getDefiningOp())
      rewriter.setInsertionPointAfter(def);
    else
      rewriter.setInsertionPointToStart(v.getParentBlock());
    Value c = passes::buildKilnValue(
        rewriter, v.getLoc(), "kiln.cast", {v},
        {rewriter.getNamedAttr("to", TypeAttr::get(to))});
    casts[key] = c;
    return c;
  }
  Value current(Value v) const {
    auto it = mapping.find(v);
    return it == mapping.end() ? v : it->second;
  }
  /// The operands `op` computes with under the policy. Without `castWeak`,
  /// weak operands (constants, weights) keep their own type: for ops that
  /// take parameters only in f32 (Resize's scales and roi).
  SmallVector<Value> castOperands(Operation *op, bool castWeak = true);

  func::FuncOp func;
  Type low;
  const std::map<std::string, PrecisionClass> &overrides;
  bool lowInterface;
  IRRewriter rewriter;
  /// The inputs lowerInputs replaced.
  SmallVector<unsigned> replacedInputs;
  /// Original value -> the value that replaces it (possibly low).
  DenseMap<Value, Value> mapping;
  DenseMap<std::pair<Value, Type>, Value> casts;
};

SmallVector<Value> Autocaster::castOperands(Operation *op, bool castWeak) {
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(current(v));
  // Explicit casts and ops with regions compute as the model wrote them:
  // their float operands get their original types back.
  Type f32 = Float32Type::get(op->getContext());
  if (isa<CastOp>(op) || op->getNumRegions() > 0) {
    for (auto [i, v] : llvm::enumerate(operands))
      if (isF32Tensor(op->getOperand(i).getType()))
        v = as(v, f32);
    return operands;
  }
  PrecisionClass cls = classOf(op);
  if (cls == PrecisionClass::Follow) {
    // Low when every float operand that was f32 is now low or weak.
    bool anyLow = false, strongF32 = false;
    for (auto [i, v] : llvm::enumerate(operands)) {
      if (!isF32Tensor(op->getOperand(i).getType()))
        continue;
      bool isLow = cast<RankedTensorType>(v.getType()).getElementType() == low;
      anyLow |= isLow;
      strongF32 |= !isLow && !isWeak(op->getOperand(i));
    }
    cls = anyLow && !strongF32 ? PrecisionClass::Low : PrecisionClass::F32;
  }
  Type to = cls == PrecisionClass::Low ? low : f32;
  for (auto [i, v] : llvm::enumerate(operands))
    if (isF32Tensor(op->getOperand(i).getType()) &&
        (castWeak || !isWeak(op->getOperand(i))))
      v = as(v, to);
  return operands;
}

void Autocaster::lowerInputs() {
  Block &body = func.getBody().front();
  unsigned n = body.getNumArguments();
  for (unsigned i = 0; i < n; ++i) {
    BlockArgument arg = body.getArgument(i);
    if (!isF32Tensor(arg.getType()) || isWeak(arg))
      continue;
    auto type = cast<RankedTensorType>(arg.getType()).clone(low);
    BlockArgument lowered = body.addArgument(type, arg.getLoc());
    mapping[arg] = lowered;
    replacedInputs.push_back(i);
  }
}

LogicalResult Autocaster::run() {
  Block &body = func.getBody().front();
  if (lowInterface)
    lowerInputs();
  SmallVector<Operation *> replaced;
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (isa<ConstantOp>(op) || op.hasTrait<mlir::OpTrait::IsTerminator>() ||
        op.getDialect() != op.getContext()->getLoadedDialect<KilnDialect>())
      continue;
    SmallVector<Value> operands = castOperands(&op);
    if (llvm::equal(operands, op.getOperands()))
      continue;
    rewriter.setInsertionPoint(&op);
    Operation *rebuilt = nullptr;
    if (op.getNumRegions() == 0) {
      FailureOr<Operation *> built = passes::buildKilnOp(
          rewriter, op.getLoc(), op.getName().getStringRef(), operands,
          op.getAttrs());
      // An op whose f32 parameters must stay f32 (Resize's scales) still
      // computes in the low precision, its parameters as they were.
      if (failed(built)) {
        SmallVector<Value> firstTry = operands;
        operands = castOperands(&op, /*castWeak=*/false);
        built = passes::buildKilnOp(rewriter, op.getLoc(),
                                    op.getName().getStringRef(), operands,
                                    op.getAttrs());
        // The casts of the parameters made for the first try go again.
        for (auto [tried, used] : llvm::zip(firstTry, operands))
          if (tried != used && tried.use_empty())
            if (auto c = tried.getDefiningOp<CastOp>()) {
              casts.erase({c.getOperand(), c.getTo()});
              c->erase();
            }
      }
      if (succeeded(built))
        rebuilt = *built;
    }
    if (!rebuilt) {
      // An op that does not take the new types (or has regions): its
      // operands in their original types, the op unchanged.
      for (auto [i, v] : llvm::enumerate(operands)) {
        Type want = op.getOperand(i).getType();
        if (v.getType() != want)
          v = as(v, cast<RankedTensorType>(want).getElementType());
        op.setOperand(i, v);
      }
      continue;
    }
    for (auto [from, to] : llvm::zip(op.getResults(), rebuilt->getResults()))
      mapping[from] = to;
    replaced.push_back(&op);
  }
  // The results in their declared types (or low).
  Operation *ret = body.getTerminator();
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = current(operand.get());
    Type want = resultElementType(operand.get().getType());
    v = as(v, want);
    operand.set(v);
  }
  // The replaced ops, users first (their users are rebuilt ops or gone).
  for (Operation *op : llvm::reverse(replaced)) {
    if (!op->use_empty())
      return op->emitError("kiln-autocast: a use of this op was not rewritten "
                           "(a compiler bug: please report it)");
    op->erase();
  }
  if (!lowInterface)
    return success();
  // The replaced inputs: their uses (casts to f32 made for ops kept as
  // written) read the new argument through a cast; the old arguments go,
  // the new ones take their place and attributes.
  for (unsigned i : llvm::reverse(replacedInputs)) {
    BlockArgument old = body.getArgument(i);
    Value lowered = mapping[old];
    if (!old.use_empty()) {
      rewriter.setInsertionPointToStart(&body);
      Value up = passes::buildKilnValue(
          rewriter, old.getLoc(), "kiln.cast", {lowered},
          {rewriter.getNamedAttr(
              "to", TypeAttr::get(getElementTypeOrSelf(old.getType())))});
      old.replaceAllUsesWith(up);
    }
  }
  SmallVector<DictionaryAttr> argAttrs;
  func.getAllArgAttrs(argAttrs);
  unsigned original = argAttrs.size();
  // Each new argument (appended by lowerInputs) moves into its input's
  // position: a fresh argument at i takes its uses, the old input (now at
  // i + 1, unused) goes; the appended ones go last.
  for (unsigned i : replacedInputs) {
    Value lowered = mapping[body.getArgument(i)];
    BlockArgument at =
        body.insertArgument(i, lowered.getType(), lowered.getLoc());
    lowered.replaceAllUsesWith(at);
    body.eraseArgument(i + 1);
  }
  while (body.getNumArguments() > original)
    body.eraseArgument(body.getNumArguments() - 1);
  SmallVector<Type> inputs(body.getArgumentTypes());
  SmallVector<Type> results;
  for (Value v : ret->getOperands())
    results.push_back(v.getType());
  func.setType(FunctionType::get(func.getContext(), inputs, results));
  for (unsigned i = 0; i < original; ++i)
    func.setArgAttrs(i, argAttrs[i]);
  return success();
}

struct AutocastPass
    : public PassWrapper<AutocastPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AutocastPass)

  AutocastPass() = default;
  AutocastPass(const AutocastPass &other) : PassWrapper(other) {}
  AutocastPass(const AutocastOptions &o) {
    precision = o.precision;
    lowInterface = o.lowInterface;
    for (const auto &[name, cls] : o.overrides)
      overrideList.push_back(name + "=" +
                             (cls == PrecisionClass::Low   ? "low"
                              : cls == PrecisionClass::F32 ? "f32"
                                                           : "follow"));
  }
  StringRef getArgument() const final { return "kiln-autocast"; }
  StringRef getDescription() const final {
    return "Mixed precision: GEMMs and convolutions in bf16/f16 with f32 "
           "accumulation, reductions, norms and softmax in f32, the rest "
           "following their operands";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<KilnDialect>();
  }
  void runOnOperation() final {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("kiln.graph") || func.getBody().empty())
      return;
    MLIRContext *ctx = &getContext();
    Type low = precision == "bf16"  ? Type(BFloat16Type::get(ctx))
               : precision == "f16" ? Type(Float16Type::get(ctx))
                                    : Type();
    if (!low) {
      func.emitError("kiln-autocast: precision must be bf16 or f16, not '")
          << precision << "'";
      return signalPassFailure();
    }
    std::map<std::string, PrecisionClass> overrides;
    for (const std::string &entry : overrideList) {
      StringRef name, cls;
      std::tie(name, cls) = StringRef(entry).split('=');
      std::optional<PrecisionClass> parsed = parsePrecisionClass(cls);
      if (name.empty() || !parsed) {
        func.emitError("kiln-autocast: override '")
            << entry << "' is not NAME=low|f32|follow";
        return signalPassFailure();
      }
      name.consume_front("kiln.");
      overrides[name.str()] = *parsed;
    }
    if (failed(Autocaster(func, low, overrides, lowInterface).run()))
      signalPassFailure();
  }

  Option<std::string> precision{*this, "precision",
                                llvm::cl::desc("bf16 or f16"),
                                llvm::cl::init("bf16")};
  Option<bool> lowInterface{
      *this, "low-interface",
      llvm::cl::desc("the graph's f32 inputs and results in the low "
                     "precision too"),
      llvm::cl::init(false)};
  ListOption<std::string> overrideList{
      *this, "overrides",
      llvm::cl::desc("NAME=low|f32|follow entries replacing rows of the "
                     "policy table")};
};

} // namespace

std::unique_ptr<Pass> createAutocastPass(const AutocastOptions &options) {
  return std::make_unique<AutocastPass>(options);
}

std::unique_ptr<Pass> createAutocastPass() {
  return std::make_unique<AutocastPass>();
}

} // namespace kiln
