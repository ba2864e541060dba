//===- MemoryPlannerTest.cpp - Tests of the arena planner -----------------===//
//
// This file implements the Catch2 tests of codegen/MemoryPlanner: offsets are
// 64-byte aligned, buffers whose lifetimes overlap (inclusive: a step's
// inputs and outputs are live together) never share bytes, buffers with
// disjoint lifetimes reuse memory, the peak is what the buffers need, and
// pinned buffers (arena values handed between graphs) keep their offsets.
// A randomized check compares every pair of planned buffers. The prepared
// memory of load-time steps is planned the same way: what a run reads lives
// on, what only load-time steps read is reused.
//
//===----------------------------------------------------------------------===//

#include "codegen/MemoryPlanner.h"
#include "CodegenTestUtils.h"

#include <catch2/catch.hpp>

#include <random>

using namespace kiln;

namespace {

ArenaBuffer buffer(int64_t bytes, int first, int last) {
  ArenaBuffer b;
  b.bytes = bytes;
  b.first = first;
  b.last = last;
  return b;
}

/// True when two planned buffers overlap in time and in memory.
bool conflict(const ArenaBuffer &a, const ArenaBuffer &b) {
  bool time = a.first <= b.last && b.first <= a.last;
  bool space = a.offset < b.offset + alignBuffer(b.bytes) &&
               b.offset < a.offset + alignBuffer(a.bytes);
  return time && space && a.bytes > 0 && b.bytes > 0;
}

} // namespace

TEST_CASE("a step's input and output never share memory", "[codegen][memory]") {
  // Buffer 0 is read by step 1, which writes buffer 1: both live at step 1.
  std::vector<ArenaBuffer> bufs = {buffer(100, 0, 1), buffer(100, 1, 2)};
  int64_t peak = assignArenaOffsets(bufs);
  CHECK_FALSE(conflict(bufs[0], bufs[1]));
  CHECK(peak == 256);
  for (const ArenaBuffer &b : bufs)
    CHECK(b.offset % kBufferAlignment == 0);
}

TEST_CASE("buffers with disjoint lifetimes reuse memory", "[codegen][memory]") {
  std::vector<ArenaBuffer> bufs = {buffer(1000, 0, 1), buffer(64, 1, 2),
                                   buffer(1000, 2, 3)};
  int64_t peak = assignArenaOffsets(bufs);
  // Buffers 0 and 2 never live together: the peak is below their sum plus
  // the small one's.
  CHECK(peak < alignBuffer(1000) * 2 + 64);
  for (size_t i = 0; i < bufs.size(); ++i)
    for (size_t j = i + 1; j < bufs.size(); ++j)
      CHECK_FALSE(conflict(bufs[i], bufs[j]));
}

TEST_CASE("random lifetimes never overlap in memory", "[codegen][memory]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ArenaBuffer> bufs;
    int n = 1 + rng() % 30;
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      int first = rng() % 20, last = first + rng() % 6;
      int64_t bytes = (rng() % 5 == 0) ? 0 : 1 + rng() % 5000;
      bufs.push_back(buffer(bytes, first, last));
      total += alignBuffer(bytes);
    }
    int64_t peak = assignArenaOffsets(bufs);
    CHECK(peak <= total);
    for (const ArenaBuffer &b : bufs) {
      CHECK(b.offset % kBufferAlignment == 0);
      CHECK(b.offset + b.bytes <= peak);
    }
    for (size_t i = 0; i < bufs.size(); ++i)
      for (size_t j = i + 1; j < bufs.size(); ++j)
        if (conflict(bufs[i], bufs[j]))
          FAIL("buffers " << i << " and " << j << " overlap (trial " << trial
                          << ")");
  }
}

TEST_CASE("pinned buffers keep their offsets; the others fit around them",
          "[codegen][memory]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    // Pinned buffers (arena values chosen by another graph's plan): live
    // together from step 0 at disjoint offsets, dying at random steps.
    std::vector<ArenaBuffer> bufs;
    int64_t cursor = 0;
    int pinned = 1 + rng() % 5;
    for (int i = 0; i < pinned; ++i) {
      ArenaBuffer b = buffer(1 + rng() % 4000, 0, rng() % 15);
      cursor += kBufferAlignment * (rng() % 4);
      b.pinnedOffset = cursor;
      cursor += alignBuffer(b.bytes);
      bufs.push_back(b);
    }
    for (int i = 0, n = rng() % 25; i < n; ++i) {
      int first = rng() % 20;
      bufs.push_back(buffer(1 + rng() % 5000, first, first + rng() % 6));
    }
    int64_t peak = assignArenaOffsets(bufs);
    for (int i = 0; i < pinned; ++i)
      CHECK(bufs[i].offset == bufs[i].pinnedOffset);
    for (const ArenaBuffer &b : bufs)
      CHECK(b.offset + b.bytes <= peak);
    for (size_t i = 0; i < bufs.size(); ++i)
      for (size_t j = i + 1; j < bufs.size(); ++j)
        if (conflict(bufs[i], bufs[j]))
          FAIL("buffers " << i << " and " << j << " overlap (trial " << trial
                          << ")");
  }
}

TEST_CASE("prepared memory is reused after the last load-time reader",
          "[codegen][memory]") {
  // Three load-time kernels in a chain: a (read by b only), b (read by c
  // only), c (read by the run). c may take a's bytes, never b's; the run's
  // kernel is in the arena.
  auto fusion = [](const char *name, const char *in, const char *op,
                   bool loadTime) {
    return std::string("  %") + name + " = kiln.fusion \"" + name + "\" ins(" +
           in + " : tensor<64xf32>) kind(\"pointwise\")" +
           (loadTime ? " attributes {kiln.load_time}" : "") +
           " {\n  ^bb0(%v: tensor<64xf32>):\n    %r = kiln." + op +
           " %v : (tensor<64xf32>) -> tensor<64xf32>\n    kiln.yield %r : "
           "tensor<64xf32>\n  } -> (tensor<64xf32>)\n";
  };
  std::string text =
      "func.func @prepare(%x: tensor<64xf32>, %w: tensor<64xf32> "
      "{kiln.weight}) -> tensor<64xf32> {\n" +
      fusion("a", "%w", "exp", true) + fusion("b", "%a", "sin", true) +
      fusion("c", "%b", "cos", true) + fusion("d", "%c", "tanh", false) +
      "  return %d : tensor<64xf32>\n}\n";
  test::FusionModule m = test::parseModule(text);
  REQUIRE(m.module);
  auto graph = *m.module->getOps<mlir::func::FuncOp>().begin();
  mlir::FailureOr<MemoryPlan> plan = planMemory(graph);
  REQUIRE(mlir::succeeded(plan));
  std::vector<FusionOp> f = m.fusions();
  const BufferLocation &a = plan->at(f[0]->getResult(0)),
                       &b = plan->at(f[1]->getResult(0)),
                       &c = plan->at(f[2]->getResult(0));
  for (const BufferLocation *loc : {&a, &b, &c})
    CHECK(loc->kind == BufferKind::Prepared);
  CHECK(b.offset != a.offset);
  CHECK(c.offset != b.offset);
  CHECK(c.offset == a.offset);
  // Two 256-byte slots, not three.
  CHECK(plan->preparedBytes == 512);
  CHECK(plan->at(f[3]->getResult(0)).kind == BufferKind::Output);
}
