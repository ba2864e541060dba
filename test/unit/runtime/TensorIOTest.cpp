//===- TensorIOTest.cpp - Tests of the .npy reader and writer -------------===//
//
// This file implements the unit tests of TensorIO: round trips of every
// supported dtype, header versions 1.0 and 2.0, Fortran order, and the
// errors for bad magic, truncation, unsupported dtypes and bf16 on write.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/TensorIO.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace kiln;

namespace {

std::string tempPath(const std::string &name) {
  return strCat("/tmp/kiln-npy-test-", getpid(), "-", name);
}

/// Builds .npy bytes with the given header dictionary and payload.
std::string npyBytes(const std::string &dict, const std::string &payload,
                     int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  uint32_t len = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + header + payload;
}

template <typename T> std::string raw(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()),
                     v.size() * sizeof(T));
}

} // namespace

TEST_CASE("npy round trip of every numpy dtype", "[npy]") {
  std::string path = tempPath("rt.npy");
  std::vector<Tensor> tensors = {
      Tensor::fromVector<float>({1.5f, -2, 3, 4, 5, 6}, {2, 3}),
      Tensor::fromVector<double>({1e300, -0.5}, {2}),
      Tensor::fromVector<float>({1, 2, 3}, {3}).to(DType::F16),
      Tensor::fromVector<int64_t>({1LL << 40, -3}, {2, 1}),
      Tensor::fromVector<int32_t>({7}, {}),
      Tensor::fromVector<int8_t>({-1, 2}, {1, 2}),
      Tensor::fromVector<uint8_t>({255, 0}, {2}),
      Tensor::fromVector<bool>({true, false, true}, {3}),
      Tensor::empty(DType::F32, {0, 4}),
  };
  for (const Tensor &t : tensors) {
    INFO(t.typeString());
    REQUIRE(writeNpy(path, t).isOk());
    Expected<Tensor> back = readNpy(path);
    REQUIRE(back.isOk());
    CHECK(back->typeString() == t.typeString());
    CHECK(back->toDoubleVector() == t.toDoubleVector());
  }
  // A non-contiguous tensor is written in logical order.
  Tensor p = Tensor::fromVector<float>({1, 2, 3, 4}, {2, 2}).permute({1, 0});
  REQUIRE(writeNpy(path, p).isOk());
  CHECK(readNpy(path)->toDoubleVector() == std::vector<double>{1, 3, 2, 4});
  // The data starts at a multiple of 64 bytes.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  CHECK(bytes.size() % 64 == 16);
  CHECK(std::ifstream(path + ".tmp").fail()); // No leftover temp file.
  std::remove(path.c_str());
}

TEST_CASE("npy header versions and Fortran order", "[npy]") {
  std::string payload = raw<float>({1, 2, 3, 4, 5, 6});
  auto v2 = parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (2, 3), }",
                              payload, 2),
                     "v2");
  REQUIRE(v2.isOk());
  CHECK(v2->shape() == Shape{2, 3});
  auto v3 = parseNpy(npyBytes("{\"descr\": \"<f4\", \"fortran_order\": "
                              "False, \"shape\": (6,)}",
                              payload, 3),
                     "v3");
  REQUIRE(v3.isOk());
  CHECK(v3->shape() == Shape{6});
  // Fortran order: column-major data of a 2x3 array.
  auto f = parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': True, "
                             "'shape': (2, 3), }",
                             payload),
                    "fortran");
  REQUIRE(f.isOk());
  CHECK(f->isContiguous());
  CHECK(f->toDoubleVector() == std::vector<double>{1, 3, 5, 2, 4, 6});
  auto i1 = parseNpy(
      npyBytes("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }",
               raw<int8_t>({-5, 5})),
      "i1");
  REQUIRE(i1.isOk());
  CHECK(i1->toIntVector() == std::vector<int64_t>{-5, 5});
}

TEST_CASE("npy errors name the file and the problem", "[npy]") {
  auto bad = parseNpy("PK\x03\x04 not numpy", "weights.npy");
  REQUIRE(!bad);
  CHECK_THAT(bad.status().message(),
             Catch::Contains("weights.npy") && Catch::Contains("magic"));

  std::string good =
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
               raw<float>({1, 2, 3, 4, 5, 6}));
  auto trunc = parseNpy(good.substr(0, good.size() - 4), "x.npy");
  REQUIRE(!trunc);
  CHECK_THAT(trunc.status().message(), Catch::Contains("truncated"));
  auto truncHeader = parseNpy(good.substr(0, 30), "x.npy");
  REQUIRE(!truncHeader);
  CHECK_THAT(truncHeader.status().message(), Catch::Contains("truncated"));

  auto complex = parseNpy(
      npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
               std::string(8, '\0')),
      "c.npy");
  REQUIRE(!complex);
  CHECK_THAT(complex.status().message(),
             Catch::Contains("unsupported dtype") && Catch::Contains("<c8"));
  auto big = parseNpy(
      npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
               std::string(4, '\0')),
      "b.npy");
  REQUIRE(!big);
  CHECK_THAT(big.status().message(), Catch::Contains("big-endian"));
  auto version = parseNpy(npyBytes("{}", "", 4), "v.npy");
  REQUIRE(!version);
  CHECK_THAT(version.status().message(), Catch::Contains("version"));

  auto missing = readNpy("/nonexistent/dir/file.npy");
  REQUIRE(!missing);
  CHECK_THAT(missing.status().message(),
             Catch::Contains("/nonexistent/dir/file.npy"));

}

TEST_CASE("bf16 .npy files use ml_dtypes' descr <V2 both ways", "[tensorio]") {
  // NumPy has no bfloat16; ml_dtypes saves its bfloat16 as a 2-byte void.
  std::string path = tempPath("bf16.npy");
  Tensor t = Tensor::empty(DType::BF16, {3});
  const uint16_t bits[3] = {0x3f80, 0xc000, 0x7fc0}; // 1, -2, NaN
  std::memcpy(t.rawData(), bits, sizeof(bits));
  REQUIRE(writeNpy(path, t));
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  CHECK(bytes.find("'descr': '<V2'") != std::string::npos);
  auto back = readNpy(path);
  REQUIRE(back);
  CHECK(back->dtype() == DType::BF16);
  CHECK(back->shape() == Shape{3});
  CHECK(std::memcmp(back->rawData(), bits, sizeof(bits)) == 0);
  auto other = parseNpy(npyBytes("{'descr': '<V4', 'fortran_order': False, "
                                 "'shape': (1,), }",
                                 std::string(4, '\0')),
                        "v4.npy");
  REQUIRE(!other);
  CHECK_THAT(other.status().message(), Catch::Contains("<V2 for bfloat16"));
}
