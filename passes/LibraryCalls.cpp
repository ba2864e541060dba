//===- LibraryCalls.cpp - What the lowerings to library calls share -------===//
//
// This file implements the helpers of the targets' lowering passes that make
// matmuls and convolutions library calls (LibraryCalls.h): a matmul's GEMM
// form, the matrix transposes a library reads in place, convolution
// attribute defaults, and the creation of the kiln.library_call. They decide
// nothing about which library runs what; the targets do.
//
//===----------------------------------------------------------------------===//

#include "passes/LibraryCalls.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;

namespace kiln {
namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A kiln.transpose that swaps the last two dims and keeps the others.
bool isMatrixTranspose(Operation *op) {
  auto t = dyn_cast_or_null<TransposeOp>(op);
  if (!t)
    return false;
  ArrayRef<int64_t> perm = t.getPerm();
  int64_t r = perm.size();
  if (r < 2)
    return false;
  for (int64_t i = 0; i < r - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
}

/// The batch stride (in elements) of a matmul operand of `shape` whose
/// matrices have `matrixElems` elements, for a result with batch dims
/// `batch`: 0 when the operand is one matrix (broadcast), the matrix size
/// when its batch dims equal the result's; nullopt otherwise.
std::optional<int64_t> batchStride(ArrayRef<int64_t> shape,
                                   ArrayRef<int64_t> batch,
                                   int64_t matrixElems) {
  ArrayRef<int64_t> own = shape.drop_back(2);
  if (llvm::all_of(own, [](int64_t d) { return d == 1; }))
    return 0;
  if (own.size() == batch.size() && llvm::equal(own, batch))
    return matrixElems;
  return std::nullopt;
}

/// Whether `op` is a kiln.reshape of `source` to a matrix [M, K]: the same
/// bytes read row-major (a reshape never moves elements), e.g. [B, T, K] or
/// the heads [B, T, H, D] of an attention result as [B*T, H*D].
bool isMatrixView(Operation *op, Value source) {
  auto r = dyn_cast_or_null<ReshapeOp>(op);
  if (!r || r->getOperand(0) != source)
    return false;
  RankedTensorType from = tensorType(source), to = tensorType(r.getResult());
  return from.hasStaticShape() && to.hasStaticShape() && to.getRank() == 2;
}

} // namespace

/// The value a matrix transpose `v` transposes, when a library can read it in
/// place instead: a kiln.transpose of the last two dims, or a fusion that is
/// only that (FuseOps makes one of a transpose of an activation), possibly
/// of a reshape to a matrix ([B, T, K] -> [B*T, K] -> its transpose: a
/// weight gradient x^T g of a transformer's Linear layer, whose operand is
/// then read as the [B*T, K] matrix it is in memory); null otherwise.
Value transposedSource(Value v) {
  Operation *def = v.getDefiningOp();
  if (isMatrixTranspose(def))
    return def->getOperand(0);
  auto fusion = dyn_cast_or_null<FusionOp>(def);
  if (!fusion || fusion->getNumResults() != 1 || fusion->getNumOperands() != 1)
    return {};
  Block &body = fusion.getBody();
  Operation *yield = body.getTerminator();
  Operation *t = yield->getOperand(0).getDefiningOp();
  if (!isMatrixTranspose(t))
    return {};
  Operation *reshape = t->getOperand(0).getDefiningOp();
  bool viaReshape = isMatrixView(reshape, body.getArgument(0));
  if (!viaReshape && t->getOperand(0) != body.getArgument(0))
    return {};
  bool onlyTranspose =
      llvm::all_of(body.without_terminator(), [&](Operation &op) {
        return &op == t || (viaReshape && &op == reshape) ||
               isa<ConstantOp>(op);
      });
  if (!onlyTranspose)
    return {};
  return fusion->getOperand(0);
}

std::optional<Gemm> gemmOf(MatMulOp op, llvm::function_ref<bool(Type)> takes) {
  Value a = op.getOperand(0), b = op.getOperand(1), d = op.getResult();
  RankedTensorType ta = tensorType(a), tb = tensorType(b), td = tensorType(d);
  Type e = td.getElementType();
  if (ta.getElementType() != e || tb.getElementType() != e || !takes(e) ||
      !ta.hasStaticShape() || !tb.hasStaticShape() || !td.hasStaticShape() ||
      ta.getRank() < 2 || tb.getRank() < 2 || td.getRank() < 2 || d.use_empty())
    return std::nullopt;
  int64_t m = ta.getShape()[ta.getRank() - 2], k = ta.getShape().back();
  int64_t n = tb.getShape().back();
  if (tb.getShape()[tb.getRank() - 2] != k || td.getShape().back() != n ||
      td.getShape()[td.getRank() - 2] != m || m == 0 || n == 0 || k == 0)
    return std::nullopt;
  ArrayRef<int64_t> batch = td.getShape().drop_back(2);
  int64_t batchCount = 1;
  for (int64_t x : batch)
    batchCount *= x;
  std::optional<int64_t> strideA = batchStride(ta.getShape(), batch, m * k);
  std::optional<int64_t> strideB = batchStride(tb.getShape(), batch, k * n);
  if (!strideA || !strideB || batchCount == 0)
    return std::nullopt;
  Gemm g;
  g.a = a, g.b = b;
  // A matrix transpose is read in place, transposed by the library: of a
  // weight, or of an activation (a backward graph's x^T g; measured with
  // cuBLASLt on the H200: mlp_train's step lost its 33 and 134 MB transpose
  // copies).
  if (Value source = transposedSource(a))
    g.a = source, g.transA = true;
  if (Value source = transposedSource(b))
    g.b = source, g.transB = true;
  g.batch = batchCount, g.m = m, g.n = n, g.k = k;
  g.strideA = *strideA, g.strideB = *strideB;
  // A batch of row-major A matrices times one B is one taller GEMM:
  // [batch * m, k] x [k, n] (the Linear layers of a transformer).
  if (g.batch > 1 && g.strideB == 0 && g.strideA == m * k && !g.transA) {
    g.m *= g.batch;
    g.batch = 1;
    g.strideA = 0;
  }
  return g;
}

/// An integer-list attribute of `n` entries, `dflt` when empty (as the
/// reference kernel reads it); nullopt when of another length.
std::optional<SmallVector<int64_t>> spatial(ArrayRef<int64_t> attr, size_t n,
                                            int64_t dflt) {
  if (attr.empty())
    return SmallVector<int64_t>(n, dflt);
  if (attr.size() != n)
    return std::nullopt;
  return SmallVector<int64_t>(attr);
}

SmallVector<int64_t> channelsFirstShape(Type type, bool channelsLast) {
  SmallVector<int64_t> s(cast<RankedTensorType>(type).getShape());
  if (channelsLast)
    std::rotate(s.begin() + 1, s.end() - 1, s.end());
  return s;
}

/// The library parameters of `conv` (dilations, group, layout, pads,
/// strides), when a library takes it: static non-empty shapes, 1 to 3
/// spatial dims, an element type that `takes` accepts (the same for x, w and
/// y), geometry consistent with the result and, with `symmetricPads`, equal
/// pads at both ends of each spatial dim.
std::optional<NamedAttrList>
convLibraryParams(ConvOp conv, llvm::function_ref<bool(Type)> takes,
                  bool symmetricPads) {
  RankedTensorType tx = tensorType(conv.getOperand(0)),
                   tw = tensorType(conv.getOperand(1)),
                   ty = tensorType(conv.getResult());
  Type e = ty.getElementType();
  int64_t rank = ty.getRank();
  if (tx.getElementType() != e || tw.getElementType() != e || !takes(e) ||
      rank < 3 || rank > 5 || tx.getRank() != rank || tw.getRank() != rank ||
      conv.getResult().use_empty())
    return std::nullopt;
  for (RankedTensorType t : {tx, tw, ty})
    if (!t.hasStaticShape() ||
        llvm::any_of(t.getShape(), [](int64_t d) { return d <= 0; }))
      return std::nullopt;
  bool channelsLast = conv.getLayout() == "nhwc";
  if (conv.getLayout() && (!channelsLast || rank != 4))
    return std::nullopt;
  // The checks below read the shapes channels first.
  SmallVector<int64_t> x = channelsFirstShape(tx, channelsLast),
                       w = channelsFirstShape(tw, channelsLast),
                       y = channelsFirstShape(ty, channelsLast);
  size_t nsp = rank - 2;
  int64_t group = conv.getGroup();
  auto strides = spatial(conv.getStrides(), nsp, 1);
  auto dilations = spatial(conv.getDilations(), nsp, 1);
  auto pads = spatial(conv.getPads(), 2 * nsp, 0);
  if (!strides || !dilations || !pads || group < 1 || x[1] != w[1] * group ||
      w[0] % group != 0 || y[0] != x[0] || y[1] != w[0])
    return std::nullopt;
  for (size_t d = 0; d < nsp; ++d) {
    int64_t begin = (*pads)[d], end = (*pads)[nsp + d];
    if (begin < 0 || end < 0 || (symmetricPads && begin != end) ||
        (*strides)[d] < 1 || (*dilations)[d] < 1)
      return std::nullopt;
    int64_t window = (*dilations)[d] * (w[2 + d] - 1) + 1;
    int64_t span = x[2 + d] + begin + end - window;
    if (span < 0 || span / (*strides)[d] + 1 != y[2 + d])
      return std::nullopt;
  }
  Builder b(conv.getContext());
  NamedAttrList params;
  params.append("dilations", b.getDenseI64ArrayAttr(*dilations));
  params.append("group", b.getI64IntegerAttr(group));
  params.append("layout", b.getStringAttr(channelsLast ? "nhwc" : "nchw"));
  params.append("pads", b.getDenseI64ArrayAttr(*pads));
  params.append("strides", b.getDenseI64ArrayAttr(*strides));
  return params;
}

/// A location naming `op` and every op inside `fusion` (the ONNX nodes of
/// everything a library call computes).
Location foldedLoc(Operation *op, FusionOp fusion) {
  SmallVector<Location> locs = {op->getLoc()};
  if (fusion)
    fusion.getBody().walk([&](Operation *inner) {
      if (!isa<ConstantOp, YieldOp>(inner))
        locs.push_back(inner->getLoc());
    });
  return FusedLoc::get(op->getContext(), locs);
}

/// Creates the library call for `op` (and the fusion its epilogue replaces,
/// if any) right before `insertPoint`, and replaces `replaced` with it.
void createLibraryCall(Operation *op, FusionOp fusion, StringRef callee,
                       ArrayRef<std::pair<StringRef, Value>> operands,
                       const Epilogue *epilogue, bool transA, bool transB,
                       int64_t workspace, NamedAttrList params) {
  Operation *replaced = fusion ? fusion.getOperation() : op;
  OpBuilder b(replaced);
  SmallVector<Value> values;
  SmallVector<StringRef> roles;
  for (auto [role, value] : operands) {
    roles.push_back(role);
    values.push_back(value);
  }
  if (epilogue && epilogue->bias) {
    roles.push_back("bias");
    values.push_back(epilogue->bias);
  }
  if (epilogue && epilogue->residual) {
    roles.push_back("residual");
    values.push_back(epilogue->residual);
  }
  auto call = b.create<LibraryCallOp>(
      foldedLoc(op, fusion), replaced->getResultTypes(), values,
      b.getStringAttr(callee), b.getStrArrayAttr(roles), b.getBoolAttr(transA),
      b.getBoolAttr(transB),
      b.getStringAttr(epilogue ? epilogueName(*epilogue) : "none"),
      b.getI64IntegerAttr(workspace), params.getDictionary(b.getContext()));
  replaced->replaceAllUsesWith(call);
  replaced->erase();
  if (fusion)
    op->erase();
}

} // namespace kiln
