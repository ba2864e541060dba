//===- SafeTensorsTest.cpp - Tests of the safetensors reader and writer ---===//
//
// This file implements the unit tests of kiln/runtime/SafeTensors.h: round
// trips of every dtype (bf16 and f16 by their bits, a rank-0 and an empty
// tensor, a strided view), the metadata, the byte layout of a written file,
// writer errors (repeated and reserved names), and a dozen corrupted files
// (truncated, a header length past the end or over the cap, bad JSON,
// unknown dtypes, negative or overflowing shapes, data_offsets out of
// range, overlapping or not matching the shape), each an error naming the
// file and, where there is one, the tensor.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/SafeTensors.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace kiln;
namespace fs = std::filesystem;

namespace {

/// A temporary folder removed with its contents on destruction.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("kiln-safetensors-test-" + std::to_string(getpid()) + "-" +
            std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void writeBytes(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A safetensors file: the 8-byte length of `header`, `header`, `data`.
std::string safetensorsBytes(const std::string &header,
                             const std::string &data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

/// The bytes of a tensor (contiguous CPU).
std::string tensorBytes(const Tensor &t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char *>(c.rawData()), c.nbytes());
}

/// Reads `bytes` written to a file, expecting an error containing the file
/// name and each of `parts`.
void requireReadError(const std::string &bytes,
                      const std::vector<std::string> &parts) {
  TempDir dir;
  fs::path file = dir.path / "bad.safetensors";
  writeBytes(file, bytes);
  Expected<NamedTensors> r = readSafeTensors(file.string());
  REQUIRE_FALSE(r.isOk());
  std::string message = r.status().message();
  INFO(message);
  CHECK(message.rfind(file.string() + ": ", 0) == 0);
  for (const std::string &part : parts)
    CHECK(message.find(part) != std::string::npos);
}

} // namespace

TEST_CASE("safetensors round trips every dtype", "[safetensors]") {
  TempDir dir;
  fs::path file = dir.path / "all.safetensors";
  Tensor bf16 = Tensor::empty(DType::BF16, {3});
  Tensor f16 = Tensor::empty(DType::F16, {2});
  for (int i = 0; i < 3; ++i)
    bf16.data<BFloat16>()[i] = BFloat16(1.5f * static_cast<float>(i) - 2.f);
  f16.data<Half>()[0] = Half(0.25f);
  f16.data<Half>()[1] = Half(-3.0f);
  NamedTensors tensors = {
      {"f32", Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})},
      {"f16", f16},
      {"bf16", bf16},
      {"f64", Tensor::fromVector<double>({1e300, -2.5}, {2, 1})},
      {"i64", Tensor::fromVector<int64_t>({INT64_MIN, 7, INT64_MAX}, {3})},
      {"i32", Tensor::fromVector<int32_t>({-1, 2}, {1, 2})},
      {"i8", Tensor::fromVector<int8_t>({-128, 127, 0}, {3})},
      {"u8", Tensor::fromVector<uint8_t>({255, 1}, {2})},
      {"bool", Tensor::fromVector<bool>({true, false, true}, {3})},
      {"scalar", Tensor::scalar<float>(42.5f)},
      {"empty", Tensor::empty(DType::F32, {0, 4})},
      // A transposed view: written contiguous.
      {"strided",
       Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).permute({1, 0})},
  };
  REQUIRE(writeSafeTensors(file.string(), tensors).isOk());
  Expected<NamedTensors> back = readSafeTensors(file.string());
  INFO((back ? std::string() : back.status().message()));
  REQUIRE(back.isOk());
  REQUIRE(back->size() == tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    INFO(tensors[i].first);
    CHECK((*back)[i].first == tensors[i].first);
    const Tensor &got = (*back)[i].second;
    CHECK(got.typeString() == tensors[i].second.typeString());
    CHECK(got.isContiguous());
    CHECK(tensorBytes(got) == tensorBytes(tensors[i].second));
  }
  CHECK((*back)[9].second.rank() == 0);
  CHECK((*back)[9].second.getDouble(0) == 42.5);
  CHECK((*back)[11].second.toDoubleVector() ==
        std::vector<double>{1, 4, 2, 5, 3, 6});
  // No temporary file is left behind.
  CHECK(std::distance(fs::directory_iterator(dir.path),
                      fs::directory_iterator()) == 1);
}

TEST_CASE("safetensors metadata and layout", "[safetensors]") {
  TempDir dir;
  fs::path file = dir.path / "meta.safetensors";
  std::map<std::string, std::string> meta = {{"format", "kiln-training"},
                                             {"optimizer", "adamw"}};
  NamedTensors tensors = {{"b", Tensor::fromVector<float>({1, 2}, {2})},
                          {"a", Tensor::scalar<int64_t>(3)}};
  REQUIRE(writeSafeTensors(file.string(), tensors, meta).isOk());
  std::map<std::string, std::string> got = {{"stale", "x"}};
  Expected<NamedTensors> back = readSafeTensors(file.string(), &got);
  REQUIRE(back.isOk());
  CHECK(got == meta);
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].first == "b");
  CHECK((*back)[1].first == "a");

  // The header is padded to 8 bytes; the data follows it back to back.
  std::string bytes = readBytes(file);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  CHECK(n % 8 == 0);
  CHECK(bytes.size() == 8 + n + 8 + 8);
  std::string header = bytes.substr(8, n);
  CHECK(header.find("\"__metadata__\":{\"format\":\"kiln-training\"") !=
        std::string::npos);
  CHECK(header.find("\"b\":{\"dtype\":\"F32\",\"shape\":[2],"
                    "\"data_offsets\":[0,8]}") != std::string::npos);
  CHECK(header.find("\"a\":{\"dtype\":\"I64\",\"shape\":[],"
                    "\"data_offsets\":[8,16]}") != std::string::npos);

  SECTION("a file without metadata reads an empty map") {
    REQUIRE(writeSafeTensors(file.string(), tensors).isOk());
    REQUIRE(readSafeTensors(file.string(), &got).isOk());
    CHECK(got.empty());
  }
  SECTION("a hand-written file with unordered offsets and a gap") {
    std::string data(24, '\0');
    float one = 1.0f, two = 2.0f;
    std::memcpy(&data[16], &one, 4);
    std::memcpy(&data[0], &two, 4);
    writeBytes(file, safetensorsBytes(
                         R"({"x": {"dtype": "F32", "shape": [1],
                                   "data_offsets": [16, 20]},
                             "y": {"dtype": "F32", "shape": [],
                                   "data_offsets": [0, 4]}})",
                         data));
    Expected<NamedTensors> r = readSafeTensors(file.string());
    REQUIRE(r.isOk());
    REQUIRE(r->size() == 2);
    CHECK((*r)[0].first == "y"); // in the order of the data
    CHECK((*r)[0].second.getDouble(0) == 2.0);
    CHECK((*r)[1].second.getDouble(0) == 1.0);
  }
}

TEST_CASE("writeSafeTensors errors", "[safetensors]") {
  TempDir dir;
  std::string file = (dir.path / "w.safetensors").string();
  Tensor x = Tensor::scalar<float>(1);
  Status s = writeSafeTensors(file, {{"x", x}, {"x", x}});
  REQUIRE_FALSE(s.isOk());
  CHECK(s.message() == file + ": tensor 'x': given more than once");
  s = writeSafeTensors(file, {{"__metadata__", x}});
  CHECK(s.message() == file + ": tensor '__metadata__': the name is reserved");
  s = writeSafeTensors(file, {{"u", Tensor()}});
  CHECK(s.message() == file + ": tensor 'u': no tensor given");
  CHECK_FALSE(fs::exists(file));
  s = writeSafeTensors((dir.path / "no" / "such" / "w.safetensors").string(),
                       {{"x", x}});
  REQUIRE_FALSE(s.isOk());
  CHECK(s.message().find("cannot open") != std::string::npos);
}

TEST_CASE("Corrupted safetensors files are errors, not crashes",
          "[safetensors]") {
  const std::string f32x2 = std::string(8, '\0');
  auto one = [](const std::string &entry) {
    return std::string("{\"t\": ") + entry + "}";
  };

  SECTION("missing file") {
    Expected<NamedTensors> r = readSafeTensors("/nonexistent/x.safetensors");
    REQUIRE_FALSE(r.isOk());
    CHECK(r.status().message().find("/nonexistent/x.safetensors: cannot "
                                    "open") == 0);
  }
  SECTION("shorter than the length") {
    requireReadError("abc", {"is 3 bytes, too short"});
  }
  SECTION("a header length past the end of the file") {
    std::string bytes = safetensorsBytes("{}", "");
    bytes[0] = 100;
    requireReadError(bytes, {"the header length is 100 bytes but the file has "
                             "only 2 after it"});
    std::string huge(8, '\xff');
    requireReadError(huge, {"the header length is 18446744073709551615"});
  }
  SECTION("a header length over the cap") {
    TempDir dir;
    fs::path file = dir.path / "big.safetensors";
    {
      std::ofstream out(file, std::ios::binary);
      uint64_t n = kSafeTensorsMaxHeaderBytes + 8;
      char length[8];
      for (int i = 0; i < 8; ++i)
        length[i] = static_cast<char>((n >> (8 * i)) & 0xff);
      out.write(length, 8);
    }
    fs::resize_file(file, kSafeTensorsMaxHeaderBytes + 16); // sparse
    Expected<NamedTensors> r = readSafeTensors(file.string());
    REQUIRE_FALSE(r.isOk());
    CHECK(r.status().message().find("more than the 104857600 this reader "
                                    "accepts") != std::string::npos);
  }
  SECTION("JSON errors") {
    requireReadError(safetensorsBytes("{\"t\": ", ""),
                     {"the header is not valid JSON"});
    requireReadError(safetensorsBytes("[1, 2]", ""),
                     {"the header is not a JSON object"});
    requireReadError(safetensorsBytes(one("3"), ""),
                     {"tensor 't': expected an object"});
    requireReadError(safetensorsBytes(R"({"__metadata__": {"a": 1}})", ""),
                     {"'__metadata__' entry 'a' is not a string"});
  }
  SECTION("dtypes") {
    requireReadError(
        safetensorsBytes(
            one(R"({"dtype": "C64", "shape": [1], "data_offsets": [0, 8]})"),
            "xxxxxxxx"),
        {"tensor 't': unsupported dtype 'C64'"});
    requireReadError(
        safetensorsBytes(one(R"({"shape": [1], "data_offsets": [0, 4]})"),
                         "xxxx"),
        {"tensor 't': missing 'dtype'"});
  }
  SECTION("shapes") {
    requireReadError(
        safetensorsBytes(
            one(R"({"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]})"),
            "xxxx"),
        {"tensor 't': 'shape' [-1] has a dimension that is not a "
         "non-negative integer"});
    requireReadError(
        safetensorsBytes(one(R"({"dtype": "F32", "shape": [4294967296,
                                  4294967296], "data_offsets": [0, 4]})"),
                         "xxxx"),
        {"tensor 't'", "the element count overflows"});
    requireReadError(
        safetensorsBytes(one(R"({"dtype": "F64", "shape": [4611686018427387904],
                                  "data_offsets": [0, 4]})"),
                         "xxxx"),
        {"tensor 't'", "the byte size overflows"});
    requireReadError(
        safetensorsBytes(one(R"({"dtype": "F32", "data_offsets": [0, 4]})"),
                         "xxxx"),
        {"tensor 't': missing 'shape'"});
  }
  SECTION("data offsets") {
    requireReadError(
        safetensorsBytes(
            one(R"({"dtype": "F32", "shape": [2], "data_offsets": [0, 16]})"),
            f32x2),
        {"tensor 't': data_offsets [0, 16] are outside the data buffer of 8 "
         "bytes"});
    requireReadError(
        safetensorsBytes(
            one(R"({"dtype": "F32", "shape": [2], "data_offsets": [8, 0]})"),
            f32x2),
        {"tensor 't': data_offsets [8, 0] are outside"});
    requireReadError(
        safetensorsBytes(
            one(R"({"dtype": "F32", "shape": [4], "data_offsets": [0, 8]})"),
            f32x2),
        {"tensor 't': data_offsets [0, 8] hold 8 bytes but f32[4] needs 16"});
    requireReadError(safetensorsBytes(one(R"({"dtype": "F32", "shape": [2],
                                  "data_offsets": [0]})"),
                                      f32x2),
                     {"tensor 't': missing 'data_offsets'"});
    requireReadError(
        safetensorsBytes(R"({"a": {"dtype": "F32", "shape": [1],
                                   "data_offsets": [0, 4]},
                             "b": {"dtype": "F32", "shape": [1],
                                   "data_offsets": [2, 6]}})",
                         f32x2),
        {"tensor 'b': data_offsets [2, 6] overlap those of tensor 'a' [0, 4]"});
  }
  SECTION("a truncated data buffer") {
    TempDir dir;
    fs::path file = dir.path / "t.safetensors";
    REQUIRE(writeSafeTensors(file.string(),
                             {{"w", Tensor::empty(DType::F32, {16})}})
                .isOk());
    fs::resize_file(file, fs::file_size(file) - 4);
    Expected<NamedTensors> r = readSafeTensors(file.string());
    REQUIRE_FALSE(r.isOk());
    CHECK(r.status().message().find("tensor 'w': data_offsets [0, 64] are "
                                    "outside the data buffer of 60 bytes") !=
          std::string::npos);
  }
}
