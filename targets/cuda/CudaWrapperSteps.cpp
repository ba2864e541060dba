//===- CudaWrapperSteps.cpp - Steps of a CUDA package's wrapper -----------===//
//
// This file implements the steps that the CUDA target prints into
// wrapper.cpp (docs/cuda-backend.md), each from what the lowered IR says: a
// generated kernel is a call of its exported launcher, a kiln_cuda_launch of
// its function with the launch shape the CUDA printer chose; a
// "cublaslt.matmul" library call is a kiln_cuda_matmul with the call's
// geometry, transposes, bias and activation; a "cudnn.conv" call is a
// kiln_cuda_conv (kiln_cuda_conv_relu with an epilogue) with its shapes as
// static arrays; a reference step runs the runtime's kernel on the host, its
// operands copied from the device and its results copied back (the stream is
// synchronized around it, so such steps cost a round trip: `kiln compile`
// counts them as fallbacks); outputs not written in place are device-to-device
// copies. Everything is enqueued on the run's stream.
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaTarget.h"
#include "codegen/SymbolicShapes.h"
#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;

namespace kiln {
namespace cudawrapper {

using namespace wrapper;

const char *helpers() {
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

/// Runs a custom op's CUDA kernel (kiln/custom_op.h) on the planned device
/// buffers, enqueued on the run's stream; a failure names the ONNX node.
int callCustomOnDevice(const std::vector<DeviceArg> &in,
                       const kiln::Attributes &attrs,
                       const std::vector<DeviceArg> &results, const char *node,
                       void *stream, char *err, size_t errlen) {
  auto deviceArgs = [](const std::vector<DeviceArg> &args) {
    std::vector<kiln::CustomOpDeviceArg> out;
    for (const DeviceArg &a : args)
      out.push_back({const_cast<void *>(a.data), a.dtype, a.shape});
    return out;
  };
  kiln::Status status = kiln::runCustomOpOnDevice(attrs, deviceArgs(in),
                                                  deviceArgs(results), stream);
  if (status.isOk())
    return 0;
  return fail(err, errlen,
              std::string("node '") + node + "': " + status.message());
}

} // namespace
)cpp";
}

KernelEntryPoint kernelEntryPoint(Operation *op, const KernelRecord &kernel,
                                  const PackageNames &names,
                                  const BufferNames &buffers) {
  const std::array<unsigned, 3> &grid = *kernel.grid, &block = *kernel.block;
  KernelEntryPoint entry;
  entry.symbol = names.symbol(kernel.name);
  entry.returnType = "int";
  std::vector<KernelParameter> tensors = kernelParameters(op, buffers);
  entry.parameters.push_back(
      {"void *function", "function: the CUfunction of '" + kernel.name +
                             "' in the package's kernels.cubin "
                             "(kiln_cuda_load_kernel)"});
  entry.parameters.insert(entry.parameters.end(), tensors.begin(),
                          tensors.end());
  entry.parameters.push_back(
      {"void *stream", "stream: the CUstream it is enqueued on (0: the "
                       "default stream); the pointers are device pointers"});
  entry.parameters.push_back({"char *err", "err, errlen: the message of a "
                                           "failed launch (returns nonzero)"});
  entry.parameters.push_back({"size_t errlen", ""});
  entry.doc = kernelDoc(op, kernel.name, kernel.kind);
  // With run-time sizes, grid dims follow them (CudaKernel::runTimeGrid).
  auto gridDim = [&](int i, bool code) {
    const std::string &text = kernel.runTimeGrid[i];
    if (text.empty())
      return std::to_string(grid[i]);
    return code ? "unsigned(" + text + ")"
                : "(from the sizes, at most " + std::to_string(grid[i]) + ")";
  };
  std::string launchShape =
      "grid " + gridDim(0, false) + "x" + gridDim(1, false) + "x" +
      gridDim(2, false) + ", block " + std::to_string(block[0]) + "x" +
      std::to_string(block[1]) + "x" + std::to_string(block[2]) + ", " +
      std::to_string(kernel.sharedBytes) + " bytes of shared memory";
  // A kernel launched once per step of a recurrence takes the step as its
  // last argument.
  bool repeated = kernel.launches > 1;
  entry.doc.push_back(
      "Launched with " + launchShape +
      (repeated ? ", " + std::to_string(kernel.launches) + " times in a row"
                : std::string()) +
      ".");
  std::string body, indent = repeated ? "    " : "  ";
  if (repeated)
    body += "  for (int step = 0; step < " + std::to_string(kernel.launches) +
            "; ++step) {\n";
  body += indent + "void *args[] = {";
  for (size_t i = 0; i < tensors.size(); ++i) {
    // The parameter's name: after the declaration's last '*' or space
    // ("const float *in0", "int64_t kiln_s_batch").
    StringRef decl = tensors[i].declaration;
    body += std::string(i ? ", " : "") + "&" +
            decl.substr(decl.find_last_of("* ") + 1).str();
  }
  if (repeated)
    body += tensors.empty() ? "&step" : ", &step";
  body += tensors.empty() && !repeated ? "nullptr};\n" : "};\n";
  std::string what = "kernel " + kernel.name + " (ONNX nodes " +
                     nodeList(sourceNodeNames(op)) + ")";
  body += indent + "if (launch(function, " + gridDim(0, true) + ", " +
          gridDim(1, true) + ", " + gridDim(2, true) + ", " +
          std::to_string(block[0]) + ", " + std::to_string(block[1]) + ", " +
          std::to_string(block[2]) + ", " + std::to_string(kernel.sharedBytes) +
          ", stream, args, " + quote(what) + ", err, errlen))\n" + indent +
          "  return 1;\n";
  if (repeated)
    body += "  }\n";
  body += "  return 0;\n";
  entry.body = body;
  return entry;
}

void emitKernelLaunch(llvm::raw_ostream &os, Operation *op, size_t index,
                      const KernelRecord &kernel, int kernelIndex,
                      const PackageNames &names, const BufferNames &buffers) {
  const std::array<unsigned, 3> &grid = *kernel.grid, &block = *kernel.block;
  bool runTimeGrid = llvm::any_of(
      kernel.runTimeGrid, [](const std::string &t) { return !t.empty(); });
  os << "  // Step " << index << ": kernel " << kernel.name << " (grid "
     << (runTimeGrid ? "at most " : "") << grid[0] << "x" << grid[1] << "x"
     << grid[2] << ", block " << block[0]
     << "x" << block[1] << "x" << block[2] << "), ONNX nodes "
     << nodeList(sourceNodeNames(op)) << "\n";
  os << "  if (" << names.symbol(kernel.name) << "(m->functions[" << kernelIndex
     << "]";
  auto arg = [&](Value v, bool isConst) {
    os << ",\n      static_cast<" << (isConst ? "const " : "")
       << publicCType(valueType(v).dtype) << " *>(" << buffers.pointer(v)
       << ") /* " << buffers.describe(v) << " */";
  };
  for (Value v : op->getOperands())
    arg(v, /*isConst=*/true);
  for (Value v : op->getResults())
    arg(v, /*isConst=*/false);
  os << kernelSizeArguments(op) << ",\n      stream, err, errlen))\n    return 1;\n";
}

/// An integer of a library call's params.
static int64_t param(LibraryCallOp call, StringRef name) {
  return call.getParams().getAs<IntegerAttr>(name).getInt();
}

/// An integer list of a library call's params.
static ArrayRef<int64_t> paramList(LibraryCallOp call, StringRef name) {
  return call.getParams().getAs<DenseI64ArrayAttr>(name).asArrayRef();
}

/// "'conv', 'add', 'relu'": the ONNX nodes of everything `call` computes
/// (its location fuses those of the ops folded into it).
static std::string foldedNodes(LibraryCallOp call) {
  return nodeList(sourceNodeNames(call));
}

void emitMatmulCall(llvm::raw_ostream &os, LibraryCallOp call, size_t index,
                    const BufferNames &buffers) {
  Value a = call.getOperandByRole("a"), b = call.getOperandByRole("b");
  Value bias = call.getOperandByRole("bias"), d = call.getResult(0);
  StringRef epilogue = call.getEpilogue();
  // KILN_CUDA_EPILOGUE_RELU (1) or _GELU_TANH (2), after the bias.
  int activation = epilogue.ends_with("relu")        ? 1
                   : epilogue.ends_with("gelu_tanh") ? 2
                                                     : 0;
  // Numbers, or run-time sizes in a package compiled for a range of sizes
  // (kiln.sym_params); cuBLASLt's plans are cached per shape.
  std::string batch = paramCExpr(call, "batch"), m = paramCExpr(call, "m"),
              n = paramCExpr(call, "n"), k = paramCExpr(call, "k");
  auto symbolic = call->getAttrOfType<DictionaryAttr>(kSymParamsAttr);
  std::string strideD =
      symbolic && (symbolic.get("m") || symbolic.get("n"))
          ? m + " * " + n
          : std::to_string(param(call, "m") * param(call, "n"));
  bool transA = call.getTransposeA(), transB = call.getTransposeB();
  std::string node = firstNode(call);
  os << "  // Step " << index << ": kiln.matmul (cuBLASLt), ONNX node '"
     << commentSafe(node) << "': " << batch << " x [" << m << ", " << k
     << "] x [" << k << ", " << n << "]"
     << (epilogue == "none"
             ? std::string()
             : ", epilogue " + epilogue.str() + " (ONNX nodes " +
                   foldedNodes(call) + ")")
     << "\n";
  os << "  if (kiln_cuda_matmul("
     << static_cast<int>(valueType(d).dtype) << ", " << batch << ", " << m
     << ", " << n << ", " << k << ",\n"
     << "                       " << buffers.pointer(a) << ", "
     << paramCExpr(call, "stride_a") << ", " << transA << ", // "
     << buffers.describe(a) << (transA ? ", transposed" : "") << "\n"
     << "                       " << buffers.pointer(b) << ", "
     << paramCExpr(call, "stride_b") << ", " << transB << ", // "
     << buffers.describe(b) << (transB ? ", transposed" : "") << "\n"
     << "                       " << buffers.pointer(d) << ", " << strideD
     << ", // " << buffers.describe(d) << "\n"
     << "                       " << (bias ? buffers.pointer(bias) : "nullptr")
     << ", " << activation << ", " << buffers.libraryWorkspace(d)
     << ", stream, err, errlen))"
     << (bias ? " // bias: " + buffers.describe(bias) + " (epilogue)" : "")
     << (activation == 1   ? " // ReLU (epilogue)"
         : activation == 2 ? " // GELU, tanh form (epilogue)"
                           : "")
     << "\n"
     << "    return fail(err, errlen, std::string(\"node '\") + "
     << quote(node) << " + \"' (cuBLASLt matmul): \" + (err ? err : \"\"));\n";
}

void emitConvCall(llvm::raw_ostream &os, LibraryCallOp call, size_t index,
                  const BufferNames &buffers) {
  Value x = call.getOperandByRole("x"), w = call.getOperandByRole("w");
  Value bias = call.getOperandByRole("bias");
  Value z = call.getOperandByRole("residual"), y = call.getResult(0);
  bool epilogue = call.getEpilogue() != "none";
  auto layout = call.getParams().getAs<StringAttr>("layout");
  bool channelsLast = layout && layout.getValue() == "nhwc";
  ValueType tx = valueType(x), tw = valueType(w), ty = valueType(y);
  std::string node = firstNode(call);
  auto list = [](ArrayRef<int64_t> v) {
    std::string s;
    for (auto [i, e] : llvm::enumerate(v))
      s += (i ? ", " : "") + std::to_string(e);
    return s;
  };
  os << "  // Step " << index << ": kiln.conv (cuDNN), ONNX node '"
     << commentSafe(node) << "': [" << list(tx.shape) << "] * ["
     << list(tw.shape) << "] -> [" << list(ty.shape) << "]"
     << (channelsLast ? " channels last (NHWC, w as [M, kH, kW, C])" : "")
     << ", group "
     << param(call, "group")
     << (epilogue ? std::string(", then") + (bias ? " + bias" : "") +
                        (z ? " + residual" : "") +
                        " and ReLU in the same cuDNN call (ONNX nodes " +
                        foldedNodes(call) + ")"
                  : std::string())
     << "\n";
  os << "  {\n";
  auto array = [&](const char *name, ArrayRef<int64_t> v) {
    os << "    static const int64_t " << name << "[] = {" << list(v)
       << "};\n";
  };
  // A shape with run-time sizes is built on every run (cuDNN's plans are
  // cached per shape).
  auto shapeArray = [&](const char *name, const ValueType &t) {
    if (!t.symbolic)
      return array(name, t.shape);
    os << "    const int64_t " << name << "[] = " << shapeExpr(t) << ";\n";
  };
  shapeArray("xShape", tx);
  shapeArray("wShape", tw);
  shapeArray("yShape", ty);
  array("strides", paramList(call, "strides"));
  array("pads", paramList(call, "pads"));
  array("dilations", paramList(call, "dilations"));
  auto optional = [&](Value v, const char *what) {
    return v ? buffers.pointer(v) + ", /* " + what + ": " +
                   buffers.describe(v) + " */ "
             : std::string("nullptr, ");
  };
  os << "    if (kiln_cuda_conv" << (epilogue ? "_relu" : "") << "("
     << static_cast<int>(ty.dtype) << ", " << tx.shape.size() - 2 << ", "
     << (channelsLast ? "KILN_CUDA_LAYOUT_NHWC" : "KILN_CUDA_LAYOUT_NCHW")
     << ",\n"
     << "                       xShape, " << buffers.pointer(x) << ", // "
     << buffers.describe(x) << "\n"
     << "                       wShape, " << buffers.pointer(w) << ", // "
     << buffers.describe(w) << "\n"
     << "                       "
     << (epilogue ? optional(bias, "bias") + optional(z, "residual")
                  : std::string("nullptr, "))
     << param(call, "group") << ", strides, pads, dilations,\n"
     << "                       yShape, " << buffers.pointer(y) << ", // "
     << buffers.describe(y) << "\n"
     << "                       stream, err, errlen))\n"
     << "      return fail(err, errlen, std::string(\"node '\") + "
     << quote(node) << " + \"' (cuDNN conv): \" + (err ? err : \"\"));\n"
     << "  }\n";
}

void emitHostStep(llvm::raw_ostream &os, Operation *op, size_t index,
                  int attrIndex, const BufferNames &buffers) {
  auto place = op->getAttrOfType<StringAttr>(kReferenceAttr);
  bool onDevice = place && place.getValue() == "device";
  StringRef kindName = onDevice ? "custom op" : "fallback";
  StringRef opName = op->getName().getStringRef();
  opName.consume_front("kiln.");
  std::vector<std::string> nodes = sourceNodeNames(op);
  std::string node = nodes.empty() ? opName.str() : nodes.front();
  std::string opType = sourceOpType(op->getLoc());
  os << "  // Step " << index << ": kiln." << opName << " (" << kindName
     << (onDevice ? ", its CUDA kernel on the device" : ", on the host")
     << "), ONNX node '" << commentSafe(node) << "'"
     << (opType.empty() ? "" : " (" + opType + ")") << "\n";
  auto argList = [&](auto values, bool results) {
    for (Value v : values) {
      ValueType t = valueType(v);
      bool used = !results || buffers.hasBuffer(v);
      os << "\n        DeviceArg{" << (used ? buffers.pointer(v) : "nullptr")
         << ", " << dtypeEnum(t.dtype) << ", " << shapeExpr(t)
         << "}, // " << buffers.describe(v);
    }
  };
  if (onDevice)
    os << "  if (callCustomOnDevice({";
  else
    os << "  if (callOnHost(" << quote(opName) << ", {";
  argList(op->getOperands(), false);
  os << "\n      }, m->attrs[" << attrIndex << "], {";
  argList(op->getResults(), true);
  os << "\n      }, " << quote(node) << ", stream, err, errlen))\n"
     << "    return 1;\n";
}

void emitCopy(llvm::raw_ostream &os, const std::string &destination,
              const std::string &source, const std::string &bytes,
              const std::string &comment) {
  os << "  if (kiln_cuda_memcpy(" << destination << ", " << source
     << ", " << bytes << ", 2, stream, err, errlen)) // " << comment << "\n"
     << "    return 1;\n";
}

} // namespace cudawrapper
} // namespace kiln
