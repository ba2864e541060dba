//===- SplitRecurrentTest.cpp - kiln-split-recurrent keeps the values ===//
//
// This file implements the numeric test of passes/SplitRecurrent.cpp
// and of the recurrence ops' reference kernels: a GRU (linear_before_reset
// = 1) and a bidirectional LSTM with peepholes, both batch first (layout 1,
// so the split adds transposes), a GRU with linear_before_reset = 0 and a
// reverse LSTM with short sequences (the lengths go to the recurrence), run
// through the reference executor before and after kiln-split-recurrent,
// and the results agree; the pass leaves no kiln.gru or kiln.lstm. The
// recurrence kernels themselves are checked emulated against these reference
// kernels (CudaOpKernelTest.cpp) and on the GPU by the node tests.
//
//===----------------------------------------------------------------------===//

#include "ReferenceRun.h"
#include "passes/Passes.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

/// Checks that the split keeps `ir`'s values on random inputs of `shapes`
/// and leaves one recurrence op and no kiln.gru or kiln.lstm.
void checkSplit(const char *ir,
                const std::vector<std::pair<std::string, Shape>> &shapes) {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = test::checkPassKeepsValues(
      ctx, ir, shapes, createSplitRecurrentPass(), 5);
  CHECK(test::countOps(*module, {"kiln.gru", "kiln.lstm"}) == 0);
  CHECK(test::countOps(*module,
                       {"kiln.gru_recurrence", "kiln.lstm_recurrence"}) == 1);
}

} // namespace

TEST_CASE("kiln-split-recurrent keeps a batch-first GRU's values",
          "[passes]") {
  checkSplit(R"mlir(
func.func @main(%x: tensor<3x4x5xf32> {kiln.name = "x"},
                %w: tensor<1x18x5xf32> {kiln.name = "w"},
                %r: tensor<1x18x6xf32> {kiln.name = "r"},
                %b: tensor<1x36xf32> {kiln.name = "b"},
                %h0: tensor<3x1x6xf32> {kiln.name = "h0"})
    -> (tensor<3x4x1x6xf32> {kiln.name = "y"}, tensor<3x1x6xf32> {kiln.name = "yh"})
    attributes {kiln.graph} {
  %len = kiln.constant dense<4> : tensor<3xi32>
  %y, %yh = kiln.gru %x, %w, %r, %b, %len, %h0 {clip = 0.000000e+00 : f32, direction = "forward", hidden_size = 6 : i64, layout = 1 : i64, linear_before_reset = 1 : i64} : (tensor<3x4x5xf32>, tensor<1x18x5xf32>, tensor<1x18x6xf32>, tensor<1x36xf32>, tensor<3xi32>, tensor<3x1x6xf32>) -> (tensor<3x4x1x6xf32>, tensor<3x1x6xf32>)
  return %y, %yh : tensor<3x4x1x6xf32>, tensor<3x1x6xf32>
})mlir",
             {{"x", {3, 4, 5}},
              {"w", {1, 18, 5}},
              {"r", {1, 18, 6}},
              {"b", {1, 36}},
              {"h0", {3, 1, 6}}});
}

TEST_CASE("kiln-split-recurrent keeps a bidirectional LSTM's values",
          "[passes]") {
  checkSplit(R"mlir(
func.func @main(%x: tensor<2x3x4xf32> {kiln.name = "x"},
                %w: tensor<2x20x4xf32> {kiln.name = "w"},
                %r: tensor<2x20x5xf32> {kiln.name = "r"},
                %b: tensor<2x40xf32> {kiln.name = "b"},
                %h0: tensor<2x2x5xf32> {kiln.name = "h0"},
                %c0: tensor<2x2x5xf32> {kiln.name = "c0"},
                %p: tensor<2x15xf32> {kiln.name = "p"})
    -> (tensor<2x3x2x5xf32> {kiln.name = "y"}, tensor<2x2x5xf32> {kiln.name = "yh"},
        tensor<2x2x5xf32> {kiln.name = "yc"})
    attributes {kiln.graph} {
  %len = kiln.constant dense<3> : tensor<2xi32>
  %y, %yh, %yc = kiln.lstm %x, %w, %r, %b, %len, %h0, %c0, %p {clip = 0.000000e+00 : f32, direction = "bidirectional", hidden_size = 5 : i64, input_forget = 0 : i64, layout = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x20x4xf32>, tensor<2x20x5xf32>, tensor<2x40xf32>, tensor<2xi32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x15xf32>) -> (tensor<2x3x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  return %y, %yh, %yc : tensor<2x3x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>
})mlir",
             {{"x", {2, 3, 4}},
              {"w", {2, 20, 4}},
              {"r", {2, 20, 5}},
              {"b", {2, 40}},
              {"h0", {2, 2, 5}},
              {"c0", {2, 2, 5}},
              {"p", {2, 15}}});
}

TEST_CASE("kiln-split-recurrent keeps the values of a GRU with "
          "linear_before_reset = 0 and short sequences",
          "[passes]") {
  // Bidirectional, one entry of length 0: the lengths go to the recurrence.
  checkSplit(R"mlir(
func.func @main(%x: tensor<4x3x5xf32> {kiln.name = "x"},
                %w: tensor<2x18x5xf32> {kiln.name = "w"},
                %r: tensor<2x18x6xf32> {kiln.name = "r"},
                %b: tensor<2x36xf32> {kiln.name = "b"},
                %h0: tensor<2x3x6xf32> {kiln.name = "h0"})
    -> (tensor<4x2x3x6xf32> {kiln.name = "y"}, tensor<2x3x6xf32> {kiln.name = "yh"})
    attributes {kiln.graph} {
  %len = kiln.constant dense<[4, 0, 2]> : tensor<3xi32>
  %y, %yh = kiln.gru %x, %w, %r, %b, %len, %h0 {clip = 0.000000e+00 : f32, direction = "bidirectional", hidden_size = 6 : i64, layout = 0 : i64, linear_before_reset = 0 : i64} : (tensor<4x3x5xf32>, tensor<2x18x5xf32>, tensor<2x18x6xf32>, tensor<2x36xf32>, tensor<3xi32>, tensor<2x3x6xf32>) -> (tensor<4x2x3x6xf32>, tensor<2x3x6xf32>)
  return %y, %yh : tensor<4x2x3x6xf32>, tensor<2x3x6xf32>
})mlir",
             {{"x", {4, 3, 5}},
              {"w", {2, 18, 5}},
              {"r", {2, 18, 6}},
              {"b", {2, 36}},
              {"h0", {2, 3, 6}}});
}

TEST_CASE("kiln-split-recurrent keeps a reverse LSTM's values with "
          "short sequences",
          "[passes]") {
  checkSplit(R"mlir(
func.func @main(%x: tensor<2x3x4xf32> {kiln.name = "x"},
                %w: tensor<1x20x4xf32> {kiln.name = "w"},
                %r: tensor<1x20x5xf32> {kiln.name = "r"},
                %b: tensor<1x40xf32> {kiln.name = "b"},
                %h0: tensor<2x1x5xf32> {kiln.name = "h0"},
                %c0: tensor<2x1x5xf32> {kiln.name = "c0"},
                %p: tensor<1x15xf32> {kiln.name = "p"})
    -> (tensor<2x3x1x5xf32> {kiln.name = "y"}, tensor<2x1x5xf32> {kiln.name = "yh"},
        tensor<2x1x5xf32> {kiln.name = "yc"})
    attributes {kiln.graph} {
  %len = kiln.constant dense<[1, 3]> : tensor<2xi32>
  %y, %yh, %yc = kiln.lstm %x, %w, %r, %b, %len, %h0, %c0, %p {clip = 0.000000e+00 : f32, direction = "reverse", hidden_size = 5 : i64, input_forget = 0 : i64, layout = 1 : i64} : (tensor<2x3x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>, tensor<2xi32>, tensor<2x1x5xf32>, tensor<2x1x5xf32>, tensor<1x15xf32>) -> (tensor<2x3x1x5xf32>, tensor<2x1x5xf32>, tensor<2x1x5xf32>)
  return %y, %yh, %yc : tensor<2x3x1x5xf32>, tensor<2x1x5xf32>, tensor<2x1x5xf32>
})mlir",
             {{"x", {2, 3, 4}},
              {"w", {1, 20, 4}},
              {"r", {1, 20, 5}},
              {"b", {1, 40}},
              {"h0", {2, 1, 5}},
              {"c0", {2, 1, 5}},
              {"p", {1, 15}}});
}
