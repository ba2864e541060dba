//===- ConvTransposeAsMatmul.cpp - Up-sampling ConvTranspose as a GEMM ----===//
//
// This file implements `kiln-cuda-conv-transpose-as-matmul`, one of the CUDA
// target's layout passes: a kiln.conv_transpose whose stride equals its
// kernel size (no padding, dilation 1, no output padding, one group: the 2x2
// stride-2 up-sampling of U-Nets and decoders) is one GEMM and a shuffle.
// Each output pixel then receives exactly one tap,
//
//   y[n, m, s*K + k] = sum_c x[n, c, s] * w[c, m, k]     (per spatial dim),
//
// so with P = the input's pixels and T = the kernel's taps,
//
//   x [N, C, S...] --reshape--> [N, C, P]
//   w [C, M, K...] --reshape--> [C, M*T] --transpose--> wt [M*T, C]
//   g = matmul(wt, x)                                    [N, M*T, P]
//   g --reshape--> [N, M, K..., S...] --transpose--> [N, M, S1, K1, S2, K2,
//   ...]
//     --reshape--> y [N, M, S1*K1, S2*K2, ...]
//
// The GEMM runs on cuBLASLt (tensor cores in f16/bf16), the weight's
// transpose once (at load or compile time: the weight is a constant), and
// the shuffle is a generated kernel that also takes the bias the tracer adds
// after the op (and a channels-last consumer's transpose). The generated
// direct kernel (CudaConvTransposeKernel.cpp) keeps every other
// configuration. `KILN_CUDA_CONV_TRANSPOSE_GEMM=0` at compile time switches
// the pass off (to compare).
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaTarget.h"

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace kiln {

namespace {

struct ConvTransposeAsMatmul : public OpRewritePattern<ConvTransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvTransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto xt = dyn_cast<RankedTensorType>(op.getX().getType());
    auto wt = dyn_cast<RankedTensorType>(op.getW().getType());
    auto yt = dyn_cast<RankedTensorType>(op.getResult().getType());
    if (!xt || !wt || !yt || !xt.hasStaticShape() || !wt.hasStaticShape() ||
        !yt.hasStaticShape() || xt.getRank() < 3 || xt.getRank() > 5 ||
        wt.getRank() != xt.getRank() || op.getGroup() != 1 ||
        xt.getNumElements() == 0 || yt.getNumElements() == 0)
      return rewriter.notifyMatchFailure(op, "not a static single-group op");
    int64_t rank = xt.getRank(), nsp = rank - 2;
    ArrayRef<int64_t> taps = wt.getShape().drop_front(2);
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
    if ((int64_t)strides.size() != nsp || (int64_t)dilations.size() != nsp ||
        !llvm::equal(strides, taps) ||
        !llvm::all_of(dilations, [](int64_t d) { return d == 1; }) ||
        !llvm::all_of(op.getPads(), [](int64_t p) { return p == 0; }) ||
        !llvm::all_of(op.getOutputPadding(), [](int64_t p) { return p == 0; }))
      return rewriter.notifyMatchFailure(op, "the taps overlap or are cut");

    int64_t batch = xt.getDimSize(0), channels = xt.getDimSize(1);
    int64_t outChannels = wt.getDimSize(1), pixels = 1, tapCount = 1;
    ArrayRef<int64_t> in = xt.getShape().drop_front(2);
    for (int64_t d = 0; d < nsp; ++d) {
      pixels *= in[d];
      tapCount *= taps[d];
    }
    Location loc = op.getLoc();
    passes::BuildScope scope(rewriter, op);
    auto build = [&](StringRef name, ValueRange operands,
                     ArrayRef<NamedAttribute> attrs = {}) {
      return passes::buildKilnValue(rewriter, loc, name, operands, attrs);
    };
    auto reshape = [&](Value v, ArrayRef<int64_t> shape) {
      return v ? build("kiln.reshape",
                       {v, passes::buildI64Vector(rewriter, loc, shape)},
                       {rewriter.getNamedAttr("allowzero",
                                              rewriter.getI64IntegerAttr(0))})
               : Value();
    };
    auto transpose = [&](Value v, ArrayRef<int64_t> perm) {
      return v ? build("kiln.transpose", {v},
                       {rewriter.getNamedAttr(
                           "perm", rewriter.getDenseI64ArrayAttr(perm))})
               : Value();
    };

    // [M*T, C] x [N, C, P] -> [N, M*T, P], read as [N, M, K..., S...];
    // y's dims are then n, m and (s_d, k_d) for each spatial dim d.
    Value gemm =
        build("kiln.matmul",
              {transpose(reshape(op.getW(), {channels, outChannels * tapCount}),
                         {1, 0}),
               reshape(op.getX(), {batch, channels, pixels})});
    SmallVector<int64_t> split = {batch, outChannels}, perm = {0, 1};
    split.append(taps.begin(), taps.end());
    split.append(in.begin(), in.end());
    for (int64_t d = 0; d < nsp; ++d) {
      perm.push_back(2 + nsp + d);
      perm.push_back(2 + d);
    }
    Value y = reshape(transpose(reshape(gemm, split), perm), yt.getShape());
    if (!y || y.getType() != op.getResult().getType())
      return scope.fail(op, "the GEMM form did not build");
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct ConvTransposeAsMatmulPass
    : public PassWrapper<ConvTransposeAsMatmulPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvTransposeAsMatmulPass)

  StringRef getArgument() const final {
    return "kiln-cuda-conv-transpose-as-matmul";
  }
  StringRef getDescription() const final {
    return "Run a kiln.conv_transpose whose stride equals its kernel (an "
           "up-sampling layer) as one GEMM and a shuffle";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<KilnDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ConvTransposeAsMatmul>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    passes::applyPatternsOutsideFusions(getOperation(), frozen);
  }
};

} // namespace

std::unique_ptr<Pass> createConvTransposeAsMatmulPass() {
  return std::make_unique<ConvTransposeAsMatmulPass>();
}

} // namespace kiln
