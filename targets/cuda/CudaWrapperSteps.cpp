//===- WrapperEmitterCuda.cpp - Steps of a CUDA package's wrapper ---------===//
//
// This file implements the parts of wrapper.cpp that differ for the cuda
// target (docs/cuda-backend.md): a generated kernel is a kiln_cuda_launch of
// its function with the launch shape the CUDA printer chose; a kiln.matmul
// that cuBLASLt takes (f32/f16/bf16, 2-D matrices, batches that are equal or
// broadcast from one matrix) is a kiln_cuda_matmul; a kiln.conv that cuDNN
// takes (f32/f16/bf16, 1 to 3 spatial dims, symmetric pads) is a
// kiln_cuda_conv with its shapes as static arrays; every other op runs the
// runtime's reference kernel on the host, its operands copied from the device
// and its results copied back (the stream is synchronized around it, so such
// steps cost a round trip: `kiln compile` counts them as fallbacks); outputs
// not written in place are device-to-device copies. Everything is enqueued on
// the run's stream.
//
//===----------------------------------------------------------------------===//

#include "codegen/WrapperSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;

namespace kiln {
namespace wrapper {

const char *cudaWrapperHelpers() {
  return R"cpp(
namespace {

/// Launches a kernel of kernels.cubin on the run's stream; a failure names
/// the kernel and its ONNX nodes.
int launch(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
           unsigned by, unsigned bz, unsigned sharedBytes, void *stream,
           void **args, const char *what, char *err, size_t errlen) {
  if (kiln_cuda_launch(function, gx, gy, gz, bx, by, bz, sharedBytes, stream,
                       args, err, errlen) == 0)
    return 0;
  return fail(err, errlen, std::string(what) + ": " + (err ? err : ""));
}

/// A device buffer of a host step: pointer, dtype and shape.
struct DeviceArg {
  const void *data;
  kiln::DType dtype;
  kiln::Shape shape;
};

/// Runs a reference kernel on the host: copies the operands from the
/// device, waits for them, runs the CPU kernel, copies each result with a
/// destination into its planned device buffer and waits again (so the host
/// buffers may be freed). A failure names the ONNX node.
int callOnHost(const char *op, const std::vector<DeviceArg> &in,
               const kiln::Attributes &attrs,
               const std::vector<DeviceArg> &results, const char *node,
               void *stream, char *err, size_t errlen) {
  std::vector<kiln::Tensor> hostIn;
  for (const DeviceArg &a : in) {
    kiln::Tensor t = kiln::Tensor::empty(a.dtype, a.shape);
    if (t.nbytes() && kiln_cuda_memcpy(t.rawData(), a.data, t.nbytes(), 1,
                                       stream, err, errlen))
      return 1;
    hostIn.push_back(std::move(t));
  }
  if (kiln_cuda_stream_synchronize(stream, err, errlen))
    return 1;
  std::vector<kiln::Tensor> hostOut(results.size());
  if (call(op, hostIn, attrs, hostOut, node, err, errlen))
    return 1;
  std::vector<kiln::Tensor> copies;
  for (size_t r = 0; r < results.size(); ++r) {
    if (!results[r].data)
      continue;
    if (checkResult(hostOut, r, results[r].dtype, results[r].shape, node, err,
                    errlen))
      return 1;
    copies.push_back(hostOut[r].contiguous());
    const kiln::Tensor &c = copies.back();
    if (c.nbytes() &&
        kiln_cuda_memcpy(const_cast<void *>(results[r].data), c.rawData(),
                         c.nbytes(), 0, stream, err, errlen))
      return 1;
  }
  return kiln_cuda_stream_synchronize(stream, err, errlen);
}

} // namespace
)cpp";
}

void emitCudaKernelStep(llvm::raw_ostream &os, Operation *op, size_t index,
                        const CudaLaunch &launch, int kernelIndex,
                        const BufferNames &buffers) {
  std::vector<std::string> nodes = sourceNodeNames(op);
  os << "  // Step " << index << ": kernel " << launch.name << " (grid "
     << launch.grid[0] << "x" << launch.grid[1] << "x" << launch.grid[2]
     << ", block " << launch.block[0] << "x" << launch.block[1] << "x"
     << launch.block[2] << "), ONNX nodes " << nodeList(nodes) << "\n";
  os << "  {\n";
  int n = 0;
  auto arg = [&](Value v, bool isConst) {
    os << "    " << (isConst ? "const void *" : "void *") << "a" << n++
       << " = " << buffers.pointer(v) << "; // " << buffers.describe(v)
       << "\n";
  };
  for (Value v : op->getOperands())
    arg(v, /*isConst=*/true);
  for (Value v : op->getResults())
    arg(v, /*isConst=*/false);
  os << "    void *args[] = {";
  for (int i = 0; i < n; ++i)
    os << (i ? ", " : "") << "&a" << i;
  os << (n ? "" : "nullptr") << "};\n";
  std::string what =
      "kernel " + launch.name + " (ONNX nodes " + nodeList(nodes) + ")";
  os << "    if (launch(m->functions[" << kernelIndex << "], " << launch.grid[0]
     << ", " << launch.grid[1] << ", " << launch.grid[2] << ", "
     << launch.block[0] << ", " << launch.block[1] << ", " << launch.block[2]
     << ", " << launch.sharedBytes << ", stream, args, " << quote(what)
     << ", err, errlen))\n      return 1;\n  }\n";
}

/// The batch stride (in elements) of a matmul operand of `shape` whose
/// matrices have `matrixElems` elements, for a result with batch dims
/// `batch`: 0 when the operand is one matrix (broadcast), the matrix size
/// when its batch dims equal the result's; nullopt otherwise.
static std::optional<int64_t> batchStride(ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> batch,
                                          int64_t matrixElems) {
  ArrayRef<int64_t> own = shape.drop_back(2);
  if (llvm::all_of(own, [](int64_t d) { return d == 1; }))
    return 0;
  if (own.size() == batch.size() && llvm::equal(own, batch))
    return matrixElems;
  return std::nullopt;
}

/// A kiln.transpose that swaps the last two dims and keeps the others.
static bool isMatrixTranspose(Operation *op) {
  if (!op || op->getName().getStringRef() != "kiln.transpose")
    return false;
  auto perm = op->getAttrOfType<DenseI64ArrayAttr>("perm");
  int64_t r = perm ? perm.size() : 0;
  if (r < 2)
    return false;
  for (int64_t i = 0; i < r - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
}

namespace {
/// A matmul's cuBLASLt call: operands (read through a matrix transpose when
/// that is folded into the call), dims, batch strides.
struct CudaMatmul {
  Value a, b, d;
  bool transA = false, transB = false;
  DType dtype;
  int64_t batch = 1, m = 0, n = 0, k = 0, strideA = 0, strideB = 0;
};
} // namespace

/// The cuBLASLt form of kiln.matmul `op`, when it has one.
static std::optional<CudaMatmul> cudaMatmulOf(Operation *op,
                                              const BufferNames &buffers) {
  if (!op || op->getName().getStringRef() != "kiln.matmul" ||
      op->getNumOperands() != 2 || op->getNumResults() != 1)
    return std::nullopt;
  CudaMatmul mm;
  Value a = op->getOperand(0), b = op->getOperand(1), d = op->getResult(0);
  mm.a = a, mm.b = b, mm.d = d;
  ValueType ta = valueType(a), tb = valueType(b), td = valueType(d);
  if (ta.dtype != td.dtype || tb.dtype != td.dtype ||
      (td.dtype != DType::F32 && td.dtype != DType::F16 &&
       td.dtype != DType::BF16))
    return std::nullopt;
  if (ta.shape.size() < 2 || tb.shape.size() < 2 || td.shape.size() < 2 ||
      !buffers.hasBuffer(d))
    return std::nullopt;
  int64_t m = ta.shape[ta.shape.size() - 2], k = ta.shape.back();
  int64_t n = tb.shape.back();
  if (tb.shape[tb.shape.size() - 2] != k || td.shape.back() != n ||
      td.shape[td.shape.size() - 2] != m || m == 0 || n == 0 || k == 0)
    return std::nullopt;
  ArrayRef<int64_t> batch = ArrayRef<int64_t>(td.shape).drop_back(2);
  int64_t batchCount = 1;
  for (int64_t x : batch)
    batchCount *= x;
  std::optional<int64_t> strideA = batchStride(ta.shape, batch, m * k);
  std::optional<int64_t> strideB = batchStride(tb.shape, batch, k * n);
  if (!strideA || !strideB || batchCount == 0)
    return std::nullopt;
  // An operand that is a matrix transpose of a weight is read in place,
  // transposed by cuBLASLt (Linear layers export as MatMul(x,
  // Transpose(W))). Only weights: they live as long as the model, while a
  // computed value's buffer may be reused once the transpose has read it.
  auto foldable = [&](Value v) {
    Operation *t = v.getDefiningOp();
    return isMatrixTranspose(t) && buffers.isPersistent(t->getOperand(0));
  };
  if (foldable(a))
    mm.a = a.getDefiningOp()->getOperand(0), mm.transA = true;
  if (foldable(b))
    mm.b = b.getDefiningOp()->getOperand(0), mm.transB = true;
  mm.dtype = td.dtype;
  mm.batch = batchCount, mm.m = m, mm.n = n, mm.k = k;
  mm.strideA = *strideA, mm.strideB = *strideB;
  // A batch of row-major A matrices times one B is one taller GEMM:
  // [batch * m, k] x [k, n] (the Linear layers of a transformer).
  if (mm.batch > 1 && mm.strideB == 0 && mm.strideA == m * k && !mm.transA) {
    mm.m *= mm.batch;
    mm.batch = 1;
    mm.strideA = 0;
  }
  return mm;
}

namespace {
/// A kiln.fusion that cuBLASLt's epilogue computes for the matmul before it.
struct MatmulEpilogue {
  Value mm;           ///< the matmul result the epilogue reads
  Value bias;         ///< a vector of the last dim's size, or null
  int activation = 0; ///< kiln_cuda_matmul's code: 0 none, 1 ReLU
};
} // namespace

/// The epilogue of a kiln.fusion that computes, from the result of a
/// cuBLASLt matmul read by nothing else, `relu(mm + bias)`, `relu(mm)` or
/// `mm + bias` (Linear's bias): cuBLASLt applies it. Nullopt otherwise.
/// (cuBLASLt's GELU epilogue is the tanh approximation; kiln.gelu is
/// decomposed before fusion, so no fusion shows it whole.)
static std::optional<MatmulEpilogue>
matmulEpilogueOf(Operation *fusion, const BufferNames &buffers) {
  if (!fusion || fusion->getName().getStringRef() != "kiln.fusion" ||
      fusion->getNumResults() != 1 || fusion->getNumOperands() > 2)
    return std::nullopt;
  Block &body = fusion->getRegion(0).front();
  // The matmul's result: the first operand that a cuBLASLt matmul defines.
  Value mm;
  BlockArgument mmArg;
  for (BlockArgument arg : body.getArguments()) {
    Value v = fusion->getOperand(arg.getArgNumber());
    std::optional<CudaMatmul> gemm = cudaMatmulOf(v.getDefiningOp(), buffers);
    // One GEMM only: the epilogue of batched calls is not used.
    if (!mm && gemm && gemm->batch == 1 && v.hasOneUse() &&
        v.getType() == fusion->getResult(0).getType()) {
      mm = v;
      mmArg = arg;
    }
  }
  if (!mm)
    return std::nullopt;
  MatmulEpilogue e;
  e.mm = mm;
  Value cur = mmArg;
  for (Operation &op : body.without_terminator()) {
    StringRef name = op.getName().getStringRef();
    if (e.activation || op.getNumResults() != 1 ||
        op.getResult(0).getType() != mm.getType())
      return std::nullopt;
    if (name == "kiln.add" && !e.bias && op.getNumOperands() == 2 &&
        (op.getOperand(0) == cur) != (op.getOperand(1) == cur)) {
      auto biasArg =
          dyn_cast<BlockArgument>(op.getOperand(op.getOperand(0) == cur));
      if (!biasArg || biasArg.getOwner() != &body)
        return std::nullopt;
      e.bias = fusion->getOperand(biasArg.getArgNumber());
    } else if (name == "kiln.relu" && op.getOperand(0) == cur) {
      e.activation = 1;
    } else {
      return std::nullopt;
    }
    cur = op.getResult(0);
  }
  Operation *yield = body.getTerminator();
  if ((!e.bias && !e.activation) || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != cur ||
      fusion->getNumOperands() != (e.bias ? 2u : 1u))
    return std::nullopt;
  // The matmul will write the fusion's buffer: the fusion must be the very
  // next step (then the planner made its buffer live from the matmul on),
  // the buffer must not overlap the matmul's operands, and both steps must
  // run in the same function (weight preparation or the run).
  Operation *def = mm.getDefiningOp();
  std::optional<CudaMatmul> gemm = cudaMatmulOf(def, buffers);
  Value out = fusion->getResult(0);
  if (nextStep(def) != fusion || buffers.overlaps(out, gemm->a) ||
      buffers.overlaps(out, gemm->b) ||
      (e.bias && buffers.overlaps(out, e.bias)) ||
      buffers.isPrepared(mm) != buffers.isPrepared(out))
    return std::nullopt;
  if (e.bias) {
    auto mt = cast<RankedTensorType>(mm.getType());
    auto bt = cast<RankedTensorType>(e.bias.getType());
    if (bt.getElementType() != mt.getElementType() || bt.getRank() < 1 ||
        bt.getShape().back() != mt.getShape().back() ||
        bt.getNumElements() != mt.getShape().back())
      return std::nullopt;
  }
  return e;
}

bool isEpilogueFoldedIntoCudaMatmul(Operation *fusion,
                                    const BufferNames &buffers) {
  return matmulEpilogueOf(fusion, buffers).has_value();
}

bool isFoldedIntoCudaMatmuls(Operation *op, const BufferNames &buffers) {
  if (!isMatrixTranspose(op) || op->use_empty())
    return false;
  return llvm::all_of(op->getUsers(), [&](Operation *user) {
    std::optional<CudaMatmul> mm = cudaMatmulOf(user, buffers);
    return mm && ((mm->transA && mm->a == op->getOperand(0) &&
                   user->getOperand(0) == op->getResult(0)) ||
                  (mm->transB && mm->b == op->getOperand(0) &&
                   user->getOperand(1) == op->getResult(0))) &&
           user->getOperand(0) != user->getOperand(1);
  });
}

bool emitCudaMatmulStep(llvm::raw_ostream &os, Operation *op, size_t index,
                        const BufferNames &buffers) {
  std::optional<CudaMatmul> mm = cudaMatmulOf(op, buffers);
  if (!mm)
    return false;
  // A following bias add and/or activation: cuBLASLt's epilogue writes the
  // fusion's result.
  std::optional<MatmulEpilogue> epilogue;
  if (mm->d.hasOneUse()) {
    Operation *user = *mm->d.getUsers().begin();
    // Only the matmul the epilogue reads folds it: in add(mmA, mmB) of two
    // [1, N] products, mmB would pass for mmA's bias.
    epilogue = matmulEpilogueOf(user, buffers);
    if (epilogue && epilogue->mm != op->getResult(0))
      epilogue.reset();
    if (epilogue)
      mm->d = user->getResult(0);
  }
  Value bias = epilogue ? epilogue->bias : Value();
  int activation = epilogue ? epilogue->activation : 0;

  std::vector<std::string> nodes = sourceNodeNames(op);
  std::string node = nodes.empty() ? "matmul" : nodes.front();
  os << "  // Step " << index << ": kiln.matmul (cuBLASLt), ONNX node '"
     << commentSafe(node) << "': " << mm->batch << " x [" << mm->m << ", "
     << mm->k << "] x [" << mm->k << ", " << mm->n << "]\n";
  os << "  if (kiln_cuda_matmul(" << static_cast<int>(mm->dtype) << ", "
     << mm->batch << ", " << mm->m << ", " << mm->n << ", " << mm->k << ",\n"
     << "                       " << buffers.pointer(mm->a) << ", "
     << mm->strideA << ", " << mm->transA << ", // "
     << buffers.describe(mm->a) << (mm->transA ? ", transposed" : "") << "\n"
     << "                       " << buffers.pointer(mm->b) << ", "
     << mm->strideB << ", " << mm->transB << ", // "
     << buffers.describe(mm->b) << (mm->transB ? ", transposed" : "") << "\n"
     << "                       " << buffers.pointer(mm->d) << ", "
     << mm->m * mm->n << ", // " << buffers.describe(mm->d) << "\n"
     << "                       " << (bias ? buffers.pointer(bias) : "nullptr")
     << ", " << activation << ", " << buffers.libraryWorkspace(mm->d)
     << ", stream, err, errlen))"
     << (bias ? " // bias: " + buffers.describe(bias) + " (epilogue)" : "")
     << (activation == 1 ? " // ReLU (epilogue)" : "")
     << "\n"
     << "    return fail(err, errlen, std::string(\"node '\") + "
     << quote(node) << " + \"' (cuBLASLt matmul): \" + (err ? err : \"\"));\n";
  return true;
}

namespace {
/// A kiln.conv's cuDNN call: shapes and geometry, all static.
struct CudaConv {
  DType dtype;
  llvm::SmallVector<int64_t> x, w, y, strides, pads, dilations;
  int64_t group = 1;
};
} // namespace

/// An integer-list attribute of `n` entries, `dflt` when empty (as the
/// reference kernel reads it); nullopt when absent or of another length.
static std::optional<llvm::SmallVector<int64_t>>
spatialAttr(Operation *op, StringRef name, size_t n, int64_t dflt) {
  auto attr = op->getAttrOfType<DenseI64ArrayAttr>(name);
  if (!attr)
    return std::nullopt;
  if (attr.empty())
    return llvm::SmallVector<int64_t>(n, dflt);
  if (attr.size() != static_cast<int64_t>(n))
    return std::nullopt;
  return llvm::SmallVector<int64_t>(attr.asArrayRef());
}

/// The cuDNN form of kiln.conv `op`, when it has one: f32/f16/bf16, 1 to 3
/// spatial dims, static positive shapes, symmetric pads, a used result.
static std::optional<CudaConv> cudaConvOf(Operation *op,
                                          const BufferNames &buffers) {
  if (!op || op->getName().getStringRef() != "kiln.conv" ||
      op->getNumOperands() != 2 || op->getNumResults() != 1 ||
      !buffers.hasBuffer(op->getResult(0)))
    return std::nullopt;
  ValueType tx = valueType(op->getOperand(0)),
            tw = valueType(op->getOperand(1)),
            ty = valueType(op->getResult(0));
  if (tx.dtype != ty.dtype || tw.dtype != ty.dtype ||
      (ty.dtype != DType::F32 && ty.dtype != DType::F16 &&
       ty.dtype != DType::BF16))
    return std::nullopt;
  size_t rank = ty.shape.size();
  if (rank < 3 || rank > 5 || tx.shape.size() != rank ||
      tw.shape.size() != rank)
    return std::nullopt;
  for (const auto *shape : {&tx.shape, &tw.shape, &ty.shape})
    if (llvm::any_of(*shape, [](int64_t d) { return d <= 0; }))
      return std::nullopt;
  size_t nsp = rank - 2;
  CudaConv c;
  c.dtype = ty.dtype;
  c.x = tx.shape, c.w = tw.shape, c.y = ty.shape;
  auto group = op->getAttrOfType<IntegerAttr>("group");
  c.group = group ? group.getInt() : 1;
  auto strides = spatialAttr(op, "strides", nsp, 1);
  auto dilations = spatialAttr(op, "dilations", nsp, 1);
  auto pads = spatialAttr(op, "pads", 2 * nsp, 0);
  if (!strides || !dilations || !pads || c.group < 1 ||
      c.x[1] != c.w[1] * c.group || c.w[0] % c.group != 0 ||
      c.y[0] != c.x[0] || c.y[1] != c.w[0])
    return std::nullopt;
  c.strides = *strides, c.dilations = *dilations, c.pads = *pads;
  for (size_t d = 0; d < nsp; ++d) {
    // cuDNN takes symmetric pads only.
    if (c.pads[d] != c.pads[nsp + d] || c.pads[d] < 0 || c.strides[d] < 1 ||
        c.dilations[d] < 1)
      return std::nullopt;
    int64_t window = c.dilations[d] * (c.w[2 + d] - 1) + 1;
    int64_t span = c.x[2 + d] + 2 * c.pads[d] - window;
    if (span < 0 || span / c.strides[d] + 1 != c.y[2 + d])
      return std::nullopt;
  }
  return c;
}

namespace {
/// A kiln.fusion that cuDNN's fused convolution computes for the kiln.conv
/// before it: relu(conv + bias + z) (kiln_cuda_conv_relu).
struct ConvReluEpilogue {
  Operation *fusion = nullptr;
  Value bias; ///< a per-channel vector ([C, 1, ...]), or null
  Value z;    ///< a residual of the result's type, or null
};
} // namespace

/// The epilogue of the kiln.conv `conv` that cuDNN can apply: its only user
/// is the very next step, a kiln.fusion whose body adds to the convolution
/// at most one per-channel bias and at most one residual of its own type,
/// then applies kiln.relu, and yields that; its result does not overlap
/// the convolution's operands, the bias or the residual. Nullopt otherwise.
static std::optional<ConvReluEpilogue>
convReluEpilogueOf(Operation *conv, const BufferNames &buffers) {
  if (!conv || conv->getNumResults() != 1 || !conv->getResult(0).hasOneUse())
    return std::nullopt;
  Value c = conv->getResult(0);
  Operation *fusion = *c.getUsers().begin();
  if (fusion->getName().getStringRef() != "kiln.fusion" ||
      fusion->getNumResults() != 1 ||
      fusion->getResult(0).getType() != c.getType())
    return std::nullopt;
  if (nextStep(conv) != fusion)
    return std::nullopt;
  auto yt = cast<RankedTensorType>(c.getType());
  int64_t channels = yt.getShape()[1];
  Block &body = fusion->getRegion(0).front();
  auto operandOf = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body ? fusion->getOperand(arg.getArgNumber())
                                          : Value();
  };
  // The value flowing from the convolution through the body.
  Value v;
  for (BlockArgument arg : body.getArguments())
    if (fusion->getOperand(arg.getArgNumber()) == c)
      v = arg;
  ConvReluEpilogue e;
  e.fusion = fusion;
  bool relu = false;
  for (Operation &op : body.without_terminator()) {
    StringRef name = op.getName().getStringRef();
    if (relu || !v || op.getNumResults() != 1)
      return std::nullopt;
    if (name == "kiln.relu" && op.getOperand(0) == v) {
      relu = true;
    } else if (name == "kiln.add" && op.getNumOperands() == 2 &&
               (op.getOperand(0) == v) != (op.getOperand(1) == v)) {
      Value other = operandOf(op.getOperand(op.getOperand(0) == v ? 1 : 0));
      if (!other || other == c ||
          op.getResult(0).getType() != yt)
        return std::nullopt;
      auto ot = cast<RankedTensorType>(other.getType());
      bool perChannel = ot.getElementType() == yt.getElementType() &&
                        ot.getNumElements() == channels &&
                        (ot.getRank() == yt.getRank() - 1 ||
                         (ot.getRank() == yt.getRank() && ot.getShape()[0] == 1)) &&
                        ot.getShape()[ot.getRank() - (yt.getRank() - 1)] ==
                            channels;
      if (ot == yt && !e.z)
        e.z = other;
      else if (perChannel && !e.bias)
        e.bias = other;
      else
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    v = op.getResult(0);
  }
  Operation *yield = body.getTerminator();
  Value out = fusion->getResult(0);
  if (!relu || yield->getNumOperands() != 1 || yield->getOperand(0) != v ||
      buffers.overlaps(out, conv->getOperand(0)) ||
      buffers.overlaps(out, conv->getOperand(1)) ||
      (e.bias && buffers.overlaps(out, e.bias)) ||
      (e.z && buffers.overlaps(out, e.z)) ||
      buffers.isPrepared(c) != buffers.isPrepared(out))
    return std::nullopt;
  return e;
}

bool isFoldedIntoCudaConv(Operation *fusion, const BufferNames &buffers) {
  if (!fusion || fusion->getName().getStringRef() != "kiln.fusion")
    return false;
  for (Value operand : fusion->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def || !cudaConvOf(def, buffers))
      continue;
    std::optional<ConvReluEpilogue> e = convReluEpilogueOf(def, buffers);
    if (e && e->fusion == fusion)
      return true;
  }
  return false;
}

bool emitCudaConvStep(llvm::raw_ostream &os, Operation *op, size_t index,
                      const BufferNames &buffers) {
  std::optional<CudaConv> c = cudaConvOf(op, buffers);
  if (!c)
    return false;
  std::optional<ConvReluEpilogue> epilogue = convReluEpilogueOf(op, buffers);
  std::vector<std::string> nodes = sourceNodeNames(op);
  std::string node = nodes.empty() ? "conv" : nodes.front();
  auto list = [](ArrayRef<int64_t> v) {
    std::string s;
    for (auto [i, x] : llvm::enumerate(v))
      s += (i ? ", " : "") + std::to_string(x);
    return s;
  };
  Value x = op->getOperand(0), w = op->getOperand(1), y = op->getResult(0);
  if (epilogue)
    y = epilogue->fusion->getResult(0);
  os << "  // Step " << index << ": kiln.conv (cuDNN), ONNX node '"
     << commentSafe(node) << "': [" << list(c->x) << "] * [" << list(c->w)
     << "] -> [" << list(c->y) << "], group " << c->group
     << (epilogue ? std::string(", then") + (epilogue->bias ? " + bias" : "") +
                        (epilogue->z ? " + residual" : "") +
                        " and ReLU in the same cuDNN call (ONNX nodes " +
                        nodeList(sourceNodeNames(epilogue->fusion)) + ")"
                  : std::string())
     << "\n";
  os << "  {\n";
  auto array = [&](const char *name, ArrayRef<int64_t> v) {
    os << "    static const int64_t " << name << "[] = {" << list(v)
       << "};\n";
  };
  array("xShape", c->x);
  array("wShape", c->w);
  array("yShape", c->y);
  array("strides", c->strides);
  array("pads", c->pads);
  array("dilations", c->dilations);
  auto optional = [&](Value v, const char *what) {
    return v ? buffers.pointer(v) + ", /* " + what + ": " +
                   buffers.describe(v) + " */ "
             : std::string("nullptr, ");
  };
  os << "    if (kiln_cuda_conv" << (epilogue ? "_relu" : "") << "("
     << static_cast<int>(c->dtype) << ", " << c->x.size() - 2 << ",\n"
     << "                       xShape, " << buffers.pointer(x) << ", // "
     << buffers.describe(x) << "\n"
     << "                       wShape, " << buffers.pointer(w) << ", // "
     << buffers.describe(w) << "\n"
     << "                       "
     << (epilogue ? optional(epilogue->bias, "bias") +
                        optional(epilogue->z, "residual")
                  : std::string("nullptr, "))
     << c->group << ", strides, pads, dilations,\n"
     << "                       yShape, " << buffers.pointer(y) << ", // "
     << buffers.describe(y) << "\n"
     << "                       stream, err, errlen))\n"
     << "      return fail(err, errlen, std::string(\"node '\") + "
     << quote(node) << " + \"' (cuDNN conv): \" + (err ? err : \"\"));\n"
     << "  }\n";
  return true;
}

void emitCudaHostStep(llvm::raw_ostream &os, Operation *op, size_t index,
                      StringRef kindName, int attrIndex,
                      const BufferNames &buffers) {
  StringRef opName = op->getName().getStringRef();
  opName.consume_front("kiln.");
  std::vector<std::string> nodes = sourceNodeNames(op);
  std::string node = nodes.empty() ? opName.str() : nodes.front();
  std::string opType = sourceOpType(op->getLoc());
  os << "  // Step " << index << ": kiln." << opName << " (" << kindName
     << ", on the host), ONNX node '" << commentSafe(node) << "'"
     << (opType.empty() ? "" : " (" + opType + ")") << "\n";
  auto argList = [&](auto values, bool results) {
    for (Value v : values) {
      ValueType t = valueType(v);
      bool used = !results || buffers.hasBuffer(v);
      os << "\n        DeviceArg{" << (used ? buffers.pointer(v) : "nullptr")
         << ", " << dtypeEnum(t.dtype) << ", " << formatShape(t.shape)
         << "}, // " << buffers.describe(v);
    }
  };
  os << "  if (callOnHost(" << quote(opName) << ", {";
  argList(op->getOperands(), false);
  os << "\n      }, m->attrs[" << attrIndex << "], {";
  argList(op->getResults(), true);
  os << "\n      }, " << quote(node) << ", stream, err, errlen))\n"
     << "    return 1;\n";
}

void emitCudaOutputCopy(llvm::raw_ostream &os, size_t outputIndex,
                        const std::string &source, int64_t bytes,
                        const std::string &comment) {
  os << "  if (kiln_cuda_memcpy(outputs[" << outputIndex << "], " << source
     << ", " << bytes << ", 2, stream, err, errlen)) // " << comment << "\n"
     << "    return 1;\n";
}

} // namespace wrapper
} // namespace kiln
