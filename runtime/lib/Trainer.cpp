//===- Trainer.cpp - Training with a compiled training package ------------===//
//
// This file implements kiln::Trainer (kiln/runtime/Trainer.h). Loading goes:
// manifest.json (kind "training") -> the forward, backward and optimizer
// graph packages, each a kiln::Model -> the wiring check (TrainerWiring.cpp)
// -> the
// initial parameters (safetensors) uploaded to the package's device, the
// state zero-filled. A step feeds each graph its inputs by name from those
// sources, keeps every intermediate on the device, and runs the optimizer
// with RunOptions::outputsInto pointing its update outputs at the parameter
// and state tensors.
//
//===----------------------------------------------------------------------===//

#include "TrainerImpl.h"

#include "kiln/runtime/SafeTensors.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

namespace fs = std::filesystem;

namespace kiln {

Expected<Tensor> Trainer::Impl::zeros(const ValueSignature &sig) const {
  Tensor host = Tensor::empty(sig.dtype, sig.shape); // zero-filled
  if (device == Device::CPU)
    return host;
  return host.to(device);
}

/// Replaces the parameters and state with those of `file` (read from
/// `path`); see Trainer::loadState. Nothing changes on error.
Status Trainer::Impl::applyTensors(NamedTensors file, const std::string &path) {
  std::optional<int64_t> fileStep;
  std::vector<std::string> unknown, missingParams, missingState;
  for (const auto &[name, t] : file) {
    if (name == kStepTensor) {
      if (t.numel() != 1 || t.rank() != 0 ||
          (t.dtype() != DType::I64 && t.dtype() != DType::I32))
        return Status::error(strCat(path, ": '", kStepTensor, "' is ",
                                    t.typeString(), "; expected i64[]"));
      fileStep = t.getInt(0);
      continue;
    }
    if (!findSig(parameters, name) && !findSig(state, name))
      unknown.push_back(name);
  }
  if (!unknown.empty())
    return Status::error(strCat(path, ": holds ", quoted(unknown),
                                ", which the training package has no "
                                "parameter or state tensor for"));
  NamedTensors newParams, newState;
  auto take = [&](const std::vector<ValueSignature> &sigs, NamedTensors &out,
                  std::vector<std::string> &missing) -> Status {
    for (const ValueSignature &sig : sigs) {
      const Tensor *t = findNamed(file, sig.name);
      if (!t) {
        missing.push_back(sig.name);
        continue;
      }
      if (t->dtype() != sig.dtype || t->shape() != sig.shape)
        return Status::error(strCat(path, ": tensor '", sig.name, "' is ",
                                    t->typeString(),
                                    " but the package "
                                    "declares ",
                                    typeOf(sig)));
      Expected<Tensor> placed =
          device == Device::CPU ? Expected<Tensor>(*t) : t->to(device);
      if (!placed)
        return placed.status().withContext(
            strCat(path, ": tensor '", sig.name, "'"));
      out.emplace_back(sig.name, placed.take());
    }
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(take(parameters, newParams, missingParams));
  if (!missingParams.empty())
    return Status::error(strCat(path, ": has no ", quoted(missingParams),
                                " (every parameter of the training package "
                                "must be in it)"));
  KILN_RETURN_IF_ERROR(take(state, newState, missingState));
  if (fileStep && !missingState.empty())
    return Status::error(strCat(path, ": is a checkpoint (it has '",
                                kStepTensor, "') but has no optimizer state ",
                                quoted(missingState)));
  // Keep manifest order; missing state (a weights file) starts at zero.
  NamedTensors orderedState;
  for (const ValueSignature &sig : state) {
    if (const Tensor *t = findNamed(newState, sig.name)) {
      orderedState.emplace_back(sig.name, *t);
      continue;
    }
    Expected<Tensor> z = zeros(sig);
    if (!z)
      return z.status().withContext(strCat("state '", sig.name, "'"));
    orderedState.emplace_back(sig.name, z.take());
  }
  parameterTensors = std::move(newParams);
  stateTensors = std::move(orderedState);
  step = fileStep.value_or(0);
  return Status::ok();
}

/// Checks the caller's inputs against inputs(): names, devices, types.
Status Trainer::Impl::checkInputs(const NamedTensors &given) const {
  KILN_RETURN_IF_ERROR(checkNames(inputs, given, "input", "model", true));
  for (const ValueSignature &sig : inputs) {
    const Tensor &t = *findNamed(given, sig.name);
    std::string prefix = strCat("input '", sig.name, "'");
    if (!t.defined())
      return Status::error(
          strCat(prefix, ": no tensor given (expected ", typeOf(sig), ")"));
    if (t.device() != Device::CPU && t.device() != device)
      return Status::error(strCat(prefix, ": the tensor is on ",
                                  deviceName(t.device()),
                                  "; this trainer "
                                  "takes cpu tensors"));
    if (t.dtype() != sig.dtype || t.shape() != sig.shape)
      return Status::error(strCat(prefix, ": expected ", typeOf(sig),
                                  " but got ", t.typeString()));
  }
  return Status::ok();
}

const Tensor *Trainer::Impl::lookup(Source source, const std::string &name,
                                    const NamedTensors &given,
                                    const NamedTensors *fwd,
                                    const NamedTensors *bwd) const {
  switch (source) {
  case Source::ModelInput:
    return findNamed(given, name);
  case Source::Parameter:
    return findNamed(parameterTensors, name);
  case Source::State:
    return findNamed(stateTensors, name);
  case Source::Forward:
    return fwd ? findNamed(*fwd, name) : nullptr;
  case Source::Backward:
    return bwd ? findNamed(*bwd, name) : nullptr;
  case Source::Lr:
  case Source::Step:
  case Source::Extra:
    return nullptr; // Passed in `extra`.
  }
  return nullptr;
}

Status Trainer::Impl::acquireStream() const {
  if (device != Device::CUDA || stream)
    return Status::ok();
  Expected<void *> acquired = cuda::acquireStream();
  if (!acquired)
    return acquired.status().withContext(dir);
  stream = *acquired;
  return Status::ok();
}

/// Runs one graph with its inputs gathered by `sources`; outputs stay on
/// the trainer's device.
Expected<NamedTensors>
Trainer::Impl::runGraph(const Model &graph, const std::vector<Source> &sources,
                        const NamedTensors &given, const NamedTensors *fwd,
                        const NamedTensors *bwd, const NamedTensors &extra,
                        NamedTensors *into) const {
  NamedTensors feed;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const std::string &name = graph.inputs()[i].name;
    const Tensor *t = sources[i] == Source::Lr || sources[i] == Source::Step ||
                              sources[i] == Source::Extra
                          ? findNamed(extra, name)
                          : lookup(sources[i], name, given, fwd, bwd);
    if (!t)
      return Status::error(strCat(graph.directory(), ": input '", name,
                                  "' has no value (internal error)"));
    feed.emplace_back(name, *t);
  }
  if (!scratch.defined()) {
    size_t bytes = std::max(
        {forward->arenaBytes(), backward->arenaBytes(), optimizer->arenaBytes(),
         accumulate ? accumulate->arenaBytes() : 0, size_t(1)});
    Expected<Tensor> arena =
        Tensor::empty(DType::U8, {static_cast<int64_t>(bytes)}, device);
    if (!arena)
      return arena.status().withContext(
          strCat(dir, ": the ", bytes, "-byte scratch arena"));
    scratch = arena.take();
  }
  KILN_RETURN_IF_ERROR(acquireStream());
  RunOptions options;
  options.outputDevice = device;
  options.outputsInto = into;
  options.arena = scratch.rawData();
  options.stream = stream;
  Expected<NamedTensors> out = graph.run(feed, options);
  if (!out)
    return out.status().withContext(graph.directory());
  return out;
}

Expected<double> Trainer::Impl::lossOf(const NamedTensors &fwd) const {
  const Tensor *loss = findNamed(fwd, manifest.training->loss);
  if (!loss)
    return Status::error(strCat(dir, ": the forward graph returned no '",
                                manifest.training->loss, "'"));
  Expected<Tensor> host = loss->to(Device::CPU);
  if (!host)
    return host.status().withContext("copying the loss to the cpu");
  return host->getDouble(0);
}

//===----------------------------------------------------------------------===//
// Trainer
//===----------------------------------------------------------------------===//

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::Trainer(Trainer &&other) noexcept = default;
Trainer &Trainer::operator=(Trainer &&other) noexcept = default;
Trainer::~Trainer() = default;

/// Loads one graph package of a training package.
static Expected<Model> loadGraph(const std::string &dir,
                                 const std::string &relative,
                                 const char *which) {
  std::string path = (fs::path(dir) / relative).string();
  Expected<Model> m = Model::load(path);
  if (!m)
    return m.status().withContext(
        strCat(dir, ": the ", which, " graph (training.graphs.", which, ")"));
  return m;
}

Expected<Trainer> Trainer::load(const std::string &dir,
                                const TrainerOptions &options) {
  std::string manifestPath = (fs::path(dir) / "manifest.json").string();
  Expected<PackageManifest> manifest = readManifest(manifestPath);
  if (!manifest)
    return manifest.status();
  KILN_RETURN_IF_ERROR(verifyPackageFiles(*manifest, dir));
  if (manifest->kind != PackageKind::Training || !manifest->training)
    return Status::error(strCat("'", dir,
                                "' is not a training package (its manifest "
                                "has no \"kind\": \"training\"): load it "
                                "with kiln::Model"));
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->manifest = manifest.take();
  const ManifestTraining &t = *impl->manifest.training;
  impl->inputs = toSignatures(impl->manifest.inputs);
  impl->parameters = toSignatures(t.parameters);
  impl->state = toSignatures(t.state);
  impl->lr = options.lr.value_or(t.optimizer.lr);
  impl->inPlace = options.inPlaceUpdates;

  for (auto [which, path, slot] :
       {std::tuple{"forward", &t.graphs.forward, &impl->forward},
        {"backward", &t.graphs.backward, &impl->backward},
        {"optimizer", &t.graphs.optimizer, &impl->optimizer},
        {"accumulate", &t.graphs.accumulate, &impl->accumulate}}) {
    if (path->empty())
      continue; // a package without gradient accumulation
    Expected<Model> m = loadGraph(dir, *path, which);
    if (!m)
      return m.status();
    slot->emplace(m.take());
  }
  impl->device = impl->forward->device();
  if (impl->backward->device() != impl->device ||
      impl->optimizer->device() != impl->device ||
      (impl->accumulate && impl->accumulate->device() != impl->device))
    return Status::error(strCat(dir, ": its graphs are compiled for different "
                                     "devices (the package is inconsistent; "
                                     "recompile it)"));
  if (options.device && *options.device != impl->device)
    return Status::error(
        strCat(dir, ": is compiled for ", deviceName(impl->device),
               " and cannot train on ", deviceName(*options.device),
               " (recompile it with kiln compile --target ",
               deviceName(*options.device), ")"));
  KILN_RETURN_IF_ERROR(impl->checkWiring());

  std::string weights = options.weightsPath;
  if (weights.empty()) {
    Expected<std::string> inside = resolveInsideFolder(
        dir, t.weightsFile, strCat(manifestPath, ": training.weights_file"));
    if (!inside)
      return inside.status();
    weights = inside.take();
  }
  Expected<NamedTensors> file = readSafeTensors(weights);
  if (!file)
    return file.status();
  KILN_RETURN_IF_ERROR(impl->applyTensors(file.take(), weights));
  return Trainer(std::move(impl));
}

const std::vector<ValueSignature> &Trainer::inputs() const {
  return impl_->inputs;
}
const std::vector<ValueSignature> &Trainer::parameters() const {
  return impl_->parameters;
}
const std::vector<ValueSignature> &Trainer::state() const {
  return impl_->state;
}
const PackageManifest &Trainer::manifest() const { return impl_->manifest; }
const std::string &Trainer::directory() const { return impl_->dir; }
Device Trainer::device() const { return impl_->device; }
int64_t Trainer::step() const { return impl_->step; }
double Trainer::learningRate() const { return impl_->lr; }
void Trainer::setLearningRate(double lr) { impl_->lr = lr; }

Expected<NamedTensors>
Trainer::Impl::runForward(const NamedTensors &inputs) const {
  KILN_RETURN_IF_ERROR(checkInputs(inputs));
  return runGraph(*forward, forwardSources, inputs, nullptr, nullptr, {},
                  nullptr);
}

Expected<NamedTensors>
Trainer::Impl::runBackward(const NamedTensors &inputs,
                           const NamedTensors &fwd) const {
  return runGraph(*backward, backwardSources, inputs, &fwd, nullptr, {},
                  nullptr);
}

Expected<double> Trainer::forward(const NamedTensors &inputs) {
  Impl &m = *impl_;
  Impl::StreamWait wait{m};
  Expected<NamedTensors> fwd = m.runForward(inputs);
  if (!fwd)
    return fwd.status();
  KILN_RETURN_IF_ERROR(m.synchronize());
  return m.lossOf(*fwd);
}

Expected<NamedTensors> Trainer::gradients(const NamedTensors &inputs) {
  Impl &m = *impl_;
  Impl::StreamWait wait{m};
  Expected<NamedTensors> fwd = m.runForward(inputs);
  if (!fwd)
    return fwd.status();
  Expected<NamedTensors> bwd = m.runBackward(inputs, *fwd);
  if (!bwd)
    return bwd.status();
  KILN_RETURN_IF_ERROR(m.synchronize());
  NamedTensors out;
  for (const ValueSignature &p : m.parameters)
    for (const ManifestGradient &g : m.manifest.training->gradients)
      if (g.parameter == p.name) {
        Expected<Tensor> host = findNamed(*bwd, g.value)->to(Device::CPU);
        if (!host)
          return host.status().withContext(strCat("gradient '", g.value, "'"));
        out.emplace_back(p.name, host.take());
      }
  return out;
}

int64_t Trainer::Impl::microBatches(const NamedTensors &given) const {
  int64_t k = 0;
  for (const ValueSignature &sig : inputs) {
    const Tensor *t = findNamed(given, sig.name);
    if (!t || sig.shape.empty() ||
        t->rank() != static_cast<int64_t>(sig.shape.size()) ||
        sig.shape[0] <= 0 || t->dim(0) % sig.shape[0] != 0)
      return 1;
    for (size_t d = 1; d < sig.shape.size(); ++d)
      if (t->dim(static_cast<int64_t>(d)) != sig.shape[d])
        return 1;
    int64_t ki = t->dim(0) / sig.shape[0];
    if (k && ki != k)
      return 1;
    k = ki;
  }
  return k > 0 ? k : 1;
}

NamedTensors Trainer::Impl::microBatch(const NamedTensors &given, int64_t i,
                                       int64_t k) const {
  NamedTensors out;
  for (const auto &[name, t] : given) {
    int64_t rows = t.dim(0) / k;
    Shape shape = t.shape();
    shape[0] = rows;
    out.emplace_back(name, Tensor(t.storage(), t.dtype(), shape, t.strides(),
                                  t.offset() + i * rows * t.strides()[0]));
  }
  return out;
}

Expected<double> Trainer::trainStep(const NamedTensors &inputs) {
  Impl &m = *impl_;
  Impl::StreamWait wait{m};
  // Inputs holding k micro-batches (their first dim k times the declared
  // one): gradient accumulation, each micro-batch's forward and backward
  // graphs, then the accumulate graph adding its gradients (weighted 1 / k)
  // into the sums the optimizer then reads.
  int64_t k = m.microBatches(inputs);
  if (k > 1 && !m.accumulate)
    return Status::error(strCat(
        m.dir, ": the inputs hold ", k,
        " micro-batches, but this package has no accumulate graph (it was "
        "compiled before gradient accumulation existed): recompile it"));
  // The step's device time: events on the stream around its work.
  KILN_RETURN_IF_ERROR(m.acquireStream());
  bool timed = m.device == Device::CUDA && m.stepTimer.start(m.stream).isOk();
  std::vector<NamedTensors> forwards;
  std::optional<NamedTensors> lastBackward;
  for (int64_t i = 0; i < k; ++i) {
    NamedTensors batch = k == 1 ? inputs : m.microBatch(inputs, i, k);
    Expected<NamedTensors> fwd = m.runForward(batch);
    if (!fwd)
      return k == 1 ? fwd.status()
                    : fwd.status().withContext(
                          strCat("micro-batch ", i + 1, " of ", k));
    Expected<NamedTensors> bwd = m.runBackward(batch, *fwd);
    if (!bwd)
      return bwd.status();
    forwards.push_back(fwd.take());
    if (k == 1) {
      lastBackward = bwd.take();
      break;
    }
    if (m.gradSums.empty())
      for (const ValueSignature &g : m.backward->outputs()) {
        Expected<Tensor> sum = Tensor::empty(g.dtype, g.shape, m.device);
        if (!sum)
          return sum.status().withContext(strCat("the sum of '", g.name, "'"));
        m.gradSums.emplace_back(g.name, sum.take());
      }
    NamedTensors extra = {
        {kAccumulateScale, scalarOf(DType::F32, 1.0 / static_cast<double>(k))},
        {kAccumulateFirst, scalarOf(DType::F32, i == 0 ? 1.0 : 0.0)}};
    NamedTensors into;
    for (const auto &[name, sum] : m.gradSums) {
      extra.emplace_back(name + kGradSumSuffix, sum);
      into.emplace_back(name + kGradSumSuffix + std::string(".next"), sum);
    }
    Expected<NamedTensors> summed =
        m.runGraph(*m.accumulate, m.accumulateSources, batch, nullptr, &*bwd,
                   extra, &into);
    if (!summed)
      return summed.status();
  }
  const NamedTensors &grads = k == 1 ? *lastBackward : m.gradSums;

  NamedTensors scalars;
  for (const ValueSignature &in : m.optimizer->inputs()) {
    if (in.name == kLrInput)
      scalars.emplace_back(in.name, scalarOf(in.dtype, m.lr));
    else if (in.name == kStepInput)
      scalars.emplace_back(in.name,
                           scalarOf(in.dtype, static_cast<double>(m.step + 1)));
  }
  // update "value" -> the "target" tensor (sharing its storage).
  NamedTensors into;
  for (const ManifestUpdate &u : m.manifest.training->updates) {
    Tensor *target = findMutable(m.parameterTensors, u.target);
    if (!target)
      target = findMutable(m.stateTensors, u.target);
    into.emplace_back(u.value, *target);
  }
  Expected<NamedTensors> updated =
      m.runGraph(*m.optimizer, m.optimizerSources, inputs, nullptr, &grads,
                 scalars, m.inPlace ? &into : nullptr);
  if (!updated)
    return updated.status();
  if (!m.inPlace)
    for (const ManifestUpdate &u : m.manifest.training->updates) {
      Tensor *target = findMutable(m.parameterTensors, u.target);
      if (!target)
        target = findMutable(m.stateTensors, u.target);
      *target = *findNamed(*updated, u.value);
    }
  ++m.step;
  timed = timed && m.stepTimer.stop().isOk();
  // The step's one wait, then the loss (the micro-batches' mean).
  KILN_RETURN_IF_ERROR(m.synchronize());
  if (timed) {
    Expected<double> ms = m.stepTimer.elapsedMilliseconds();
    m.lastStepDeviceMs = ms ? std::optional<double>(*ms) : std::nullopt;
  }
  double loss = 0;
  for (const NamedTensors &fwd : forwards) {
    Expected<double> l = m.lossOf(fwd);
    if (!l)
      return l.status();
    loss += *l;
  }
  return loss / static_cast<double>(forwards.size());
}

/// CPU copies of `tensors`.
static Expected<NamedTensors> hostCopies(const NamedTensors &tensors) {
  NamedTensors out;
  for (const auto &[name, t] : tensors) {
    Expected<Tensor> host = t.to(Device::CPU);
    if (!host)
      return host.status().withContext(strCat("'", name, "'"));
    out.emplace_back(name, host.take());
  }
  return out;
}

std::optional<double> Trainer::lastStepDeviceMilliseconds() const {
  return impl_->lastStepDeviceMs;
}

Expected<NamedTensors> Trainer::parameterValues() const {
  return hostCopies(impl_->parameterTensors);
}

Expected<NamedTensors> Trainer::stateValues() const {
  return hostCopies(impl_->stateTensors);
}

Status Trainer::save(const std::string &path) const {
  const Impl &m = *impl_;
  NamedTensors all = m.parameterTensors;
  all.insert(all.end(), m.stateTensors.begin(), m.stateTensors.end());
  all.emplace_back(kStepTensor, Tensor::scalar<int64_t>(m.step));
  return writeSafeTensors(path, all,
                          {{"format", "kiln-training"},
                           {"optimizer", m.manifest.training->optimizer.kind}});
}

Status Trainer::loadState(const std::string &path) {
  Expected<NamedTensors> file = readSafeTensors(path);
  if (!file)
    return file.status();
  return impl_->applyTensors(file.take(), path);
}

} // namespace kiln
