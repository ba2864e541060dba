#!/usr/bin/env bash
#===- package_api.sh - Packages used as libraries from C++ ---------------===#
#
# Compiles the tiny MLP and a small CNN (make_small_cnn.py) into packages,
# runs the reference runtime for their expected outputs, then builds and
# runs one C++ test program:
#   two-packages   both packages linked into one program through their
#                  headers (two_packages.cpp)
#   single-kernel  one generated kernel of the tiny MLP called on its own
#                  (single_kernel.cpp)
#   sized          the tiny MLP compiled without --dim (batch 1..64) run
#                  through its header at batch 1, 7 and 64 (sized_run.cpp)
#
#   usage: package_api.sh CASE KILN KILN_SOURCE_DIR RUNTIME_LIB_DIR WORK PYTHON
#                         [CXX]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
case=$1 kiln=$2 src=$3 rtlib=$4 work=$5 py=$6 cxx=${7:-c++}
here="$src/test/models/package_api"

rm -rf "$work" && mkdir -p "$work"
"$kiln" compile "$src/examples/tiny_mlp.onnx" -o "$work/tiny_mlp" \
  --dim batch=4 > /dev/null
"$kiln" run "$src/examples/tiny_mlp.onnx" \
  --input "x=$src/examples/tiny_mlp_x.npy" -o "$work/mlp-ref" > /dev/null
flags=(-std=c++17 -O2 -I "$here" -I "$src/runtime/include" -I "$work/tiny_mlp")
libs=(-L "$work/tiny_mlp" -ltiny_mlp -L "$rtlib" -lkiln_runtime
      -Wl,-rpath,"$rtlib" -Wl,-rpath,"$work/tiny_mlp")

case "$case" in
two-packages)
  "$py" "$here/make_small_cnn.py" "$work"
  "$kiln" compile "$work/small_cnn.onnx" -o "$work/small_cnn" > /dev/null
  "$kiln" run "$work/small_cnn.onnx" --input "x=$work/x.npy" \
    -o "$work/cnn-ref" > /dev/null
  "$cxx" "${flags[@]}" -I "$work/small_cnn" "$here/two_packages.cpp" \
    -L "$work/small_cnn" -lsmall_cnn -Wl,-rpath,"$work/small_cnn" \
    "${libs[@]}" -o "$work/two_packages"
  "$work/two_packages" "$work/tiny_mlp" "$src/examples/tiny_mlp_x.npy" \
    "$work/mlp-ref/y.npy" "$work/small_cnn" "$work/x.npy" \
    "$work/cnn-ref/logits.npy"
  ;;
single-kernel)
  "$cxx" "${flags[@]}" "$here/single_kernel.cpp" "${libs[@]}" \
    -o "$work/single_kernel"
  "$work/single_kernel" "$work/tiny_mlp" "$src/examples/tiny_mlp_x.npy"
  ;;
sized)
  "$kiln" compile "$src/examples/tiny_mlp.onnx" -o "$work/tiny_mlp" \
    > /dev/null
  args=()
  for b in 1 7 64; do
    "$py" -c "import numpy as n, sys; n.save(sys.argv[1], n.random.default_rng($b).standard_normal(($b, 16)).astype(n.float32))" "$work/x$b.npy"
    mkdir -p "$work/ref$b"
    "$kiln" run "$src/examples/tiny_mlp.onnx" --input "x=$work/x$b.npy" \
      -o "$work/ref$b" > /dev/null
    args+=("$work/x$b.npy" "$work/ref$b/y.npy")
  done
  "$cxx" "${flags[@]}" "$here/sized_run.cpp" "${libs[@]}" -o "$work/sized_run"
  "$work/sized_run" "$work/tiny_mlp" "${args[@]}"
  ;;
*)
  echo "package_api.sh: unknown case '$case'" >&2
  exit 2
  ;;
esac
