//===- CudaGraphCache.cpp - A cuda package's captured runs ----------------===//
//
// This file implements CudaGraphCache (see CudaGraphCache.h): entries per
// address set with their staging buffers, arena and stream, the capture of
// a run's launches with cuStreamBeginCapture / cuStreamEndCapture, their
// instantiation and replay, and the events that order an entry's stream
// after and before a caller's stream.
//
//===----------------------------------------------------------------------===//

#include "CudaGraphCache.h"

#include "kiln/runtime/Cuda.h"

#ifdef KILN_HAVE_CUDA
#include "CudaDriver.h"
#endif

#include <cstdlib>
#include <cstring>

namespace kiln {

const char *graphUseName(GraphUse use) {
  switch (use) {
  case GraphUse::Off:
    return "off";
  case GraphUse::Ineligible:
    return "ineligible";
  case GraphUse::Warmup:
    return "warmup";
  case GraphUse::Captured:
    return "captured";
  case GraphUse::Replayed:
    return "replayed";
  }
  return "off";
}

bool cudaGraphsDisabledByEnvironment() {
  // Read once: it is asked on every run.
  static const bool disabled = [] {
    const char *env = std::getenv("KILN_CUDA_GRAPHS");
    return env && std::strcmp(env, "0") == 0;
  }();
  return disabled;
}

#ifdef KILN_HAVE_CUDA

namespace {

using cuda::check;
using cuda::Driver;

/// Records an event on `from` and makes `to` wait for it.
Status join(const Driver &d, void *event, void *from, void *to) {
  KILN_RETURN_IF_ERROR(check(
      d, d.eventRecord(static_cast<CUevent>(event), static_cast<CUstream>(from)),
      "recording a CUDA graph's join event"));
  return check(d,
               d.streamWaitEvent(static_cast<CUstream>(to),
                                 static_cast<CUevent>(event), 0),
               "waiting for a CUDA graph's join event");
}

/// Buffers of the signatures' shapes where `addresses` has none.
template <typename Pointer>
Status allocateMissing(const std::vector<Pointer> &addresses,
                       const std::vector<ValueSignature> &sigs,
                       std::vector<Tensor> &buffers, const char *what) {
  buffers.resize(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (addresses[i])
      continue;
    Expected<Tensor> t =
        Tensor::empty(sigs[i].dtype, sigs[i].shape, Device::CUDA);
    if (!t)
      return t.status().withContext(
          strCat("the CUDA graph buffer of ", what, " '", sigs[i].name, "'"));
    buffers[i] = t.take();
  }
  return Status::ok();
}

} // namespace

CudaGraphCache::~CudaGraphCache() {
  for (std::unique_ptr<CudaGraphEntry> &e : entries_)
    destroy(*e);
}

void CudaGraphCache::destroy(CudaGraphEntry &entry) {
  Expected<const Driver *> dr = cuda::driver();
  if (!dr)
    return;
  const Driver &d = **dr;
  if (entry.stream)
    (void)cuda::synchronize(entry.stream);
  if (entry.exec)
    d.graphExecDestroy(static_cast<CUgraphExec>(entry.exec));
  for (void *event : {entry.before, entry.after})
    if (event)
      d.eventDestroy(static_cast<CUevent>(event));
  if (entry.stream)
    cuda::releaseStream(entry.stream);
  if (entry.arena)
    giveArena_(entry.arena);
  entry = CudaGraphEntry();
}

Expected<CudaGraphEntry *>
CudaGraphCache::acquire(const CudaGraphKey &key,
                        const std::vector<ValueSignature> &inputs,
                        const std::vector<ValueSignature> &outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::unique_ptr<CudaGraphEntry> &e : entries_)
    if (e->key == key) {
      if (e->busy)
        return static_cast<CudaGraphEntry *>(nullptr);
      e->busy = true;
      e->lastUse = ++clock_;
      return e.get();
    }
  // Addresses that change every run: entries would only cost.
  if (!replayed_ && made_ >= kMaxColdEntries)
    return static_cast<CudaGraphEntry *>(nullptr);
  if (entries_.size() >= kMaxEntries) {
    // Drop the least recently used idle entry.
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (!(*it)->busy &&
          (victim == entries_.end() || (*it)->lastUse < (*victim)->lastUse))
        victim = it;
    if (victim == entries_.end())
      return static_cast<CudaGraphEntry *>(nullptr);
    destroy(**victim);
    entries_.erase(victim);
  }
  Expected<const Driver *> dr = cuda::driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  auto entry = std::make_unique<CudaGraphEntry>();
  entry->key = key;
  // The entry is complete before it is kept: on an error its destructor
  // frees the tensors, the rest is given back here.
  Status status =
      allocateMissing(key.inputs, inputs, entry->inputs, "input");
  if (status)
    status = allocateMissing(key.outputs, outputs, entry->outputs, "output");
  if (status && !key.arena) {
    Expected<void *> arena = takeArena_();
    if (arena)
      entry->arena = *arena;
    else
      status = arena.status().withContext("the arena of a CUDA graph");
  }
  if (status) {
    Expected<void *> stream = cuda::acquireStream();
    if (stream)
      entry->stream = *stream;
    else
      status = stream.status();
  }
  for (void **event : {&entry->before, &entry->after}) {
    if (!status)
      break;
    CUevent e = nullptr;
    status = check(d, d.eventCreate(&e, CU_EVENT_DISABLE_TIMING),
                   "creating a CUDA graph's join event");
    *event = e;
  }
  if (!status) {
    destroy(*entry);
    return status;
  }
  entry->busy = true;
  entry->lastUse = ++clock_;
  ++made_;
  entries_.push_back(std::move(entry));
  return entries_.back().get();
}

void CudaGraphCache::release(CudaGraphEntry *entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  entry->busy = false;
}

Status CudaGraphCache::run(CudaGraphEntry &entry, void *callerStream,
                           const std::function<Status()> &launches,
                           GraphUse &use) {
  Expected<const Driver *> dr = cuda::driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  CUstream stream = static_cast<CUstream>(entry.stream);
  if (callerStream)
    KILN_RETURN_IF_ERROR(join(d, entry.before, callerStream, entry.stream));
  auto finish = [&](Status s) {
    if (s && callerStream)
      s = join(d, entry.after, entry.stream, callerStream);
    return s;
  };

  if (entry.exec) {
    use = GraphUse::Replayed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      replayed_ = true;
    }
    return finish(check(
        d, d.graphLaunch(static_cast<CUgraphExec>(entry.exec), stream),
        "replaying the run's CUDA graph (cuGraphLaunch)"));
  }
  if (entry.direct || entry.directRuns == 0) {
    use = entry.direct ? GraphUse::Ineligible : GraphUse::Warmup;
    ++entry.directRuns;
    return finish(launches());
  }

  // The second run: capture. Nothing runs while the stream is captured, so
  // a failed capture is simply run again directly.
  CUgraph graph = nullptr;
  Status captured =
      check(d, d.streamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            "cuStreamBeginCapture");
  if (captured) {
    Status launched = launches();
    CUresult ended = d.streamEndCapture(stream, &graph);
    if (!launched)
      captured = launched;
    else if (ended != CUDA_SUCCESS || !graph)
      captured = check(d, ended == CUDA_SUCCESS ? CUDA_ERROR_UNKNOWN : ended,
                       "cuStreamEndCapture");
  }
  if (captured) {
    CUgraphExec exec = nullptr;
    captured = check(d, d.graphInstantiate(&exec, graph, 0),
                     "cuGraphInstantiateWithFlags");
    if (captured)
      entry.exec = exec;
  }
  if (graph)
    d.graphDestroy(graph);
  if (!captured) {
    // Never again for these addresses; the run is made directly.
    entry.direct = true;
    use = GraphUse::Ineligible;
    return finish(launches());
  }
  use = GraphUse::Captured;
  return finish(check(d, d.graphLaunch(static_cast<CUgraphExec>(entry.exec), stream),
                      "launching the run's CUDA graph (cuGraphLaunch)"));
}

#else // !KILN_HAVE_CUDA

CudaGraphCache::~CudaGraphCache() = default;
void CudaGraphCache::destroy(CudaGraphEntry &) {}
Expected<CudaGraphEntry *>
CudaGraphCache::acquire(const CudaGraphKey &,
                        const std::vector<ValueSignature> &,
                        const std::vector<ValueSignature> &) {
  return cuda::available();
}
void CudaGraphCache::release(CudaGraphEntry *) {}
Status CudaGraphCache::run(CudaGraphEntry &, void *,
                           const std::function<Status()> &, GraphUse &) {
  return cuda::available();
}

#endif // KILN_HAVE_CUDA

} // namespace kiln
