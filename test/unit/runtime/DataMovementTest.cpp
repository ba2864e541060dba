//===- DataMovementTest.cpp - Tests of the data-movement kernels ----------===//
//
// This file implements the Catch2 tests of the shape and data-movement
// reference kernels (reshape, slice, gather, scatter, pad, ...), called
// through Dispatcher::global(). Expected values follow the ONNX reference
// implementation and the ONNX backend node tests of the same names.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace kiln;

namespace {

Tensor i64s(const std::vector<int64_t> &v) {
  return Tensor::fromVector<int64_t>(v, {static_cast<int64_t>(v.size())});
}
Tensor i64s(const std::vector<int64_t> &v, const Shape &shape) {
  return Tensor::fromVector<int64_t>(v, shape);
}
Tensor f32s(const std::vector<float> &v, const Shape &shape) {
  return Tensor::fromVector<float>(v, shape);
}
/// 0, 1, 2, ... as f32 of `shape`.
Tensor iotaF32(const Shape &shape) {
  std::vector<float> v(numElements(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i);
  return f32s(v, shape);
}

/// Runs `op`; returns the status and fills `outs` (sized to numOutputs).
Status call(const std::string &op, const std::vector<Tensor> &in,
            const Attributes &attrs, std::vector<Tensor> &outs,
            size_t numOutputs = 1) {
  outs.assign(numOutputs, Tensor());
  return Dispatcher::global().call(op, in, attrs, outs);
}

/// Runs `op` expecting success and one result.
Tensor run(const std::string &op, const std::vector<Tensor> &in,
           const Attributes &attrs = Attributes()) {
  std::vector<Tensor> outs;
  Status s = call(op, in, attrs, outs);
  INFO(op << ": " << s.message());
  REQUIRE(s.isOk());
  REQUIRE(outs[0].defined());
  return outs[0];
}

/// Runs `op` expecting an error whose message contains every fragment.
void expectError(const std::string &op, const std::vector<Tensor> &in,
                 const Attributes &attrs,
                 const std::vector<std::string> &fragments,
                 size_t numOutputs = 1) {
  std::vector<Tensor> outs;
  Status s = call(op, in, attrs, outs, numOutputs);
  INFO(op << ": " << s.message());
  REQUIRE_FALSE(s.isOk());
  for (const std::string &f : fragments)
    CHECK(s.message().find(f) != std::string::npos);
}

Attributes attrs(std::initializer_list<std::pair<const char *, AttrValue>> kv) {
  Attributes a;
  for (const auto &p : kv)
    a.set(p.first, p.second);
  return a;
}

std::vector<double> values(const Tensor &t) { return t.toDoubleVector(); }
std::vector<double> dv(std::initializer_list<double> v) { return v; }

const int64_t kMax = std::numeric_limits<int64_t>::max();
const int64_t kMin = std::numeric_limits<int64_t>::min();

} // namespace

//===----------------------------------------------------------------------===//
// reshape, flatten, squeeze, unsqueeze, transpose
//===----------------------------------------------------------------------===//

TEST_CASE("reshape: 0 copies, -1 infers, allowzero", "[runtime][datamove]") {
  Tensor x = iotaF32({2, 3, 4});
  Tensor y = run("reshape", {x, i64s({4, 0, -1})});
  CHECK(y.shape() == Shape{4, 3, 2});
  CHECK(values(y) == values(x));
  // A view of contiguous input shares the storage.
  CHECK(y.storage() == x.storage());

  CHECK(run("reshape", {x, i64s({-1})}).shape() == Shape{24});
  CHECK(run("reshape", {x, i64s({2, -1, 2})}).shape() == Shape{2, 6, 2});
  // test_reshape_allowzero_reordered: [0, 3, 4] -> [3, 4, 0].
  Tensor empty = Tensor::empty(DType::F32, {0, 3, 4});
  CHECK(run("reshape", {empty, i64s({3, 4, 0})},
            attrs({{"allowzero", int64_t(1)}}))
            .shape() == Shape{3, 4, 0});
  expectError("reshape", {x, i64s({5, -1})}, Attributes(),
              {"reshape", "[5, -1]"});
  expectError("reshape", {x, i64s({-1, -1})}, Attributes(),
              {"more than one -1"});
  expectError("reshape", {x, i64s({0, 0, 0, 0})}, Attributes(), {"rank 3"});
  expectError("reshape", {x, i64s({0, -1})}, attrs({{"allowzero", int64_t(1)}}),
              {"allowzero"});
}

TEST_CASE("reshape of every dtype", "[runtime][datamove]") {
  for (DType dt : kAllTypes) {
    Tensor x = iotaF32({2, 3}).to(dt);
    Tensor y = run("reshape", {x, i64s({3, 2})});
    CHECK(y.dtype() == dt);
    CHECK(y.shape() == Shape{3, 2});
    CHECK(values(y) == values(x));
  }
}

TEST_CASE("flatten, squeeze, unsqueeze", "[runtime][datamove]") {
  Tensor x = iotaF32({2, 3, 4, 5});
  CHECK(run("flatten", {x}, attrs({{"axis", int64_t(0)}})).shape() ==
        Shape{1, 120});
  CHECK(run("flatten", {x}, attrs({{"axis", int64_t(2)}})).shape() ==
        Shape{6, 20});
  CHECK(run("flatten", {x}, attrs({{"axis", int64_t(4)}})).shape() ==
        Shape{120, 1});
  CHECK(run("flatten", {x}, attrs({{"axis", int64_t(-1)}})).shape() ==
        Shape{24, 5});

  Tensor s = iotaF32({1, 3, 1, 5});
  CHECK(run("squeeze", {s, i64s({})}).shape() == Shape{3, 5});
  CHECK(run("squeeze", {s, i64s({-2})}).shape() == Shape{1, 3, 5});
  expectError("squeeze", {s, i64s({1})}, Attributes(), {"squeeze", "size 3"});
  expectError("squeeze", {s, i64s({4})}, Attributes(), {"squeeze", "axis 4"});

  Tensor u = iotaF32({3, 4, 5});
  CHECK(run("unsqueeze", {u, i64s({0, 4})}).shape() == Shape{1, 3, 4, 5, 1});
  CHECK(run("unsqueeze", {u, i64s({-2})}).shape() == Shape{3, 4, 1, 5});
  CHECK(run("unsqueeze", {u, i64s({5, 4, 2})}).shape() ==
        Shape{3, 4, 1, 5, 1, 1});
  CHECK(run("unsqueeze", {Tensor::scalar<float>(1), i64s({0})}).shape() ==
        Shape{1});
  expectError("unsqueeze", {u, i64s({1, 1})}, Attributes(), {"repeated"});
}

TEST_CASE("transpose", "[runtime][datamove]") {
  Tensor x = iotaF32({2, 3, 4});
  Tensor y =
      run("transpose", {x}, attrs({{"perm", std::vector<int64_t>{2, 0, 1}}}));
  REQUIRE(y.shape() == Shape{4, 2, 3});
  CHECK(y.isContiguous());
  // y[k][i][j] = x[i][j][k] = i*12 + j*4 + k.
  std::vector<double> v = values(y);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        CHECK(v[(k * 2 + i) * 3 + j] == i * 12 + j * 4 + k);
  Tensor h = run("transpose", {x.to(DType::F16)},
                 attrs({{"perm", std::vector<int64_t>{2, 0, 1}}}));
  CHECK(values(h) == v);
  expectError("transpose", {x},
              attrs({{"perm", std::vector<int64_t>{0, 0, 1}}}),
              {"transpose", "repeated"});
  expectError("transpose", {x}, attrs({{"perm", std::vector<int64_t>{0, 1}}}),
              {"transpose", "rank"});
}

//===----------------------------------------------------------------------===//
// concat, split
//===----------------------------------------------------------------------===//

TEST_CASE("concat and split", "[runtime][datamove]") {
  Tensor a = f32s({1, 2, 3, 4}, {2, 2});
  Tensor b = f32s({5, 6, 7, 8}, {2, 2});
  CHECK(values(run("concat", {a, b}, attrs({{"axis", int64_t(0)}}))) ==
        dv({1, 2, 3, 4, 5, 6, 7, 8}));
  Tensor c = run("concat", {a, b}, attrs({{"axis", int64_t(1)}}));
  CHECK(c.shape() == Shape{2, 4});
  CHECK(values(c) == dv({1, 2, 5, 6, 3, 4, 7, 8}));
  CHECK(values(run("concat", {a, b}, attrs({{"axis", int64_t(-1)}}))) ==
        values(c));
  Tensor e = Tensor::empty(DType::F32, {2, 0});
  CHECK(values(run("concat", {a, e, b}, attrs({{"axis", int64_t(1)}}))) ==
        values(c));
  expectError("concat", {a, f32s({1, 2, 3}, {1, 3})},
              attrs({{"axis", int64_t(0)}}), {"concat", "operand 1"});
  expectError("concat", {a, a.to(DType::I64)}, attrs({{"axis", int64_t(0)}}),
              {"concat", "operand 1"});

  // test_split_variable_parts_2d: [2, 6] split [2, 4] on axis 1.
  Tensor x = f32s({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 6});
  std::vector<Tensor> outs;
  REQUIRE(
      call("split", {x, i64s({2, 4})}, attrs({{"axis", int64_t(1)}}), outs, 2)
          .isOk());
  CHECK(outs[0].shape() == Shape{2, 2});
  CHECK(values(outs[0]) == dv({1, 2, 7, 8}));
  CHECK(values(outs[1]) == dv({3, 4, 5, 6, 9, 10, 11, 12}));
  // Empty sizes: equal parts (the last one smaller), as Split-18 num_outputs.
  Tensor seven = iotaF32({7});
  REQUIRE(call("split", {seven, i64s({})}, Attributes(), outs, 3).isOk());
  CHECK(values(outs[0]) == dv({0, 1, 2}));
  CHECK(values(outs[2]) == dv({6}));
  // Zero-sized parts are allowed.
  REQUIRE(call("split", {seven, i64s({0, 7})}, Attributes(), outs, 2).isOk());
  CHECK(outs[0].shape() == Shape{0});
  expectError("split", {x, i64s({2, 3})}, attrs({{"axis", int64_t(1)}}),
              {"split", "sum to 5"}, 2);
  expectError("split", {x, i64s({2, 4})}, attrs({{"axis", int64_t(1)}}),
              {"split", "2 sizes for 3 results"}, 3);
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

TEST_CASE("slice: ONNX Slice-13 clamping and steps", "[runtime][datamove]") {
  Tensor x = iotaF32({20, 10, 5});
  auto slice = [&](std::vector<int64_t> starts, std::vector<int64_t> ends,
                   std::vector<int64_t> axes, std::vector<int64_t> steps) {
    return run("slice", {x, i64s(starts), i64s(ends), i64s(axes), i64s(steps)});
  };
  // test_slice: x[0:3, 0:10].
  Tensor y = slice({0, 0}, {3, 10}, {0, 1}, {1, 1});
  CHECK(y.shape() == Shape{3, 10, 5});
  CHECK(y.getDouble(0) == 0);
  // test_slice_neg: x[:, 0:-1].
  CHECK(slice({0}, {-1}, {1}, {1}).shape() == Shape{20, 9, 5});
  // test_slice_end_out_of_bounds: x[:, 1:1000].
  CHECK(slice({1}, {1000}, {1}, {1}).shape() == Shape{20, 9, 5});
  // test_slice_start_out_of_bounds: x[:, 1000:1000] is empty.
  CHECK(slice({1000}, {1000}, {1}, {1}).shape() == Shape{20, 0, 5});
  // test_slice_neg_steps: x[20:0:-1, 10:0:-3, 5:0:-3] -> [19, 3, 2].
  Tensor n = slice({20, 10, 4}, {0, 0, 1}, {0, 1, 2}, {-1, -3, -2});
  REQUIRE(n.shape() == Shape{19, 3, 2});
  // n[0][0][0] = x[19][9][4].
  CHECK(n.getDouble(0) == 19 * 50 + 9 * 5 + 4);
  // n[0][1][1] = x[19][6][2].
  CHECK(n.getDouble(3) == 19 * 50 + 6 * 5 + 2);
  // test_slice_negative_axes and the INT64 sentinels.
  CHECK(slice({0, 0, 3}, {20, 10, 4}, {0, -2, -1}, {1, 1, 1}).shape() ==
        Shape{20, 10, 1});
  CHECK(slice({0}, {kMax}, {1}, {1}).shape() == Shape{20, 10, 5});
  // Reverse the whole axis: x[::-1] with start=-1, end=INT64_MIN.
  Tensor rev = slice({-1}, {kMin}, {0}, {-1});
  REQUIRE(rev.shape() == Shape{20, 10, 5});
  CHECK(rev.getDouble(0) == 19 * 50);
  // Empty with negative step when start < end.
  CHECK(slice({0}, {5}, {0}, {-1}).shape() == Shape{0, 10, 5});
  expectError("slice", {x, i64s({0}), i64s({1}), i64s({0}), i64s({0})},
              Attributes(), {"slice", "step 0"});
  expectError("slice", {x, i64s({0}), i64s({1}), i64s({3}), i64s({1})},
              Attributes(), {"slice", "axis 3"});
  expectError("slice", {x, i64s({0, 0}), i64s({1}), i64s({0}), i64s({1})},
              Attributes(), {"slice", "same length"});
}

TEST_CASE("slice works on every dtype and non-contiguous input",
          "[runtime][datamove]") {
  for (DType dt : kAllTypes) {
    Tensor x = iotaF32({4, 3}).to(dt);
    Tensor y = run("slice", {x, i64s({1}), i64s({3}), i64s({0}), i64s({1})});
    CHECK(y.dtype() == dt);
    std::vector<double> all = values(x);
    CHECK(values(y) == std::vector<double>(all.begin() + 3, all.begin() + 9));
  }
  Tensor t = iotaF32({3, 4}).permute({1, 0}); // [4, 3], strided
  Tensor y = run("slice", {t, i64s({1}), i64s({3}), i64s({0}), i64s({1})});
  // t[1:3] = [[1, 5, 9], [2, 6, 10]].
  CHECK(values(y) == dv({1, 5, 9, 2, 6, 10}));
}

//===----------------------------------------------------------------------===//
// gather family
//===----------------------------------------------------------------------===//

TEST_CASE("gather: axes, negative and i32 indices", "[runtime][datamove]") {
  Tensor x = iotaF32({3, 4});
  Tensor y =
      run("gather", {x, i64s({2, 0, -1})}, attrs({{"axis", int64_t(0)}}));
  CHECK(y.shape() == Shape{3, 4});
  CHECK(values(y) == dv({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  Tensor idx32 = Tensor::fromVector<int32_t>({3, 1, 0, -4}, {2, 2});
  Tensor z = run("gather", {x, idx32}, attrs({{"axis", int64_t(1)}}));
  CHECK(z.shape() == Shape{3, 2, 2});
  CHECK(values(z) == dv({3, 1, 0, 0, 7, 5, 4, 4, 11, 9, 8, 8}));
  // Scalar index removes the axis.
  CHECK(run("gather", {x, Tensor::scalar<int64_t>(1)},
            attrs({{"axis", int64_t(0)}}))
            .shape() == Shape{4});
  // Every dtype moves the same bytes.
  for (DType dt : kAllTypes)
    CHECK(values(run("gather", {x.to(dt), i64s({2})},
                     attrs({{"axis", int64_t(0)}}))) ==
          values(run("gather", {x, i64s({2})}, attrs({{"axis", int64_t(0)}}))
                     .to(dt)));
  expectError("gather", {x, i64s({3})}, attrs({{"axis", int64_t(0)}}),
              {"gather", "index 3", "out of range"});
  expectError("gather", {x, i64s({-5})}, attrs({{"axis", int64_t(1)}}),
              {"gather", "index -5"});
  expectError("gather", {x, f32s({0}, {1})}, attrs({{"axis", int64_t(0)}}),
              {"gather", "integer"});
}

TEST_CASE("gather_elements", "[runtime][datamove]") {
  // test_gather_elements_0 / _1 / _negative_indices.
  Tensor x = f32s({1, 2, 3, 4}, {2, 2});
  Tensor i = i64s({0, 0, 1, 0}, {2, 2});
  CHECK(values(run("gather_elements", {x, i}, attrs({{"axis", int64_t(1)}}))) ==
        dv({1, 1, 4, 3}));
  Tensor x3 = f32s({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  Tensor i0 = i64s({1, 2, 0, 2, 0, 0}, {2, 3});
  CHECK(values(run("gather_elements", {x3, i0},
                   attrs({{"axis", int64_t(0)}}))) == dv({4, 8, 3, 7, 2, 3}));
  Tensor ineg = Tensor::fromVector<int32_t>({-1, -2, 0, -2, 0, 0}, {2, 3});
  CHECK(values(run("gather_elements", {x3, ineg},
                   attrs({{"axis", int64_t(0)}}))) == dv({7, 5, 3, 4, 2, 3}));
  expectError("gather_elements", {x3, i64s({3, 0, 0}, {1, 3})},
              attrs({{"axis", int64_t(0)}}), {"gather_elements", "index 3"});
  expectError("gather_elements", {x3, i64s({0, 0, 0}, {3})},
              attrs({{"axis", int64_t(0)}}), {"gather_elements", "rank"});
}

TEST_CASE("gather_nd with batch_dims", "[runtime][datamove]") {
  // test_gathernd_example_int32: data [[0,1],[2,3]], indices [[0,0],[1,1]].
  Tensor d = Tensor::fromVector<int32_t>({0, 1, 2, 3}, {2, 2});
  CHECK(values(run("gather_nd", {d, i64s({0, 0, 1, 1}, {2, 2})})) ==
        dv({0, 3}));
  // test_gathernd_example_int32_batch_dim1.
  Tensor d3 = Tensor::fromVector<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  Tensor y = run("gather_nd", {d3, i64s({1, 0}, {2, 1})},
                 attrs({{"batch_dims", int64_t(1)}}));
  CHECK(y.shape() == Shape{2, 2});
  CHECK(values(y) == dv({2, 3, 4, 5}));
  // test_gathernd_example_float32: indices [[[0,1]],[[1,0]]].
  Tensor f = iotaF32({2, 2, 2});
  Tensor z = run("gather_nd", {f, i64s({0, 1, 1, 0}, {2, 1, 2})});
  CHECK(z.shape() == Shape{2, 1, 2});
  CHECK(values(z) == dv({2, 3, 4, 5}));
  CHECK(values(run("gather_nd", {f, i64s({-1, -1, -1}, {1, 3})})) == dv({7}));
  expectError("gather_nd", {f, i64s({0, 2}, {1, 2})}, Attributes(),
              {"gather_nd", "index 2"});
  expectError("gather_nd", {f, i64s({0, 0, 0, 0}, {1, 4})}, Attributes(),
              {"gather_nd", "length 4"});
}

//===----------------------------------------------------------------------===//
// scatter family
//===----------------------------------------------------------------------===//

TEST_CASE("scatter_elements with reductions", "[runtime][datamove]") {
  // test_scatter_elements_with_axis.
  Tensor x = f32s({1, 2, 3, 4, 5}, {1, 5});
  Tensor i = i64s({1, 3}, {1, 2});
  Tensor u = f32s({1.1f, 2.1f}, {1, 2});
  CHECK(values(run("scatter_elements", {x, i, u},
                   attrs({{"axis", int64_t(1)}}))) ==
        values(f32s({1, 1.1f, 3, 2.1f, 5}, {1, 5})));
  // test_scatter_elements_with_negative_indices.
  Tensor in = i64s({1, -3}, {1, 2});
  CHECK(values(run("scatter_elements", {x, in, u},
                   attrs({{"axis", int64_t(1)}}))) ==
        values(f32s({1, 1.1f, 2.1f, 4, 5}, {1, 5})));
  // test_scatter_elements_with_duplicate_indices (add).
  Tensor dup = i64s({1, 1}, {1, 2});
  CHECK(values(run("scatter_elements", {x, dup, u},
                   attrs({{"axis", int64_t(1)},
                          {"reduction", std::string("add")}}))) ==
        values(f32s({1, 2 + 1.1f + 2.1f, 3, 4, 5}, {1, 5})));
  CHECK(values(run("scatter_elements", {x, dup, u},
                   attrs({{"axis", int64_t(1)},
                          {"reduction", std::string("mul")}})))[1] ==
        Approx(2 * 1.1 * 2.1).epsilon(1e-6));
  CHECK(values(run("scatter_elements", {x, i, u},
                   attrs({{"axis", int64_t(1)},
                          {"reduction", std::string("max")}}))) ==
        values(f32s({1, 2, 3, 4, 5}, {1, 5})));
  CHECK(values(run("scatter_elements", {x, i, u},
                   attrs({{"axis", int64_t(1)},
                          {"reduction", std::string("min")}}))) ==
        values(f32s({1, 1.1f, 3, 2.1f, 5}, {1, 5})));
  // Integer and bool data.
  Tensor xi = x.to(DType::I32);
  CHECK(values(run("scatter_elements", {xi, dup, u.to(DType::I32)},
                   attrs({{"axis", int64_t(1)},
                          {"reduction", std::string("add")}}))) ==
        dv({1, 5, 3, 4, 5}));
  expectError("scatter_elements", {x, i64s({1, 5}, {1, 2}), u},
              attrs({{"axis", int64_t(1)}}), {"scatter_elements", "index 5"});
  expectError("scatter_elements", {x, i, u},
              attrs({{"axis", int64_t(1)}, {"reduction", std::string("sum")}}),
              {"scatter_elements", "sum"});
  // The input is not modified.
  CHECK(values(x) == dv({1, 2, 3, 4, 5}));
}

TEST_CASE("scatter_nd with reductions", "[runtime][datamove]") {
  // test_scatternd: data 1..8, indices [[4],[3],[1],[7]], updates 9..12.
  Tensor x = f32s({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  Tensor i = i64s({4, 3, 1, 7}, {4, 1});
  Tensor u = f32s({9, 10, 11, 12}, {4});
  CHECK(values(run("scatter_nd", {x, i, u})) ==
        dv({1, 11, 3, 10, 9, 6, 7, 12}));
  // Slices: data [4, 2], indices [[0], [2]], updates [2, 2]; add with dups.
  Tensor x2 = iotaF32({4, 2});
  Tensor u2 = f32s({10, 20, 30, 40}, {2, 2});
  CHECK(values(run("scatter_nd", {x2, i64s({0, 0}, {2, 1}), u2},
                   attrs({{"reduction", std::string("add")}}))) ==
        dv({40, 61, 2, 3, 4, 5, 6, 7}));
  CHECK(values(run("scatter_nd", {x2, i64s({0, -1}, {2, 1}), u2},
                   attrs({{"reduction", std::string("mul")}}))) ==
        dv({0, 20, 2, 3, 4, 5, 180, 280}));
  CHECK(values(run("scatter_nd",
                   {x2, i64s({1, 1, 2, 0}, {2, 2}), f32s({-1, 9}, {2})},
                   attrs({{"reduction", std::string("max")}}))) ==
        dv({0, 1, 2, 3, 9, 5, 6, 7}));
  CHECK(values(run("scatter_nd",
                   {x2, i64s({1, 1, 2, 0}, {2, 2}), f32s({-1, 9}, {2})},
                   attrs({{"reduction", std::string("min")}}))) ==
        dv({0, 1, 2, -1, 4, 5, 6, 7}));
  expectError("scatter_nd", {x, i64s({8}, {1, 1}), f32s({1}, {1})},
              Attributes(), {"scatter_nd", "index 8"});
  expectError("scatter_nd", {x, i, f32s({1}, {1})}, Attributes(),
              {"scatter_nd", "updates"});
}

//===----------------------------------------------------------------------===//
// expand, tile, pad, trilu
//===----------------------------------------------------------------------===//

TEST_CASE("expand is bidirectional broadcast", "[runtime][datamove]") {
  // test_expand_dim_changed: [3, 1] to [2, 1, 6] -> [2, 3, 6].
  Tensor x = f32s({1, 2, 3}, {3, 1});
  Tensor y = run("expand", {x, i64s({2, 1, 6})});
  REQUIRE(y.shape() == Shape{2, 3, 6});
  CHECK(y.getDouble(6) == 2);
  CHECK(y.getDouble(18 + 17) == 3);
  // test_expand_dim_unchanged: [3, 1] to [3, 4].
  CHECK(run("expand", {x, i64s({3, 4})}).shape() == Shape{3, 4});
  // A target dim of 1 keeps the input dim.
  CHECK(run("expand", {iotaF32({2, 3}), i64s({1, 1})}).shape() == Shape{2, 3});
  expectError("expand", {x, i64s({2, 4})}, Attributes(),
              {"expand", "broadcast"});
}

TEST_CASE("tile", "[runtime][datamove]") {
  Tensor x = f32s({1, 2, 3, 4}, {2, 2});
  Tensor y = run("tile", {x, i64s({2, 3})});
  REQUIRE(y.shape() == Shape{4, 6});
  CHECK(values(y) == dv({1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                         1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  CHECK(run("tile", {x, i64s({0, 1})}).shape() == Shape{0, 2});
  CHECK(values(run("tile", {x.to(DType::Bool), i64s({1, 2})})) ==
        dv({1, 1, 1, 1, 1, 1, 1, 1}));
  expectError("tile", {x, i64s({2})}, Attributes(), {"tile", "1 repeats"});
}

TEST_CASE("pad: constant, reflect, edge, wrap and cropping",
          "[runtime][datamove]") {
  Tensor x = f32s({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor v = Tensor::scalar<float>(9);
  auto pad = [&](std::vector<int64_t> pads, const char *mode) {
    return run("pad", {x, i64s(pads), v}, attrs({{"mode", std::string(mode)}}));
  };
  Tensor c = pad({0, 1, 1, 0}, "constant");
  REQUIRE(c.shape() == Shape{3, 4});
  CHECK(values(c) == dv({9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9}));
  CHECK(values(pad({0, 2, 0, 2}, "reflect")) ==
        dv({3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4}));
  CHECK(values(pad({1, 1, 0, 0}, "edge")) ==
        dv({1, 1, 2, 3, 1, 1, 2, 3, 4, 4, 5, 6}));
  CHECK(values(pad({0, 2, 0, 1}, "wrap")) ==
        dv({2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4}));
  // Reflect wider than the axis (numpy reflects repeatedly).
  CHECK(values(pad({0, 4, 0, 0}, "reflect")) ==
        dv({1, 2, 3, 2, 1, 2, 3, 4, 5, 6, 5, 4, 5, 6}));
  // Negative pads crop.
  CHECK(values(pad({0, -1, 0, 0}, "constant")) == dv({2, 3, 5, 6}));
  CHECK(values(pad({-1, -1, 0, 1}, "constant")) == dv({5, 6, 9}));
  // Every dtype; the value follows x's dtype.
  for (DType dt : kAllTypes) {
    Tensor p = run(
        "pad", {x.to(dt), i64s({0, 1, 0, 0}), Tensor::scalar<float>(0).to(dt)},
        attrs({{"mode", std::string("constant")}}));
    CHECK(p.dtype() == dt);
    CHECK(values(p) == values(f32s({0, 1, 2, 3, 0, 4, 5, 6}, {2, 4}).to(dt)));
  }
  expectError("pad", {x, i64s({0, 1}), v}, Attributes(), {"pad", "2 * rank"});
  expectError("pad", {x, i64s({0, -4, 0, 0}), v}, Attributes(),
              {"pad", "crop"});
  expectError("pad", {x, i64s({0, 1, 0, 0}), v},
              attrs({{"mode", std::string("mirror")}}), {"pad", "mirror"});
}

TEST_CASE("trilu", "[runtime][datamove]") {
  Tensor x = iotaF32({3, 4});
  auto trilu = [&](const Tensor &t, int64_t k, int64_t upper) {
    return values(run("trilu", {t, Tensor::scalar<int64_t>(k)},
                      attrs({{"upper", upper}})));
  };
  CHECK(trilu(x, 0, 1) == dv({0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11}));
  CHECK(trilu(x, 1, 1) == dv({0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11}));
  CHECK(trilu(x, -1, 1) == dv({0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11}));
  CHECK(trilu(x, 0, 0) == dv({0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0}));
  CHECK(trilu(x, -7, 0) == std::vector<double>(12, 0.0));
  CHECK(trilu(x, 6, 0) == values(x));
  // Batched, [2, 2, 2].
  CHECK(trilu(iotaF32({2, 2, 2}), 0, 0) == dv({0, 0, 2, 3, 4, 0, 6, 7}));
  expectError("trilu", {iotaF32({3}), Tensor::scalar<int64_t>(0)}, Attributes(),
              {"trilu", "rank"});
}

//===----------------------------------------------------------------------===//
// shape, size, constant_of_shape, range, one_hot
//===----------------------------------------------------------------------===//

TEST_CASE("shape and size", "[runtime][datamove]") {
  Tensor x = iotaF32({3, 4, 5});
  Tensor s = run("shape", {x});
  CHECK(s.dtype() == DType::I64);
  CHECK(s.toIntVector() == std::vector<int64_t>{3, 4, 5});
  CHECK(run("shape", {x}, attrs({{"start", int64_t(1)}})).toIntVector() ==
        std::vector<int64_t>{4, 5});
  CHECK(run("shape", {x}, attrs({{"start", int64_t(-1)}})).toIntVector() ==
        std::vector<int64_t>{5});
  CHECK(
      run("shape", {x}, attrs({{"start", int64_t(-10)}, {"end", int64_t(10)}}))
          .toIntVector() == std::vector<int64_t>{3, 4, 5});
  CHECK(run("shape", {x}, attrs({{"start", int64_t(2)}, {"end", int64_t(1)}}))
            .shape() == Shape{0});
  Tensor n = run("size", {x.to(DType::Bool)});
  CHECK(n.dtype() == DType::I64);
  CHECK(n.rank() == 0);
  CHECK(n.getInt(0) == 60);
}

TEST_CASE("constant_of_shape", "[runtime][datamove]") {
  Tensor y = run("constant_of_shape", {i64s({2, 3})},
                 attrs({{"value", Tensor::fromVector<int32_t>({7}, {1})}}));
  CHECK(y.dtype() == DType::I32);
  CHECK(values(y) == std::vector<double>(6, 7.0));
  Tensor z = run("constant_of_shape", {i64s({4})});
  CHECK(z.dtype() == DType::F32);
  CHECK(values(z) == std::vector<double>(4, 0.0));
  CHECK(run("constant_of_shape", {i64s({0})}).shape() == Shape{0});
  expectError("constant_of_shape", {i64s({-1})}, Attributes(),
              {"constant_of_shape", "negative"});
}

TEST_CASE("range", "[runtime][datamove]") {
  // test_range_float_type_positive_delta: 1, 5, 2 -> [1, 3].
  Tensor f = run("range", {Tensor::scalar<float>(1), Tensor::scalar<float>(5),
                           Tensor::scalar<float>(2)});
  CHECK(f.dtype() == DType::F32);
  CHECK(values(f) == dv({1, 3}));
  // test_range_int32_type_negative_delta: 10, 6, -3 -> [10, 7].
  Tensor i =
      run("range", {Tensor::scalar<int32_t>(10), Tensor::scalar<int32_t>(6),
                    Tensor::scalar<int32_t>(-3)});
  CHECK(i.dtype() == DType::I32);
  CHECK(values(i) == dv({10, 7}));
  CHECK(run("range", {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(5),
                      Tensor::scalar<int64_t>(-1)})
            .shape() == Shape{0});
  CHECK(
      values(run("range", {Tensor::scalar<double>(0), Tensor::scalar<double>(1),
                           Tensor::scalar<double>(0.25)})) ==
      dv({0, 0.25, 0.5, 0.75}));
  expectError("range",
              {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(5),
               Tensor::scalar<int64_t>(0)},
              Attributes(), {"range", "delta"});
  expectError("range",
              {Tensor::scalar<int64_t>(0), Tensor::scalar<int32_t>(5),
               Tensor::scalar<int64_t>(1)},
              Attributes(), {"range", "operand 1"});
}

TEST_CASE("one_hot", "[runtime][datamove]") {
  // test_onehot_negative_indices: indices [0, -7, -8], depth 10, axis -1
  // (normalized to 1 by the tracer), values [1, 3].
  Tensor idx = i64s({0, -7, -8});
  Tensor vals = f32s({1, 3}, {2});
  Tensor y = run("one_hot", {idx, Tensor::scalar<int64_t>(10), vals},
                 attrs({{"axis", int64_t(1)}}));
  REQUIRE(y.shape() == Shape{3, 10});
  std::vector<double> v = values(y);
  CHECK(v[0] == 3);
  CHECK(v[1] == 1);
  CHECK(v[10 + 3] == 3);
  CHECK(v[20 + 2] == 3);
  // test_onehot_with_axis: axis 1 on [2, 2] indices, depth 4 -> [2, 4, 2].
  Tensor idx2 = f32s({1, 9, 2, 4}, {2, 2});
  Tensor z = run("one_hot",
                 {idx2, Tensor::scalar<float>(10),
                  Tensor::fromVector<int32_t>({0, 1}, {2})},
                 attrs({{"axis", int64_t(1)}}));
  REQUIRE(z.shape() == Shape{2, 10, 2});
  CHECK(z.dtype() == DType::I32);
  std::vector<double> w = values(z);
  CHECK(w[1 * 2 + 0] == 1); // [0][1][0]
  CHECK(w[9 * 2 + 1] == 1); // [0][9][1]
  CHECK(w[20 + 2 * 2 + 0] == 1);
  CHECK(w[20 + 4 * 2 + 1] == 1);
  double total = 0;
  for (double e : w)
    total += e;
  CHECK(total == 4);
  // Out-of-range indices give all-off rows.
  CHECK(values(run("one_hot", {i64s({5}), Tensor::scalar<int64_t>(3), vals},
                   attrs({{"axis", int64_t(1)}}))) == dv({1, 1, 1}));
}

TEST_CASE("data movement errors name the op", "[runtime][datamove]") {
  expectError("gather", {iotaF32({2})}, Attributes(), {"gather", "expected 2"});
  expectError("reshape", {iotaF32({2}), f32s({2}, {1})}, Attributes(),
              {"reshape", "shape", "integer"});
}
