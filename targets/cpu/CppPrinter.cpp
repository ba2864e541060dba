//===- CppPrinter.cpp - Kernel IR to C++ ----------------------------------===//
//
// This file implements the C++ printer of the kernel IR. The outer
// (parallel) loop nest gets `#pragma omp parallel for` when the kernel's work
// is large enough to pay for the threads; element loops stay plain `for`
// loops over `__restrict` pointers for the auto-vectorizer; reduce loops keep
// their accumulators in locals (f32 for sums of f32/f16/bf16 over at most
// kMaxFloatSumCount elements, f64 for longer sums and for products, wrapping
// u64 for integers) under `#pragma omp simd
// reduction(...)`, which lets the compiler vectorize them without
// -ffast-math. Scalar ops print through the shared expression printer.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/SymbolicShapes.h"
#include "targets/cpu/CppKernel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <map>

namespace kiln {

using namespace codegen;

namespace {

/// Work below this many element evaluations runs on one thread.
constexpr int64_t kParallelThreshold = 32 * 1024;
/// A parallel nest collapses outer loops until it has this many iterations.
constexpr int64_t kMinParallelTrip = 64;
/// Float sums of at most this many terms accumulate in f32, as ONNX Runtime
/// and PyTorch do; the vectorized loop keeps one partial sum per lane (8 or
/// 16), so each partial sum adds at most 8192 terms (relative error well
/// under the 1e-3 the tests allow). Longer sums, and products, use f64 (the
/// reference runtime's precision). f32 sums measured 9% faster on softmax.
constexpr int64_t kMaxFloatSumCount = 65536;

/// The C type of the accumulator of `r`.
std::string accumulatorType(const Reduction &r) {
  if (!isFloatType(r.type))
    return "uint64_t";
  bool floatSum = (r.kind == ReduceKind::Sum || r.kind == ReduceKind::Mean) &&
                  computeCType(r.type) == "float" &&
                  r.count <= kMaxFloatSumCount;
  return floatSum ? "float" : "double";
}

/// Elements of a reduce loop between two rounds of prefetches of the next
/// row (printPrefetchedRows): 1 KB of f32, 16 cache lines.
constexpr int64_t kPrefetchBlock = 256;

/// Outputs of a pointwise kernel at least this large are written with
/// non-temporal stores (printStreamedLoop): far larger than a last-level
/// cache, so its lines would be evicted before anything reads them, and a
/// normal store first reads each line it writes. Measured on the
/// eighteenth session's machine (32 MB L3; BENCHMARKS.md): a 64 MB Relu
/// output 7.29 -> 4.82 ms on one thread (ONNX Runtime 4.9); a 16 MB softmax
/// output was slower with them.
constexpr int64_t kStreamBytes = 64 << 20;
/// Bytes of a streamed output computed into a local chunk before it is
/// stored: 16 cache lines.
constexpr int64_t kStreamChunkBytes = 1024;

/// A load of the next row to prefetch: the element at the block's first
/// column (its index printed with the row variable as "kiln_nx" and the
/// column as "kiln_k"), and the elements per 64-byte cache line.
struct RowPrefetch {
  std::string address;
  int64_t lineElements = 16;
};

class CppPrinter {
public:
  explicit CppPrinter(const Kernel &k)
      : k(k), names(k.varNames()), exprs(k.temps.size()) {}

  CppKernel print();

private:
  const Kernel &k;
  std::vector<std::string> names;
  std::vector<std::string> exprs; ///< temp id -> C expression
  /// Streamed outputs (printStreamedLoop): buffer -> its chunk array, and
  /// the chunked loop's variable.
  std::map<int, std::string> streamChunks;
  std::string streamVar;
  std::string out;
  int indent = 1;

  void line(const std::string &s) {
    out += std::string(indent * 2, ' ') + s + "\n";
  }
  int64_t work(const Body &body) const;
  void printBody(const Body &body);
  void printLoop(const Stmt &loop);
  void openFor(int var);
  /// " if(<run-time work> > threshold)" for the OpenMP pragma of a
  /// parallel loop with a run-time extent; "" otherwise.
  std::string parallelIf(const Stmt &loop) const;
  void printParallelPragma(const Stmt &loop, size_t numCollapsed);
  void printReduceLoop(const Stmt &loop,
                       const std::vector<RowPrefetch> &prefetches = {});
  void printPrefetches(const std::vector<RowPrefetch> &prefetches,
                       const std::string &begin, const std::string &end);
  std::string declareAccumulators(const std::vector<Reduction> &reductions,
                                  bool &simd);
  void combineAccumulators(const std::vector<Reduction> &reductions);
  std::string reducedValue(const Reduction &r);
  bool printPrefetchedRows(const Stmt &loop);
  bool printStreamedLoop(const Stmt &loop, size_t numCollapsed);
  void declareRowCaches();
  std::string signature() const;
};

int64_t CppPrinter::work(const Body &body) const {
  int64_t w = 0;
  for (const Stmt &s : body) {
    if (s.kind != Stmt::Kind::Loop) {
      ++w;
      continue;
    }
    int64_t trip = 1;
    for (int v : s.vars)
      trip *= k.vars[v].extent;
    w += trip * std::max<int64_t>(work(s.body), 1);
  }
  return w;
}

/// The extent of loop variable `var` as C++: a number, or a run-time size.
static std::string extentOf(const Kernel &k, int var) {
  const LoopVar &v = k.vars[var];
  return v.symbolicExtent.empty() ? std::to_string(v.extent) : v.symbolicExtent;
}

std::string CppPrinter::parallelIf(const Stmt &loop) const {
  // The decision to go parallel was made at the bound; a run-time extent
  // may be far smaller (batch 1 of 1..64), where waking the threads costs
  // more than the work: the same threshold, at run time.
  std::string trip;
  bool symbolic = false;
  for (int v : loop.vars) {
    symbolic |= !k.vars[v].symbolicExtent.empty();
    trip += (trip.empty() ? "" : " * ") + extentOf(k, v);
  }
  if (!symbolic)
    return "";
  return " if(" + trip + " * " +
         std::to_string(std::max<int64_t>(work(loop.body), 1)) + " > " +
         std::to_string(kParallelThreshold) + ")";
}

/// The OpenMP pragma of a loop nest whose outer `numCollapsed` variables
/// run in parallel (nothing for 0).
void CppPrinter::printParallelPragma(const Stmt &loop, size_t numCollapsed) {
  if (numCollapsed == 1)
    line("#pragma omp parallel for" + parallelIf(loop));
  else if (numCollapsed > 1)
    line("#pragma omp parallel for collapse(" + std::to_string(numCollapsed) +
         ")" + parallelIf(loop));
}

void CppPrinter::openFor(int var) {
  line("for (int64_t " + names[var] + " = 0; " + names[var] + " < " +
       extentOf(k, var) + "; ++" + names[var] + ") {");
  ++indent;
}

void CppPrinter::printBody(const Body &body) {
  for (const Stmt &s : body) {
    switch (s.kind) {
    case Stmt::Kind::Const:
      exprs[s.result] =
          printLiteral(k.temps[s.result], s.floatValue, s.intValue);
      break;
    case Stmt::Kind::Load: {
      ScalarType t = k.temps[s.result];
      std::string load =
          k.buffers[s.buffer].name + "[" + s.index.str(names) + "]";
      if (isHalfType(t))
        load = "(float)" + load;
      exprs[s.result] = "t" + std::to_string(s.result);
      line("const " + computeCType(t) + " " + exprs[s.result] + " = " + load +
           ";");
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
           printScalarOp(*s.op, t, argTypes, args, s.attrs) + ";");
      break;
    }
    case Stmt::Kind::CacheStore:
      line(k.caches[s.buffer].name + "[" + s.index.str(names) +
           "] = " + exprs[s.value] + ";");
      break;
    case Stmt::Kind::CacheLoad:
      exprs[s.result] = "t" + std::to_string(s.result);
      line("const " + computeCType(k.temps[s.result]) + " " + exprs[s.result] +
           " = " + k.caches[s.buffer].name + "[" + s.index.str(names) + "];");
      break;
    case Stmt::Kind::Store: {
      const Buffer &buf = k.buffers[s.buffer];
      std::string v = exprs[s.value];
      if (isHalfType(buf.type))
        v = storageCType(buf.type) + "(" + v + ")";
      else if (k.temps[s.value] != buf.type)
        v = "(" + computeCType(buf.type) + ")" + v;
      auto chunk = streamChunks.find(s.buffer);
      if (chunk != streamChunks.end())
        line(chunk->second + "[" + streamVar + " - kiln_c] = " + v + ";");
      else
        line(buf.name + "[" + s.index.str(names) + "] = " + v + ";");
      break;
    }
    case Stmt::Kind::Loop:
      if (s.loopKind == Stmt::LoopKind::Reduce)
        printReduceLoop(s);
      else
        printLoop(s);
      break;
    }
  }
}

/// Row caches: local arrays, or the row of the output they are placed in
/// (a plain pointer: it aliases the output's `__restrict` pointer).
void CppPrinter::declareRowCaches() {
  for (const RowCache &c : k.caches) {
    if (c.outputBuffer >= 0)
      line(computeCType(c.type) + " *" + c.name + " = " +
           k.buffers[c.outputBuffer].name + " + " + c.outputBase.str(names) +
           "; // the row of " + k.buffers[c.outputBuffer].name);
    else
      line(computeCType(c.type) + " " + c.name + "[" + std::to_string(c.size) +
           "];");
  }
}

void CppPrinter::printLoop(const Stmt &loop) {
  if (loop.vars.empty()) {
    line("{");
    ++indent;
    if (loop.loopKind == Stmt::LoopKind::Parallel)
      declareRowCaches();
    printBody(loop.body);
    --indent;
    line("}");
    return;
  }
  size_t numCollapsed = 0;
  if (loop.loopKind == Stmt::LoopKind::Parallel && work(loop.body) * [&] {
        int64_t trip = 1;
        for (int v : loop.vars)
          trip *= k.vars[v].extent;
        return trip;
      }() > kParallelThreshold) {
    // Pointwise nests keep the innermost loop out of the collapse so that it
    // vectorizes; reduction kernels collapse every kept dim.
    bool hasInnerLoops = false;
    for (const Stmt &s : loop.body)
      hasInnerLoops |= s.kind == Stmt::Kind::Loop;
    size_t limit = hasInnerLoops || loop.vars.size() == 1
                       ? loop.vars.size()
                       : loop.vars.size() - 1;
    int64_t trip = 1;
    while (numCollapsed < limit && trip < kMinParallelTrip)
      trip *= k.vars[loop.vars[numCollapsed++]].extent;
    if (hasInnerLoops)
      numCollapsed = limit;
  }
  if (numCollapsed == 1 && loop.loopKind == Stmt::LoopKind::Parallel &&
      printPrefetchedRows(loop))
    return;
  if (printStreamedLoop(loop, numCollapsed))
    return;
  printParallelPragma(loop, numCollapsed);
  for (int v : loop.vars)
    openFor(v);
  if (loop.loopKind == Stmt::LoopKind::Parallel)
    declareRowCaches();
  printBody(loop.body);
  for (size_t i = 0; i < loop.vars.size(); ++i) {
    --indent;
    line("}");
  }
}

/// Declares the accumulators of `reductions` (names "acc<N>") and returns
/// their `omp simd` clauses; clears `simd` when one cannot be a clause (bool
/// max/min).
std::string
CppPrinter::declareAccumulators(const std::vector<Reduction> &reductions,
                                bool &simd) {
  std::string clauses;
  for (const Reduction &r : reductions) {
    std::string acc = "acc" + std::to_string(r.result);
    std::string nan = "nan" + std::to_string(r.result);
    bool fl = isFloatType(r.type);
    switch (r.kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      line(accumulatorType(r) + " " + acc + " = 0;");
      clauses += " reduction(+:" + acc + ")";
      break;
    case ReduceKind::Prod:
      line(accumulatorType(r) + " " + acc + " = 1;");
      clauses += " reduction(*:" + acc + ")";
      break;
    case ReduceKind::Max:
    case ReduceKind::Min: {
      bool isMax = r.kind == ReduceKind::Max;
      std::string init;
      if (fl)
        init = printLiteral(r.type, isMax ? -INFINITY : INFINITY, 0);
      else if (r.type == ScalarType::Bool)
        init = isMax ? "false" : "true";
      else
        init = std::string(isMax ? "kiln_lowest" : "kiln_highest") + "<" +
               computeCType(r.type) + ">()";
      line(computeCType(r.type) + " " + acc + " = " + init + ";");
      if (r.type == ScalarType::Bool)
        simd = false;
      else
        clauses += std::string(" reduction(") + (isMax ? "max" : "min") + ":" +
                   acc + ")";
      if (fl) {
        line("int " + nan + " = 0;");
        clauses += " reduction(|:" + nan + ")";
      }
      break;
    }
    }
  }
  return clauses;
}

/// Adds this iteration's inputs of `reductions` to their accumulators.
void CppPrinter::combineAccumulators(const std::vector<Reduction> &reductions) {
  for (const Reduction &r : reductions) {
    std::string acc = "acc" + std::to_string(r.result);
    std::string in = exprs[r.input];
    bool fl = isFloatType(r.type);
    switch (r.kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      line(acc + (fl ? " += (" + accumulatorType(r) + ")"
                     : std::string(" += (uint64_t)(int64_t)")) +
           in + ";");
      break;
    case ReduceKind::Prod:
      line(acc + (fl ? " *= (double)" : " *= (uint64_t)(int64_t)") + in + ";");
      break;
    case ReduceKind::Max:
    case ReduceKind::Min: {
      const char *cmp = r.kind == ReduceKind::Max ? " > " : " < ";
      line(acc + " = " + in + cmp + acc + " ? " + in + " : " + acc + ";");
      if (fl)
        line("nan" + std::to_string(r.result) + " |= " + in + " != " + in +
             ";");
      break;
    }
    }
  }
}

/// The result of `r` from its accumulator, rounded once to the reduced op's
/// dtype.
std::string CppPrinter::reducedValue(const Reduction &r) {
  std::string acc = "acc" + std::to_string(r.result);
  std::string ct = computeCType(r.type);
  bool fl = isFloatType(r.type);
  std::string v;
  switch (r.kind) {
  case ReduceKind::Sum:
  case ReduceKind::Prod:
    v = fl ? "(" + ct + ")" + acc : "(" + ct + ")(int64_t)" + acc;
    break;
  case ReduceKind::Mean: {
    // The count, or its run-time value (a range package's).
    std::string count = r.symbolicCount.empty() ? std::to_string(r.count)
                                                : r.symbolicCount;
    v = fl ? "(" + ct + ")(" + acc + " / (" + accumulatorType(r) + ")" +
                 count + ")"
           : "(" + ct + ")(" +
                 (r.count == 0 ? std::string("0")
                               : "(int64_t)" + acc + " / " + count) +
                 ")";
  }
    break;
  case ReduceKind::Max:
  case ReduceKind::Min:
    v = fl ? "(nan" + std::to_string(r.result) + " ? " +
                 printLiteral(r.type, NAN, 0) + " : " + acc + ")"
           : acc;
    break;
  }
  return roundTo(r.type, v);
}

/// Prints the `__builtin_prefetch` loops of `prefetches` over the columns
/// [`begin`, `end`).
void CppPrinter::printPrefetches(const std::vector<RowPrefetch> &prefetches,
                                 const std::string &begin,
                                 const std::string &end) {
  for (const RowPrefetch &p : prefetches) {
    line("for (int64_t kiln_k = " + begin + "; kiln_k < " + end +
         "; kiln_k += " + std::to_string(p.lineElements) + ")");
    line("  __builtin_prefetch(&" + p.address + ");");
  }
}

/// Prints a reduce loop. With `prefetches` (a loop over one variable, the
/// second of a row: printPrefetchedRows), the loop runs in blocks of
/// kPrefetchBlock columns, each after the prefetches of the same columns of
/// the next row.
void CppPrinter::printReduceLoop(const Stmt &loop,
                                 const std::vector<RowPrefetch> &prefetches) {
  bool simd = true;
  std::string clauses = declareAccumulators(loop.reductions, simd);
  // A reduce loop without variables (all its dims of extent 1, dropped by
  // the kernel IR's cleanup) is its body once: no loop for the pragma.
  std::string pragma;
  if (simd && !loop.vars.empty())
    pragma = "#pragma omp simd" +
             (loop.vars.size() > 1
                  ? " collapse(" + std::to_string(loop.vars.size()) + ")"
                  : std::string()) +
             clauses;
  bool blocked = false;
  if (!prefetches.empty()) {
    assert(loop.vars.size() == 1 && "prefetched loops have one variable");
    int var = loop.vars[0];
    std::string n = extentOf(k, var), j = names[var];
    blocked = !k.vars[var].symbolicExtent.empty() ||
              k.vars[var].extent > kPrefetchBlock;
    if (!blocked) {
      printPrefetches(prefetches, "0", n);
      if (!pragma.empty())
        line(pragma);
      openFor(var);
    } else {
      std::string block = std::to_string(kPrefetchBlock);
      line("for (int64_t kiln_jb = 0; kiln_jb < " + n +
           "; kiln_jb += " + block + ") {");
      ++indent;
      line("const int64_t kiln_je = kiln_jb + " + block + " < " + n +
           " ? kiln_jb + " + block + " : " + n + ";");
      printPrefetches(prefetches, "kiln_jb", "kiln_je");
      if (!pragma.empty())
        line(pragma);
      line("for (int64_t " + j + " = kiln_jb; " + j + " < kiln_je; ++" + j +
           ") {");
      ++indent;
    }
  } else {
    if (!pragma.empty())
      line(pragma);
    for (int v : loop.vars)
      openFor(v);
  }
  printBody(loop.body);
  combineAccumulators(loop.reductions);
  for (size_t i = 0; i < loop.vars.size() + (blocked ? 1 : 0); ++i) {
    --indent;
    line("}");
  }
  for (const Reduction &r : loop.reductions) {
    exprs[r.result] = "t" + std::to_string(r.result);
    line("const " + computeCType(r.type) + " " + exprs[r.result] + " = " +
         reducedValue(r) + ";");
  }
}

/// Row prefetching: in a parallel loop over rows whose body starts with a
/// reduce loop that only reads (softmax's max, a norm's mean) followed by
/// another reduce loop over the same single variable (the exp and its sum,
/// the squares), the second loop prefetches the first loop's loads of the
/// next row, a block of columns at a time. The first loop of the next row
/// then reads from the cache instead of waiting on memory with nothing to
/// compute, and its memory traffic overlaps this row's arithmetic. Every
/// row is computed alike, whatever the thread count. Measured on one core
/// of this machine, a [1024, 4096] f32 softmax package: 2.04 -> 1.74 ms
/// (medians of ten alternating `kiln bench` runs); it replaced computing
/// the next row's first reduction inside this row's second loop, which
/// kept the loads' latency in the arithmetic loop. Returns false (printing
/// nothing) when `loop` does not have that shape or no load of the first
/// loop walks the row contiguously.
bool CppPrinter::printPrefetchedRows(const Stmt &loop) {
  if (loop.vars.size() != 1)
    return false;
  size_t a = 0;
  while (a < loop.body.size() && loop.body[a].kind == Stmt::Kind::Const)
    ++a;
  if (a == loop.body.size())
    return false;
  const Stmt &first = loop.body[a];
  if (first.kind != Stmt::Kind::Loop ||
      first.loopKind != Stmt::LoopKind::Reduce || first.vars.size() != 1)
    return false;
  size_t b = a + 1;
  while (b < loop.body.size() && loop.body[b].kind != Stmt::Kind::Loop)
    ++b;
  if (b == loop.body.size())
    return false;
  const Stmt &second = loop.body[b];
  if (second.loopKind != Stmt::LoopKind::Reduce || second.vars != first.vars)
    return false;

  // The first loop's loads that walk the row: a unit stride in the column,
  // a row term. Each buffer once.
  int row = loop.vars[0], col = first.vars[0];
  std::vector<std::string> nextNames = names;
  nextNames[row] = "kiln_nx";
  nextNames[col] = "kiln_k";
  std::vector<RowPrefetch> prefetches;
  std::vector<int> seen;
  for (const Stmt &s : first.body) {
    if (s.kind != Stmt::Kind::Load || llvm::is_contained(seen, s.buffer))
      continue;
    std::optional<int64_t> colCoef = coefficientOf(s.index, col),
                           rowCoef = coefficientOf(s.index, row);
    bool unitStride = colCoef && *colCoef == 1 &&
                      llvm::all_of(s.index.getTerms(), [&](const auto &t) {
                        return t.atom.kind != IndexExpr::Atom::Var ||
                               t.atom.var != col || t.symbolicCoef.empty();
                      });
    if (!unitStride || !rowCoef || *rowCoef == 0)
      continue;
    seen.push_back(s.buffer);
    const Buffer &buf = k.buffers[s.buffer];
    prefetches.push_back({buf.name + "[" + s.index.str(nextNames) + "]",
                          64 / scalarTypeBytes(buf.type)});
  }
  if (prefetches.empty())
    return false;

  std::string n = extentOf(k, row), r = names[row];
  printParallelPragma(loop, 1);
  openFor(row);
  declareRowCaches();
  line("// The next row's loads of the first loop, prefetched during the "
       "second.");
  line("const int64_t kiln_nx = " + r + " + 1 < " + n + " ? " + r +
       " + 1 : " + r + ";");
  printBody(Body(loop.body.begin(), loop.body.begin() + b));
  printReduceLoop(second, prefetches);
  printBody(Body(loop.body.begin() + b + 1, loop.body.end()));
  --indent;
  line("}");
  return true;
}

/// Non-temporal stores: a pointwise nest (no inner loops) of static extents
/// whose every store goes to an output of at least kStreamBytes, contiguous
/// in the innermost variable, each run of kStreamChunkBytes starting on a
/// 64-byte boundary. The innermost loop runs in chunks: the chunk's values
/// go to a local array (the vectorized loop as before), which
/// kiln_stream_store then writes with non-temporal stores; each outer
/// iteration ends with kiln_stream_fence, so the stores are visible when
/// the parallel loop's barrier is. Returns false (printing nothing) when
/// `loop` does not qualify.
bool CppPrinter::printStreamedLoop(const Stmt &loop, size_t numCollapsed) {
  if (k.kind != "pointwise" || loop.loopKind != Stmt::LoopKind::Parallel ||
      loop.vars.size() < 2 || numCollapsed == 0 ||
      numCollapsed >= loop.vars.size())
    return false;
  for (int v : loop.vars)
    if (!k.vars[v].symbolicExtent.empty())
      return false;
  int inner = loop.vars.back();
  std::map<int, std::string> chunks;
  std::map<int, const IndexExpr *> chunkIndex; // each streamed buffer's store
  int64_t chunkElems = 0;
  for (const Stmt &s : loop.body) {
    if (s.kind == Stmt::Kind::Loop || s.kind == Stmt::Kind::CacheStore)
      return false;
    if (s.kind != Stmt::Kind::Store)
      continue;
    const Buffer &b = k.buffers[s.buffer];
    int64_t bytes = scalarTypeBytes(b.type);
    int64_t elems = kStreamChunkBytes / bytes;
    if (!b.isOutput || b.sharesWith >= 0 ||
        b.numElements() * bytes < kStreamBytes ||
        s.index.hasRunTimeNumbers() || coefficientOf(s.index, inner) != 1 ||
        k.vars[inner].extent % elems != 0 || (chunkElems && chunkElems != elems))
      return false;
    // Each chunk starts on a 64-byte boundary (the buffer is 64-byte
    // aligned): the other terms and the constant are multiples of a line.
    int64_t line64 = 64 / bytes;
    if (s.index.getConstant() % line64 != 0)
      return false;
    for (const IndexExpr::Term &t : s.index.getTerms())
      if (!(t.atom.kind == IndexExpr::Atom::Var && t.atom.var == inner) &&
          t.coef % line64 != 0)
        return false;
    if (chunks.count(s.buffer))
      return false; // one store per streamed output
    chunkElems = elems;
    chunks.emplace(s.buffer, "kiln_chunk" + std::to_string(s.buffer));
    chunkIndex.emplace(s.buffer, &s.index);
  }
  if (chunks.empty())
    return false;

  printParallelPragma(loop, numCollapsed);
  for (size_t i = 0; i + 1 < loop.vars.size(); ++i)
    openFor(loop.vars[i]);
  std::string n = std::to_string(k.vars[inner].extent),
              c = std::to_string(chunkElems), j = names[inner];
  line("// Outputs larger than a last-level cache: computed in chunks of " +
       std::to_string(kStreamChunkBytes) + " bytes, stored non-temporally.");
  line("for (int64_t kiln_c = 0; kiln_c < " + n + "; kiln_c += " + c + ") {");
  ++indent;
  for (const auto &[buffer, name] : chunks)
    line("alignas(64) " + storageCType(k.buffers[buffer].type) + " " + name +
         "[" + c + "];");
  line("for (int64_t " + j + " = kiln_c; " + j + " < kiln_c + " + c + "; ++" +
       j + ") {");
  ++indent;
  streamChunks = chunks;
  streamVar = j;
  printBody(loop.body);
  streamChunks.clear();
  --indent;
  line("}");
  std::vector<std::string> chunkNames = names;
  chunkNames[inner] = "kiln_c";
  for (const auto &[buffer, name] : chunks)
    line("kiln_stream_store(&" + k.buffers[buffer].name + "[" +
         chunkIndex[buffer]->str(chunkNames) + "], " + name + ", sizeof(" +
         name + "));");
  --indent;
  line("}");
  line("kiln_stream_fence();");
  for (size_t i = 0; i + 1 < loop.vars.size(); ++i) {
    --indent;
    line("}");
  }
  return true;
}

std::string CppPrinter::signature() const {
  std::string s = "void " + k.name + "(";
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const Buffer &b = k.buffers[i];
    // An output stored over an input (kiln.in_place) aliases it, but keeps
    // `__restrict`: every store of it is data-dependent on the loads of the
    // same element (or on a reduction over them), so no reordering the
    // qualifier allows can move a store before those loads; without it GCC
    // versions vectorized loops on a run-time overlap check, which an
    // in-place call would fail (its scalar copy would run; not measured).
    s += (i ? ", " : "") + std::string(b.isOutput ? "" : "const ") +
         storageCType(b.type) + " *__restrict " + b.name;
  }
  for (const std::string &size : k.sizeParams)
    s += ", int64_t " + size;
  return s + ")";
}

CppKernel CppPrinter::print() {
  CppKernel result;
  result.name = k.name;
  result.sourceNodes = k.sourceNodes;
  result.declaration = signature() + ";";
  std::string header = "// " + k.name + ": " + k.kind + " kernel over [";
  for (size_t i = 0; i < k.parallelDomain.size(); ++i)
    header += (i ? ", " : "") + std::to_string(k.parallelDomain[i]);
  header += "]";
  for (const LoopVar &v : k.vars)
    if (!v.symbolicExtent.empty())
      header += ", " + v.name + " < " + v.symbolicExtent + " (at most " +
                std::to_string(v.extent) + ")";
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
  header += inPlaceComment(k);
  out = header + signature() + " {\n";
  printBody(k.body);
  out += "}\n";
  result.definition = out;
  return result;
}

} // namespace

CppKernel printCppKernel(const Kernel &kernel) {
  return CppPrinter(kernel).print();
}

mlir::FailureOr<CppKernel> emitCppKernel(FusionOp op) {
  mlir::FailureOr<Kernel> kernel = lowerFusionToKernelIR(op);
  if (mlir::failed(kernel))
    return mlir::failure();
  // Run-time sizes of a package compiled for ranges of sizes.
  applySymbolicNumbers(op, *kernel);
  return printCppKernel(*kernel);
}


std::string emitKernelsFile(llvm::ArrayRef<CppKernel> kernels,
                            llvm::StringRef modelName) {
  std::string s;
  s += "//===- kernels.cpp - Kernels of " + modelName.str() +
       " (generated by kiln) ---===//\n";
  s += "//\n// One function per fusion region, in namespace kiln_kernels; "
       "each names the\n// ONNX nodes it computes. Generated code: do not "
       "edit.\n//\n";
  s += "//===" + std::string(70, '-') + "===//\n\n";
  s += cppKernelPrelude();
  s += "\nnamespace kiln_kernels {\n";
  for (const CppKernel &k : kernels)
    s += "\n" + k.definition;
  s += "\n} // namespace kiln_kernels\n";
  return s;
}

} // namespace kiln
