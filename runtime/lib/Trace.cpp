//===- Trace.cpp - The trace of runs and its Chrome/Perfetto JSON ---------===//
//
// This file implements kiln::Trace (kiln/runtime/Trace.h): the spans that
// profiled runs add, kept under a mutex, and the trace writer: the Chrome
// trace event format's JSON object form, {"traceEvents": [...]}, each span
// a complete event {"name", "cat", "ph": "X", "ts", "dur", "pid", "tid",
// "args"} with times in microseconds, written through a temporary file that
// is renamed into place. ui.perfetto.dev and chrome://tracing read it.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <unistd.h>

namespace kiln {

using Json = nlohmann::ordered_json;

Trace::Trace() : origin_(std::chrono::steady_clock::now()) {}

double Trace::microsecondsAt(std::chrono::steady_clock::time_point time) const {
  return std::chrono::duration<double, std::micro>(time - origin_).count();
}

double Trace::nowMicroseconds() const {
  return microsecondsAt(std::chrono::steady_clock::now());
}

int Trace::threadId() {
  static std::atomic<int> next{1};
  thread_local int id = next.fetch_add(1);
  return id;
}

void Trace::add(TraceEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

void Trace::add(std::vector<TraceEvent> events) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (TraceEvent &e : events)
    events_.push_back(std::move(e));
}

std::vector<TraceEvent> Trace::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

std::string Trace::toJson() const {
  std::vector<TraceEvent> sorted = events();
  // Parents first where two spans start together (Perfetto nests by
  // order): the longer one first.
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TraceEvent &a, const TraceEvent &b) {
                     if (a.startUs != b.startUs)
                       return a.startUs < b.startUs;
                     return a.durationUs > b.durationUs;
                   });
  // Nanosecond resolution is what the clocks give: no float noise.
  auto rounded = [](double us) {
    return std::round(std::max(us, 0.0) * 1e3) / 1e3;
  };
  Json list = Json::array();
  for (const TraceEvent &e : sorted) {
    Json args = Json::object();
    for (const auto &[key, value] : e.args)
      args[key] = value;
    // Negative times would only come from clock trouble: clamped.
    list.push_back(Json{{"name", e.name},
                        {"cat", e.category},
                        {"ph", "X"},
                        {"ts", rounded(e.startUs)},
                        {"dur", rounded(e.durationUs)},
                        {"pid", e.pid},
                        {"tid", e.tid},
                        {"args", std::move(args)}});
  }
  Json root{{"traceEvents", std::move(list)}, {"displayTimeUnit", "ms"}};
  // Invalid UTF-8 in a name (an ONNX node name is any bytes) is replaced,
  // not an exception.
  return root.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

Status Trace::writeJson(const std::string &path) const {
  static std::atomic<int> counter{0};
  std::string text = toJson();
  std::string tmp = strCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return Status::error(
          strCat(path, ": cannot write the trace (cannot open '", tmp, "')"));
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::error(
          strCat(path, ": writing the trace failed (disk full?)"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::error(
        strCat(path, ": cannot write the trace (renaming '", tmp, "' failed)"));
  }
  return Status::ok();
}

} // namespace kiln
