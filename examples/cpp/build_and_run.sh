#!/usr/bin/env bash
#===- build_and_run.sh - Compile tiny_mlp, build and run the C++ example --===#
#
# Compiles examples/tiny_mlp.onnx with `kiln compile --dim batch=4`, runs the
# reference runtime (`kiln run`) for the expected output, builds
# examples/cpp/main.cpp against the package's tiny_mlp.h, libtiny_mlp.so and
# libkiln_runtime.so, and runs it; it fails when the outputs differ.
#
#   usage: build_and_run.sh KILN KILN_SOURCE_DIR RUNTIME_LIB_DIR WORK_DIR [CXX]
#
#===----------------------------------------------------------------------===#

set -euo pipefail
kiln=$1 src=$2 rtlib=$3 work=$4 cxx=${5:-c++}

rm -rf "$work" && mkdir -p "$work"
"$kiln" compile "$src/examples/tiny_mlp.onnx" -o "$work/tiny_mlp" --dim batch=4
"$kiln" run "$src/examples/tiny_mlp.onnx" \
  --input "x=$src/examples/tiny_mlp_x.npy" -o "$work/reference"
"$cxx" -std=c++17 -O2 -I "$work/tiny_mlp" -I "$src/runtime/include" \
  "$src/examples/cpp/main.cpp" -L "$work/tiny_mlp" -ltiny_mlp \
  -L "$rtlib" -lkiln_runtime \
  -Wl,-rpath,"$rtlib" -Wl,-rpath,"$work/tiny_mlp" -o "$work/example"
"$work/example" "$work/tiny_mlp" "$src/examples/tiny_mlp_x.npy" \
  "$work/reference/y.npy"
