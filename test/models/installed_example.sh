#!/usr/bin/env bash
#===- installed_example.sh - Kiln installed, then used as a library ------===#
#
# Installs the build into a fresh prefix (cmake --install), compiles
# examples/tiny_mlp.onnx with the installed kiln, builds examples/cpp with
# plain CMake against the prefix (find_package(Kiln) -> Kiln::runtime), and
# once more with pkg-config's flags, and runs both against the reference
# runtime's output. Nothing may come from the source or build tree.
#
#   usage: installed_example.sh BUILD_DIR SOURCE_DIR WORK_DIR [CXX]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
build=$1 src=$2 work=$3 cxx=${4:-c++}
rm -rf "$work" && mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in bin/kiln bin/kiln-runner lib/libkiln_runtime.so \
    include/kiln/runtime/Model.h lib/cmake/Kiln/KilnConfig.cmake \
    lib/pkgconfig/kiln.pc; do
  [[ -e "$prefix/$f" ]] || { echo "not installed: $f" >&2; exit 1; }
done
# The installed kiln compiles against the installed headers (not the
# source tree's): a copy of the prefix elsewhere whose ModelABI.h is broken
# must fail on that header, from wherever the copy lies (the manifest names
# no folder of this machine, so the headers are proved by their use).
KILN_RUNTIME_INCLUDE= "$prefix/bin/kiln" compile "$src/examples/tiny_mlp.onnx" \
  --dim batch=4 -o "$work/tiny_mlp"
cp -r "$prefix" "$work/moved"
echo '#error "the moved prefix headers"' >> "$work/moved/include/kiln/runtime/ModelABI.h"
if KILN_RUNTIME_INCLUDE= "$work/moved/bin/kiln" compile "$src/examples/tiny_mlp.onnx" \
    --dim batch=4 -o "$work/moved-pkg" 2> "$work/moved.log"; then
  echo "a kiln whose installed headers are broken still compiled" >&2
  exit 1
fi
grep -q "the moved prefix headers" "$work/moved.log" || {
  echo "the moved kiln did not compile against its own headers:" >&2
  cat "$work/moved.log" >&2
  exit 1
}
"$prefix/bin/kiln" run "$src/examples/tiny_mlp.onnx" \
  --input "x=$src/examples/tiny_mlp_x.npy" -o "$work/reference" > /dev/null
# CMake, find_package(Kiln).
cmake -S "$src/examples/cpp" -B "$work/example" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DKILN_PACKAGE="$work/tiny_mlp" > "$work/cmake.log"
cmake --build "$work/example" > "$work/build.log"
"$work/example/kiln-example-tiny-mlp" "$work/tiny_mlp" \
  "$src/examples/tiny_mlp_x.npy" "$work/reference/y.npy"
# pkg-config.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
"$cxx" -std=c++17 -O2 -I "$work/tiny_mlp" "$src/examples/cpp/main.cpp" \
  -L "$work/tiny_mlp" -ltiny_mlp $(pkg-config --cflags --libs kiln) \
  -Wl,-rpath,"$work/tiny_mlp" -o "$work/example-pc"
"$work/example-pc" "$work/tiny_mlp" "$src/examples/tiny_mlp_x.npy" \
  "$work/reference/y.npy"
echo "installed example: OK"
