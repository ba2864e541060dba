//===- CudaPrinter.cpp - Kernel IR to CUDA --------------------------------===//
//
// This file implements the CUDA printer of the kernel IR. The thread mapping
// follows from the iteration domain:
//
//   * a parallel loop without inner loops (pointwise) is flattened and run
//     by a grid-stride loop, one element per thread per step; when every
//     access is contiguous (or constant) in the innermost dim and that dim
//     divides by the vector width (16 bytes of the widest element, at most 8
//     elements), each step handles a vector through kiln_vec loads/stores,
//     guarded by a run-time pointer alignment check that falls back to the
//     scalar loop;
//   * a parallel loop with reduce/serial inner loops (row reductions:
//     softmax, norms, plain reductions) maps a row (one kept index) to a
//     group of threads: a block for rows of at least kBlockRowMin elements,
//     a warp for shorter rows, one thread for rows of at most kThreadRowMax
//     elements or structures the group mapping does not cover. Lane l of a
//     group handles the row's elements l, l + G, l + 2G, ... in every inner
//     loop, so row caches (Kernel::caches) become small per-thread arrays in
//     registers and the input is read from global memory once; group
//     reductions use __shfl_xor_sync and, for blocks, a static __shared__
//     array per accumulator.
//
// Reductions keep the C++ printer's semantics: f32 accumulators for
// f32/f16/bf16 sums of at most kMaxFloatSumCount terms and f64 otherwise and
// for products, wrapping u64 for integers, NaN-propagating max/min, means
// divided by the count. Scalar ops print through the shared expression
// printer.
//
//===----------------------------------------------------------------------===//

#include "codegen/CudaKernel.h"
#include "codegen/ExprPrinter.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace kiln {

using namespace codegen;

namespace {

/// Rows of at least this many elements get a block each.
constexpr int64_t kBlockRowMin = 1024;
/// Rows of at most this many elements get a thread each.
constexpr int64_t kThreadRowMax = 16;
/// Threads per block of pointwise and thread/warp-per-row mappings.
constexpr unsigned kDefaultBlock = 256;
/// The most blocks a grid gets; kernels grid-stride over the rest.
constexpr int64_t kMaxGrid = 65535;
/// The most row-cache elements per thread held in registers.
constexpr int64_t kMaxCachePerThread = 32;
/// Column reductions get a thread per row from this many rows on ...
constexpr int64_t kMinColumnRows = 1024;
/// ... when their row caches hold at most this many elements per thread.
constexpr int64_t kMaxThreadCache = 64;
/// The most registers per thread that row caches and re-read loads take.
constexpr int64_t kMaxRowRegisters = 64;
/// Float sums of at most this many terms accumulate in f32 (as the C++
/// printer does).
constexpr int64_t kMaxFloatSumCount = 65536;

int64_t elemSize(ScalarType t) {
  switch (t) {
  case ScalarType::F64:
  case ScalarType::I64:
    return 8;
  case ScalarType::F32:
  case ScalarType::I32:
    return 4;
  case ScalarType::F16:
  case ScalarType::BF16:
    return 2;
  default:
    return 1;
  }
}

/// The C type of the accumulator of `r`.
std::string accumulatorType(const Reduction &r) {
  if (r.kind == ReduceKind::Max || r.kind == ReduceKind::Min)
    return computeCType(r.type);
  if (!isFloatType(r.type))
    return "uint64_t";
  bool floatSum = (r.kind == ReduceKind::Sum || r.kind == ReduceKind::Mean) &&
                  computeCType(r.type) == "float" &&
                  r.count <= kMaxFloatSumCount;
  return floatSum ? "float" : "double";
}

int64_t accumulatorBytes(const Reduction &r) {
  std::string t = accumulatorType(r);
  return t == "float" || t == "int32_t" ? 4
         : t == "double" || t == "uint64_t" || t == "int64_t" ? 8
                                                               : 1;
}

/// The coefficient of loop variable `var` in `e`, or nullopt when `var`
/// occurs inside a floor-division or modulo atom.
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

/// True when every term of `e` other than `var`'s, and its constant, is a
/// multiple of `w` (the vector base stays aligned).
bool alignedBesides(const IndexExpr &e, int var, int64_t w) {
  if (e.getConstant() % w != 0)
    return false;
  for (const IndexExpr::Term &t : e.getTerms())
    if (!(t.atom.kind == IndexExpr::Atom::Var && t.atom.var == var) &&
        t.coef % w != 0)
      return false;
  return true;
}

/// How the rows of a parallel loop with inner loops map to threads.
struct RowPlan {
  enum Mode { Thread, Warp, Block } mode = Thread;
  int64_t rows = 1;    ///< P: iterations of the parallel loop
  int64_t rowSize = 1; ///< R: iterations of each inner loop
  int64_t group = 1;   ///< G: threads per row
  int64_t perThread = 1; ///< K = ceil(R / G)
};

class CudaPrinter {
public:
  explicit CudaPrinter(const Kernel &k)
      : k(k), names(k.varNames()), exprs(k.temps.size()),
        varying(k.temps.size(), false) {}

  CudaKernel print();

private:
  const Kernel &k;
  std::vector<std::string> names;
  std::vector<std::string> exprs; ///< temp id -> C expression
  std::vector<bool> varying;      ///< vector bodies: temp differs per lane
  std::string out;
  int indent = 1;
  std::string it = "int64_t"; ///< the index type
  unsigned blockSize = kDefaultBlock;
  int64_t gridSize = 1;
  bool usesGlobalId = false;
  std::vector<std::string> sharedDecls;
  int64_t sharedBytes = 0;
  std::vector<std::string> mappings;
  /// Row mode state: distributed rows index caches by the lane's step.
  bool distributed = false;
  RowPlan plan;
  /// Loops around the statement being printed.
  int loopDepth = 0;
  /// Distributed rows: loads that several inner loops make (buffer and
  /// index) keep the first loop's values in a per-thread array, so the row
  /// is read from global memory once; loaded once the first loop is done.
  std::map<std::string, std::string> rowLoads;
  std::set<std::string> rowLoadsPending, rowLoadsFilled;

  void line(const std::string &s) {
    out += std::string(indent * 2, ' ') + s + "\n";
  }
  void open(const std::string &s) {
    line(s);
    ++indent;
  }
  void close() {
    --indent;
    line("}");
  }
  int64_t tripCount(const std::vector<int> &vars) const {
    int64_t n = 1;
    for (int v : vars)
      n *= k.vars[v].extent;
    return n;
  }
  static bool hasInnerLoops(const Stmt &loop) {
    for (const Stmt &s : loop.body)
      if (s.kind == Stmt::Kind::Loop)
        return true;
    return false;
  }
  void decompose(const std::vector<int> &vars, const std::string &lin,
                 int64_t width);
  void printStmt(const Stmt &s, bool leaderStores);
  void printLoopStmt(const Stmt &s);
  void printPointwise(const Stmt &loop);
  int64_t vectorWidth(const Stmt &loop) const;
  void printVectorBody(const Stmt &loop, int64_t w);
  RowPlan planRows(const Stmt &loop) const;
  void printRows(const Stmt &loop);
  void printInner(const Stmt &loop);
  std::string combine(const Reduction &r, const std::string &acc,
                      const std::string &v) const;
  std::string signature() const;
};

void CudaPrinter::decompose(const std::vector<int> &vars,
                            const std::string &lin, int64_t width) {
  int64_t stride = 1;
  for (size_t i = vars.size(); i-- > 0;) {
    int64_t extent = k.vars[vars[i]].extent;
    if (i + 1 == vars.size())
      extent /= width;
    std::string e = lin;
    if (stride != 1)
      e = "(" + e + " / " + std::to_string(stride) + ")";
    if (i != 0)
      e = "(" + e + " % " + std::to_string(extent) + ")";
    if (i + 1 == vars.size() && width > 1)
      e += " * " + std::to_string(width);
    // A loop variable may index no access (a broadcast dim).
    line("[[maybe_unused]] const " + it + " " + names[vars[i]] + " = " + e +
         ";");
    stride *= extent;
  }
}

void CudaPrinter::printStmt(const Stmt &s, bool leaderStores) {
  auto cacheIndex = [&](const Stmt &st) {
    return distributed ? std::string("kiln_k") : st.index.str(names);
  };
  switch (s.kind) {
  case Stmt::Kind::Const:
    exprs[s.result] = printLiteral(k.temps[s.result], s.floatValue, s.intValue);
    break;
  case Stmt::Kind::Load: {
    ScalarType t = k.temps[s.result];
    std::string load =
        k.buffers[s.buffer].name + "[" + s.index.str(names) + "]";
    if (isHalfType(t))
      load = "(float)" + load;
    exprs[s.result] = "t" + std::to_string(s.result);
    auto saved = distributed && loopDepth > 0 ? rowLoads.find(load)
                                              : rowLoads.end();
    if (saved != rowLoads.end() && rowLoadsFilled.count(load)) {
      line("const " + computeCType(t) + " " + exprs[s.result] + " = " +
           saved->second + "[kiln_k];");
      break;
    }
    line("const " + computeCType(t) + " " + exprs[s.result] + " = " + load +
         ";");
    if (saved != rowLoads.end()) {
      line(saved->second + "[kiln_k] = " + exprs[s.result] + ";");
      rowLoadsPending.insert(load);
    }
    break;
  }
  case Stmt::Kind::Compute: {
    std::vector<ScalarType> argTypes;
    std::vector<std::string> args;
    for (int a : s.args) {
      argTypes.push_back(k.temps[a]);
      args.push_back(exprs[a]);
    }
    ScalarType t = k.temps[s.result];
    exprs[s.result] = "t" + std::to_string(s.result);
    line("const " + computeCType(t) + " " + exprs[s.result] + " = " +
         printScalarOp(s.op, t, argTypes, args, s.attrs) + ";");
    break;
  }
  case Stmt::Kind::CacheStore:
    line(k.caches[s.buffer].name + "[" + cacheIndex(s) + "] = " +
         exprs[s.value] + ";");
    break;
  case Stmt::Kind::CacheLoad:
    exprs[s.result] = "t" + std::to_string(s.result);
    line("const " + computeCType(k.temps[s.result]) + " " + exprs[s.result] +
         " = " + k.caches[s.buffer].name + "[" + cacheIndex(s) + "];");
    break;
  case Stmt::Kind::Store: {
    const Buffer &buf = k.buffers[s.buffer];
    std::string v = exprs[s.value];
    if (isHalfType(buf.type))
      v = storageCType(buf.type) + "(" + v + ")";
    else if (k.temps[s.value] != buf.type)
      v = "(" + computeCType(buf.type) + ")" + v;
    std::string st = buf.name + "[" + s.index.str(names) + "] = " + v + ";";
    // Every lane of a row group holds the row's results: one writes them.
    line(leaderStores ? "if (kiln_lane == 0) " + st : st);
    break;
  }
  case Stmt::Kind::Loop:
    // Loops inside a mapped loop run in the thread (or its row group).
    if (loopDepth == 0)
      printLoopStmt(s);
    else
      printInner(s);
    break;
  }
}

void CudaPrinter::printLoopStmt(const Stmt &s) {
  if (s.loopKind == Stmt::LoopKind::Parallel) {
    if (hasInnerLoops(s))
      printRows(s);
    else
      printPointwise(s);
    return;
  }
  printInner(s);
}

//===----------------------------------------------------------------------===//
// Pointwise loops
//===----------------------------------------------------------------------===//

int64_t CudaPrinter::vectorWidth(const Stmt &loop) const {
  if (loop.vars.empty())
    return 1;
  int inner = loop.vars.back();
  int64_t extent = k.vars[inner].extent;
  int64_t widest = 0;
  std::vector<const Stmt *> contiguous;
  for (const Stmt &s : loop.body) {
    if (s.kind == Stmt::Kind::Loop || s.kind == Stmt::Kind::CacheStore ||
        s.kind == Stmt::Kind::CacheLoad)
      return 1;
    if (s.kind != Stmt::Kind::Load && s.kind != Stmt::Kind::Store)
      continue;
    std::optional<int64_t> coef = coefficientOf(s.index, inner);
    if (!coef || (*coef != 0 && *coef != 1) ||
        (s.kind == Stmt::Kind::Store && *coef != 1))
      return 1;
    if (*coef == 1) {
      contiguous.push_back(&s);
      widest = std::max(widest, elemSize(k.buffers[s.buffer].type));
    }
  }
  if (contiguous.empty())
    return 1;
  for (int64_t w = std::min<int64_t>(8, 16 / widest); w >= 2; w /= 2) {
    bool ok = extent % w == 0;
    for (const Stmt *s : contiguous)
      ok = ok && alignedBesides(s->index, inner, w);
    if (ok)
      return w;
  }
  return 1;
}

void CudaPrinter::printVectorBody(const Stmt &loop, int64_t w) {
  int inner = loop.vars.back();
  auto lane = [&](int t, int64_t u) {
    return varying[t] ? exprs[t] + "_" + std::to_string(u) : exprs[t];
  };
  auto vecType = [&](const Buffer &b) {
    return "kiln_vec<" + storageCType(b.type) + ", " + std::to_string(w) + ">";
  };
  for (const Stmt &s : loop.body) {
    switch (s.kind) {
    case Stmt::Kind::Load: {
      if (*coefficientOf(s.index, inner) == 0) {
        varying[s.result] = false;
        printStmt(s, false);
        break;
      }
      const Buffer &b = k.buffers[s.buffer];
      ScalarType t = k.temps[s.result];
      std::string v = "v" + std::to_string(s.result);
      line("const " + vecType(b) + " " + v + " = *reinterpret_cast<const " +
           vecType(b) + " *>(" + b.name + " + (" + s.index.str(names) + "));");
      exprs[s.result] = "t" + std::to_string(s.result);
      varying[s.result] = true;
      for (int64_t u = 0; u < w; ++u)
        line("const " + computeCType(t) + " " + lane(s.result, u) + " = " +
             (isHalfType(t) ? "(float)" : "") + v + ".v[" + std::to_string(u) +
             "];");
      break;
    }
    case Stmt::Kind::Compute: {
      bool any = false;
      for (int a : s.args)
        any |= varying[a];
      varying[s.result] = any;
      if (!any) {
        printStmt(s, false);
        break;
      }
      ScalarType t = k.temps[s.result];
      exprs[s.result] = "t" + std::to_string(s.result);
      std::vector<ScalarType> argTypes;
      for (int a : s.args)
        argTypes.push_back(k.temps[a]);
      for (int64_t u = 0; u < w; ++u) {
        std::vector<std::string> args;
        for (int a : s.args)
          args.push_back(lane(a, u));
        line("const " + computeCType(t) + " " + lane(s.result, u) + " = " +
             printScalarOp(s.op, t, argTypes, args, s.attrs) + ";");
      }
      break;
    }
    case Stmt::Kind::Store: {
      const Buffer &b = k.buffers[s.buffer];
      open("{");
      line(vecType(b) + " kiln_s;");
      for (int64_t u = 0; u < w; ++u) {
        std::string v = lane(s.value, u);
        if (isHalfType(b.type))
          v = storageCType(b.type) + "(" + v + ")";
        else if (k.temps[s.value] != b.type)
          v = "(" + computeCType(b.type) + ")" + v;
        line("kiln_s.v[" + std::to_string(u) + "] = " + v + ";");
      }
      line("*reinterpret_cast<" + vecType(b) + " *>(" + b.name + " + (" +
           s.index.str(names) + ")) = kiln_s;");
      close();
      break;
    }
    default:
      varying[std::max(s.result, 0)] = false;
      printStmt(s, false);
      break;
    }
  }
}

void CudaPrinter::printPointwise(const Stmt &loop) {
  int64_t total = tripCount(loop.vars);
  int64_t w = vectorWidth(loop);
  usesGlobalId = true;
  gridSize = std::max(gridSize, (total / w + blockSize - 1) / blockSize);
  open("{");
  auto scalarLoop = [&] {
    open("for (" + it + " kiln_i = kiln_gtid; kiln_i < " +
         std::to_string(total) + "; kiln_i += kiln_nthreads) {");
    decompose(loop.vars, "kiln_i", 1);
    for (const Stmt &s : loop.body)
      printStmt(s, false);
    close();
  };
  if (w > 1) {
    // The vector path needs every vector-accessed pointer aligned to its
    // vector's size; the wrapper's buffers are, but check.
    std::string cond;
    std::vector<int> seen;
    for (const Stmt &s : loop.body) {
      if ((s.kind != Stmt::Kind::Load && s.kind != Stmt::Kind::Store) ||
          *coefficientOf(s.index, loop.vars.back()) != 1 ||
          std::find(seen.begin(), seen.end(), s.buffer) != seen.end())
        continue;
      seen.push_back(s.buffer);
      const Buffer &b = k.buffers[s.buffer];
      cond += std::string(cond.empty() ? "" : " && ") +
              "(unsigned long long)" + b.name + " % " +
              std::to_string(w * elemSize(b.type)) + " == 0";
    }
    open("if (" + cond + ") {");
    open("for (" + it + " kiln_i = kiln_gtid; kiln_i < " +
         std::to_string(total / w) + "; kiln_i += kiln_nthreads) {");
    decompose(loop.vars, "kiln_i", w);
    printVectorBody(loop, w);
    close();
    --indent;
    open("} else {");
    scalarLoop();
    close();
    mappings.push_back("pointwise over " + std::to_string(total) +
                       " elements, " + std::to_string(w) +
                       " per thread and step (vector access)");
  } else {
    scalarLoop();
    mappings.push_back("pointwise over " + std::to_string(total) +
                       " elements, one per thread and step");
  }
  close();
}

//===----------------------------------------------------------------------===//
// Row loops
//===----------------------------------------------------------------------===//

RowPlan CudaPrinter::planRows(const Stmt &loop) const {
  RowPlan p;
  p.rows = tripCount(loop.vars);
  const std::vector<int> *vars = nullptr;
  bool uniform = true;
  for (const Stmt &s : loop.body) {
    if (s.kind != Stmt::Kind::Loop)
      continue;
    if (s.loopKind == Stmt::LoopKind::Parallel || hasInnerLoops(s) ||
        (vars && *vars != s.vars))
      uniform = false;
    vars = &s.vars;
  }
  p.rowSize = vars ? tripCount(*vars) : 1;
  if (!uniform || p.rowSize <= kThreadRowMax)
    return p;
  // Reductions over outer axes (column sums): when a row's elements are
  // strided but consecutive rows are contiguous, a thread per row reads
  // coalesced, given enough rows and small row caches.
  if (!loop.vars.empty() && !vars->empty() && p.rows >= kMinColumnRows) {
    int rowVar = vars->back(), colVar = loop.vars.back();
    bool rowContiguous = true, columnsContiguous = false;
    for (const Stmt &s : loop.body)
      if (s.kind == Stmt::Kind::Loop)
        for (const Stmt &st : s.body) {
          if (st.kind != Stmt::Kind::Load)
            continue;
          std::optional<int64_t> r = coefficientOf(st.index, rowVar);
          std::optional<int64_t> c = coefficientOf(st.index, colVar);
          rowContiguous &= r && (*r == 0 || *r == 1);
          columnsContiguous |= c && *c == 1 && r && *r != 1;
        }
    int64_t cached = 0;
    for (const RowCache &c : k.caches)
      cached += c.size;
    if (!rowContiguous && columnsContiguous && cached <= kMaxThreadCache)
      return p;
  }
  if (p.rowSize >= kBlockRowMin) {
    p.mode = RowPlan::Block;
    // About 8 elements per thread, 128 to 1024 threads.
    int64_t b = 128;
    while (b < 1024 && b * 8 < p.rowSize)
      b *= 2;
    p.group = b;
  } else {
    p.mode = RowPlan::Warp;
    p.group = 32;
  }
  p.perThread = (p.rowSize + p.group - 1) / p.group;
  if (!k.caches.empty() && p.perThread > kMaxCachePerThread)
    return RowPlan{RowPlan::Thread, p.rows, p.rowSize, 1, 1};
  return p;
}

std::string CudaPrinter::combine(const Reduction &r, const std::string &acc,
                                 const std::string &v) const {
  std::string at = accumulatorType(r);
  switch (r.kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    return acc + " += (" + at + ")" + v + ";";
  case ReduceKind::Prod:
    return acc + " *= (" + at + ")" + v + ";";
  case ReduceKind::Max:
    return acc + " = kiln_max<" + at + ">(" + acc + ", (" + at + ")" + v + ");";
  case ReduceKind::Min:
    return acc + " = kiln_min<" + at + ">(" + acc + ", (" + at + ")" + v + ");";
  }
  return "";
}

void CudaPrinter::printRows(const Stmt &loop) {
  plan = planRows(loop);
  if (plan.mode == RowPlan::Block) {
    // The kernel has one block size: the first row loop's.
    plan.group = blockSize;
    plan.perThread = (plan.rowSize + plan.group - 1) / plan.group;
    if (!k.caches.empty() && plan.perThread > kMaxCachePerThread)
      plan = RowPlan{RowPlan::Thread, plan.rows, plan.rowSize, 1, 1};
  }
  std::string start, step;
  switch (plan.mode) {
  case RowPlan::Block:
    blockSize = static_cast<unsigned>(plan.group);
    gridSize = std::max(gridSize, plan.rows);
    start = "(" + it + ")blockIdx.x";
    step = "(" + it + ")gridDim.x";
    mappings.push_back(
        "one block of " + std::to_string(plan.group) + " threads per row of " +
        std::to_string(plan.rowSize) + " elements (" +
        std::to_string(plan.perThread) + " per thread), " +
        std::to_string(plan.rows) + " rows");
    break;
  case RowPlan::Warp: {
    int64_t warps = blockSize / 32;
    gridSize = std::max(gridSize, (plan.rows + warps - 1) / warps);
    start = "(" + it + ")blockIdx.x * " + std::to_string(warps) +
            " + (threadIdx.x >> 5)";
    step = "(" + it + ")gridDim.x * " + std::to_string(warps);
    mappings.push_back("one warp per row of " + std::to_string(plan.rowSize) +
                       " elements (" + std::to_string(plan.perThread) +
                       " per thread), " + std::to_string(plan.rows) + " rows");
    break;
  }
  case RowPlan::Thread:
    usesGlobalId = true;
    gridSize = std::max(gridSize, (plan.rows + blockSize - 1) / blockSize);
    start = "kiln_gtid";
    step = "kiln_nthreads";
    mappings.push_back("one thread per row of " +
                       std::to_string(plan.rowSize) + " elements, " +
                       std::to_string(plan.rows) + " rows");
    break;
  }
  distributed = plan.mode != RowPlan::Thread;
  open("for (" + it + " kiln_row = " + start + "; kiln_row < " +
       std::to_string(plan.rows) + "; kiln_row += " + step + ") {");
  if (plan.mode == RowPlan::Block)
    line("const int kiln_lane = threadIdx.x;");
  else if (plan.mode == RowPlan::Warp)
    line("const int kiln_lane = threadIdx.x & 31;");
  decompose(loop.vars, "kiln_row", 1);
  for (const RowCache &c : k.caches)
    line(computeCType(c.type) + " " + c.name + "[" +
         std::to_string(distributed ? plan.perThread : c.size) + "];");
  rowLoads.clear();
  rowLoadsPending.clear();
  rowLoadsFilled.clear();
  if (distributed) {
    // Loads (by their text) that more than one inner loop makes.
    std::map<std::string, int> loops;
    std::map<std::string, ScalarType> types;
    for (const Stmt &s : loop.body) {
      if (s.kind != Stmt::Kind::Loop)
        continue;
      std::set<std::string> seen;
      for (const Stmt &st : s.body)
        if (st.kind == Stmt::Kind::Load) {
          std::string load =
              k.buffers[st.buffer].name + "[" + st.index.str(names) + "]";
          if (isHalfType(k.temps[st.result]))
            load = "(float)" + load;
          if (seen.insert(load).second)
            ++loops[load];
          types[load] = k.temps[st.result];
        }
    }
    int64_t registers = plan.perThread * static_cast<int64_t>(k.caches.size());
    for (auto &[load, n] : loops) {
      if (n < 2 || registers + plan.perThread > kMaxRowRegisters)
        continue;
      registers += plan.perThread;
      std::string name = "kiln_l" + std::to_string(rowLoads.size());
      rowLoads[load] = name;
      line(computeCType(types[load]) + " " + name + "[" +
           std::to_string(plan.perThread) + "];");
    }
  }
  for (const Stmt &s : loop.body) {
    if (s.kind == Stmt::Kind::Loop)
      printInner(s);
    else
      printStmt(s, distributed);
  }
  close();
  distributed = false;
}

/// A loop inside a mapped loop. In a distributed row, lane l handles the
/// row's elements l + kiln_k * G of a reduce or serial loop, then reduces
/// across the group; otherwise the thread runs the loop as nested `for`s (the
/// C++ printer's form).
void CudaPrinter::printInner(const Stmt &loop) {
  bool reduce = loop.loopKind == Stmt::LoopKind::Reduce;
  ++loopDepth;
  if (reduce)
    for (const Reduction &r : loop.reductions) {
      std::string at = accumulatorType(r);
      std::string init;
      bool fl = isFloatType(r.type);
      switch (r.kind) {
      case ReduceKind::Sum:
      case ReduceKind::Mean:
        init = "0";
        break;
      case ReduceKind::Prod:
        init = "1";
        break;
      case ReduceKind::Max:
      case ReduceKind::Min: {
        bool isMax = r.kind == ReduceKind::Max;
        init = fl ? printLiteral(r.type, isMax ? -INFINITY : INFINITY, 0)
               : r.type == ScalarType::Bool
                   ? (isMax ? "false" : "true")
                   : std::string(isMax ? "kiln_lowest" : "kiln_highest") +
                         "<" + at + ">()";
        break;
      }
      }
      line(at + " acc" + std::to_string(r.result) + " = " + init + ";");
    }
  bool guard = false;
  if (distributed) {
    if (!k.caches.empty() || !rowLoads.empty() || plan.perThread <= 8)
      line("#pragma unroll");
    open("for (int kiln_k = 0; kiln_k < " + std::to_string(plan.perThread) +
         "; ++kiln_k) {");
    line("const " + it + " kiln_r = kiln_lane + kiln_k * " +
         std::to_string(plan.group) + ";");
    guard = plan.rowSize % plan.group != 0;
    if (guard)
      open("if (kiln_r < " + std::to_string(plan.rowSize) + ") {");
    decompose(loop.vars, "kiln_r", 1);
  } else {
    for (int v : loop.vars)
      open("for (" + it + " " + names[v] + " = 0; " + names[v] + " < " +
           std::to_string(k.vars[v].extent) + "; ++" + names[v] + ") {");
  }
  for (const Stmt &s : loop.body)
    printStmt(s, false);
  for (const Reduction &r : loop.reductions) {
    std::string in = exprs[r.input];
    if (!isFloatType(r.type) &&
        (r.kind != ReduceKind::Max && r.kind != ReduceKind::Min))
      in = "(int64_t)" + in;
    line(combine(r, "acc" + std::to_string(r.result), in));
  }
  if (guard)
    close();
  if (distributed)
    close();
  else
    for (size_t i = 0; i < loop.vars.size(); ++i)
      close();
  rowLoadsFilled.insert(rowLoadsPending.begin(), rowLoadsPending.end());
  rowLoadsPending.clear();
  --loopDepth;
  if (!reduce)
    return;
  // Group reduction: within each warp, then across the block's warps.
  auto warpReduce = [&](const std::string &prefix) {
    open("for (int kiln_o = 16; kiln_o > 0; kiln_o >>= 1) {");
    for (const Reduction &r : loop.reductions) {
      std::string acc = prefix + std::to_string(r.result);
      line(combine(r, acc, "kiln_shfl_xor(" + acc + ", kiln_o)"));
    }
    close();
  };
  if (distributed)
    warpReduce("acc");
  if (distributed && plan.mode == RowPlan::Block) {
    int64_t warps = plan.group / 32;
    for (const Reduction &r : loop.reductions) {
      std::string sh = "kiln_red" + std::to_string(r.result);
      sharedDecls.push_back("__shared__ " + accumulatorType(r) + " " + sh +
                            "[32];");
      sharedBytes += 32 * accumulatorBytes(r);
    }
    open("if ((threadIdx.x & 31) == 0) {");
    for (const Reduction &r : loop.reductions)
      line("kiln_red" + std::to_string(r.result) + "[threadIdx.x >> 5] = acc" +
           std::to_string(r.result) + ";");
    close();
    line("__syncthreads();");
    for (const Reduction &r : loop.reductions) {
      std::string id = std::to_string(r.result);
      // Lanes past the block's warps take another warp's partial: harmless
      // for max/min, neutralized for sums and products.
      std::string neutral = r.kind == ReduceKind::Sum ||
                                    r.kind == ReduceKind::Mean
                                ? "0"
                            : r.kind == ReduceKind::Prod ? "1"
                                                         : "kiln_red" + id +
                                                               "[0]";
      line("acc" + id + " = (threadIdx.x & 31) < " + std::to_string(warps) +
           " ? kiln_red" + id + "[threadIdx.x & 31] : (" +
           accumulatorType(r) + ")" + neutral + ";");
    }
    warpReduce("acc");
    line("__syncthreads();");
  }
  // Results, rounded once to the reduced op's dtype.
  for (const Reduction &r : loop.reductions) {
    std::string acc = "acc" + std::to_string(r.result);
    std::string ct = computeCType(r.type);
    std::string at = accumulatorType(r);
    bool fl = isFloatType(r.type);
    std::string v;
    switch (r.kind) {
    case ReduceKind::Sum:
    case ReduceKind::Prod:
      v = fl ? "(" + ct + ")" + acc : "(" + ct + ")(int64_t)" + acc;
      break;
    case ReduceKind::Mean:
      v = fl ? "(" + ct + ")(" + acc + " / (" + at + ")" +
                   std::to_string(r.count) + ")"
             : "(" + ct + ")(" +
                   (r.count == 0
                        ? std::string("0")
                        : "(int64_t)" + acc + " / " + std::to_string(r.count)) +
                   ")";
      break;
    case ReduceKind::Max:
    case ReduceKind::Min:
      v = acc;
      break;
    }
    exprs[r.result] = "t" + std::to_string(r.result);
    line("const " + ct + " " + exprs[r.result] + " = " + roundTo(r.type, v) +
         ";");
  }
}

std::string CudaPrinter::signature() const {
  std::string s = "extern \"C\" __global__ void __launch_bounds__(" +
                  std::to_string(blockSize) + ")\n" + k.name + "(";
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const Buffer &b = k.buffers[i];
    s += (i ? ", " : "") + std::string(b.isOutput ? "" : "const ") +
         storageCType(b.type) + " *__restrict__ " + b.name;
  }
  return s + ")";
}

CudaKernel CudaPrinter::print() {
  // 32-bit index arithmetic when every index stays far below 2^31.
  int64_t domain = 1;
  for (const LoopVar &v : k.vars)
    domain = std::min<int64_t>(domain * v.extent, int64_t(1) << 40);
  int64_t largest = domain;
  for (const Buffer &b : k.buffers)
    largest = std::max(largest, b.numElements());
  it = largest < (int64_t(1) << 30) ? "int" : "int64_t";

  // The block size: the first row loop's mapping decides; small domains
  // get smaller blocks (whole warps).
  int numNests = 0;
  int64_t largestNest = 1;
  const Stmt *firstRows = nullptr;
  for (const Stmt &s : k.body)
    if (s.kind == Stmt::Kind::Loop && s.loopKind == Stmt::LoopKind::Parallel) {
      ++numNests;
      largestNest = std::max(largestNest, tripCount(s.vars));
      if (!firstRows && hasInnerLoops(s))
        firstRows = &s;
    }
  auto warpsFor = [](int64_t threads) {
    return static_cast<unsigned>(
        std::min<int64_t>(kDefaultBlock, (threads + 31) / 32 * 32));
  };
  if (firstRows) {
    RowPlan p = planRows(*firstRows);
    if (p.mode == RowPlan::Block)
      blockSize = static_cast<unsigned>(p.group);
    else if (numNests == 1)
      blockSize = warpsFor(p.mode == RowPlan::Warp ? 32 * p.rows : p.rows);
  } else {
    blockSize = warpsFor(largestNest);
  }

  for (const Stmt &s : k.body)
    printStmt(s, false);

  CudaKernel result;
  result.name = k.name;
  result.sourceNodes = k.sourceNodes;
  result.block[0] = blockSize;
  result.grid[0] =
      static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(gridSize, 1),
                                              kMaxGrid));
  result.sharedBytes = 0;
  assert(sharedBytes <= 48 * 1024 && "static shared memory over 48 KiB");

  std::string header = "// " + k.name + ": " + k.kind + " kernel over [";
  for (size_t i = 0; i < k.parallelDomain.size(); ++i)
    header += (i ? ", " : "") + std::to_string(k.parallelDomain[i]);
  header += "]";
  if (k.kind == "reduction") {
    header += " reducing [";
    for (size_t i = 0; i < k.reducedDomain.size(); ++i)
      header += (i ? ", " : "") + std::to_string(k.reducedDomain[i]);
    header += "]";
  }
  header += "\n";
  if (!k.sourceNodes.empty()) {
    header += "// ONNX nodes:";
    for (const std::string &n : k.sourceNodes)
      header += " " + n;
    header += "\n";
  }
  for (const std::string &m : mappings)
    header += "// mapping: " + m + "\n";
  header += "// launch: grid [" + std::to_string(result.grid[0]) +
            ", 1, 1], block [" + std::to_string(blockSize) +
            ", 1, 1], static shared " + std::to_string(sharedBytes) +
            " bytes\n";
  std::string prologue;
  for (const std::string &d : sharedDecls)
    prologue += "  " + d + "\n";
  if (usesGlobalId) {
    prologue += "  const " + it + " kiln_gtid = (" + it + ")blockIdx.x * (" +
                it + ")blockDim.x + (" + it + ")threadIdx.x;\n";
    prologue += "  const " + it + " kiln_nthreads = (" + it + ")gridDim.x * (" +
                it + ")blockDim.x;\n";
  }
  result.declaration = signature() + ";";
  result.definition = header + signature() + " {\n" + prologue + out + "}\n";
  return result;
}

} // namespace

CudaKernel printCudaKernel(const Kernel &kernel) {
  return CudaPrinter(kernel).print();
}

mlir::FailureOr<CudaKernel> emitCudaKernel(FusionOp op) {
  mlir::FailureOr<Kernel> kernel =
      lowerToKernelIR(op.getBody(), op.getName(), op.getKind(), op.getLoc());
  if (mlir::failed(kernel))
    return mlir::failure();
  return printCudaKernel(*kernel);
}

std::string emitCudaKernelsFile(llvm::ArrayRef<CudaKernel> kernels,
                                llvm::StringRef modelName) {
  std::string s;
  s += "//===- kernels.cu - CUDA kernels of " + modelName.str() +
       " (generated by kiln) ---===//\n";
  s += "//\n// One extern \"C\" __global__ function per fusion region, "
       "compiled by NVRTC;\n// each names the ONNX nodes it computes and the "
       "launch shape it needs.\n// Generated code: do not edit.\n//\n";
  s += "//===" + std::string(70, '-') + "===//\n\n";
  s += kernelPrelude(PreludeTarget::Cuda);
  for (const CudaKernel &k : kernels)
    s += "\n" + k.definition;
  return s;
}

} // namespace kiln
