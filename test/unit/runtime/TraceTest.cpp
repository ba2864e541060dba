//===- TraceTest.cpp - Tests of the trace of runs -------------------------===//
//
// This file implements the unit tests of kiln::Trace (kiln/runtime/Trace.h):
// spans from several threads, the Chrome trace JSON (complete events sorted
// by start, parents before children, negative times clamped, names
// escaped), writing it to a file and the error naming an unwritable one.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Trace.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace kiln;

namespace {

TraceEvent span(const std::string &name, const std::string &cat, double ts,
                double dur) {
  TraceEvent e;
  e.name = name;
  e.category = cat;
  e.startUs = ts;
  e.durationUs = dur;
  e.pid = 7;
  e.tid = Trace::threadId();
  return e;
}

} // namespace

TEST_CASE("Trace writes complete events sorted, parents first", "[trace]") {
  Trace trace;
  trace.add(span("fused_0", "kernel", 10, 5));
  TraceEvent run = span("pkg", "run", 10, 50);
  run.args.emplace_back("package", "out/pkg");
  trace.add(run);
  trace.add(span("early", "copy", -3, -1));
  std::string json = trace.toJson();
  size_t early = json.find("\"early\""), pkg = json.find("\"pkg\""),
         fused = json.find("\"fused_0\"");
  REQUIRE(early != std::string::npos);
  CHECK(early < pkg);
  CHECK(pkg < fused);
  CHECK(json.find("\"traceEvents\"") != std::string::npos);
  CHECK(json.find("\"ph\": \"X\"") != std::string::npos);
  CHECK(json.find("\"package\": \"out/pkg\"") != std::string::npos);
  CHECK(json.find("-3") == std::string::npos); // clamped to 0
  CHECK(trace.events().size() == 3);
}

TEST_CASE("Trace escapes names and takes spans from many threads", "[trace]") {
  Trace trace;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i)
        trace.add(span("node \"a\"\n", "eager", trace.nowMicroseconds(), 1));
    });
  for (std::thread &t : threads)
    t.join();
  CHECK(trace.events().size() == 400);
  std::string json = trace.toJson();
  CHECK(json.find("node \\\"a\\\"\\n") != std::string::npos);
  CHECK(Trace::threadId() == Trace::threadId());
}

TEST_CASE("Trace::writeJson writes the file or names it", "[trace]") {
  Trace trace;
  trace.add(span("pkg", "run", 0, 1));
  std::string path =
      "/tmp/kiln-trace-test-" + std::to_string(getpid()) + ".json";
  REQUIRE(trace.writeJson(path).isOk());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == trace.toJson());
  std::remove(path.c_str());
  Status bad = trace.writeJson("/nonexistent-dir/t.json");
  REQUIRE(!bad);
  CHECK_THAT(bad.message(), Catch::StartsWith("/nonexistent-dir/t.json: "));
}
