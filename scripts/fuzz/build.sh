#!/usr/bin/env bash
#===- scripts/fuzz/build.sh - Build the libFuzzer harnesses ---------------===#
#
# Configures build-fuzz/ (override with KILN_FUZZ_BUILD_DIR) with clang,
# -fsanitize=fuzzer-no-link,address,undefined on everything Kiln compiles
# (not UBSan's vptr check: LLVM and MLIR are built without RTTI, so it
# reports every virtual call into their objects, e.g. kiln-opt hiding
# LLVM's cl::Options), and builds the four harnesses of test/fuzz as
# libFuzzer binaries (-DKILN_FUZZ=ON), and whatever other targets are named
# on the command line (scripts/sanitize.sh names the tools and unit tests).
# Needs clang and its runtime (scripts/setup.sh installs them).
# docs/reliability.md says how to run them.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${KILN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
cc="${KILN_FUZZ_CC:-clang}"
cxx="${KILN_FUZZ_CXX:-clang++}"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # As in scripts/build.sh: paths hashed relative to the checkout, so a
  # clean clone elsewhere (CI) reuses this one's objects.
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "${launcher[@]}" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DKILN_FUZZ=ON \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DPython3_EXECUTABLE="$root/.venv/bin/python3"
fi
ninja -C "$build" ${KILN_JOBS:+-j "$KILN_JOBS"} kiln-fuzz-onnx-import \
  kiln-fuzz-pipeline kiln-fuzz-npy kiln-fuzz-package-files "$@"
