//===- WrapperEmitter.cpp - The generated host wrapper --------------------===//
//
// This file implements the emitter of wrapper.cpp (model.h is
// ModelHeaderEmitter.cpp's). The wrapper
// holds static signature tables, a kiln_model struct (the weight pointers and
// the prebuilt attributes of every fallback op), and kiln_model_run, which
// executes the graph's top-level ops in program order: each fusion region is a
// call of its kiln_kernels:: function with typed pointers into the inputs,
// weights, arena or outputs; each other op wraps its buffers as kiln::Tensor
// views (no copy), calls kiln::Dispatcher::global() and copies the result
// into its planned slot. Every step is commented with its ONNX nodes.
//
//===----------------------------------------------------------------------===//

#include "codegen/WrapperEmitter.h"
#include "codegen/WrapperSupport.h"
#include "passes/FusionRules.h"
#include "passes/TensorConversion.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace kiln {

using namespace wrapper;

static std::string formatInt(int64_t v) {
  if (v == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + (v > INT32_MAX || v < INT32_MIN ? "LL" : "");
}

static std::string formatDouble(double v) {
  if (std::isnan(v))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v))
    return v > 0 ? "std::numeric_limits<double>::infinity()"
                 : "-std::numeric_limits<double>::infinity()";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

/// True for tensors of f16 or bf16.
static bool isHalfTensor(Type t) {
  Type e = cast<RankedTensorType>(t).getElementType();
  return e.isF16() || e.isBF16();
}

//===----------------------------------------------------------------------===//
// Attributes of fallback ops, as C++ initializers
//===----------------------------------------------------------------------===//

/// Emits `a.set(...)` lines for `attrs` into `os`; tensor data goes to
/// `globals` as byte arrays named after `prefix`.
static void emitAttributes(const Attributes &attrs, StringRef prefix,
                           llvm::raw_ostream &os, llvm::raw_ostream &globals) {
  int tensorIndex = 0;
  for (const auto &[name, value] : attrs.all()) {
    os << "  a.set(" << quote(name) << ", ";
    if (auto *i = std::get_if<int64_t>(&value)) {
      os << "int64_t(" << formatInt(*i) << ")";
    } else if (auto *d = std::get_if<double>(&value)) {
      os << "double(" << formatDouble(*d) << ")";
    } else if (auto *s = std::get_if<std::string>(&value)) {
      os << "std::string(" << quote(*s) << ", " << s->size() << ")";
    } else if (auto *is = std::get_if<std::vector<int64_t>>(&value)) {
      os << "std::vector<int64_t>{";
      for (auto [k, v] : llvm::enumerate(*is))
        os << (k ? ", " : "") << formatInt(v);
      os << "}";
    } else if (auto *ds = std::get_if<std::vector<double>>(&value)) {
      os << "std::vector<double>{";
      for (auto [k, v] : llvm::enumerate(*ds))
        os << (k ? ", " : "") << formatDouble(v);
      os << "}";
    } else if (auto *dt = std::get_if<DType>(&value)) {
      os << dtypeEnum(*dt);
    } else if (auto *t = std::get_if<Tensor>(&value)) {
      Tensor c = t->contiguous();
      std::string array =
          (prefix + "_tensor" + std::to_string(tensorIndex++)).str();
      const auto *bytes = static_cast<const unsigned char *>(c.rawData());
      globals << "alignas(64) const unsigned char " << array << "["
              << std::max<size_t>(c.nbytes(), 1) << "] = {";
      for (size_t k = 0; k < c.nbytes(); ++k)
        globals << (k % 16 ? " " : "\n    ") << unsigned(bytes[k]) << ",";
      if (c.nbytes() == 0)
        globals << "0";
      globals << "};\n";
      os << "tensorAttr(" << dtypeEnum(c.dtype()) << ", "
         << formatShape(c.shape()) << ", " << array << ", " << c.nbytes()
         << ")";
    }
    os << ");\n";
  }
}

//===----------------------------------------------------------------------===//
// wrapper.cpp
//===----------------------------------------------------------------------===//

/// The fixed part of wrapper.cpp after the includes: helpers used by steps.
static const char *kWrapperHelpers = R"cpp(
namespace {

/// The arena at a byte offset.
inline void *at(void *arena, size_t offset) {
  return static_cast<char *>(arena) + offset;
}

/// Writes `msg` into the caller's error buffer and returns 1.
int fail(char *err, size_t errlen, const std::string &msg) {
  if (err && errlen) {
    size_t n = msg.size() < errlen - 1 ? msg.size() : errlen - 1;
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
  }
  return 1;
}

/// A tensor viewing a contiguous buffer (no copy, not owned).
kiln::Tensor view(const void *data, kiln::DType dtype, kiln::Shape shape) {
  size_t bytes = kiln::numElements(shape) * kiln::dtypeSize(dtype);
  auto storage = kiln::Storage::wrap(const_cast<void *>(data), bytes,
                                     kiln::Device::CPU, nullptr);
  kiln::Shape strides = kiln::contiguousStrides(shape);
  return kiln::Tensor(std::move(storage), dtype, std::move(shape),
                      std::move(strides), 0);
}

/// A tensor attribute from its bytes.
kiln::Tensor tensorAttr(kiln::DType dtype, kiln::Shape shape,
                        const unsigned char *data, size_t bytes) {
  kiln::Tensor t = kiln::Tensor::empty(dtype, shape);
  if (bytes)
    std::memcpy(t.rawData(), data, bytes);
  return t;
}

/// Runs a reference kernel; a failure names the ONNX node.
int call(const char *op, const std::vector<kiln::Tensor> &in,
         const kiln::Attributes &attrs, std::vector<kiln::Tensor> &out,
         const char *node, char *err, size_t errlen) {
  kiln::Status status = kiln::Dispatcher::global().call(op, in, attrs, out);
  if (!status)
    return fail(err, errlen,
                std::string("node '") + node + "' (kiln." + op +
                    "): " + status.message());
  return 0;
}

/// Checks result `r` of a reference kernel against the static type the
/// compiler planned for.
int checkResult(const std::vector<kiln::Tensor> &out, size_t r,
                kiln::DType dtype, const kiln::Shape &shape, const char *node,
                char *err, size_t errlen) {
  if (r >= out.size() || !out[r].defined())
    return fail(err, errlen,
                std::string("node '") + node +
                    "': the reference kernel did not produce result " +
                    std::to_string(r));
  const kiln::Tensor &t = out[r];
  if (t.dtype() != dtype || t.shape() != shape)
    return fail(err, errlen,
                std::string("node '") + node + "': result " +
                    std::to_string(r) + " is " + t.typeString() +
                    " but the compiled graph expects " +
                    kiln::dtypeName(dtype) + kiln::shapeToString(shape) +
                    " (a shape inference mismatch: please report it)");
  return 0;
}

/// Copies result `r` of a reference kernel into its planned buffer after
/// checking it.
int store(const std::vector<kiln::Tensor> &out, size_t r, void *dst,
          kiln::DType dtype, const kiln::Shape &shape, const char *node,
          char *err, size_t errlen) {
  if (checkResult(out, r, dtype, shape, node, err, errlen))
    return 1;
  kiln::Tensor c = out[r].contiguous();
  if (c.nbytes())
    std::memcpy(dst, c.rawData(), c.nbytes());
  return 0;
}

} // namespace
)cpp";

/// Emits one signature table group (names, dtypes, ranks, shapes).
static void emitSignatureTables(llvm::raw_ostream &os, StringRef kind,
                                const std::vector<SignatureEntry> &entries) {
  size_t n = entries.size();
  os << "constexpr int kNum" << kind << "s = " << n << ";\n";
  os << "const char *const k" << kind << "Names[] = {";
  for (const auto &e : entries)
    os << quote(e.name) << ", ";
  os << (n ? "" : "nullptr") << "};\n";
  os << "const int k" << kind << "DTypes[] = {";
  for (const auto &e : entries)
    os << static_cast<int>(e.dtype) << ", ";
  os << (n ? "" : "0") << "};\n";
  os << "const int k" << kind << "Ranks[] = {";
  for (const auto &e : entries)
    os << e.shape.size() << ", ";
  os << (n ? "" : "0") << "};\n";
  for (auto [i, e] : llvm::enumerate(entries)) {
    os << "const int64_t k" << kind << "Shape" << i << "["
       << std::max<size_t>(e.shape.size(), 1) << "] = "
       << (e.shape.empty() ? std::string("{0}") : formatShape(e.shape))
       << "; // " << commentSafe(e.name) << ": " << typeString(e.dtype, e.shape)
       << "\n";
  }
  os << "const int64_t *const k" << kind << "Shapes[] = {";
  for (size_t i = 0; i < n; ++i)
    os << "k" << kind << "Shape" << i << ", ";
  os << (n ? "" : "nullptr") << "};\n\n";
}

/// Emits the extern "C" accessors of one signature group.
static void emitSignatureAccessors(llvm::raw_ostream &os, StringRef kind,
                                   StringRef lower) {
  auto fn = [&](StringRef ret, StringRef what, StringRef table,
                StringRef dflt) {
    os << "KILN_EXPORT " << ret << " kiln_model_" << lower << "_" << what
       << "(int i) {\n  return i >= 0 && i < kNum" << kind << "s ? k" << kind
       << table << "[i] : " << dflt << ";\n}\n";
  };
  fn("const char *", "name", "Names", "nullptr");
  fn("int", "dtype", "DTypes", "-1");
  fn("int", "rank", "Ranks", "-1");
  fn("const int64_t *", "shape", "Shapes", "nullptr");
}

FailureOr<std::string> emitWrapper(func::FuncOp graph, const MemoryPlan &plan,
                                   const WrapperTarget &target,
                                   StringRef modelName) {
  bool cuda = target.name == "cuda";
  std::string text, globalsText, attrText, stepsText, prepareText;
  llvm::raw_string_ostream os(text), globals(globalsText), attrs(attrText),
      runSteps(stepsText), prepareSteps(prepareText);
  BufferNames buffers(plan);

  // Weight preparation (WeightPreparation.cpp): steps that read only
  // weights run once, in kiln_model_create, into the model's own memory.
  PreparedWeights preparedWeights = planWeightPreparation(plan, cuda, buffers);
  const llvm::DenseSet<Operation *> &preparedOps = preparedWeights.ops;
  int64_t preparedBytes = preparedWeights.bytes;
  buffers.setPrepared(&preparedWeights.offsets);

  // Steps, in program order; attributes of fallback ops as builder functions.
  int numAttrs = 0, numKernels = 0;
  std::vector<std::string> attrBuilders; // by attribute index
  for (auto [index, op] : llvm::enumerate(plan.ops)) {
    StepKind kind = classifyStep(op);
    if (kind == StepKind::Constant)
      continue;
    llvm::raw_ostream &steps =
        preparedOps.count(op) ? prepareSteps : runSteps;
    std::vector<std::string> nodes = sourceNodeNames(op);
    if (kind == StepKind::Return) {
      bool any = false;
      for (auto [i, v] : llvm::enumerate(op->getOperands())) {
        const BufferLocation &loc = plan.at(v);
        if (loc.kind == BufferKind::Output && loc.index == (int)i)
          continue;
        if (!any)
          steps << "  // Outputs not written in place: copies.\n";
        any = true;
        std::string comment = "output '" + commentSafe(plan.outputs[i].name) +
                              "' <- " + buffers.describe(v);
        if (cuda) {
          emitCudaOutputCopy(steps, i, buffers.pointer(v),
                             plan.outputs[i].bytes, comment);
          continue;
        }
        steps << "  std::memcpy(outputs[" << i << "], " << buffers.pointer(v)
              << ", " << plan.outputs[i].bytes << "); // " << comment << "\n";
      }
      continue;
    }

    if (kind == StepKind::Kernel && cuda &&
        isEpilogueFoldedIntoCudaMatmul(op, buffers)) {
      steps << "  // Step " << index
            << ": kernel folded into the cuBLASLt matmul before it (its "
               "epilogue), ONNX nodes "
            << nodeList(nodes) << "\n";
      ++numKernels; // its function stays in kiln_model_kernel_name's list
      continue;
    }
    if (kind == StepKind::Kernel && cuda && isFoldedIntoCudaConv(op, buffers)) {
      steps << "  // Step " << index
            << ": kernel (ReLU epilogue) folded into the cuDNN convolution "
               "before it, ONNX nodes "
            << nodeList(nodes) << "\n";
      ++numKernels; // its function stays in kiln_model_kernel_name's list
      continue;
    }
    if (cuda && (kind == StepKind::Kernel || target.launches.count(op))) {
      auto it = target.launches.find(op);
      assert(it != target.launches.end() && "fusion without a CUDA kernel");
      emitCudaKernelStep(steps, op, index, it->second, numKernels++, buffers);
      continue;
    }
    if (kind == StepKind::Kernel) {
      std::string name = op->getAttrOfType<StringAttr>("name").getValue().str();
      StringRef fusionKind = "pointwise";
      if (auto k = op->getAttrOfType<StringAttr>("kind"))
        fusionKind = k.getValue();
      steps << "  // Step " << index << ": kernel " << name << " ("
            << fusionKind << "), ONNX nodes " << nodeList(nodes) << "\n";
      steps << "  kiln_kernels::" << name << "(";
      bool firstArg = true;
      auto arg = [&](Value v, bool isConst) {
        ValueType t = valueType(v);
        steps << (firstArg ? "\n" : ",\n") << "      static_cast<"
              << (isConst ? "const " : "") << kernelCType(t.dtype) << " *>("
              << buffers.pointer(v) << ") /* " << buffers.describe(v) << " */";
        firstArg = false;
      };
      for (Value v : op->getOperands())
        arg(v, /*isConst=*/true);
      for (Value v : op->getResults())
        arg(v, /*isConst=*/false);
      steps << ");\n";
      continue;
    }

    // A transpose that cuBLASLt applies while reading, and a matmul
    // cuBLASLt takes.
    if (cuda && isFoldedIntoCudaMatmuls(op, buffers)) {
      steps << "  // Step " << index
            << ": kiln.transpose folded into the cuBLASLt matmuls that read "
               "it, ONNX node "
            << nodeList(nodes) << "\n";
      continue;
    }
    // A matmul cuBLASLt takes, a convolution cuDNN takes.
    if (cuda && kind == StepKind::Library &&
        (emitCudaMatmulStep(steps, op, index, buffers) ||
         emitCudaConvStep(steps, op, index, buffers)))
      continue;

    // Library or fallback op: the runtime's reference kernel.
    StringRef opName = op->getName().getStringRef();
    opName.consume_front("kiln.");
    std::string node = nodes.empty() ? opName.str() : nodes.front();
    std::string opType = sourceOpType(op->getLoc());
    int attrIndex = numAttrs++;
    std::string builder =
        "attrs" + std::to_string(attrIndex) + "_" + toIdentifier(opName);
    attrBuilders.push_back(builder);
    attrs << "/// Attributes of kiln." << opName << " (step " << index
          << ", ONNX node '" << commentSafe(node) << "').\n";
    attrs << "kiln::Attributes " << builder << "() {\n  kiln::Attributes a;\n";
    emitAttributes(toAttributes(op->getAttrDictionary()), builder, attrs,
                   globals);
    attrs << "  return a;\n}\n\n";
    if (cuda) {
      emitCudaHostStep(steps, op, index,
                       kind == StepKind::Library ? "library" : "fallback",
                       attrIndex, buffers);
      continue;
    }

    steps << "  // Step " << index << ": kiln." << opName << " ("
          << (kind == StepKind::Library ? "library" : "fallback")
          << "), ONNX node '" << commentSafe(node) << "'"
          << (opType.empty() ? "" : " (" + opType + ")") << "\n";
    steps << "  {\n    std::vector<kiln::Tensor> in = {";
    for (Value v : op->getOperands()) {
      ValueType t = valueType(v);
      steps << "\n        view(" << buffers.pointer(v) << ", "
            << dtypeEnum(t.dtype) << ", " << formatShape(t.shape) << "), // "
            << buffers.describe(v);
    }
    steps << "\n    };\n";
    steps << "    std::vector<kiln::Tensor> out(" << op->getNumResults()
          << ");\n";
    steps << "    if (call(" << quote(opName) << ", in, m->attrs[" << attrIndex
          << "], out, " << quote(node) << ", err, errlen))\n"
          << "      return 1;\n";
    for (OpResult r : op->getResults()) {
      const BufferLocation &loc = plan.at(r);
      if (loc.kind == BufferKind::None)
        continue;
      ValueType t = valueType(r);
      steps << "    if (store(out, " << r.getResultNumber() << ", "
            << buffers.pointer(r) << ", " << dtypeEnum(t.dtype) << ", "
            << formatShape(t.shape) << ", " << quote(node)
            << ", err, errlen)) // " << buffers.describe(r) << "\n"
            << "      return 1;\n";
    }
    steps << "  }\n";
  }

  // The file.
  os << "//===- wrapper.cpp - Kiln model '" << modelName
     << "' (generated) ---------------===//\n"
     << "//\n"
     << "// Generated by `kiln compile`; do not edit. This file implements "
        "the C ABI of\n"
     << "// kiln/runtime/ModelABI.h for one graph: signature tables, "
        "kiln_model_create\n"
     << "// (binds the weights) and kiln_model_run, which runs the ops in "
        "program order:\n";
  if (cuda)
    os << "// launches of the kernels of kernels.cubin (kernels.cu), "
          "cuBLASLt matmuls and\n"
       << "// device copies on the run's stream, and the runtime's reference "
          "kernels on the\n"
       << "// host for the other ops (operands copied from and results to "
          "the device).\n";
  else
    os << "// generated kernels (kernels.cpp) and the runtime's reference "
          "kernels through\n"
       << "// kiln::Dispatcher.\n";
  os << "// Each step names its ONNX nodes.\n"
     << "//\n"
     << "//===-------------------------------------------------------------"
        "---------===//\n\n";
  os << "#include \"kiln/runtime/Attributes.h\"\n"
     << (cuda ? "#include \"kiln/runtime/Cuda.h\"\n"
                "#include \"kiln/runtime/CudaServices.h\"\n"
              : "")
     << "#include \"kiln/runtime/Dispatcher.h\"\n"
     << "#include \"kiln/runtime/ModelABI.h\"\n"
     << "#include \"kiln/runtime/Tensor.h\"\n\n"
     << "#include <cstdint>\n#include <cstdlib>\n#include <cstring>\n"
        "#include <exception>\n"
     << "#include <limits>\n#include <memory>\n#include <string>\n#include <vector>\n\n"
     << "#define KILN_EXPORT extern \"C\" "
        "__attribute__((visibility(\"default\")))\n\n";

  // Kernel declarations (the definitions are in kernels.cpp).
  bool needHalf = false;
  for (Operation *op : plan.ops) {
    if (cuda || classifyStep(op) != StepKind::Kernel)
      continue;
    for (Type t : op->getOperandTypes())
      needHalf |= isHalfTensor(t);
    for (Type t : op->getResultTypes())
      needHalf |= isHalfTensor(t);
  }
  if (needHalf)
    os << "// The 16-bit float types of kernels.cpp (used here through "
          "pointers only).\nstruct kiln_f16;\nstruct kiln_bf16;\n\n";
  if (!cuda) {
    os << "namespace kiln_kernels {\n";
    for (Operation *op : plan.ops) {
      if (classifyStep(op) != StepKind::Kernel)
        continue;
      auto it = target.kernelDeclarations.find(op);
      assert(it != target.kernelDeclarations.end() &&
             "fusion without a kernel");
      std::string decl = it->second;
      while (!decl.empty() && (decl.back() == '\n' || decl.back() == ' '))
        decl.pop_back();
      os << decl << (StringRef(decl).ends_with(";") ? "" : ";") << "\n";
    }
    os << "} // namespace kiln_kernels\n";
  }
  os << kWrapperHelpers << (cuda ? cudaWrapperHelpers() : "") << "\n";

  os << "namespace {\n\n// The signature.\n";
  emitSignatureTables(os, "Input", plan.inputs);
  emitSignatureTables(os, "Output", plan.outputs);
  emitSignatureTables(os, "Weight", plan.weights);
  os << "/// The planned arena (" << plan.buffers.size() << " buffers).\n"
     << "constexpr size_t kArenaBytes = " << plan.arenaBytes << ";\n\n";
  if (cuda) {
    os << "/// The kernels of kernels.cubin, in the order of "
          "kiln_model_create_cuda's\n/// functions.\n"
       << "constexpr int kNumKernels = " << numKernels << ";\n"
       << "const char *const kKernelNames[] = {";
    for (Operation *op : plan.ops)
      if (target.launches.count(op))
        os << quote(target.launches.find(op)->second.name) << ", ";
    os << (numKernels ? "" : "nullptr") << "};\n\n";
  }
  os << globalsText << (globalsText.empty() ? "" : "\n");
  os << attrText;
  os << "} // namespace\n\n";

  os << "/// A model handle: the bound weights"
     << (cuda ? " (device pointers), the kernels' CUfunctions" : "")
     << " and the\n/// prebuilt attributes of the reference-kernel steps.\n"
     << "struct kiln_model {\n  std::vector<const void *> weights;\n"
     << (cuda ? "  std::vector<void *> functions;\n" : "")
     << "  std::vector<kiln::Attributes> attrs;\n"
     << "  /// What prepareWeights computed from the weights ("
     << preparedBytes << " bytes).\n"
     << "  void *prepared = nullptr;\n"
     << "  ~kiln_model() { "
     << (cuda ? "kiln::cuda::deallocate(prepared);" : "std::free(prepared);")
     << " }\n};\n\n";
  os << "namespace {\n\n"
     << "/// Bytes of the values computed once from the weights.\n"
     << "constexpr size_t kPreparedBytes = " << preparedBytes << ";\n\n"
     << "/// The steps that read only weights, run once by "
        "kiln_model_create.\n"
     << "int prepareWeights(const kiln_model *m"
     << (cuda ? ", void *stream" : "")
     << ", char *err, size_t errlen) {\n"
     << "  (void)m, (void)err, (void)errlen;\n"
     << (cuda ? "  (void)stream;\n" : "") << prepareText
     << "  return 0;\n}\n\n} // namespace\n\n";

  os << "KILN_EXPORT int kiln_model_abi_version(void) {\n"
     << "  return KILN_MODEL_ABI_VERSION;\n}\n"
     << "KILN_EXPORT const char *kiln_model_target(void) { return "
     << quote(target.name) << "; }\n"
     << "KILN_EXPORT int kiln_model_num_inputs(void) { return kNumInputs; }\n"
     << "KILN_EXPORT int kiln_model_num_outputs(void) { return kNumOutputs; "
        "}\n"
     << "KILN_EXPORT int kiln_model_num_weights(void) { return kNumWeights; "
        "}\n";
  emitSignatureAccessors(os, "Input", "input");
  emitSignatureAccessors(os, "Output", "output");
  emitSignatureAccessors(os, "Weight", "weight");
  os << "KILN_EXPORT size_t kiln_model_arena_bytes(void) { return "
        "kArenaBytes; }\n\n";

  // kiln_model_create[_cuda]: binds the weights (and, for cuda, the kernels'
  // functions) and builds the reference steps' attributes.
  std::string create = cuda ? "kiln_model_create_cuda" : "kiln_model_create";
  os << "KILN_EXPORT int " << create << "(const void *const *weights,\n"
     << (cuda ? "    void *const *functions,\n" : "")
     << "    kiln_model **out, char *err, size_t errlen) {\n"
     << "  if (!out)\n    return fail(err, errlen, \"" << create
     << ": out is null\");\n"
     << "  *out = nullptr;\n"
     << "  if (kNumWeights > 0 && !weights)\n"
     << "    return fail(err, errlen, \"" << create << ": weights is null\");\n";
  if (cuda)
    os << "  if (kNumKernels > 0 && !functions)\n"
       << "    return fail(err, errlen, \"" << create
       << ": functions is null\");\n";
  os << "  try {\n    auto m = std::make_unique<kiln_model>();\n"
     << "    for (int i = 0; i < kNumWeights; ++i) {\n"
     << "      if (!weights[i]) {\n"
     << "        return fail(err, errlen, std::string(\"weight '\") + "
        "kWeightNames[i] +\n"
     << "                                         \"' is not bound (null "
        "pointer)\");\n      }\n"
     << "      m->weights.push_back(weights[i]);\n    }\n";
  if (cuda)
    os << "    for (int i = 0; i < kNumKernels; ++i) {\n"
       << "      if (!functions[i])\n"
       << "        return fail(err, errlen, std::string(\"kernel '\") + "
          "kKernelNames[i] +\n"
       << "                                         \"' is not bound (null "
          "function)\");\n"
       << "      m->functions.push_back(functions[i]);\n    }\n";
  for (const std::string &builder : attrBuilders)
    os << "    m->attrs.push_back(" << builder << "());\n";
  if (cuda)
    os << "    if (kPreparedBytes > 0) {\n"
       << "      kiln::Expected<void *> memory = "
          "kiln::cuda::allocate(kPreparedBytes);\n"
       << "      if (!memory)\n"
       << "        return fail(err, errlen, \"" << create
       << ": prepared weights: \" + memory.status().message());\n"
       << "      m->prepared = *memory;\n"
       << "      // Wait for the steps even when one failed: the memory they\n"
       << "      // use is freed on return.\n"
       << "      int failed = prepareWeights(m.get(), nullptr, err, errlen);\n"
       << "      char syncErr[256];\n"
       << "      if (kiln_cuda_stream_synchronize(nullptr, syncErr, "
          "sizeof(syncErr)) && !failed)\n"
       << "        return fail(err, errlen, syncErr);\n"
       << "      if (failed)\n        return 1;\n    }\n";
  else
    os << "    if (kPreparedBytes > 0) {\n"
       << "      m->prepared = std::aligned_alloc(256, (kPreparedBytes + 255) "
          "/ 256 * 256);\n"
       << "      if (!m->prepared)\n"
       << "        return fail(err, errlen, \"" << create
       << ": out of memory for the prepared weights\");\n"
       << "      if (prepareWeights(m.get(), err, errlen))\n"
       << "        return 1;\n    }\n";
  os << "    *out = m.release();\n    return 0;\n"
     << "  } catch (const std::exception &e) {\n"
     << "    return fail(err, errlen, std::string(\"" << create
     << ": \") + e.what());\n"
     << "  } catch (...) {\n"
     << "    return fail(err, errlen, \"" << create
     << ": unknown exception\");\n  }\n}\n\n";

  os << "KILN_EXPORT void kiln_model_destroy(kiln_model *model) { delete "
        "model; }\n\n";

  std::string streamParam = cuda ? ", void *stream" : "";
  os << "namespace {\n\n/// The graph, in program order.\n"
     << "int runGraph(const kiln_model *m, const void *const *inputs,\n"
     << "             void *const *outputs, void *arena" << streamParam
     << ", char *err,\n             size_t errlen) {\n"
     << "  (void)m, (void)inputs, (void)outputs, (void)arena, (void)err, "
        "(void)errlen;\n"
     << (cuda ? "  (void)stream;\n" : "") << stepsText
     << "  return 0;\n}\n\n} // namespace\n\n";

  std::string run = cuda ? "kiln_model_run_cuda" : "kiln_model_run";
  os << "KILN_EXPORT int " << run << "(kiln_model *model, const void *const "
     << "*inputs,\n    void *const *outputs, void *arena" << streamParam
     << ", char *err, size_t errlen) {\n"
     << "  if (!model)\n    return fail(err, errlen, \"" << run
     << ": model is null\");\n"
     << "  if ((kNumInputs > 0 && !inputs) || (kNumOutputs > 0 && !outputs) "
        "||\n      (kArenaBytes > 0 && !arena))\n"
     << "    return fail(err, errlen, \"" << run
     << ": inputs, outputs or arena is null\");\n"
     << "  try {\n"
     << "    return runGraph(model, inputs, outputs, arena"
     << (cuda ? ", stream" : "") << ", err, errlen);\n"
     << "  } catch (const std::exception &e) {\n"
     << "    return fail(err, errlen, std::string(\"" << run
     << ": \") + e.what());\n"
     << "  } catch (...) {\n"
     << "    return fail(err, errlen, \"" << run
     << ": unknown exception\");\n  }\n}\n";

  if (cuda) {
    // The kernels to bind, and the host entry points, which a cuda package
    // refuses (its pointers must be device pointers).
    os << "\nKILN_EXPORT int kiln_model_num_kernels(void) { return "
          "kNumKernels; }\n"
       << "KILN_EXPORT const char *kiln_model_kernel_name(int i) {\n"
       << "  return i >= 0 && i < kNumKernels ? kKernelNames[i] : nullptr;\n}\n"
       << "KILN_EXPORT int kiln_model_create(const void *const *, kiln_model "
          "**out,\n    char *err, size_t errlen) {\n"
       << "  if (out)\n    *out = nullptr;\n"
       << "  return fail(err, errlen, \"this package was compiled for cuda: "
          "load it with kiln::Model, which binds its kernels\");\n}\n"
       << "KILN_EXPORT int kiln_model_run(kiln_model *, const void *const *, "
          "void *const *,\n    void *, char *err, size_t errlen) {\n"
       << "  return fail(err, errlen, \"this package was compiled for cuda: "
          "run it with kiln_model_run_cuda\");\n}\n";
  }
  return text;
}

} // namespace kiln
