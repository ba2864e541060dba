#!/usr/bin/env bash
#===- scripts/test.sh - Install, build, and run every Kiln test -----------===#
#
# Unit tests (Catch2), lit + FileCheck tests, the ONNX node-test conformance
# runner and the model tests, through ctest. GPU tests (label gpu) are
# excluded here; run them on a GPU machine with `ctest -L gpu`. Arguments go
# to ctest.
#
# Alongside ctest, in the background, the sanitizer job (docs/reliability.md):
# scripts/sanitize.sh (the unit, lit and reference-conformance tests built
# with clang, ASan + UBSan, leak detection on, in build-fuzz/) and then, pass
# or fail, scripts/fuzz/run.sh (each libFuzzer harness for
# KILN_FUZZ_SECONDS, default 45). Its build uses KILN_JOBS jobs, 1 when
# unset, so that it mostly takes the core that ctest leaves. Its log is
# build-fuzz/sanitizer-job.log, printed when the job fails, which fails the
# run. KILN_SANITIZE=0 skips it.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${KILN_BUILD_DIR:-$root/build}"
fuzz_build="${KILN_FUZZ_BUILD_DIR:-$root/build-fuzz}"

sanitizer=""
if [ "${KILN_SANITIZE:-1}" != 0 ]; then
  mkdir -p "$fuzz_build"
  log="$fuzz_build/sanitizer-job.log"
  (
    export KILN_JOBS="${KILN_JOBS:-1}"
    start=$SECONDS
    failed=0
    "$root/scripts/sanitize.sh" || failed=1
    "$root/scripts/fuzz/run.sh" || failed=1
    echo "sanitizer job: $((SECONDS - start)) s"
    exit "$failed"
  ) >"$log" 2>&1 &
  sanitizer=$!
  trap '[ -z "$sanitizer" ] || kill "$sanitizer" 2>/dev/null || true' EXIT
fi

status=0
(cd "$build" && ctest --output-on-failure -LE gpu "$@") || status=$?

if [ -n "$sanitizer" ]; then
  echo "test: waiting for the sanitizer job ($log)"
  if wait "$sanitizer"; then
    grep -E '^(100% tests passed|fuzz: |sanitizer job: )' "$log" || true
  else
    echo "test: the sanitizer job FAILED; the end of $log:"
    tail -n 200 "$log"
    grep -E '^(The following tests FAILED|[[:space:]]+[0-9]+ - |fuzz: |sanitizer job: )' "$log" || true
    status=1
  fi
  sanitizer=""
fi
exit "$status"
