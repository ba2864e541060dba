#!/usr/bin/env bash
#===- scripts/sanitize.sh - Unit, lit and reference conformance under ASan -===#
#
# The sanitizer job (docs/reliability.md): builds the compiler, the runtime,
# the tools and the unit tests in build-fuzz/ (the folder scripts/fuzz/build.sh
# configures: clang, -fsanitize=address,undefined, UBSan fatal) and runs the
# unit tests, the lit tests and the reference-runtime conformance there with
# leak detection on. Any report fails the run. Arguments go to ctest.
#
# intercept_tls_get_addr=0: the __tls_get_addr interceptor of clang 14's
# sanitizer runtime (Debian 12's) takes a dynamic TLS block that starts 16
# bytes into a page for a glibc 2.19-2.24 block with a header, and records
# the two words before it as the block's start and size. Under ASan those
# words are the allocator's chunk header (a small block in a 16-byte chunk
# at the start of a page, such as a package library's 8-byte thread_local,
# codegen/WrapperEmitter.cpp), so at exit LeakSanitizer's tracer scans a
# garbage range and dies ("Tracer caught signal 11"; google/sanitizers#1322).
# Without the interception dynamic TLS is not scanned for roots: that can
# only add reports (a block reachable from dynamic TLS alone), never hide a
# leak.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KILN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
"$root/scripts/fuzz/build.sh" kiln kiln-opt kiln-runner kiln-conformance \
  kiln-runtime-tests kiln-compiler-tests kiln-codegen-tests
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:intercept_tls_get_addr=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure -R '^(unit\.(runtime|compiler|codegen)|lit|conformance\.reference)$' "$@"
