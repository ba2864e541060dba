#!/usr/bin/env bash
#===- gen-ir-doc.sh - Regenerate docs/ir.md from the ODS table -----------===#
#
# Builds the `kiln-ir-doc` target (mlir-tblgen -gen-dialect-doc over
# ir/KilnOps.td) in a configured build directory and copies the result to
# the checked-in docs/ir.md. The lit test ir/ir-doc.test fails when
# docs/ir.md is stale.
#
# Usage: scripts/gen-ir-doc.sh [BUILD_DIR]    (default: build)
#
#===----------------------------------------------------------------------===#

set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${root}/build}"

if [[ ! -f "${build}/build.ninja" && ! -f "${build}/Makefile" ]]; then
  echo "gen-ir-doc.sh: ${build} is not a configured build directory" >&2
  echo "  configure first: cmake -G Ninja -S ${root} -B ${build}" >&2
  exit 1
fi

cmake --build "${build}" --target kiln-ir-doc -- -j1
cp "${build}/docs/ir.md" "${root}/docs/ir.md.tmp"
mv "${root}/docs/ir.md.tmp" "${root}/docs/ir.md"
echo "gen-ir-doc.sh: wrote ${root}/docs/ir.md"
