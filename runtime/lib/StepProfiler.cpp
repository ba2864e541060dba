//===- StepProfiler.cpp - Spans of a compiled graph's steps ---------------===//
//
// This file implements kiln::StepProfiler (StepProfiler.h). The hooks run
// inside model.so's run entry point, so they only note marks: the steady
// clock, or (when the wrapper passes a stream: a cuda package) a CUDA event
// recorded on that stream. finish() pairs each begin with its end and adds
// the spans; a CUDA event's time is the host time of the first event plus
// the device time since it, so the device spans sit inside the run's span
// on the host (the device runs a step after the host enqueues it).
//
//===----------------------------------------------------------------------===//

#include "StepProfiler.h"

#include <unistd.h>

namespace kiln {

StepProfiler::StepProfiler(Trace &trace) : trace_(trace) {
  hooks_.user = this;
  hooks_.begin = &StepProfiler::begin;
  hooks_.end = &StepProfiler::end;
}

void StepProfiler::begin(void *user, const kiln_model_step *step,
                         void *stream) {
  static_cast<StepProfiler *>(user)->note(step, stream, /*isBegin=*/true);
}

void StepProfiler::end(void *user, const kiln_model_step *step, void *stream) {
  static_cast<StepProfiler *>(user)->note(step, stream, /*isBegin=*/false);
}

void StepProfiler::note(const kiln_model_step *step, void *stream,
                        bool isBegin) {
  if (!step || !error_)
    return;
  Mark mark{step, isBegin, std::chrono::steady_clock::now(), 0};
  if (stream) {
    if (!firstEventUs_)
      firstEventUs_ = trace_.nowMicroseconds();
    Expected<size_t> event = events_.record(stream);
    if (!event) {
      error_ = event.status();
      return;
    }
    mark.event = *event;
  }
  marks_.push_back(mark);
}

Status StepProfiler::finish() {
  KILN_RETURN_IF_ERROR(error_);
  std::vector<double> deviceMs;
  if (events_.size()) {
    Expected<std::vector<double>> times = events_.millisecondsSinceFirst();
    if (!times)
      return times.status();
    deviceMs = times.take();
  }
  auto timeOf = [&](const Mark &m) {
    if (firstEventUs_ && m.event < deviceMs.size())
      return *firstEventUs_ + deviceMs[m.event] * 1e3;
    return trace_.microsecondsAt(m.time);
  };
  std::vector<TraceEvent> spans;
  int pid = static_cast<int>(getpid());
  int tid = Trace::threadId();
  for (size_t i = 0; i < marks_.size(); ++i) {
    const Mark &b = marks_[i];
    // Steps do not nest: a begin is followed by its end (none when the
    // step failed).
    if (!b.isBegin || i + 1 >= marks_.size() || marks_[i + 1].isBegin ||
        marks_[i + 1].step != b.step)
      continue;
    const Mark &e = marks_[i + 1];
    TraceEvent span;
    span.name = b.step->name ? b.step->name : "step";
    span.category = b.step->kind ? b.step->kind : "step";
    span.startUs = timeOf(b);
    span.durationUs = timeOf(e) - span.startUs;
    span.pid = pid;
    span.tid = tid;
    span.args.emplace_back("step", std::to_string(b.step->index));
    if (b.step->nodes && *b.step->nodes)
      span.args.emplace_back("nodes", b.step->nodes);
    if (firstEventUs_)
      span.args.emplace_back("clock", "cuda events");
    spans.push_back(std::move(span));
  }
  trace_.add(std::move(spans));
  return Status::ok();
}

} // namespace kiln
