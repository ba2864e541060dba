#!/usr/bin/env bash
#===- scripts/build.sh - Configure and build Kiln with CMake + ninja ------===#
#
# Builds everything into build/ (override with KILN_BUILD_DIR). Uses the
# Python of .venv, so run scripts/setup.sh first.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DPython3_EXECUTABLE="$root/.venv/bin/python3"
fi
ninja -C "$build" ${KILN_JOBS:+-j "$KILN_JOBS"}
