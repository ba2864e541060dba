//===- ProgramTest.cpp - Tests of programs with graph breaks --------------===//
//
// This file implements the unit tests of the executor's structural nodes
// ("if", "loop", "eager", "call" through ProgramHooks), of values captured
// from above inside regions, of ProgramStats, of program.json/program.bin
// (round trips, corrupt and truncated files) and of the reference kernels
// the graph breaks need (non_zero, det).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/Executor.h"
#include "kiln/runtime/ProgramIO.h"
#include "kiln/runtime/Trace.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

using namespace kiln;

namespace {

ValueSignature sig(const std::string &name, DType dtype, Shape shape,
                   int valueId, std::vector<std::string> dimNames = {}) {
  ValueSignature s;
  s.name = name;
  s.dtype = dtype;
  s.shape = std::move(shape);
  s.dimNames = std::move(dimNames);
  s.valueId = valueId;
  return s;
}

ProgramNode node(const std::string &op, std::vector<int> operands,
                 std::vector<int> results, const std::string &name,
                 const std::string &sourceOp = "Op") {
  ProgramNode n;
  n.op = op;
  n.operands = std::move(operands);
  n.results = std::move(results);
  n.sourceName = name;
  n.sourceOp = sourceOp;
  return n;
}

ProgramRegion region(std::vector<int> arguments, std::vector<ProgramNode> nodes,
                     std::vector<int> results) {
  ProgramRegion r;
  r.arguments = std::move(arguments);
  r.nodes = std::move(nodes);
  r.results = std::move(results);
  return r;
}

std::string message(const Expected<NamedTensors> &r) {
  return r ? std::string() : r.status().message();
}

/// y = if c then relu(x) else neg(x); x: f32[3], c: bool[].
Program ifProgram() {
  Program p;
  p.numValues = 5;
  p.inputs = {sig("c", DType::Bool, {}, 0), sig("x", DType::F32, {3}, 1)};
  ProgramNode n = node("if", {0}, {4}, "If_0", "If");
  n.regions.push_back(
      region({}, {node("relu", {1}, {2}, "relu", "Relu")}, {2}));
  n.regions.push_back(region({}, {node("neg", {1}, {3}, "neg", "Neg")}, {3}));
  p.nodes.push_back(std::move(n));
  p.outputs = {sig("y", DType::F32, {3}, 4)};
  return p;
}

/// acc, steps = loop(M, cond, acc0) { acc += x; scan i } with x captured
/// from above. Values: 0 M, 1 cond, 2 acc0, 3 x, 4 i, 5 c, 6 acc,
/// 7 next, 8 final acc, 9 steps, 10 limit (constant), 11 c_out.
/// With `condLimit`, the body yields c_out = i < limit.
Program loopProgram(bool condLimit) {
  Program p;
  p.numValues = 12;
  p.inputs = {sig("M", DType::I64, {}, 0), sig("cond", DType::Bool, {}, 1),
              sig("acc0", DType::F32, {2}, 2), sig("x", DType::F32, {2}, 3)};
  p.constants[10] = Tensor::scalar<int64_t>(2);
  ProgramNode loop = node("loop", {0, 1, 2}, {8, 9}, "Loop_0", "Loop");
  std::vector<ProgramNode> body = {node("add", {6, 3}, {7}, "acc_add", "Add")};
  int condOut = 5;
  if (condLimit) {
    body.push_back(node("less", {4, 10}, {11}, "keep_going", "Less"));
    condOut = 11;
  }
  loop.regions.push_back(region({4, 5, 6}, std::move(body), {condOut, 7, 4}));
  loop.attrs.set("scan_dtypes",
                 std::vector<int64_t>{static_cast<int64_t>(DType::I64)});
  p.nodes.push_back(std::move(loop));
  p.outputs = {sig("acc", DType::F32, {2}, 8),
               sig("steps", DType::I64, {-1}, 9)};
  return p;
}

NamedTensors loopInputs(int64_t m, bool cond) {
  return {{"M", Tensor::scalar<int64_t>(m)},
          {"cond", Tensor::scalar<bool>(cond)},
          {"acc0", Tensor::fromVector<float>({1, 2}, {2})},
          {"x", Tensor::fromVector<float>({10, 20}, {2})}};
}

std::string tempDir(const std::string &name) {
  std::string dir = strCat("/tmp/kiln-program-test-", getpid(), "-", name);
  std::filesystem::remove_all(dir);
  return dir;
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool sameBits(double a, double b) {
  uint64_t x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  return x == y;
}

void checkSameNodes(const std::vector<ProgramNode> &a,
                    const std::vector<ProgramNode> &b);

void checkSameAttrs(const Attributes &a, const Attributes &b) {
  REQUIRE(a.all().size() == b.all().size());
  for (const auto &[name, value] : a.all()) {
    INFO("attribute " << name);
    REQUIRE(b.has(name));
    const AttrValue &other = b.all().at(name);
    REQUIRE(value.index() == other.index());
    if (auto *d = std::get_if<double>(&value)) {
      CHECK(sameBits(*d, std::get<double>(other)));
    } else if (auto *ds = std::get_if<std::vector<double>>(&value)) {
      const auto &os = std::get<std::vector<double>>(other);
      REQUIRE(ds->size() == os.size());
      for (size_t i = 0; i < ds->size(); ++i)
        CHECK(sameBits((*ds)[i], os[i]));
    } else if (auto *t = std::get_if<Tensor>(&value)) {
      const Tensor &o = std::get<Tensor>(other);
      REQUIRE(t->defined() == o.defined());
      if (t->defined()) {
        CHECK(t->typeString() == o.typeString());
        CHECK(t->toDoubleVector() == o.toDoubleVector());
      }
    } else if (auto *i = std::get_if<int64_t>(&value)) {
      CHECK(*i == std::get<int64_t>(other));
    } else if (auto *str = std::get_if<std::string>(&value)) {
      CHECK(*str == std::get<std::string>(other));
    } else if (auto *is = std::get_if<std::vector<int64_t>>(&value)) {
      CHECK(*is == std::get<std::vector<int64_t>>(other));
    } else if (auto *t = std::get_if<DType>(&value)) {
      CHECK(*t == std::get<DType>(other));
    }
  }
}

void checkSameNodes(const std::vector<ProgramNode> &a,
                    const std::vector<ProgramNode> &b) {
  REQUIRE(a.size() == b.size());
  for (size_t n = 0; n < a.size(); ++n) {
    INFO("node " << n << " " << a[n].sourceName);
    CHECK(a[n].op == b[n].op);
    CHECK(a[n].sourceName == b[n].sourceName);
    CHECK(a[n].sourceOp == b[n].sourceOp);
    CHECK(a[n].operands == b[n].operands);
    CHECK(a[n].results == b[n].results);
    checkSameAttrs(a[n].attrs, b[n].attrs);
    REQUIRE(a[n].regions.size() == b[n].regions.size());
    for (size_t r = 0; r < a[n].regions.size(); ++r) {
      CHECK(a[n].regions[r].arguments == b[n].regions[r].arguments);
      CHECK(a[n].regions[r].results == b[n].regions[r].results);
      checkSameNodes(a[n].regions[r].nodes, b[n].regions[r].nodes);
    }
  }
}

void checkSameSignatures(const std::vector<ValueSignature> &a,
                         const std::vector<ValueSignature> &b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].dtype == b[i].dtype);
    CHECK(a[i].shape == b[i].shape);
    CHECK(a[i].dimNames == b[i].dimNames);
    CHECK(a[i].valueId == b[i].valueId);
    CHECK(a[i].anyRank == b[i].anyRank);
  }
}

} // namespace

TEST_CASE("if runs the branch its condition selects", "[program]") {
  Program p = ifProgram();
  Tensor x = Tensor::fromVector<float>({-1, 0, 2}, {3});
  ProgramStats stats;
  auto yes = runProgram(p, {{"c", Tensor::scalar<bool>(true)}, {"x", x}}, {},
                        nullptr, &stats);
  INFO(message(yes));
  REQUIRE(yes.isOk());
  CHECK((*yes)[0].second.toDoubleVector() == std::vector<double>{0, 0, 2});
  auto no = runProgram(p, {{"c", Tensor::scalar<bool>(false)}, {"x", x}}, {},
                       nullptr, &stats);
  REQUIRE(no.isOk());
  CHECK((*no)[0].second.toDoubleVector() == std::vector<double>{1, 0, -2});
  CHECK(stats.branches == 2);
  CHECK(stats.eagerOps == 2); // One kernel per run (see ProgramStats).
  CHECK(stats.graphCalls == 0);
}

TEST_CASE("if errors name the node and the branch", "[program]") {
  Program p = ifProgram();
  // A condition with two elements.
  p.inputs[0].shape = {2};
  auto two = runProgram(p, {{"c", Tensor::fromVector<bool>({true, false}, {2})},
                            {"x", Tensor::empty(DType::F32, {3})}});
  REQUIRE(!two);
  CHECK_THAT(two.status().message(),
             Catch::StartsWith("node 'If_0' (If, kiln.if): the condition "
                               "must hold exactly one bool, got bool[2]"));
  // A failing op inside the then branch.
  p = ifProgram();
  p.numValues = 6;
  p.inputs.push_back(sig("z", DType::F32, {2}, 5));
  p.nodes[0].regions[0].nodes[0] = node("add", {1, 5}, {2}, "bad", "Add");
  auto bad = runProgram(p, {{"c", Tensor::scalar<bool>(true)},
                            {"x", Tensor::empty(DType::F32, {3})},
                            {"z", Tensor::empty(DType::F32, {2})}});
  REQUIRE(!bad);
  CHECK_THAT(bad.status().message(),
             Catch::StartsWith("node 'If_0' (If, kiln.if) then branch: node "
                               "'bad' (Add, kiln.add): "));
}

TEST_CASE("loop carries values and stacks scan outputs", "[program]") {
  Program p = loopProgram(false);
  ProgramStats stats;
  auto r = runProgram(p, loopInputs(3, true), {}, nullptr, &stats);
  INFO(message(r));
  REQUIRE(r.isOk());
  CHECK((*r)[0].second.toDoubleVector() == std::vector<double>{31, 62});
  CHECK((*r)[1].second.shape() == Shape{3});
  CHECK((*r)[1].second.toIntVector() == std::vector<int64_t>{0, 1, 2});
  CHECK(stats.loopIterations == 3);
  CHECK(stats.eagerOps == 3);
}

TEST_CASE("a traced program has a span per op the runtime runs",
          "[program][trace]") {
  Program p = loopProgram(false);
  ProgramStats stats;
  Trace trace;
  auto r =
      runProgram(p, loopInputs(3, true), {}, nullptr, &stats, false, &trace);
  INFO(message(r));
  REQUIRE(r.isOk());
  std::vector<TraceEvent> spans = trace.events();
  REQUIRE(static_cast<int64_t>(spans.size()) == stats.eagerOps);
  for (const TraceEvent &e : spans) {
    CHECK(e.category == "eager");
    CHECK(e.name.rfind("kiln.", 0) == 0);
    CHECK(e.durationUs >= 0);
  }
}

TEST_CASE("loop that runs zero times", "[program]") {
  Program p = loopProgram(false);
  for (auto [m, cond] : {std::pair<int64_t, bool>{0, true}, {5, false}}) {
    auto r = runProgram(p, loopInputs(m, cond));
    INFO(message(r));
    REQUIRE(r.isOk());
    CHECK((*r)[0].second.toDoubleVector() == std::vector<double>{1, 2});
    CHECK((*r)[1].second.typeString() == "i64[0]");
  }
  // Without scan_dtypes, a zero-trip loop cannot type its scan output.
  p.nodes[0].attrs = Attributes();
  auto r = runProgram(p, loopInputs(0, true));
  REQUIRE(!r);
  CHECK_THAT(r.status().message(),
             Catch::Contains("node 'Loop_0' (Loop, kiln.loop)") &&
                 Catch::Contains("scan_dtypes"));
}

TEST_CASE("loop stops when the body's condition turns false", "[program]") {
  Program p = loopProgram(true);
  ProgramStats stats;
  auto r = runProgram(p, loopInputs(INT64_MAX, true), {}, nullptr, &stats);
  INFO(message(r));
  REQUIRE(r.isOk());
  // Iterations 0, 1, 2 run; iteration 2 yields 2 < 2 = false.
  CHECK(stats.loopIterations == 3);
  CHECK((*r)[0].second.toDoubleVector() == std::vector<double>{31, 62});
  CHECK((*r)[1].second.toIntVector() == std::vector<int64_t>{0, 1, 2});
  // The trip count still bounds it.
  auto r1 = runProgram(p, loopInputs(1, true));
  REQUIRE(r1.isOk());
  CHECK((*r1)[1].second.toIntVector() == std::vector<int64_t>{0});
}

TEST_CASE("loop errors", "[program]") {
  // A scan value whose shape changes between iterations: scan the carried
  // value of a body that concatenates.
  Program p;
  p.numValues = 9;
  p.inputs = {sig("M", DType::I64, {}, 0), sig("cond", DType::Bool, {}, 1),
              sig("v0", DType::F32, {-1}, 2)};
  ProgramNode loop = node("loop", {0, 1, 2}, {7, 8}, "grow", "Loop");
  ProgramNode cat = node("concat", {5, 5}, {6}, "cat", "Concat");
  cat.attrs.set("axis", int64_t(0));
  loop.regions.push_back(region({3, 4, 5}, {cat}, {4, 6, 6}));
  loop.attrs.set("scan_dtypes", std::vector<int64_t>{0});
  p.nodes.push_back(loop);
  p.outputs = {sig("v", DType::F32, {-1}, 7),
               sig("all", DType::F32, {-1, -1}, 8)};
  NamedTensors in = {{"M", Tensor::scalar<int64_t>(3)},
                     {"cond", Tensor::scalar<bool>(true)},
                     {"v0", Tensor::fromVector<float>({1}, {1})}};
  auto r = runProgram(p, in);
  REQUIRE(!r);
  CHECK_THAT(r.status().message(),
             Catch::StartsWith("node 'grow' (Loop, kiln.loop) body (iteration "
                               "1): scan output 0 is f32[4] but was f32[2]"));
  // One iteration is fine.
  in[0].second = Tensor::scalar<int64_t>(1);
  auto one = runProgram(p, in);
  INFO(message(one));
  REQUIRE(one.isOk());
  CHECK((*one)[1].second.shape() == Shape{1, 2});

  // A trip count with two elements.
  Program q = loopProgram(false);
  q.inputs[0].shape = {2};
  NamedTensors bad = loopInputs(1, true);
  bad[0].second = Tensor::fromVector<int64_t>({1, 2}, {2});
  auto b = runProgram(q, bad);
  REQUIRE(!b);
  CHECK_THAT(b.status().message(),
             Catch::Contains("node 'Loop_0'") &&
                 Catch::Contains("trip count must hold exactly one"));
}

TEST_CASE("eager regions bind their operands and count", "[program]") {
  // idx = eager(m) { non_zero(a) }, then a top-level neg reads x.
  Program p;
  p.numValues = 6;
  p.inputs = {sig("m", DType::Bool, {4}, 0), sig("x", DType::F32, {1}, 4)};
  ProgramNode e = node("eager", {0}, {3}, "nz_break", "NonZero");
  e.attrs.set("reason", std::string("data-dependent-shape"));
  e.attrs.set("detail", std::string("output #0 is i64[1, ?]"));
  e.attrs.set("hint", std::string(""));
  e.regions.push_back(
      region({1}, {node("non_zero", {1}, {2}, "nz", "NonZero")}, {2}));
  p.nodes.push_back(e);
  p.nodes.push_back(node("neg", {4}, {5}, "neg", "Neg"));
  p.outputs = {sig("idx", DType::I64, {1, -1}, 3),
               sig("y", DType::F32, {1}, 5)};
  ProgramStats stats;
  auto r = runProgram(
      p,
      {{"m", Tensor::fromVector<bool>({false, true, false, true}, {4})},
       {"x", Tensor::fromVector<float>({1}, {1})}},
      {}, nullptr, &stats);
  INFO(message(r));
  REQUIRE(r.isOk());
  CHECK((*r)[0].second.shape() == Shape{1, 2});
  CHECK((*r)[0].second.toIntVector() == std::vector<int64_t>{1, 3});
  CHECK(stats.eagerRegions == 1);
  CHECK(stats.eagerOps == 2);
  CHECK(stats.eagerSeconds >= 0);

  // An error inside names both nodes.
  p.nodes[0].regions[0].nodes[0].op = "no_such_op";
  auto bad = runProgram(p, {{"m", Tensor::empty(DType::Bool, {4})},
                            {"x", Tensor::empty(DType::F32, {1})}});
  REQUIRE(!bad);
  CHECK_THAT(bad.status().message(),
             Catch::StartsWith("node 'nz_break' (NonZero, kiln.eager) eager "
                               "region: node 'nz' (NonZero, kiln.no_such_op)"));
}

TEST_CASE("call nodes run compiled graphs through the hooks", "[program]") {
  // y = graph_0(x, w) ; z = relu(y) ; out = graph_1(z)
  Program p;
  p.numValues = 5;
  p.inputs = {sig("x", DType::F32, {2}, 0)};
  p.constants[1] = Tensor::fromVector<float>({1, -5}, {2});
  p.graphs = {"graph_0", "graph_1"};
  ProgramNode c0 = node("call", {0, 1}, {2}, "g0", "Add");
  c0.attrs.set("graph", int64_t(0));
  ProgramNode c1 = node("call", {3}, {4}, "g1", "Neg");
  c1.attrs.set("graph", int64_t(1));
  p.nodes = {c0, node("relu", {2}, {3}, "relu", "Relu"), c1};
  p.outputs = {sig("out", DType::F32, {2}, 4)};

  std::vector<int> called;
  ProgramHooks hooks;
  hooks.callGraph =
      [&](int index,
          const std::vector<Tensor> &inputs) -> Expected<std::vector<Tensor>> {
    called.push_back(index);
    std::vector<Tensor> out;
    if (index == 0) {
      REQUIRE(inputs.size() == 2);
      std::vector<Tensor> r(1);
      Status s = Dispatcher::global().call("add", inputs, {}, r);
      REQUIRE(s.isOk());
      return r;
    }
    REQUIRE(inputs.size() == 1);
    std::vector<Tensor> r(1);
    Status s = Dispatcher::global().call("neg", inputs, {}, r);
    REQUIRE(s.isOk());
    return r;
  };
  ProgramStats stats;
  auto r = runProgram(p, {{"x", Tensor::fromVector<float>({1, 2}, {2})}}, {},
                      &hooks, &stats);
  INFO(message(r));
  REQUIRE(r.isOk());
  CHECK((*r)[0].second.toDoubleVector() == std::vector<double>{-2, 0});
  CHECK(called == std::vector<int>{0, 1});
  CHECK(stats.graphCalls == 2);
  CHECK(stats.graphSeconds >= 0);
  CHECK(stats.eagerOps == 1);

  // No hooks.
  auto none = runProgram(p, {{"x", Tensor::empty(DType::F32, {2})}});
  REQUIRE(!none);
  CHECK_THAT(none.status().message(),
             Catch::StartsWith("node 'g0' (Add, kiln.call): compiled graph "
                               "'graph_0' called without a runner"));
  // A runner that returns the wrong number of outputs, or fails.
  ProgramHooks wrong;
  wrong.callGraph =
      [](int, const std::vector<Tensor> &) -> Expected<std::vector<Tensor>> {
    return std::vector<Tensor>{};
  };
  auto w = runProgram(p, {{"x", Tensor::empty(DType::F32, {2})}}, {}, &wrong);
  REQUIRE(!w);
  CHECK_THAT(w.status().message(),
             Catch::Contains("compiled graph 'graph_0' returned 0 results, "
                             "expected 1"));
  ProgramHooks failing;
  failing.callGraph =
      [](int, const std::vector<Tensor> &) -> Expected<std::vector<Tensor>> {
    return Status::error("boom");
  };
  auto f = runProgram(p, {{"x", Tensor::empty(DType::F32, {2})}}, {}, &failing);
  REQUIRE(!f);
  CHECK(f.status().message() ==
        "node 'g0' (Add, kiln.call): compiled graph 'graph_0': boom");
  // A graph index out of range.
  p.nodes[0].attrs.set("graph", int64_t(7));
  auto oob = runProgram(p, {{"x", Tensor::empty(DType::F32, {2})}}, {}, &hooks);
  REQUIRE(!oob);
  CHECK_THAT(oob.status().message(), Catch::Contains("'graph'"));
}

TEST_CASE("values captured from above survive a loop and nested regions",
          "[program]") {
  // x is read only inside an if nested in a loop body, and by nothing after:
  // early release must keep it until the loop is done.
  // Values: 0 M, 1 x, 2 i, 3 c, 4 acc, 5 acc0(const), 6 inner add, 7 final,
  // 8 flag(const true), 9 if result.
  Program p;
  p.numValues = 10;
  p.inputs = {sig("M", DType::I64, {}, 0), sig("x", DType::F32, {2}, 1)};
  p.constants[5] = Tensor::fromVector<float>({0, 0}, {2});
  p.constants[8] = Tensor::scalar<bool>(true);
  ProgramNode inner = node("if", {8}, {9}, "If_in", "If");
  inner.regions.push_back(
      region({}, {node("add", {4, 1}, {6}, "add", "Add")}, {6}));
  inner.regions.push_back(region({}, {}, {4}));
  ProgramNode loop = node("loop", {0, 8, 5}, {7}, "Loop_out", "Loop");
  loop.regions.push_back(region({2, 3, 4}, {inner}, {3, 9}));
  p.nodes.push_back(loop);
  p.outputs = {sig("y", DType::F32, {2}, 7)};
  auto r = runProgram(p, {{"M", Tensor::scalar<int64_t>(4)},
                          {"x", Tensor::fromVector<float>({1, 2}, {2})}});
  INFO(message(r));
  REQUIRE(r.isOk());
  CHECK((*r)[0].second.toDoubleVector() == std::vector<double>{4, 8});
}

TEST_CASE("programs round-trip through program.json and program.bin",
          "[program]") {
  // The loop program plus an if whose branch uses constant_of_shape with a
  // tensor attribute, and a node carrying every attribute kind.
  Program p = loopProgram(true);
  p.numValues = 16;
  p.inputs.push_back(sig("shape", DType::I64, {1}, 12, {"n"}));
  p.inputs.push_back(sig("flag", DType::Bool, {}, 13));
  ProgramNode fill = node("constant_of_shape", {12}, {14}, "fill", "COS");
  fill.attrs.set("value", Tensor::scalar<double>(0.1));
  ProgramNode branch = node("if", {13}, {15}, "If_0", "If");
  branch.regions.push_back(region({}, {fill}, {14}));
  branch.regions.push_back(region({}, {}, {14}));
  p.nodes.push_back(branch);
  p.outputs.push_back(sig("filled", DType::F64, {-1}, 15, {"n"}));
  p.graphs = {"graph_0"};

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  double otherNan;
  uint64_t bits = 0xfff0000000000123ull;
  std::memcpy(&otherNan, &bits, 8);
  Program attrs = p;
  ProgramNode all = node("dummy", {}, {}, "every kind");
  all.attrs.set("i", int64_t(-9007199254740993));
  all.attrs.set("f", 0.1);
  all.attrs.set("s", std::string("quote \" and \n newline"));
  all.attrs.set("is", std::vector<int64_t>{INT64_MIN, 0, INT64_MAX});
  all.attrs.set("fs", std::vector<double>{nan, inf, -inf, -0.0, 1.0 / 3, 5e-324,
                                          1.7976931348623157e308, otherNan,
                                          1e20, -2.5});
  all.attrs.set("t", DType::BF16);
  all.attrs.set("tensor", Tensor::fromVector<int32_t>({1, 2, 3}, {3, 1}));
  all.attrs.set("absent", Tensor());
  all.attrs.set("f16", Tensor::fromVector<Half>({Half(1.5f)}, {1}));
  attrs.nodes.push_back(all);
  // An output whose rank the branch taken decides ("any_rank").
  ValueSignature anyRank = sig("any_rank", DType::F32, {}, 15);
  anyRank.anyRank = true;
  attrs.outputs.push_back(anyRank);

  std::string dir = tempDir("roundtrip");
  Status w = writeProgramFiles(attrs, dir);
  INFO(w.message());
  REQUIRE(w.isOk());
  auto back = readProgramFiles(dir);
  INFO((back ? std::string() : back.status().message()));
  REQUIRE(back.isOk());
  CHECK(back->numValues == attrs.numValues);
  CHECK(back->graphs == attrs.graphs);
  checkSameSignatures(back->inputs, attrs.inputs);
  checkSameSignatures(back->weights, attrs.weights);
  checkSameSignatures(back->outputs, attrs.outputs);
  REQUIRE(back->constants.size() == attrs.constants.size());
  for (const auto &[id, t] : attrs.constants) {
    REQUIRE(back->constants.count(id));
    CHECK(back->constants.at(id).typeString() == t.typeString());
    CHECK(back->constants.at(id).toDoubleVector() == t.toDoubleVector());
  }
  checkSameNodes(back->nodes, attrs.nodes);
  // Tensor bytes are 64-byte aligned in program.bin.
  std::string json = readFile(dir + "/program.json");
  CHECK(json.find("\"offset\": 64") != std::string::npos);
  CHECK(json.find("\"any_rank\": true") != std::string::npos);

  // The runnable program gives the same results after the round trip.
  std::string dir2 = tempDir("roundtrip-run");
  REQUIRE(writeProgramFiles(p, dir2).isOk());
  auto q = readProgramFiles(dir2);
  REQUIRE(q.isOk());
  NamedTensors in = loopInputs(INT64_MAX, true);
  in.push_back({"shape", Tensor::fromVector<int64_t>({3}, {1})});
  in.push_back({"flag", Tensor::scalar<bool>(true)});
  auto a = runProgram(p, in);
  auto b = runProgram(*q, in);
  INFO(message(a) << message(b));
  REQUIRE(a.isOk());
  REQUIRE(b.isOk());
  REQUIRE(a->size() == 3);
  REQUIRE(b->size() == 3);
  for (size_t i = 0; i < a->size(); ++i) {
    CHECK((*a)[i].first == (*b)[i].first);
    CHECK((*a)[i].second.typeString() == (*b)[i].second.typeString());
    CHECK((*a)[i].second.toDoubleVector() == (*b)[i].second.toDoubleVector());
  }
  CHECK((*b)[2].second.toDoubleVector() == std::vector<double>{0.1, 0.1, 0.1});
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(dir2);
}

TEST_CASE("corrupt program files are errors naming the file", "[program]") {
  Program p = loopProgram(false);
  p.constants[10] = Tensor::fromVector<float>({1, 2, 3, 4}, {4});
  std::string dir = tempDir("corrupt");
  REQUIRE(writeProgramFiles(p, dir).isOk());
  const std::string jsonPath = dir + "/program.json";
  const std::string binPath = dir + "/program.bin";
  const std::string json = readFile(jsonPath);
  const std::string bin = readFile(binPath);
  REQUIRE(readProgramFiles(dir).isOk());

  auto expectError = [&](const std::string &what,
                         const std::vector<std::string> &parts) {
    auto r = readProgramFiles(dir);
    INFO(what);
    REQUIRE(!r);
    INFO(r.status().message());
    for (const std::string &part : parts)
      CHECK(r.status().message().find(part) != std::string::npos);
  };
  auto replace = [&](const std::string &from, const std::string &to) {
    std::string text = json;
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    writeFile(jsonPath, text);
  };

  // A truncated program.bin: the constant lies past its end.
  writeFile(binPath, bin.substr(0, 8));
  expectError("truncated bin", {binPath, "past the end", "constants[0]"});
  writeFile(binPath, bin);

  writeFile(jsonPath, json.substr(0, json.size() / 2));
  expectError("truncated json", {jsonPath, "not valid JSON"});
  writeFile(jsonPath, "[1, 2]");
  expectError("not an object", {jsonPath, "not a JSON object"});
  replace("\"dtype\": \"f32\"", "\"dtype\": \"f128\"");
  expectError("unknown dtype", {jsonPath, "unknown dtype 'f128'"});
  replace("\"kind\": \"ints\"", "\"kind\": \"complex\"");
  expectError("unknown kind",
              {jsonPath, "nodes[0] ('Loop_0')", "attribute 'scan_dtypes'",
               "unknown attribute kind 'complex'"});
  replace("\"num_values\": 12", "\"num_values\": 5");
  expectError("ids out of range", {jsonPath, "not a value id"});
  replace("\"version\": 1", "\"version\": 99");
  expectError("version", {jsonPath, "format version 99"});
  replace("\"operands\": [", "\"operands\": [\"x\", ");
  expectError("operand type", {jsonPath, "must be an integer"});
  replace("\"bytes\": 16", "\"bytes\": 12");
  expectError("bytes", {jsonPath, "holds 12 bytes but f32[4] needs 16"});
  {
    // The constant's shape [4] -> a shape whose size overflows.
    std::string text = json;
    size_t at = text.find("\"shape\"", text.find("\"constants\""));
    size_t end = text.find(']', at);
    REQUIRE(end != std::string::npos);
    text.replace(at, end + 1 - at, "\"shape\": [4611686018427387904, 8]");
    writeFile(jsonPath, text);
  }
  expectError("huge shape",
              {jsonPath, "larger than the limit of 2^40 elements"});
  // Deeply nested regions are rejected, not recursed into.
  std::string deep = "{\"op\": \"x\"}";
  for (int i = 0; i < 100; ++i)
    deep = strCat("{\"op\": \"if\", \"regions\": [{\"nodes\": [", deep, "]}]}");
  writeFile(jsonPath, strCat("{\"format\": \"kiln-program\", \"version\": 1, "
                             "\"num_values\": 0, \"nodes\": [",
                             deep, "]}"));
  expectError("deep", {jsonPath, "nested more than"});

  writeFile(jsonPath, json);
  std::filesystem::remove(binPath);
  expectError("missing bin", {binPath, "cannot open"});
  std::filesystem::remove(jsonPath);
  expectError("missing json", {jsonPath, "cannot open"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("non_zero lists the indices of non-zero elements", "[program]") {
  Dispatcher &d = Dispatcher::global();
  std::vector<Tensor> out(1);
  // test_nonzero_example.
  REQUIRE(d.call("non_zero",
                 {Tensor::fromVector<bool>({true, false, true, true}, {2, 2})},
                 {}, out)
              .isOk());
  CHECK(out[0].typeString() == "i64[2, 3]");
  CHECK(out[0].toIntVector() == std::vector<int64_t>{0, 1, 1, 0, 0, 1});
  REQUIRE(d.call("non_zero",
                 {Tensor::fromVector<float>({0, 1.5f, 0, -2, 0, 0}, {1, 2, 3})},
                 {}, out)
              .isOk());
  CHECK(out[0].typeString() == "i64[3, 2]");
  CHECK(out[0].toIntVector() == std::vector<int64_t>{0, 0, 0, 1, 1, 0});
  REQUIRE(d.call("non_zero", {Tensor::empty(DType::I32, {3})}, {}, out).isOk());
  CHECK(out[0].typeString() == "i64[1, 0]");
  REQUIRE(d.call("non_zero", {Tensor::scalar<int64_t>(4)}, {}, out).isOk());
  CHECK(out[0].typeString() == "i64[0, 1]");
  // A strided view.
  Tensor m = Tensor::fromVector<Half>(
                 {Half(0.f), Half(1.f), Half(2.f), Half(0.f)}, {2, 2})
                 .permute({1, 0});
  REQUIRE(d.call("non_zero", {m}, {}, out).isOk());
  CHECK(out[0].toIntVector() == std::vector<int64_t>{0, 1, 1, 0});
}

TEST_CASE("det computes determinants by LU", "[program]") {
  Dispatcher &d = Dispatcher::global();
  std::vector<Tensor> out(1);
  // det [[2, -1, 0], [1, 3, 2], [0, 1, 4]] = 2(12 - 2) + 1(4 - 0) = 24.
  REQUIRE(
      d.call("det",
             {Tensor::fromVector<double>({2, -1, 0, 1, 3, 2, 0, 1, 4}, {3, 3})},
             {}, out)
          .isOk());
  CHECK(out[0].typeString() == "f64[]");
  CHECK(out[0].getDouble(0) == Approx(24).epsilon(1e-12));
  // A zero leading pivot: [[0, 1, 2], [3, 4, 5], [6, 7, 9]] = -3.
  REQUIRE(
      d.call("det",
             {Tensor::fromVector<float>({0, 1, 2, 3, 4, 5, 6, 7, 9}, {3, 3})},
             {}, out)
          .isOk());
  CHECK(out[0].getDouble(0) == Approx(-3).epsilon(1e-6));
  // Batched [2, 2, 2, 2]: diag, swap, singular, general.
  REQUIRE(d.call("det",
                 {Tensor::fromVector<float>(
                     {2, 0, 0, 3, 0, 1, 1, 0, 1, 2, 2, 4, 1, 2, 3, 4},
                     {2, 2, 2, 2})},
                 {}, out)
              .isOk());
  CHECK(out[0].typeString() == "f32[2, 2]");
  std::vector<double> dets = out[0].toDoubleVector();
  REQUIRE(dets.size() == 4);
  CHECK(dets[0] == Approx(6));
  CHECK(dets[1] == Approx(-1));
  CHECK(dets[2] == 0);
  CHECK(dets[3] == Approx(-2));
  // bf16, an empty matrix, and errors.
  REQUIRE(d.call("det",
                 {Tensor::fromVector<BFloat16>({BFloat16(1.f), BFloat16(2.f),
                                                BFloat16(3.f), BFloat16(4.f)},
                                               {2, 2})},
                 {}, out)
              .isOk());
  CHECK(out[0].getDouble(0) == -2);
  REQUIRE(d.call("det", {Tensor::empty(DType::F32, {0, 0})}, {}, out).isOk());
  CHECK(out[0].getDouble(0) == 1);
  Status s = d.call("det", {Tensor::empty(DType::F32, {2, 3})}, {}, out);
  REQUIRE(!s);
  CHECK_THAT(s.message(), Catch::Contains("square"));
  s = d.call("det", {Tensor::empty(DType::F32, {3})}, {}, out);
  REQUIRE(!s);
  CHECK_THAT(s.message(), Catch::Contains("[..., M, M]"));
}
