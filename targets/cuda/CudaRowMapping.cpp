//===- CudaRowMapping.cpp - Row reductions to blocks, warps, threads ------===//
//
// This file implements the CUDA printer's mapping of a parallel loop with
// reduce/serial inner loops (softmax, norms, reductions): planRows picks a
// block per row (rows of at least kBlockRowMin elements), a warp per row, or
// a thread per row (short rows, column reductions whose rows are strided but
// whose columns are contiguous, structures the group mapping does not
// cover); printRows and printInner print the row loop, the lanes' element
// loops with row caches and re-read loads in registers, and the group
// reductions (warp shuffles, then a static __shared__ array across a block's
// warps) with the C++ printer's accumulator types and semantics. When the
// row's accesses are contiguous and its extent divides by V (rowVectorWidth),
// each lane takes runs of V consecutive elements, one 16-byte access per run
// and buffer (wider elements: several), with the strided element mapping as
// the fallback for misaligned pointers.
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaPrinterImpl.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace kiln {
namespace cudaprinter {

int64_t CudaPrinter::rowVectorWidth(const Stmt &loop) const {
  // KILN_CUDA_STRIDED_ROWS=1 keeps every row on the strided mapping (a
  // debugging switch: compare a package with and without the runs).
  if (const char *env = std::getenv("KILN_CUDA_STRIDED_ROWS"); env && *env &&
      std::string(env) != "0")
    return 1;
  // Every load and store of the inner loops is contiguous (coefficient 1) or
  // constant (0) in the innermost reduced variable; stores are contiguous and
  // no loop reads an output (a run's loads are hoisted above its stores).
  const std::vector<int> *vars = nullptr;
  int64_t narrowest = 0;
  std::vector<const Stmt *> contiguous;
  for (const Stmt &s : loop.body) {
    if (s.kind != Stmt::Kind::Loop)
      continue;
    if (s.vars.empty() || (vars && *vars != s.vars))
      return 1;
    vars = &s.vars;
    int inner = s.vars.back();
    for (const Stmt &st : s.body) {
      if (st.kind == Stmt::Kind::Loop)
        return 1;
      if (st.kind != Stmt::Kind::Load && st.kind != Stmt::Kind::Store)
        continue;
      const Buffer &b = k.buffers[st.buffer];
      if (st.kind == Stmt::Kind::Load && b.isOutput)
        return 1;
      std::optional<int64_t> coef = coefficientOf(st.index, inner);
      if (!coef || (*coef != 0 && *coef != 1) ||
          (st.kind == Stmt::Kind::Store && *coef != 1))
        return 1;
      if (*coef == 1) {
        contiguous.push_back(&st);
        int64_t e = scalarTypeBytes(b.type);
        narrowest = narrowest ? std::min(narrowest, e) : e;
      }
    }
  }
  if (!vars || contiguous.empty())
    return 1;
  // Runs of 16 bytes of the narrowest contiguous element (wider elements
  // take several 16-byte accesses), at most 8 elements.
  int64_t extent = k.vars[vars->back()].extent;
  for (int64_t w = std::min<int64_t>(8, 16 / narrowest); w >= 2; w /= 2) {
    bool ok = extent % w == 0;
    for (const Stmt *st : contiguous)
      ok = ok && alignedBesides(st->index, vars->back(), w);
    if (ok)
      return w;
  }
  return 1;
}

void CudaPrinter::fitCaches(RowPlan &p) const {
  if (p.mode == RowPlan::Thread)
    return;
  int64_t runs = p.rowSize / p.width;
  p.perThread = (runs + p.group - 1) / p.group;
  if (k.caches.empty() || p.slots() <= kMaxCachePerThread)
    return;
  // Too many register slots: strided single elements, else a thread per row.
  if (p.width > 1) {
    p.width = 1;
    fitCaches(p);
    return;
  }
  p = RowPlan{RowPlan::Thread, p.rows, p.rowSize, 1, 1, 1};
}

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
    if (!rowContiguous && columnsContiguous && cached <= kMaxThreadCache) {
      int innerLoops = 0;
      bool oneReduce = true;
      for (const Stmt &s : loop.body)
        if (s.kind == Stmt::Kind::Loop) {
          ++innerLoops;
          oneReduce &= s.loopKind == Stmt::LoopKind::Reduce;
        }
      if (innerLoops == 1 && oneReduce && k.caches.empty() &&
          p.rows < kColumnThreadsFull &&
          p.rowSize >= kColumnSlices * kColumnSliceMin) {
        p.mode = RowPlan::Columns;
        p.group = kColumnSlices;
      }
      return p;
    }
  }
  p.width = rowVectorWidth(loop);
  if (p.rowSize >= kBlockRowMin) {
    p.mode = RowPlan::Block;
    // Four runs per thread (four 16-byte accesses per buffer and thread in
    // flight: 16 f32 or 32 bf16 elements), 8 elements without runs; 128 to
    // 1024 threads. Measured on the H200 (one kernel per row length, rows
    // of 4096 and 8192, copy-bandwidth share): bf16 LayerNorm+GELU 77% /
    // 88% / 94% and bf16 softmax 64% / 92% / 96% with one, two and four runs
    // of 8 per thread; f32 softmax best with four runs of 4, f32
    // LayerNorm+GELU within 1% for two and four.
    int64_t each = p.width > 1 ? 4 * p.width : 8;
    int64_t b = 128;
    while (b < 1024 && b * each < p.rowSize)
      b *= 2;
    p.group = b;
  } else {
    p.mode = RowPlan::Warp;
    p.group = 32;
  }
  fitCaches(p);
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
  // The kernel has one block size: the first row loop's.
  if (plan.mode == RowPlan::Columns &&
      blockSize != kColumnSlices * kColumnRowsPerBlock)
    plan = RowPlan{RowPlan::Thread, plan.rows, plan.rowSize, 1, 1, 1};
  if (plan.mode == RowPlan::Block) {
    // The kernel has one block size: the first row loop's.
    plan.group = blockSize;
    fitCaches(plan);
  }
  if (plan.width == 1) {
    printRowLoop(loop, true, "");
    return;
  }
  // Runs are read and written as kiln_vec of V elements: every pointer they
  // access must be aligned to its vector's size (the wrapper's buffers are,
  // but check); otherwise the strided single-element mapping runs.
  std::string cond;
  std::set<int> seen;
  int inner = -1;
  for (const Stmt &s : loop.body)
    if (s.kind == Stmt::Kind::Loop)
      inner = s.vars.back();
  for (const Stmt &s : loop.body)
    if (s.kind == Stmt::Kind::Loop)
      for (const Stmt &st : s.body) {
        if ((st.kind != Stmt::Kind::Load && st.kind != Stmt::Kind::Store) ||
            *coefficientOf(st.index, inner) != 1 ||
            !seen.insert(st.buffer).second)
          continue;
        const Buffer &b = k.buffers[st.buffer];
        cond += std::string(cond.empty() ? "" : " && ") +
                "(unsigned long long)" + b.name + " % " +
                std::to_string(plan.width * scalarTypeBytes(b.type)) + " == 0";
      }
  RowPlan vectorPlan = plan;
  open("if (" + cond + ") {");
  printRowLoop(loop, true, "; strided single elements when misaligned");
  --indent;
  open("} else {");
  plan = vectorPlan;
  plan.width = 1;
  fitCaches(plan);
  printRowLoop(loop, false, "");
  close();
  plan = vectorPlan;
}

void CudaPrinter::printRowLoop(const Stmt &loop, bool describe,
                               const std::string &note) {
  std::string start, step;
  std::string each =
      std::to_string(plan.slots()) + " per thread" +
      (plan.width > 1 ? ": " + std::to_string(plan.perThread) +
                            (plan.perThread == 1 ? " run of " : " runs of ") +
                            std::to_string(plan.width) +
                            " contiguous, vector access"
                      : "") +
      note;
  std::string mapping;
  // The rows: a run-time count where the kept dims follow size symbols.
  std::string rowsText = tripText(loop.vars);
  switch (plan.mode) {
  case RowPlan::Block:
    blockSize = static_cast<unsigned>(plan.group);
    needBlocks(plan.rows, rowsText);
    start = "(" + it + ")blockIdx.x";
    step = "(" + it + ")gridDim.x";
    mapping = "one block of " + std::to_string(plan.group) +
              " threads per row of " + std::to_string(plan.rowSize) +
              " elements (" + each + "), " + std::to_string(plan.rows) +
              " rows";
    break;
  case RowPlan::Warp: {
    int64_t warps = blockSize / 32;
    needBlocks((plan.rows + warps - 1) / warps, ceilDivText(rowsText, warps));
    start = "(" + it + ")blockIdx.x * " + std::to_string(warps) +
            " + (threadIdx.x >> 5)";
    step = "(" + it + ")gridDim.x * " + std::to_string(warps);
    mapping = "one warp per row of " + std::to_string(plan.rowSize) +
              " elements (" + each + "), " + std::to_string(plan.rows) +
              " rows";
    break;
  }
  case RowPlan::Columns:
    needBlocks((plan.rows + kColumnRowsPerBlock - 1) / kColumnRowsPerBlock,
               ceilDivText(rowsText, kColumnRowsPerBlock));
    mapping = std::to_string(kColumnRowsPerBlock) + " rows per block, " +
              std::to_string(kColumnSlices) + " threads per row of " +
              std::to_string(plan.rowSize) +
              " elements (every " + std::to_string(kColumnSlices) +
              "th each, combined in shared memory), " +
              std::to_string(plan.rows) + " rows";
    break;
  case RowPlan::Thread:
    usesGlobalId = true;
    needBlocks((plan.rows + blockSize - 1) / blockSize,
               ceilDivText(rowsText, blockSize));
    start = "kiln_gtid";
    step = "kiln_nthreads";
    mapping = "one thread per row of " + std::to_string(plan.rowSize) +
              " elements, " + std::to_string(plan.rows) + " rows";
    break;
  }
  if (describe)
    mappings.push_back(mapping);
  if (plan.mode == RowPlan::Columns) {
    printColumnRows(loop);
    return;
  }
  distributed = plan.mode != RowPlan::Thread;
  open("for (" + it + " kiln_row = " + start + "; kiln_row < " + rowsText +
       "; kiln_row += " + step + ") {");
  if (plan.mode == RowPlan::Block)
    line("const int kiln_lane = threadIdx.x;");
  else if (plan.mode == RowPlan::Warp)
    line("const int kiln_lane = threadIdx.x & 31;");
  decompose(loop.vars, "kiln_row", 1);
  for (const RowCache &c : k.caches)
    line(computeCType(c.type) + " " + c.name + "[" +
         std::to_string(distributed ? plan.slots() : c.size) + "];");
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
          std::string load = loadText(st);
          if (seen.insert(load).second)
            ++loops[load];
          types[load] = k.temps[st.result];
        }
    }
    int64_t registers = plan.slots() * static_cast<int64_t>(k.caches.size());
    for (auto &[load, n] : loops) {
      if (n < 2 || registers + plan.slots() > kMaxRowRegisters)
        continue;
      registers += plan.slots();
      std::string name = "kiln_l" + std::to_string(rowLoads.size());
      rowLoads[load] = name;
      line(computeCType(types[load]) + " " + name + "[" +
           std::to_string(plan.slots()) + "];");
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

/// RowPlan::Columns: each block takes kColumnRowsPerBlock consecutive rows
/// (lane l of each warp one row, so the warp's loads are coalesced) and each
/// of its kColumnSlices warps a slice of every row's elements. The block's
/// loop runs the same trip count for all its threads (a last, partial group
/// of rows clamps its row and skips the reduce loop), so they all reach the
/// barriers; the first warp combines the slices and runs what follows the
/// reduce loop.
void CudaPrinter::printColumnRows(const Stmt &loop) {
  std::string rows = tripText(loop.vars);
  std::string per = std::to_string(kColumnRowsPerBlock);
  open("for (" + it + " kiln_base = (" + it + ")blockIdx.x * " + per +
       "; kiln_base < " + rows + "; kiln_base += (" + it + ")gridDim.x * " +
       per + ") {");
  line("const int kiln_slice = threadIdx.x / " + per + ";");
  line("const bool kiln_active = kiln_base + (threadIdx.x % " + per +
       ") < " + rows + ";");
  line("const " + it + " kiln_row = kiln_active ? kiln_base + (threadIdx.x % " +
       per + ") : " + rows + " - 1;");
  decompose(loop.vars, "kiln_row", 1);
  bool afterLoop = false;
  for (const Stmt &s : loop.body) {
    if (s.kind == Stmt::Kind::Loop) {
      printColumnSlices(s);
      open("if (kiln_slice == 0 && kiln_active) {");
      afterLoop = true;
      continue;
    }
    printStmt(s, false);
  }
  if (afterLoop)
    close();
  // The shared partials are read before the next rows overwrite them.
  line("__syncthreads();");
  close();
}

/// The reduce loop of a RowPlan::Columns row: this thread's slice, then the
/// slices' partial results combined by the first warp (in slice order).
void CudaPrinter::printColumnSlices(const Stmt &loop) {
  ++loopDepth;
  declareAccumulators(loop);
  std::string extent = std::to_string(plan.rowSize);
  // Unrolled, so a thread has several rows' loads in flight (its elements
  // are far apart: each its own memory transaction).
  line("#pragma unroll 4");
  open("for (" + it + " kiln_r = kiln_active ? kiln_slice : " + extent +
       "; kiln_r < " + extent + "; kiln_r += " +
       std::to_string(kColumnSlices) + ") {");
  decompose(loop.vars, "kiln_r", 1);
  for (const Stmt &s : loop.body)
    printStmt(s, false);
  accumulate(loop);
  close();
  --loopDepth;
  int64_t slots = kColumnSlices * kColumnRowsPerBlock;
  for (const Reduction &r : loop.reductions) {
    std::string id = std::to_string(r.result);
    sharedDecls.push_back("__shared__ " + accumulatorType(r) + " kiln_col" +
                          id + "[" + std::to_string(slots) + "];");
    sharedBytes += slots * accumulatorBytes(r);
    line("kiln_col" + id + "[threadIdx.x] = acc" + id + ";");
  }
  line("__syncthreads();");
  open("if (kiln_slice == 0) {");
  open("for (int kiln_s = 1; kiln_s < " + std::to_string(kColumnSlices) +
       "; ++kiln_s) {");
  for (const Reduction &r : loop.reductions) {
    std::string id = std::to_string(r.result);
    line(combine(r, "acc" + id,
                 "kiln_col" + id + "[kiln_s * " +
                     std::to_string(kColumnRowsPerBlock) +
                     " + threadIdx.x]"));
  }
  close();
  close();
  printReductionResults(loop);
}

/// A loop inside a mapped loop. In a distributed row, lane l handles the
/// row's elements l + kiln_k * G of a reduce or serial loop, then reduces
/// across the group; otherwise the thread runs the loop as nested `for`s (the
/// C++ printer's form).
/// Adds each reduction's input of the element being printed into its
/// accumulator (integer sums and products in 64 bits).
void CudaPrinter::accumulate(const Stmt &loop) {
  for (const Reduction &r : loop.reductions) {
    std::string in = exprs[r.input];
    if (!isFloatType(r.type) &&
        (r.kind != ReduceKind::Max && r.kind != ReduceKind::Min))
      in = "(int64_t)" + in;
    line(combine(r, "acc" + std::to_string(r.result), in));
  }
}

void CudaPrinter::declareAccumulators(const Stmt &loop) {
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
                 : std::string(isMax ? "kiln_lowest" : "kiln_highest") + "<" +
                       at + ">()";
      break;
    }
    }
    line(at + " acc" + std::to_string(r.result) + " = " + init + ";");
  }
}

void CudaPrinter::printInner(const Stmt &loop) {
  bool reduce = loop.loopKind == Stmt::LoopKind::Reduce;
  ++loopDepth;
  if (reduce)
    declareAccumulators(loop);
  bool guard = false;
  int64_t width = distributed ? plan.width : 1;
  if (distributed) {
    // kiln_r is the lane's element, or with V > 1 its run of V elements.
    int64_t runs = plan.rowSize / width;
    if (!k.caches.empty() || !rowLoads.empty() || plan.perThread <= 8)
      line("#pragma unroll");
    open("for (int kiln_k = 0; kiln_k < " + std::to_string(plan.perThread) +
         "; ++kiln_k) {");
    line("const " + it + " kiln_r = kiln_lane + kiln_k * " +
         std::to_string(plan.group) + ";");
    guard = runs % plan.group != 0;
    if (guard)
      open("if (kiln_r < " + std::to_string(runs) + ") {");
    decompose(loop.vars, "kiln_r", width);
  } else {
    for (int v : loop.vars)
      open("for (" + it + " " + names[v] + " = 0; " + names[v] + " < " +
           extentText(v) + "; ++" + names[v] + ") {");
  }
  if (width > 1) {
    // The run's contiguous loads, each one vector access (unless an earlier
    // loop kept the values), then staging vectors for its stores; the body
    // runs for each element kiln_u of the run.
    int inner = loop.vars.back();
    runLoads.clear();
    runStores.clear();
    for (const Stmt &s : loop.body) {
      if (s.kind == Stmt::Kind::Load &&
          *coefficientOf(s.index, inner) == 1) {
        std::string load = loadText(s);
        if ((rowLoads.count(load) && rowLoadsFilled.count(load)) ||
            runLoads.count(load))
          continue;
        const Buffer &b = k.buffers[s.buffer];
        std::string name = "kiln_v" + std::to_string(s.result);
        std::string vt = vecType(b.type, width);
        line("const " + vt + " " + name + " = *reinterpret_cast<const " + vt +
             " *>(" + b.name + " + (" + s.index.str(names) + "));");
        runLoads[load] = name;
      } else if (s.kind == Stmt::Kind::Store) {
        std::string name = "kiln_s" + std::to_string(runStores.size());
        line(vecType(k.buffers[s.buffer].type, width) + " " + name + ";");
        runStores[&s] = name;
      }
    }
    runWidth = width;
    line("#pragma unroll");
    open("for (int kiln_u = 0; kiln_u < " + std::to_string(width) +
         "; ++kiln_u) {");
  }
  for (const Stmt &s : loop.body)
    printStmt(s, false);
  accumulate(loop);
  if (width > 1) {
    close();
    runWidth = 1;
    for (const Stmt &s : loop.body)
      if (s.kind == Stmt::Kind::Store) {
        const Buffer &b = k.buffers[s.buffer];
        line("*reinterpret_cast<" + vecType(b.type, width) + " *>(" + b.name +
             " + (" + s.index.str(names) + ")) = " + runStores[&s] + ";");
      }
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
      // A row loop printed twice (vector and strided) shares its arrays.
      std::string decl = "__shared__ " + accumulatorType(r) + " kiln_red" +
                         std::to_string(r.result) + "[32];";
      if (std::find(sharedDecls.begin(), sharedDecls.end(), decl) !=
          sharedDecls.end())
        continue;
      sharedDecls.push_back(decl);
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
  printReductionResults(loop);
}

void CudaPrinter::printReductionResults(const Stmt &loop) {
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
    {
      std::string count = r.symbolicCount.empty() ? std::to_string(r.count)
                                                   : r.symbolicCount;
      v = fl ? "(" + ct + ")(" + acc + " / (" + at + ")" + count + ")"
             : "(" + ct + ")(" +
                   (r.count == 0 ? std::string("0")
                                 : "(int64_t)" + acc + " / " + count) +
                   ")";
    }
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

} // namespace cudaprinter
} // namespace kiln
