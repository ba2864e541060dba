//===- KernelLowering.h - Lowering one fusion region (private) -*- C++ -*-===//
//
// This file declares the state of the lowering of one kiln.fusion region to
// kernel IR, shared by its two halves: LowerToKernelIR.cpp lowers values at
// an index (loads, views, broadcasting, elementwise ops, row caches), and
// LowerLoopNests.cpp builds the loop nests around them (the pointwise nests,
// the reduction domain and its reduce, epilogue and store loops) and holds
// the entry points of KernelIR.h. Not installed; codegen/ only.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_KERNELLOWERING_H
#define KILN_CODEGEN_KERNELLOWERING_H

#include "codegen/ExprPrinter.h"
#include "codegen/KernelIR.h"

#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <set>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {
namespace codegen {
namespace lowering {

using mlir::failure;
using mlir::FailureOr;
using mlir::Operation;
using mlir::Value;

inline bool isReduceOp(Operation *op) {
  return op->hasTrait<OpTrait::Reduction>();
}

inline std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The integer values of a `kiln.constant` parameter operand.
inline std::optional<std::vector<int64_t>> constantInts(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !mlir::isa<ConstantOp>(def))
    return std::nullopt;
  auto attr = def->getAttrOfType<mlir::DenseIntElementsAttr>("value");
  if (!attr)
    return std::nullopt;
  std::vector<int64_t> values;
  for (const llvm::APInt &i : attr.getValues<llvm::APInt>())
    values.push_back(i.getSExtValue());
  return values;
}

/// The index of a value of shape `in` broadcast (NumPy, right-aligned) to a
/// value of shape `out` indexed by `idx`.
inline std::vector<IndexExpr> broadcastIndex(llvm::ArrayRef<IndexExpr> idx,
                                      llvm::ArrayRef<int64_t> out,
                                      llvm::ArrayRef<int64_t> in) {
  std::vector<IndexExpr> r(in.size());
  size_t lead = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k)
    r[k] = in[k] == 1 ? IndexExpr::constant(0) : idx[k + lead];
  return r;
}

class Lowering {
public:
  Lowering(mlir::Block &body, llvm::StringRef name, llvm::StringRef kind,
           mlir::Location loc,
           std::optional<std::pair<unsigned, unsigned>> inPlace)
      : block(body), loc(loc), inPlace(inPlace), builder(extents) {
    kernel.name = name.str();
    kernel.kind = kind.str();
  }

  FailureOr<Kernel> run();

private:
  struct Scope {
    Body body;
    std::map<std::string, int> memo;
  };

  mlir::Block &block;
  mlir::Location loc;
  /// kiln.in_place: (result, operand) sharing one buffer.
  std::optional<std::pair<unsigned, unsigned>> inPlace;
  Kernel kernel;
  std::vector<int64_t> extents; ///< by loop variable id
  IndexBuilder builder;
  std::vector<int> varDepth, tempDepth;
  std::vector<Scope> scopes;
  int numInputs = 0;

  // The reduction domain (reduction kernels only).
  std::vector<int64_t> fullShape;
  std::vector<bool> reducedMask;
  std::vector<IndexExpr> fullIndex;
  llvm::DenseMap<Operation *, int> reductionResult;
  llvm::DenseMap<Operation *, int> levels;
  /// dependencyLevel of each non-reduce op's result, once computed (an op
  /// read by several others is walked once, not once per path to it).
  llvm::DenseMap<Operation *, int> opLevels;
  // Row caching: the values the last reduce loop computed (by memo key),
  // where that loop sits in the parallel body, and the caches made so far.
  std::map<std::string, int> lastReduceMemo;
  size_t lastReduceLoop = 0;
  bool inEpilogue = false;
  int64_t reducedCount = 1;
  std::vector<IndexExpr> reducedIdx;
  std::vector<int64_t> reducedShape;
  std::map<int, int> cacheOf; ///< temp -> cache id

  FailureOr<std::vector<int64_t>> staticShape(Value v, Operation *user);
  FailureOr<ScalarType> scalarType(Value v, Operation *user);
  int newVar(const std::string &name, int64_t extent, int depth);
  int newTemp(ScalarType type, int depth);
  int depthOf(const IndexExpr &e) const;
  int emit(Stmt stmt, ScalarType type, int depth, const std::string &key);
  std::optional<int> lookup(const std::string &key) const;
  std::string keyOf(Value v, llvm::ArrayRef<IndexExpr> idx) const;
  FailureOr<int> lower(Value v, llvm::ArrayRef<IndexExpr> idx);
  std::optional<int> fromRowCache(const std::string &key);
  FailureOr<int> lowerOp(Operation *op, Value v, llvm::ArrayRef<IndexExpr> idx);
  FailureOr<std::vector<IndexExpr>>
  viewSourceIndex(Operation *op, llvm::ArrayRef<IndexExpr> idx);
  std::optional<std::vector<IndexExpr>>
  reducedIndex(llvm::ArrayRef<int64_t> shape) const;
  int levelOf(Operation *reduceOp);
  int dependencyLevel(Value v);
  mlir::LogicalResult setUpReductionDomain(llvm::ArrayRef<Operation *> reduces);
  mlir::LogicalResult lowerReduction(llvm::ArrayRef<Operation *> reduces);
  mlir::LogicalResult lowerPointwise();
  mlir::LogicalResult store(unsigned result, llvm::ArrayRef<IndexExpr> idx);
  Stmt closeLoop(Stmt::LoopKind kind, std::vector<int> vars);
  void collectSourceNodes();
};


} // namespace lowering
} // namespace codegen
} // namespace kiln

#endif // KILN_CODEGEN_KERNELLOWERING_H
