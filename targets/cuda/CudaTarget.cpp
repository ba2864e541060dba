//===- CudaTarget.cpp - The CUDA backend ----------------------------------===//
//
// This file implements the CUDA target (docs/cuda-backend.md): its lowering
// (kiln-lower-cuda), one CUDA kernel per kiln.fusion and per op tagged
// kiln.kernel in kernels.cu (CudaPrinter.cpp, CudaPoolKernel.cpp), compiled
// in process by NVRTC into kernels.cubin (sm_90) and kernels.ptx; the
// wrapper's CUDA entry points (<package>_create_cuda binds the kernels'
// functions; <package>_run_cuda runs on a stream; each kernel's launcher is
// exported too) and steps (CudaWrapperSteps.cpp); and the build: wrapper.cpp
// alone through the host compiler, for x86-64-v2 unless --cpu-isa says
// otherwise (a cuda package's host code is not hot, so it loads on any GPU
// host).
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaTarget.h"
#include "codegen/HostCompiler.h"
#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"
#include "passes/Passes.h"
#include "targets/cuda/CudaKernel.h"
#include "targets/cuda/NvrtcCompiler.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdlib>
#include <fstream>

using namespace mlir;

namespace kiln {
namespace {

using namespace wrapper;

/// Writes `text` to `path`; a diagnostic at `loc` on failure.
LogicalResult writeText(Location loc, const std::string &path,
                        const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    return emitError(loc) << "cannot write '" << path << "'";
  return success();
}

class CudaGraphCodegen : public GraphCodegen {
public:
  explicit CudaGraphCodegen(const PackageNames &names) : GraphCodegen(names) {}

  StringRef kernelSourceFile() const override { return "kernels.cu"; }
  StringRef targetName() const override { return "cuda"; }

  LogicalResult emitKernels(func::FuncOp graph) override {
    for (Operation &op : graph.getBody().front()) {
      std::optional<CudaKernel> kernel;
      std::string kind;
      if (auto fusion = dyn_cast<FusionOp>(op)) {
        FailureOr<CudaKernel> printed = emitCudaKernel(fusion);
        if (failed(printed))
          return failure();
        kernel = std::move(*printed);
        kind = fusion.getKind().str();
      } else if (auto name = op.getAttrOfType<StringAttr>(kKernelAttr)) {
        kernel = emitCudaOpKernel(&op, name.getValue());
        if (!kernel)
          return op.emitOpError("is tagged with kernel '")
                 << name.getValue() << "' but the CUDA printer has none";
        kind = op.getName().stripDialect().str();
      } else {
        continue;
      }
      KernelRecord record{kernel->name, kind, sourceNodeNames(&op)};
      record.grid = {kernel->grid[0], kernel->grid[1], kernel->grid[2]};
      record.block = {kernel->block[0], kernel->block[1], kernel->block[2]};
      record.runTimeGrid = kernel->runTimeGrid;
      record.sharedBytes = kernel->sharedBytes;
      record.launches = kernel->launches;
      record.loadTime = op.hasAttr(kLoadTimeAttr);
      kernelIndex_[&op] = static_cast<int>(kernels_.size());
      kernels_.push_back(std::move(record));
      cudaKernels_.push_back(std::move(*kernel));
    }
    return success();
  }

  void emitIncludes(llvm::raw_ostream &os) override {
    os << "#include \"kiln/runtime/Cuda.h\"\n"
          "#include \"kiln/runtime/CudaServices.h\"\n"
          "#include \"kiln/runtime/CustomOps.h\"\n";
  }
  void emitDeclarations(llvm::raw_ostream &) override {}
  void emitHelpers(llvm::raw_ostream &os) override {
    os << cudawrapper::helpers();
  }
  void emitTables(llvm::raw_ostream &os) override {
    os << "/// The kernels of kernels.cubin, in the order of "
       << names().symbol("create_cuda") << "'s\n/// functions.\n"
       << "constexpr int kNumKernels = " << kernels_.size() << ";\n"
       << "const char *const kKernelNames[] = {";
    for (const KernelRecord &k : kernels_)
      os << quote(k.name) << ", ";
    os << (kernels_.empty() ? "nullptr" : "") << "};\n\n";
  }

  WrapperAbi wrapperAbi() override;

  std::string kernelName(Operation *op) override {
    return kernels_[kernelIndex_.lookup(op)].name;
  }

  void emitKernelStep(llvm::raw_ostream &os, Operation *op, size_t index,
                      const BufferNames &buffers) override {
    int k = kernelIndex_.lookup(op);
    cudawrapper::emitKernelLaunch(os, op, index, kernels_[k], k, names(),
                                  buffers);
  }

  KernelEntryPoint kernelEntryPoint(Operation *op,
                                    const BufferNames &buffers) override {
    return cudawrapper::kernelEntryPoint(op, kernels_[kernelIndex_.lookup(op)],
                                         names(), buffers);
  }

  LogicalResult emitLibraryCall(llvm::raw_ostream &os, LibraryCallOp call,
                                size_t index, int,
                                const BufferNames &buffers) override {
    if (call.getCallee() == "cublaslt.matmul")
      cudawrapper::emitMatmulCall(os, call, index, buffers);
    else if (call.getCallee() == "cudnn.conv")
      cudawrapper::emitConvCall(os, call, index, buffers);
    else
      return call.emitOpError("has a callee the cuda target does not call");
    return success();
  }

  void emitReferenceStep(llvm::raw_ostream &os, Operation *op, size_t index,
                         int attrIndex, const BufferNames &buffers) override {
    cudawrapper::emitHostStep(os, op, index, attrIndex, buffers);
  }

  void emitCopy(llvm::raw_ostream &os, const std::string &destination,
                const std::string &source, const std::string &bytes,
                const std::string &comment) override {
    cudawrapper::emitCopy(os, destination, source, bytes, comment);
  }

  LogicalResult build(Location loc, PackageBuild &build) override {
    // Every kernel in one NVRTC program (sm_90 cubin and PTX).
    std::string text = emitCudaKernelsFile(cudaKernels_, names().name);
    FailureOr<CudaBinary> binary =
        compileCudaSource(text, "kernels.cu", cudaKernels_, loc);
    if (failed(binary) ||
        failed(writeText(loc, build.dir + "/kernels.cu", text)) ||
        failed(writeText(loc, build.dir + "/kernels.cubin", binary->cubin)) ||
        failed(writeText(loc, build.dir + "/kernels.ptx", binary->ptx)))
      return failure();
    build.deviceSeconds = binary->seconds;
    build.deviceBinary =
        ManifestCuda{"sm_90", "kernels.cubin", "kernels.ptx", "kernels.cu"};
    // The library is wrapper.cpp alone (it has no parallel loops).
    return runHostCompiler(loc, build, {}, {});
  }

private:
  std::vector<CudaKernel> cudaKernels_;
  llvm::DenseMap<Operation *, int> kernelIndex_;
};

WrapperAbi CudaGraphCodegen::wrapperAbi() {
  WrapperAbi abi;
  abi.createEntry = "create_cuda";
  abi.runEntry = "run_cuda";
  std::string create = names().symbol(abi.createEntry);
  abi.createParameters = "    void *const *functions,\n";
  abi.stepParameter = ", void *stream";
  abi.stepArgument = ", stream";
  abi.profilerStream = "stream";
  abi.modelMembers = "  std::vector<void *> functions;\n";
  abi.freePrepared = "kiln::cuda::deallocate(prepared);";
  abi.createChecks = "  if (kNumKernels > 0 && !functions)\n"
                     "    return fail(err, errlen, \"" +
                     create + ": functions is null\");\n";
  abi.createBindings =
      "    for (int i = 0; i < kNumKernels; ++i) {\n"
      "      if (!functions[i])\n"
      "        return fail(err, errlen, std::string(\"kernel '\") + "
      "kKernelNames[i] +\n"
      "                                         \"' is not bound (null "
      "function)\");\n"
      "      m->functions.push_back(functions[i]);\n    }\n";
  abi.prepareWeights =
      "    if (kPreparedBytes > 0) {\n"
      "      kiln::Expected<void *> memory = "
      "kiln::cuda::allocate(kPreparedBytes);\n"
      "      if (!memory)\n"
      "        return fail(err, errlen, \"" +
      create +
      ": prepared weights: \" + memory.status().message());\n"
      "      m->prepared = *memory;\n"
      "      // Wait for the steps even when one failed: the memory they\n"
      "      // use is freed on return.\n"
      "      int failed = prepareWeights(m.get(), nullptr, err, errlen);\n"
      "      char syncErr[256];\n"
      "      if (kiln_cuda_stream_synchronize(nullptr, syncErr, "
      "sizeof(syncErr)) && !failed)\n"
      "        return fail(err, errlen, syncErr);\n"
      "      if (failed)\n        return 1;\n    }\n";
  // The kernels to bind (a CUDA package has no host create/run: its
  // pointers are device pointers).
  abi.extraExports = "\nKILN_EXPORT int " + names().symbol("num_kernels") +
                     "(void) { return kNumKernels; }\n"
                     "KILN_EXPORT const char *" +
                     names().symbol("kernel_name") +
                     "(int i) {\n"
                     "  return i >= 0 && i < kNumKernels ? kKernelNames[i] : "
                     "nullptr;\n}\n";
  abi.extraDeclarations = "/// The kernels of kernels.cubin that " + create +
                          " binds, in order.\n"
                          "int " +
                          names().symbol("num_kernels") +
                          "(void);\n"
                          "const char *" +
                          names().symbol("kernel_name") + "(int i);\n";
  abi.headerIncludes = "#include \"kiln/runtime/CudaServices.h\"\n";
  abi.headerHelpers =
      "/// Creates a model from its device weights (device pointers in "
      "weight order,\n/// kept alive until " +
      names().symbol("destroy") +
      "), loading its kernels from the package's\n/// kernels.cubin at "
      "`cubinPath` (kiln_cuda_load_kernel). Returns 0 on success.\n"
      "inline int create(const char *cubinPath, const void *const "
      "*deviceWeights,\n"
      "                  kiln_model **out, char *err = nullptr, size_t errlen "
      "= 0) {\n"
      "  constexpr int kNumKernels = " +
      std::to_string(kernels_.size()) +
      ";\n"
      "  void *functions[kNumKernels > 0 ? kNumKernels : 1] = {};\n"
      "  for (int i = 0; i < kNumKernels; ++i)\n"
      "    if (kiln_cuda_load_kernel(cubinPath, " +
      names().symbol("kernel_name") +
      "(i), &functions[i], err,\n"
      "                              errlen))\n"
      "      return 1;\n"
      "  return " +
      create + "(deviceWeights, functions, out, err, errlen);\n}\n\n";
  return abi;
}

class CudaTarget : public Target {
public:
  StringRef name() const override { return "cuda"; }
  StringRef description() const override {
    return "CUDA kernels compiled by NVRTC for sm_90, cuBLASLt and cuDNN "
           "library calls with their epilogues";
  }
  LogicalResult checkAvailable(Location loc) const override {
    if (haveNvrtc())
      return success();
    return emitError(loc) << "--target cuda needs NVRTC, and this kiln was "
                             "built without it (configure with the CUDA "
                             "toolkit installed)";
  }
  std::string defaultCpuIsa(StringRef) const override { return "x86-64-v2"; }
  void addLayoutPasses(OpPassManager &pm) const override {
    // A GRU as one GEMM over all steps and its recurrence (a kernel launch
    // per step) instead of a reference kernel on the host.
    pm.addPass(createSplitRecurrentPass());
    // Attention as one op (kiln.attention, the flash-attention kernel);
    // KILN_CUDA_FLASH_ATTENTION=0 at compile time keeps it written out.
    if (!envIsZero("KILN_CUDA_FLASH_ATTENTION"))
      pm.addPass(createFuseAttentionPass());
    // Convolutions channels last; KILN_CUDA_CHANNELS_LAST=0 keeps NCHW.
    if (!envIsZero("KILN_CUDA_CHANNELS_LAST"))
      pm.addPass(createChannelsLastPass());
    // Up-sampling ConvTransposes (stride = kernel) as a GEMM and a shuffle,
    // reading a channels-last input as it is (after kiln-cuda-channels-last,
    // whose transposes the cleanup then cancels);
    // KILN_CUDA_CONV_TRANSPOSE_GEMM=0 at compile time keeps the direct kernel.
    if (!envIsZero("KILN_CUDA_CONV_TRANSPOSE_GEMM"))
      pm.addPass(createConvTransposeAsMatmulPass());
  }
  void addTrainingForwardPasses(OpPassManager &pm) const override {
    // Attention formed before autodiff, so its gradient is one
    // kiln.attention_grad (flash attention's backward kernel) and the
    // probabilities are neither stored nor saved.
    if (!envIsZero("KILN_CUDA_FLASH_ATTENTION"))
      pm.addPass(createFuseAttentionPass(/*trainingForward=*/true));
  }
  void addPreFusionPasses(OpPassManager &pm) const override {
    // The activations around a depthwise convolution into its kernel;
    // KILN_CUDA_DEPTHWISE_FUSION=0 at compile time keeps them apart.
    if (!envIsZero("KILN_CUDA_DEPTHWISE_FUSION"))
      pm.addPass(createFuseDepthwisePass());
  }
  /// True when the environment sets `name` to 0 (a comparison switch read at
  /// compile time).
  static bool envIsZero(const char *name) {
    const char *env = std::getenv(name);
    return env && std::string(env) == "0";
  }
  void addLoweringPasses(OpPassManager &pm) const override {
    pm.addPass(createLowerCudaPass());
  }
  std::string whyNotRunTimeSizes(Operation *op) const override {
    return whyNotCudaRunTimeSizes(op);
  }
  std::unique_ptr<GraphCodegen>
  createGraphCodegen(const PackageNames &names) const override {
    return std::make_unique<CudaGraphCodegen>(names);
  }
};

} // namespace

std::unique_ptr<Target> createCudaTarget() {
  return std::make_unique<CudaTarget>();
}

} // namespace kiln
