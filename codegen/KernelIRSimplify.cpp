//===- KernelIRSimplify.cpp - Cleanups of lowered kernels -----------------===//
//
// This file implements the rewrites that run on a kernel after lowering and
// before either printer sees it. hoistInvariantDivisors turns `x / s`, where
// `s` is computed outside the loop that divides by it (softmax's row sum,
// a normalization's denominator), into `x * r` with `r = 1 / s` computed once
// before the loop: one division per row instead of one per element. The
// result differs from the division by at most one rounding (ONNX Runtime's
// and PyTorch's softmax multiply by the reciprocal too); only f32 and f64
// divisions are rewritten (integer division keeps its semantics, and f16 and
// bf16 values round once per op), and only when the quotient does not reach
// an op that turns that last bit into a different value: rounding to an
// integer, comparisons, casts to integers (DynamicQuantizeLinear's
// round(x / scale) flipped a tie when it was multiplied).
//
// multiplyByReciprocals turns `x / c`, for an immediate `c`, into
// `x * (1 / c)`. For an f16 or bf16 `x`, only when that gives the same
// f16/bf16 result for every one of the 65536 possible `x` (checked here,
// exhaustively, at compile time). For an f32 or f64 `x`, with 1/c rounded
// once to the type (a normal number), as Inductor and XLA's algebraic
// simplifier do: the product is within one rounding of the quotient (exact
// when c is a power of two), under the same condition as the hoisted
// divisors (the quotient reaches no rounding-sensitive op). GELU's
// `x / sqrt(2)` is such a division: dividing costs an IEEE division
// subroutine per element on the GPU, which kept LayerNorm+GELU
// compute-bound (bf16, and f32 GELU after an f32 LayerNorm in
// mixed precision).
//
// expandSmallPowers turns `pow(x, 2)` and `pow(x, 3)` (f32, f64; an
// immediate exponent) into `x * x` and `x * x * x`: tanh-GELU's `x^3` and its
// gradient's `x^2` cost two pow calls per element, which kept GPT-2's
// GELU-gradient kernel compute-bound. The products are within the error
// bounds of pow itself (CUDA's powf: 2 ulp; one or two roundings here).
//
// markNonPositiveExps marks `exp(x - m)`, `m` the maximum of the same values
// as `x` (softmax; attention's scaled, masked softmax recomputes x in the
// exp loop from the same loads), whose argument is at most 0 or NaN: x <= m,
// and the rounded difference of such floats is never positive. The C++ printer
// then leaves out kiln_expf's overflow fix (kiln_expf_nonpositive, the same
// results).
//
// markPlusOneErfs marks an f32 `erf` whose every use is `erf + 1` (GELU in
// its erf form, as exported: x * 0.5 * (1 + erf(x / sqrt 2))). There the
// sum's absolute error is what counts, so the printers compute the erf by
// Abramowitz & Stegun alone (kiln_erff_absolute, within 5.8e-7), leaving out
// the small-argument polynomial and its select that give kiln_erff its
// relative accuracy near 0: the bf16 ln_gelu kernel on an H200 took 0.110
// ms with kiln_erff and 0.101 with A&S alone (the converted graph's erf
// table: 0.109).
//
// placeRowCachesInOutputs lets a row cache live in the row of the output that
// the epilogue writes (softmax writes exp(x - max) where its result goes and
// scales it in place), as ONNX Runtime's softmax does: the output's cache
// lines are then fetched while the exp loop computes, which made softmax on
// a [1024, 4096] input 20% faster on two cores.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelIR.h"
#include "ir/KilnOps.h"
#include "kiln/runtime/DType.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace kiln {
namespace codegen {

namespace {

/// Adds the temps defined in `body` (recursively) to `defined`, and those
/// that are immediates to `constants`.
void collectDefinitions(const Body &body, std::set<int> &defined,
                        std::set<int> &constants) {
  for (const Stmt &s : body) {
    if (s.result >= 0)
      defined.insert(s.result);
    if (s.kind == Stmt::Kind::Const)
      constants.insert(s.result);
    for (const Reduction &r : s.reductions)
      defined.insert(r.result);
    collectDefinitions(s.body, defined, constants);
  }
}

/// Ops whose result can change by more than a rounding when an operand
/// changes by one ulp.
bool isRoundingSensitive(const Stmt &s, const Kernel &k) {
  if (isOp<RoundOp, FloorOp, CeilOp, EqualOp, LessOp, LessEqualOp, GreaterOp,
           GreaterEqualOp, ModOp, SignOp, IsNaNOp, IsInfOp>(*s.op))
    return true;
  return isOp<CastOp>(*s.op) && !isFloatType(k.temps[s.result]);
}

/// A Compute statement reading a temp: whether it is rounding-sensitive,
/// and its result.
struct Use {
  bool sensitive;
  int result;
};

/// Adds, for each temp, the Compute statements that read it.
void collectUsers(const Kernel &k, const Body &body,
                  std::map<int, std::vector<Use>> &users) {
  for (const Stmt &s : body) {
    if (s.kind == Stmt::Kind::Compute)
      for (int a : s.args)
        users[a].push_back({isRoundingSensitive(s, k), s.result});
    collectUsers(k, s.body, users);
  }
}

/// Where a kernel's temps flow: whether a quotient reaches an op that turns
/// its last bit into a different value.
class RoundingReach {
public:
  explicit RoundingReach(const Kernel &k) { collectUsers(k, k.body, users); }

  /// True when `temp` flows (through computations) into a rounding-sensitive
  /// op.
  bool reachesRounding(int temp) const {
    std::vector<int> work = {temp};
    std::set<int> seen;
    while (!work.empty()) {
      int t = work.back();
      work.pop_back();
      if (!seen.insert(t).second)
        continue;
      auto it = users.find(t);
      if (it == users.end())
        continue;
      for (const Use &u : it->second) {
        if (u.sensitive)
          return true;
        work.push_back(u.result);
      }
    }
    return false;
  }

private:
  std::map<int, std::vector<Use>> users;
};

class DivisorHoisting {
public:
  explicit DivisorHoisting(Kernel &k) : k(k), reach(k) {}
  void run(Body &body);

  /// Immediates of the whole kernel: divisions by them are
  /// multiplyByReciprocals' (a division by one stays a division, which the C
  /// compiler folds).
  std::set<int> constants;

private:
  Kernel &k;
  RoundingReach reach;
  int newTemp(ScalarType t) {
    k.temps.push_back(t);
    return (int)k.temps.size() - 1;
  }
};

void DivisorHoisting::run(Body &body) {
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].kind != Stmt::Kind::Loop)
      continue;
    run(body[i].body);
    std::set<int> inside, unused;
    collectDefinitions(body[i].body, inside, unused);
    // Reciprocals of this loop's invariant divisors, by divisor temp.
    std::map<int, int> reciprocals;
    Body hoisted;
    for (Stmt &s : body[i].body) {
      if (s.kind != Stmt::Kind::Compute || !isOp<DivOp>(*s.op) ||
          s.args.size() != 2)
        continue;
      ScalarType t = k.temps[s.result];
      int divisor = s.args[1];
      if ((t != ScalarType::F32 && t != ScalarType::F64) ||
          k.temps[divisor] != t || inside.count(divisor) ||
          constants.count(divisor) || reach.reachesRounding(s.result))
        continue;
      auto [it, isNew] = reciprocals.try_emplace(divisor, -1);
      if (isNew) {
        Stmt one;
        one.kind = Stmt::Kind::Const;
        one.result = newTemp(t);
        one.floatValue = 1.0;
        Stmt recip;
        recip.kind = Stmt::Kind::Compute;
        recip.op = s.op;
        recip.args = {one.result, divisor};
        recip.result = newTemp(t);
        it->second = recip.result;
        hoisted.push_back(std::move(one));
        hoisted.push_back(std::move(recip));
      }
      s.op = scalarOpOf<MulOp>(s.op->getContext());
      s.args[1] = it->second;
    }
    if (!hoisted.empty()) {
      size_t n = hoisted.size();
      body.insert(body.begin() + i, std::make_move_iterator(hoisted.begin()),
                  std::make_move_iterator(hoisted.end()));
      i += n;
    }
  }
}

/// True when `e` mentions one of `vars`.
bool mentions(const IndexExpr &e, const std::set<int> &vars) {
  for (const IndexExpr::Term &t : e.getTerms()) {
    if (t.atom.kind == IndexExpr::Atom::Var ? vars.count(t.atom.var) != 0
                                            : mentions(*t.atom.inner, vars))
      return true;
  }
  return false;
}

/// Counts the statements of `body` (recursively) that `pred` accepts.
template <class Pred> int countStmts(const Body &body, Pred pred) {
  int n = 0;
  for (const Stmt &s : body)
    n += pred(s) + countStmts(s.body, pred);
  return n;
}

/// Visits the loops of `body`, recursively.
template <class Fn> void forEachLoop(Body &body, Fn fn) {
  for (Stmt &s : body)
    if (s.kind == Stmt::Kind::Loop) {
      fn(s);
      forEachLoop(s.body, fn);
    }
}

/// The f16 (`half`) or bf16 value nearest `f`, as its bits.
uint16_t roundToHalfBits(float f, bool half) {
  return half ? Half(f).bits : BFloat16(f).bits;
}

/// The float value of f16 or bf16 `bits`.
float halfBitsToFloat(uint16_t bits, bool half) {
  if (half) {
    Half h;
    h.bits = bits;
    return h;
  }
  BFloat16 b;
  b.bits = bits;
  return b;
}

/// True when, for every f16 (`half`) or bf16 `x`, `x / c` and `x * r`
/// computed in float round to the same f16/bf16 value, as the printers
/// compute them.
bool reciprocalIsExact(float c, float r, bool half) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float x = halfBitsToFloat((uint16_t)bits, half);
    if (std::isnan(x))
      continue; // NaN either way
    if (roundToHalfBits(x / c, half) != roundToHalfBits(x * r, half))
      return false;
  }
  return true;
}

/// The reciprocal of `c` rounded to `t` (f32 or f64), when it is a normal
/// number: x * r is then within one rounding of x / c.
std::optional<double> normalReciprocal(double c, ScalarType t) {
  if (!std::isfinite(c) || c == 0)
    return std::nullopt;
  if (t == ScalarType::F32) {
    float r = 1.0f / (float)c;
    if (!std::isnormal(r) || (float)c != c)
      return std::nullopt;
    return r;
  }
  double r = 1.0 / c;
  return std::isnormal(r) ? std::optional<double>(r) : std::nullopt;
}

/// Applies multiplyByReciprocals to `body`; `values` maps immediate temps
/// to their values.
void rewriteConstantDivisions(Kernel &k, Body &body,
                              const std::map<int, double> &values,
                              const RoundingReach &reach,
                              std::map<std::pair<int, int>, int> &reciprocals,
                              Body &prologue) {
  for (Stmt &s : body) {
    rewriteConstantDivisions(k, s.body, values, reach, reciprocals, prologue);
    if (s.kind != Stmt::Kind::Compute || !isOp<DivOp>(*s.op) ||
        s.args.size() != 2)
      continue;
    ScalarType t = k.temps[s.result];
    auto divisor = values.find(s.args[1]);
    if (k.temps[s.args[0]] != t || k.temps[s.args[1]] != t ||
        divisor == values.end())
      continue;
    if (t == ScalarType::F32 || t == ScalarType::F64) {
      std::optional<double> r = normalReciprocal(divisor->second, t);
      if (!r || divisor->second == 1.0 || reach.reachesRounding(s.result))
        continue;
      auto key = std::make_pair(s.args[1], (int)t);
      auto it = reciprocals.find(key);
      if (it == reciprocals.end()) {
        Stmt rc;
        rc.kind = Stmt::Kind::Const;
        rc.result = (int)k.temps.size();
        rc.floatValue = *r;
        k.temps.push_back(t);
        it = reciprocals.emplace(key, rc.result).first;
        prologue.push_back(std::move(rc));
      }
      s.op = scalarOpOf<MulOp>(s.op->getContext());
      s.args[1] = it->second;
      continue;
    }
    if (t != ScalarType::F16 && t != ScalarType::BF16)
      continue;
    float c = (float)divisor->second;
    if (!std::isfinite(c) || c == 0.0f)
      continue;
    auto key = std::make_pair(s.args[1], (int)t);
    auto it = reciprocals.find(key);
    if (it == reciprocals.end()) {
      float r = (float)(1.0 / (double)c);
      int temp = -1;
      if (reciprocalIsExact(c, r, t == ScalarType::F16)) {
        // The reciprocal is an f32 immediate: it is not an f16/bf16 value.
        Stmt one;
        one.kind = Stmt::Kind::Const;
        one.result = temp = (int)k.temps.size();
        one.floatValue = r;
        k.temps.push_back(ScalarType::F32);
        prologue.push_back(std::move(one));
      }
      it = reciprocals.emplace(key, temp).first;
    }
    if (it->second < 0)
      continue;
    s.op = scalarOpOf<MulOp>(s.op->getContext());
    s.args[1] = it->second;
  }
}

/// Adds the immediates of `body` (recursively) to `values`.
void collectImmediates(const Body &body, std::map<int, double> &values) {
  for (const Stmt &s : body) {
    if (s.kind == Stmt::Kind::Const)
      values[s.result] = s.floatValue;
    collectImmediates(s.body, values);
  }
}

} // namespace

void multiplyByReciprocals(Kernel &kernel) {
  std::map<int, double> values;
  collectImmediates(kernel.body, values);
  std::map<std::pair<int, int>, int> reciprocals;
  Body prologue;
  RoundingReach reach(kernel);
  rewriteConstantDivisions(kernel, kernel.body, values, reach, reciprocals,
                           prologue);
  kernel.body.insert(kernel.body.begin(),
                     std::make_move_iterator(prologue.begin()),
                     std::make_move_iterator(prologue.end()));
}

namespace {

/// Applies expandSmallPowers to `body` (recursively); `values` maps
/// immediate temps to their values.
void expandPowers(Kernel &k, Body &body, const std::map<int, double> &values) {
  Body out;
  out.reserve(body.size());
  for (Stmt &s : body) {
    expandPowers(k, s.body, values);
    auto exponent = s.kind == Stmt::Kind::Compute && isOp<PowOp>(*s.op) &&
                            s.args.size() == 2
                        ? values.find(s.args[1])
                        : values.end();
    ScalarType t = s.result >= 0 ? k.temps[s.result] : ScalarType::Bool;
    if (exponent == values.end() ||
        (t != ScalarType::F32 && t != ScalarType::F64) ||
        k.temps[s.args[0]] != t ||
        (exponent->second != 2.0 && exponent->second != 3.0)) {
      out.push_back(std::move(s));
      continue;
    }
    int x = s.args[0];
    mlir::OperationName mul = scalarOpOf<MulOp>(s.op->getContext());
    if (exponent->second == 3.0) {
      Stmt square = s;
      square.result = static_cast<int>(k.temps.size());
      k.temps.push_back(t);
      square.op = mul;
      square.args = {x, x};
      square.attrs = {};
      s.args = {square.result, x};
      out.push_back(std::move(square));
    } else {
      s.args = {x, x};
    }
    s.op = mul;
    s.attrs = {};
    out.push_back(std::move(s));
  }
  body = std::move(out);
}

} // namespace

void expandSmallPowers(Kernel &kernel) {
  std::map<int, double> values;
  collectImmediates(kernel.body, values);
  expandPowers(kernel, kernel.body, values);
}

void placeRowCachesInOutputs(Kernel &k) {
  std::set<int> claimed;
  for (size_t c = 0; c < k.caches.size(); ++c) {
    RowCache &cache = k.caches[c];
    int numLoads = countStmts(k.body, [&](const Stmt &s) {
      return s.kind == Stmt::Kind::CacheLoad && s.buffer == (int)c;
    });
    // The epilogue loop that reads the cache: every load of it, at one index
    // `I`, directly in the loop, followed by the only store to an output of
    // the cache's type at `base + I`, `base` independent of the loop.
    forEachLoop(k.body, [&](Stmt &loop) {
      if (cache.outputBuffer >= 0 || loop.loopKind != Stmt::LoopKind::Serial)
        return;
      const Stmt *load = nullptr;
      int loadsHere = 0;
      for (const Stmt &s : loop.body)
        if (s.kind == Stmt::Kind::CacheLoad && s.buffer == (int)c) {
          if (load && load->index.str(k.varNames()) !=
                          s.index.str(k.varNames()))
            return;
          load = &s;
          ++loadsHere;
        }
      if (!load || loadsHere != numLoads)
        return;
      std::set<int> loopVars(loop.vars.begin(), loop.vars.end());
      bool afterLoads = false;
      for (const Stmt &s : loop.body) {
        if (s.kind == Stmt::Kind::CacheLoad && s.buffer == (int)c)
          afterLoads = --loadsHere == 0;
        if (s.kind != Stmt::Kind::Store || !afterLoads)
          continue;
        const Buffer &out = k.buffers[s.buffer];
        if (!out.isOutput || out.type != cache.type || isHalfType(out.type) ||
            claimed.count(s.buffer))
          continue;
        // An output stored over an input (kiln.in_place): only when the
        // epilogue does not read that input again (the cache's stores, in
        // the last reduce loop, overwrite it; nothing after reads it).
        if (out.sharesWith >= 0 &&
            llvm::any_of(loop.body, [&](const Stmt &t) {
              return t.kind == Stmt::Kind::Load && t.buffer == out.sharesWith;
            }))
          continue;
        int storesToOut = countStmts(k.body, [&](const Stmt &t) {
          return t.kind == Stmt::Kind::Store && t.buffer == s.buffer;
        });
        IndexExpr base = s.index + load->index * -1;
        if (storesToOut != 1 || mentions(base, loopVars))
          continue;
        cache.outputBuffer = s.buffer;
        cache.outputBase = base;
        claimed.insert(s.buffer);
        return;
      }
    });
  }
}

namespace {

/// What markNonPositiveExps learns in one walk over a kernel: each temp's
/// defining statement, with the variables of its loop, and the input of
/// each max reduction.
struct ValueFacts {
  struct Site {
    const Stmt *def;
    const std::vector<int> *vars;
  };
  const Kernel &kernel;
  std::vector<std::string> names;
  std::map<int, Site> defOf; ///< temp -> its definition
  std::map<int, int> maxOf;  ///< max result -> the temp reduced
  /// Row cache -> its store, when it has one.
  std::map<int, Site> cacheStoreOf;
  std::set<int> cachesStoredTwice;
  std::vector<Stmt *> subs, exps;

  explicit ValueFacts(const Kernel &kernel)
      : kernel(kernel), names(kernel.varNames()) {}

  void walk(Body &body, const std::vector<int> *vars) {
    for (Stmt &s : body) {
      if (s.kind == Stmt::Kind::Load || s.kind == Stmt::Kind::Const ||
          s.kind == Stmt::Kind::Compute || s.kind == Stmt::Kind::CacheLoad)
        defOf[s.result] = {&s, vars};
      if (s.kind == Stmt::Kind::CacheStore &&
          !cacheStoreOf.insert({s.buffer, {&s, vars}}).second)
        cachesStoredTwice.insert(s.buffer);
      if (s.kind == Stmt::Kind::Compute && isOp<SubOp>(*s.op) &&
          s.args.size() == 2)
        subs.push_back(&s);
      if (s.kind == Stmt::Kind::Compute && isOp<ExpOp>(*s.op))
        exps.push_back(&s);
      if (s.kind != Stmt::Kind::Loop)
        continue;
      walk(s.body, &s.vars);
      for (const Reduction &r : s.reductions)
        if (r.kind == ReduceKind::Max)
          maxOf[r.result] = r.input;
    }
  }

  /// The temp a row cache load reads: the value its cache's only store
  /// wrote at the same index in a loop over the same variables; else `t`.
  int throughCache(int t) const {
    auto d = defOf.find(t);
    if (d == defOf.end() || d->second.def->kind != Stmt::Kind::CacheLoad)
      return t;
    const Stmt &load = *d->second.def;
    auto st = cacheStoreOf.find(load.buffer);
    if (st == cacheStoreOf.end() || cachesStoredTwice.count(load.buffer) ||
        !st->second.vars || !d->second.vars ||
        *st->second.vars != *d->second.vars ||
        st->second.def->index.str(names) != load.index.str(names))
      return t;
    return st->second.def->value;
  }

  /// Expressions deeper than this are not compared (false: the exp keeps
  /// its check); pairs already compared are remembered, so shared
  /// subexpressions are compared once.
  static constexpr int kMaxDepth = 64;
  mutable std::map<std::pair<int, int>, bool> compared;

  /// True when temps `a` and `b` hold the same value for the same loop
  /// indices: the same loads (buffer, index, loop variables), immediates,
  /// ops over such values, and row cache loads of them.
  bool sameValue(int a, int b, int depth = 0) const {
    a = throughCache(a);
    b = throughCache(b);
    if (a == b)
      return true;
    if (depth > kMaxDepth)
      return false;
    auto known = compared.find({a, b});
    if (known != compared.end())
      return known->second;
    bool same = sameDefinition(a, b, depth);
    compared[{a, b}] = same;
    return same;
  }

  /// sameValue for two temps that are not one: their definitions.
  bool sameDefinition(int a, int b, int depth) const {
    auto da = defOf.find(a), db = defOf.find(b);
    if (da == defOf.end() || db == defOf.end())
      return false;
    const Stmt &x = *da->second.def, &y = *db->second.def;
    if (x.kind != y.kind || kernel.temps[a] != kernel.temps[b])
      return false;
    switch (x.kind) {
    case Stmt::Kind::Load:
      return x.buffer == y.buffer && da->second.vars && db->second.vars &&
             *da->second.vars == *db->second.vars &&
             x.index.str(names) == y.index.str(names);
    case Stmt::Kind::Const:
      return x.intValue == y.intValue &&
             (x.floatValue == y.floatValue ||
              (std::isnan(x.floatValue) && std::isnan(y.floatValue)));
    case Stmt::Kind::Compute:
      if (*x.op != *y.op || x.args.size() != y.args.size() ||
          x.attrs.numbers != y.attrs.numbers ||
          x.attrs.strings != y.attrs.strings)
        return false;
      for (size_t i = 0; i < x.args.size(); ++i)
        if (!sameValue(x.args[i], y.args[i], depth + 1))
          return false;
      return true;
    default:
      return false;
    }
  }
};

} // namespace

void markNonPositiveExps(Kernel &kernel) {
  ValueFacts facts(kernel);
  facts.walk(kernel.body, nullptr);
  std::set<int> nonPositive;
  for (const Stmt *sub : facts.subs) {
    auto m = facts.maxOf.find(sub->args[1]);
    if (m != facts.maxOf.end() && isFloatType(kernel.temps[sub->result]) &&
        facts.sameValue(sub->args[0], m->second))
      nonPositive.insert(sub->result);
  }
  for (Stmt *e : facts.exps)
    if (nonPositive.count(e->args[0]))
      e->attrs.numbers[kNonPositiveArgAttr] = 1;
}

namespace {

/// Whether every read of a temp in `body` is an addition of the immediate 1
/// (`ones`: the temps that hold it): per temp, false once any other read
/// (an op, a store, a row cache, a reduction) is seen.
void collectPlusOneUses(const Body &body, const std::set<int> &ones,
                        std::map<int, bool> &onlyPlusOne) {
  auto read = [&](int temp, bool plusOne) {
    auto [it, inserted] = onlyPlusOne.try_emplace(temp, plusOne);
    if (!inserted)
      it->second = it->second && plusOne;
  };
  for (const Stmt &s : body) {
    if (s.kind == Stmt::Kind::Compute) {
      bool add = isOp<AddOp>(*s.op) && s.args.size() == 2;
      for (size_t i = 0; i < s.args.size(); ++i)
        read(s.args[i], add && ones.count(s.args[1 - i]));
    } else if (s.kind == Stmt::Kind::Store ||
               s.kind == Stmt::Kind::CacheStore) {
      read(s.value, false);
    }
    for (const Reduction &r : s.reductions)
      read(r.input, false);
    collectPlusOneUses(s.body, ones, onlyPlusOne);
  }
}

/// The f32 erf statements of `body`, recursively.
void collectErfs(Body &body, const Kernel &k, std::vector<Stmt *> &erfs) {
  for (Stmt &s : body) {
    if (s.kind == Stmt::Kind::Compute && isOp<ErfOp>(*s.op) &&
        k.temps[s.result] == ScalarType::F32)
      erfs.push_back(&s);
    collectErfs(s.body, k, erfs);
  }
}

} // namespace

void markPlusOneErfs(Kernel &kernel) {
  std::vector<Stmt *> erfs;
  collectErfs(kernel.body, kernel, erfs);
  if (erfs.empty())
    return;
  std::map<int, double> values;
  collectImmediates(kernel.body, values);
  std::set<int> ones;
  for (auto [temp, v] : values)
    if (v == 1.0)
      ones.insert(temp);
  std::map<int, bool> onlyPlusOne;
  collectPlusOneUses(kernel.body, ones, onlyPlusOne);
  for (Stmt *e : erfs) {
    auto it = onlyPlusOne.find(e->result);
    if (it != onlyPlusOne.end() && it->second)
      e->attrs.numbers[kPlusOneUseAttr] = 1;
  }
}

void hoistInvariantDivisors(Kernel &kernel) {
  DivisorHoisting hoisting(kernel);
  std::set<int> defined;
  collectDefinitions(kernel.body, defined, hoisting.constants);
  hoisting.run(kernel.body);
}

} // namespace codegen
} // namespace kiln
