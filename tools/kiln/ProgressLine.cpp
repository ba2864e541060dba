//===- ProgressLine.cpp - `kiln compile`'s progress line ------------------===//
//
// This file implements kiln::ProgressLine (ProgressLine.h). A Terminal line
// is redrawn by a ticker thread every 100 ms ("\r" + the text + erase to the
// end of the line) so that the seconds count while one stage (the host
// compiler) runs; it is erased before anything else goes to stderr and when
// the compile ends. Lines mode prints each stage once, as it begins. The
// active line is registered globally so that endProgressLine() (called by
// reportError and the diagnostic printer) can end it.
//
//===----------------------------------------------------------------------===//

#include "ProgressLine.h"

#include <cstdio>
#include <unistd.h>

namespace kiln {

namespace {
std::mutex activeMutex;
ProgressLine *active = nullptr;
} // namespace

ProgressLine::Mode ProgressLine::modeFor(bool forced) {
  if (isatty(STDERR_FILENO))
    return Mode::Terminal;
  return forced ? Mode::Lines : Mode::Off;
}

ProgressLine::ProgressLine(Mode mode, std::string model,
                           std::chrono::milliseconds delay)
    : mode_(mode), model_(std::move(model)), delay_(delay),
      start_(std::chrono::steady_clock::now()) {
  if (mode_ == Mode::Off)
    return;
  {
    std::lock_guard<std::mutex> lock(activeMutex);
    active = this;
  }
  if (mode_ == Mode::Terminal)
    ticker_ = std::thread([this] { run(); });
}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::finish() {
  if (mode_ == Mode::Off)
    return;
  {
    std::lock_guard<std::mutex> lock(activeMutex);
    if (active == this)
      active = nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_)
      return;
    done_ = true;
    clear();
  }
  wake_.notify_all();
  if (ticker_.joinable())
    ticker_.join();
}

CompileProgress ProgressLine::hooks() {
  CompileProgress progress;
  if (mode_ == Mode::Off)
    return progress;
  progress.graphs = [this](int count) {
    std::lock_guard<std::mutex> lock(mutex_);
    graphCount_ = count;
  };
  progress.stage = [this](const std::string &graph, const std::string &what) {
    stage(graph, what);
  };
  progress.beforeLog = [this] { pause(); };
  return progress;
}

void ProgressLine::stage(const std::string &graph, const std::string &what) {
  if (mode_ == Mode::Off)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_)
    return;
  std::string subject = model_;
  if (!graph.empty()) {
    if (graph != lastGraph_) {
      lastGraph_ = graph;
      ++graphIndex_;
    }
    subject = graph;
    if (graphCount_ > 1)
      subject += " (" + std::to_string(graphIndex_) + "/" +
                 std::to_string(graphCount_) + ")";
  }
  text_ = "[kiln] compiling " + subject + ": " + what;
  paused_ = false;
  if (mode_ == Mode::Lines)
    draw();
}

void ProgressLine::pause() {
  if (mode_ == Mode::Off)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = true;
  clear();
}

void ProgressLine::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!done_) {
    wake_.wait_for(lock, std::chrono::milliseconds(100));
    if (done_)
      break;
    if (!paused_ && !text_.empty() &&
        std::chrono::steady_clock::now() - start_ >= delay_)
      draw();
  }
}

void ProgressLine::draw() {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  char elapsed[32];
  std::snprintf(elapsed, sizeof(elapsed), " (%.1f s)", seconds);
  if (mode_ == Mode::Lines) {
    std::fprintf(stderr, "%s%s\n", text_.c_str(), elapsed);
  } else {
    std::fprintf(stderr, "\r%s%s\033[K", text_.c_str(), elapsed);
    drawn_ = true;
  }
  std::fflush(stderr);
}

void ProgressLine::clear() {
  if (!drawn_)
    return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

void endProgressLine() {
  std::lock_guard<std::mutex> lock(activeMutex);
  if (active)
    active->pause();
}

} // namespace kiln
