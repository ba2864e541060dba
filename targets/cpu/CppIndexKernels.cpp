//===- CppIndexKernels.cpp - C++ kernels that index by position -----------===//
//
// This file implements the CPU target's kernels of the single top-level ops
// that read or write at run-time positions or by a run-time diagonal, so
// that they run as generated code instead of the runtime's reference
// kernels (issue 20: masks, classifiers' decisions, losses' scatters):
//
//  - kiln.trilu: per matrix row, the kept run of columns copied and the rest
//    zeroed (the reference's memset), the diagonal k read at run time;
//  - kiln.hardmax: one walk per line along the axis, 1 at the first maximum
//    (a NaN wins), 0 elsewhere;
//  - kiln.scatter_elements: x copied, then each update applied in the
//    reference's order, so that duplicate indices combine (none: the last
//    wins; add, mul, max, min) exactly as the reference kernel does;
//  - kiln.scatter_nd: x copied, then each tuple's slice of updates applied
//    in order, alike;
//  - kiln.gather_nd: each index tuple's slice copied (batch_dims as the
//    reference's);
//  - kiln.grid_sample (f32 or f64): per output point, its pixel position
//    and each dim's taps and weights (nearest, linear or cubic; zeros,
//    border or reflection padding), then per channel the sum over every
//    combination of taps, in double and in the reference's order
//    (runtime/kernels/GridSample.cpp), so the results are bit-identical.
//
// The index checks, offsets, scatter combinations and the hardmax step are
// codegen/IndexPrinter.h's, shared with the CUDA kernels
// (targets/cuda/CudaIndexKernels.cpp). An index outside [-size, size) makes
// the kernel return 1, which the wrapper reports as the run's error naming
// the node (CppOpKernels.cpp's convention); sizes are literals.
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "codegen/IndexPrinter.h"
#include "ir/KilnOps.h"
#include "targets/cpu/CppKernel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln {
namespace {

/// What a kernel does at an index out of range: the wrapper reports it.
const char *const kBadIndex = "return 1; // an index out of range: a bad input";

/// `v` as a literal.
std::string lit(int64_t v) { return std::to_string(v); }

/// The product of `dims`.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// The element type of the static-shaped `t`, or nullopt.
std::optional<codegen::ScalarType> scalarOf(RankedTensorType t) {
  return t ? codegen::scalarTypeOf(t.getElementType()) : std::nullopt;
}

/// `axis` counted from the end when negative, or -1 when out of range.
int64_t normalizedAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

/// Row-major strides of `shape`.
std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The body of a kernel with nothing to compute (an empty tensor).
std::string emptyBody(Operation *op) {
  std::string s;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    s += "  (void)in" + std::to_string(i) + ";\n";
  return s + "  (void)out0; // an empty tensor\n  return 0;\n";
}

/// True for a scatter whose element type and reduction the kernel takes:
/// combining needs arithmetic (not bool, not the 8-bit floats).
bool scatterTypeOk(codegen::ScalarType st, StringRef reduction) {
  if (!codegen::isScatterReduction(reduction))
    return false;
  return reduction == "none" ||
         (st != codegen::ScalarType::Bool && !codegen::isFloat8Type(st));
}

/// The statement storing the update `update` into `target` for
/// `reduction`, as the reference's combine: computed in the computed type,
/// stored in the element type (`none` copies the element as it is).
std::string scatterStore(codegen::ScalarType st, StringRef reduction,
                         const std::string &target, const std::string &update,
                         const std::string &indent) {
  if (reduction == "none")
    return indent + target + " = " + update + ";\n";
  std::string compute = codegen::computeCType(st);
  return indent + target + " = (" + codegen::storageCType(st) + ")(" +
         codegen::printScatterCombine(reduction, "(" + compute + ")" + target,
                                      "(" + compute + ")" + update) +
         ");\n";
}

std::optional<CppKernel> emitTrilu(TriluOp trilu, StringRef name) {
  RankedTensorType xt = cppStaticType(trilu.getX()), kt = cppStaticType(trilu.getK());
  if (!xt || !kt || !scalarOf(xt) || xt.getRank() < 2 ||
      kt.getNumElements() != 1)
    return std::nullopt;
  int64_t rows = xt.getDimSize(xt.getRank() - 2),
          cols = xt.getDimSize(xt.getRank() - 1);
  bool upper = trilu.getUpper() != 0;
  std::string what = std::string(upper ? "upper" : "lower") + " triangle of [" +
                     lit(rows) + ", " + lit(cols) +
                     "] matrices, the diagonal k read at run time";
  if (xt.getNumElements() == 0)
    return makeCppOpKernel(trilu, name, cppKernelParams(trilu), emptyBody(trilu),
                           what);
  // Beyond +-(rows + cols) every row is kept or zeroed whole: clamping k
  // there keeps r + k from overflowing.
  std::string bound = lit(rows + cols), c = lit(cols);
  std::string body =
      "  const int64_t k = in1[0] < -" + bound + " ? -" + bound +
      " : in1[0] > " + bound + " ? " + bound + " : in1[0];\n" +
      "  for (int64_t row = 0; row < " + lit(xt.getNumElements() / cols) +
      "; ++row) {\n" + "    const int64_t r = row % " + lit(rows) + ";\n" +
      "    // Columns c with c - r " + (upper ? ">=" : "<=") +
      " k are kept: those " + (upper ? "from" : "before") + " split.\n" +
      "    int64_t split = r + k" + (upper ? "" : " + 1") + ";\n" +
      "    split = split < 0 ? 0 : split > " + c + " ? " + c + " : split;\n" +
      "    const auto *src = in0 + row * " + c + ";\n" +
      "    auto *dst = out0 + row * " + c + ";\n";
  std::string head = "sizeof(*dst) * split",
              tail = "sizeof(*dst) * (" + c + " - split)";
  if (upper)
    body += "    std::memset(dst, 0, " + head + ");\n" +
            "    std::memcpy(dst + split, src + split, " + tail + ");\n";
  else
    body += "    std::memcpy(dst, src, " + head + ");\n" +
            "    std::memset(dst + split, 0, " + tail + ");\n";
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(trilu, name, cppKernelParams(trilu), body, what);
}

std::optional<CppKernel> emitHardmax(HardmaxOp hardmax, StringRef name) {
  RankedTensorType xt = cppStaticType(hardmax.getX());
  std::optional<codegen::ScalarType> st = scalarOf(xt);
  if (!st || !codegen::isFloatType(*st) || codegen::isFloat8Type(*st) ||
      xt.getRank() < 1)
    return std::nullopt;
  int64_t axis = normalizedAxis(hardmax.getAxis(), xt.getRank());
  if (axis < 0)
    return std::nullopt;
  ArrayRef<int64_t> shape = xt.getShape();
  int64_t len = shape[axis], inner = product(shape.drop_front(axis + 1)),
          lines = product(shape.take_front(axis)) * inner;
  std::string what = "hardmax along axis " + lit(axis) + " of " + lit(len) +
                     ": 1 at each line's first maximum (a NaN wins)";
  if (xt.getNumElements() == 0)
    return makeCppOpKernel(hardmax, name, cppKernelParams(hardmax), emptyBody(hardmax),
                           what);
  std::string compute = codegen::computeCType(*st);
  std::string storage = codegen::storageCType(*st);
  std::string in = lit(inner), body;
  // Parallel once the walks cover a few pages, as the fused kernels.
  if (lines > 1 && xt.getNumElements() >= 32768)
    body += "  #pragma omp parallel for\n";
  body +=
      "  for (int64_t kiln_i = 0; kiln_i < " + lit(lines) + "; ++kiln_i) {\n";
  body += "    const int64_t kiln_base = (kiln_i / " + in + ") * " +
          lit(len * inner) + " + kiln_i % " + in + ";\n";
  body += "    " + compute + " kiln_best = -INFINITY;\n";
  body += "    int64_t kiln_arg = 0;\n";
  body += "    for (int64_t r = 0; r < " + lit(len) + "; ++r) {\n";
  body += "      const " + compute + " v = (" + compute +
          ")in0[kiln_base + r * " + in + "];\n";
  body += codegen::printHardmaxStep("      ");
  body += "    }\n";
  body += "    for (int64_t r = 0; r < " + lit(len) + "; ++r)\n";
  body += "      out0[kiln_base + r * " + in + "] = " + storage +
          "(r == kiln_arg ? 1.0f : 0.0f);\n";
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(hardmax, name, cppKernelParams(hardmax), body, what);
}

std::optional<CppKernel> emitScatterElements(ScatterElementsOp scatter,
                                             StringRef name) {
  RankedTensorType xt = cppStaticType(scatter.getX()),
                   it = cppStaticType(scatter.getIndices()),
                   ut = cppStaticType(scatter.getUpdates());
  std::optional<codegen::ScalarType> st = scalarOf(xt);
  StringRef reduction = scatter.getReduction();
  if (!st || !it || !ut || !scalarOf(it) || it.getShape() != ut.getShape() ||
      it.getRank() != xt.getRank() || xt.getRank() < 1 ||
      !scatterTypeOk(*st, reduction))
    return std::nullopt;
  int64_t axis = normalizedAxis(scatter.getAxis(), xt.getRank());
  if (axis < 0)
    return std::nullopt;
  for (int64_t d = 0; d < xt.getRank(); ++d)
    if (d != axis && it.getDimSize(d) > xt.getDimSize(d))
      return std::nullopt;
  int64_t total = xt.getNumElements(), count = it.getNumElements();
  std::string what = "scatter_elements of " + lit(count) +
                     " updates along axis " + lit(axis) + ", reduction " +
                     reduction.str() + ", applied in order";
  // An index is checked even where x is empty (the reference's error).
  if (total == 0 && count == 0)
    return makeCppOpKernel(scatter, name, cppKernelParams(scatter), emptyBody(scatter),
                           what);
  std::string body =
      "  std::memcpy(out0, in0, sizeof(*out0) * " + lit(total) + ");\n";
  if (count > 0) {
    body += "  for (long long kiln_u = 0; kiln_u < " + lit(count) +
            "; ++kiln_u) {\n";
    body += "    long long kiln_idx = (long long)in1[kiln_u];\n";
    body += codegen::printCheckedIndex("kiln_idx", xt.getDimSize(axis),
                                       kBadIndex, "    ");
    body += codegen::printElementOffset(it.getShape(), xt.getShape(), axis,
                                        "kiln_u", "kiln_idx");
    body += scatterStore(*st, reduction, "out0[kiln_x]", "in2[kiln_u]", "    ");
    body += "  }\n";
  } else {
    body += "  (void)in1;\n  (void)in2;\n";
  }
  body += "  return 0;\n";
  return makeCppOpKernel(scatter, name, cppKernelParams(scatter), body, what);
}

std::optional<CppKernel> emitScatterND(ScatterNDOp scatter, StringRef name) {
  RankedTensorType xt = cppStaticType(scatter.getX()),
                   it = cppStaticType(scatter.getIndices()),
                   ut = cppStaticType(scatter.getUpdates());
  std::optional<codegen::ScalarType> st = scalarOf(xt);
  StringRef reduction = scatter.getReduction();
  if (!st || !it || !ut || !scalarOf(it) || it.getRank() < 1 ||
      xt.getRank() < 1 || !scatterTypeOk(*st, reduction))
    return std::nullopt;
  int64_t m = it.getDimSize(it.getRank() - 1);
  if (m > xt.getRank())
    return std::nullopt;
  ArrayRef<int64_t> xs = xt.getShape();
  // The updates: [indices' dims but the last..., x's dims after m...].
  SmallVector<int64_t> expected(it.getShape().drop_back());
  expected.append(xs.begin() + m, xs.end());
  if (ut.getShape() != ArrayRef<int64_t>(expected))
    return std::nullopt;
  int64_t tuples = product(it.getShape().drop_back()),
          slice = product(xs.drop_front(m)), total = xt.getNumElements();
  std::string what = "scatter_nd of " + lit(tuples) + " slices of " +
                     lit(slice) + ", reduction " + reduction.str() +
                     ", applied in order";
  if (total == 0 && tuples == 0)
    return makeCppOpKernel(scatter, name, cppKernelParams(scatter), emptyBody(scatter),
                           what);
  std::vector<int64_t> strides = rowMajorStrides(xs);
  std::string body =
      "  std::memcpy(out0, in0, sizeof(*out0) * " + lit(total) + ");\n";
  body += "  for (long long kiln_t = 0; kiln_t < " + lit(tuples) +
          "; ++kiln_t) {\n";
  body += codegen::printTupleOffset("kiln_t", xs.take_front(m),
                                    ArrayRef<int64_t>(strides).take_front(m),
                                    kBadIndex, "    ");
  body += "    const auto *src = in2 + kiln_t * " + lit(slice) + ";\n";
  body += "    auto *dst = out0 + kiln_off;\n";
  if (reduction == "none") {
    body += "    std::memcpy(dst, src, sizeof(*dst) * " + lit(slice) + ");\n";
  } else {
    body += "    for (int64_t e = 0; e < " + lit(slice) + "; ++e)\n";
    body += scatterStore(*st, reduction, "dst[e]", "src[e]", "      ");
  }
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(scatter, name, cppKernelParams(scatter), body, what);
}

std::optional<CppKernel> emitGatherND(GatherNDOp gather, StringRef name) {
  RankedTensorType xt = cppStaticType(gather.getX()),
                   it = cppStaticType(gather.getIndices()),
                   yt = cppStaticType(gather.getResult());
  if (!scalarOf(xt) || !scalarOf(it) || !yt || it.getRank() < 1)
    return std::nullopt;
  int64_t b = gather.getBatchDims(), r = xt.getRank(), q = it.getRank();
  if (b < 0 || b >= std::min(r, q))
    return std::nullopt;
  int64_t m = it.getDimSize(q - 1);
  ArrayRef<int64_t> xs = xt.getShape(), is = it.getShape();
  if (m > r - b || xs.take_front(b) != is.take_front(b))
    return std::nullopt;
  int64_t tuples = product(is.drop_back()),
          tuplesPerBatch = product(is.slice(b, q - 1 - b)),
          slice = product(xs.drop_front(b + m)),
          batchElems = product(xs.drop_front(b));
  std::string what = "gather_nd of " + lit(m) + "-index tuples, batch_dims " +
                     lit(b) + ", slices of " + lit(slice);
  // Tuples are checked even when their slices are empty (the reference's
  // error).
  if (tuples == 0)
    return makeCppOpKernel(gather, name, cppKernelParams(gather), emptyBody(gather),
                           what);
  std::vector<int64_t> strides = rowMajorStrides(xs);
  // Tuple t of batch t / tuplesPerBatch selects a slice of that batch.
  std::string body = "  for (long long kiln_t = 0; kiln_t < " + lit(tuples) +
                     "; ++kiln_t) {\n";
  body += "    const long long kiln_b = kiln_t / " + lit(tuplesPerBatch) +
          "; // the batch\n";
  body += codegen::printTupleOffset("kiln_t", xs.slice(b, m),
                                    ArrayRef<int64_t>(strides).slice(b, m),
                                    kBadIndex, "    ");
  body += "    std::memcpy(out0 + kiln_t * " + lit(slice) +
          ", in0 + kiln_b * " + lit(batchElems) +
          " + kiln_off, sizeof(*out0) * " + lit(slice) + ");\n";
  body += "  }\n  return 0;\n";
  return makeCppOpKernel(gather, name, cppKernelParams(gather), body, what);
}

/// The geometry of a grid_sample kernel: its options and sizes.
struct GridSampleGeometry {
  StringRef mode, padding;
  bool alignCorners;
  std::vector<int64_t> dims; // the image's spatial dims
  int64_t taps;              // per dim: 1 nearest, 2 linear, 4 cubic
};

/// Statements (at four spaces) that compute `double pos[n]`, the pixel
/// position of one output point from its normalized coordinates `coords`
/// (the last entry is the first spatial dim), as the reference's position().
std::string gridSamplePosition(const GridSampleGeometry &g) {
  bool nearest = g.mode == "nearest";
  std::string s = "    for (int d = 0; d < kiln_n; ++d) {\n";
  s += "      const double len = (double)kiln_dims[d];\n";
  s += "      const double v = (double)coords[kiln_n - 1 - d];\n";
  s += g.alignCorners ? "      double x = (v + 1) / 2.0 * (len - 1);\n"
                      : "      double x = ((v + 1) * len - 1) / 2.0;\n";
  if (nearest)
    s += "      x = std::nearbyint(x); // ties to even\n";
  if (g.padding == "border")
    s += "      if (x < kiln_lo[d] || x > kiln_hi[d]) {\n"
         "        x = x < 0.0 ? 0.0 : x;\n"
         "        x = len - 1 < x ? len - 1 : x;\n"
         "      }\n";
  else if (g.padding == "reflection")
    s += "      if (x < kiln_lo[d] || x > kiln_hi[d])\n"
         "        x = reflect(x, kiln_lo[d], kiln_hi[d]);\n";
  if (nearest)
    s += "      x = std::trunc(x);\n";
  s += "      // Far outside for any image (NaN too), where the integer\n"
       "      // conversions are defined.\n"
       "      pos[d] = x != x ? -1e15 : x < -1e15 ? -1e15 : 1e15 < x ? 1e15 : "
       "x;\n";
  return s + "    }\n";
}

/// Statements (at four spaces) that fill `idx[n][taps]` and `w[n][taps]`,
/// each dim's taps and weights around `pos`, as the reference's sample().
std::string gridSampleTaps(const GridSampleGeometry &g) {
  std::string s = "    for (int d = 0; d < kiln_n; ++d) {\n";
  if (g.mode == "nearest")
    return s + "      idx[d][0] = tap((int64_t)pos[d], d);\n"
               "      w[d][0] = 1.0;\n    }\n";
  s += "      const double base = std::floor(pos[d]), t = pos[d] - base;\n";
  s += "      const int64_t i0 = (int64_t)base;\n";
  if (g.mode == "linear")
    return s + "      idx[d][0] = tap(i0, d);\n"
               "      idx[d][1] = tap(i0 + 1, d);\n"
               "      w[d][0] = 1 - t;\n      w[d][1] = t;\n    }\n";
  // Keys' cubic convolution, alpha -0.75.
  s += "      for (int j = 0; j < 4; ++j)\n"
       "        idx[d][j] = tap(i0 - 1 + j, d);\n";
  s += "      const double a = -0.75;\n";
  s += "      auto far = [&](double e) {\n"
       "        return ((a * e - 5 * a) * e + 8 * a) * e - 4 * a;\n"
       "      };\n";
  s += "      auto near = [&](double e) {\n"
       "        return ((a + 2) * e - (a + 3)) * e * e + 1;\n"
       "      };\n";
  s += "      w[d][0] = far(t + 1);\n      w[d][1] = near(t);\n"
       "      w[d][2] = near(1 - t);\n      w[d][3] = far(2 - t);\n";
  return s + "    }\n";
}

/// The helpers of a grid_sample kernel (at two spaces): reflect (for
/// reflection padding) and tap, the index to read for integer position i
/// of dim d or -1 for a zero, as the reference's Sampler.
std::string gridSampleHelpers(const GridSampleGeometry &g) {
  std::string s;
  if (g.padding == "reflection")
    s += "  // Reflects v into [lo, hi] by the nearer border until inside.\n"
         "  auto reflect = [](double v, double lo, double hi) {\n"
         "    const double range = hi - lo;\n"
         "    if (range <= 0)\n      return lo;\n"
         "    if (v < lo) {\n"
         "      const double dv = lo - v, n = std::floor(dv / range);\n"
         "      const double r = dv - n * range;\n"
         "      return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;\n    }\n"
         "    if (v > hi) {\n"
         "      const double dv = v - hi, n = std::floor(dv / range);\n"
         "      const double r = dv - n * range;\n"
         "      return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;\n    }\n"
         "    return v;\n  };\n";
  s += "  // The index to read for position i of dim d, or -1 for a zero.\n";
  s += "  auto tap = [&](int64_t i, int d) -> int64_t {\n";
  s += "    const int64_t size = kiln_dims[d];\n";
  s += "    if (i >= 0 && i < size)\n      return i;\n";
  if (g.padding == "zeros")
    s += "    return -1;\n";
  else if (g.padding == "border")
    s += "    return i < 0 ? 0 : size - 1;\n";
  else
    s += "    const int64_t r = (int64_t)reflect((double)i, kiln_lo[d], "
         "kiln_hi[d]);\n"
         "    return r < 0 ? 0 : r > size - 1 ? size - 1 : r;\n";
  return s + "  };\n";
}

/// `{a, b, ...}`.
template <typename T> std::string braced(ArrayRef<T> values) {
  std::string s = "{";
  for (auto [i, v] : llvm::enumerate(values)) {
    std::ostringstream os;
    os.precision(17);
    os << v;
    s += (i ? ", " : "") + os.str();
  }
  return s + "}";
}

std::optional<CppKernel> emitGridSample(GridSampleOp op, StringRef name) {
  RankedTensorType xt = cppStaticType(op.getX()), gt = cppStaticType(op.getGrid()),
                   yt = cppStaticType(op.getResult());
  auto isF32OrF64 = [](RankedTensorType t) {
    return t && (t.getElementType().isF32() || t.getElementType().isF64());
  };
  int64_t rank = xt ? xt.getRank() : 0;
  if (!isF32OrF64(xt) || !isF32OrF64(gt) || !yt || rank < 3 ||
      gt.getRank() != rank || gt.getDimSize(rank - 1) != rank - 2 ||
      gt.getDimSize(0) != xt.getDimSize(0) ||
      !llvm::is_contained({"nearest", "linear", "cubic"}, op.getMode()) ||
      !llvm::is_contained({"zeros", "border", "reflection"},
                          op.getPaddingMode()))
    return std::nullopt;
  GridSampleGeometry g{op.getMode(), op.getPaddingMode(),
                       op.getAlignCorners() != 0,
                       std::vector<int64_t>(xt.getShape().drop_front(2)),
                       op.getMode() == "nearest"  ? 1
                       : op.getMode() == "linear" ? 2
                                                  : 4};
  int64_t n = rank - 2, batch = xt.getDimSize(0), channels = xt.getDimSize(1),
          image = product(g.dims), points = product(gt.getShape().slice(1, n));
  std::string dims = braced(ArrayRef<int64_t>(g.dims));
  dims.front() = '[';
  dims.back() = ']';
  std::string what = "grid_sample of " + lit(channels) + "-channel images of " +
                     dims + " at " + lit(points) + " points, mode " +
                     g.mode.str() + ", padding " + g.padding.str() +
                     ", align_corners " + lit(g.alignCorners) +
                     "; in double, as the reference";
  if (yt.getNumElements() == 0)
    return makeCppOpKernel(op, name, cppKernelParams(op), emptyBody(op), what);
  std::string body;
  if (image == 0) { // Every point reads zeros.
    body = "  (void)in0;\n  (void)in1;\n  for (int64_t i = 0; i < " +
           lit(yt.getNumElements()) + "; ++i)\n    out0[i] = 0;\n  return 0;\n";
    return makeCppOpKernel(op, name, cppKernelParams(op), body, what);
  }
  std::vector<double> lo, hi;
  for (int64_t size : g.dims) {
    lo.push_back(g.alignCorners ? 0.0 : -0.5);
    hi.push_back(g.alignCorners ? size - 1.0 : size - 0.5);
  }
  std::string x = codegen::storageCType(*scalarOf(xt));
  body += "  constexpr int kiln_n = " + lit(n) +
          ", kiln_taps = " + lit(g.taps) + "; // spatial dims, taps per dim\n";
  body += "  const int64_t kiln_dims[kiln_n] = " +
          braced(ArrayRef<int64_t>(g.dims)) + ";\n";
  body += "  const double kiln_lo[kiln_n] = " + braced(ArrayRef<double>(lo)) +
          ", kiln_hi[kiln_n] = " + braced(ArrayRef<double>(hi)) + ";\n";
  body += gridSampleHelpers(g);
  // Parallel over the points once they read a few pages.
  if (batch * points > 1 && yt.getNumElements() * g.taps * n >= 32768)
    body += "  #pragma omp parallel for\n";
  body += "  for (int64_t kiln_q = 0; kiln_q < " + lit(batch * points) +
          "; ++kiln_q) {\n";
  body += "    const int64_t b = kiln_q / " + lit(points) + ", p = kiln_q % " +
          lit(points) + ";\n";
  body += "    const auto *coords = in1 + kiln_q * kiln_n;\n";
  body += "    double pos[kiln_n];\n";
  body += gridSamplePosition(g);
  body += "    int64_t idx[kiln_n][kiln_taps];\n";
  body += "    double w[kiln_n][kiln_taps];\n";
  body += gridSampleTaps(g);
  body += "    for (int64_t c = 0; c < " + lit(channels) + "; ++c) {\n";
  body += "      const " + x + " *image = in0 + (b * " + lit(channels) +
          " + c) * " + lit(image) + ";\n";
  // Every combination of taps, the last dim's fastest (taps^n terms).
  body += "      double sum = 0;\n      int k[kiln_n] = {};\n";
  body += "      while (true) {\n";
  body += "        double weight = 1;\n        int64_t offset = 0;\n"
          "        bool zero = false;\n";
  body += "        for (int d = 0; d < kiln_n; ++d) {\n"
          "          const int64_t i = idx[d][k[d]];\n"
          "          if (i < 0) {\n            zero = true;\n"
          "            break;\n          }\n"
          "          weight *= w[d][k[d]];\n"
          "          offset = offset * kiln_dims[d] + i;\n        }\n";
  body +=
      "        if (!zero)\n          sum += weight * (double)image[offset];\n";
  body += "        int d = kiln_n;\n"
          "        while (d > 0 && ++k[d - 1] == kiln_taps)\n"
          "          k[--d] = 0;\n"
          "        if (d == 0)\n          break;\n      }\n";
  body += "      out0[(b * " + lit(channels) + " + c) * " + lit(points) +
          " + p] = (" + x + ")sum;\n";
  body += "    }\n  }\n  return 0;\n";
  return makeCppOpKernel(op, name, cppKernelParams(op), body, what);
}

} // namespace

bool hasCppIndexKernel(Operation *op) {
  return isa<TriluOp, HardmaxOp, ScatterElementsOp, ScatterNDOp, GatherNDOp,
             GridSampleOp>(op);
}

std::optional<CppKernel> emitCppIndexKernel(Operation *op, StringRef name) {
  if (auto trilu = dyn_cast<TriluOp>(op))
    return emitTrilu(trilu, name);
  if (auto hardmax = dyn_cast<HardmaxOp>(op))
    return emitHardmax(hardmax, name);
  if (auto scatter = dyn_cast<ScatterElementsOp>(op))
    return emitScatterElements(scatter, name);
  if (auto scatter = dyn_cast<ScatterNDOp>(op))
    return emitScatterND(scatter, name);
  if (auto gather = dyn_cast<GatherNDOp>(op))
    return emitGatherND(gather, name);
  if (auto sample = dyn_cast<GridSampleOp>(op))
    return emitGridSample(sample, name);
  return std::nullopt;
}

} // namespace kiln
