//===- KernelIR.cpp - The kernel IR of one fusion region ------------------===//
//
// This file implements the kernel IR's scalar types, the simplifying index
// expression builder (affine sums with floor-division and modulo atoms that
// disappear when the loop extents prove them redundant) and the text form of
// kernels used by dumps and tests.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelIR.h"

#include "llvm/ADT/STLExtras.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace kiln {
namespace codegen {

//===----------------------------------------------------------------------===//
// Scalar types
//===----------------------------------------------------------------------===//

llvm::StringRef scalarTypeName(ScalarType t) {
  switch (t) {
  case ScalarType::F32:
    return "f32";
  case ScalarType::F16:
    return "f16";
  case ScalarType::BF16:
    return "bf16";
  case ScalarType::F64:
    return "f64";
  case ScalarType::I64:
    return "i64";
  case ScalarType::I32:
    return "i32";
  case ScalarType::I8:
    return "i8";
  case ScalarType::U8:
    return "u8";
  case ScalarType::I16:
    return "i16";
  case ScalarType::U16:
    return "u16";
  case ScalarType::U32:
    return "u32";
  case ScalarType::U64:
    return "u64";
  case ScalarType::F8E4M3FN:
    return "f8e4m3fn";
  case ScalarType::F8E4M3FNUZ:
    return "f8e4m3fnuz";
  case ScalarType::F8E5M2:
    return "f8e5m2";
  case ScalarType::F8E5M2FNUZ:
    return "f8e5m2fnuz";
  case ScalarType::I4:
    return "i4";
  case ScalarType::U4:
    return "u4";
  case ScalarType::I2:
    return "i2";
  case ScalarType::U2:
    return "u2";
  case ScalarType::Bool:
    return "bool";
  }
  return "?";
}

bool isFloatType(ScalarType t) {
  return t == ScalarType::F32 || t == ScalarType::F16 ||
         t == ScalarType::BF16 || t == ScalarType::F64 || isFloat8Type(t);
}
int64_t scalarTypeBytes(ScalarType t) {
  switch (t) {
  case ScalarType::F64:
  case ScalarType::I64:
  case ScalarType::U64:
    return 8;
  case ScalarType::F32:
  case ScalarType::I32:
  case ScalarType::U32:
    return 4;
  case ScalarType::F16:
  case ScalarType::BF16:
  case ScalarType::I16:
  case ScalarType::U16:
    return 2;
  default:
    return 1;
  }
}
bool isHalfType(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::BF16 || isFloat8Type(t);
}
bool isFloat8Type(ScalarType t) {
  return t == ScalarType::F8E4M3FN || t == ScalarType::F8E4M3FNUZ ||
         t == ScalarType::F8E5M2 || t == ScalarType::F8E5M2FNUZ;
}
bool isSubByteIntType(ScalarType t) {
  return t == ScalarType::I4 || t == ScalarType::U4 || t == ScalarType::I2 ||
         t == ScalarType::U2;
}
bool isIntType(ScalarType t) {
  return isSignedIntType(t) || isUnsignedIntType(t);
}
bool isSignedIntType(ScalarType t) {
  return t == ScalarType::I64 || t == ScalarType::I32 || t == ScalarType::I16 ||
         t == ScalarType::I8 || t == ScalarType::I4 || t == ScalarType::I2;
}
bool isUnsignedIntType(ScalarType t) {
  return t == ScalarType::U8 || t == ScalarType::U16 || t == ScalarType::U32 ||
         t == ScalarType::U64 || t == ScalarType::U4 || t == ScalarType::U2;
}

std::optional<ScalarType> scalarTypeOf(mlir::Type type) {
  if (type.isF32())
    return ScalarType::F32;
  if (type.isF16())
    return ScalarType::F16;
  if (type.isBF16())
    return ScalarType::BF16;
  if (type.isF64())
    return ScalarType::F64;
  if (type.isFloat8E4M3FN())
    return ScalarType::F8E4M3FN;
  if (type.isFloat8E4M3FNUZ())
    return ScalarType::F8E4M3FNUZ;
  if (type.isFloat8E5M2())
    return ScalarType::F8E5M2;
  if (type.isFloat8E5M2FNUZ())
    return ScalarType::F8E5M2FNUZ;
  if (auto it = mlir::dyn_cast<mlir::IntegerType>(type)) {
    if (it.getWidth() == 1)
      return ScalarType::Bool;
    bool u = it.isUnsigned();
    switch (it.getWidth()) {
    case 64:
      return u ? ScalarType::U64 : ScalarType::I64;
    case 32:
      return u ? ScalarType::U32 : ScalarType::I32;
    case 16:
      return u ? ScalarType::U16 : ScalarType::I16;
    case 8:
      return u ? ScalarType::U8 : ScalarType::I8;
    case 4:
      return u ? ScalarType::U4 : ScalarType::I4;
    case 2:
      return u ? ScalarType::U2 : ScalarType::I2;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Index expressions
//===----------------------------------------------------------------------===//

namespace {

bool exprEqual(const IndexExpr &a, const IndexExpr &b);

bool atomEqual(const IndexExpr::Atom &a, const IndexExpr::Atom &b) {
  if (a.kind != b.kind)
    return false;
  if (a.kind == IndexExpr::Atom::Var)
    return a.var == b.var;
  return a.divisor == b.divisor && exprEqual(*a.inner, *b.inner);
}

bool exprEqual(const IndexExpr &a, const IndexExpr &b) {
  if (a.getConstant() != b.getConstant() ||
      a.getTerms().size() != b.getTerms().size())
    return false;
  for (size_t i = 0; i < a.getTerms().size(); ++i)
    if (a.getTerms()[i].coef != b.getTerms()[i].coef ||
        !atomEqual(a.getTerms()[i].atom, b.getTerms()[i].atom))
      return false;
  return true;
}

/// Variables first (by id), then div/mod atoms in creation order.
bool atomBefore(const IndexExpr::Atom &a, const IndexExpr::Atom &b) {
  bool av = a.kind == IndexExpr::Atom::Var, bv = b.kind == IndexExpr::Atom::Var;
  if (av != bv)
    return av;
  if (av)
    return a.var < b.var;
  return false;
}

int64_t floorDivInt(int64_t a, int64_t d) {
  int64_t q = a / d;
  if ((a % d != 0) && ((a < 0) != (d < 0)))
    --q;
  return q;
}

} // namespace

IndexExpr IndexExpr::constant(int64_t c) {
  IndexExpr e;
  e.constant_ = c;
  return e;
}

IndexExpr IndexExpr::var(int varId) {
  IndexExpr e;
  Term t;
  t.atom.kind = Atom::Var;
  t.atom.var = varId;
  e.terms_.push_back(t);
  return e;
}

IndexExpr operator+(const IndexExpr &a, const IndexExpr &b) {
  IndexExpr r = a;
  r.constant_ += b.constant_;
  for (const IndexExpr::Term &t : b.terms_) {
    auto it = std::find_if(
        r.terms_.begin(), r.terms_.end(),
        [&](const IndexExpr::Term &x) { return atomEqual(x.atom, t.atom); });
    if (it != r.terms_.end())
      it->coef += t.coef;
    else
      r.terms_.push_back(t);
  }
  r.terms_.erase(
      std::remove_if(r.terms_.begin(), r.terms_.end(),
                     [](const IndexExpr::Term &t) { return t.coef == 0; }),
      r.terms_.end());
  std::stable_sort(r.terms_.begin(), r.terms_.end(),
                   [](const IndexExpr::Term &x, const IndexExpr::Term &y) {
                     return atomBefore(x.atom, y.atom);
                   });
  // (X % k)*a + (X / k)*(a*k) is X*a: a dim split by a view and merged
  // again.
  for (size_t i = 0; i < r.terms_.size(); ++i) {
    const IndexExpr::Term &m = r.terms_[i];
    if (m.atom.kind != IndexExpr::Atom::Mod || !m.symbolicCoef.empty() ||
        !m.atom.symbolicDivisor.empty())
      continue;
    for (size_t j = 0; j < r.terms_.size(); ++j) {
      const IndexExpr::Term &q = r.terms_[j];
      if (q.atom.kind != IndexExpr::Atom::Div || !q.symbolicCoef.empty() ||
          !q.atom.symbolicDivisor.empty() ||
          q.atom.divisor != m.atom.divisor ||
          q.coef != m.coef * m.atom.divisor ||
          !exprEqual(*q.atom.inner, *m.atom.inner))
        continue;
      IndexExpr merged = *m.atom.inner * m.coef;
      r.terms_.erase(r.terms_.begin() + std::max(i, j));
      r.terms_.erase(r.terms_.begin() + std::min(i, j));
      return r + merged;
    }
  }
  return r;
}

std::optional<int64_t> coefficientOf(const IndexExpr &e, int var) {
  int64_t coef = 0;
  for (const IndexExpr::Term &t : e.getTerms()) {
    if (t.atom.kind == IndexExpr::Atom::Var) {
      if (t.atom.var == var)
        coef += t.coef;
      continue;
    }
    std::optional<int64_t> inner = coefficientOf(*t.atom.inner, var);
    if (!inner || *inner != 0)
      return std::nullopt;
    // A div/mod atom without `var` may still contain it deeper.
    for (const IndexExpr::Term &it : t.atom.inner->getTerms())
      if (it.atom.kind != IndexExpr::Atom::Var &&
          !coefficientOf(*it.atom.inner, var))
        return std::nullopt;
  }
  return coef;
}

IndexExpr operator*(const IndexExpr &a, int64_t c) {
  if (c == 0)
    return IndexExpr::constant(0);
  IndexExpr r = a;
  r.constant_ *= c;
  for (IndexExpr::Term &t : r.terms_)
    t.coef *= c;
  return r;
}

std::string IndexExpr::str(llvm::ArrayRef<std::string> varNames) const {
  std::string s;
  auto atomStr = [&](const Atom &a) -> std::string {
    if (a.kind == Atom::Var)
      return varNames[a.var];
    // The dividend is a sum: parenthesize it, so `/` and `%` apply to the
    // whole of it ("((i0*4 + i1) / 8)"), not to its last term.
    std::string inner = a.inner->str(varNames);
    bool single = a.inner->getTerms().size() + (a.inner->getConstant() != 0) <= 1;
    if (!single)
      inner = "(" + inner + ")";
    return "(" + inner + (a.kind == Atom::Div ? " / " : " % ") +
           (a.symbolicDivisor.empty() ? std::to_string(a.divisor)
                                      : a.symbolicDivisor) +
           ")";
  };
  // Run-time numbers are positive products of sizes (SymbolicDim::cExpr).
  for (const Term &t : terms_) {
    int64_t mag = t.coef < 0 ? -t.coef : t.coef;
    if (s.empty())
      s += t.coef < 0 ? "-" : "";
    else
      s += t.coef < 0 ? " - " : " + ";
    s += atomStr(t.atom);
    if (!t.symbolicCoef.empty())
      s += "*" + t.symbolicCoef;
    else if (mag != 1)
      s += "*" + std::to_string(mag);
  }
  if (!symbolicConstant_.empty())
    return s.empty() ? symbolicConstant_ : s + " + " + symbolicConstant_;
  if (s.empty())
    return std::to_string(constant_);
  if (constant_ > 0)
    s += " + " + std::to_string(constant_);
  else if (constant_ < 0)
    s += " - " + std::to_string(-constant_);
  return s;
}

bool IndexExpr::hasRunTimeNumbers() const {
  if (!symbolicConstant_.empty())
    return true;
  for (const Term &t : terms_)
    if (!t.symbolicCoef.empty() ||
        (t.atom.kind != Atom::Var &&
         (!t.atom.symbolicDivisor.empty() || t.atom.inner->hasRunTimeNumbers())))
      return true;
  return false;
}

void IndexExpr::visitNumbers(
    const std::function<void(int64_t value, std::string &text)> &f) {
  f(constant_, symbolicConstant_);
  for (Term &t : terms_) {
    f(t.coef, t.symbolicCoef);
    if (t.atom.kind == Atom::Var)
      continue;
    f(t.atom.divisor, t.atom.symbolicDivisor);
    auto inner = std::make_shared<IndexExpr>(*t.atom.inner);
    inner->visitNumbers(f);
    t.atom.inner = std::move(inner);
  }
}

void IndexExpr::collectNumbers(std::vector<int64_t> &out) const {
  IndexExpr copy = *this;
  copy.visitNumbers([&](int64_t v, std::string &) { out.push_back(v); });
}

bool IndexExpr::sameStructure(const IndexExpr &a, const IndexExpr &b) {
  if (a.terms_.size() != b.terms_.size())
    return false;
  for (auto [x, y] : llvm::zip(a.terms_, b.terms_)) {
    if (x.atom.kind != y.atom.kind || x.atom.var != y.atom.var)
      return false;
    if (x.atom.kind != Atom::Var &&
        !sameStructure(*x.atom.inner, *y.atom.inner))
      return false;
  }
  return true;
}

std::pair<int64_t, int64_t> IndexBuilder::range(const IndexExpr &e) const {
  int64_t lo = e.getConstant(), hi = e.getConstant();
  for (const IndexExpr::Term &t : e.getTerms()) {
    int64_t alo = 0, ahi = 0;
    const IndexExpr::Atom &a = t.atom;
    if (a.kind == IndexExpr::Atom::Var) {
      ahi = std::max<int64_t>(extents_[a.var] - 1, 0);
    } else {
      auto [ilo, ihi] = range(*a.inner);
      if (a.kind == IndexExpr::Atom::Div) {
        alo = floorDivInt(ilo, a.divisor);
        ahi = floorDivInt(ihi, a.divisor);
      } else if (ilo >= 0 && ihi < a.divisor) {
        alo = ilo;
        ahi = ihi;
      } else {
        ahi = a.divisor - 1;
      }
    }
    if (t.coef >= 0) {
      lo += t.coef * alo;
      hi += t.coef * ahi;
    } else {
      lo += t.coef * ahi;
      hi += t.coef * alo;
    }
  }
  return {lo, hi};
}

/// Splits `e` as c*B + S for the largest c > 1 dividing `d` such that S, the
/// terms whose coefficient c does not divide plus the constant's remainder,
/// lies in [0, c) and B >= 0: then floor(e / d) = floor(B / (d/c)) and
/// e mod d = c*(B mod (d/c)) + S. A view that merges dims and splits them
/// again at another place ([2, 7, 7, 1280] read as [2, 49, 1280]) divides
/// `i1*1280 + i2` by 8960, which is i1 / 7.
std::optional<IndexBuilder::Factored>
IndexBuilder::factorDivisor(const IndexExpr &e, int64_t d) const {
  std::optional<Factored> best;
  for (const IndexExpr::Term &t : e.getTerms()) {
    int64_t c = std::gcd(t.coef, d);
    if (c <= 1 || (best && c <= best->c))
      continue;
    Factored f{c, IndexExpr::constant(floorDivInt(e.getConstant(), c)),
               IndexExpr::constant(e.getConstant() -
                                   floorDivInt(e.getConstant(), c) * c)};
    for (const IndexExpr::Term &u : e.getTerms()) {
      IndexExpr one;
      one.terms_.push_back({u.atom, u.coef % c == 0 ? u.coef / c : u.coef});
      if (u.coef % c == 0)
        f.big = f.big + one;
      else
        f.small = f.small + one;
    }
    auto [slo, shi] = range(f.small);
    if (slo >= 0 && shi < c && range(f.big).first >= 0)
      best = std::move(f);
  }
  return best;
}

IndexExpr IndexBuilder::floorDiv(const IndexExpr &e, int64_t d) const {
  assert(d > 0 && "division by a non-positive constant");
  if (d == 1)
    return e;
  // e = d*Q + R with R = the terms whose coefficient d does not divide, plus
  // the constant's remainder: floor(e / d) = Q + floor(R / d).
  IndexExpr q = IndexExpr::constant(floorDivInt(e.getConstant(), d));
  IndexExpr rest = IndexExpr::constant(e.getConstant() -
                                       floorDivInt(e.getConstant(), d) * d);
  for (const IndexExpr::Term &t : e.getTerms()) {
    IndexExpr one;
    one.terms_.push_back({t.atom, t.coef % d == 0 ? t.coef / d : t.coef});
    if (t.coef % d == 0)
      q = q + one;
    else
      rest = rest + one;
  }
  auto [lo, hi] = range(rest);
  if (lo >= 0 && hi < d)
    return q;
  if (lo >= 0)
    if (std::optional<Factored> f = factorDivisor(rest, d))
      return q + floorDiv(f->big, d / f->c);
  if (lo < 0) {
    IndexExpr whole;
    whole.terms_.push_back(
        {{IndexExpr::Atom::Div, -1, std::make_shared<IndexExpr>(e), d}, 1});
    return whole;
  }
  IndexExpr atom;
  atom.terms_.push_back(
      {{IndexExpr::Atom::Div, -1, std::make_shared<IndexExpr>(rest), d}, 1});
  return q + atom;
}

IndexExpr IndexBuilder::mod(const IndexExpr &e, int64_t d) const {
  assert(d > 0 && "modulo by a non-positive constant");
  if (d == 1)
    return IndexExpr::constant(0);
  IndexExpr rest = IndexExpr::constant(e.getConstant() -
                                       floorDivInt(e.getConstant(), d) * d);
  for (const IndexExpr::Term &t : e.getTerms()) {
    if (t.coef % d == 0)
      continue;
    IndexExpr one;
    one.terms_.push_back({t.atom, t.coef});
    rest = rest + one;
  }
  auto [lo, hi] = range(rest);
  if (lo >= 0 && hi < d)
    return rest;
  if (lo >= 0)
    if (std::optional<Factored> f = factorDivisor(rest, d))
      return mod(f->big, d / f->c) * f->c + f->small;
  const IndexExpr &inner = lo < 0 ? e : rest;
  IndexExpr atom;
  atom.terms_.push_back(
      {{IndexExpr::Atom::Mod, -1, std::make_shared<IndexExpr>(inner), d}, 1});
  return atom;
}

/// The extent a dim contributes to strides: an empty tensor (a dim of 0) is
/// never indexed (every loop over it has no trips), so its dims of 0 count
/// as 1, which keeps the strides of its other dims non-zero divisors. Shapes
/// are within kMaxTensorElements (checkResultSizes), so strides cannot
/// overflow.
static int64_t nonEmptyExtent(int64_t dim) { return dim == 0 ? 1 : dim; }

IndexExpr IndexBuilder::linearize(llvm::ArrayRef<IndexExpr> idx,
                                  llvm::ArrayRef<int64_t> shape) const {
  assert(idx.size() == shape.size() && "index rank mismatch");
  IndexExpr lin = IndexExpr::constant(0);
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1)
      lin = lin + idx[k] * stride;
    stride *= nonEmptyExtent(shape[k]);
  }
  return lin;
}

std::vector<IndexExpr>
IndexBuilder::delinearize(const IndexExpr &lin,
                          llvm::ArrayRef<int64_t> shape) const {
  std::vector<IndexExpr> idx(shape.size());
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] <= 1) {
      idx[k] = IndexExpr::constant(0);
    } else {
      IndexExpr q = floorDiv(lin, stride);
      idx[k] = k == 0 ? q : mod(q, shape[k]);
    }
    stride *= nonEmptyExtent(shape[k]);
  }
  return idx;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

double ScalarAttrs::getNumber(const std::string &name, double dflt) const {
  auto it = numbers.find(name);
  return it == numbers.end() ? dflt : it->second;
}

std::string ScalarAttrs::getString(const std::string &name,
                                   const std::string &dflt) const {
  auto it = strings.find(name);
  return it == strings.end() ? dflt : it->second;
}

llvm::StringRef reduceKindName(ReduceKind k) {
  switch (k) {
  case ReduceKind::Sum:
    return "sum";
  case ReduceKind::Mean:
    return "mean";
  case ReduceKind::Prod:
    return "prod";
  case ReduceKind::Max:
    return "max";
  case ReduceKind::Min:
    return "min";
  }
  return "?";
}

int64_t Buffer::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<std::string> Kernel::varNames() const {
  std::vector<std::string> names;
  for (const LoopVar &v : vars)
    names.push_back(v.name);
  return names;
}

namespace {

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

void printBody(const Kernel &k, const Body &body, int indent,
               llvm::raw_ostream &os) {
  std::vector<std::string> names = k.varNames();
  std::string pad(indent * 2, ' ');
  for (const Stmt &s : body) {
    switch (s.kind) {
    case Stmt::Kind::Load:
      os << pad << "t" << s.result << " = load " << k.buffers[s.buffer].name
         << "[" << s.index.str(names)
         << "] : " << scalarTypeName(k.temps[s.result]) << "\n";
      break;
    case Stmt::Kind::Const:
      os << pad << "t" << s.result << " = const ";
      if (isFloatType(k.temps[s.result]))
        os << s.floatValue;
      else
        os << s.intValue;
      os << " : " << scalarTypeName(k.temps[s.result]) << "\n";
      break;
    case Stmt::Kind::Compute: {
      os << pad << "t" << s.result << " = " << s.op->stripDialect() << "(";
      for (size_t i = 0; i < s.args.size(); ++i)
        os << (i ? ", " : "") << "t" << s.args[i];
      os << ")";
      for (auto &[key, v] : s.attrs.numbers)
        os << " " << key << "=" << v;
      for (auto &[key, v] : s.attrs.strings)
        os << " " << key << "=\"" << v << "\"";
      os << " : " << scalarTypeName(k.temps[s.result]) << "\n";
      break;
    }
    case Stmt::Kind::CacheStore:
      os << pad << k.caches[s.buffer].name << "[" << s.index.str(names)
         << "] = t" << s.value << "\n";
      break;
    case Stmt::Kind::CacheLoad:
      os << pad << "t" << s.result << " = " << k.caches[s.buffer].name << "["
         << s.index.str(names) << "] : " << scalarTypeName(k.temps[s.result])
         << "\n";
      break;
    case Stmt::Kind::Store:
      os << pad << "store " << k.buffers[s.buffer].name << "["
         << s.index.str(names) << "] = t" << s.value << "\n";
      break;
    case Stmt::Kind::Loop: {
      const char *kind = s.loopKind == Stmt::LoopKind::Parallel ? "parallel"
                         : s.loopKind == Stmt::LoopKind::Reduce ? "reduce"
                                                                : "serial";
      os << pad << kind;
      for (int v : s.vars)
        os << " " << names[v] << " < " << k.vars[v].extent;
      os << " {\n";
      printBody(k, s.body, indent + 1, os);
      os << pad << "}";
      for (const Reduction &r : s.reductions)
        os << " t" << r.result << " = " << reduceKindName(r.kind) << "_reduce(t"
           << r.input << ") : " << scalarTypeName(r.type);
      os << "\n";
      break;
    }
    }
  }
}

} // namespace

std::string Kernel::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "kernel " << name << " domain " << shapeStr(parallelDomain);
  if (kind == "reduction")
    os << " x " << shapeStr(reducedDomain);
  os << " (";
  bool first = true;
  for (const Buffer &b : buffers) {
    if (b.isOutput)
      continue;
    os << (first ? "" : ", ") << b.name << ": " << scalarTypeName(b.type)
       << shapeStr(b.shape);
    first = false;
  }
  os << ") -> (";
  first = true;
  for (const Buffer &b : buffers) {
    if (!b.isOutput)
      continue;
    os << (first ? "" : ", ") << b.name << ": " << scalarTypeName(b.type)
       << shapeStr(b.shape);
    first = false;
  }
  os << ") {\n";
  std::vector<std::string> names = varNames();
  for (const RowCache &c : caches) {
    os << "  cache " << c.name << ": " << scalarTypeName(c.type) << "["
       << c.size << "]";
    if (c.outputBuffer >= 0)
      os << " in " << buffers[c.outputBuffer].name << "["
         << c.outputBase.str(names) << " + ...]";
    os << "\n";
  }
  printBody(*this, body, 1, os);
  os << "}\n";
  return text;
}

std::string inPlaceComment(const Kernel &kernel) {
  std::string s;
  for (const Buffer &b : kernel.buffers)
    if (b.isOutput && b.sharesWith >= 0)
      s += "// in place: " + b.name + " is stored over " +
           kernel.buffers[b.sharesWith].name + " (kiln.in_place)\n";
  return s;
}

namespace {
void visitBodyNumbers(
    Body &body,
    const std::function<void(int64_t value, std::string &text)> &f) {
  for (Stmt &s : body) {
    if (s.kind == Stmt::Kind::Load || s.kind == Stmt::Kind::Store ||
        s.kind == Stmt::Kind::CacheStore || s.kind == Stmt::Kind::CacheLoad)
      s.index.visitNumbers(f);
    visitBodyNumbers(s.body, f);
  }
}

void visitBodyReductions(Body &body,
                         const std::function<void(Reduction &)> &f) {
  for (Stmt &s : body) {
    for (Reduction &r : s.reductions)
      f(r);
    visitBodyReductions(s.body, f);
  }
}
} // namespace

void visitIndexNumbers(
    Kernel &kernel,
    const std::function<void(int64_t value, std::string &text)> &f) {
  visitBodyNumbers(kernel.body, f);
  for (RowCache &c : kernel.caches)
    c.outputBase.visitNumbers(f);
}

void visitReductions(Kernel &kernel,
                     const std::function<void(Reduction &)> &f) {
  visitBodyReductions(kernel.body, f);
}

} // namespace codegen
} // namespace kiln
