//===- OnnxTracerTest.cpp - Unit tests of the ONNX tracer -----------------===//
//
// This file implements the Catch2 tests of compiler/onnx/: models built here
// with the ONNX protobuf classes are traced and the module is inspected
// (signature, attributes, ops, trace-time folding, weight parameters), bad
// inputs must give messages that name the file and the node, TensorProto
// files must read back, and, when the onnx wheel's backend node tests are
// installed, tracing all of them must never crash and must succeed for at
// least the number of tests known to trace.
//
//===----------------------------------------------------------------------===//

#include "compiler/onnx/OnnxTracer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#include "onnx/onnx_pb.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <string>
#include <vector>

using namespace kiln;

namespace {

std::string tempPath(const std::string &name) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/kiln-tracer-test-" + name;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

/// A model builder over onnx::ModelProto.
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto *graph;

  explicit ModelBuilder(int64_t opset = 17) {
    model.set_ir_version(8);
    model.set_producer_name("kiln-test");
    auto *imp = model.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("g");
  }
  static void setType(onnx::ValueInfoProto *vi, int32_t dtype,
                      const std::vector<int64_t> &dims) {
    auto *tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    auto *shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto *dim = shape->add_dim();
      if (d >= 0)
        dim->set_dim_value(d);
      else
        dim->set_dim_param("batch");
    }
  }
  void input(const std::string &name, const std::vector<int64_t> &dims,
             int32_t dtype = onnx::TensorProto::FLOAT) {
    auto *vi = graph->add_input();
    vi->set_name(name);
    setType(vi, dtype, dims);
  }
  void output(const std::string &name) { graph->add_output()->set_name(name); }
  void initializer(const std::string &name, const std::vector<int64_t> &dims,
                   const std::vector<float> &values) {
    auto *t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      t->add_dims(d);
    for (float v : values)
      t->add_float_data(v);
  }
  onnx::NodeProto *node(const std::string &op,
                        const std::vector<std::string> &inputs,
                        const std::vector<std::string> &outputs,
                        const std::string &name = "") {
    auto *n = graph->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto &i : inputs)
      n->add_input(i);
    for (const auto &o : outputs)
      n->add_output(o);
    return n;
  }
  std::string save(const std::string &name) {
    std::string path = tempPath(name);
    writeFile(path, model.SerializeAsString());
    return path;
  }
};

mlir::func::FuncOp mainOf(mlir::ModuleOp module) {
  return module.lookupSymbol<mlir::func::FuncOp>("main");
}

std::vector<std::string> opNames(mlir::func::FuncOp fn) {
  std::vector<std::string> names;
  for (mlir::Operation &op : fn.getBody().front())
    names.push_back(op.getName().getStringRef().str());
  return names;
}

} // namespace

TEST_CASE("tracer: signature, attributes and locations", "[onnx]") {
  ModelBuilder mb;
  mb.input("x", {-1, 4});
  mb.initializer("b", {4}, {1, 2, 3, 4});
  mb.node("Add", {"x", "b"}, {"s"}, "add0");
  mb.node("Relu", {"s"}, {"y"});
  mb.output("y");
  std::string path = mb.save("basic.onnx");

  mlir::MLIRContext ctx;
  auto module = traceOnnxFile(ctx, path);
  REQUIRE(module.isOk());
  mlir::ModuleOp m = **module;
  CHECK(m->getAttrOfType<mlir::StringAttr>("kiln.source").getValue() ==
        "kiln-tracer-test-basic.onnx");
  CHECK(m->getAttrOfType<mlir::IntegerAttr>("kiln.opset").getInt() == 17);
  mlir::func::FuncOp fn = mainOf(m);
  REQUIRE(fn);
  CHECK(fn->hasAttr("kiln.graph"));
  REQUIRE(fn.getNumArguments() == 1);
  CHECK(fn.getArgAttrOfType<mlir::StringAttr>(0, "kiln.name").getValue() ==
        "x");
  auto dimNames = fn.getArgAttrOfType<mlir::ArrayAttr>(0, "kiln.dim_names");
  REQUIRE(dimNames);
  CHECK(mlir::cast<mlir::StringAttr>(dimNames[0]).getValue() == "batch");
  CHECK(fn.getResultAttrOfType<mlir::StringAttr>(0, "kiln.name").getValue() ==
        "y");
  std::vector<std::string> ops = opNames(fn);
  CHECK(ops == std::vector<std::string>{"kiln.constant", "kiln.add",
                                        "kiln.relu", "func.return"});
  // The Relu node is unnamed: Relu_1, line 2.
  mlir::Operation *relu = &*std::next(fn.getBody().front().begin(), 2);
  auto fused = mlir::dyn_cast<mlir::FusedLoc>(relu->getLoc());
  REQUIRE(fused);
  CHECK(mlir::cast<mlir::StringAttr>(fused.getMetadata()).getValue() == "Relu");
  auto name = mlir::dyn_cast<mlir::NameLoc>(fused.getLocations()[0]);
  REQUIRE(name);
  CHECK(name.getName().getValue() == "Relu_1");
  auto file = mlir::dyn_cast<mlir::FileLineColLoc>(name.getChildLoc());
  REQUIRE(file);
  CHECK(file.getLine() == 2);
}

TEST_CASE("tracer: ops on constants are evaluated at trace time", "[onnx]") {
  ModelBuilder mb;
  mb.input("x", {2});
  mb.initializer("a", {2}, {1, 2});
  mb.initializer("b", {2}, {10, 20});
  mb.node("Add", {"a", "b"}, {"c"});
  mb.node("Mul", {"x", "c"}, {"y"});
  mb.output("y");
  mlir::MLIRContext ctx;
  auto module = traceOnnxFile(ctx, mb.save("fold.onnx"));
  REQUIRE(module.isOk());
  mlir::func::FuncOp fn = mainOf(**module);
  CHECK(opNames(fn) ==
        std::vector<std::string>{"kiln.constant", "kiln.mul", "func.return"});
  auto value =
      fn.getBody().front().front().getAttrOfType<mlir::ElementsAttr>("value");
  REQUIRE(value);
  std::vector<float> got(value.getValues<float>().begin(),
                         value.getValues<float>().end());
  CHECK(got == std::vector<float>{11, 22});
}

TEST_CASE("tracer: large initializers as weight parameters", "[onnx]") {
  ModelBuilder mb;
  mb.input("x", {3});
  mb.initializer("w", {3}, {1, 2, 3});
  mb.node("Add", {"x", "w"}, {"y"});
  mb.output("y");
  std::string path = mb.save("weights.onnx");
  mlir::MLIRContext ctx;
  TraceOptions options;
  options.weightsAsParameters = true;
  options.weightThreshold = 2;
  auto module = traceOnnxFile(ctx, path, options);
  REQUIRE(module.isOk());
  mlir::func::FuncOp fn = mainOf(**module);
  REQUIRE(fn.getNumArguments() == 2);
  CHECK(fn.getArgAttrOfType<mlir::StringAttr>(1, "kiln.name").getValue() ==
        "w");
  CHECK(fn.getArgAttr(1, "kiln.weight"));
}

TEST_CASE("tracer: Split into equal parts and optional outputs", "[onnx]") {
  ModelBuilder mb(18);
  mb.input("x", {6, 2});
  auto *split = mb.node("Split", {"x"}, {"a", "b", "c"});
  auto *attr = split->add_attribute();
  attr->set_name("num_outputs");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(3);
  mb.node("Dropout", {"a"}, {"d", ""});
  mb.output("d");
  mb.output("c");
  mlir::MLIRContext ctx;
  auto module = traceOnnxFile(ctx, mb.save("split.onnx"));
  REQUIRE(module.isOk());
  mlir::func::FuncOp fn = mainOf(**module);
  auto results = fn.getFunctionType().getResults();
  REQUIRE(results.size() == 2);
  CHECK(mlir::cast<mlir::RankedTensorType>(results[0]).getShape() ==
        llvm::ArrayRef<int64_t>{2, 2});
}

TEST_CASE("tracer: errors name the file and the node", "[onnx]") {
  mlir::MLIRContext ctx;
  SECTION("missing file") {
    auto r = traceOnnxFile(ctx, tempPath("does-not-exist.onnx"));
    REQUIRE(!r.isOk());
    CHECK(r.status().message().find("does-not-exist.onnx") !=
          std::string::npos);
  }
  SECTION("random bytes") {
    std::string path = tempPath("random.onnx");
    std::string bytes;
    for (int i = 0; i < 4096; ++i)
      bytes.push_back(static_cast<char>((i * 7919 + 13) % 251));
    writeFile(path, bytes);
    auto r = traceOnnxFile(ctx, path);
    REQUIRE(!r.isOk());
    CHECK(r.status().message().find("random.onnx") != std::string::npos);
  }
  SECTION("truncated model") {
    ModelBuilder mb;
    mb.input("x", {3});
    mb.initializer("w", {3}, {1, 2, 3});
    mb.node("Add", {"x", "w"}, {"y"});
    mb.output("y");
    std::string bytes = mb.model.SerializeAsString();
    std::string path = tempPath("truncated.onnx");
    writeFile(path, bytes.substr(0, bytes.size() / 2));
    auto r = traceOnnxFile(ctx, path);
    REQUIRE(!r.isOk());
    CHECK(r.status().message().find("truncated.onnx") != std::string::npos);
  }
  SECTION("unsupported op") {
    ModelBuilder mb;
    mb.input("x", {3});
    mb.node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf");
    mb.output("y");
    auto r = traceOnnxFile(ctx, mb.save("tfidf.onnx"));
    REQUIRE(!r.isOk());
    const std::string &msg = r.status().message();
    CHECK(msg.find("tfidf.onnx") != std::string::npos);
    CHECK(msg.find("node 'tfidf' (TfIdfVectorizer, domain ai.onnx, opset 17") !=
          std::string::npos);
    CHECK(msg.find("TfIdfVectorizer-9") != std::string::npos);
  }
  SECTION("opset older than 7") {
    ModelBuilder mb(6);
    mb.input("x", {3});
    mb.node("Relu", {"x"}, {"y"});
    mb.output("y");
    auto r = traceOnnxFile(ctx, mb.save("opset6.onnx"));
    REQUIRE(!r.isOk());
    CHECK(r.status().message().find("opset 6") != std::string::npos);
  }
  SECTION("shape error from the IR") {
    ModelBuilder mb;
    mb.input("x", {3});
    mb.input("z", {4});
    mb.node("Add", {"x", "z"}, {"y"}, "bad_add");
    mb.output("y");
    auto r = traceOnnxFile(ctx, mb.save("badshape.onnx"));
    REQUIRE(!r.isOk());
    CHECK(r.status().message().find("node 'bad_add' (Add") !=
          std::string::npos);
  }
  SECTION("unsupported dtype") {
    ModelBuilder mb;
    mb.input("x", {3}, /*FLOAT4E2M1=*/23);
    mb.node("Relu", {"x"}, {"y"});
    mb.output("y");
    auto r = traceOnnxFile(ctx, mb.save("float4.onnx"));
    REQUIRE(!r.isOk());
    CHECK(r.status().message().find("unsupported dtype FLOAT4E2M1") !=
          std::string::npos);
  }
}

TEST_CASE("tracer: Loop unrolling and its limit; names of subgraphs stay "
          "inside",
          "[onnx]") {
  // y = Loop(M = 3, cond = (absent), acc = x): acc' = acc + x; the body
  // also defines "tmp", which must not be visible after the loop.
  ModelBuilder mb;
  mb.input("x", {2});
  auto *m = mb.graph->add_initializer();
  m->set_name("m");
  m->set_data_type(onnx::TensorProto::INT64);
  m->add_int64_data(3);
  onnx::NodeProto *loop = mb.node("Loop", {"m", "", "x"}, {"y"}, "loop");
  onnx::AttributeProto *attr = loop->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto *body = attr->mutable_g();
  body->set_name("body");
  auto addInput = [&](const std::string &name, int32_t dtype,
                      std::vector<int64_t> dims) {
    auto *vi = body->add_input();
    vi->set_name(name);
    ModelBuilder::setType(vi, dtype, dims);
  };
  addInput("i", onnx::TensorProto::INT64, {});
  addInput("c", onnx::TensorProto::BOOL, {});
  addInput("acc", onnx::TensorProto::FLOAT, {2});
  auto *add = body->add_node();
  add->set_op_type("Add");
  add->set_name("step");
  add->add_input("acc");
  add->add_input("x"); // from the enclosing graph
  add->add_output("tmp");
  auto *copy = body->add_node();
  copy->set_op_type("Identity");
  copy->add_input("tmp");
  copy->add_output("next");
  body->add_output()->set_name("c");
  body->add_output()->set_name("next");
  mb.output("y");

  SECTION("unrolled within the limit") {
    mlir::MLIRContext ctx;
    auto module = traceOnnxFile(ctx, mb.save("loop.onnx"));
    REQUIRE(module.isOk());
    std::vector<std::string> names = opNames(mainOf(**module));
    CHECK(std::count(names.begin(), names.end(), "kiln.add") == 3);
    CHECK(std::count(names.begin(), names.end(), "kiln.loop") == 0);
  }
  SECTION("kiln.loop past the limit") {
    mlir::MLIRContext ctx;
    TraceOptions options;
    options.loopUnrollLimit = 2;
    auto module = traceOnnxFile(ctx, mb.save("loop.onnx"), options);
    REQUIRE(module.isOk());
    std::vector<std::string> names = opNames(mainOf(**module));
    CHECK(std::count(names.begin(), names.end(), "kiln.loop") == 1);
    CHECK(std::count(names.begin(), names.end(), "kiln.add") == 0);
  }
  SECTION("names defined in the body do not leak") {
    mb.node("Relu", {"tmp"}, {"z"}, "after");
    mb.output("z");
    mlir::MLIRContext ctx;
    auto module = traceOnnxFile(ctx, mb.save("leak.onnx"));
    REQUIRE_FALSE(module.isOk());
    const std::string &msg = module.status().message();
    CHECK(msg.find("node 'after' (Relu") != std::string::npos);
    CHECK(msg.find("input 'tmp' is not produced") != std::string::npos);
  }
  SECTION("errors inside the body name the node and the subgraph") {
    add->set_op_type("MatMul");
    add->clear_input();
    add->add_input("acc");
    add->add_input("i");
    mlir::MLIRContext ctx;
    auto module = traceOnnxFile(ctx, mb.save("bad-body.onnx"));
    REQUIRE_FALSE(module.isOk());
    CHECK(module.status().message().find(
              "node 'step' (MatMul, domain ai.onnx, opset 17 \xe2\x86\x92 "
              "MatMul-13, in the body of node 'loop' (iteration 0))") !=
          std::string::npos);
  }
}

TEST_CASE("readTensorProtoFile", "[onnx]") {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(2);
  t.add_dims(2);
  for (int64_t v : {1, -2, 3, -4})
    t.add_int64_data(v);
  std::string path = tempPath("tensor.pb");
  writeFile(path, t.SerializeAsString());
  auto r = readTensorProtoFile(path);
  REQUIRE(r.isOk());
  CHECK(r->dtype() == DType::I64);
  CHECK(r->shape() == Shape{2, 2});
  CHECK(r->toIntVector() == std::vector<int64_t>{1, -2, 3, -4});

  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(2);
  float values[2] = {0.5f, -1.5f};
  raw.set_raw_data(std::string(reinterpret_cast<char *>(values), 8));
  writeFile(path, raw.SerializeAsString());
  r = readTensorProtoFile(path);
  REQUIRE(r.isOk());
  CHECK(r->toDoubleVector() == std::vector<double>{0.5, -1.5});

  raw.set_raw_data(std::string(4, '\0'));
  writeFile(path, raw.SerializeAsString());
  r = readTensorProtoFile(path);
  REQUIRE(!r.isOk());
  CHECK(r.status().message().find("needs 8") != std::string::npos);

  // Sub-byte integers are packed two (int4) or four (int2) to a byte, low
  // bits first; an odd count leaves half a byte. The byte count is checked
  // against the shape before anything is allocated.
  onnx::TensorProto int4;
  int4.set_data_type(/*INT4=*/22);
  int4.add_dims(3);
  int4.set_raw_data(std::string("\x8f\x07", 2)); // -1, -8, 7
  writeFile(path, int4.SerializeAsString());
  r = readTensorProtoFile(path);
  REQUIRE(r.isOk());
  CHECK(r->dtype() == DType::I4);
  CHECK(r->toIntVector() == std::vector<int64_t>{-1, -8, 7});
  int4.set_raw_data(std::string("\x8f\x07\x00", 3));
  writeFile(path, int4.SerializeAsString());
  r = readTensorProtoFile(path);
  REQUIRE(!r.isOk());
  CHECK(r.status().message().find("needs 2") != std::string::npos);
  onnx::TensorProto uint2;
  uint2.set_data_type(/*UINT2=*/25);
  uint2.add_dims(5);
  uint2.add_int32_data(0xe4); // 0, 1, 2, 3
  uint2.add_int32_data(0x03); // 3
  writeFile(path, uint2.SerializeAsString());
  r = readTensorProtoFile(path);
  REQUIRE(r.isOk());
  CHECK(r->toIntVector() == std::vector<int64_t>{0, 1, 2, 3, 3});
  uint2.add_int32_data(0);
  writeFile(path, uint2.SerializeAsString());
  r = readTensorProtoFile(path);
  REQUIRE(!r.isOk());
  CHECK(r.status().message().find("holds 3 values") != std::string::npos);
  // float8 in int32_data, one value each.
  onnx::TensorProto f8;
  f8.set_data_type(/*FLOAT8E4M3FN=*/17);
  f8.add_dims(2);
  f8.add_int32_data(0x38); // 1.0
  f8.add_int32_data(0xfe); // -448
  writeFile(path, f8.SerializeAsString());
  r = readTensorProtoFile(path);
  REQUIRE(r.isOk());
  CHECK(r->toDoubleVector() == std::vector<double>{1.0, -448.0});

  onnx::TensorProto str;
  str.set_data_type(onnx::TensorProto::STRING);
  str.set_name("s");
  writeFile(path, str.SerializeAsString());
  r = readTensorProtoFile(path);
  REQUIRE(!r.isOk());
  CHECK(r.status().message().find("unsupported dtype STRING") !=
        std::string::npos);
}

TEST_CASE("tracer: the ONNX backend node tests", "[onnx][node-tests]") {
  std::string dir;
  if (FILE *p = popen(KILN_PYTHON
                      " -c 'import onnx,os;print(os.path.join("
                      "os.path.dirname(onnx.__file__),\"backend\",\"test\","
                      "\"data\",\"node\"))' 2>/dev/null",
                      "r")) {
    char buf[4096];
    if (fgets(buf, sizeof(buf), p))
      dir = buf;
    pclose(p);
  }
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r'))
    dir.pop_back();
  DIR *d = dir.empty() ? nullptr : opendir(dir.c_str());
  if (!d) {
    WARN("the onnx backend node tests are not installed; skipped");
    return;
  }
  std::vector<std::string> tests;
  while (dirent *e = readdir(d))
    if (e->d_name[0] != '.')
      tests.push_back(e->d_name);
  closedir(d);
  int traced = 0;
  for (const std::string &t : tests) {
    mlir::MLIRContext ctx;
    auto r = traceOnnxFile(ctx, dir + "/" + t + "/model.onnx");
    if (r.isOk())
      ++traced;
    else
      CHECK(r.status().message().find("model.onnx") != std::string::npos);
  }
  INFO("traced " << traced << " of " << tests.size() << " node tests");
  // 1242 traced when this was written (onnx 1.22.0): regressions fail.
  CHECK(traced >= 1242);
}
