//===- LowerToKernelIR.cpp - kiln.fusion regions to kernel IR -------------===//
//
// This file implements the lowering of one `kiln.fusion` region to a kernel
// (KernelIR.h), its value half (the loop nests are LowerLoopNests.cpp's;
// the state they share is KernelLowering.h). Values are lowered on demand at an index: block arguments
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

#include "codegen/KernelLowering.h"

namespace kiln {
namespace codegen {
namespace lowering {

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
      s.intValue = (isUnsignedIntType(*type) || *type == ScalarType::Bool)
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

} // namespace lowering
} // namespace codegen
} // namespace kiln
