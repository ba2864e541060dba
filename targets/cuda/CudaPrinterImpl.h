//===- CudaPrinterImpl.h - The CUDA printer's internals ---------*- C++ -*-===//
//
// This file declares the internals of the CUDA printer shared by its two
// source files: the mapping constants, the helpers on reductions and index
// expressions, the row plan and the printer class. CudaPrinter.cpp prints
// statements, pointwise loops and kernels; CudaRowMapping.cpp maps row
// reductions to blocks, warps or threads. Not a public header.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDAPRINTERIMPL_H
#define KILN_CODEGEN_CUDAPRINTERIMPL_H

#include "targets/cuda/CudaKernel.h"
#include "codegen/ExprPrinter.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln {
namespace cudaprinter {

using namespace codegen;


/// Rows of at least this many elements get a block each.
constexpr int64_t kBlockRowMin = 1024;
/// Rows of at most this many elements get a thread each.
constexpr int64_t kThreadRowMax = 16;
/// Threads per block of pointwise and thread/warp-per-row mappings.
constexpr unsigned kDefaultBlock = 256;
/// Grids aim at this many blocks (about one per SM of an H100/H200) before
/// blocks grow past one warp.
constexpr int64_t kMinBlocks = 128;
/// The most blocks a grid gets; kernels grid-stride over the rest.
constexpr int64_t kMaxGrid = 65535;
/// The most row-cache elements per thread held in registers.
constexpr int64_t kMaxCachePerThread = 32;
/// Column reductions get a thread per row from this many rows on ...
constexpr int64_t kMinColumnRows = 1024;
/// ... when their row caches hold at most this many elements per thread.
constexpr int64_t kMaxThreadCache = 64;
/// Column reductions of fewer rows than this, one reduce loop of at least
/// kColumnSliceMin elements per slice and no row caches split each row over
/// kColumnSlices threads (RowPlan::Columns): a thread per row would leave
/// most of the GPU idle (a bias gradient's 3072 columns x 16 partial sums).
constexpr int64_t kColumnThreadsFull = 128 * 1024;
constexpr int64_t kColumnSlices = 8;
constexpr int64_t kColumnRowsPerBlock = 32;
constexpr int64_t kColumnSliceMin = 8;
/// The most registers per thread that row caches and re-read loads take.
constexpr int64_t kMaxRowRegisters = 64;
/// Float sums of at most this many terms accumulate in f32 (as the C++
/// printer does).
constexpr int64_t kMaxFloatSumCount = 65536;

/// The C type of the accumulator of `r`.
inline std::string accumulatorType(const Reduction &r) {
  if (r.kind == ReduceKind::Max || r.kind == ReduceKind::Min)
    return computeCType(r.type);
  if (!isFloatType(r.type))
    return "uint64_t";
  bool floatSum = (r.kind == ReduceKind::Sum || r.kind == ReduceKind::Mean) &&
                  computeCType(r.type) == "float" &&
                  r.count <= kMaxFloatSumCount;
  return floatSum ? "float" : "double";
}

inline int64_t accumulatorBytes(const Reduction &r) {
  std::string t = accumulatorType(r);
  return t == "float" || t == "int32_t" ? 4
         : t == "double" || t == "uint64_t" || t == "int64_t" ? 8
                                                               : 1;
}

/// True when every term of `e` other than `var`'s, and its constant, is a
/// multiple of `w` (the vector base stays aligned).
inline bool alignedBesides(const IndexExpr &e, int var, int64_t w) {
  // A run-time stride or offset (a range of sizes) is not known to align.
  if (e.hasRunTimeNumbers() || e.getConstant() % w != 0)
    return false;
  for (const IndexExpr::Term &t : e.getTerms())
    if (!(t.atom.kind == IndexExpr::Atom::Var && t.atom.var == var) &&
        t.coef % w != 0)
      return false;
  return true;
}

/// How the rows of a parallel loop with inner loops map to threads.
struct RowPlan {
  /// Columns: a column reduction (strided rows, contiguous columns) of few
  /// rows: kColumnRowsPerBlock rows per block, kColumnSlices threads per row
  /// (each takes every kColumnSlices-th element), combined in shared memory.
  enum Mode { Thread, Warp, Block, Columns } mode = Thread;
  int64_t rows = 1;    ///< P: iterations of the parallel loop
  int64_t rowSize = 1; ///< R: iterations of each inner loop
  int64_t group = 1;   ///< G: threads per row
  int64_t perThread = 1; ///< K = ceil(R / (V * G)): runs per thread
  int64_t width = 1;   ///< V: consecutive elements per run (vector access)
  /// Row-cache (register) slots per thread.
  int64_t slots() const { return perThread * width; }
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
  /// Each nest's block count as code (run-time sizes in the kernel's size
  /// parameters): the launch's grid in a package compiled for a range of
  /// sizes is their maximum, at most the bound's.
  std::vector<std::string> gridTerms;
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
  /// Inside a vectorized run (V > 1): the run's vector loads (by load text)
  /// and its store staging vectors; element kiln_u of the run is printed.
  int64_t runWidth = 1;
  /// f16/bf16 temps stored to a buffer of their type (singleRoundingStores):
  /// printed as their float value "<name>_x" and its rounding "<name>",
  /// the store narrowing "<name>_x" once.
  std::set<int> storedUnrounded;
  std::map<std::string, std::string> runLoads;
  std::map<const Stmt *, std::string> runStores;

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
  /// The extent of loop variable `var` as code: a number, or a run-time
  /// size (a package compiled for a range of sizes; `extent` is then its
  /// bound).
  std::string extentText(int var) const {
    const LoopVar &v = k.vars[var];
    return v.symbolicExtent.empty() ? std::to_string(v.extent)
                                    : "(" + it + ")" + v.symbolicExtent;
  }
  /// True when a variable of `vars` has a run-time extent.
  bool anyRunTimeExtent(const std::vector<int> &vars) const {
    for (int v : vars)
      if (!k.vars[v].symbolicExtent.empty())
        return true;
    return false;
  }
  /// tripCount as code: a number, or a run-time product.
  std::string tripText(const std::vector<int> &vars) const {
    if (!anyRunTimeExtent(vars))
      return std::to_string(tripCount(vars));
    std::string s;
    for (int v : vars)
      s += (s.empty() ? "" : " * ") + extentText(v);
    return "(" + s + ")";
  }
  /// Records that the launch needs `blocks` blocks (a number at the bound,
  /// `text` at run time): the grid is the largest such need.
  void needBlocks(int64_t blocks, const std::string &text) {
    gridSize = std::max(gridSize, blocks);
    gridTerms.push_back(text);
  }
  /// "(n + d - 1) / d" as code.
  static std::string ceilDivText(const std::string &n, int64_t d) {
    return d == 1 ? n
                  : "(" + n + " + " + std::to_string(d - 1) + ") / " +
                        std::to_string(d);
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
  void collectStoredUnrounded(const Body &body);
  /// Prints `const <type> name = <op of args>;` (and its "_x" float value
  /// first when `s` is in storedUnrounded).
  void printCompute(const Stmt &s, const std::string &name,
                    const std::vector<std::string> &args);
  /// The value a Store of `s.value` writes, as the buffer's storage type.
  std::string storedValue(const Stmt &s, const std::string &name) const;
  void printLoopStmt(const Stmt &s);
  void printPointwise(const Stmt &loop);
  /// A pointwise nest that reads an input transposed, through 32 x 32
  /// shared-memory tiles (CudaTileMapping.cpp); false (nothing printed)
  /// when the nest is not one.
  bool printTiledTranspose(const Stmt &loop);
  int64_t vectorWidth(const Stmt &loop) const;
  void printVectorBody(const Stmt &loop, int64_t w);
  std::string loadText(const Stmt &load) const;
  std::string vecType(ScalarType t, int64_t w) const {
    return "kiln_vec<" + storageCType(t) + ", " + std::to_string(w) + ">";
  }
  /// A distributed row's register slot of the element being printed.
  std::string laneSlot() const {
    return runWidth > 1 ? "kiln_k * " + std::to_string(runWidth) + " + kiln_u"
                        : "kiln_k";
  }
  int64_t rowVectorWidth(const Stmt &loop) const;
  RowPlan planRows(const Stmt &loop) const;
  void fitCaches(RowPlan &p) const;
  void printRows(const Stmt &loop);
  void printRowLoop(const Stmt &loop, bool describe,
                    const std::string &note);
  void printInner(const Stmt &loop);
  void printColumnRows(const Stmt &loop);
  void printColumnSlices(const Stmt &loop);
  void declareAccumulators(const Stmt &loop);
  void accumulate(const Stmt &loop);
  void printReductionResults(const Stmt &loop);
  std::string combine(const Reduction &r, const std::string &acc,
                      const std::string &v) const;
  std::string signature() const;
};

} // namespace cudaprinter
} // namespace kiln

#endif // KILN_CODEGEN_CUDAPRINTERIMPL_H
