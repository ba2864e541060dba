//===- LowerToKernelIR.cpp - kiln.fusion regions to kernel IR -------------===//
//
// This file implements the lowering of one `kiln.fusion` region to a kernel
// (KernelIR.h). Values are lowered on demand at an index: block arguments
// become loads at the row-major offset of the index; views (reshape,
// flatten, squeeze, unsqueeze, transpose, expand, slice: the ops of the
// trait Kiln_View) and broadcasting rewrite the index and never copy; splat
// constants become immediates; elementwise ops (trait Kiln_Elementwise)
// become scalar ops named by their op type. Reductions are the ops of the
// trait Kiln_Reduction. Lowered values are memoized per loop scope and
// hoisted to the outermost loop whose variables they use.
//
// A region without reductions becomes one loop nest per result shape. A
// region with reductions (all over the same axes of same-shaped operands)
// becomes a parallel loop over the kept dims holding, per dependency level,
// one reduce loop over the reduced dims (the prologue fused in; the first
// one also stores the full-shape results that read no reduction), then one
// element loop for the other full-shape results (the epilogue, applied per
// element after the reductions) and the stores of the reduced-shape results.
//
//===----------------------------------------------------------------------===//

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

namespace kiln {
namespace codegen {

namespace {

using mlir::failure;
using mlir::FailureOr;
using mlir::Operation;
using mlir::Value;

bool isReduceOp(Operation *op) { return op->hasTrait<OpTrait::Reduction>(); }

std::string shapeStr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The integer values of a `kiln.constant` parameter operand.
std::optional<std::vector<int64_t>> constantInts(Value v) {
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
std::vector<IndexExpr> broadcastIndex(llvm::ArrayRef<IndexExpr> idx,
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

FailureOr<std::vector<int64_t>> Lowering::staticShape(Value v,
                                                      Operation *user) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape()) {
    mlir::emitError(user ? user->getLoc() : loc)
        << "fusion '" << kernel.name << "': kernels need static shapes, got "
        << v.getType() << "; specialize dynamic dims with --dim NAME=SIZE";
    return failure();
  }
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

FailureOr<ScalarType> Lowering::scalarType(Value v, Operation *user) {
  auto type = mlir::dyn_cast<mlir::ShapedType>(v.getType());
  std::optional<ScalarType> t =
      type ? scalarTypeOf(type.getElementType()) : std::nullopt;
  if (!t) {
    mlir::emitError(user ? user->getLoc() : loc)
        << "fusion '" << kernel.name << "': unsupported element type in "
        << v.getType();
    return failure();
  }
  return *t;
}

int Lowering::newVar(const std::string &name, int64_t extent, int depth) {
  kernel.vars.push_back({name, extent});
  extents.push_back(extent);
  varDepth.push_back(depth);
  return static_cast<int>(kernel.vars.size()) - 1;
}

int Lowering::newTemp(ScalarType type, int depth) {
  kernel.temps.push_back(type);
  tempDepth.push_back(depth);
  return static_cast<int>(kernel.temps.size()) - 1;
}

int Lowering::depthOf(const IndexExpr &e) const {
  int d = 0;
  for (const IndexExpr::Term &t : e.getTerms())
    d = std::max(d, t.atom.kind == IndexExpr::Atom::Var
                        ? varDepth[t.atom.var]
                        : depthOf(*t.atom.inner));
  return d;
}

int Lowering::emit(Stmt stmt, ScalarType type, int depth,
                   const std::string &key) {
  for (int a : stmt.args)
    depth = std::max(depth, tempDepth[a]);
  if (stmt.kind == Stmt::Kind::Load)
    depth = std::max(depth, depthOf(stmt.index));
  depth = std::min<int>(depth, static_cast<int>(scopes.size()) - 1);
  stmt.result = newTemp(type, depth);
  int id = stmt.result;
  scopes[depth].body.push_back(std::move(stmt));
  scopes[depth].memo[key] = id;
  return id;
}

std::optional<int> Lowering::lookup(const std::string &key) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->memo.find(key);
    if (found != it->memo.end())
      return found->second;
  }
  return std::nullopt;
}

std::string Lowering::keyOf(Value v, llvm::ArrayRef<IndexExpr> idx) const {
  std::vector<std::string> names;
  for (size_t i = 0; i < kernel.vars.size(); ++i)
    names.push_back("v" + std::to_string(i));
  std::string key =
      std::to_string(reinterpret_cast<uintptr_t>(v.getAsOpaquePointer()));
  for (const IndexExpr &e : idx)
    key += "|" + e.str(names);
  return key;
}

FailureOr<int> Lowering::lower(Value v, llvm::ArrayRef<IndexExpr> idx) {
  std::string key = keyOf(v, idx);
  if (std::optional<int> t = lookup(key))
    return *t;
  if (std::optional<int> t = fromRowCache(key))
    return *t;
  if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(v)) {
    FailureOr<std::vector<int64_t>> shape = staticShape(v, nullptr);
    if (failed(shape))
      return failure();
    Stmt s;
    s.kind = Stmt::Kind::Load;
    s.buffer = static_cast<int>(arg.getArgNumber());
    s.index = builder.linearize(idx, *shape);
    ScalarType type = kernel.buffers[s.buffer].type;
    return emit(std::move(s), type, 0, key);
  }
  return lowerOp(v.getDefiningOp(), v, idx);
}

/// Rows up to this many elements are cached between the last reduce loop and
/// the epilogue (a local array per thread).
constexpr int64_t kMaxRowCache = 16 * 1024;

std::optional<int> Lowering::fromRowCache(const std::string &key) {
  if (!inEpilogue || reducedCount > kMaxRowCache)
    return std::nullopt;
  auto found = lastReduceMemo.find(key);
  if (found == lastReduceMemo.end())
    return std::nullopt;
  int temp = found->second;
  IndexExpr index = builder.linearize(reducedIdx, reducedShape);
  auto [it, isNew] = cacheOf.insert({temp, (int)kernel.caches.size()});
  if (isNew) {
    kernel.caches.push_back({"c" + std::to_string(kernel.caches.size()),
                             kernel.temps[temp], reducedCount});
    Stmt store;
    store.kind = Stmt::Kind::CacheStore;
    store.buffer = it->second;
    store.index = index;
    store.value = temp;
    scopes[1].body[lastReduceLoop].body.push_back(std::move(store));
  }
  Stmt load;
  load.kind = Stmt::Kind::CacheLoad;
  load.buffer = it->second;
  load.index = index;
  return emit(std::move(load), kernel.temps[temp], 2, key);
}

FailureOr<std::vector<IndexExpr>>
Lowering::viewSourceIndex(Operation *op, llvm::ArrayRef<IndexExpr> idx) {
  FailureOr<std::vector<int64_t>> in = staticShape(op->getOperand(0), op);
  FailureOr<std::vector<int64_t>> out = staticShape(op->getResult(0), op);
  if (failed(in) || failed(out))
    return failure();
  if (mlir::isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op))
    return builder.delinearize(builder.linearize(idx, *out), *in);
  if (mlir::isa<ExpandOp>(op))
    return broadcastIndex(idx, *out, *in);
  if (mlir::isa<TransposeOp>(op)) {
    auto perm = op->getAttrOfType<mlir::DenseI64ArrayAttr>("perm");
    if (!perm || perm.size() != static_cast<int64_t>(in->size()))
      return op->emitError("transpose without a valid 'perm' attribute");
    std::vector<IndexExpr> src(in->size());
    for (size_t i = 0; i < idx.size(); ++i)
      src[perm[i]] = idx[i];
    return src;
  }
  if (!mlir::isa<SliceOp>(op))
    return op->emitError("fusion '")
           << kernel.name << "': view op '" << op->getName()
           << "' has no index rule in the kernel lowering";
  // slice(x, starts, ends, axes, steps): only starts, axes and steps matter
  // for the index; the result type carries the extents.
  std::optional<std::vector<int64_t>> starts = constantInts(op->getOperand(1)),
                                      axes = constantInts(op->getOperand(3)),
                                      steps = constantInts(op->getOperand(4));
  if (!starts || !axes || !steps || starts->size() != axes->size() ||
      steps->size() != axes->size())
    return op->emitError("fusion '")
           << kernel.name
           << "': slice needs constant starts, axes and steps inside the "
              "region";
  std::vector<IndexExpr> src(idx.begin(), idx.end());
  int64_t rank = static_cast<int64_t>(in->size());
  for (size_t k = 0; k < axes->size(); ++k) {
    int64_t axis = (*axes)[k] < 0 ? (*axes)[k] + rank : (*axes)[k];
    int64_t step = (*steps)[k], dim = (*in)[axis], start = (*starts)[k];
    if (axis < 0 || axis >= rank || step == 0)
      return op->emitError("slice with an invalid axis or a zero step");
    if (start < 0)
      start += dim;
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim)
                     : std::clamp<int64_t>(start, 0, dim - 1);
    src[axis] = IndexExpr::constant(start) + idx[axis] * step;
  }
  return src;
}

FailureOr<int> Lowering::lowerOp(Operation *op, Value v,
                                 llvm::ArrayRef<IndexExpr> idx) {
  std::string key = keyOf(v, idx);
  if (op->getName().getDialectNamespace() != "kiln")
    return op->emitError("fusion '")
           << kernel.name << "': op '" << op->getName()
           << "' cannot be lowered to a kernel (only kiln ops are allowed in "
              "fusion regions)";

  if (mlir::isa<ConstantOp>(op)) {
    auto attr = op->getAttrOfType<mlir::DenseElementsAttr>("value");
    if (!attr || !(attr.isSplat() || attr.getNumElements() == 1))
      return op->emitError("fusion '")
             << kernel.name
             << "': a non-splat constant inside a fusion region cannot be "
                "an immediate; pass it as a fusion operand";
    FailureOr<ScalarType> type = scalarType(v, op);
    if (failed(type))
      return failure();
    Stmt s;
    s.kind = Stmt::Kind::Const;
    if (isFloatType(*type)) {
      llvm::APFloat f = attr.getSplatValue<llvm::APFloat>();
      bool lost = false;
      f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      s.floatValue = f.convertToDouble();
    } else {
      llvm::APInt i = attr.getSplatValue<llvm::APInt>();
      s.intValue = (*type == ScalarType::U8 || *type == ScalarType::Bool)
                       ? static_cast<int64_t>(i.getZExtValue())
                       : i.getSExtValue();
    }
    return emit(std::move(s), *type, 0, key);
  }

  if (isReduceOp(op)) {
    auto it = reductionResult.find(op);
    FailureOr<std::vector<int64_t>> shape = staticShape(v, op);
    if (failed(shape))
      return failure();
    std::optional<std::vector<IndexExpr>> expected = reducedIndex(*shape);
    if (it == reductionResult.end() || !expected || keyOf(v, *expected) != key)
      return op->emitError("fusion '")
             << kernel.name
             << "': this reduction's result is used in a way the kernel "
                "cannot index (the region must have one reduction domain)";
    return it->second;
  }

  if (op->hasTrait<OpTrait::View>()) {
    FailureOr<std::vector<IndexExpr>> src = viewSourceIndex(op, idx);
    if (failed(src))
      return failure();
    FailureOr<int> t = lower(op->getOperand(0), *src);
    if (succeeded(t))
      scopes.back().memo[key] = *t;
    return t;
  }

  if (!isScalarOp(op->getName()))
    return op->emitError("fusion '")
           << kernel.name << "': op '" << op->getName()
           << "' cannot be lowered to a kernel; the fuse pass must leave it "
              "outside fusion regions";

  FailureOr<std::vector<int64_t>> outShape = staticShape(v, op);
  FailureOr<ScalarType> type = scalarType(v, op);
  if (failed(outShape) || failed(type))
    return failure();
  Stmt s;
  s.kind = Stmt::Kind::Compute;
  s.op = op->getName();
  for (Value operand : op->getOperands()) {
    FailureOr<std::vector<int64_t>> inShape = staticShape(operand, op);
    if (failed(inShape) || inShape->size() > outShape->size())
      return failed(inShape) ? failure()
                             : op->emitError("operand rank exceeds the "
                                             "result rank");
    FailureOr<int> t = lower(operand, broadcastIndex(idx, *outShape, *inShape));
    if (failed(t))
      return failure();
    s.args.push_back(*t);
  }
  for (mlir::NamedAttribute attr : op->getAttrs()) {
    std::string attrName = attr.getName().str();
    if (auto f = mlir::dyn_cast<mlir::FloatAttr>(attr.getValue()))
      s.attrs.numbers[attrName] = f.getValueAsDouble();
    else if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(attr.getValue()))
      s.attrs.numbers[attrName] = static_cast<double>(i.getInt());
    else if (auto str = mlir::dyn_cast<mlir::StringAttr>(attr.getValue()))
      s.attrs.strings[attrName] = str.str();
  }
  return emit(std::move(s), *type, 0, key);
}

std::optional<std::vector<IndexExpr>>
Lowering::reducedIndex(llvm::ArrayRef<int64_t> shape) const {
  std::vector<IndexExpr> idx;
  size_t numReduced = std::count(reducedMask.begin(), reducedMask.end(), true);
  if (shape.size() == fullShape.size()) {
    for (size_t d = 0; d < shape.size(); ++d) {
      if (reducedMask[d] ? shape[d] != 1 : shape[d] != fullShape[d])
        return std::nullopt;
      idx.push_back(reducedMask[d] ? IndexExpr::constant(0) : fullIndex[d]);
    }
    return idx;
  }
  if (shape.size() + numReduced != fullShape.size())
    return std::nullopt;
  size_t k = 0;
  for (size_t d = 0; d < fullShape.size(); ++d) {
    if (reducedMask[d])
      continue;
    if (shape[k++] != fullShape[d])
      return std::nullopt;
    idx.push_back(fullIndex[d]);
  }
  return idx;
}

int Lowering::dependencyLevel(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return 0;
  if (isReduceOp(def))
    return levelOf(def);
  int level = 0;
  for (Value operand : def->getOperands())
    level = std::max(level, dependencyLevel(operand));
  return level;
}

int Lowering::levelOf(Operation *reduceOp) {
  auto it = levels.find(reduceOp);
  if (it != levels.end())
    return it->second;
  int level = 1 + dependencyLevel(reduceOp->getOperand(0));
  levels[reduceOp] = level;
  return level;
}

mlir::LogicalResult
Lowering::setUpReductionDomain(llvm::ArrayRef<Operation *> reduces) {
  for (Operation *op : reduces) {
    FailureOr<std::vector<int64_t>> shape = staticShape(op->getOperand(0), op);
    if (failed(shape))
      return failure();
    std::optional<std::vector<int64_t>> axes = constantInts(op->getOperand(1));
    if (!axes)
      return op->emitError("fusion '")
             << kernel.name
             << "': the reduction axes must be a kiln.constant inside the "
                "region";
    auto noop = op->getAttrOfType<mlir::IntegerAttr>("noop_with_empty_axes");
    if (axes->empty() && noop && noop.getInt() != 0)
      return op->emitError("fusion '")
             << kernel.name
             << "': a reduction with empty axes and noop_with_empty_axes = 1 "
                "is an identity; simplify it before fusion";
    int64_t rank = static_cast<int64_t>(shape->size());
    std::vector<bool> mask(shape->size(), axes->empty());
    for (int64_t a : *axes) {
      int64_t axis = a < 0 ? a + rank : a;
      if (axis < 0 || axis >= rank)
        return op->emitError("reduction axis ") << a << " out of range";
      mask[axis] = true;
    }
    if (fullShape.empty() && reducedMask.empty()) {
      fullShape = *shape;
      reducedMask = mask;
    } else if (*shape != fullShape || mask != reducedMask) {
      return op->emitError("fusion '")
             << kernel.name << "': reductions over " << shapeStr(*shape)
             << " and " << shapeStr(fullShape)
             << " (or over different axes) cannot share one kernel";
    }
  }
  return mlir::success();
}

Stmt Lowering::closeLoop(Stmt::LoopKind kind, std::vector<int> vars) {
  Stmt loop;
  loop.kind = Stmt::Kind::Loop;
  loop.loopKind = kind;
  loop.vars = std::move(vars);
  loop.body = std::move(scopes.back().body);
  scopes.pop_back();
  return loop;
}

mlir::LogicalResult Lowering::store(unsigned result,
                                    llvm::ArrayRef<IndexExpr> idx) {
  Operation *yield = block.getTerminator();
  Value v = yield->getOperand(result);
  FailureOr<int> t = lower(v, idx);
  if (failed(t))
    return failure();
  const Buffer &buf = kernel.buffers[numInputs + result];
  Stmt s;
  s.kind = Stmt::Kind::Store;
  s.buffer = numInputs + static_cast<int>(result);
  s.value = *t;
  s.index = builder.linearize(idx, buf.shape);
  scopes.back().body.push_back(std::move(s));
  return mlir::success();
}

mlir::LogicalResult
Lowering::lowerReduction(llvm::ArrayRef<Operation *> reduces) {
  if (failed(setUpReductionDomain(reduces)))
    return failure();
  // Loop variables: kept dims at depth 1, reduced dims at depth 2; dims of
  // extent 1 index with 0.
  std::vector<int> keptVars, reducedVars;
  for (size_t d = 0; d < fullShape.size(); ++d) {
    if (fullShape[d] == 1) {
      fullIndex.push_back(IndexExpr::constant(0));
      continue;
    }
    bool red = reducedMask[d];
    std::string varName =
        (red ? "j" : "i") +
        std::to_string(red ? reducedVars.size() : keptVars.size());
    int id = newVar(varName, fullShape[d], red ? 2 : 1);
    (red ? reducedVars : keptVars).push_back(id);
    fullIndex.push_back(IndexExpr::var(id));
  }
  for (size_t d = 0; d < fullShape.size(); ++d)
    (reducedMask[d] ? kernel.reducedDomain : kernel.parallelDomain)
        .push_back(fullShape[d]);
  for (size_t d = 0; d < fullShape.size(); ++d) {
    if (!reducedMask[d])
      continue;
    reducedCount *= fullShape[d];
    reducedShape.push_back(fullShape[d]);
    reducedIdx.push_back(fullIndex[d]);
  }

  int maxLevel = 0;
  for (Operation *op : reduces)
    maxLevel = std::max(maxLevel, levelOf(op));

  Operation *yield = block.getTerminator();
  std::set<unsigned> storedEarly; ///< results stored by the first loop
  scopes.emplace_back(); // the parallel loop over the kept dims
  for (int level = 1; level <= maxLevel; ++level) {
    scopes.emplace_back();
    std::vector<Reduction> reductions;
    for (Operation *op : reduces) {
      if (levelOf(op) != level)
        continue;
      FailureOr<int> input = lower(op->getOperand(0), fullIndex);
      FailureOr<ScalarType> type = scalarType(op->getResult(0), op);
      if (failed(input) || failed(type))
        return failure();
      Reduction r;
      r.kind = mlir::isa<ReduceSumOp>(op)    ? ReduceKind::Sum
               : mlir::isa<ReduceMeanOp>(op) ? ReduceKind::Mean
               : mlir::isa<ReduceProdOp>(op) ? ReduceKind::Prod
               : mlir::isa<ReduceMaxOp>(op)  ? ReduceKind::Max
                                             : ReduceKind::Min;
      if (*type == ScalarType::Bool &&
          (r.kind == ReduceKind::Sum || r.kind == ReduceKind::Mean ||
           r.kind == ReduceKind::Prod))
        return op->emitError("sums and products of bools are not defined");
      r.type = *type;
      r.input = *input;
      r.count = 1;
      for (size_t d = 0; d < fullShape.size(); ++d)
        if (reducedMask[d])
          r.count *= fullShape[d];
      reductions.push_back(r);
    }
    // Remember what this loop computed per element (for row caching).
    lastReduceMemo.clear();
    for (auto &[key, temp] : scopes.back().memo)
      if (tempDepth[temp] == 2)
        lastReduceMemo[key] = temp;
    // Loads are as cheap as cache reads: re-read the input instead.
    for (const Stmt &st : scopes.back().body)
      if (st.kind == Stmt::Kind::Load)
        for (auto it = lastReduceMemo.begin(); it != lastReduceMemo.end();)
          it = it->second == st.result ? lastReduceMemo.erase(it)
                                       : std::next(it);
    // Full-shape results that read no reduction are stored by the first
    // reduce loop, beside the reductions' inputs: the epilogue would
    // otherwise cache or recompute them after the reductions (a gradient's
    // elementwise result beside its bias-gradient column sum).
    if (level == 1)
      for (unsigned r = 0; r < yield->getNumOperands(); ++r)
        if (kernel.buffers[numInputs + r].shape == fullShape &&
            dependencyLevel(yield->getOperand(r)) == 0) {
          if (failed(store(r, fullIndex)))
            return failure();
          storedEarly.insert(r);
        }
    lastReduceLoop = scopes[1].body.size();
    Stmt loop = closeLoop(Stmt::LoopKind::Reduce, reducedVars);
    for (size_t i = 0, n = 0; i < reduces.size(); ++i) {
      if (levelOf(reduces[i]) != level)
        continue;
      reductions[n].result = newTemp(reductions[n].type, 1);
      reductionResult[reduces[i]] = reductions[n].result;
      ++n;
    }
    loop.reductions = std::move(reductions);
    scopes.back().body.push_back(std::move(loop));
  }

  // The epilogue: full-shape results per element, then reduced-shape ones.
  std::vector<unsigned> reducedResults;
  bool anyFull = false;
  for (unsigned r = 0; r < yield->getNumOperands(); ++r) {
    const Buffer &buf = kernel.buffers[numInputs + r];
    if (storedEarly.count(r))
      continue;
    if (buf.shape == fullShape) {
      if (!anyFull)
        scopes.emplace_back();
      anyFull = true;
      inEpilogue = true;
      if (failed(store(r, fullIndex)))
        return failure();
    } else {
      reducedResults.push_back(r);
    }
  }
  inEpilogue = false;
  if (anyFull) {
    Stmt epilogue = closeLoop(Stmt::LoopKind::Serial, reducedVars);
    scopes.back().body.push_back(std::move(epilogue));
  }
  for (unsigned r : reducedResults) {
    const Buffer &buf = kernel.buffers[numInputs + r];
    std::optional<std::vector<IndexExpr>> idx = reducedIndex(buf.shape);
    if (!idx)
      return mlir::emitError(yield->getLoc())
             << "fusion '" << kernel.name << "': result " << r << " has shape "
             << shapeStr(buf.shape) << ", neither the reduction's full shape "
             << shapeStr(fullShape) << " nor its reduced shape";
    if (failed(store(r, *idx)))
      return failure();
  }
  Stmt outer = closeLoop(Stmt::LoopKind::Parallel, keptVars);
  scopes[0].body.push_back(std::move(outer));
  return mlir::success();
}

mlir::LogicalResult Lowering::lowerPointwise() {
  // One loop nest per distinct result shape, in result order.
  std::vector<std::vector<int64_t>> shapes;
  for (unsigned r = numInputs; r < kernel.buffers.size(); ++r)
    if (std::find(shapes.begin(), shapes.end(), kernel.buffers[r].shape) ==
        shapes.end())
      shapes.push_back(kernel.buffers[r].shape);
  for (const std::vector<int64_t> &shape : shapes) {
    if (kernel.parallelDomain.empty())
      kernel.parallelDomain = shape;
    std::vector<IndexExpr> idx;
    std::vector<int> vars;
    for (int64_t extent : shape) {
      if (extent == 1) {
        idx.push_back(IndexExpr::constant(0));
        continue;
      }
      vars.push_back(newVar("i" + std::to_string(vars.size()), extent, 1));
      idx.push_back(IndexExpr::var(vars.back()));
    }
    scopes.emplace_back();
    for (unsigned r = 0; r + numInputs < kernel.buffers.size(); ++r)
      if (kernel.buffers[numInputs + r].shape == shape && failed(store(r, idx)))
        return failure();
    Stmt nest = closeLoop(Stmt::LoopKind::Parallel, vars);
    scopes[0].body.push_back(std::move(nest));
  }
  return mlir::success();
}

void Lowering::collectSourceNodes() {
  llvm::SetVector<llvm::StringRef> names;
  for (Operation &op : block) {
    op.getLoc()->walk([&](mlir::Location l) {
      if (auto nameLoc = mlir::dyn_cast<mlir::NameLoc>(l))
        names.insert(nameLoc.getName().strref());
      return mlir::WalkResult::advance();
    });
  }
  for (llvm::StringRef n : names)
    kernel.sourceNodes.push_back(n.str());
}

FailureOr<Kernel> Lowering::run() {
  Operation *yield = block.empty() ? nullptr : &block.back();
  if (!yield || !mlir::isa<YieldOp>(yield)) {
    mlir::emitError(loc) << "fusion '" << kernel.name
                         << "': the region must end with kiln.yield";
    return failure();
  }
  numInputs = static_cast<int>(block.getNumArguments());
  for (mlir::BlockArgument arg : block.getArguments()) {
    FailureOr<std::vector<int64_t>> shape = staticShape(arg, nullptr);
    FailureOr<ScalarType> type = scalarType(arg, nullptr);
    if (failed(shape) || failed(type))
      return failure();
    kernel.buffers.push_back(
        {"in" + std::to_string(arg.getArgNumber()), *type, *shape, false});
  }
  for (unsigned r = 0; r < yield->getNumOperands(); ++r) {
    FailureOr<std::vector<int64_t>> shape =
        staticShape(yield->getOperand(r), yield);
    FailureOr<ScalarType> type = scalarType(yield->getOperand(r), yield);
    if (failed(shape) || failed(type))
      return failure();
    kernel.buffers.push_back({"out" + std::to_string(r), *type, *shape, true});
  }
  if (inPlace) {
    int in = static_cast<int>(inPlace->second);
    int out = numInputs + static_cast<int>(inPlace->first);
    assert(in < numInputs && out < (int)kernel.buffers.size() &&
           "kiln.in_place names no operand or result");
    kernel.buffers[in].sharesWith = out;
    kernel.buffers[out].sharesWith = in;
  }

  std::vector<Operation *> reduces;
  for (Operation &op : block)
    if (isReduceOp(&op))
      reduces.push_back(&op);

  scopes.emplace_back(); // the kernel's top level
  if (failed(reduces.empty() ? lowerPointwise() : lowerReduction(reduces)))
    return failure();
  if (!reduces.empty())
    kernel.kind = "reduction";
  kernel.body = std::move(scopes[0].body);
  hoistInvariantDivisors(kernel);
  multiplyByExactReciprocals(kernel);
  expandSmallPowers(kernel);
  placeRowCachesInOutputs(kernel);
  collectSourceNodes();
  return std::move(kernel);
}

} // namespace

FailureOr<Kernel>
lowerToKernelIR(mlir::Block &body, llvm::StringRef name, llvm::StringRef kind,
                mlir::Location loc,
                std::optional<std::pair<unsigned, unsigned>> inPlace) {
  Lowering lowering(body, name, kind, loc, inPlace);
  return lowering.run();
}

FailureOr<Kernel> lowerFusionToKernelIR(Operation *fusionOp) {
  auto name = fusionOp->getAttrOfType<mlir::StringAttr>("name");
  auto kind = fusionOp->getAttrOfType<mlir::StringAttr>("kind");
  if (fusionOp->getNumRegions() != 1 ||
      !llvm::hasSingleElement(fusionOp->getRegion(0)) || !name || !kind)
    return fusionOp->emitError(
        "expected a kiln.fusion op: one region with one block and string "
        "attributes 'name' and 'kind'");
  return lowerToKernelIR(fusionOp->getRegion(0).front(), name.getValue(),
                         kind.getValue(), fusionOp->getLoc(),
                         inPlacePair(fusionOp));
}

} // namespace codegen
} // namespace kiln
