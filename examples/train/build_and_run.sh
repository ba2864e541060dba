#!/usr/bin/env bash
#===- build_and_run.sh - Compile mlp_small_train, build and run training --===#
#
# Compiles the training fixture mlp_small_train.onnx (../shared/bench/train)
# with `kiln compile --train --lr 0.05`, builds examples/train/main.cpp
# against libkiln_runtime.so (kiln::Trainer) and runs it: five train steps,
# a checkpoint saved and loaded back. It then checks the five losses it
# printed against the first five of PyTorch's (mlp_small_train.losses.json)
# within 1e-4 relative; it fails when the example fails or they differ.
#
#   usage: build_and_run.sh KILN KILN_SOURCE_DIR RUNTIME_LIB_DIR WORK_DIR
#                           [CXX] [FIXTURE_DIR]
#
# FIXTURE_DIR defaults to KILN_SOURCE_DIR/test/models/train-fixtures.
#
#===----------------------------------------------------------------------===#

set -euo pipefail
kiln=$1 src=$2 rtlib=$3 work=$4 cxx=${5:-c++}
fixtures=${6:-$src/test/models/train-fixtures}
model=mlp_small_train

rm -rf "$work" && mkdir -p "$work"
"$kiln" compile "$fixtures/$model.onnx" --train --lr 0.05 -o "$work/$model"
"$cxx" -std=c++17 -O2 -I "$src/runtime/include" \
  "$src/examples/train/main.cpp" -L "$rtlib" -lkiln_runtime \
  -Wl,-rpath,"$rtlib" -o "$work/example"
"$work/example" "$work/$model" "$fixtures/$model.inputs_0.npy" \
  "$work/checkpoint.safetensors" | tee "$work/output.txt"

# The losses against PyTorch's: "step N loss L" lines, N = 1..5.
python3 - "$work/output.txt" "$fixtures/$model.losses.json" <<'PY'
import json, re, sys
got = [float(m.group(1)) for m in
       re.finditer(r"^step \d+ loss (\S+)$", open(sys.argv[1]).read(), re.M)]
want = json.load(open(sys.argv[2]))["losses"][:5]
if len(got) != 5:
    sys.exit(f"expected 5 losses, got {len(got)}")
worst = max(abs(g - w) / abs(w) for g, w in zip(got, want))
print(f"losses vs PyTorch: worst relative error {worst:.2e} (tolerance 1e-4)")
sys.exit(1 if worst > 1e-4 else 0)
PY
