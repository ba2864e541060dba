//===- ExprPrinter.cpp - Scalar ops as C expressions ----------------------===//
//
// This file implements the expression printer shared by the kernel printers
// and the kernel prelude it relies on. Every expression reproduces the
// reference runtime's scalar semantics (runtime/kernels/Elementwise*.cpp):
// wrapping integer arithmetic, integer division truncating toward zero with
// x / 0 = 0, both ONNX mod modes, NaN-propagating max/min, round half to
// even (nearbyint), ONNX cast rules, the erf and tanh forms of gelu, and
// f16/bf16 computed in float and rounded to nearest even once per op.
// Ops are matched by op type (isOp<kiln::AddOp>, KernelIR.h): every op of
// the elementwise family has one branch in printExpr.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"

#include "ir/KilnOps.h"

#include <cmath>
#include <cstdio>

namespace kiln {
namespace codegen {

namespace {

/// The unsigned type of the same width (for wrapping arithmetic).
std::string unsignedCType(ScalarType t) {
  switch (t) {
  case ScalarType::I64:
  case ScalarType::U64:
    return "uint64_t";
  case ScalarType::I32:
  case ScalarType::U32:
  // 16-bit operands would promote to int, whose products overflow: compute
  // in 32 bits and truncate.
  case ScalarType::I16:
  case ScalarType::U16:
    return "uint32_t";
  default:
    return "uint8_t";
  }
}

/// The name of a math function for the compute type: libm's `exp` for f64;
/// for float, the prelude's vectorizable `kiln_expf`/`kiln_erff` (libm's
/// calls keep loops scalar), else libm's `expf`.
std::string fn(llvm::StringRef name, ScalarType t) {
  if (t == ScalarType::F64)
    return name.str();
  if (name == "exp" || name == "erf")
    return ("kiln_" + name + "f").str();
  return (name + "f").str();
}

/// A literal of the compute type of `t`. The integer value is used only for
/// integer types; it is clamped, since `v` may be inf or NaN (a float
/// constant) and converting those to int64_t is undefined.
std::string lit(ScalarType t, double v) {
  int64_t i = 0;
  if (!std::isnan(v))
    i = v >= 9.2233720368547758e18    ? INT64_MAX
        : v <= -9.2233720368547758e18 ? INT64_MIN
                                      : static_cast<int64_t>(v);
  return printLiteral(t, v, i);
}

} // namespace

bool isScalarOp(mlir::OperationName op) {
  return op.hasTrait<OpTrait::Elementwise>();
}

std::string computeCType(ScalarType t) {
  switch (t) {
  case ScalarType::F32:
  case ScalarType::F16:
  case ScalarType::BF16:
    return "float";
  case ScalarType::F64:
    return "double";
  case ScalarType::I64:
    return "int64_t";
  case ScalarType::I32:
    return "int32_t";
  case ScalarType::I8:
    return "int8_t";
  case ScalarType::U8:
    return "uint8_t";
  case ScalarType::I16:
    return "int16_t";
  case ScalarType::U16:
    return "uint16_t";
  case ScalarType::U32:
    return "uint32_t";
  case ScalarType::U64:
    return "uint64_t";
  case ScalarType::Bool:
    return "bool";
  case ScalarType::F8E4M3FN:
  case ScalarType::F8E4M3FNUZ:
  case ScalarType::F8E5M2:
  case ScalarType::F8E5M2FNUZ:
    return "float";
  case ScalarType::I4:
  case ScalarType::I2:
    return "int8_t";
  case ScalarType::U4:
  case ScalarType::U2:
    return "uint8_t";
  }
  return "void";
}

std::string storageCType(ScalarType t) {
  if (t == ScalarType::F16)
    return "kiln_f16";
  if (t == ScalarType::BF16)
    return "kiln_bf16";
  if (isFloat8Type(t))
    return ("kiln_" + scalarTypeName(t)).str();
  return computeCType(t);
}

std::string printArgReduceStep(bool isMax, bool selectLast, bool isFloat,
                               llvm::StringRef indent) {
  std::string in = indent.str(), s;
  std::string better =
      std::string("v ") +
      (isMax ? (selectLast ? ">=" : ">") : (selectLast ? "<=" : "<")) +
      " kiln_best";
  if (isFloat) {
    s += in + "const bool vn = v != v, bn = kiln_best != kiln_best;\n";
    s += in + "const bool better = bn ? " +
         std::string(selectLast ? "vn" : "false") + " : (vn || " + better +
         ");\n";
  } else {
    s += in + "const bool better = " + better + ";\n";
  }
  s += in + "if (better) {\n" + in + "  kiln_best = v;\n" + in +
       "  kiln_arg = r;\n" + in + "}\n";
  return s;
}

std::string printLiteral(ScalarType t, double floatValue, int64_t intValue) {
  if (t == ScalarType::Bool)
    return intValue ? "true" : "false";
  if (isFloatType(t)) {
    bool isDouble = t == ScalarType::F64;
    if (std::isnan(floatValue))
      return isDouble ? "(double)NAN" : "NAN";
    if (std::isinf(floatValue)) {
      std::string inf = isDouble ? "(double)INFINITY" : "INFINITY";
      return floatValue < 0 ? "(-" + inf + ")" : inf;
    }
    char buf[64];
    if (isDouble)
      std::snprintf(buf, sizeof(buf), "%.17g", floatValue);
    else
      std::snprintf(buf, sizeof(buf), "%.9g",
                    static_cast<double>(static_cast<float>(floatValue)));
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
      s += ".0";
    if (!isDouble)
      s += "f";
    return s[0] == '-' ? "(" + s + ")" : s;
  }
  std::string ct = computeCType(t);
  if (t == ScalarType::I64 && intValue == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return "((" + ct + ")" + std::to_string(intValue) + "LL)";
}

std::string roundTo(ScalarType t, const std::string &expr) {
  if (t == ScalarType::F16)
    return "kiln_round_f16(" + expr + ")";
  if (t == ScalarType::BF16)
    return "kiln_round_bf16(" + expr + ")";
  // float8: rounded through the storage type; the sub-byte integers wrap
  // modulo 2^bits (ONNX's Cast).
  if (isFloat8Type(t) || isSubByteIntType(t))
    return ("kiln_round_" + scalarTypeName(t) + "(").str() + expr + ")";
  return expr;
}

/// The C expression of the scalar op `op` before rounding to `resultType`
/// (printScalarOp), or "" when the printer has no entry for `op`.
static std::string printExpr(mlir::OperationName op, ScalarType resultType,
                             llvm::ArrayRef<ScalarType> argTypes,
                             llvm::ArrayRef<std::string> args,
                             const ScalarAttrs &attrs) {
  ScalarType t = argTypes.empty() ? resultType : argTypes[0];
  if (isOp<WhereOp>(op))
    t = argTypes[1];
  const std::string ct = computeCType(t), ut = unsignedCType(t);
  const bool isFloat = isFloatType(t), isInt = isIntType(t);
  const std::string a = args.empty() ? "" : args[0];
  const std::string b = args.size() > 1 ? args[1] : "";
  const std::string zero = lit(t, 0), one = lit(t, 1);
  auto num = [&](const char *name, double dflt) {
    return lit(t, attrs.getNumber(name, dflt));
  };
  auto wrap = [&](const char *sym) {
    return "(" + ct + ")((" + ut + ")" + a + " " + sym + " (" + ut + ")" + b +
           ")";
  };

  std::string e;
  // Elementwise, binary.
  if (isOp<AddOp, SubOp, MulOp>(op)) {
    const char *sym = isOp<AddOp>(op) ? "+" : isOp<SubOp>(op) ? "-" : "*";
    e = isInt ? wrap(sym) : "(" + a + " " + sym + " " + b + ")";
  } else if (isOp<DivOp>(op)) {
    e = isInt ? "kiln_idiv(" + a + ", " + b + ")" : "(" + a + " / " + b + ")";
  } else if (isOp<PowOp>(op)) {
    e = isInt ? "kiln_ipow(" + a + ", " + b + ")"
              : fn("pow", t) + "(" + a + ", " + b + ")";
  } else if (isOp<MaxOp, MinOp>(op)) {
    e = "kiln_" + op.stripDialect().str() + "(" + a + ", " + b + ")";
  } else if (isOp<ModOp>(op)) {
    std::string python = attrs.getNumber("fmod", 0) != 0 ? "0" : "1";
    e = (isFloat ? "kiln_fmod(" : "kiln_imod(") + a + ", " + b + ", " + python +
        ")";
  } else if (isOp<BitwiseAndOp, BitwiseOrOp, BitwiseXorOp>(op)) {
    const char *sym = isOp<BitwiseAndOp>(op)  ? "&"
                      : isOp<BitwiseOrOp>(op) ? "|"
                                              : "^";
    e = "(" + ct + ")(" + a + " " + sym + " " + b + ")";
  } else if (isOp<BitShiftOp>(op)) {
    std::string dir = attrs.getString("direction", "left");
    bool left = dir == "left" || dir == "LEFT" || dir == "Left";
    e = (left ? "kiln_shl(" : "kiln_shr(") + a + ", " + b + ")";
  } else if (isOp<AndOp>(op)) {
    e = "(" + a + " && " + b + ")";
  } else if (isOp<OrOp>(op)) {
    e = "(" + a + " || " + b + ")";
  } else if (isOp<XorOp>(op)) {
    e = "(" + a + " != " + b + ")";
  } else if (isOp<PReluOp>(op)) {
    e = "(" + a + " < " + zero + " ? " + b + " * " + a + " : " + a + ")";
    // Comparisons.
  } else if (isOp<EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp>(
                 op)) {
    const char *sym = isOp<EqualOp>(op)       ? "=="
                      : isOp<LessOp>(op)      ? "<"
                      : isOp<LessEqualOp>(op) ? "<="
                      : isOp<GreaterOp>(op)   ? ">"
                                              : ">=";
    e = "(" + a + " " + sym + " " + b + ")";
    // Elementwise, unary.
  } else if (isOp<NegOp>(op)) {
    e = isInt ? "(" + ct + ")((" + ut + ")0 - (" + ut + ")" + a + ")"
              : "(-" + a + ")";
  } else if (isOp<AbsOp>(op)) {
    if (isFloat)
      e = fn("fabs", t) + "(" + a + ")";
    else if (isUnsignedIntType(t))
      e = a;
    else
      e = "(" + a + " < " + zero + " ? (" + ct + ")((" + ut + ")0 - (" + ut +
          ")" + a + ") : " + a + ")";
  } else if (isOp<SignOp>(op)) {
    e = "(" + a + " > " + zero + " ? " + one + " : (" + a + " < " + zero +
        " ? " + lit(t, -1) + " : " + a + "))";
  } else if (isOp<ReluOp>(op)) {
    e = "(" + a + " < " + zero + " ? " + zero + " : " + a + ")";
  } else if (isOp<ReciprocalOp>(op)) {
    e = "(" + one + " / " + a + ")";
  } else if (isOp<RoundOp>(op)) {
    e = fn("nearbyint", t) + "(" + a + ")"; // Half to even.
  } else if (isOp<ExpOp, LogOp, SqrtOp, FloorOp, CeilOp, SinOp, CosOp, TanOp,
                  AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp,
                  AtanhOp, ErfOp, TanhOp>(op)) {
    // erf from bf16 to bf16: every input is one of 65536 values, and the
    // CUDA file tabulates the results (CudaPrinter.cpp); the CPU prelude's
    // kiln_erf_bf16 calls kiln_erff.
    if (isOp<ErfOp>(op) && t == ScalarType::BF16 &&
        resultType == ScalarType::BF16)
      e = "kiln_erf_bf16(" + a + ")";
    else if (isOp<ExpOp>(op) && t != ScalarType::F64 &&
             attrs.getNumber(kNonPositiveArgAttr, 0) != 0)
      e = "kiln_expf_nonpositive(" + a + ")";
    else if (isOp<ErfOp>(op) && t != ScalarType::F64 &&
             attrs.getNumber(kPlusOneUseAttr, 0) != 0)
      e = "kiln_erff_absolute(" + a + ")";
    else
      e = fn(op.stripDialect(), t) + "(" + a + ")";
  } else if (isOp<NotOp>(op)) {
    e = "(!" + a + ")";
  } else if (isOp<BitwiseNotOp>(op)) {
    e = "(" + ct + ")(~" + a + ")";
  } else if (isOp<SigmoidOp>(op)) {
    e = "kiln_sigmoid(" + a + ")";
  } else if (isOp<SoftplusOp>(op)) {
    e = "kiln_softplus(" + a + ")";
  } else if (isOp<SoftsignOp>(op)) {
    e = "(" + a + " / (" + one + " + " + fn("fabs", t) + "(" + a + ")))";
  } else if (isOp<MishOp>(op)) {
    e = "(" + a + " * " + fn("tanh", t) + "(kiln_softplus(" + a + ")))";
  } else if (isOp<HardSwishOp>(op)) {
    e = "(" + a + " * kiln_clamp01(" + a + " / " + lit(t, 6) + " + " +
        lit(t, 0.5) + "))";
  } else if (isOp<LeakyReluOp>(op)) {
    e = "(" + a + " < " + zero + " ? " + num("alpha", 0.01) + " * " + a +
        " : " + a + ")";
  } else if (isOp<EluOp>(op)) {
    e = "(" + a + " < " + zero + " ? " + num("alpha", 1.0) + " * (" +
        fn("exp", t) + "(" + a + ") - " + one + ") : " + a + ")";
  } else if (isOp<CeluOp>(op)) {
    std::string alpha = num("alpha", 1.0);
    e = "((" + a + " > " + zero + " ? " + a + " : " + zero +
        ") + kiln_neg_part(" + alpha + " * (" + fn("exp", t) + "(" + a + " / " +
        alpha + ") - " + one + ")))";
  } else if (isOp<SeluOp>(op)) {
    std::string alpha = num("alpha", 1.67326319217681884765625);
    std::string gamma = num("gamma", 1.05070102214813232421875);
    e = "(" + a + " <= " + zero + " ? " + gamma + " * (" + alpha + " * " +
        fn("exp", t) + "(" + a + ") - " + alpha + ") : " + gamma + " * " + a +
        ")";
  } else if (isOp<HardSigmoidOp>(op)) {
    e = "kiln_clamp01(" + num("alpha", 0.2) + " * " + a + " + " +
        num("beta", 0.5) + ")";
  } else if (isOp<ThresholdedReluOp>(op)) {
    e = "(" + a + " > " + num("alpha", 1.0) + " ? " + a + " : " + zero + ")";
  } else if (isOp<ShrinkOp>(op)) {
    e = "kiln_shrink(" + a + ", " +
        printLiteral(ScalarType::F64, attrs.getNumber("bias", 0.0), 0) + ", " +
        printLiteral(ScalarType::F64, attrs.getNumber("lambd", 0.5), 0) + ")";
  } else if (isOp<GeluOp>(op)) {
    if (attrs.getString("approximate", "none") == "tanh")
      e = "(" + lit(t, 0.5) + " * " + a + " * (" + one + " + " + fn("tanh", t) +
          "(" + lit(t, 0.7978845608028654) + " * (" + a + " + " +
          lit(t, 0.044715) + " * " + a + " * " + a + " * " + a + "))))";
    else
      // 1 + erf: an absolute error bound suffices (markPlusOneErfs).
      e = "(" + lit(t, 0.5) + " * " + a + " * (" + one + " + " +
          (t == ScalarType::F64 ? "erf" : "kiln_erff_absolute") + "(" + a +
          " * " + lit(t, 0.7071067811865476) + ")))";
  } else if (isOp<SwishOp>(op)) {
    e = "(" + a + " * kiln_sigmoid(" + num("alpha", 1.0) + " * " + a + "))";
  } else if (isOp<IsNaNOp>(op)) {
    e = "(" + a + " != " + a + ")";
  } else if (isOp<IsInfOp>(op)) {
    bool pos = attrs.getNumber("detect_positive", 1) != 0;
    bool neg = attrs.getNumber("detect_negative", 1) != 0;
    std::string p = "(" + a + " == " + lit(t, INFINITY) + ")";
    std::string n = "(" + a + " == " + lit(t, -INFINITY) + ")";
    e = pos && neg ? "(" + p + " || " + n + ")" : pos ? p : neg ? n : "false";
  } else if (isOp<CastOp>(op)) {
    ScalarType to = resultType;
    if (to == t)
      e = a;
    else if (to == ScalarType::Bool)
      e = "(" + a + " != " + zero + ")";
    else if (isIntType(to) && isFloat)
      e = "kiln_f2i<" + computeCType(to) + ">(" + a + ")";
    else
      e = "(" + computeCType(to) + ")" + a;
    // Selection.
  } else if (isOp<WhereOp>(op)) {
    e = "(" + a + " ? " + b + " : " + args[2] + ")";
  }
  return e;
}

std::string printScalarOpUnrounded(mlir::OperationName op,
                                   ScalarType resultType,
                                   llvm::ArrayRef<ScalarType> argTypes,
                                   llvm::ArrayRef<std::string> args,
                                   const ScalarAttrs &attrs) {
  std::string e = printExpr(op, resultType, argTypes, args, attrs);
  assert(!e.empty() && "printScalarOp: no printer entry for this op");
  return e;
}

std::string printScalarOp(mlir::OperationName op, ScalarType resultType,
                          llvm::ArrayRef<ScalarType> argTypes,
                          llvm::ArrayRef<std::string> args,
                          const ScalarAttrs &attrs) {
  return roundTo(resultType,
                 printScalarOpUnrounded(op, resultType, argTypes, args, attrs));
}

bool hasScalarPrinterEntry(mlir::OperationName op) {
  const ScalarType f = ScalarType::F32;
  return !printExpr(op, f, {f, f, f}, {"a", "b", "c"}, ScalarAttrs()).empty();
}

/// The pieces of the kernel prelude. The f16/bf16 conversions are integer
/// code on the host (vectorizable, exact) and cvt instructions on the device
/// (the integer code, unrolled, made NVRTC 30x slower on f16 kernels). The
/// common part marks its functions
/// with KILN_FN (`static inline` for C++, `__device__ __forceinline__` for
/// CUDA, not static: NVRTC warns about unused static functions) and the storage types' conversions with KILN_HD
/// (nothing for C++, `__device__ ` for CUDA); the C++ text is the prelude
/// kernels.cpp always had.
namespace prelude {
const char *const kCommon = R"PRELUDE(struct kiln_f16 {
  uint16_t bits;
  kiln_f16() = default;
  KILN_HDkiln_f16(float f) : bits(kiln_float_to_f16_bits(f)) {}
  KILN_HDoperator float() const { return kiln_f16_bits_to_float(bits); }
};
struct kiln_bf16 {
  uint16_t bits;
  kiln_bf16() = default;
  KILN_HDkiln_bf16(float f) : bits(kiln_float_to_bf16_bits(f)) {}
  KILN_HDoperator float() const { return kiln_bits_float((uint32_t)bits << 16); }
};
KILN_FN float kiln_round_f16(float x) { return (float)kiln_f16(x); }

// float8 (DType.cpp's conversions): round to nearest even; a value beyond
// the largest finite one becomes inf (e5m2) or NaN (the fn and fnuz
// formats). `inf` says the format has infinities, `fnuz` that NaN is 0x80.
KILN_FN uint8_t kiln_float_to_f8(float x, int manBits, int bias, int fnuz,
                                 int inf) {
  uint32_t u = kiln_float_bits(x);
  uint32_t sign = (u >> 24) & 0x80u, absx = u & 0x7fffffffu;
  uint32_t nan = fnuz ? 0x80u : (inf ? 0x7eu : 0x7fu);
  uint32_t over = inf ? (sign | 0x7cu) : nan;
  if (absx > 0x7f800000u)
    return (uint8_t)nan;
  if (absx == 0x7f800000u)
    return (uint8_t)over;
  int code = 0, e32 = (int)(absx >> 23);
  if (e32 != 0) {
    int exp = e32 - 127, minNorm = 1 - bias;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u, q = 0;
    int shift = (exp < minNorm ? minNorm : exp) - manBits - (exp - 23);
    if (shift <= 24) {
      q = mant >> shift;
      uint32_t rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
      if (rest > half || (rest == half && (q & 1u)))
        ++q;
    }
    code = exp < minNorm ? (int)q
                         : ((exp - minNorm + 1) << manBits) +
                               (int)(q - (1u << manBits));
    if (code > (fnuz ? 0x7f : (inf ? 0x7b : 0x7e)))
      return (uint8_t)over;
  }
  if (code == 0 && fnuz)
    return 0;
  return (uint8_t)(sign | (uint32_t)code);
}
KILN_FN float kiln_f8_to_float(uint8_t bits, int manBits, int bias, int fnuz,
                               int inf) {
  int expBits = 7 - manBits;
  int e = (bits >> manBits) & ((1 << expBits) - 1);
  int m = bits & ((1 << manBits) - 1);
  uint32_t sign = (uint32_t)(bits & 0x80u) << 24;
  if (fnuz ? bits == 0x80 : (inf ? e == (1 << expBits) - 1 && m != 0
                                 : (bits & 0x7f) == 0x7f))
    return kiln_bits_float(0x7fc00000u);
  if (inf && e == (1 << expBits) - 1)
    return kiln_bits_float(sign | 0x7f800000u);
  float unit = kiln_bits_float((uint32_t)(128 - bias - manBits) << 23);
  float v = e == 0 ? (float)m * unit
                   : kiln_bits_float(((uint32_t)(e - bias + 127) << 23) |
                                     ((uint32_t)m << (23 - manBits)));
  return sign ? -v : v;
}
struct kiln_f8e4m3fn {
  uint8_t bits;
  kiln_f8e4m3fn() = default;
  KILN_HDkiln_f8e4m3fn(float f) : bits(kiln_float_to_f8(f, 3, 7, 0, 0)) {}
  KILN_HDoperator float() const { return kiln_f8_to_float(bits, 3, 7, 0, 0); }
};
KILN_FN float kiln_round_f8e4m3fn(float x) { return (float)kiln_f8e4m3fn(x); }
struct kiln_f8e4m3fnuz {
  uint8_t bits;
  kiln_f8e4m3fnuz() = default;
  KILN_HDkiln_f8e4m3fnuz(float f) : bits(kiln_float_to_f8(f, 3, 8, 1, 0)) {}
  KILN_HDoperator float() const { return kiln_f8_to_float(bits, 3, 8, 1, 0); }
};
KILN_FN float kiln_round_f8e4m3fnuz(float x) { return (float)kiln_f8e4m3fnuz(x); }
struct kiln_f8e5m2 {
  uint8_t bits;
  kiln_f8e5m2() = default;
  KILN_HDkiln_f8e5m2(float f) : bits(kiln_float_to_f8(f, 2, 15, 0, 1)) {}
  KILN_HDoperator float() const { return kiln_f8_to_float(bits, 2, 15, 0, 1); }
};
KILN_FN float kiln_round_f8e5m2(float x) { return (float)kiln_f8e5m2(x); }
struct kiln_f8e5m2fnuz {
  uint8_t bits;
  kiln_f8e5m2fnuz() = default;
  KILN_HDkiln_f8e5m2fnuz(float f) : bits(kiln_float_to_f8(f, 2, 16, 1, 0)) {}
  KILN_HDoperator float() const { return kiln_f8_to_float(bits, 2, 16, 1, 0); }
};
KILN_FN float kiln_round_f8e5m2fnuz(float x) { return (float)kiln_f8e5m2fnuz(x); }
// The sub-byte integers, a byte per element: wrapped modulo 2^bits.
KILN_FN int8_t kiln_round_i4(int x) {
  return (int8_t)((int8_t)(uint8_t)((unsigned)x << 4) >> 4);
}
KILN_FN uint8_t kiln_round_u4(int x) { return (uint8_t)(x & 15); }
KILN_FN int8_t kiln_round_i2(int x) {
  return (int8_t)((int8_t)(uint8_t)((unsigned)x << 6) >> 6);
}
KILN_FN uint8_t kiln_round_u2(int x) { return (uint8_t)(x & 3); }

// Scalar helpers with the reference runtime's semantics.
template <class T> struct kiln_unsigned { typedef T type; };
template <> struct kiln_unsigned<int64_t> { typedef uint64_t type; };
template <> struct kiln_unsigned<int32_t> { typedef uint32_t type; };
template <> struct kiln_unsigned<int16_t> { typedef uint32_t type; };
template <> struct kiln_unsigned<uint16_t> { typedef uint32_t type; };
template <> struct kiln_unsigned<int8_t> { typedef uint8_t type; };
template <class T> KILN_FN T kiln_lowest() {
  typedef typename kiln_unsigned<T>::type U;
  return (T)-1 < (T)0 ? (T)((U)1 << (sizeof(T) * 8 - 1)) : (T)0;
}
template <class T> KILN_FN T kiln_highest() { return (T)~kiln_lowest<T>(); }
template <class T> KILN_FN T kiln_max(T a, T b) {
  return a != a ? a : (b != b ? b : (a < b ? b : a));
}
template <class T> KILN_FN T kiln_min(T a, T b) {
  return a != a ? a : (b != b ? b : (b < a ? b : a));
}
template <class T> KILN_FN T kiln_neg_part(T x) { return x < T(0) ? x : T(0); }
template <class T> KILN_FN T kiln_clamp01(T v) {
  return v != v ? v : (v < T(0) ? T(0) : (v > T(1) ? T(1) : v));
}
template <class T> KILN_FN T kiln_idiv(T a, T b) {
  typedef typename kiln_unsigned<T>::type U;
  if (b == 0)
    return 0;
  if ((T)-1 < (T)0 && b == (T)-1)
    return (T)((U)0 - (U)a);
  return (T)(a / b);
}
template <class T> KILN_FN T kiln_imod(T a, T b, int python) {
  if (b == 0 || ((T)-1 < (T)0 && b == (T)-1))
    return 0;
  T r = (T)(a % b);
  if ((T)-1 < (T)0 && python && r != 0 && ((r < 0) != (b < 0)))
    r = (T)(r + b);
  return r;
}
KILN_FN float kiln_fmod(float a, float b, int python) {
  float r = fmodf(a, b);
  if (python && r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}
KILN_FN double kiln_fmod(double a, double b, int python) {
  double r = fmod(a, b);
  if (python && r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}
template <class T> KILN_FN T kiln_ipow(T a, T b) {
  typedef typename kiln_unsigned<T>::type U;
  if (b < 0) {
    if (a == 1)
      return 1;
    if ((T)-1 < (T)0 && a == (T)-1)
      return (b % 2) ? (T)-1 : (T)1;
    return 0;
  }
  U result = 1, base = (U)a;
  for (T e = b; e > 0; e = (T)(e >> 1)) {
    if (e & 1)
      result = (U)(result * base);
    base = (U)(base * base);
  }
  return (T)result;
}
template <class T> KILN_FN T kiln_shl(T a, T b) {
  typedef typename kiln_unsigned<T>::type U;
  if (b < 0 || b >= (T)(sizeof(T) * 8))
    return 0;
  return (T)(U)((U)a << b);
}
template <class T> KILN_FN T kiln_shr(T a, T b) {
  if (b < 0 || b >= (T)(sizeof(T) * 8))
    return ((T)-1 < (T)0 && a < 0) ? (T)-1 : (T)0;
  return (T)(a >> b);
}
KILN_FN float kiln_sigmoid(float x) {
  // -|x| is at most 0 (or NaN): exp without its overflow fix.
  float e = kiln_expf_nonpositive(-fabsf(x));
  float d = 1.0f / (1.0f + e);
  return x >= 0.0f ? d : e * d;
}
KILN_FN double kiln_sigmoid(double x) {
  if (x >= 0.0)
    return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}
KILN_FN float kiln_softplus(float x) {
  return (x > 0.0f ? x : 0.0f) + log1pf(expf(-fabsf(x)));
}
KILN_FN double kiln_softplus(double x) {
  return (x > 0.0 ? x : 0.0) + log1p(exp(-fabs(x)));
}
template <class T> KILN_FN T kiln_shrink(T x, double bias, double lambd) {
  double v = (double)x;
  if (v < -lambd)
    return (T)(v + bias);
  if (v > lambd)
    return (T)(v - bias);
  return (T)0;
}
template <class T> KILN_FN T kiln_f2i(double x) {
  if (x != x)
    return (T)0;
  double d = trunc(x);
  if ((T)-1 > (T)0 && d >= 9.2233720368547758e18 && d < 1.8446744073709552e19)
    return (T)(uint64_t)d;
  if (d >= 9.2233720368547758e18)
    return (T)INT64_MAX;
  if (d <= -9.2233720368547758e18)
    return (T)INT64_MIN;
  return (T)(int64_t)d;
}
)PRELUDE";
} // namespace prelude

std::string markQualifiers(llvm::StringRef text, llvm::StringRef fnQualifier,
                           llvm::StringRef hostDeviceQualifier) {
  std::string s = text.str();
  auto replaceAll = [&](llvm::StringRef from, llvm::StringRef to) {
    for (size_t pos = s.find(from.str()); pos != std::string::npos;
         pos = s.find(from.str(), pos + to.size()))
      s.replace(pos, from.size(), to.str());
  };
  replaceAll("KILN_FN", fnQualifier);
  replaceAll("KILN_HD", hostDeviceQualifier);
  return s;
}

std::string scalarHelperPrelude(llvm::StringRef fnQualifier,
                                llvm::StringRef hostDeviceQualifier) {
  return markQualifiers(prelude::kCommon, fnQualifier, hostDeviceQualifier);
}

} // namespace codegen
} // namespace kiln
