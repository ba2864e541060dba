#!/usr/bin/env bash
#===- bench/cuda_ln_gelu_variants.sh - Build the ln_gelu variant bench ---===#
#
# Builds bench/cuda_ln_gelu_variants.cu into OUT (a static CUDA binary for
# sm_90 that runs on the GPU machine without Kiln): compiles ln_gelu with
# `--precision bf16 --io-precision low` and its bf16-converted graph
# (bench/onnx_to_bf16.py as it was at b87a750) for cuda, and puts both
# packages' kernels in front of the variants.
#
#   bench/cuda_ln_gelu_variants.sh OUT      (then, on the GPU: OUT)
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(realpath -m "$1")"
W="$(mktemp -d)"
trap 'rm -rf "$W"' EXIT
KILN="${KILN:-$ROOT/build/bin/kiln}"
GRAPH="$ROOT/test/models/bench-graphs/ln_gelu.onnx"
git -C "$ROOT" show b87a750:bench/onnx_to_bf16.py > "$W/onnx_to_bf16.py"
"$ROOT/.venv/bin/python3" "$W/onnx_to_bf16.py" "$GRAPH" "$W/ln_gelu_bf16.onnx"
"$KILN" compile "$W/ln_gelu_bf16.onnx" --target cuda --weights external \
  -o "$W/converted" >/dev/null
"$KILN" compile "$GRAPH" --target cuda --weights external --precision bf16 \
  --io-precision low -o "$W/autocast" >/dev/null
{
  echo '#include <cstdint>'
  echo '#include <cstring>'
  # NVRTC's own fixed-width types and constants come from the headers here.
  sed -e '/^typedef .* u\?int[0-9]*_t;$/d' \
      -e '/^#define \(INFINITY\|NAN\|INT64_M\)/d' "$W/converted/kernels.cu"
  sed -n '/^\/\/ k0_layer_normalization/,$p' "$W/autocast/kernels.cu"
  cat "$ROOT/bench/cuda_ln_gelu_variants.cu"
} > "$W/variants.cu"
/usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -std=c++17 -o "$OUT" "$W/variants.cu"
echo "built $OUT"
