#!/usr/bin/env bash
#===- scripts/demo.sh - Install, build, and run Kiln on the bundled example ===#
#
# Kiln's main job on examples/tiny_mlp.onnx: print its kiln IR, run it on the
# reference runtime, and compare the output with ONNX Runtime's.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${KILN_BUILD_DIR:-$root/build}"
py="$root/.venv/bin/python3"
out="$build/demo"
mkdir -p "$out"

echo "== kiln dump examples/tiny_mlp.onnx"
"$build/bin/kiln" dump "$root/examples/tiny_mlp.onnx"
echo
echo "== kiln run examples/tiny_mlp.onnx --input x=examples/tiny_mlp_x.npy"
"$build/bin/kiln" run "$root/examples/tiny_mlp.onnx" \
  --input x="$root/examples/tiny_mlp_x.npy" -o "$out"
echo
echo "== compare with ONNX Runtime"
"$py" - "$root/examples/tiny_mlp.onnx" "$root/examples/tiny_mlp_x.npy" "$out/y.npy" <<'PY'
import sys, numpy as np, onnxruntime as ort
model, x, y = sys.argv[1:]
want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": np.load(x)})[0]
got = np.load(y)
err = float(np.abs(got - want).max())
print(f"y {list(got.shape)}: max abs difference from ONNX Runtime {err:.3g}")
sys.exit(0 if np.allclose(got, want, rtol=1e-3, atol=1e-5) else 1)
PY
