#!/usr/bin/env bash
#===- scripts/fuzz/run.sh - A time-bounded run of each libFuzzer harness --===#
#
# Runs each libFuzzer harness of build-fuzz/ (scripts/fuzz/build.sh builds
# them; override the folder with KILN_FUZZ_BUILD_DIR) for KILN_FUZZ_SECONDS
# seconds (default 45), one after the other, under ASan + UBSan with leak
# detection, from its seed corpus (test/fuzz/corpus/) and, for the two ONNX
# harnesses, the regression files (test/fuzz/regressions/). New inputs go to
# a scratch folder, so the checked-in corpus is not changed. A crash, a leak,
# a sanitizer report, a timeout (-timeout=30) or going over 4 GiB fails the
# run; the input is kept in build-fuzz/fuzz-artifacts/ (minimise it with
# -minimize_crash=1 and check it in as a regression, docs/reliability.md).
# Prints each harness's executions, executions per second and edges covered.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${KILN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${KILN_FUZZ_SECONDS:-45}"
fuzz="$root/test/fuzz"
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# See scripts/sanitize.sh for intercept_tls_get_addr=0.
export ASAN_OPTIONS="detect_leaks=1:intercept_tls_get_addr=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

status=0
for harness in onnx-import pipeline npy package-files; do
  case "$harness" in
  onnx-import | pipeline) seeds=("$fuzz/corpus/onnx" "$fuzz/regressions") ;;
  *) seeds=("$fuzz/corpus/$harness") ;;
  esac
  mkdir -p "$scratch/$harness"
  log="$artifacts/$harness.log"
  if "$build/test/fuzz/kiln-fuzz-$harness" "$scratch/$harness" "${seeds[@]}" \
      -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=30 \
      -print_final_stats=1 -artifact_prefix="$artifacts/$harness-" \
      >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    echo "fuzz: kiln-fuzz-$harness: ${seconds} s, $runs executions," \
      "$rate/s, $cov edges: no finding"
  else
    status=1
    echo "fuzz: kiln-fuzz-$harness FAILED (log: $log):"
    tail -n 60 "$log"
  fi
done
exit "$status"
