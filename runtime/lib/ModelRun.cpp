//===- ModelRun.cpp - Running a loaded Kiln package -----------------------===//
//
// This file implements kiln::Model::run: the inputs checked against the
// signature (and copied when unaligned or strided), the outputs allocated
// or taken from RunOptions::outputsInto, an arena from the pool (or the
// caller's RunOptions::arena), and the package library's run entry point (or
// the CUDA package's, or a program package's executor); and the tensor helpers
// ModelImpl.h declares, which the loader uses too.
//
//===----------------------------------------------------------------------===//

#include "CpuThreads.h"
#include "HugePageMemory.h"
#include "ModelImpl.h"

#include "SignatureCheck.h"
#include "StepProfiler.h"
#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/NonFinite.h"
#include "kiln/runtime/Trace.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include <unistd.h>

namespace kiln {

namespace modelimpl {

/// "f32[4, 16]".
std::string typeString(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + shapeToString(shape);
}

/// `bytes` rounded up to a whole number of kAlignment blocks, at least one
/// (aligned_alloc's size must be a multiple of its alignment).
size_t alignedAllocationSize(size_t bytes) {
  return std::max<size_t>((bytes + kAlignment - 1) / kAlignment * kAlignment,
                          kAlignment);
}

/// The bytes of a contiguous `dtype` tensor of `shape`.
static size_t contiguousBytes(DType dtype, const Shape &shape) {
  return static_cast<size_t>(numElements(shape)) * dtypeSize(dtype);
}

/// A contiguous CPU tensor over `owner`'s buffer.
static Tensor cpuTensorOver(std::shared_ptr<void> owner, DType dtype,
                            const Shape &shape) {
  void *p = owner.get();
  return Tensor(Storage::wrap(p, contiguousBytes(dtype, shape), Device::CPU,
                              std::move(owner)),
                dtype, shape, contiguousStrides(shape), 0);
}

/// A fresh, uninitialised, 64-byte aligned CPU tensor.
Tensor allocateUninitialised(DType dtype, const Shape &shape) {
  void *p = std::aligned_alloc(
      kAlignment, alignedAllocationSize(contiguousBytes(dtype, shape)));
  if (!p)
    return Tensor();
  return cpuTensorOver(std::shared_ptr<void>(p, std::free), dtype, shape);
}

OutputPool::~OutputPool() {
  for (auto &[bytes, p] : idle_)
    std::free(p);
}

Tensor OutputPool::allocate(DType dtype, const Shape &shape) {
  size_t rounded = alignedAllocationSize(contiguousBytes(dtype, shape));
  void *p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(idle_.begin(), idle_.end(),
                           [&](const auto &b) { return b.first == rounded; });
    if (it != idle_.end()) {
      p = it->second;
      idle_.erase(it);
    }
  }
  if (!p)
    p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    return Tensor();
  std::shared_ptr<OutputPool> self = shared_from_this();
  return cpuTensorOver(
      std::shared_ptr<void>(
          p, [self, rounded](void *q) { self->release(q, rounded); }),
      dtype, shape);
}

void OutputPool::release(void *p, size_t rounded) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < maxBuffers_) {
      idle_.emplace_back(rounded, p);
      return;
    }
  }
  std::free(p);
}

bool isAligned(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % kAlignment == 0;
}

/// A contiguous, 64-byte aligned tensor with the contents of `t`: `t` itself
/// when it already is one.
Tensor alignedContiguous(const Tensor &t) {
  Tensor c = t.contiguous();
  if (isAligned(c.rawData()))
    return c;
  Tensor copy = allocateUninitialised(c.dtype(), c.shape());
  if (copy.defined() && c.nbytes())
    std::memcpy(copy.rawData(), c.rawData(), c.nbytes());
  return copy;
}

/// Checks one tensor against its static signature; `cudaPackage` also
/// accepts CUDA tensors.
Status checkTensor(const ValueSignature &sig, const Tensor &t,
                   const char *kind, bool cudaPackage) {
  std::string prefix = strCat(kind, " '", sig.name, "'");
  if (!t.defined())
    return Status::error(strCat(prefix, ": no tensor given (expected ",
                                typeString(sig.dtype, sig.shape), ")"));
  if (t.device() != Device::CPU && !cudaPackage)
    return Status::error(strCat(prefix,
                                ": compiled CPU models take cpu "
                                "tensors but the tensor is on ",
                                deviceName(t.device())));
  if (t.dtype() != sig.dtype || t.shape() != sig.shape)
    return Status::error(strCat(prefix, ": expected ",
                                typeString(sig.dtype, sig.shape), " but got ",
                                t.typeString()));
  return Status::ok();
}

/// The caller's tensor for each output, in signature order (nullptr where
/// run() allocates it), from RunOptions::outputsInto, checked: known names
/// given once, the declared dtype and shape, contiguous, on `device` (the
/// package's).
Expected<std::vector<const Tensor *>>
outputTargets(const std::vector<ValueSignature> &outputs,
              const NamedTensors *into, Device device) {
  std::vector<const Tensor *> targets(outputs.size(), nullptr);
  if (!into)
    return targets;
  const char *context = "RunOptions::outputsInto";
  KILN_RETURN_IF_ERROR(
      checkNames(outputs, *into, "output", "model", false).withContext(context));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ValueSignature &sig = outputs[i];
    const Tensor *t = findNamed(*into, sig.name);
    if (!t)
      continue;
    std::string prefix = strCat(context, ": output '", sig.name, "'");
    if (!t->defined())
      return Status::error(strCat(prefix, ": no tensor given (expected ",
                                  typeString(sig.dtype, sig.shape), ")"));
    if (t->dtype() != sig.dtype || t->shape() != sig.shape)
      return Status::error(strCat(prefix, ": expected ",
                                  typeString(sig.dtype, sig.shape),
                                  " but got ", t->typeString()));
    if (t->device() != device)
      return Status::error(strCat(prefix, ": the tensor is on ",
                                  deviceName(t->device()), " but a ",
                                  deviceName(device), " package writes ",
                                  deviceName(device), " tensors"));
    if (!t->isContiguous())
      return Status::error(
          strCat(prefix, ": the tensor is not contiguous; pass a contiguous "
                         "one"));
    targets[i] = t;
  }
  return targets;
}

/// The sizes of a run of a package compiled for ranges of sizes, bound
/// from the inputs' shapes: each -1 dim of an input's signature names its
/// symbol; every use of a symbol must agree and lie in its range.
Expected<std::map<std::string, int64_t>>
bindSizes(const std::vector<SizeSymbol> &symbols,
          const std::vector<ValueSignature> &inputs,
          const NamedTensors &given) {
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::string> boundBy;
  for (const ValueSignature &sig : inputs) {
    const Tensor *t = findNamed(given, sig.name);
    if (t && t->defined() && t->shape().size() != sig.shape.size()) {
      std::string dims;
      for (size_t d = 0; d < sig.shape.size(); ++d)
        dims += (d ? ", " : "") + (sig.shape[d] >= 0
                                       ? std::to_string(sig.shape[d])
                                       : sig.dimNames[d]);
      return Status::error(strCat("input '", sig.name, "': expected ",
                                  dtypeName(sig.dtype), "[", dims,
                                  "] but got ", t->typeString()));
    }
    if (!t || !t->defined())
      continue; // checkTensor names the problem
    for (size_t d = 0; d < sig.shape.size(); ++d) {
      if (sig.shape[d] >= 0)
        continue;
      const std::string &name = sig.dimNames[d];
      int64_t size = t->shape()[d];
      std::string where =
          strCat("input '", sig.name, "' dimension ", d, " ('", name, "')");
      auto [it, fresh] = sizes.emplace(name, size);
      if (!fresh && it->second != size)
        return Status::error(strCat(where, " is ", size, " but ", boundBy[name],
                                    " gives '", name, "' = ", it->second,
                                    "; dims with one name must be equal"));
      if (fresh)
        boundBy[name] = where;
      for (const SizeSymbol &s : symbols)
        if (s.name == name && (size < s.min || size > s.max))
          return Status::error(strCat(
              where, " is ", size, "; the package serves ", name, " in ", s.min,
              "..", s.max, " (recompile it with kiln compile --dim ", name,
              "=LO..HI for a range that holds ", size, ")"));
    }
  }
  for (const SizeSymbol &s : symbols)
    if (!sizes.count(s.name))
      return Status::error(strCat("no input gives the size '", s.name,
                                  "' (the package is inconsistent)"));
  return sizes;
}

/// `sig` with its -1 dims evaluated at `sizes`.
Expected<ValueSignature>
sizedSignature(const ValueSignature &sig,
               const std::map<std::string, int64_t> &sizes) {
  ValueSignature out = sig;
  for (size_t d = 0; d < out.shape.size(); ++d) {
    if (out.shape[d] >= 0)
      continue;
    Expected<SymbolicDim> dim = SymbolicDim::parse(sig.dimNames[d]);
    if (!dim)
      return dim.status();
    Expected<int64_t> size = dim->evaluate(sizes);
    if (!size)
      return size.status().withContext(
          strCat("'", sig.name, "' dimension ", d));
    out.shape[d] = *size;
  }
  return out;
}

} // namespace modelimpl

using namespace modelimpl;

Model::Impl::Arena Model::Impl::acquireArena() {
  {
    std::lock_guard<std::mutex> lock(arenaMutex);
    if (!freeArenas.empty()) {
      Arena a = std::move(freeArenas.back());
      freeArenas.pop_back();
      return a;
    }
  }
  // Huge pages from 2 MB (HugePageMemory.h): a run writes and reads its
  // arena throughout.
  return Arena(allocateHugePageMemory(alignedAllocationSize(arenaBytes)),
               &std::free);
}

void Model::Impl::releaseArena(Arena arena) {
  std::lock_guard<std::mutex> lock(arenaMutex);
  freeArenas.push_back(std::move(arena));
}

Expected<NamedTensors> Model::run(const NamedTensors &inputs) const {
  return run(inputs, RunOptions());
}

/// RunOptions::checkNan for a package compiled whole: its outputs (those
/// returned and those written into the caller's tensors).
static Status checkOutputsFinite(const NamedTensors &outputs,
                                 const RunOptions &options) {
  std::vector<const std::pair<std::string, Tensor> *> all;
  for (const auto &entry : outputs)
    all.push_back(&entry);
  if (options.outputsInto)
    for (const auto &entry : *options.outputsInto)
      all.push_back(&entry);
  for (const auto *entry : all) {
    Status finite =
        checkFinite(entry->second, strCat("--check-nan: output '",
                                          entry->first, "'"));
    if (!finite)
      return Status::error(strCat(
          finite.message(),
          "; the package computes it in one compiled graph, so the ONNX node "
          "is not known here: run the model on the reference runtime with "
          "--check-nan (kiln run MODEL.onnx --check-nan) to find it"));
  }
  return Status::ok();
}

/// Installs a StepProfiler's hooks on the calling thread for one call of
/// model.so's run entry point (RunOptions::trace), when the package has
/// the export.
class ProfiledCall {
public:
  ProfiledCall(Trace *trace, kiln_model_set_profiler_fn set) : set_(set) {
    if (!trace || !set)
      return;
    profiler_.emplace(*trace);
    previous_ = set_(profiler_->hooks());
  }
  /// Uninstalls the hooks and adds the steps' spans.
  Status finish() {
    if (!profiler_)
      return Status::ok();
    set_(previous_);
    Status status = profiler_->finish();
    profiler_.reset();
    return status;
  }
  ~ProfiledCall() {
    if (profiler_)
      set_(previous_);
  }

private:
  kiln_model_set_profiler_fn set_;
  const kiln_model_profiler *previous_ = nullptr;
  std::optional<StepProfiler> profiler_;
};

Expected<NamedTensors> Model::run(const NamedTensors &inputs,
                                  const RunOptions &options) const {
  assert(impl_ && "run() on a moved-from Model");
  if (!options.trace)
    return runUntraced(inputs, options);
  const Impl &m = *impl_;
  Trace &trace = *options.trace;
  auto start = std::chrono::steady_clock::now();
  Expected<NamedTensors> outputs = runUntraced(inputs, options);
  TraceEvent span;
  std::string name = std::filesystem::path(m.dir).filename().string();
  if (name.empty())
    name = std::filesystem::path(m.dir).parent_path().filename().string();
  span.name = name.empty() ? m.dir : name;
  span.category = "run";
  span.startUs = trace.microsecondsAt(start);
  span.durationUs = trace.nowMicroseconds() - span.startUs;
  span.pid = static_cast<int>(getpid());
  span.tid = Trace::threadId();
  span.args.emplace_back("package", m.dir);
  span.args.emplace_back("device", deviceName(device()));
  if (!m.program && !m.abi.setProfiler)
    span.args.emplace_back("steps",
                           "not profiled: model.so has no profiler export "
                           "(compiled by an older Kiln; recompile it)");
  if (!outputs)
    span.args.emplace_back("error", outputs.status().message());
  trace.add(std::move(span));
  return outputs;
}

Expected<NamedTensors> Model::runUntraced(const NamedTensors &inputs,
                                          const RunOptions &options) const {
  Impl &m = *impl_;
  if (options.checkNan && !m.program) {
    RunOptions unchecked = options;
    unchecked.checkNan = false;
    Expected<NamedTensors> outputs = runUntraced(inputs, unchecked);
    if (outputs)
      KILN_RETURN_IF_ERROR(checkOutputsFinite(*outputs, options));
    return outputs;
  }
  if (options.graphUse)
    *options.graphUse = GraphUse::Off;
  if (m.program) {
    if (options.outputsInto)
      return Status::error(strCat(
          m.dir, ": RunOptions::outputsInto is not supported for program "
                 "packages (graph breaks); use the returned outputs"));
    return m.program->run(inputs, options);
  }
  // A graph that reads values another graph left in the arena runs only in
  // that arena.
  for (const ArenaValueSignature &v : m.arenaValues)
    if (v.isInput && !options.arena)
      return Status::error(strCat(
          "the graph reads '", v.value.name,
          "' from the scratch arena that the previous graph of its package "
          "left it in (a training package's backward graph); run it "
          "through kiln::Trainer, or pass that arena as RunOptions::arena"));
  KILN_RETURN_IF_ERROR(checkNames(m.inputs, inputs, "input", "model", true));
  // A package compiled for ranges of sizes: the sizes from the inputs, and
  // the signature at those sizes.
  std::vector<ValueSignature> inputSigs = m.inputs, outputSigs = m.outputs;
  std::vector<int64_t> sizes;
  if (!m.sizeSymbols.empty()) {
    Expected<std::map<std::string, int64_t>> bound =
        bindSizes(m.sizeSymbols, m.inputs, inputs);
    if (!bound)
      return bound.status();
    for (const SizeSymbol &s : m.sizeSymbols)
      sizes.push_back(bound->at(s.name));
    for (auto *sigs : {&inputSigs, &outputSigs})
      for (ValueSignature &sig : *sigs) {
        Expected<ValueSignature> sized = sizedSignature(sig, *bound);
        if (!sized)
          return sized.status();
        sig = sized.take();
      }
  }

  Expected<std::vector<const Tensor *>> targets =
      outputTargets(outputSigs, options.outputsInto, device());
  if (!targets)
    return targets.status();
  if (m.cuda) {
    std::vector<const Tensor *> ordered;
    for (const ValueSignature &sig : inputSigs) {
      const Tensor *t = findNamed(inputs, sig.name);
      KILN_RETURN_IF_ERROR(checkTensor(sig, *t, "input", /*cudaPackage=*/true));
      ordered.push_back(t);
    }
    ProfiledCall profiled(options.trace, m.abi.setProfiler);
    Expected<NamedTensors> outputs = m.cuda->run(
        m.handle, inputSigs, ordered, outputSigs, *targets, sizes, options);
    Status steps = profiled.finish();
    if (outputs && !steps)
      return steps;
    return outputs;
  }

  std::vector<Tensor> ready;
  std::vector<const void *> inputPointers;
  ready.reserve(m.inputs.size());
  for (const ValueSignature &sig : inputSigs) {
    const Tensor *t = findNamed(inputs, sig.name);
    KILN_RETURN_IF_ERROR(checkTensor(sig, *t, "input"));
    ready.push_back(alignedContiguous(*t));
    if (!ready.back().defined())
      return Status::error(
          strCat("input '", sig.name, "': out of memory copying it"));
    inputPointers.push_back(ready.back().rawData());
  }

  // Outputs: the caller's tensors where given (through an aligned
  // temporary, copied back after the run, when unaligned), else new ones.
  NamedTensors outputs;
  std::vector<void *> outputPointers;
  std::vector<std::pair<const Tensor *, Tensor>> staged;
  for (size_t i = 0; i < outputSigs.size(); ++i) {
    const ValueSignature &sig = outputSigs[i];
    const Tensor *target = (*targets)[i];
    if (target && isAligned(target->rawData())) {
      outputPointers.push_back(target->rawData());
      continue;
    }
    Tensor t = m.outputPool->allocate(sig.dtype, sig.shape);
    if (!t.defined())
      return Status::error(strCat("output '", sig.name, "' ",
                                  typeString(sig.dtype, sig.shape),
                                  ": out of memory"));
    outputPointers.push_back(t.rawData());
    if (target)
      staged.emplace_back(target, std::move(t));
    else
      outputs.emplace_back(sig.name, std::move(t));
  }

  // The caller's scratch memory (RunOptions::arena), else a pooled arena.
  Impl::Arena arena(nullptr, &std::free);
  if (!options.arena) {
    arena = m.acquireArena();
    if (!arena)
      return Status::error(strCat(m.libPath, ": cannot allocate the ",
                                  m.arenaBytes, "-byte arena: out of memory"));
  }
  // Kernel threads: the caller's choice, else all of OpenMP's while this is
  // the only CPU run in flight, one while others are (CpuThreads.h).
  ConcurrentCpuRun concurrent;
  if (m.abi.setThreads)
    m.abi.setThreads(options.threads > 0     ? options.threads
                     : concurrent.overlaps() ? 1
                                             : 0);
  char err[1024] = {0};
  ProfiledCall profiled(options.trace, m.abi.setProfiler);
  void *runArena = options.arena ? options.arena : arena.get();
  int rc =
      m.abi.runSized
          ? m.abi.runSized(m.handle, sizes.data(), inputPointers.data(),
                           outputPointers.data(), runArena, err, sizeof(err))
          : m.abi.run(m.handle, inputPointers.data(), outputPointers.data(),
                      runArena, err, sizeof(err));
  Status steps = profiled.finish();
  if (arena)
    m.releaseArena(std::move(arena));
  err[sizeof(err) - 1] = 0;
  if (rc != 0)
    return Status::error(
        strCat(m.libPath, ": run failed: ", err[0] ? err : "no message"));
  KILN_RETURN_IF_ERROR(steps);
  for (const auto &[target, temporary] : staged)
    if (size_t bytes = temporary.nbytes())
      std::memcpy(target->rawData(), temporary.rawData(), bytes);
  if (options.outputDevice != Device::CPU)
    for (auto &entry : outputs) {
      Expected<Tensor> moved = entry.second.to(options.outputDevice);
      if (!moved)
        return moved.status().withContext(strCat("output '", entry.first,
                                                 "'"));
      entry.second = moved.take();
    }
  return outputs;
}

} // namespace kiln
