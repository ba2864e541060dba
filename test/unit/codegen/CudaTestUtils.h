//===- CudaTestUtils.h - Helpers of the CUDA printer tests ------*- C++ -*-===//
//
// This file implements the regions the CUDA printer tests share: a test case
// (a fusion's name, kind, types and body) and builders of the softmax and
// layer norm regions at any shape and dtype.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_CODEGEN_CUDATESTUTILS_H
#define KILN_TEST_UNIT_CODEGEN_CUDATESTUTILS_H

#include "CodegenTestUtils.h"
#include "targets/cuda/CudaKernel.h"
#include "targets/cuda/NvrtcCompiler.h"

#include <string>
#include <vector>

namespace kiln {
namespace test {

/// One fusion region of a test.
struct CudaCase {
  std::string name, kind;
  std::vector<std::string> inTypes, outTypes;
  std::string body;
  float lo = -4.0f, hi = 4.0f; ///< the range of random inputs
};

/// The attributes of a keepdims reduction.
inline const char *const kKeep = "{keepdims = 1 : i64, noop_with_empty_axes = 0 : i64}";

/// A softmax over the last axis: `t` the input type, `r` the reduced type.
inline CudaCase softmax(const std::string &name, const std::string &t,
             const std::string &r) {
  return CudaCase{name,
              "reduction",
              {t},
              {t},
              "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n"
              "    %m = kiln.reduce_max %x0, %axes " +
                  std::string(kKeep) + " : (" + t + ", tensor<1xi64>) -> " + r +
                  "\n    %d = kiln.sub %x0, %m : (" + t + ", " + r + ") -> " +
                  t + "\n    %e = kiln.exp %d : (" + t + ") -> " + t +
                  "\n    %s = kiln.reduce_sum %e, %axes " + kKeep + " : (" +
                  t + ", tensor<1xi64>) -> " + r +
                  "\n    %y = kiln.div %e, %s : (" + t + ", " + r + ") -> " +
                  t + "\n    kiln.yield %y : " + t};
}

/// A layer norm over the last axis of a [rows, cols] tensor of `dt`, with
/// weight and bias inputs.
inline CudaCase layerNorm(const std::string &name, int64_t rows, int64_t cols,
                          const std::string &dt) {
  std::string t = "tensor<" + std::to_string(rows) + "x" +
                  std::to_string(cols) + "x" + dt + ">";
  std::string r = "tensor<" + std::to_string(rows) + "x1x" + dt + ">";
  std::string w = "tensor<" + std::to_string(cols) + "x" + dt + ">";
  std::string s = "tensor<" + dt + ">";
  std::string b =
      "    %axes = kiln.constant dense<-1> : tensor<1xi64>\n"
      "    %mean = kiln.reduce_mean %x0, %axes KEEP : (T, tensor<1xi64>) -> R\n"
      "    %d = kiln.sub %x0, %mean : (T, R) -> T\n"
      "    %sq = kiln.mul %d, %d : (T, T) -> T\n"
      "    %var = kiln.reduce_mean %sq, %axes KEEP : (T, tensor<1xi64>) -> R\n"
      "    %eps = kiln.constant dense<1.0e-05> : S\n"
      "    %v = kiln.add %var, %eps : (R, S) -> R\n"
      "    %sd = kiln.sqrt %v : (R) -> R\n"
      "    %n = kiln.div %d, %sd : (T, R) -> T\n"
      "    %g = kiln.mul %n, %x1 : (T, W) -> T\n"
      "    %y = kiln.add %g, %x2 : (T, W) -> T\n"
      "    kiln.yield %y : T";
  auto subst = [](std::string s, const std::string &from,
                  const std::string &to) {
    for (size_t p = s.find(from); p != std::string::npos;
         p = s.find(from, p + to.size()))
      s.replace(p, from.size(), to);
    return s;
  };
  b = subst(b, "KEEP", kKeep);
  b = subst(b, "T", t);
  b = subst(b, "R", r);
  b = subst(b, "W", w);
  b = subst(b, "S", s);
  return CudaCase{name, "reduction", {t, w, w}, {t}, b};
}

} // namespace test
} // namespace kiln

#endif // KILN_TEST_UNIT_CODEGEN_CUDATESTUTILS_H
