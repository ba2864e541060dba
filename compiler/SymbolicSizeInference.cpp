//===- SymbolicSizeInference.cpp - Which sizes follow the symbols ---------===//
//
// This file implements inferSymbolicSizes: the bound graph and the probe
// graphs are walked in the same order (function arguments, then each op
// before its regions' block arguments and its nested ops), op against op,
// value against value; then each kernel of the bound graph is lowered to
// kernel IR next to its probe twin and the two compared statement by
// statement. Sizes that differ are fitted to `c * s1^e1 * ...` (exponents in
// [-2, 2], one probe per symbol gives each exponent) and written into the
// bound graph's attributes.
//
//===----------------------------------------------------------------------===//

#include "compiler/SymbolicSizeInference.h"

#include "codegen/KernelIR.h"
#include "codegen/MemoryPlanner.h"
#include "codegen/SymbolicShapes.h"
#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"

#include <cstring>
#include <array>
#include <numeric>

using namespace mlir;

namespace kiln {

std::vector<int64_t> probeSizesOf(const SizeSymbol &symbol) {
  std::vector<int64_t> sizes;
  for (int64_t step = 1; step <= 8; step *= 2)
    if (symbol.max - step >= 2)
      sizes.push_back(symbol.max - step);
  sizes.push_back(symbol.max + 1);
  return sizes;
}

namespace {

/// "node 'fc1' (kiln.fusion)" or "op kiln.fusion" for messages.
std::string describeOp(Operation *op) {
  std::vector<std::string> nodes = sourceNodeNames(op);
  std::string name = op->getName().getStringRef().str();
  return nodes.empty() ? "op " + name
                       : "node '" + nodes.front() + "' (" + name + ")";
}

/// Fits `atBound` (the size with every symbol at its bound) and
/// `atProbe[i]` (with probe i's symbol moved) to a SymbolicDim; nullopt when
/// no product of powers in [-2, 2] gives them.
std::optional<SymbolicDim> fitDim(int64_t atBound,
                                  const std::vector<int64_t> &atProbe,
                                  const std::vector<SizeSymbol> &symbols,
                                  const std::vector<SizeProbe> &probes) {
  if (atBound <= 0)
    return std::nullopt;
  std::vector<int> exps(symbols.size(), 0);
  for (size_t p = 0; p < probes.size(); ++p) {
    __int128 b = symbols[probes[p].symbol].max, q = probes[p].size;
    __int128 v0 = atBound, v1 = atProbe[p];
    bool found = false;
    for (int e = -2; e <= 2 && !found; ++e) {
      // v1 / v0 == (q / b)^e, cross-multiplied.
      __int128 lhs = e >= 0 ? v1 : v0, rhs = e >= 0 ? v0 : v1;
      for (int i = 0; i < (e >= 0 ? e : -e); ++i)
        lhs *= b, rhs *= q;
      if (lhs == rhs) {
        exps[probes[p].symbol] = e;
        found = true;
      }
    }
    if (!found)
      return std::nullopt;
  }
  SymbolicDim d;
  __int128 top = atBound, bottom = 1;
  for (size_t s = 0; s < symbols.size(); ++s) {
    for (int i = 0; i < (exps[s] >= 0 ? exps[s] : -exps[s]); ++i)
      (exps[s] > 0 ? bottom : top) *= symbols[s].max;
    if (exps[s] != 0)
      d.factors.push_back({symbols[s].name, exps[s]});
  }
  __int128 g =
      std::gcd(static_cast<int64_t>(top), static_cast<int64_t>(bottom));
  d.num = static_cast<int64_t>(top / g);
  d.den = static_cast<int64_t>(bottom / g);
  std::sort(d.factors.begin(), d.factors.end());
  return d;
}

/// The values of a graph in walk order: the arguments, then for each op its
/// results and its regions' block arguments; and the ops in pre-order.
struct WalkedGraph {
  std::vector<Value> values;
  std::vector<Operation *> ops;
};

WalkedGraph walkGraph(func::FuncOp graph) {
  WalkedGraph w;
  for (BlockArgument arg : graph.getArguments())
    w.values.push_back(arg);
  graph.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    w.ops.push_back(op);
    for (Value r : op->getResults())
      w.values.push_back(r);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          w.values.push_back(arg);
  });
  return w;
}

/// True when `constant` is shape data only: every use is the shape operand
/// of a kiln.reshape or kiln.expand that is a view (inside a kernel, or an
/// alias step), so its values repeat the result type's sizes, which are
/// compared on their own. Its values may then follow the symbols.
bool isShapeOnlyConstant(Operation *constant) {
  if (!isa<ConstantOp>(constant) || constant->getNumResults() != 1 ||
      constant->getResult(0).use_empty())
    return false;
  for (OpOperand &use : constant->getResult(0).getUses()) {
    Operation *user = use.getOwner();
    if (!isa<ReshapeOp, ExpandOp>(user) || use.getOperandNumber() != 1)
      return false;
    bool view = isa<FusionOp>(user->getParentOp()) ||
                user->hasAttr(kAliasAttr);
    if (!view)
      return false;
  }
  return true;
}

/// True when the params `a` and `b` of a library call have the same
/// entries, equal except for integers.
bool sameParamsUpToIntegers(DictionaryAttr a, DictionaryAttr b) {
  if (!b || a.size() != b.size())
    return false;
  for (NamedAttribute entry : a) {
    Attribute other = b.get(entry.getName());
    if (other == entry.getValue())
      continue;
    if (!isa<IntegerAttr>(entry.getValue()) ||
        !isa_and_nonnull<IntegerAttr>(other))
      return false;
  }
  return true;
}

/// Why `a` (bound) and `b` (probe) are not the same op up to sizes, or "".
std::string compareOps(Operation *a, Operation *b,
                       const llvm::DenseMap<Value, Value> &toBound) {
  if (a->getName() != b->getName())
    return describeOp(a) + " became " + b->getName().getStringRef().str();
  if (a->getNumOperands() != b->getNumOperands() ||
      a->getNumResults() != b->getNumResults() ||
      a->getNumRegions() != b->getNumRegions())
    return describeOp(a) + " has other operands or results";
  for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands())) {
    auto it = toBound.find(y);
    if (it == toBound.end() || it->second != x)
      return describeOp(a) + " reads other values";
  }
  DictionaryAttr da = a->getAttrDictionary(), db = b->getAttrDictionary();
  if (da != db && !isShapeOnlyConstant(a)) {
    for (NamedAttribute attr : da) {
      Attribute other = db.get(attr.getName());
      if (other == attr.getValue())
        continue;
      // A library call's integer params (a GEMM's m, a batch stride) may
      // follow the sizes; they are fitted like sizes (kiln.sym_params).
      if (isa<LibraryCallOp>(a) && attr.getName() == "params" &&
          sameParamsUpToIntegers(cast<DictionaryAttr>(attr.getValue()),
                                 dyn_cast_or_null<DictionaryAttr>(other)))
        continue;
      return describeOp(a) + ": its attribute '" + attr.getName().str() +
             "' depends on the sizes";
    }
    if (da.size() != db.size())
      return describeOp(a) + ": its attributes depend on the sizes";
  }
  for (auto [ra, rb] : llvm::zip(a->getRegions(), b->getRegions()))
    if (ra.getBlocks().size() != rb.getBlocks().size())
      return describeOp(a) + " has other regions";
  return "";
}

bool sameBody(const codegen::Body &a, const codegen::Body &b);

bool sameStmt(const codegen::Stmt &a, const codegen::Stmt &b) {
  if (a.kind != b.kind || a.result != b.result || a.buffer != b.buffer ||
      !codegen::IndexExpr::sameStructure(a.index, b.index) ||
      a.value != b.value ||
      std::memcmp(&a.floatValue, &b.floatValue, sizeof(double)) != 0 ||
      a.intValue != b.intValue || a.op != b.op || a.args != b.args ||
      a.attrs.numbers != b.attrs.numbers ||
      a.attrs.strings != b.attrs.strings || a.loopKind != b.loopKind ||
      a.vars != b.vars || a.reductions.size() != b.reductions.size())
    return false;
  for (auto [x, y] : llvm::zip(a.reductions, b.reductions))
    if (x.kind != y.kind || x.type != y.type || x.input != y.input ||
        x.result != y.result)
      return false;
  return sameBody(a.body, b.body);
}

bool sameBody(const codegen::Body &a, const codegen::Body &b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (!sameStmt(x, y))
      return false;
  return true;
}

/// True when the kernels are the same program up to their numbers: loop
/// extents, buffer shapes, index coefficients, constants and divisors,
/// reduction counts and row-cache sizes (fitted by fitKernel).
bool sameKernel(const codegen::Kernel &a, const codegen::Kernel &b) {
  if (a.buffers.size() != b.buffers.size() || a.vars.size() != b.vars.size() ||
      a.temps != b.temps || a.caches.size() != b.caches.size())
    return false;
  for (auto [x, y] : llvm::zip(a.buffers, b.buffers))
    if (x.type != y.type || x.isOutput != y.isOutput ||
        x.sharesWith != y.sharesWith)
      return false;
  for (auto [x, y] : llvm::zip(a.caches, b.caches))
    if (x.type != y.type || x.outputBuffer != y.outputBuffer ||
        !codegen::IndexExpr::sameStructure(x.outputBase, y.outputBase))
      return false;
  return sameBody(a.body, b.body);
}

/// The per-dim SymbolicDim texts ("" static) of sizes `atBound` against the
/// probes' `atProbe[p]`; nullopt when a size fits no product.
std::optional<std::vector<std::string>>
fitSizes(llvm::ArrayRef<int64_t> atBound,
         const std::vector<llvm::SmallVector<int64_t>> &atProbe,
         const std::vector<SizeSymbol> &symbols,
         const std::vector<SizeProbe> &probes) {
  std::vector<std::string> dims(atBound.size());
  for (size_t d = 0; d < atBound.size(); ++d) {
    std::vector<int64_t> values;
    bool same = true;
    for (const auto &shape : atProbe) {
      values.push_back(shape[d]);
      same &= shape[d] == atBound[d];
    }
    if (same)
      continue;
    std::optional<SymbolicDim> fit =
        fitDim(atBound[d], values, symbols, probes);
    if (!fit)
      return std::nullopt;
    dims[d] = fit->str();
  }
  return dims;
}

ArrayAttr stringArray(Builder &b, const std::vector<std::string> &dims) {
  SmallVector<Attribute> attrs;
  for (const std::string &d : dims)
    attrs.push_back(b.getStringAttr(d));
  return b.getArrayAttr(attrs);
}

bool anySymbolic(const std::vector<std::string> &dims) {
  return llvm::any_of(dims, [](const std::string &d) { return !d.empty(); });
}

} // namespace

std::optional<std::string>
inferSymbolicSizes(func::FuncOp bound, const std::vector<SizeSymbol> &symbols,
                   const std::vector<SizeProbe> &probes) {
  WalkedGraph b = walkGraph(bound);
  std::vector<WalkedGraph> ps;
  for (const SizeProbe &probe : probes) {
    ps.push_back(walkGraph(probe.graph));
    WalkedGraph &p = ps.back();
    if (p.ops.size() != b.ops.size() || p.values.size() != b.values.size())
      return "the graph compiled with '" + symbols[probe.symbol].name +
             "' = " + std::to_string(probe.size) + " has other ops than at " +
             std::to_string(symbols[probe.symbol].max) +
             " (a pass decides by the size)";
    llvm::DenseMap<Value, Value> toBound;
    for (auto [x, y] : llvm::zip(b.values, p.values))
      toBound[y] = x;
    for (auto [x, y] : llvm::zip(b.ops, p.ops))
      if (std::string why = compareOps(x, y, toBound); !why.empty())
        return why + " ('" + symbols[probe.symbol].name +
               "' = " + std::to_string(probe.size) + " against " +
               std::to_string(symbols[probe.symbol].max) + ")";
  }

  // Every value's sizes, fitted.
  llvm::DenseMap<Value, std::vector<std::string>> dimsOf;
  for (size_t i = 0; i < b.values.size(); ++i) {
    Type tb = b.values[i].getType();
    auto rb = dyn_cast<RankedTensorType>(tb);
    std::vector<llvm::SmallVector<int64_t>> atProbe;
    bool sameType = true;
    for (const WalkedGraph &p : ps) {
      Type tp = p.values[i].getType();
      sameType &= tp == tb;
      auto rp = dyn_cast<RankedTensorType>(tp);
      if (!rb || !rp || rp.getRank() != rb.getRank() ||
          rp.getElementType() != rb.getElementType() || !rp.hasStaticShape() ||
          !rb.hasStaticShape()) {
        if (tp != tb)
          return "a value's type changes beyond its sizes";
        atProbe.push_back({});
        continue;
      }
      atProbe.emplace_back(rp.getShape());
    }
    if (sameType)
      continue;
    std::optional<std::vector<std::string>> dims =
        fitSizes(rb.getShape(), atProbe, symbols, probes);
    Operation *where = b.values[i].getDefiningOp();
    if (!where)
      where = b.values[i].getParentBlock()->getParentOp();
    if (!dims)
      return describeOp(where) +
             ": a size is not a product of the size symbols";
    dimsOf[b.values[i]] = *dims;
  }

  // Each kernel against its probe twins: the same index arithmetic.
  llvm::DenseMap<Operation *,
                 std::vector<std::pair<StringRef, std::vector<std::string>>>>
      kernelAttrsOf;
  for (size_t i = 0; i < b.ops.size(); ++i) {
    auto fusion = dyn_cast<FusionOp>(b.ops[i]);
    if (!fusion || fusion->getParentOp() != bound.getOperation())
      continue;
    FailureOr<codegen::Kernel> kb = codegen::lowerFusionToKernelIR(fusion);
    if (failed(kb))
      return describeOp(fusion) + ": its kernel does not lower";
    // The kernel's numbers, in one order: loop extents, index numbers,
    // reduction counts.
    auto numbersOf = [](codegen::Kernel k) {
      llvm::SmallVector<int64_t> loops, index, counts;
      for (const codegen::LoopVar &v : k.vars)
        loops.push_back(v.extent);
      codegen::visitIndexNumbers(
          k, [&](int64_t v, std::string &) { index.push_back(v); });
      codegen::visitReductions(
          k, [&](codegen::Reduction &r) { counts.push_back(r.count); });
      return std::array<llvm::SmallVector<int64_t>, 3>{loops, index, counts};
    };
    std::array<std::vector<llvm::SmallVector<int64_t>>, 3> atProbe;
    for (size_t p = 0; p < ps.size(); ++p) {
      FailureOr<codegen::Kernel> kp =
          codegen::lowerFusionToKernelIR(ps[p].ops[i]);
      if (failed(kp) || !sameKernel(*kb, *kp))
        return describeOp(fusion) + " (kernel " + fusion.getName().str() +
               "): its statements depend on '" +
               symbols[probes[p].symbol].name + "'";
      auto numbers = numbersOf(*kp);
      for (size_t n = 0; n < 3; ++n)
        atProbe[n].push_back(numbers[n]);
    }
    auto atBound = numbersOf(*kb);
    static const char *kWhat[] = {"a loop's extent", "an index's stride",
                                  "a reduction's count"};
    static const llvm::StringLiteral kAttr[] = {kSymLoopsAttr, kSymIndexAttr,
                                                kSymCountsAttr};
    for (size_t n = 0; n < 3; ++n) {
      std::optional<std::vector<std::string>> fitted =
          fitSizes(atBound[n], atProbe[n], symbols, probes);
      if (!fitted)
        return describeOp(fusion) + " (kernel " + fusion.getName().str() +
               "): " + kWhat[n] + " is not a product of the size symbols";
      if (anySymbolic(*fitted))
        kernelAttrsOf[fusion].push_back({kAttr[n], *fitted});
    }
  }

  // Library calls' integer params that follow the sizes.
  Builder builder(bound.getContext());
  for (size_t i = 0; i < b.ops.size(); ++i) {
    auto call = dyn_cast<LibraryCallOp>(b.ops[i]);
    if (!call)
      continue;
    SmallVector<NamedAttribute> symbolic;
    for (NamedAttribute entry : call.getParams()) {
      auto atBound = dyn_cast<IntegerAttr>(entry.getValue());
      if (!atBound)
        continue;
      std::vector<llvm::SmallVector<int64_t>> atProbe;
      for (const WalkedGraph &p : ps)
        atProbe.push_back({cast<IntegerAttr>(cast<LibraryCallOp>(p.ops[i])
                                                 .getParams()
                                                 .get(entry.getName()))
                               .getInt()});
      std::optional<std::vector<std::string>> fitted =
          fitSizes({atBound.getInt()}, atProbe, symbols, probes);
      if (!fitted)
        return describeOp(call) + ": its parameter '" +
               entry.getName().str() +
               "' is not a product of the size symbols";
      if (!fitted->front().empty())
        symbolic.push_back(builder.getNamedAttr(
            entry.getName(), builder.getStringAttr(fitted->front())));
    }
    if (!symbolic.empty())
      call->setAttr(kSymParamsAttr, builder.getDictionaryAttr(symbolic));
  }

  // The annotations.
  SmallVector<Attribute> symbolAttrs;
  for (const SizeSymbol &s : symbols)
    symbolAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("name", builder.getStringAttr(s.name)),
         builder.getNamedAttr("min", builder.getI64IntegerAttr(s.min)),
         builder.getNamedAttr("max", builder.getI64IntegerAttr(s.max))}));
  bound->setAttr(kSizeSymbolsAttr, builder.getArrayAttr(symbolAttrs));
  for (BlockArgument arg : bound.getArguments())
    if (auto it = dimsOf.find(arg); it != dimsOf.end())
      bound.setArgAttr(arg.getArgNumber(), kSymDimsAttr,
                       stringArray(builder, it->second));
  for (Operation &op : bound.getBody().front()) {
    SmallVector<Attribute> perResult;
    bool any = false;
    for (Value r : op.getResults()) {
      auto it = dimsOf.find(r);
      std::vector<std::string> dims =
          it != dimsOf.end() ? it->second : std::vector<std::string>{};
      any |= anySymbolic(dims);
      perResult.push_back(stringArray(builder, dims));
    }
    if (any)
      op.setAttr(kSymDimsAttr, builder.getArrayAttr(perResult));
    if (auto it = kernelAttrsOf.find(&op); it != kernelAttrsOf.end())
      for (const auto &[name, texts] : it->second)
        op.setAttr(name, stringArray(builder, texts));
  }
  return std::nullopt;
}

} // namespace kiln
