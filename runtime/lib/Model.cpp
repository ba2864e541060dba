//===- Model.cpp - Loading and running compiled Kiln packages -------------===//
//
// This file implements kiln::Model. Loading goes: package folder ->
// manifest.json (PackageManifest) -> its "library", lib<name>.so
// (SharedLibrary, RTLD_NOW | RTLD_LOCAL), whose entry points are
// <name>_<entry> ("symbol_prefix") -> ABI version check -> signature
// queries, checked against the manifest -> weights (caller tensors,
// weights.bin or external files, mapped read-only with MappedFile and used
// in place; fill weights materialised, FillWeight.h) -> <name>_create.
// Running is ModelRun.cpp; ModelImpl.h holds what both share. A training
// package is refused (kiln::Trainer loads it).
// A cuda package (manifest "target": "cuda", or <name>_target() ==
// "cuda") needs CUDA to be available; its device side (kernels, device
// weights, arenas, streams) is a CudaPackage (lib/cuda/CudaPackage.cpp).
// A package with graph breaks (manifest "kind": "program") has no library
// of its own: a ProgramPackage (lib/ProgramPackage.cpp) runs its glue and
// the graphs it calls, each loaded as a Model.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/CustomOps.h"
#include "kiln/runtime/Model.h"
#include "ModelImpl.h"

#include "SignatureCheck.h"
#include "cuda/CudaPackage.h"
#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/ModelABI.h"
#include "kiln/runtime/PackageManifest.h"

#include "FillWeight.h"
#include "MappedFile.h"
#include "ProgramPackage.h"
#include "SharedLibrary.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

namespace fs = std::filesystem;

namespace kiln {

using namespace modelimpl;

namespace {



template <typename Fn>
Status resolve(const SharedLibrary &lib, const char *name, Fn &fn) {
  Expected<void *> address = lib.symbol(name);
  if (!address)
    return address.status();
  fn = reinterpret_cast<Fn>(*address);
  return Status::ok();
}

/// Resolves the entry points of a package library whose symbols are
/// `<prefix>_<entry>` (the manifest's "symbol_prefix").
Status resolveAll(const SharedLibrary &lib, const std::string &prefix,
                  AbiFunctions &f, bool cuda) {
#define KILN_RESOLVE(field, entry)                                             \
  KILN_RETURN_IF_ERROR(resolve(lib, (prefix + "_" #entry).c_str(), f.field))
  KILN_RESOLVE(numInputs, num_inputs);
  KILN_RESOLVE(numOutputs, num_outputs);
  KILN_RESOLVE(numWeights, num_weights);
  KILN_RESOLVE(inputName, input_name);
  KILN_RESOLVE(outputName, output_name);
  KILN_RESOLVE(weightName, weight_name);
  KILN_RESOLVE(inputDType, input_dtype);
  KILN_RESOLVE(outputDType, output_dtype);
  KILN_RESOLVE(weightDType, weight_dtype);
  KILN_RESOLVE(inputRank, input_rank);
  KILN_RESOLVE(outputRank, output_rank);
  KILN_RESOLVE(weightRank, weight_rank);
  KILN_RESOLVE(inputShape, input_shape);
  KILN_RESOLVE(outputShape, output_shape);
  KILN_RESOLVE(weightShape, weight_shape);
  KILN_RESOLVE(arenaBytes, arena_bytes);
  if (cuda) {
    KILN_RESOLVE(cuda.numKernels, num_kernels);
    KILN_RESOLVE(cuda.kernelName, kernel_name);
    KILN_RESOLVE(cuda.create, create_cuda);
    KILN_RESOLVE(cuda.run, run_cuda);
  } else {
    KILN_RESOLVE(create, create);
    KILN_RESOLVE(run, run);
  }
  KILN_RESOLVE(destroy, destroy);
#undef KILN_RESOLVE
  // Optional: packages of older Kilns and cuda packages lack it.
  (void)resolve(lib, (prefix + "_set_threads").c_str(), f.setThreads);
  // Optional: packages of older Kilns lack it (their runs are traced as a
  // whole, without steps). The one place that names this export.
  (void)resolve(lib, (prefix + "_set_profiler").c_str(), f.setProfiler);
  return Status::ok();
}

/// Reads one list of the signature ("input", "output" or "weight").
Expected<std::vector<ValueSignature>>
querySignature(const std::string &libPath, const char *kind, int count,
               const char *(*name)(int), int (*dtype)(int), int (*rank)(int),
               const int64_t *(*shape)(int), bool sized = false) {
  if (count < 0)
    return Status::error(strCat(libPath, ": reports ", count, " ", kind,
                                "s; the library is "
                                "corrupt, recompile the package"));
  std::vector<ValueSignature> sigs;
  for (int i = 0; i < count; ++i) {
    std::string where = strCat(libPath, ": ", kind, " ", i);
    ValueSignature sig;
    const char *n = name(i);
    if (!n)
      return Status::error(strCat(where, " has no name"));
    sig.name = n;
    int code = dtype(i);
    if (code < 0 || code >= kNumDTypes)
      return Status::error(strCat(where, " ('", sig.name,
                                  "') has an unknown dtype code ", code));
    sig.dtype = static_cast<DType>(code);
    int r = rank(i);
    const int64_t *dims = shape(i);
    if (r < 0 || (r > 0 && !dims))
      return Status::error(
          strCat(where, " ('", sig.name, "') has an invalid rank ", r));
    for (int d = 0; d < r; ++d) {
      // -1: a dim that follows a size symbol (`sized` packages only).
      if (dims[d] < (sized ? -1 : 0))
        return Status::error(strCat(where, " ('", sig.name,
                                    "') has a dynamic dimension; compiled "
                                    "models have static shapes"));
      sig.shape.push_back(dims[d]);
    }
    sig.dimNames.assign(sig.shape.size(), "");
    sigs.push_back(std::move(sig));
  }
  return sigs;
}

/// Checks that the manifest's list agrees with the library's.
Status checkManifestSignature(const std::string &manifestPath, const char *kind,
                              const std::vector<ManifestValue> &declared,
                              const std::vector<ValueSignature> &actual) {
  std::string fix = " (the package is inconsistent; recompile it with kiln "
                    "compile)";
  if (declared.size() != actual.size())
    return Status::error(strCat(manifestPath, ": lists ", declared.size(), " ",
                                kind, "s but the library declares ",
                                actual.size(), fix));
  for (size_t i = 0; i < declared.size(); ++i) {
    const ManifestValue &m = declared[i];
    const ValueSignature &a = actual[i];
    if (m.name != a.name || m.dtype != a.dtype || m.shape != a.shape)
      return Status::error(strCat(manifestPath, ": ", kind, " ", i, " is '",
                                  m.name, "' ", typeString(m.dtype, m.shape),
                                  " but the library declares '", a.name, "' ",
                                  typeString(a.dtype, a.shape), fix));
  }
  return Status::ok();
}

/// The path of an external weight file: the first that exists of
/// `weightsDir`, the package folder `dir` and the source model's folder.
Expected<std::string> locateExternal(const std::string &file,
                                     const std::string &dir,
                                     const std::string &weightsDir,
                                     const std::string &source) {
  // The file must stay inside the folder it is looked up in: a manifest
  // cannot point at /etc/passwd or ../../secret.
  std::vector<fs::path> folders;
  if (!weightsDir.empty())
    folders.push_back(weightsDir);
  folders.push_back(dir);
  if (!source.empty())
    folders.push_back(fs::path(source).parent_path());
  std::string tried;
  for (const fs::path &folder : folders) {
    Expected<std::string> c = resolveInsideFolder(
        folder.string(), file, strCat("external data file '", file, "'"));
    if (!c)
      return c.status();
    std::error_code ec;
    if (fs::is_regular_file(*c, ec))
      return c.take();
    tried += strCat(tried.empty() ? "" : ", ", *c);
  }
  return Status::error(
      strCat("external data file '", file, "' not found (looked at ", tried,
             "): place it in the package folder or set LoadOptions::weightsDir "
             "(kiln run/bench --weights-dir)"));
}

} // namespace

/// A package compiled for ranges of sizes: its run_sized entry, its size
/// symbols, and the names of the signature's -1 dims (an input's must be
/// one symbol, bound from the input's shape at run time; an output's may
/// be a product of them).
Status Model::Impl::bindSizeSymbols(const PackageManifest &manifest,
                                    const std::string &manifestPath,
                                    const std::string &prefix, bool cuda) {
  Model::Impl &impl = *this;
  if (!manifest.hasSignature)
    return Status::error(strCat(manifestPath,
                                ": has size symbols but no signature "
                                "(recompile it with kiln compile)"));
  std::string runSized = prefix + "_run_sized";
  if (cuda)
    KILN_RETURN_IF_ERROR(
        resolve(impl.library, runSized.c_str(), impl.abi.cuda.runSized));
  else
    KILN_RETURN_IF_ERROR(
        resolve(impl.library, runSized.c_str(), impl.abi.runSized));
  impl.sizeSymbols = manifest.sizeSymbols;
  auto name = [&](const std::vector<ManifestValue> &declared,
                  std::vector<ValueSignature> &sigs, bool input) -> Status {
    for (size_t i = 0; i < sigs.size(); ++i) {
      const ManifestValue &m = declared[i];
      for (size_t d = 0; d < sigs[i].shape.size(); ++d) {
        if (sigs[i].shape[d] >= 0)
          continue;
        if (m.dims.size() != sigs[i].shape.size())
          return Status::error(strCat(manifestPath, ": '", m.name,
                                      "' has a dynamic dim but no 'dims'"));
        Expected<SymbolicDim> dim = SymbolicDim::parse(m.dims[d]);
        if (!dim || (input && !(dim->num == 1 && dim->den == 1 &&
                                dim->factors.size() == 1 &&
                                dim->factors[0].second == 1)))
          return Status::error(strCat(
              manifestPath, ": input '", m.name, "' dim ", d, " is '",
              m.dims[d], "'; an input's dynamic dim must be one size symbol"));
        sigs[i].dimNames[d] = m.dims[d];
      }
    }
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(name(manifest.inputs, impl.inputs, true));
  return name(manifest.outputs, impl.outputs, false);
}

Status Model::Impl::bindWeights(const PackageManifest &manifest,
                                const std::string &manifestPath,
                                const LoadOptions &options) {
  Status names = checkNames(weights, options.weights, "weight", "model", false);
  if (!names)
    return names.withContext("LoadOptions::weights");
  std::map<std::string, const ManifestWeight *> byName;
  for (const ManifestWeight &w : manifest.weights) {
    bool declared = false;
    for (const ValueSignature &sig : weights)
      declared |= sig.name == w.name;
    if (!declared)
      return Status::error(strCat(manifestPath, ": lists weight '", w.name,
                                  "' that the library does not declare (the "
                                  "package is inconsistent; recompile it)"));
    if (!byName.emplace(w.name, &w).second)
      return Status::error(
          strCat(manifestPath, ": lists weight '", w.name, "' twice"));
  }

  std::map<std::string, std::shared_ptr<MappedFile>> files;
  for (const ValueSignature &sig : weights) {
    if (const Tensor *given = findNamed(options.weights, sig.name)) {
      KILN_RETURN_IF_ERROR(checkTensor(sig, *given, "weight")
                               .withContext("LoadOptions::weights"));
      Tensor t = alignedContiguous(*given);
      if (!t.defined())
        return Status::error(
            strCat("weight '", sig.name, "': out of memory copying it"));
      weightTensors.push_back(std::move(t));
      continue;
    }
    auto it = byName.find(sig.name);
    if (it == byName.end())
      return Status::error(strCat(
          manifestPath, ": has no entry for weight '", sig.name, "' ",
          typeString(sig.dtype, sig.shape),
          " that the library declares (recompile the package, or pass the "
          "weight in LoadOptions::weights)"));
    const ManifestWeight &w = *it->second;
    if (w.dtype != sig.dtype || w.shape != sig.shape)
      return Status::error(strCat(manifestPath, ": weight '", w.name, "' is ",
                                  typeString(w.dtype, w.shape),
                                  " but the library declares ",
                                  typeString(sig.dtype, sig.shape),
                                  " (the package is inconsistent; recompile "
                                  "it)"));
    if (w.fill) {
      // A fill weight: materialised once, owned by the Model (FillWeight.h).
      Expected<Tensor> filled = materializeFillWeight(w, manifestPath);
      if (!filled)
        return filled.status();
      weightTensors.push_back(filled.take());
      continue;
    }
    if (w.file.empty())
      return Status::error(strCat("weight '", w.name, "' ",
                                  typeString(w.dtype, w.shape),
                                  " has no data in the package ", dir,
                                  ": from C++, pass it in "
                                  "LoadOptions::weights; for kiln run and "
                                  "kiln-runner, compile the package from a "
                                  "model file that holds the weight's data"));
    Expected<std::string> inside = resolveInsideFolder(
        dir, w.file, strCat(manifestPath, ": weight '", w.name, "'"));
    if (!inside)
      return inside.status();
    std::string path = inside.take();
    if (w.external) {
      Expected<std::string> found =
          locateExternal(w.file, dir, options.weightsDir, manifest.source);
      if (!found)
        return found.status().withContext(strCat("weight '", w.name, "'"));
      path = found.take();
    }
    std::shared_ptr<MappedFile> &file = files[path];
    if (!file) {
      Expected<std::shared_ptr<MappedFile>> mapped = MappedFile::open(path);
      if (!mapped)
        return mapped.status().withContext(strCat("weight '", w.name, "'"));
      file = mapped.take();
    }
    if (w.offset > file->size() || w.bytes > file->size() - w.offset)
      return Status::error(strCat(
          path, ": is ", file->size(), " bytes but weight '", w.name,
          "' needs bytes [", w.offset, ", ", w.offset + w.bytes,
          "): the file is truncated or does not belong to this package"));
    void *data = const_cast<char *>(file->data()) + w.offset;
    if (w.bytes == 0)
      data = nullptr;
    Tensor t;
    if (data && isAligned(data)) {
      t = Tensor(Storage::wrap(data, w.bytes, Device::CPU, file), w.dtype,
                 w.shape, contiguousStrides(w.shape), 0);
    } else {
      // Unaligned (typical of ONNX external data) or empty: copy.
      t = allocateUninitialised(w.dtype, w.shape);
      if (!t.defined())
        return Status::error(
            strCat("weight '", w.name, "': out of memory copying it"));
      if (w.bytes)
        std::memcpy(t.rawData(), data, w.bytes);
    }
    weightTensors.push_back(std::move(t));
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model &&other) noexcept = default;
Model &Model::operator=(Model &&other) noexcept = default;
Model::~Model() = default;

const std::vector<ValueSignature> &Model::inputs() const {
  return impl_->inputs;
}
const std::vector<ValueSignature> &Model::outputs() const {
  return impl_->outputs;
}
const std::vector<ValueSignature> &Model::weights() const {
  return impl_->weights;
}
const std::string &Model::directory() const { return impl_->dir; }
const std::vector<ArenaValueSignature> &Model::arenaValues() const {
  return impl_->arenaValues;
}

size_t Model::arenaBytes() const {
  return impl_->program ? impl_->program->arenaBytes() : impl_->arenaBytes;
}
Device Model::device() const {
  if (impl_->program)
    return impl_->program->device();
  return impl_->cuda ? Device::CUDA : Device::CPU;
}

/// The package's target: the manifest's "target" and the library's
/// optional <prefix>_target() must agree; neither means "cpu".
static Expected<std::string> packageTarget(const SharedLibrary &lib,
                                           const std::string &libPath,
                                           const PackageManifest &manifest,
                                           const std::string &manifestPath,
                                           const std::string &prefix) {
  std::string fromLib;
  std::string symbol = prefix + "_target";
  if (Expected<void *> fn = lib.symbol(symbol.c_str())) {
    const char *t = reinterpret_cast<const char *(*)()>(*fn)();
    fromLib = t ? t : "";
    if (fromLib != "cpu" && fromLib != "cuda")
      return Status::error(strCat(libPath, ": ", symbol, "() returns '",
                                  fromLib,
                                  "', not \"cpu\" or \"cuda\"; recompile "
                                  "the package"));
  }
  const std::string &fromManifest = manifest.target;
  if (!fromManifest.empty() && fromManifest != "cpu" && fromManifest != "cuda")
    return Status::error(strCat(manifestPath, ": 'target' is '", fromManifest,
                                "'; this runtime runs \"cpu\" and \"cuda\" "
                                "packages"));
  if (!fromLib.empty() && !fromManifest.empty() && fromLib != fromManifest)
    return Status::error(strCat(manifestPath, ": says target '", fromManifest,
                                "' but the library is for '", fromLib,
                                "' (the package is inconsistent; recompile "
                                "it)"));
  if (!fromLib.empty())
    return fromLib;
  return fromManifest.empty() ? std::string("cpu") : fromManifest;
}

/// Refuses a package compiled for an instruction-set level this CPU lacks
/// (running it would die of an illegal instruction).
static Status checkIsa(const std::string &isa, const std::string &manifest) {
  if (isa.empty())
    return Status::ok();
#if defined(__x86_64__)
  bool ok = true;
  bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
            __builtin_cpu_supports("bmi2");
  if (isa == "x86-64-v3")
    ok = v3;
  else if (isa == "x86-64-v4")
    ok = v3 && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
  else if (isa != "x86-64" && isa != "x86-64-v2")
    ok = false;
  if (!ok)
    return Status::error(strCat(manifest, ": the package was compiled for ",
                                isa,
                                ", which this CPU does not support; "
                                "recompile it on this machine, or for it "
                                "with kiln compile --cpu-isa (x86-64-v3 for "
                                "AVX2 machines; the default, host, is the "
                                "compiling machine's level)"));
  return Status::ok();
#else
  return Status::error(strCat(manifest, ": the package was compiled for ", isa,
                              " (x86-64); this machine is not x86-64"));
#endif
}

Expected<Model> Model::load(const std::string &dir,
                            const LoadOptions &options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::error(strCat(dir, ": no such package folder (kiln compile "
                                     "MODEL -o DIR writes one)"));
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  std::string manifestPath = (fs::path(dir) / "manifest.json").string();

  Expected<PackageManifest> manifest = readManifest(manifestPath);
  if (!manifest)
    return manifest.status();
  // The library and its symbols' prefix; packages of kilns before
  // per-package names had model.so exporting kiln_model_*.
  impl->libPath =
      (fs::path(dir) / (manifest->library.empty() ? std::string("model.so")
                                                  : manifest->library))
          .string();
  std::string prefix = manifest->symbolPrefix.empty()
                           ? std::string("kiln_model")
                           : manifest->symbolPrefix;
  // Sizes and checksums before anything is opened: a truncated library
  // would crash dlopen, altered weights would run with wrong values.
  KILN_RETURN_IF_ERROR(verifyPackageFiles(*manifest, dir));
  // The custom-op libraries its kiln.custom_call ops need (copies inside
  // the package), before any step could call them.
  for (const std::string &lib : manifest->customOpLibraries) {
    fs::path rel(lib);
    if (rel.is_absolute() || rel.empty() ||
        std::find(rel.begin(), rel.end(), "..") != rel.end())
      return Status::error(strCat(manifestPath, ": custom-op library '", lib,
                                  "' is not a path inside the package"));
    KILN_RETURN_IF_ERROR(loadCustomOpLibrary((fs::path(dir) / rel).string())
                             .withContext(manifestPath));
  }
  if (manifest->kind == PackageKind::Training)
    return Status::error(strCat("'", dir,
                                "' is a training package: load it with "
                                "kiln::Trainer (docs/training.md)"));
  if (manifest->kind == PackageKind::Program) {
    Expected<std::unique_ptr<ProgramPackage>> program =
        ProgramPackage::load(dir, manifest->target, options);
    if (!program)
      return program.status();
    impl->program = program.take();
    impl->inputs = impl->program->program().inputs;
    impl->outputs = impl->program->program().outputs;
    impl->weights = impl->program->weights();
    return Model(std::move(impl));
  }
  if (!fs::exists(impl->libPath, ec))
    return Status::error(strCat(impl->libPath,
                                ": missing; the package is incomplete "
                                "(recompile it with kiln compile)"));
  KILN_RETURN_IF_ERROR(checkIsa(manifest->isa, manifestPath));

  // Threads: generated kernels and oneDNN calls share the calling thread's
  // OpenMP pool (one pool, no spin fight between two), so OpenMP's waiting
  // policy is the user's (OMP_WAIT_POLICY, GOMP_SPINCOUNT), never set here.

  // A library whose absolute path is given is loaded from exactly there.
  std::string absLib = fs::absolute(impl->libPath, ec).string();
  Expected<SharedLibrary> lib =
      SharedLibrary::open(ec ? impl->libPath : absLib);
  if (!lib)
    return lib.status();
  impl->library = lib.take();

  // The version first: nothing else of another ABI can be trusted.
  KILN_RETURN_IF_ERROR(resolve(impl->library, (prefix + "_abi_version").c_str(),
                               impl->abi.abiVersion));
  int version = impl->abi.abiVersion();
  if (version != KILN_MODEL_ABI_VERSION)
    return Status::error(strCat(
        impl->libPath, ": implements Kiln model ABI version ", version,
        " but this runtime implements version ", KILN_MODEL_ABI_VERSION,
        "; recompile the package with this kiln, or use the runtime it was "
        "built for"));
  if (manifest->abiVersion && *manifest->abiVersion != version)
    return Status::error(strCat(manifestPath, ": says ABI version ",
                                *manifest->abiVersion, " but the library has ",
                                version,
                                " (the package is inconsistent; recompile "
                                "it)"));
  Expected<std::string> target = packageTarget(impl->library, impl->libPath,
                                               *manifest, manifestPath, prefix);
  if (!target)
    return target.status();
  bool isCuda = *target == "cuda";
  if (isCuda) {
    Status cudaStatus = cuda::available();
    if (!cudaStatus) {
      // The generic advice "or use --device cpu" does not apply to a
      // package whose kernels are CUDA code.
      std::string why = cudaStatus.message();
      const std::string cpuAdvice = ", or use --device cpu";
      if (size_t at = why.find(cpuAdvice); at != std::string::npos)
        why.erase(at, cpuAdvice.size());
      return Status::error(strCat(
          dir,
          ": is a CUDA package (kiln compile --target cuda) but CUDA cannot "
          "be used here: ",
          why,
          " (its kernels need an NVIDIA GPU; recompile with --target cpu to "
          "run on the CPU)"));
    }
  }
  KILN_RETURN_IF_ERROR(resolveAll(impl->library, prefix, impl->abi, isCuda));

  const AbiFunctions &f = impl->abi;
  bool sized = !manifest->sizeSymbols.empty();
  auto in = querySignature(impl->libPath, "input", f.numInputs(), f.inputName,
                           f.inputDType, f.inputRank, f.inputShape, sized);
  if (!in)
    return in.status();
  auto out =
      querySignature(impl->libPath, "output", f.numOutputs(), f.outputName,
                     f.outputDType, f.outputRank, f.outputShape, sized);
  if (!out)
    return out.status();
  auto w = querySignature(impl->libPath, "weight", f.numWeights(), f.weightName,
                          f.weightDType, f.weightRank, f.weightShape);
  if (!w)
    return w.status();
  impl->inputs = in.take();
  impl->outputs = out.take();
  impl->weights = w.take();
  if (manifest->hasSignature) {
    KILN_RETURN_IF_ERROR(checkManifestSignature(
        manifestPath, "input", manifest->inputs, impl->inputs));
    KILN_RETURN_IF_ERROR(checkManifestSignature(
        manifestPath, "output", manifest->outputs, impl->outputs));
  }
  if (sized)
    KILN_RETURN_IF_ERROR(
        impl->bindSizeSymbols(*manifest, manifestPath, prefix, isCuda));

  KILN_RETURN_IF_ERROR(impl->bindWeights(*manifest, manifestPath, options));
  impl->arenaBytes = f.arenaBytes();
  impl->outputPool = std::make_shared<modelimpl::OutputPool>(
      2 * std::max<size_t>(impl->outputs.size(), 1));
  for (const ManifestArenaValue &v : manifest->memoryPlan.arenaValues) {
    if (static_cast<uint64_t>(v.offset) > impl->arenaBytes ||
        *v.value.bytes > impl->arenaBytes - static_cast<uint64_t>(v.offset))
      return Status::error(strCat(
          manifestPath, ": arena value '", v.value.name, "' (bytes [", v.offset,
          ", +", *v.value.bytes, ")) lies outside the library's ",
          impl->arenaBytes, "-byte arena (the package is inconsistent)"));
    ArenaValueSignature sig;
    sig.value.name = v.value.name;
    sig.value.dtype = v.value.dtype;
    sig.value.shape = v.value.shape;
    sig.value.dimNames.assign(v.value.shape.size(), "");
    sig.offset = static_cast<size_t>(v.offset);
    sig.isInput = v.isInput;
    impl->arenaValues.push_back(std::move(sig));
  }
  if (isCuda) {
    kiln_model *handle = nullptr;
    // Steps on the host synchronise: such runs are never captured (those
    // of weight preparation run once, at load).
    bool hostSteps = false;
    for (const ManifestRuntimeStep &step : manifest->referenceOps)
      hostSteps |= step.kind == "fallback" && step.when == "run";
    Expected<std::unique_ptr<CudaPackage>> pkg =
        CudaPackage::load(dir, impl->libPath, f.cuda, impl->weightTensors,
                          impl->arenaBytes, hostSteps, handle);
    if (!pkg)
      return pkg.status();
    impl->cuda = pkg.take();
    impl->handle = handle;
    // The device holds the weights now; unmap the host copies.
    impl->weightTensors.clear();
    return Model(std::move(impl));
  }
  std::vector<const void *> pointers;
  for (const Tensor &t : impl->weightTensors)
    pointers.push_back(t.rawData());

  char err[1024] = {0};
  kiln_model *handle = nullptr;
  int rc = f.create(pointers.data(), &handle, err, sizeof(err));
  err[sizeof(err) - 1] = 0;
  if (rc != 0 || !handle)
    return Status::error(strCat(impl->libPath, ": creating the model failed: ",
                                err[0] ? err : "no message"));
  impl->handle = handle;
  return Model(std::move(impl));
}

} // namespace kiln
