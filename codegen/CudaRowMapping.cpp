//===- CudaRowMapping.cpp - Row reductions to blocks, warps, threads ------===//
//
// This file implements the CUDA printer's mapping of a parallel loop with
// reduce/serial inner loops (softmax, norms, reductions): planRows picks a
// block per row (rows of at least kBlockRowMin elements), a warp per row, or
// a thread per row (short rows, column reductions whose rows are strided but
// whose columns are contiguous, structures the group mapping does not
// cover); printRows and printInner print the row loop, the lanes' strided
// element loops with row caches and re-read loads in registers, and the
// group reductions (warp shuffles, then a static __shared__ array across a
// block's warps) with the C++ printer's accumulator types and semantics.
//
//===----------------------------------------------------------------------===//

#include "codegen/CudaPrinterImpl.h"

#include <cmath>

namespace kiln {
namespace cudaprinter {

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

} // namespace cudaprinter
} // namespace kiln
