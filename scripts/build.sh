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
# ccache (when installed) keeps compiled objects between builds of this
# folder. No CCACHE_BASEDIR: it would make __FILE__ relative, and tests find
# their data through it.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DPython3_EXECUTABLE="$root/.venv/bin/python3"
fi
ninja -C "$build" ${KILN_JOBS:+-j "$KILN_JOBS"}
