#!/usr/bin/env bash
#===- scripts/sanitize.sh - Unit, lit and reference conformance under ASan -===#
#
# The sanitizer job (docs/reliability.md): builds the compiler, the runtime,
# the tools and the unit tests in build-fuzz/ (the folder scripts/fuzz/build.sh
# configures: clang, -fsanitize=address,undefined, UBSan fatal) and runs the
# unit tests, the lit tests and the reference-runtime conformance there with
# leak detection on. Any report fails the run.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
"$root/scripts/fuzz/build.sh"
ninja -C "$build" ${KILN_JOBS:+-j "$KILN_JOBS"} kiln kiln-opt kiln-runner \
  kiln-conformance kiln-runtime-tests kiln-compiler-tests kiln-codegen-tests
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure -R '^(unit\.(runtime|compiler|codegen)|lit|conformance\.reference)$' "$@"
