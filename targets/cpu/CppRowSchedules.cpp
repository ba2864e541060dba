//===- CppRowSchedules.cpp - Loop schedules for memory traffic ------------===//
//
// This file implements the C++ printer's schedules that change how a loop
// nest moves memory, each chosen from the kernel IR's shape and sizes and
// printing nothing when it does not apply: a row loop prefetching the next
// row while it computes (printPrefetchedRows), rows pipelined so that each
// row's outputs stream out with non-temporal stores while the next row
// computes (printPipelinedRows), and pointwise outputs larger than a
// last-level cache computed in chunks and streamed (printStreamedLoop).
//
//===----------------------------------------------------------------------===//

#include "targets/cpu/CppPrinter.h"

#include "codegen/ExprPrinter.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <map>

namespace kiln {

using namespace codegen;

namespace cpp_printer {

namespace {

/// Outputs of a pointwise kernel at least this large are written with
/// non-temporal stores (printStreamedLoop): far larger than a last-level
/// cache, so its lines would be evicted before anything reads them, and a
/// normal store first reads each line it writes. Measured on the
/// eighteenth session's machine (32 MB L3; BENCHMARKS.md): a 64 MB Relu
/// output 7.29 -> 4.82 ms on one thread (ONNX Runtime 4.9); a 16 MB softmax
/// output stored as it was computed was slower with them (pipelined rows,
/// which store it a row late, gain: kPipelinedStreamBytes).
constexpr int64_t kStreamBytes = 64 << 20;
/// Bytes of a streamed output computed into a local chunk before it is
/// stored: 16 cache lines.
constexpr int64_t kStreamChunkBytes = 1024;

/// Outputs of a pipelined row loop (printPipelinedRows) at least this large
/// are stored non-temporally, a row late: a third of this machine's 48 MB
/// L3, the size measured (16 MB softmax and LayerNorm + GELU outputs).
/// Smaller outputs may be read from the cache by the next kernel.
constexpr int64_t kPipelinedStreamBytes = 16 << 20;
/// The rows of a pipelined loop's caches fit in this many bytes of each
/// thread's stack and of its L2 (a 4096-element f32 row takes 16 KB).
constexpr int64_t kMaxPipelinedCacheBytes = 128 << 10;

} // namespace

/// Prints the `__builtin_prefetch` loops of `prefetches` over the columns
/// [`begin`, `end`).
void CppPrinter::printPrefetches(const std::vector<RowPrefetch> &prefetches,
                                 const std::string &begin,
                                 const std::string &end) {
  for (const RowPrefetch &p : prefetches) {
    line("for (int64_t kiln_k = " + begin + "; kiln_k < " + end +
         "; kiln_k += " + std::to_string(p.lineElements) + ")");
    line("  __builtin_prefetch(&" + p.address +
         (p.locality == 3 ? std::string()
                          : ", 0, " + std::to_string(p.locality)) +
         ");");
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
/// kept the loads' latency in the arithmetic loop. matchPrefetchedRows
/// finds the shape (nullopt when `loop` does not have it or no load of the
/// first loop walks the row contiguously); printPrefetchedRows returns
/// false, printing nothing, without it.
std::optional<PrefetchedRows>
CppPrinter::matchPrefetchedRows(const Stmt &loop) const {
  if (loop.vars.size() != 1)
    return std::nullopt;
  size_t a = 0;
  while (a < loop.body.size() && loop.body[a].kind == Stmt::Kind::Const)
    ++a;
  if (a == loop.body.size())
    return std::nullopt;
  const Stmt &first = loop.body[a];
  if (first.kind != Stmt::Kind::Loop ||
      first.loopKind != Stmt::LoopKind::Reduce || first.vars.size() != 1)
    return std::nullopt;
  size_t b = a + 1;
  while (b < loop.body.size() && loop.body[b].kind != Stmt::Kind::Loop)
    ++b;
  if (b == loop.body.size())
    return std::nullopt;
  const Stmt &second = loop.body[b];
  if (second.loopKind != Stmt::LoopKind::Reduce || second.vars != first.vars)
    return std::nullopt;

  // The first loop's loads that walk the row: a unit stride in the column,
  // a row term. Each buffer once.
  int row = loop.vars[0], col = first.vars[0];
  std::vector<std::string> nextNames = names;
  nextNames[row] = "kiln_nx";
  nextNames[col] = "kiln_k";
  PrefetchedRows rows{a, b, {}};
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
    rows.prefetches.push_back({buf.name + "[" + s.index.str(nextNames) + "]",
                               64 / scalarTypeBytes(buf.type)});
  }
  if (rows.prefetches.empty())
    return std::nullopt;
  return rows;
}

bool CppPrinter::printPrefetchedRows(const Stmt &loop) {
  std::optional<PrefetchedRows> rows = matchPrefetchedRows(loop);
  if (!rows)
    return false;
  std::string n = extentOf(k, loop.vars[0]), r = names[loop.vars[0]];
  printParallelPragma(loop, 1);
  openFor(loop.vars[0]);
  declareRowCaches();
  line("// The next row's loads of the first loop, prefetched during the "
       "second.");
  line("const int64_t kiln_nx = " + r + " + 1 < " + n + " ? " + r +
       " + 1 : " + r + ";");
  printBody(Body(loop.body.begin(), loop.body.begin() + rows->second));
  printReduceLoop(loop.body[rows->second], rows->prefetches);
  printBody(Body(loop.body.begin() + rows->second + 1, loop.body.end()));
  --indent;
  line("}");
  return true;
}

/// True when store `s` may be streamed in chunks of `chunkElems` elements
/// along `var`: to an output of its own of at least `minBytes`, with static
/// numbers, contiguous in `var`, each chunk starting on a 64-byte boundary
/// (the buffer is 64-byte aligned: the constant and the other terms are
/// multiples of a cache line, and so is a chunk).
bool CppPrinter::streamsInChunks(const Stmt &s, int var, int64_t chunkElems,
                                 int64_t minBytes) const {
  const Buffer &b = k.buffers[s.buffer];
  int64_t bytes = scalarTypeBytes(b.type), line64 = 64 / bytes;
  if (!b.isOutput || b.sharesWith >= 0 || b.numElements() * bytes < minBytes ||
      s.index.hasRunTimeNumbers() || coefficientOf(s.index, var) != 1 ||
      (chunkElems * bytes) % 64 != 0 || s.index.getConstant() % line64 != 0)
    return false;
  return llvm::all_of(s.index.getTerms(), [&](const IndexExpr::Term &t) {
    return (t.atom.kind == IndexExpr::Atom::Var && t.atom.var == var) ||
           t.coef % line64 == 0;
  });
}

/// Pipelined rows: a prefetched row loop (matchPrefetchedRows) whose last
/// loop is a store loop over the row (softmax's `exp / sum`, a norm's
/// scale and shift and what follows it) writing outputs of at least
/// kPipelinedStreamBytes. Each row's store loop runs one row late: in each
/// block of kPrefetchBlock columns of the next row's second loop, the
/// pending row's block is first stored, with non-temporal stores, from the
/// row caches, then the next row's block computed into the same columns of
/// them (so one local row per cache and thread suffices). A row's output
/// then leaves the core while the next row computes, and no output line is
/// read before it is written (a normal store reads each line it writes: a
/// third of softmax's memory traffic); the next row is prefetched into L2
/// only, leaving L1 to the rows in use. The row-level values the store
/// loop reads (the sum's reciprocal) are kept for the pending row
/// (`kiln_p<N>`); each thread stores its last row after its rows, then
/// fences. The rows a thread computes are the static schedule's contiguous
/// share, each computed alike, whatever the thread count. Measured on this
/// machine (BENCHMARKS.md), a [1024, 4096] f32 softmax package (16 MB in
/// and out), the kernel edited by hand into a first form of this schedule
/// (two cache rows in turn, prefetches into L1), six alternating `kiln
/// bench --iterations 40` pairs: one thread 3.79-4.05 -> 3.02-3.16 ms, two
/// threads 1.82-2.05 -> 1.44-1.87 ms; one cache row and L2 prefetches took
/// another 5-11% off in bench/cpu_softmax_pipelined.cpp (Pp -> PsT1).
/// matchPipelinedRows finds the shape: nullopt when `loop` does not have
/// it, an extent is a run-time one or not a multiple of kPrefetchBlock, a
/// stored output is smaller, shared with an input or not contiguous in
/// 64-byte aligned blocks, a row cache is written or read other than at the
/// column, or the caches' rows would exceed kMaxPipelinedCacheBytes;
/// printPipelinedRows returns false, printing nothing, without it.
std::optional<PipelinedRows>
CppPrinter::matchPipelinedRows(const Stmt &loop) const {
  std::optional<PrefetchedRows> rows = matchPrefetchedRows(loop);
  if (!rows)
    return std::nullopt;
  // The store loop: the only loop after the second reduce loop (row-level
  // statements may follow it: a reduction stored as an output).
  size_t c = rows->second + 1;
  while (c < loop.body.size() && loop.body[c].kind != Stmt::Kind::Loop)
    ++c;
  if (c == loop.body.size() ||
      std::any_of(loop.body.begin() + c + 1, loop.body.end(),
                  [](const Stmt &s) { return s.kind == Stmt::Kind::Loop; }))
    return std::nullopt;
  const Stmt &second = loop.body[rows->second], &store = loop.body[c];
  if (store.loopKind == Stmt::LoopKind::Reduce || store.vars.size() != 1)
    return std::nullopt;
  int row = loop.vars[0], col = second.vars[0], storeCol = store.vars[0];
  for (int v : {row, col, storeCol})
    if (!k.vars[v].symbolicExtent.empty())
      return std::nullopt;
  int64_t n = k.vars[col].extent;
  if (k.vars[storeCol].extent != n || n <= kPrefetchBlock ||
      n % kPrefetchBlock != 0)
    return std::nullopt;
  int64_t cacheBytes = 0;
  for (const RowCache &rc : k.caches)
    cacheBytes +=
        rc.size * (isHalfType(rc.type) ? 4 : scalarTypeBytes(rc.type));
  if (cacheBytes > kMaxPipelinedCacheBytes)
    return std::nullopt;

  // The caches: written by the second loop, read by the store loop, each
  // at the column alone (a block stored is a block free to compute into).
  auto atColumn = [](const IndexExpr &index, int var) {
    return coefficientOf(index, var) == 1 && index.getTerms().size() == 1 &&
           index.getConstant() == 0;
  };
  std::function<bool(llvm::ArrayRef<Stmt>, int, bool)> cachesAt =
      [&](llvm::ArrayRef<Stmt> body, int var, bool allowed) {
        return llvm::all_of(body, [&](const Stmt &s) {
          if (s.kind == Stmt::Kind::Loop)
            return cachesAt(s.body, var, allowed);
          if (s.kind != Stmt::Kind::CacheStore &&
              s.kind != Stmt::Kind::CacheLoad)
            return true;
          return allowed && atColumn(s.index, var);
        });
      };
  for (size_t i = 0; i < loop.body.size(); ++i) {
    const Stmt &s = loop.body[i];
    int var = s.kind == Stmt::Kind::Loop && !s.vars.empty() ? s.vars[0] : -1;
    if (!cachesAt(s, var, i == rows->second || i == c))
      return std::nullopt;
  }
  for (RowPrefetch &p : rows->prefetches)
    p.locality = 2;
  // Every store of the store loop streams: an output of its own, large,
  // contiguous in the column, each block starting on a 64-byte boundary.
  PipelinedRows pipe{*rows, c, {}, {}};
  std::map<int, std::string> &chunks = pipe.chunks;
  std::vector<int> defined;
  for (const Stmt &s : store.body) {
    if (s.kind == Stmt::Kind::Loop || s.kind == Stmt::Kind::CacheStore)
      return std::nullopt;
    if (s.result >= 0)
      defined.push_back(s.result);
    if (s.kind != Stmt::Kind::Store)
      continue;
    if (!streamsInChunks(s, storeCol, kPrefetchBlock, kPipelinedStreamBytes) ||
        chunks.count(s.buffer))
      return std::nullopt;
    chunks.emplace(s.buffer, "kiln_chunk" + std::to_string(s.buffer));
  }
  if (chunks.empty())
    return std::nullopt;
  // No other statement of the row writes the streamed outputs.
  std::function<bool(llvm::ArrayRef<Stmt>)> storesStreamed =
      [&](llvm::ArrayRef<Stmt> body) {
        return llvm::any_of(body, [&](const Stmt &s) {
          return (s.kind == Stmt::Kind::Store && chunks.count(s.buffer)) ||
                 (s.kind == Stmt::Kind::Loop && storesStreamed(s.body));
        });
      };
  llvm::ArrayRef<Stmt> body(loop.body);
  if (storesStreamed(body.take_front(c)) || storesStreamed(body.drop_front(c + 1)))
    return std::nullopt;
  // The row-level temps the store loop reads: carried to the pending row.
  std::vector<int> rowLevel, &carried = pipe.carried;
  for (size_t i = 0; i < c; ++i) {
    const Stmt &s = loop.body[i];
    if (s.kind == Stmt::Kind::Loop)
      for (const Reduction &r : s.reductions)
        rowLevel.push_back(r.result);
    else if (s.kind != Stmt::Kind::Const && s.result >= 0)
      rowLevel.push_back(s.result);
  }
  auto carry = [&](int t) {
    if (llvm::is_contained(rowLevel, t) && !llvm::is_contained(defined, t) &&
        !llvm::is_contained(carried, t))
      carried.push_back(t);
  };
  for (const Stmt &s : store.body) {
    for (int a : s.args)
      carry(a);
    if (s.kind == Stmt::Kind::Store)
      carry(s.value);
  }
  return pipe;
}

bool CppPrinter::printPipelinedRows(const Stmt &loop) {
  std::optional<PipelinedRows> pipe = matchPipelinedRows(loop);
  if (!pipe)
    return false;
  const PrefetchedRows &rows = pipe->rows;
  const Stmt &second = loop.body[rows.second], &store = loop.body[pipe->store];
  const std::vector<int> &carried = pipe->carried;
  size_t c = pipe->store;
  int row = loop.vars[0];
  int64_t n = k.vars[second.vars[0]].extent;
  std::string r = names[row], extent = std::to_string(k.vars[row].extent);
  line("// Rows pipelined: each row's outputs are stored a row late, a block "
       "at a time");
  line("// during the next row's second loop, with non-temporal stores.");
  line("#pragma omp parallel");
  line("{");
  ++indent;
  for (const RowCache &rc : k.caches)
    line("alignas(64) " + computeCType(rc.type) + " " + rc.name + "[" +
         std::to_string(rc.size) + "];");
  line("int64_t kiln_pr = -1; // the pending row: reduced, not yet stored");
  for (int t : carried)
    line(computeCType(k.temps[t]) + " kiln_p" + std::to_string(t) + " = 0;");
  line("#pragma omp for schedule(static) nowait");
  openFor(row);
  line("const int64_t kiln_nx = " + r + " + 1 < " + extent + " ? " + r +
       " + 1 : " + r + ";");
  printBody(Body(loop.body.begin(), loop.body.begin() + rows.second));
  // Only the store loop stores the streamed outputs (matchPipelinedRows).
  streamChunks = pipe->chunks;
  printReduceLoop(second, rows.prefetches, [&] {
    line("if (kiln_pr >= 0) {");
    ++indent;
    printPendingRowBlock(store, carried, row);
    --indent;
    line("}");
  });
  printBody(Body(loop.body.begin() + rows.second + 1, loop.body.begin() + c));
  printBody(Body(loop.body.begin() + c + 1, loop.body.end()));
  for (int t : carried)
    line("kiln_p" + std::to_string(t) + " = " + exprs[t] + ";");
  line("kiln_pr = " + r + ";");
  --indent;
  line("}");
  line("if (kiln_pr >= 0) { // this thread's last row");
  ++indent;
  std::string block = std::to_string(kPrefetchBlock);
  line("for (int64_t kiln_jb = 0; kiln_jb < " + std::to_string(n) +
       "; kiln_jb += " + block + ") {");
  ++indent;
  printPendingRowBlock(store, carried, row);
  --indent;
  line("}");
  --indent;
  line("}");
  streamChunks.clear();
  line("kiln_stream_fence();");
  --indent;
  line("}");
  return true;
}

/// Prints the store loop `store` of the pending row `kiln_pr` (a row
/// variable `row`) over the block of kPrefetchBlock columns from `kiln_jb`,
/// reading the row caches' block before the next row computes into it: the
/// row-level temps `carried` are their kiln_p copies, the streamed outputs
/// (streamChunks) go out through printStreamedChunk.
void CppPrinter::printPendingRowBlock(const Stmt &store,
                                      const std::vector<int> &carried,
                                      int row) {
  std::vector<std::string> savedNames = names, savedExprs = exprs;
  names[row] = "kiln_pr";
  for (int t : carried)
    exprs[t] = "kiln_p" + std::to_string(t);
  line("const int64_t kiln_c = kiln_jb;");
  printStreamedChunk(store.body, store.vars[0], kPrefetchBlock);
  names = savedNames;
  exprs = savedExprs;
}

/// Prints one chunk of a streamed loop: the body `body` of a loop over
/// `var` run for the `elements` elements from `kiln_c` (declared by the
/// caller), each streamed output's values (streamChunks) into a local chunk
/// array, then the chunks written with non-temporal stores at their
/// stores' indices.
void CppPrinter::printStreamedChunk(const Body &body, int var,
                                    int64_t elements) {
  std::string n = std::to_string(elements), j = names[var];
  for (const auto &[buffer, name] : streamChunks)
    line("alignas(64) " + storageCType(k.buffers[buffer].type) + " " + name +
         "[" + n + "];");
  line("for (int64_t " + j + " = kiln_c; " + j + " < kiln_c + " + n + "; ++" +
       j + ") {");
  ++indent;
  streamVar = j;
  printBody(body);
  --indent;
  line("}");
  std::vector<std::string> chunkNames = names;
  chunkNames[var] = "kiln_c";
  for (const Stmt &s : body) {
    auto chunk = streamChunks.find(s.buffer);
    if (s.kind != Stmt::Kind::Store || chunk == streamChunks.end())
      continue;
    line("kiln_stream_store(&" + k.buffers[s.buffer].name + "[" +
         s.index.str(chunkNames) + "], " + chunk->second + ", sizeof(" +
         chunk->second + "));");
  }
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
  int64_t chunkElems = 0;
  for (const Stmt &s : loop.body) {
    if (s.kind == Stmt::Kind::Loop || s.kind == Stmt::Kind::CacheStore)
      return false;
    if (s.kind != Stmt::Kind::Store)
      continue;
    int64_t elems = kStreamChunkBytes / scalarTypeBytes(k.buffers[s.buffer].type);
    if (!streamsInChunks(s, inner, elems, kStreamBytes) ||
        k.vars[inner].extent % elems != 0 ||
        (chunkElems && chunkElems != elems))
      return false;
    if (chunks.count(s.buffer))
      return false; // one store per streamed output
    chunkElems = elems;
    chunks.emplace(s.buffer, "kiln_chunk" + std::to_string(s.buffer));
  }
  if (chunks.empty())
    return false;

  printParallelPragma(loop, numCollapsed);
  for (size_t i = 0; i + 1 < loop.vars.size(); ++i)
    openFor(loop.vars[i]);
  std::string n = std::to_string(k.vars[inner].extent),
              c = std::to_string(chunkElems);
  line("// Outputs larger than a last-level cache: computed in chunks of " +
       std::to_string(kStreamChunkBytes) + " bytes, stored non-temporally.");
  line("for (int64_t kiln_c = 0; kiln_c < " + n + "; kiln_c += " + c + ") {");
  ++indent;
  streamChunks = chunks;
  printStreamedChunk(loop.body, inner, chunkElems);
  streamChunks.clear();
  --indent;
  line("}");
  line("kiln_stream_fence();");
  for (size_t i = 0; i + 1 < loop.vars.size(); ++i) {
    --indent;
    line("}");
  }
  return true;
}

} // namespace cpp_printer
} // namespace kiln
