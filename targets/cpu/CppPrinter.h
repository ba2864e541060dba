//===- CppPrinter.h - The kernel IR's C++ printer ---------------*- C++ -*-===//
//
// This file declares the printer of the kernel IR as C++, shared by its two
// implementation files: CppPrinter.cpp prints statements, loops and
// reductions; CppRowSchedules.cpp the schedules that change how a loop nest
// moves memory (the next row prefetched, rows pipelined with non-temporal
// stores, pointwise outputs streamed). Internal to targets/cpu: the public
// entry points are in CppKernel.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGETS_CPU_CPPPRINTER_H
#define KILN_TARGETS_CPU_CPPPRINTER_H

#include "codegen/KernelIR.h"
#include "targets/cpu/CppKernel.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace cpp_printer {

/// Elements of a reduce loop between two rounds of prefetches of the next
/// row (printPrefetchedRows): 1 KB of f32, 16 cache lines.
constexpr int64_t kPrefetchBlock = 256;

/// A load of the next row to prefetch: the element at the block's first
/// column (its index printed with the row variable as "kiln_nx" and the
/// column as "kiln_k"), the elements per 64-byte cache line and
/// `__builtin_prefetch`'s locality (3: into L1, 2: into L2).
struct RowPrefetch {
  std::string address;
  int64_t lineElements = 16;
  int locality = 3;
};

/// A row loop whose body starts with a reduce loop that only reads, then
/// a second reduce loop over the same variable (matchPrefetchedRows): the
/// two loops' positions in the body and the first loop's loads of the next
/// row.
struct PrefetchedRows {
  size_t first = 0, second = 0;
  std::vector<RowPrefetch> prefetches;
};

/// The extent of loop variable `var` of `k` as C++: a number, or a run-time
/// size.
std::string extentOf(const codegen::Kernel &k, int var);

/// A prefetched row loop whose last loop stores large outputs
/// (matchPipelinedRows): the store loop's position in the body, the chunk
/// array of each output it streams (by buffer) and the row-level temps it
/// reads, carried to the pending row.
struct PipelinedRows {
  PrefetchedRows rows;
  size_t store = 0;
  std::map<int, std::string> chunks;
  std::vector<int> carried;
};

/// Prints one kernel of the kernel IR as a C++ function.
class CppPrinter {
public:
  explicit CppPrinter(const codegen::Kernel &k);

  CppKernel print();

private:
  const codegen::Kernel &k;
  std::vector<std::string> names; ///< loop variable id -> C name
  std::vector<std::string> exprs; ///< temp id -> C expression
  /// Streamed outputs (printStreamedLoop, printPipelinedRows): buffer -> its
  /// chunk array, and the chunked loop's variable.
  std::map<int, std::string> streamChunks;
  std::string streamVar;
  std::string out;
  int indent = 1;

  void line(const std::string &s) {
    out += std::string(indent * 2, ' ') + s + "\n";
  }
  int64_t work(const codegen::Body &body) const;
  void printBody(const codegen::Body &body);
  void printLoop(const codegen::Stmt &loop);
  void openFor(int var);
  /// " if(<run-time work> > threshold)" for the OpenMP pragma of a
  /// parallel loop with a run-time extent; "" otherwise.
  std::string parallelIf(const codegen::Stmt &loop) const;
  void printParallelPragma(const codegen::Stmt &loop, size_t numCollapsed);
  /// Prints a reduce loop. With `prefetches` (a loop over one variable, the
  /// second of a row: printPrefetchedRows), the loop runs in blocks of
  /// kPrefetchBlock columns [kiln_jb, kiln_je), each after `beforeBlock`
  /// and the prefetches of the same columns of the next row.
  void printReduceLoop(const codegen::Stmt &loop,
                       const std::vector<RowPrefetch> &prefetches = {},
                       const std::function<void()> &beforeBlock = nullptr);
  std::string
  declareAccumulators(const std::vector<codegen::Reduction> &reductions,
                      bool &simd);
  void combineAccumulators(const std::vector<codegen::Reduction> &reductions);
  std::string reducedValue(const codegen::Reduction &r);
  void declareRowCaches();
  std::string signature() const;

  // CppRowSchedules.cpp
  void printPrefetches(const std::vector<RowPrefetch> &prefetches,
                       const std::string &begin, const std::string &end);
  std::optional<PrefetchedRows>
  matchPrefetchedRows(const codegen::Stmt &loop) const;
  bool printPrefetchedRows(const codegen::Stmt &loop);
  std::optional<PipelinedRows>
  matchPipelinedRows(const codegen::Stmt &loop) const;
  bool printPipelinedRows(const codegen::Stmt &loop);
  void printPendingRowBlock(const codegen::Stmt &store,
                            const std::vector<int> &carried, int row);
  bool printStreamedLoop(const codegen::Stmt &loop, size_t numCollapsed);
  bool streamsInChunks(const codegen::Stmt &s, int var, int64_t chunkElems,
                       int64_t minBytes) const;
  void printStreamedChunk(const codegen::Body &body, int var,
                          int64_t elements);
};

} // namespace cpp_printer
} // namespace kiln

#endif // KILN_TARGETS_CPU_CPPPRINTER_H
