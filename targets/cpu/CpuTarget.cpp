//===- CpuTarget.cpp - The CPU backend ------------------------------------===//
//
// This file implements the CPU target: its lowering (kiln-lower-cpu), one
// C++ kernel per kiln.fusion in kernels.cpp (CppPrinter.cpp), the wrapper
// steps (a call of the kernel's kiln_kernels:: function with typed pointers
// into the inputs, weights, arena or outputs; a call of the runtime's kernel
// through kiln::Dispatcher on kiln::Tensor views of the planned buffers for
// library calls and reference steps, its result copied into its planned
// slot), and the build: kernels.cpp and wrapper.cpp in one host-compiler run
// with OpenMP.
//
//===----------------------------------------------------------------------===//

#include "targets/cpu/CpuTarget.h"
#include "codegen/HostCompiler.h"
#include "codegen/WrapperSupport.h"
#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"
#include "passes/Passes.h"
#include "targets/cpu/CppKernel.h"
#include "targets/cpu/OneDnnSteps.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <fstream>

using namespace mlir;

namespace kiln {
namespace {

using namespace wrapper;

/// True for the tensors whose kernel C type is a struct of kernels.cpp
/// (f16, bf16, the float8 formats).
bool isHalfTensor(Type t) {
  Type e = cast<RankedTensorType>(t).getElementType();
  return e.isF16() || e.isBF16() || e.isFloat8E4M3FN() ||
         e.isFloat8E4M3FNUZ() || e.isFloat8E5M2() || e.isFloat8E5M2FNUZ();
}

class CpuGraphCodegen : public GraphCodegen {
public:
  explicit CpuGraphCodegen(const PackageNames &names) : GraphCodegen(names) {}

  StringRef kernelSourceFile() const override { return "kernels.cpp"; }
  StringRef targetName() const override { return "cpu"; }

  LogicalResult emitKernels(func::FuncOp graph) override {
    for (Operation &op : graph.getBody().front()) {
      FailureOr<CppKernel> kernel = failure();
      std::string kind;
      if (auto fusion = dyn_cast<FusionOp>(op)) {
        kernel = emitCppKernel(fusion);
        if (failed(kernel))
          return failure();
        kind = fusion.getKind().str();
      } else if (auto name = op.getAttrOfType<StringAttr>(kKernelAttr)) {
        std::optional<CppKernel> single = emitCppOpKernel(&op, name.getValue());
        if (!single)
          return op.emitOpError("is tagged with kernel '")
                 << name.getValue() << "' but the C++ printer has none";
        kernel = std::move(*single);
        kind = op.getName().stripDialect().str();
      } else {
        continue;
      }
      needHalf_ |= llvm::any_of(op.getOperandTypes(), isHalfTensor) ||
                   llvm::any_of(op.getResultTypes(), isHalfTensor);
      KernelRecord record{kernel->name, kind, sourceNodeNames(&op)};
      record.loadTime = op.hasAttr(kLoadTimeAttr);
      kernels_.push_back(std::move(record));
      cppKernels_.push_back(std::move(*kernel));
    }
    return success();
  }

  std::string kernelName(Operation *op) override {
    if (auto name = op->getAttrOfType<StringAttr>(kKernelAttr))
      return name.getValue().str();
    return GraphCodegen::kernelName(op);
  }

  void emitIncludes(llvm::raw_ostream &os) override {
    os << "#include \"kiln/runtime/OneDnn.h\"\n"
       << "#ifdef _OPENMP\n#include <omp.h>\n#endif\n";
  }

  void emitDeclarations(llvm::raw_ostream &os) override {
    if (needHalf_)
      os << "// The 16- and 8-bit float types of kernels.cpp (used here "
            "through pointers only).\nstruct kiln_f16;\nstruct kiln_bf16;\n"
            "struct kiln_f8e4m3fn;\nstruct kiln_f8e4m3fnuz;\n"
            "struct kiln_f8e5m2;\nstruct kiln_f8e5m2fnuz;\n\n";
    os << "namespace kiln_kernels {\n";
    for (const CppKernel &kernel : cppKernels_) {
      std::string decl = kernel.declaration;
      while (!decl.empty() && (decl.back() == '\n' || decl.back() == ' '))
        decl.pop_back();
      os << decl << (StringRef(decl).ends_with(";") ? "" : ";") << "\n";
    }
    os << "} // namespace kiln_kernels\n";
  }

  void emitHelpers(llvm::raw_ostream &os) override { oneDnn_.emitHelpers(os); }
  void emitTables(llvm::raw_ostream &) override {}

  WrapperAbi wrapperAbi() override {
    WrapperAbi abi;
    abi.prepareWeights =
        "    if (kPreparedBytes > 0) {\n"
        "      m->prepared = std::aligned_alloc(256, (kPreparedBytes + 255) "
        "/ 256 * 256);\n"
        "      if (!m->prepared)\n"
        "        return fail(err, errlen, \"kiln_model_create: out of memory "
        "for the prepared weights\");\n"
        "      if (prepareWeights(m.get(), err, errlen))\n"
        "        return 1;\n    }\n" +
        std::string(OneDnnSteps::kCreateStatements);
    abi.modelMembers = OneDnnSteps::kModelMember;
    // The number of threads the calling thread's kernels use from now on
    // (the runtime calls it before each run: RunOptions::threads, or 1
    // while other runs of the model are in flight); 0 restores OpenMP's
    // default.
    abi.extraExports = "\nKILN_EXPORT void " + names().symbol("set_threads") +
                       "(int n) {\n"
                       "#ifdef _OPENMP\n"
                       "  static const int kDefaultThreads = "
                       "omp_get_max_threads();\n"
                       "  omp_set_num_threads(n > 0 ? n : kDefaultThreads);\n"
                       "#else\n  (void)n;\n#endif\n}\n";
    abi.extraDeclarations =
        "/// The number of OpenMP threads the calling thread's runs use "
        "from now on\n/// (0: OpenMP's default).\nvoid " +
        names().symbol("set_threads") + "(int n);\n";
    abi.headerHelpers =
        "/// Creates a model whose weights all live in weights.bin, given "
        "its\n/// contents (64-byte aligned, e.g. mmap'd); a package with fill "
        "weights\n/// (kNumFillWeights > 0) needs "
        "createFromWeightsFileAndFills. Returns 0 on\n/// success.\n"
        "inline int createFromWeightsFile(const void *weightsFile, "
        "kiln_model **out,\n"
        "                                 char *err = nullptr, size_t errlen "
        "= 0) {\n"
        "  const void *weights[kNumWeights > 0 ? kNumWeights : 1] = {};\n"
        "  for (int i = 0; i < kNumWeights; ++i)\n"
        "    if (kWeightOffsets[i] >= 0)\n"
        "      weights[i] = static_cast<const char *>(weightsFile) + "
        "kWeightOffsets[i];\n"
        "  return " +
        names().symbol("create") +
        "(weights, out, err, errlen);\n}\n\n"
        "/// Creates a model like createFromWeightsFile, the fill weights "
        "written first\n"
        "/// into `fillStorage`: kFillStorageBytes of caller memory, 64-byte "
        "aligned, kept\n"
        "/// alive until " +
        names().symbol("destroy") +
        " (may be null when kFillStorageBytes is 0).\n"
        "/// Returns 0 on success.\n"
        "inline int createFromWeightsFileAndFills(const void *weightsFile, "
        "void *fillStorage,\n"
        "                                         kiln_model **out, char "
        "*err = nullptr,\n"
        "                                         size_t errlen = 0) {\n"
        "  const void *weights[kNumWeights > 0 ? kNumWeights : 1] = {};\n"
        "  for (int i = 0; i < kNumWeights; ++i)\n"
        "    if (kWeightOffsets[i] >= 0)\n"
        "      weights[i] = static_cast<const char *>(weightsFile) + "
        "kWeightOffsets[i];\n"
        "  for (int f = 0; f < kNumFillWeights; ++f) {\n"
        "    char *at = static_cast<char *>(fillStorage) + "
        "kFillWeights[f].storageOffset;\n"
        "    fillWeight(f, at);\n"
        "    weights[kFillWeights[f].index] = at;\n  }\n"
        "  return " +
        names().symbol("create") + "(weights, out, err, errlen);\n}\n\n";
    return abi;
  }

  void emitKernelStep(llvm::raw_ostream &os, Operation *op, size_t index,
                      const BufferNames &buffers) override {
    auto fusion = dyn_cast<FusionOp>(op);
    std::string name = kernelName(op);
    os << "  // Step " << index << ": kernel " << name << " ("
       << (fusion ? fusion.getKind() : op->getName().stripDialect())
       << "), ONNX nodes " << nodeList(sourceNodeNames(op)) << "\n";
    // A kernel of a single op returns 1 on a bad index, 2 on a bad axis, 3
    // on another input value it cannot take (a roi_align's region).
    os << (fusion ? "  " : "  if (int kiln_rc = ") << "kiln_kernels::" << name
       << "(";
    bool firstArg = true;
    auto arg = [&](Value v, bool isConst) {
      ValueType t = valueType(v);
      os << (firstArg ? "\n" : ",\n") << "      static_cast<"
         << (isConst ? "const " : "") << kernelCType(t.dtype) << " *>("
         << buffers.pointer(v) << ") /* " << buffers.describe(v) << " */";
      firstArg = false;
    };
    for (Value v : op->getOperands())
      arg(v, /*isConst=*/true);
    for (Value v : op->getResults())
      arg(v, /*isConst=*/false);
    os << kernelSizeArguments(op) << ")";
    if (fusion) {
      os << ";\n";
      return;
    }
    std::string node = firstNode(op);
    os << ")\n    return fail(err, errlen, std::string(\"node '\") + "
       << quote(node)
       << " + (kiln_rc == 2 ? \"': the axis is out of range for the rank of "
          "its tensor\" : kiln_rc == 3 ? \"': an input holds a value the op "
          "cannot take (a region of interest that is not finite or needs a "
          "sampling grid over 4096 per axis)\" : \"': an index is outside "
          "the dimension it indexes\"));\n";
  }

  LogicalResult emitLibraryCall(llvm::raw_ostream &os, LibraryCallOp call,
                                size_t index, int attrIndex,
                                const BufferNames &buffers) override {
    // The runtime's own CPU kernels ("cpu": the panel GEMM) are made and
    // run with the oneDNN primitives (kiln::OneDnnPrimitives holds the
    // runtime's kernels that take a primitive's place).
    if (call.getLibrary() == "onednn" || call.getLibrary() == "cpu") {
      oneDnn_.emitStep(os, call, index, buffers);
      return success();
    }
    if (call.getLibrary() != "runtime")
      return call.emitOpError("has a callee the cpu target does not call");
    emitDispatcherCall(os, call, call.getRoutine(), "library", index, attrIndex,
                       buffers);
    return success();
  }

  void emitReferenceStep(llvm::raw_ostream &os, Operation *op, size_t index,
                         int attrIndex, const BufferNames &buffers) override {
    StringRef opName = op->getName().getStringRef();
    opName.consume_front("kiln.");
    emitDispatcherCall(os, op, opName, "fallback", index, attrIndex, buffers);
  }

  void emitCopy(llvm::raw_ostream &os, const std::string &destination,
                const std::string &source, const std::string &bytes,
                const std::string &comment) override {
    os << "  std::memcpy(" << destination << ", " << source << ", " << bytes
       << "); // " << comment << "\n";
  }

  KernelEntryPoint kernelEntryPoint(Operation *op,
                                    const BufferNames &buffers) override {
    auto fusion = dyn_cast<FusionOp>(op);
    std::string name = kernelName(op);
    KernelEntryPoint entry;
    entry.symbol = names().symbol(name);
    // A kernel of a single op returns 1 on a bad index, 2 on a bad axis, 3
    // on another bad input value, else 0.
    entry.returnType = fusion ? "void" : "int";
    entry.parameters = kernelParameters(op, buffers);
    entry.doc = kernelDoc(
        op, name, fusion ? fusion.getKind() : op->getName().stripDialect());
    if (!fusion)
      entry.doc.push_back("Returns 1 when an index is outside the dimension "
                          "it indexes, 2 when an axis is out of range, 3 "
                          "when an input holds another value the op cannot "
                          "take, else 0.");
    // The kernel takes its own pointer types (kiln_f16 for uint16_t bits).
    entry.body = std::string(fusion ? "  " : "  return ") +
                 "kiln_kernels::" + name + "(";
    unsigned i = 0;
    auto arg = [&](Value v, bool isInput, unsigned n) {
      ValueType t = valueType(v);
      entry.body += std::string(i++ ? ", " : "") + "reinterpret_cast<" +
                    (isInput ? "const " : "") + kernelCType(t.dtype) + " *>(" +
                    (isInput ? "in" : "out") + std::to_string(n) + ")";
    };
    for (auto [n, v] : llvm::enumerate(op->getOperands()))
      arg(v, /*isInput=*/true, n);
    for (auto [n, v] : llvm::enumerate(op->getResults()))
      arg(v, /*isInput=*/false, n);
    entry.body += kernelSizeArguments(op) + ");\n";
    return entry;
  }

  LogicalResult build(Location loc, PackageBuild &build) override {
    std::string text = emitKernelsFile(cppKernels_, names().name);
    std::ofstream out(build.dir + "/kernels.cpp", std::ios::binary);
    out << text;
    out.close();
    if (!out)
      return emitError(loc) << "cannot write '" << build.dir << "/kernels.cpp'";
    // -fopenmp: kernels.cpp's parallel loops.
    return runHostCompiler(loc, build, {{"kernels.cpp", text}}, {"-fopenmp"});
  }

private:
  /// A call of the runtime kernel `kernel` through kiln::Dispatcher on views
  /// of the planned buffers; its results copied into their slots.
  void emitDispatcherCall(llvm::raw_ostream &os, Operation *op,
                          StringRef kernel, StringRef kindName, size_t index,
                          int attrIndex, const BufferNames &buffers) {
    std::string node = firstNode(op);
    std::string opType = sourceOpType(op->getLoc());
    auto call = dyn_cast<LibraryCallOp>(op);
    os << "  // Step " << index << ": "
       << (call ? call.getCallee() : op->getName().getStringRef()) << " ("
       << kindName << "), ONNX node '" << commentSafe(node) << "'"
       << (opType.empty() ? "" : " (" + opType + ")") << "\n";
    os << "  {\n    std::vector<kiln::Tensor> in = {";
    for (Value v : op->getOperands()) {
      ValueType t = valueType(v);
      os << "\n        view(" << buffers.pointer(v) << ", "
         << dtypeEnum(t.dtype) << ", " << shapeExpr(t) << "), // "
         << buffers.describe(v);
    }
    os << "\n    };\n";
    os << "    std::vector<kiln::Tensor> out(" << op->getNumResults() << ");\n";
    os << "    if (call(" << quote(kernel) << ", in, m->attrs[" << attrIndex
       << "], out, " << quote(node) << ", err, errlen))\n"
       << "      return 1;\n";
    for (OpResult r : op->getResults()) {
      if (!buffers.hasBuffer(r))
        continue;
      ValueType t = valueType(r);
      os << "    if (store(out, " << r.getResultNumber() << ", "
         << buffers.pointer(r) << ", " << dtypeEnum(t.dtype) << ", "
         << shapeExpr(t) << ", " << quote(node) << ", err, errlen)) // "
         << buffers.describe(r) << "\n"
         << "      return 1;\n";
    }
    os << "  }\n";
  }

  std::vector<CppKernel> cppKernels_;
  OneDnnSteps oneDnn_;
  bool needHalf_ = false;
};

class CpuTarget : public Target {
public:
  StringRef name() const override { return "cpu"; }
  StringRef description() const override {
    return "C++ kernels (OpenMP) built by the host compiler, oneDNN "
           "matmul and convolutions with their post-ops";
  }
  void addLayoutPasses(OpPassManager &pm) const override {
    // A GRU or LSTM as one GEMM over all steps (its input projection) and
    // its recurrence, which kiln-lower-cpu makes a oneDNN call (a matmul
    // of the state and the gates per step) instead of a reference kernel.
    pm.addPass(createSplitRecurrentPass(/*f32Only=*/true));
    // Convolutions channels last, f32 included: oneDNN's direct
    // convolutions read and write NHWC activations in place and run them
    // faster than NCHW (bench/cpu_gemm_libs.cpp, one thread: a 3x3 conv of
    // [1, 64, 56, 56] 1.96 ms NHWC vs 2.84 ms NCHW; BENCHMARKS.md).
    pm.addPass(createChannelsLastPass(/*includeF32=*/true));
  }
  void addPreFusionPasses(OpPassManager &pm) const override {
    // Spatial means of channels-last activations (global average pooling,
    // squeeze-excite) as GEMVs that oneDNN runs along the rows, instead of
    // a fused kernel whose reduced loop strides over them.
    pm.addPass(createColumnReduceAsMatmulPass());
  }
  FuseOptions fuseOptions() const override {
    // A C++ kernel computes what it reads through a broadcast once per
    // element: a squeeze-excite gate's sigmoid stays a kernel of its own
    // (EfficientNet-B0 at one thread: 12.5 -> 12.1 ms).
    FuseOptions options;
    options.isolateBroadcastTranscendentals = true;
    return options;
  }
  void addLoweringPasses(OpPassManager &pm) const override {
    pm.addPass(createLowerCpuPass());
  }
  std::vector<std::string> residualInPlaceCallees() const override {
    // OneDnnEpilogue::residualInPlace: oneDNN's sum post-op; the panel
    // GEMM reads each residual element before it stores the result's.
    return {"onednn.matmul", "onednn.conv", "cpu.panel_matmul"};
  }
  std::unique_ptr<GraphCodegen>
  createGraphCodegen(const PackageNames &names) const override {
    return std::make_unique<CpuGraphCodegen>(names);
  }
};

} // namespace

std::unique_ptr<Target> createCpuTarget() {
  return std::make_unique<CpuTarget>();
}

} // namespace kiln
