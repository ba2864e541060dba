//===- LowerCpuLibraryCalls.cpp - The CPU target's lowering ---------------===//
//
// This file implements kiln-lower-cpu, the CPU target's lowering pass. It
// decides how every top-level step of a fused graph runs on the CPU, in the
// IR (passes/LoweringPasses.h), so the wrapper emitter decides nothing:
//
//  - An f32 kiln.matmul with static shapes whose batches are equal or
//    broadcast from one matrix becomes kiln.library_call "onednn.matmul"
//    (a oneDNN matmul primitive, created once when the model loads), its
//    GEMM geometry in `params`. A matrix transpose of an operand is read in
//    place (`transpose_a/b`: Linear layers export as MatMul(x,
//    Transpose(W))). When B is constant for the model's life (a weight, or
//    computed from weights at load), `params.pack_b` says so: the runtime
//    reorders it once, at load, into the layout oneDNN's kernel wants. When
//    the matmul's only user is a kiln.fusion computing act(mm + bias +
//    residual) (each optional; act: ReLU, ReLU6, sigmoid, tanh, hard swish, or
//    GELU in its tanh or exact erf form after the bias only), oneDNN's
//    post-ops compute it: the call
//    replaces the fusion (passes/LibraryEpilogues.h, the vocabulary the
//    CUDA target's epilogues use). A single product of at most 8 rows by a
//    constant B of 1 MB or more (a batch-1 to batch-8 Linear layer, whose
//    time is streaming its weights) becomes "cpu.panel_matmul"
//    instead, the runtime's own GEMM (runtime/lib/PanelMatmul.h: B packed
//    at load into 32-column panels, prefetched), which folds a bias, a
//    residual and ReLU; a GELU after it stays a fused kernel.
//  - An f32 kiln.conv with static shapes and 1 to 3 spatial dims becomes
//    "onednn.conv" (channels last when kiln-channels-last made it so: the
//    CPU target runs that pass for f32 too, since oneDNN's direct
//    convolutions are fastest on NHWC activations), its weights packed
//    (`params.pack_w`) when constant (constant weights that the layout pass
//    transposes to channels last are read as they are: `w_layout =
//    "oihw"`, no transposed copy at load), and a fusion computing
//    act(conv + per-channel bias + residual) folded in. `algorithm` says
//    which of oneDNN's algorithms runs: "winograd" for a 3x3 convolution of
//    stride 1 on a large image (runsWinograd; its activations reordered
//    into oneDNN's blocked layout and back inside the call), else
//    "direct"; or "panels", the runtime's own convolution for at most 64
//    output pixels by 1 MB of weights or more (runsConvOnPanels,
//    runtime/lib/PanelConv.h: im2col, then a GEMM streaming the weights).
//  - An f32 kiln.max_pool with static shapes (pads shorter than the
//    window) becomes "onednn.max_pool", oneDNN's pooling (either layout);
//    an f32 kiln.avg_pool "onednn.avg_pool" alike (count_include_pad only
//    where no window reaches past the declared end pads, which ceil_mode
//    may add: oneDNN would count that overhang as padding).
//  - An f32 kiln.gru_recurrence or kiln.lstm_recurrence with static shapes
//    (kiln-split-recurrent's second half of a GRU or LSTM) becomes
//    "onednn.gru_recurrence" /
//    "onednn.lstm_recurrence" (runtime/lib/OneDnnRecurrence.cpp: a oneDNN
//    matmul of the state per step, its weights packed at load when
//    constant, `pack_r`, and the gates), the op's attributes and sizes in
//    `params`.
//  - Every other library op (a matmul or convolution oneDNN does not take
//    here: other dtypes, a graph compiled for a range of sizes
//    (kiln.size_range), conv_transpose)
//    becomes "runtime.<op>", a call of the runtime's OpenBLAS-backed kernel
//    with the op's attributes as `params`.
//  - A kiln.gather or kiln.concat of static shapes outside a fusion is a
//    kernel of its own (`kiln.kernel = "o<N>_gather"`, CppOpKernels.cpp:
//    rows moved with memcpy), and so are gather_elements, argmax/argmin,
//    bitcast, cumsum/cumprod (a constant or run-time axis), trilu, hardmax,
//    scatter_elements, scatter_nd, gather_nd and grid_sample
//    (CppIndexKernels.cpp), a pad with constant pads and the max/avg
//    poolings oneDNN did not take (CppWindowKernels.cpp), an einsum the
//    reference sums in a loop (CppEinsumKernel.cpp), a dft
//    (CppSignalKernels.cpp), a roi_align and a deform_conv
//    (CppImageKernels.cpp).
//  - A reshape, flatten, squeeze or unsqueeze outside a fusion is an alias
//    of its operand (kiln.alias): no step, no copy.
//  - Every other op outside a fusion is tagged kiln.reference = "cpu" (the
//    runtime's reference kernel, called in place on the arena).
//
// It leaves kiln.constant, kiln.fusion and func.return alone.
//
//===----------------------------------------------------------------------===//

#include "codegen/SymbolicShapes.h"
#include "ir/KilnOps.h"
#include "passes/FusionRules.h"
#include "passes/LibraryCalls.h"
#include "passes/LoweringPasses.h"
#include "targets/cpu/CppKernel.h"
#include "targets/cpu/CpuTarget.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {
namespace {

/// What oneDNN's post-ops fold, beyond a bias and ReLU.
EpilogueAbility oneDnnAbility() {
  EpilogueAbility ability;
  ability.matmulResidual = true;
  ability.geluErf = true;
  ability.convNeedsRelu = false;
  ability.moreActivations = true;
  ability.relu6 = true;
  return ability;
}

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// The fusion an epilogue of `op`'s result replaces, if any.
FusionOp epilogueFusion(Operation *op, const std::optional<Epilogue> &e) {
  return e ? cast<FusionOp>(*op->getResult(0).getUsers().begin()) : nullptr;
}

/// What the runtime's panel GEMM folds: a bias, a residual, then ReLU.
EpilogueAbility panelAbility() {
  EpilogueAbility ability;
  ability.matmulResidual = true;
  ability.gelu = false;
  return ability;
}

/// The most rows of a panel GEMM (runtime/lib/PanelMatmul.h, kMaxRows).
constexpr int64_t kPanelMaxRows = 8;
/// The fewest elements of B for which a panel GEMM is chosen (1 MB: the
/// weights stream from beyond the L2, where prefetching pays; measured for
/// 1 to 8 rows by 1 to 16 MB, bench/cpu_panel_rows.cpp).
constexpr int64_t kPanelMinElements = int64_t(1) << 18;

/// Whether `g` runs as the runtime's panel GEMM rather than oneDNN's matmul:
/// one product of at most kPanelMaxRows rows by a constant B of at least
/// kPanelMinElements, A not transposed.
bool runsOnPanels(const Gemm &g, bool packB) {
  return packB && g.batch == 1 && g.m <= kPanelMaxRows && !g.transA &&
         g.k * g.n >= kPanelMinElements;
}

/// Lowers `mm` to oneDNN, or to the runtime's panel GEMM, when it
/// qualifies.
void lowerMatmul(MatMulOp mm, func::FuncOp graph) {
  std::optional<Gemm> g = gemmOf(mm, [](Type t) { return t.isF32(); });
  if (!g)
    return;
  bool packB = isPersistentValue(g->b, collectLoadTimeOps(graph));
  bool panels = runsOnPanels(*g, packB);
  std::optional<Epilogue> epilogue =
      matmulEpilogue(mm.getResult(), panels ? panelAbility() : oneDnnAbility());
  // Of two matmuls added together the one computed last folds the add.
  if (epilogue && (epilogue->bias || epilogue->residual))
    for (Value added : {epilogue->bias, epilogue->residual})
      if (auto other = added ? added.getDefiningOp<MatMulOp>() : MatMulOp())
        if (other->getBlock() == mm->getBlock() && mm->isBeforeInBlock(other) &&
            other.getResult().hasOneUse())
          epilogue.reset();
  Builder b(mm.getContext());
  NamedAttrList params;
  params.append("batch", b.getI64IntegerAttr(g->batch));
  params.append("k", b.getI64IntegerAttr(g->k));
  params.append("m", b.getI64IntegerAttr(g->m));
  params.append("n", b.getI64IntegerAttr(g->n));
  params.append("pack_b", b.getBoolAttr(packB));
  params.append("stride_a", b.getI64IntegerAttr(g->strideA));
  params.append("stride_b", b.getI64IntegerAttr(g->strideB));
  Operation *ta = g->transA ? mm.getOperand(0).getDefiningOp() : nullptr;
  Operation *tb = g->transB ? mm.getOperand(1).getDefiningOp() : nullptr;
  createLibraryCall(mm, epilogueFusion(mm, epilogue),
                    panels ? "cpu.panel_matmul" : "onednn.matmul",
                    {{"a", g->a}, {"b", g->b}}, epilogue ? &*epilogue : nullptr,
                    g->transA, g->transB, 0, params);
  // A transpose that every reader now reads through is gone.
  if (ta && ta->use_empty())
    ta->erase();
  if (tb && tb != ta && tb->use_empty())
    tb->erase();
}

/// The channels-first weights that `w`, the weights of a channels-last
/// convolution, transposes to [O, k..., C/group] (kiln-channels-last's
/// transpose<0, 2, 3, 1>, or a fusion that is only that), if it is one.
Value channelsFirstWeights(Value w) {
  auto isToLast = [](Operation *op) {
    auto t = dyn_cast_or_null<TransposeOp>(op);
    return t && llvm::equal(t.getPerm(), ArrayRef<int64_t>{0, 2, 3, 1});
  };
  Operation *def = w.getDefiningOp();
  if (isToLast(def))
    return def->getOperand(0);
  auto fusion = dyn_cast_or_null<FusionOp>(def);
  if (!fusion || fusion->getNumResults() != 1 || fusion->getNumOperands() != 1)
    return {};
  Block &body = fusion.getBody();
  Operation *t = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!isToLast(t) || t->getOperand(0) != body.getArgument(0) ||
      !llvm::all_of(body.without_terminator(), [&](Operation &op) {
        return &op == t || isa<ConstantOp>(op);
      }))
    return {};
  return fusion->getOperand(0);
}

/// The fewest output pixels (per image) of a 3x3 convolution that runs
/// Winograd's algorithm (28x28: oneDNN 2.6's F(2x2, 3x3) for one image, its
/// blocked activations reordered from and to NHWC, took about 0.65x the
/// direct kernel's time on ResNet-50's 56x56 and 28x28 layers alone
/// (bench/cpu_conv_onednn_versions.cpp WINO=1) and 0.79-0.84x in the
/// package, and was no faster on its 14x14 and 7x7 layers; batches above 1
/// were not measured).
constexpr int64_t kWinogradMinPixels = 28 * 28;

/// Whether the list parameter `name` of a convolution's `params` is all
/// ones (strides, dilations).
bool allOnes(const NamedAttrList &params, StringRef name) {
  auto a = dyn_cast_or_null<DenseI64ArrayAttr>(params.get(name));
  return a && llvm::all_of(a.asArrayRef(), [](int64_t v) { return v == 1; });
}

/// Whether the 2-D convolution `conv` (its library `params`, packed
/// weights when `packW`, then `epilogue`) runs Winograd's algorithm: a 3x3
/// window of stride and dilation 1, one group, channels in and out a
/// multiple of 16 (oneDNN's blocks), at least kWinogradMinPixels output
/// pixels per image, constant weights (transformed once, at load) and an
/// epilogue of a bias and ReLU at most.
bool runsWinograd(ConvOp conv, const NamedAttrList &params, bool packW,
                  const std::optional<Epilogue> &epilogue) {
  if (tensorType(conv.getResult()).getRank() != 4 || !packW)
    return false;
  bool last = conv.getLayout() == "nhwc";
  // [O, C, kh, kw] and [N, O, oh, ow], read channels first.
  SmallVector<int64_t> w = channelsFirstShape(conv.getOperand(1).getType(), last),
                       y = channelsFirstShape(conv.getResult().getType(), last);
  return w[2] == 3 && w[3] == 3 && allOnes(params, "strides") &&
         allOnes(params, "dilations") &&
         cast<IntegerAttr>(params.get("group")).getInt() == 1 &&
         w[1] % 16 == 0 && y[1] % 16 == 0 &&
         y[2] * y[3] >= kWinogradMinPixels &&
         (!epilogue || (!epilogue->residual &&
                        (epilogue->activation == EpilogueActivation::None ||
                         epilogue->activation == EpilogueActivation::Relu)));
}

/// The most output pixels (all images) of a convolution that runs on the
/// runtime's panels (runtime/lib/PanelConv.h, kMaxRows).
constexpr int64_t kPanelConvMaxRows = 64;

/// Whether the 2-D convolution `conv` (its library `params`, packed weights
/// when `packW`, then `epilogue`) runs on the runtime's panels (im2col, then
/// a GEMM streaming the weights, PanelConv.h): channels last, one group,
/// dilation 1, constant weights of at least kPanelMinElements, at most
/// kPanelConvMaxRows output pixels and an epilogue of a bias, a residual
/// and ReLU at most. That is a product whose time is reading its weights
/// from memory, each used by few pixels: ResNet-50's 7x7 stage (49 pixels,
/// 2 to 9 MB of weights a convolution), 15-30% faster each than oneDNN
/// 2.6's brgconv in the package.
bool runsConvOnPanels(ConvOp conv, const NamedAttrList &params, bool packW,
                      const std::optional<Epilogue> &epilogue) {
  if (tensorType(conv.getResult()).getRank() != 4 || !packW ||
      conv.getLayout() != "nhwc" ||
      cast<IntegerAttr>(params.get("group")).getInt() != 1 ||
      !allOnes(params, "dilations"))
    return false;
  // [O, C, kh, kw] and [N, O, oh, ow], read channels first.
  SmallVector<int64_t> w = channelsFirstShape(conv.getOperand(1).getType(),
                                              true),
                       y = channelsFirstShape(conv.getResult().getType(), true);
  return y[0] * y[2] * y[3] <= kPanelConvMaxRows &&
         w[0] * w[1] * w[2] * w[3] >= kPanelMinElements &&
         (!epilogue || epilogue->activation == EpilogueActivation::None ||
          epilogue->activation == EpilogueActivation::Relu);
}

/// Lowers `conv` to oneDNN when it qualifies.
void lowerConv(ConvOp conv, func::FuncOp graph) {
  std::optional<NamedAttrList> params = convLibraryParams(
      conv, [](Type t) { return t.isF32(); }, /*symmetricPads=*/false);
  if (!params)
    return;
  Builder b(conv.getContext());
  // A channels-last convolution reads constant channels-first weights as
  // they are (oneDNN packs them at load either way): no transposed copy.
  Value w = conv.getOperand(1);
  llvm::DenseSet<Operation *> loadTime = collectLoadTimeOps(graph);
  Operation *transpose = nullptr;
  if (conv.getLayout() == "nhwc")
    if (Value source = channelsFirstWeights(w))
      if (isPersistentValue(source, loadTime)) {
        transpose = w.getDefiningOp();
        w = source;
        params->append("w_layout", b.getStringAttr("oihw"));
      }
  bool packW = isPersistentValue(w, loadTime);
  params->append("pack_w", b.getBoolAttr(packW));
  std::optional<Epilogue> epilogue =
      convEpilogue(conv.getResult(), oneDnnAbility());
  StringRef algorithm = "direct";
  if (runsWinograd(conv, *params, packW, epilogue))
    algorithm = "winograd";
  else if (runsConvOnPanels(conv, *params, packW, epilogue))
    algorithm = "panels";
  params->append("algorithm", b.getStringAttr(algorithm));
  createLibraryCall(conv, epilogueFusion(conv, epilogue), "onednn.conv",
                    {{"x", conv.getOperand(0)}, {"w", w}},
                    epilogue ? &*epilogue : nullptr, false, false, 0, *params);
  if (transpose && transpose->use_empty())
    transpose->erase();
}

/// Lowers a kiln.max_pool or kiln.avg_pool (`pool`, whose layout is
/// `layout`, if any) to oneDNN's pooling when it qualifies (f32, static
/// shapes, 1 to 3 spatial dims, pads shorter than the window; an average
/// that counts the pads only where no window reaches past them).
template <typename PoolOp>
void lowerPool(PoolOp pool, std::optional<StringRef> layout) {
  constexpr bool isMax = std::is_same_v<PoolOp, MaxPoolOp>;
  RankedTensorType tx = tensorType(pool.getX()),
                   ty = tensorType(pool.getResult());
  int64_t rank = tx.getRank();
  size_t nsp = rank - 2;
  bool channelsLast = layout == "nhwc";
  if (!tx.getElementType().isF32() || rank < 3 || rank > 5 ||
      !tx.hasStaticShape() || !ty.hasStaticShape() ||
      tx.getNumElements() == 0 || ty.getNumElements() == 0 ||
      (layout && (!channelsLast || rank != 4)) ||
      pool.getResult().use_empty())
    return;
  bool includePad = false;
  if constexpr (!isMax)
    includePad = pool.getCountIncludePad() != 0;
  auto kernel = spatial(pool.getKernelShape(), nsp, 1);
  auto strides = spatial(pool.getStrides(), nsp, 1);
  auto dilations = spatial(pool.getDilations(), nsp, 1);
  auto pads = spatial(pool.getPads(), 2 * nsp, 0);
  if (!kernel || !strides || !dilations || !pads)
    return;
  for (size_t d = 0; d < nsp; ++d) {
    int64_t window = (*dilations)[d] * ((*kernel)[d] - 1) + 1;
    if ((*strides)[d] < 1 || (*dilations)[d] < 1 || (*pads)[d] < 0 ||
        (*pads)[nsp + d] < 0 || (*pads)[d] >= window ||
        (*pads)[nsp + d] >= window)
      return;
    // The last window's reach past the input and its begin pad (the end
    // pad the runtime gives oneDNN) must be the declared end pad when the
    // pads count.
    int64_t reach = (ty.getDimSize(d + (channelsLast ? 1 : 2)) - 1) *
                        (*strides)[d] +
                    window - tx.getDimSize(d + (channelsLast ? 1 : 2)) -
                    (*pads)[d];
    if (includePad && std::max<int64_t>(reach, 0) != (*pads)[nsp + d])
      return;
  }
  Builder b(pool.getContext());
  NamedAttrList params;
  params.append("dilations", b.getDenseI64ArrayAttr(*dilations));
  params.append("kernel_shape", b.getDenseI64ArrayAttr(*kernel));
  params.append("layout", b.getStringAttr(channelsLast ? "nhwc" : "nchw"));
  params.append("pads", b.getDenseI64ArrayAttr(*pads));
  params.append("strides", b.getDenseI64ArrayAttr(*strides));
  if (!isMax)
    params.append("count_include_pad", b.getI64IntegerAttr(includePad));
  createLibraryCall(pool, nullptr, isMax ? "onednn.max_pool" : "onednn.avg_pool",
                    {{"x", pool.getX()}}, nullptr, false, false, 0, params);
}

/// Lowers a kiln.gru_recurrence or kiln.lstm_recurrence to
/// "onednn.gru_recurrence" / "onednn.lstm_recurrence" when it qualifies
/// (f32 operands and results of static shapes); `pack_r` when the
/// recurrence weights are constant for the model's life (reordered once, at
/// load, for oneDNN's matmul of each step).
void lowerRecurrence(Operation *op, func::FuncOp graph) {
  bool lstm = isa<LSTMRecurrenceOp>(op);
  auto isF32 = [](Type t) {
    auto tensor = cast<RankedTensorType>(t);
    return tensor.hasStaticShape() && tensor.getElementType().isF32();
  };
  unsigned floats = lstm ? 5 : 4;
  if (!llvm::all_of(op->getResultTypes(), isF32) ||
      !llvm::all_of(TypeRange(op->getOperands().take_front(floats)), isF32))
    return;
  auto xw = tensorType(op->getOperand(0));
  if (xw.getNumElements() == 0)
    return;
  Builder b(op->getContext());
  NamedAttrList params;
  params.append("batch", b.getI64IntegerAttr(xw.getDimSize(1)));
  for (StringRef name : {"clip", "direction", "hidden_size"})
    params.append(name, op->getAttr(name));
  if (lstm)
    params.append("input_forget", op->getAttr("input_forget"));
  else
    params.append("linear_before_reset", op->getAttr("linear_before_reset"));
  params.append("pack_r", b.getBoolAttr(isPersistentValue(
                              op->getOperand(1), collectLoadTimeOps(graph))));
  params.append("seq", b.getI64IntegerAttr(xw.getDimSize(0)));
  SmallVector<std::pair<StringRef, Value>> operands = {
      {"xw", op->getOperand(0)},
      {"r", op->getOperand(1)},
      {lstm ? "p" : "rb", op->getOperand(2)},
      {"h0", op->getOperand(3)}};
  if (lstm)
    operands.push_back({"c0", op->getOperand(4)});
  if (op->getNumOperands() > floats)
    operands.push_back({"lengths", op->getOperand(floats)});
  createLibraryCall(op, nullptr,
                    lstm ? "onednn.lstm_recurrence" : "onednn.gru_recurrence",
                    operands, nullptr, false, false, 0, params);
}

/// The operand roles of a runtime library call of `op`.
SmallVector<StringRef> rolesOf(Operation *op) {
  if (isa<MatMulOp>(op))
    return {"a", "b"};
  return {"x", "w"};
}

struct LowerCpuPass
    : public PassWrapper<LowerCpuPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerCpuPass)

  StringRef getArgument() const final { return "kiln-lower-cpu"; }
  StringRef getDescription() const final {
    return "CPU target lowering: matmul and convolutions as oneDNN calls "
           "with their transposes and post-ops folded in (else the "
           "runtime's OpenBLAS-backed kernels), reference steps";
  }
  void runOnOperation() override {
    func::FuncOp graph = getOperation();
    if (graph.isExternal())
      return;
    Block &body = graph.getBody().front();
    // oneDNN calls, in program order (an epilogue's fusion comes later),
    // for graphs of static sizes: their primitives are made at load. Which
    // values are constant is asked afresh for each (lowering erases ops).
    auto module = graph->getParentOfType<mlir::ModuleOp>();
    bool staticSizes = !graph->hasAttr(kSizeSymbolsAttr) &&
                       !(module && module->hasAttr(kSizeRangeAttr));
    if (staticSizes) {
      SmallVector<Operation *> calls;
      for (Operation &op : body)
        if (isa<MatMulOp, ConvOp, MaxPoolOp, AvgPoolOp, GRURecurrenceOp,
                LSTMRecurrenceOp>(op))
          calls.push_back(&op);
      for (Operation *op : calls) {
        if (isa<GRURecurrenceOp, LSTMRecurrenceOp>(op))
          lowerRecurrence(op, graph);
        else if (auto mm = dyn_cast<MatMulOp>(op))
          lowerMatmul(mm, graph);
        else if (auto pool = dyn_cast<MaxPoolOp>(op))
          lowerPool(pool, pool.getLayout());
        else if (auto pool = dyn_cast<AvgPoolOp>(op))
          lowerPool(pool, std::nullopt);
        else
          lowerConv(cast<ConvOp>(op), graph);
      }
    }
    OpBuilder b(&getContext());
    llvm::StringMap<int> kernels; // Kernels of single ops, by stem.
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (isa<ConstantOp, FusionOp, LibraryCallOp, func::ReturnOp>(op))
        continue;
      // Kernels of single ops print their sizes as literals.
      std::optional<StringRef> stem =
          staticSizes ? cppOpKernelStem(&op) : std::nullopt;
      if (stem) {
        int &count = kernels[*stem];
        std::string name = "o" + std::to_string(count) + "_" + stem->str();
        if (emitCppOpKernel(&op, name)) {
          op.setAttr(kKernelAttr, b.getStringAttr(name));
          ++count;
          continue;
        }
      }
      if (isAliasingView(&op)) {
        op.setAttr(kAliasAttr, b.getUnitAttr());
        continue;
      }
      if (!isLibraryOp(&op) || op.getNumOperands() != 2) {
        op.setAttr(kReferenceAttr, b.getStringAttr("cpu"));
        continue;
      }
      b.setInsertionPoint(&op);
      StringRef name = op.getName().getStringRef();
      name.consume_front("kiln.");
      auto call = b.create<LibraryCallOp>(
          op.getLoc(), op.getResultTypes(), op.getOperands(),
          b.getStringAttr("runtime." + name.str()),
          b.getStrArrayAttr(rolesOf(&op)), b.getBoolAttr(false),
          b.getBoolAttr(false), b.getStringAttr("none"), b.getI64IntegerAttr(0),
          op.getAttrDictionary());
      op.replaceAllUsesWith(call);
      op.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createLowerCpuPass() {
  return std::make_unique<LowerCpuPass>();
}

} // namespace kiln
