//===- ProgressLine.h - `kiln compile`'s progress line ----------*- C++ -*-===//
//
// This file declares kiln::ProgressLine, the line `kiln compile` keeps on
// stderr while it works: "[kiln] compiling graph_1 (2/3): host compiler
// (12.3 s)". On a terminal it is redrawn in place from the first second of
// a compile on (shorter compiles show nothing); `--progress` shows it from
// the start, and where stderr is not a terminal prints one line per stage
// instead. Everything else written to stderr (diagnostics, KILN_LOGS) ends
// the line first: reportError and the diagnostic printer call
// endProgressLine().
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_PROGRESSLINE_H
#define KILN_TOOLS_PROGRESSLINE_H

#include "compiler/Pipeline.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace kiln {

/// The progress line of one compile. At most one is active at a time.
class ProgressLine {
public:
  enum class Mode {
    Off,      ///< nothing (stderr is not a terminal, no --progress).
    Terminal, ///< one line redrawn in place.
    Lines,    ///< one line per stage (--progress, stderr not a terminal).
  };
  /// The mode for this process: `forced` is --progress.
  static Mode modeFor(bool forced);

  /// `model` names the compile's whole-model stages; `delay` is how long a
  /// compile runs before a Terminal line appears.
  ProgressLine(Mode mode, std::string model, std::chrono::milliseconds delay);
  ProgressLine(const ProgressLine &) = delete;
  ProgressLine &operator=(const ProgressLine &) = delete;
  /// Ends the line.
  ~ProgressLine();

  /// The pipeline's hooks (CompileOptions::progress), pointing here.
  CompileProgress hooks();
  /// A stage begins (`graph` empty: the whole model's).
  void stage(const std::string &graph, const std::string &what);
  /// Ends the line until the next stage (before other stderr output).
  void pause();
  /// Ends the line for good (before the final report).
  void finish();

private:
  void run();
  /// Writes the line (mutex_ held).
  void draw();
  /// Clears a drawn Terminal line (mutex_ held).
  void clear();

  Mode mode_;
  std::string model_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string text_;
  int graphCount_ = 0;
  int graphIndex_ = 0;
  std::string lastGraph_;
  bool drawn_ = false, paused_ = false, done_ = false;
  std::thread ticker_;
};

/// Ends the active progress line, if any, until its next stage.
void endProgressLine();

} // namespace kiln

#endif // KILN_TOOLS_PROGRESSLINE_H
