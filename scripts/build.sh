#!/usr/bin/env bash
#===- scripts/build.sh - Configure and build Kiln with CMake + ninja ------===#
#
# Builds everything into build/ (override with KILN_BUILD_DIR). Uses the
# Python of .venv, so run scripts/setup.sh first. Objects are cached by
# ccache when it is installed (scripts/setup.sh installs it).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
# ccache (when installed) keeps compiled objects between builds, also of
# other clones: paths under the checkout are hashed relative to it
# (CCACHE_BASEDIR, and no working directory in the hash), so a clean clone
# elsewhere (CI) hits the objects of this one. Nothing relies on __FILE__
# being absolute (the tests get KILN_TEST_SOURCE_DIR).
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DPython3_EXECUTABLE="$root/.venv/bin/python3"
fi
ninja -C "$build" ${KILN_JOBS:+-j "$KILN_JOBS"}
