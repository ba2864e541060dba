//===- LinalgTest.cpp - Tests of the matmul and einsum kernels ------------===//
//
// This file implements the unit tests of the runtime's matmul and einsum
// kernels, called through the global dispatcher. Inputs are the "ramp"
// pattern ((i*7) % 13 - 6) * 0.5 (without the 0.5 for integers); expected
// values come from numpy.matmul / numpy.einsum on the same inputs.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace kiln;

namespace {

Tensor ramp(DType dt, const Shape &shape) {
  std::vector<double> v(numElements(shape));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>(static_cast<int64_t>(i * 7 % 13) - 6);
    if (isFloatingPoint(dt))
      v[i] *= 0.5;
  }
  return Tensor::fromVector<double>(v, shape).to(dt);
}

Tensor run(const std::string &op, const std::vector<Tensor> &inputs,
           const Attributes &attrs = {}) {
  std::vector<Tensor> outputs(1);
  Status st = Dispatcher::global().call(op, inputs, attrs, outputs);
  INFO(st.message());
  REQUIRE(st.isOk());
  REQUIRE(outputs[0].defined());
  return outputs[0];
}

Status runStatus(const std::string &op, const std::vector<Tensor> &inputs,
                 const Attributes &attrs = {}) {
  std::vector<Tensor> outputs(1);
  return Dispatcher::global().call(op, inputs, attrs, outputs);
}

void requireValues(const Tensor &t, DType dt, const Shape &shape,
                   const std::vector<double> &expected, double tol = 1e-5) {
  REQUIRE(t.dtype() == dt);
  REQUIRE(t.shape() == shape);
  std::vector<double> got = t.toDoubleVector();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(expected[i]).margin(tol).epsilon(tol));
  }
}

Attributes equation(const std::string &eq) {
  Attributes a;
  a.set("equation", eq);
  return a;
}

} // namespace

TEST_CASE("matmul 2-D f32 and f64", "[runtime][linalg]") {
  std::vector<double> expected = {10.5, -7, 8, -9.5, -0.5, 1.25, -0.25, 1.5};
  for (DType dt : {DType::F32, DType::F64}) {
    Tensor y = run("matmul", {ramp(dt, {2, 3}), ramp(dt, {3, 4})});
    requireValues(y, dt, {2, 4}, expected);
  }
}

TEST_CASE("matmul f16 and bf16 go through f32", "[runtime][linalg]") {
  std::vector<double> expected = {10.5, -7, 8, -9.5, -0.5, 1.25, -0.25, 1.5};
  for (DType dt : {DType::F16, DType::BF16}) {
    Tensor y = run("matmul", {ramp(dt, {2, 3}), ramp(dt, {3, 4})});
    requireValues(y, dt, {2, 4}, expected, 1e-2);
  }
}

TEST_CASE("matmul broadcasts batch dimensions", "[runtime][linalg]") {
  Tensor y = run("matmul",
                 {ramp(DType::F32, {2, 1, 2, 3}), ramp(DType::F32, {3, 3, 2})});
  requireValues(y, DType::F32, {2, 3, 2, 2},
                {12.75, -4.75, -1,    0.75,  5.25, -12.25, -0.25,  1.5,
                 -2.25, 12.75, 0.5,   -1,    1.5,  -0.25,  -12.25, 5.25,
                 0.75,  -1,    -4.75, 12.75, 0,    1.5,    2.75,   -12.25});
}

TEST_CASE("matmul promotes 1-D operands", "[runtime][linalg]") {
  SECTION("1-D x 3-D") {
    Tensor y =
        run("matmul", {ramp(DType::F32, {3}), ramp(DType::F32, {2, 3, 2})});
    requireValues(y, DType::F32, {2, 2}, {12.75, -4.75, 5.25, -12.25});
  }
  SECTION("3-D x 1-D") {
    Tensor y =
        run("matmul", {ramp(DType::F32, {2, 2, 3}), ramp(DType::F32, {3})});
    requireValues(y, DType::F32, {2, 2}, {15.5, -7.75, 8, -15.25});
  }
  SECTION("1-D x 1-D is a scalar") {
    Tensor y = run("matmul", {ramp(DType::F64, {3}), ramp(DType::F64, {3})});
    // ramp(3) = [-3, 0.5, -2.5]: 9 + 0.25 + 6.25.
    requireValues(y, DType::F64, {}, {15.5});
  }
}

TEST_CASE("matmul with an empty inner dimension gives zeros",
          "[runtime][linalg]") {
  Tensor y =
      run("matmul", {ramp(DType::F32, {2, 0}), ramp(DType::F32, {0, 3})});
  requireValues(y, DType::F32, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST_CASE("matmul on integers wraps in the element type", "[runtime][linalg]") {
  Tensor y =
      run("matmul", {ramp(DType::I32, {2, 3}), ramp(DType::I32, {3, 2})});
  requireValues(y, DType::I32, {2, 2}, {51, -19, -4, 3});
  Tensor y64 =
      run("matmul", {ramp(DType::I64, {2, 3}), ramp(DType::I64, {3, 2})});
  requireValues(y64, DType::I64, {2, 2}, {51, -19, -4, 3});

  Tensor a8 = Tensor::fromVector<int8_t>({100, 100, -100, 50}, {2, 2});
  Tensor b8 = Tensor::fromVector<int8_t>({2, 1, 2, -1}, {2, 2});
  requireValues(run("matmul", {a8, b8}), DType::I8, {2, 2},
                {-112, 0, -100, 106});
  Tensor au = Tensor::fromVector<uint8_t>({200, 100}, {1, 2});
  Tensor bu = Tensor::fromVector<uint8_t>({2, 1}, {2, 1});
  requireValues(run("matmul", {au, bu}), DType::U8, {1, 1}, {244});
}

TEST_CASE("matmul reads non-contiguous operands", "[runtime][linalg]") {
  // ramp(3x2) transposed is a 2x3 view.
  Tensor a = ramp(DType::F32, {3, 2}).permute({1, 0});
  Tensor b = ramp(DType::F32, {3, 1});
  Tensor y = run("matmul", {a, b});
  // a^T = [[-3, -2.5, -2], [0.5, 1, 1.5]], b = [-3, 0.5, -2.5].
  requireValues(y, DType::F32, {2, 1}, {9 - 1.25 + 5, -1.5 + 0.5 - 3.75});
}

TEST_CASE("matmul rejects bad operands", "[runtime][linalg]") {
  Status st =
      runStatus("matmul", {ramp(DType::F32, {2, 3}), ramp(DType::F32, {4, 2})});
  REQUIRE_FALSE(st.isOk());
  CHECK(st.message().find("inner dimensions") != std::string::npos);
  st = runStatus("matmul",
                 {ramp(DType::F32, {2, 2, 3}), ramp(DType::F32, {3, 3, 2})});
  REQUIRE_FALSE(st.isOk());
  CHECK(st.message().find("batch") != std::string::npos);
  st = runStatus("matmul", {Tensor::scalar<float>(1.f), ramp(DType::F32, {2})});
  CHECK_FALSE(st.isOk());
  st =
      runStatus("matmul", {ramp(DType::F32, {2, 2}), ramp(DType::F64, {2, 2})});
  CHECK_FALSE(st.isOk());
}

TEST_CASE("einsum contractions that are matmuls", "[runtime][linalg]") {
  std::vector<double> expected = {10.5, -7, 8, -9.5, -0.5, 1.25, -0.25, 1.5};
  for (const char *eq : {"ij,jk->ik", "ij,jk", " ij , jk -> ik "}) {
    INFO(eq);
    Tensor y =
        run("einsum", {ramp(DType::F32, {2, 3}), ramp(DType::F32, {3, 4})},
            equation(eq));
    requireValues(y, DType::F32, {2, 4}, expected);
  }
  Tensor attn =
      run("einsum",
          {ramp(DType::F32, {1, 2, 2, 3}), ramp(DType::F32, {1, 2, 3, 3})},
          equation("bhqd,bhkd->bhqk"));
  requireValues(
      attn, DType::F32, {1, 2, 2, 3},
      {15.5, -7.75, 8, -7.75, 7.25, -7, -7.75, -6.5, 7.75, 15.5, 3, -12.75});
  Tensor bc =
      run("einsum", {ramp(DType::F64, {2, 3}), ramp(DType::F64, {2, 3})},
          equation("ba,ca"));
  requireValues(bc, DType::F64, {2, 2}, {15.5, -7.75, -7.75, 7.25});
}

TEST_CASE("einsum diagonals, traces, sums and transposes",
          "[runtime][linalg]") {
  requireValues(run("einsum", {ramp(DType::F32, {3, 3})}, equation("ii->i")),
                DType::F32, {3}, {-3, -2, -1});
  requireValues(run("einsum", {ramp(DType::F32, {3, 3})}, equation("ii")),
                DType::F32, {}, {-6});
  requireValues(run("einsum", {ramp(DType::F32, {2, 3})}, equation("ij->")),
                DType::F32, {}, {-4.5});
  requireValues(
      run("einsum", {ramp(DType::F32, {2, 3, 2})}, equation("ijk->kji")),
      DType::F32, {2, 3, 2},
      {-3, -1.5, -2.5, -1, -2, -0.5, 0.5, 2, 1, 2.5, 1.5, 3});
  requireValues(
      run("einsum", {ramp(DType::F32, {2, 2, 3})}, equation("iij->ij")),
      DType::F32, {2, 3}, {-3, 0.5, -2.5, 2.5, -0.5, 3});
}

TEST_CASE("einsum with ellipses", "[runtime][linalg]") {
  requireValues(
      run("einsum", {ramp(DType::F32, {2, 3, 3})}, equation("...ii->...i")),
      DType::F32, {2, 3}, {-3, -2, -1, 2.5, -3, -2});
  // The ellipsis broadcasts like matmul batch dims.
  Tensor y = run("einsum",
                 {ramp(DType::F32, {2, 1, 2, 3}), ramp(DType::F32, {3, 3, 2})},
                 equation("...ij,...jk->...ik"));
  Tensor ref = run(
      "matmul", {ramp(DType::F32, {2, 1, 2, 3}), ramp(DType::F32, {3, 3, 2})});
  requireValues(y, DType::F32, {2, 3, 2, 2}, ref.toDoubleVector());
}

TEST_CASE("einsum with several operands, outer products and integers",
          "[runtime][linalg]") {
  requireValues(run("einsum",
                    {ramp(DType::F32, {2, 3}), ramp(DType::F32, {3, 2}),
                     ramp(DType::F32, {2, 2})},
                    equation("ij,jk,kl->il")),
                DType::F32, {2, 2}, {-26.375, 1.625, 1.125, 0.25});
  requireValues(run("einsum", {ramp(DType::F32, {2}), ramp(DType::F32, {3})},
                    equation("i,j")),
                DType::F32, {2, 3}, {9, -1.5, 7.5, -1.5, 0.25, -1.25});
  requireValues(run("einsum",
                    {ramp(DType::I64, {2, 3}), ramp(DType::I64, {3, 2})},
                    equation("ij,jk->ik")),
                DType::I64, {2, 2}, {51, -19, -4, 3});
}

TEST_CASE("einsum rejects malformed equations", "[runtime][linalg]") {
  Tensor a = ramp(DType::F32, {2, 3});
  CHECK_FALSE(runStatus("einsum", {a}, equation("ij,jk->ik")).isOk());
  CHECK_FALSE(runStatus("einsum", {a}, equation("ijk->i")).isOk());
  CHECK_FALSE(runStatus("einsum", {a}, equation("i1->i")).isOk());
  CHECK_FALSE(runStatus("einsum", {a}, equation("ij->iz")).isOk());
  CHECK_FALSE(
      runStatus("einsum", {a, ramp(DType::F32, {4, 2})}, equation("ij,jk->ik"))
          .isOk());
  CHECK_FALSE(runStatus("einsum", {a}, Attributes()).isOk());
}
