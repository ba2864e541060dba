//===- LibraryEpilogues.cpp - What a library call's epilogue folds --------===//
//
// This file implements the epilogue matchers of the targets' lowering passes
// (LibraryEpilogues.h): a fusion right after a GEMM or a convolution that only
// adds a bias (and a residual) and applies a ReLU, or (GEMM) GELU after the
// bias (its tanh form, also computed in f32 between two casts, as mixed
// precision leaves it; or its exact erf form where the library has it), is
// computed by the library call itself. The matchers read the fusion's body;
// they change nothing.
//
//===----------------------------------------------------------------------===//

#include "passes/LibraryEpilogues.h"
#include "ir/KilnOps.h"
#include "passes/PassDetail.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

using namespace mlir;

namespace kiln {

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

} // namespace

/// The name of an epilogue for kiln.library_call.
std::string epilogueName(const Epilogue &e) {
  std::string s = e.bias ? "bias" : "";
  if (e.residual)
    s += s.empty() ? "residual" : "_residual";
  static const char *const kNames[] = {"",           "relu",    "gelu_tanh",
                                       "gelu_erf",   "sigmoid", "tanh",
                                       "hard_swish", "relu6"};
  if (e.activation != EpilogueActivation::None)
    s += (s.empty() ? "" : "_") +
         std::string(kNames[static_cast<int>(e.activation)]);
  return s.empty() ? "none" : s;
}

namespace {

/// The activation `op` applies, when `ability` folds it.
EpilogueActivation activationOf(Operation &op, const EpilogueAbility &ability) {
  if (isa<ReluOp>(op))
    return EpilogueActivation::Relu;
  if (!ability.moreActivations)
    return EpilogueActivation::None;
  if (isa<SigmoidOp>(op))
    return EpilogueActivation::Sigmoid;
  if (isa<TanhOp>(op))
    return EpilogueActivation::Tanh;
  if (isa<HardSwishOp>(op))
    return EpilogueActivation::HardSwish;
  return EpilogueActivation::None;
}

/// Matches a fusion whose body applies adds of other operands and then at
/// most one activation (activationOf) to the operand `source`, and yields
/// that; `classify` sorts each added operand into the epilogue (false: no
/// match).
std::optional<Epilogue>
matchEpilogue(FusionOp fusion, Value source, const EpilogueAbility &ability,
              llvm::function_ref<bool(Value, Epilogue &)> classify) {
  if (fusion.getNumResults() != 1 ||
      fusion.getResult(0).getType() != source.getType())
    return std::nullopt;
  Block &body = fusion.getBody();
  auto operandOf = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body
               ? fusion.getOperand(arg.getArgNumber())
               : Value();
  };
  Value cur;
  for (BlockArgument arg : body.getArguments())
    if (fusion.getOperand(arg.getArgNumber()) == source)
      cur = arg;
  Epilogue e;
  e.source = source;
  // ReLU6's max(x, 0), whose min(., 6) comes next.
  bool relu6Max = false;
  // `op` is `kind` of `cur` and a splat constant `bound`.
  auto boundedBy = [&](Operation &op, auto kind, double bound) {
    using OpT = decltype(kind);
    if (!isa<OpT>(op))
      return false;
    Value a = op.getOperand(0), b = op.getOperand(1);
    Value other = a == cur ? b : b == cur ? a : Value();
    std::optional<double> splat =
        other ? passes::getSplatValue(other) : std::nullopt;
    return splat && *splat == bound;
  };
  for (Operation &op : body.without_terminator()) {
    if (isa<ConstantOp>(op))
      continue; // ReLU6's bounds; a constant elsewhere fails below
    if (e.activation != EpilogueActivation::None || !cur ||
        op.getNumResults() != 1 ||
        op.getResult(0).getType() != source.getType())
      return std::nullopt;
    if (relu6Max) {
      if (!boundedBy(op, MinOp(), 6.0))
        return std::nullopt;
      e.activation = EpilogueActivation::Relu6;
      cur = op.getResult(0);
      continue;
    }
    if (ability.relu6 && boundedBy(op, MaxOp(), 0.0) &&
        op.getResult(0).hasOneUse()) {
      relu6Max = true;
      cur = op.getResult(0);
      continue;
    }
    EpilogueActivation act = activationOf(op, ability);
    if (act != EpilogueActivation::None && op.getOperand(0) == cur) {
      e.activation = act;
    } else if (isa<AddOp>(op) &&
               (op.getOperand(0) == cur) != (op.getOperand(1) == cur)) {
      Value other = operandOf(op.getOperand(op.getOperand(0) == cur));
      if (!other || other == source || !classify(other, e))
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    cur = op.getResult(0);
  }
  if ((relu6Max && e.activation != EpilogueActivation::Relu6) ||
      body.getTerminator()->getOperand(0) != cur ||
      (!e.bias && e.activation == EpilogueActivation::None && !e.residual))
    return std::nullopt;
  // Every operand of the fusion is the source or folded into the call.
  for (Value operand : fusion.getOperands())
    if (operand != source && operand != e.bias && operand != e.residual)
      return std::nullopt;
  return e;
}

/// The ops of GELU of `x` as exporters write it: the tanh approximation
/// `x * (0.5 * (1 + tanh(c * (x + 0.044715 * x^3))))` with c = sqrt(2/pi),
/// x^3 as pow(x, 3) or products of x; or (`erfForm`) ONNX's exact form
/// `x * (0.5 * (1 + erf(x / sqrt(2))))`, the division also as a product with
/// 1/sqrt(2); operands of each add and mul in either order, and the 0.5 also
/// as `(0.5 * x) * (...)` or `(x * (...)) * 0.5`. Returns the ops of the
/// match (empty when `y` is not that).
SmallVector<Operation *> matchGelu(Value y, Value x, bool erfForm) {
  SmallVector<Operation *> ops;
  auto def = [&](Value v, auto tag) {
    using OpT = decltype(tag);
    auto op = v.getDefiningOp<OpT>();
    if (op)
      ops.push_back(op);
    return op;
  };
  // A splat constant equal to `want` rounded to its element type (a bf16
  // model's 0.044715 is 0.0446777).
  auto isScalar = [](Value v, double want) {
    std::optional<double> got = passes::getSplatValue(v);
    if (!got)
      return false;
    Type e = cast<ShapedType>(v.getType()).getElementType();
    double rel = e.isBF16() ? 0x1p-8 : e.isF16() ? 0x1p-11 : 1e-6;
    return std::abs(*got - want) <= rel * std::abs(want);
  };
  // v = c * other (either order): the other operand, or null.
  auto scaled = [&](Value v, double c) -> Value {
    auto mul = def(v, MulOp());
    if (!mul)
      return Value();
    if (isScalar(mul.getOperand(0), c))
      return mul.getOperand(1);
    if (isScalar(mul.getOperand(1), c))
      return mul.getOperand(0);
    return Value();
  };
  // v = a op b with one operand equal to `known`: the other, or null.
  auto otherOf = [](Operation *op, Value known) -> Value {
    if (!op)
      return Value();
    if (op->getOperand(0) == known)
      return op->getOperand(1);
    if (op->getOperand(1) == known)
      return op->getOperand(0);
    return Value();
  };
  auto isCube = [&](Value v) {
    if (auto pow = def(v, PowOp()))
      return pow.getOperand(0) == x && isScalar(pow.getOperand(1), 3.0);
    auto mul = def(v, MulOp());
    Value square = otherOf(mul, x);
    auto inner = square ? def(square, MulOp()) : MulOp();
    return inner && inner.getOperand(0) == x && inner.getOperand(1) == x;
  };
  // erf(x / sqrt(2)) or erf(x * (1 / sqrt(2))).
  auto isErfOfScaledX = [&](Value t) {
    auto erf = t ? def(t, ErfOp()) : ErfOp();
    if (!erf)
      return false;
    if (auto div = def(erf.getOperand(), DivOp()))
      return div.getOperand(0) == x &&
             isScalar(div.getOperand(1), 1.4142135623730951);
    return scaled(erf.getOperand(), 0.7071067811865476) == x;
  };
  // tanh(c * (x + 0.044715 * x^3)).
  auto isTanhOfCubic = [&](Value t) {
    auto tanh = t ? def(t, TanhOp()) : TanhOp();
    Value inner =
        tanh ? scaled(tanh.getOperand(), 0.7978845608028654) : Value();
    Value cube = otherOf(inner ? def(inner, AddOp()) : nullptr, x);
    Value cubed = cube ? scaled(cube, 0.044715) : Value();
    return cubed && isCube(cubed);
  };
  // 1 + tanh(...) or 1 + erf(...).
  auto isOnePlusTanh = [&](Value v) {
    auto add = def(v, AddOp());
    if (!add)
      return false;
    Value t = isScalar(add.getOperand(0), 1.0)   ? add.getOperand(1)
              : isScalar(add.getOperand(1), 1.0) ? add.getOperand(0)
                                                 : Value();
    return erfForm ? isErfOfScaledX(t) : isTanhOfCubic(t);
  };
  auto outer = def(y, MulOp());
  if (!outer)
    return {};
  // x * (0.5 * (1 + tanh(...))) or (0.5 * x) * (1 + tanh(...)).
  bool matched = false;
  if (Value half = otherOf(outer, x)) {
    Value onePlus = scaled(half, 0.5);
    matched = onePlus && isOnePlusTanh(onePlus);
  } else {
    for (int i = 0; i < 2 && !matched; ++i) {
      size_t mark = ops.size();
      Value halfX = scaled(outer->getOperand(i), 0.5);
      matched = halfX == x && isOnePlusTanh(outer->getOperand(1 - i));
      if (!matched)
        ops.resize(mark);
    }
  }
  // (x * (1 + ...)) * 0.5.
  if (!matched) {
    ops.clear();
    Value product = scaled(y, 0.5);
    Value onePlus = otherOf(product ? def(product, MulOp()) : nullptr, x);
    matched = onePlus && isOnePlusTanh(onePlus);
  }
  return matched ? ops : SmallVector<Operation *>();
}

} // namespace

/// The epilogue cuBLASLt computes for a single GEMM's result `mm` in its
/// only user: a bias vector of the last dim's size and/or ReLU, or GELU
/// (matchGelu) after an optional bias.
std::optional<Epilogue> matmulEpilogue(Value mm,
                                       const EpilogueAbility &ability) {
  if (!mm.hasOneUse())
    return std::nullopt;
  auto fusion = dyn_cast<FusionOp>(*mm.getUsers().begin());
  if (!fusion || fusion.getNumOperands() > (ability.matmulResidual ? 3u : 2u))
    return std::nullopt;
  RankedTensorType mt = tensorType(mm);
  auto isBias = [&](Value other) {
    RankedTensorType bt = tensorType(other);
    return bt.getElementType() == mt.getElementType() && bt.getRank() >= 1 &&
           bt.getShape().back() == mt.getShape().back() &&
           bt.getNumElements() == mt.getShape().back();
  };
  if (std::optional<Epilogue> e =
          matchEpilogue(fusion, mm, ability, [&](Value other, Epilogue &e) {
            if (ability.matmulResidual && other.getType() == mt &&
                !e.residual) {
              e.residual = other;
              return true;
            }
            if (e.bias || !isBias(other))
              return false;
            e.bias = other;
            return true;
          }))
    return e;
  // GELU of mm or of mm + bias: every op of the body is part of it
  // (constants aside), and it is what the fusion yields.
  if (!ability.gelu || fusion.getNumOperands() > 2 ||
      fusion.getNumResults() != 1 || fusion.getResult(0).getType() != mt)
    return std::nullopt;
  Block &body = fusion.getBody();
  Value x;
  Epilogue e;
  e.source = mm;
  size_t counted = 0;
  for (BlockArgument arg : body.getArguments()) {
    Value operand = fusion.getOperand(arg.getArgNumber());
    if (operand == mm)
      x = arg;
  }
  if (!x)
    return std::nullopt;
  if (fusion.getNumOperands() == 2) {
    // The first op (constants aside) adds the bias to mm.
    Operation *first = nullptr;
    for (Operation &op : body.without_terminator())
      if (!isa<ConstantOp>(op)) {
        first = &op;
        break;
      }
    auto add = dyn_cast_or_null<AddOp>(first);
    if (!add || (add.getOperand(0) != x) == (add.getOperand(1) != x))
      return std::nullopt;
    Value other = add.getOperand(add.getOperand(0) == x ? 1 : 0);
    auto arg = dyn_cast<BlockArgument>(other);
    if (!arg || arg.getOwner() != &body ||
        !isBias(fusion.getOperand(arg.getArgNumber())))
      return std::nullopt;
    e.bias = fusion.getOperand(arg.getArgNumber());
    x = add.getResult();
    counted = 1;
  }
  // Mixed precision (kiln-autocast) computes the GELU of a low-precision
  // GEMM in f32 (its pow is f32-class) between two casts: cuBLASLt computes
  // it in f32 too, from the unrounded bias add.
  Value y = body.getTerminator()->getOperand(0);
  if (x.hasOneUse())
    if (auto up = dyn_cast<CastOp>(*x.getUsers().begin()))
      if (auto down = y.getDefiningOp<CastOp>())
        if (tensorType(up.getResult()).getElementType().isF32() &&
            down.getResult().getType() == mt) {
          x = up.getResult();
          y = down.getOperand();
          counted += 2;
        }
  SmallVector<Operation *> gelu = matchGelu(y, x, /*erfForm=*/false);
  e.activation = EpilogueActivation::GeluTanh;
  if (gelu.empty() && ability.geluErf) {
    gelu = matchGelu(y, x, /*erfForm=*/true);
    e.activation = EpilogueActivation::GeluErf;
  }
  llvm::SmallPtrSet<Operation *, 16> distinct(gelu.begin(), gelu.end());
  size_t ops = llvm::count_if(body.without_terminator(), [](Operation &op) {
    return !isa<ConstantOp>(op);
  });
  if (distinct.empty() || distinct.size() + counted != ops)
    return std::nullopt;
  return e;
}

/// The epilogue cuDNN's fused convolution computes for `conv` in its only
/// user: ReLU (unless optional for the library) after at most one
/// per-channel bias and one residual.
std::optional<Epilogue> convEpilogue(Value conv,
                                     const EpilogueAbility &ability) {
  if (!conv.hasOneUse())
    return std::nullopt;
  auto fusion = dyn_cast<FusionOp>(*conv.getUsers().begin());
  if (!fusion)
    return std::nullopt;
  RankedTensorType yt = tensorType(conv);
  bool channelsLast = false;
  if (auto op = conv.getDefiningOp<ConvOp>())
    channelsLast = op.getLayout() == "nhwc";
  int64_t channels = yt.getShape()[channelsLast ? yt.getRank() - 1 : 1];
  std::optional<Epilogue> e =
      matchEpilogue(fusion, conv, ability, [&](Value other, Epilogue &e) {
        RankedTensorType ot = tensorType(other);
        // Channels first: [C, 1, ...] or [1, C, 1, ...]; channels last:
        // any shape of C elements ending in C.
        bool perChannel =
            ot.getElementType() == yt.getElementType() &&
            ot.getNumElements() == channels && ot.getRank() >= 1 &&
            (channelsLast
                 ? ot.getShape().back() == channels
                 : (ot.getRank() == yt.getRank() - 1 ||
                    (ot.getRank() == yt.getRank() && ot.getShape()[0] == 1)) &&
                       ot.getShape()[ot.getRank() - (yt.getRank() - 1)] ==
                           channels);
        if (ot == yt && !e.residual)
          e.residual = other;
        else if (perChannel && !e.bias)
          e.bias = other;
        else
          return false;
        return true;
      });
  if (!e ||
      (ability.convNeedsRelu && e->activation != EpilogueActivation::Relu))
    return std::nullopt;
  return e;
}

} // namespace kiln
