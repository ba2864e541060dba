#!/usr/bin/env bash
#===- scripts/test.sh - Install, build, and run every Kiln test -----------===#
#
# Unit tests (Catch2), lit + FileCheck tests, the ONNX node-test conformance
# runner and the model tests, through ctest. GPU tests (label gpu) are
# excluded here; run them on a GPU machine with `ctest -L gpu`.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${KILN_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -LE gpu "$@"
