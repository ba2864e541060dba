//===- KernelIR.h - The kernel IR of one fusion region ----------*- C++ -*-===//
//
// This file declares Kiln's kernel IR: the small, printable description of
// one kernel that a `kiln.fusion` region lowers to and that the C++ (and
// later CUDA) printers turn into source. A kernel has buffers (the fusion's
// inputs, then its results; contiguous, row-major, static shapes), loop
// variables, and a body of statements:
//
//   * `tN = load inK[index]`    - a read at an index expression;
//   * `tN = op(tA, tB)`         - one scalar op: the kiln op it came from,
//                                 by op type (kiln::AddOp, kiln::GeluOp,
//                                 kiln::CastOp, ...), printed as "add";
//   * `tN = const V`            - an immediate (printed inline by printers);
//   * `store outK[index] = tN`  - a write;
//   * loops over loop variables: `parallel` (the kept/outer dims), `reduce`
//     (carrying reductions whose results are temps after the loop) and
//     `serial` (element loops, e.g. the epilogue of a row reduction).
//
// Index expressions are affine sums of loop variables, plus floor-division
// and modulo atoms for reshapes of non-contiguous views; they simplify with
// the loop extents, so most views print as plain affine indices.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_KERNELIR_H
#define KILN_CODEGEN_KERNELIR_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace kiln {
namespace codegen {

//===----------------------------------------------------------------------===//
// Scalar types
//===----------------------------------------------------------------------===//

/// The element types of kernel values (the runtime's dtypes).
enum class ScalarType {
  F32,
  F16,
  BF16,
  F64,
  I64,
  I32,
  I16,
  I8,
  U8,
  U16,
  U32,
  U64,
  Bool,
  F8E4M3FN,
  F8E4M3FNUZ,
  F8E5M2,
  F8E5M2FNUZ,
  I4,
  U4,
  I2,
  U2
};

/// The short name ("f32", "i64", "bool").
llvm::StringRef scalarTypeName(ScalarType t);
/// The bytes one element takes in a buffer (sub-byte integers and bool: 1).
int64_t scalarTypeBytes(ScalarType t);
/// True for f32, f16, bf16, f64 and the float8 formats.
bool isFloatType(ScalarType t);
/// True for f16, bf16 and the float8 formats (stored as bits, computed in
/// float).
bool isHalfType(ScalarType t);
/// True for the float8 formats.
bool isFloat8Type(ScalarType t);
/// True for i4, u4, i2, u2 (a byte per element, computed in 8 bits).
bool isSubByteIntType(ScalarType t);
/// True for i64, i32, i8 and u8.
bool isIntType(ScalarType t);
/// True for i64, i32, i16, i8, i4, i2.
bool isSignedIntType(ScalarType t);
/// True for u8, u16, u32, u64, u4, u2.
bool isUnsignedIntType(ScalarType t);
/// The scalar type of an MLIR element type; nullopt when unsupported.
std::optional<ScalarType> scalarTypeOf(mlir::Type elementType);

//===----------------------------------------------------------------------===//
// Index expressions
//===----------------------------------------------------------------------===//

/// An integer index expression: `constant + sum(coef * atom)`, where an atom
/// is a loop variable, `inner / divisor` or `inner % divisor` (inner
/// non-negative, divisor > 0). Expressions are values; build them with the
/// free functions below, which simplify using the loop variables' extents.
class IndexExpr {
public:
  struct Atom {
    enum Kind { Var, Div, Mod } kind = Var;
    int var = -1;                           ///< Var: the loop variable id
    std::shared_ptr<const IndexExpr> inner; ///< Div/Mod: the dividend
    int64_t divisor = 1;                    ///< Div/Mod
    /// A run-time divisor's C++ expression ("" when `divisor`; see
    /// visitNumbers).
    std::string symbolicDivisor;
  };
  struct Term {
    Atom atom;
    int64_t coef = 1;
    /// A run-time coefficient's C++ expression ("" when `coef`).
    std::string symbolicCoef;
  };

  IndexExpr() = default;
  /// The constant `c`.
  static IndexExpr constant(int64_t c);
  /// The loop variable `var`.
  static IndexExpr var(int varId);

  int64_t getConstant() const { return constant_; }
  llvm::ArrayRef<Term> getTerms() const { return terms_; }
  bool isConstant() const { return terms_.empty(); }
  /// True when a number of the expression is a run-time value (set through
  /// visitNumbers), at any depth.
  bool hasRunTimeNumbers() const;

  /// Prints with `varNames[id]` for variables, e.g. `i0*16 + j0`; a
  /// run-time number as its expression (`i0*(16 * kiln_s_seq) + j0`).
  std::string str(llvm::ArrayRef<std::string> varNames) const;

  /// Visits the numbers of the expression in a fixed order — the constant,
  /// then for each term its coefficient and, for a div/mod atom, its
  /// divisor and the dividend's numbers — with the C++ expression slot of
  /// each ("" for a plain number), which `f` may set: a package compiled
  /// for ranges of sizes (codegen/SymbolicShapes.h) makes strides of inner
  /// dims run-time values this way. Shared dividends are copied first.
  void visitNumbers(const std::function<void(int64_t value, std::string &text)> &f);
  /// The same order, the numbers only.
  void collectNumbers(std::vector<int64_t> &out) const;
  /// True when `a` and `b` have the same terms, atoms and variables,
  /// whatever their numbers.
  static bool sameStructure(const IndexExpr &a, const IndexExpr &b);

private:
  friend IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator*(const IndexExpr &a, int64_t c);
  friend class IndexBuilder;
  int64_t constant_ = 0;
  std::string symbolicConstant_;
  std::vector<Term> terms_;
};

IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
IndexExpr operator*(const IndexExpr &a, int64_t c);

/// The coefficient of loop variable `var` in `e` (0 when absent), or nullopt
/// when `var` occurs inside a floor-division or modulo atom.
std::optional<int64_t> coefficientOf(const IndexExpr &e, int var);

/// Builds the non-affine parts of index expressions, simplifying with the
/// extents of the loop variables (variable v ranges over [0, extents[v])).
class IndexBuilder {
public:
  explicit IndexBuilder(const std::vector<int64_t> &extents)
      : extents_(extents) {}
  /// floor(e / d), d > 0, e >= 0.
  IndexExpr floorDiv(const IndexExpr &e, int64_t d) const;
  /// e mod d, d > 0, e >= 0.
  IndexExpr mod(const IndexExpr &e, int64_t d) const;
  /// The inclusive range [lo, hi] that `e` takes.
  std::pair<int64_t, int64_t> range(const IndexExpr &e) const;
  /// Row-major linear index of `idx` in `shape`.
  IndexExpr linearize(llvm::ArrayRef<IndexExpr> idx,
                      llvm::ArrayRef<int64_t> shape) const;
  /// The multi-index of the linear index `lin` in `shape`.
  std::vector<IndexExpr> delinearize(const IndexExpr &lin,
                                     llvm::ArrayRef<int64_t> shape) const;

private:
  /// e = c*big + small, with small in [0, c) (factorDivisor).
  struct Factored {
    int64_t c;
    IndexExpr big, small;
  };
  std::optional<Factored> factorDivisor(const IndexExpr &e, int64_t d) const;

  const std::vector<int64_t> &extents_;
};

//===----------------------------------------------------------------------===//
// Statements and kernels
//===----------------------------------------------------------------------===//

/// True when `op` is the registered op `OpTy` or one of `OpTys` (kiln::AddOp,
/// ...): scalar ops are compared by op type, so a misspelt op is a compile
/// error.
template <typename OpTy, typename... OpTys> bool isOp(mlir::OperationName op) {
  mlir::TypeID id = op.getTypeID();
  return id == mlir::TypeID::get<OpTy>() ||
         ((id == mlir::TypeID::get<OpTys>()) || ...);
}

/// The op `OpTy` (e.g. kiln::MulOp) as a scalar op; its dialect must be
/// loaded in `ctx`.
template <typename OpTy>
mlir::OperationName scalarOpOf(mlir::MLIRContext *ctx) {
  return mlir::OperationName(OpTy::getOperationName(), ctx);
}

/// Attributes of a scalar op, copied from the kiln op (see
/// docs/op-semantics.md): numbers (alpha, fmod, ...) and strings
/// (approximate, direction).
struct ScalarAttrs {
  std::map<std::string, double> numbers;
  std::map<std::string, std::string> strings;
  double getNumber(const std::string &name, double dflt) const;
  std::string getString(const std::string &name, const std::string &dflt) const;
};

/// The reductions a reduce loop computes.
enum class ReduceKind { Sum, Mean, Prod, Max, Min };
llvm::StringRef reduceKindName(ReduceKind k);

/// One reduction of a reduce loop: `result = kind(input over the loop)`;
/// `input` is a temp of the loop body, `result` a temp after the loop, of
/// `type` (the reduced op's dtype), `count` the number of elements reduced.
struct Reduction {
  ReduceKind kind = ReduceKind::Sum;
  ScalarType type = ScalarType::F32;
  int input = -1;
  int result = -1;
  int64_t count = 1;
  /// A run-time count's C++ expression ("" when `count`; `count` is then
  /// the bound).
  std::string symbolicCount;
};

struct Stmt;
using Body = std::vector<Stmt>;

/// One statement of a kernel body.
struct Stmt {
  /// CacheStore/CacheLoad write/read a row cache (Kernel::caches).
  enum class Kind { Load, Const, Compute, Store, Loop, CacheStore, CacheLoad };
  enum class LoopKind { Parallel, Reduce, Serial };

  Kind kind = Kind::Compute;
  /// Load/Const/Compute: the temp defined (its type is Kernel::temps[result]).
  int result = -1;
  /// Load/Store: the buffer and the index; CacheStore/CacheLoad: the cache.
  int buffer = -1;
  IndexExpr index;
  /// Store: the temp written.
  int value = -1;
  /// Const: the immediate (integers and bools in `intValue`).
  double floatValue = 0;
  int64_t intValue = 0;
  /// Compute: the kiln op (an elementwise op, by op type: compare with
  /// isOp<kiln::AddOp>), the argument temps, attrs.
  std::optional<mlir::OperationName> op;
  std::vector<int> args;
  ScalarAttrs attrs;
  /// Loop: kind, variables (outermost first), body and, for Reduce loops,
  /// the reductions.
  LoopKind loopKind = LoopKind::Serial;
  std::vector<int> vars;
  Body body;
  std::vector<Reduction> reductions;
};

/// A kernel argument: a contiguous row-major buffer.
struct Buffer {
  std::string name; ///< in0, in1, ..., out0, ...
  ScalarType type = ScalarType::F32;
  std::vector<int64_t> shape;
  bool isOutput = false;
  /// The buffer this one shares its memory with (an output stored over a
  /// dying input, kiln.in_place), or -1. Such pointers alias: no row cache
  /// in that output, no `__restrict__` in CUDA kernels.
  int sharesWith = -1;
  int64_t numElements() const;
};

/// A loop variable.
struct LoopVar {
  std::string name; ///< i0.. for parallel dims, j0.. for reduced dims
  /// The extent; for a run-time extent, its bound (the largest it takes).
  int64_t extent = 1;
  /// A run-time extent: its C++ expression in the kernel's size parameters
  /// (a package compiled for a range of sizes, codegen/SymbolicShapes.h);
  /// "" when the extent is `extent`.
  std::string symbolicExtent;
};

/// A row cache of a reduction kernel: a local array (one per iteration of
/// the parallel loop) holding a value that the last reduce loop computed, so
/// that the epilogue reads it instead of computing it again.
struct RowCache {
  std::string name; ///< c0, c1, ...
  ScalarType type = ScalarType::F32;
  int64_t size = 0;
  /// When >= 0: the cache may live in this output buffer, at element
  /// `outputBase` (an index in the parallel loop variables) onwards, because
  /// the epilogue stores each output element right after reading the cached
  /// element at the same place (placeRowCachesInOutputs). The cached values
  /// then reach the output's cache lines while the reduce loop computes,
  /// instead of in a store-only epilogue. A printer may ignore it and keep a
  /// local array: the results are the same.
  int outputBuffer = -1;
  IndexExpr outputBase;
};

/// One kernel: the lowering of one fusion region.
struct Kernel {
  std::string name;
  std::string kind;            ///< "pointwise" or "reduction"
  std::vector<Buffer> buffers; ///< inputs in operand order, then results
  std::vector<LoopVar> vars;
  std::vector<ScalarType> temps; ///< the type of each temp, by id
  std::vector<RowCache> caches;  ///< declared in the parallel loop's body
  Body body;
  /// The iteration domain for dumps: kept (parallel) dims, then reduced dims.
  std::vector<int64_t> parallelDomain, reducedDomain;
  /// The ONNX node names of the region's ops, in op order, unique.
  std::vector<std::string> sourceNodes;
  /// The size symbols the kernel takes after its buffers (`int64_t`
  /// parameters, by C name: sizeSymbolCName), for run-time extents.
  std::vector<std::string> sizeParams;

  /// The text form, e.g. `kernel k3_softmax domain [8] x [16] (...) {...}`.
  std::string str() const;
  /// The loop variables' names by id (for IndexExpr::str).
  std::vector<std::string> varNames() const;
};

/// Visits the numbers of every index expression of `kernel` in a fixed
/// order (the statements depth first, each IndexExpr::visitNumbers, then
/// the row caches' output bases): the order of kiln.sym_index
/// (codegen/SymbolicShapes.h).
void visitIndexNumbers(
    Kernel &kernel,
    const std::function<void(int64_t value, std::string &text)> &f);

/// Visits every reduction of `kernel`, statements depth first (the order
/// of kiln.sym_counts).
void visitReductions(Kernel &kernel,
                     const std::function<void(Reduction &)> &f);

/// Lowers the body of a fusion region to a kernel. `body` is the region's
/// block (arguments mirror the fusion operands, terminator `kiln.yield`),
/// `name`/`kind` the fusion's attributes, `inPlace` its kiln.in_place
/// (result, operand) pair if any; unsupported ops or shapes get a
/// diagnostic at the op's location (or `loc`) and failure.
mlir::FailureOr<Kernel>
lowerToKernelIR(mlir::Block &body, llvm::StringRef name, llvm::StringRef kind,
                mlir::Location loc,
                std::optional<std::pair<unsigned, unsigned>> inPlace =
                    std::nullopt);

/// "// in place: out0 is stored over in1\n" for a kernel with buffers that
/// share memory (Buffer::sharesWith), else "": the printers' header line.
std::string inPlaceComment(const Kernel &kernel);

/// Rewrites `x / s` inside a loop, where `s` (f32 or f64) is defined
/// outside it, into `x * r` with `r = 1 / s` computed once before the loop
/// (KernelIRSimplify.cpp). lowerToKernelIR applies it.
void hoistInvariantDivisors(Kernel &kernel);

/// Rewrites `x / c`, `c` an immediate, into `x * (1 / c)`: for f16 or bf16
/// `x` when an exhaustive check over its 65536 values shows the same rounded
/// result; for f32 or f64 `x` with 1/c rounded to the type, when the
/// quotient reaches no rounding-sensitive op (KernelIRSimplify.cpp).
/// lowerToKernelIR applies it.
void multiplyByReciprocals(Kernel &kernel);

/// Rewrites f32/f64 `pow(x, 2)` and `pow(x, 3)`, the exponent an immediate,
/// into products (KernelIRSimplify.cpp). lowerToKernelIR applies it.
void expandSmallPowers(Kernel &kernel);

/// The number attribute (1) of an `exp` whose argument is at most 0 or NaN:
/// `x - m`, `m` the maximum of the values of `x` (softmax).
constexpr const char *kNonPositiveArgAttr = "nonpositive_arg";

/// Marks each `exp(x - m)` of a kernel where `m` is a max reduction of the
/// same value as `x` (the same ops over the same loads, in loops over the
/// same variables: softmax, a scaled and masked softmax) with
/// kNonPositiveArgAttr, so that the printers may leave out the overflow
/// check (KernelIRSimplify.cpp). lowerToKernelIR applies it.
void markNonPositiveExps(Kernel &kernel);

/// The number attribute (1) of an f32 `erf` whose every use adds 1 to it
/// (GELU's 1 + erf(x / sqrt 2)): an absolute error bound suffices there.
constexpr const char *kPlusOneUseAttr = "plus_one_use";

/// Marks each f32 `erf` of a kernel whose result is read only by additions
/// of the immediate 1 with kPlusOneUseAttr, so that the printers may compute
/// it to an absolute error bound (kiln_erff_absolute) instead of a relative
/// one, which small arguments need (KernelIRSimplify.cpp). lowerToKernelIR
/// applies it.
void markPlusOneErfs(Kernel &kernel);

/// Marks the row caches that may live in an output row (see
/// RowCache::outputBuffer; KernelIRSimplify.cpp). lowerToKernelIR applies it.
void placeRowCachesInOutputs(Kernel &kernel);

/// Lowers a fusion op given generically: one region with one block, string
/// attributes `name` and `kind` (and kiln.in_place, if any).
mlir::FailureOr<Kernel> lowerFusionToKernelIR(mlir::Operation *fusionOp);

} // namespace codegen
} // namespace kiln

#endif // KILN_CODEGEN_KERNELIR_H
