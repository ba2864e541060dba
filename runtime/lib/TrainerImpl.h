//===- TrainerImpl.h - kiln::Trainer's state and helpers -------*- C++ -*-===//
//
// This file declares what Trainer.cpp (loading, steps) and TrainerWiring.cpp
// (the checks that every graph input and output is wired to the right
// tensor) share: Trainer::Impl and the helpers over signatures and named
// tensors. Private to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_TRAINERIMPL_H
#define KILN_RUNTIME_LIB_TRAINERIMPL_H

#include "kiln/runtime/Trainer.h"

#include "SignatureCheck.h"
#include "kiln/runtime/Cuda.h"
#include "kiln/runtime/Model.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln {
namespace trainer_detail {

inline constexpr const char *kLrInput = "kiln.lr";
inline constexpr const char *kStepInput = "kiln.step";
inline constexpr const char *kStepTensor = "kiln.step";

inline ValueSignature toSignature(const ManifestValue &v) {
  ValueSignature sig;
  sig.name = v.name;
  sig.dtype = v.dtype;
  sig.shape = v.shape;
  sig.dimNames.assign(v.shape.size(), "");
  return sig;
}

inline std::vector<ValueSignature>
toSignatures(const std::vector<ManifestValue> &vs) {
  std::vector<ValueSignature> out;
  for (const ManifestValue &v : vs)
    out.push_back(toSignature(v));
  return out;
}

inline std::string typeOf(const ValueSignature &sig) {
  return strCat(dtypeName(sig.dtype), shapeToString(sig.shape));
}

inline const ValueSignature *findSig(const std::vector<ValueSignature> &sigs,
                                     const std::string &name) {
  for (const ValueSignature &s : sigs)
    if (s.name == name)
      return &s;
  return nullptr;
}

inline Tensor *findMutable(NamedTensors &tensors, const std::string &name) {
  for (auto &[n, t] : tensors)
    if (n == name)
      return &t;
  return nullptr;
}

/// "'a', 'b'".
inline std::string quoted(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += strCat(out.empty() ? "" : ", ", "'", n, "'");
  return out;
}

/// A rank-0 tensor of `dtype` holding `value`.
inline Tensor scalarOf(DType dtype, double value) {
  return Tensor::scalar<double>(value).to(dtype);
}

/// Where a graph input comes from (Extra: the caller's run-time values,
/// the accumulate graph's sums and scalars).
enum class Source {
  ModelInput,
  Parameter,
  State,
  Forward,
  Backward,
  Lr,
  Step,
  Extra
};

/// The accumulate graph's run-time scalars and the suffix of its sums
/// (passes/TrainingPasses.h).
inline constexpr const char *kAccumulateScale = "kiln.accumulate_scale";
inline constexpr const char *kAccumulateFirst = "kiln.accumulate_first";
inline constexpr const char *kGradSumSuffix = ".sum";

/// True when `name` is one of the accumulate graph's own inputs.
inline bool isAccumulateInput(const std::string &name) {
  return name == kAccumulateScale || name == kAccumulateFirst ||
         (name.size() > 4 &&
          name.compare(name.size() - 4, 4, kGradSumSuffix) == 0);
}

} // namespace trainer_detail

using namespace trainer_detail;

//===----------------------------------------------------------------------===//
// Trainer::Impl
//===----------------------------------------------------------------------===//

struct Trainer::Impl {
  std::string dir;
  PackageManifest manifest;
  std::optional<Model> forward, backward, optimizer;
  /// Gradient accumulation's graph (absent in older packages).
  std::optional<Model> accumulate;
  /// The gradient sums over a step's micro-batches, {"P.grad" -> sum}, on
  /// `device`; made at the first step with several micro-batches.
  mutable NamedTensors gradSums;
  std::vector<ValueSignature> inputs, parameters, state;
  /// On `device`, in manifest order.
  NamedTensors parameterTensors, stateTensors;
  Device device = Device::CPU;
  int64_t step = 0;
  double lr = 0;
  bool inPlace = true;
  /// The scratch memory of the three graphs, which run one after another:
  /// one arena of the largest one's size (RunOptions::arena), on `device`,
  /// made at the first run.
  mutable Tensor scratch;
  /// A cuda trainer's stream: the three graphs queue their work on it one
  /// after another (RunOptions::stream) and a step waits once, at its end.
  /// Taken from the pool at the first run.
  mutable void *stream = nullptr;
  /// The events around a cuda step's work, and its last device time.
  cuda::StreamTimer stepTimer;
  std::optional<double> lastStepDeviceMs;
  /// Takes the cuda stream from the pool unless it has one.
  Status acquireStream() const;

  ~Impl() {
    if (stream) {
      (void)cuda::synchronize(stream);
      cuda::releaseStream(stream);
    }
  }
  /// Waits for the work queued on `stream`.
  Status synchronize() const {
    return stream ? cuda::synchronize(stream).withContext(dir) : Status::ok();
  }
  /// Waits for the stream when it goes out of scope (an entry point's error
  /// returns leave nothing running).
  struct StreamWait {
    const Impl &m;
    ~StreamWait() { (void)m.synchronize(); }
  };
  /// Each graph's inputs' sources, in the graph's input order.
  std::vector<Source> forwardSources, backwardSources, optimizerSources,
      accumulateSources;
  /// How many micro-batches `inputs` hold: k when every input's first dim
  /// is k times the declared one (the rest as declared), else 1.
  int64_t microBatches(const NamedTensors &inputs) const;
  /// Micro-batch `i` of `k`: each input's slice along its first dim (views).
  NamedTensors microBatch(const NamedTensors &inputs, int64_t i,
                          int64_t k) const;

  Status resolveInputs(const Model &graph, const std::string &label,
                       const std::set<Source> &allowed,
                       std::vector<Source> &sources) const;
  Status checkWiring();
  Status checkArenaValues() const;
  Status checkOutputs() const;
  Status checkInputs(const NamedTensors &given) const;
  Expected<Tensor> zeros(const ValueSignature &sig) const;
  Status applyTensors(NamedTensors file, const std::string &path);
  const Tensor *lookup(Source source, const std::string &name,
                       const NamedTensors &given, const NamedTensors *fwd,
                       const NamedTensors *bwd) const;
  Expected<NamedTensors>
  runGraph(const Model &graph, const std::vector<Source> &sources,
           const NamedTensors &given, const NamedTensors *fwd,
           const NamedTensors *bwd, const NamedTensors &extra,
           NamedTensors *into) const;
  Expected<double> lossOf(const NamedTensors &fwd) const;
  /// The inputs checked, then the forward graph's outputs.
  Expected<NamedTensors> runForward(const NamedTensors &inputs) const;
  /// The backward graph's outputs, from the forward graph's `fwd`.
  Expected<NamedTensors> runBackward(const NamedTensors &inputs,
                                     const NamedTensors &fwd) const;
};

} // namespace kiln

#endif // KILN_RUNTIME_LIB_TRAINERIMPL_H
