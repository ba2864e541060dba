#!/usr/bin/env bash
#===- scripts/demo.sh - Install, build, and run Kiln on the bundled example ===#
#
# Kiln's main job on examples/tiny_mlp.onnx: compile it into a package
# (libtiny_mlp.so + tiny_mlp.h + weights.bin), build the C++ program of
# examples/cpp that calls it through tiny_mlp.h, run it, and compare its output with ONNX
# Runtime's. The kiln IR and a reference-runtime run come first.
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
echo "== kiln compile examples/tiny_mlp.onnx --dim batch=4 -o $out/tiny_mlp"
"$build/bin/kiln" compile "$root/examples/tiny_mlp.onnx" --dim batch=4 -o "$out/tiny_mlp"
ls "$out/tiny_mlp"
echo
echo "== a C++ program calling the package through tiny_mlp.h (examples/cpp/main.cpp)"
cxx="${CXX:-c++}"
"$cxx" -std=c++17 -O2 -I "$out/tiny_mlp" -I "$root/runtime/include" \
  "$root/examples/cpp/main.cpp" -L "$out/tiny_mlp" -ltiny_mlp \
  -L "$build/runtime" -lkiln_runtime -Wl,-rpath,"$build/runtime" \
  -Wl,-rpath,"$out/tiny_mlp" -o "$out/example"
"$out/example" "$out/tiny_mlp" "$root/examples/tiny_mlp_x.npy" "$out/y.npy" \
  "$out/y-compiled.npy"
echo
echo "== compare with ONNX Runtime"
"$py" - "$root/examples/tiny_mlp.onnx" "$root/examples/tiny_mlp_x.npy" "$out/y.npy" \
  "$out/y-compiled.npy" <<'PY'
import sys, numpy as np, onnxruntime as ort
model, x, reference, compiled = sys.argv[1:]
want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": np.load(x)})[0]
ok = True
for what, path in (("reference runtime", reference), ("compiled package (C++)", compiled)):
    got = np.load(path)
    err = float(np.abs(got - want).max())
    print(f"{what}: y {list(got.shape)}, max abs difference from ONNX Runtime {err:.3g}")
    ok &= bool(np.allclose(got, want, rtol=1e-3, atol=1e-5))
sys.exit(0 if ok else 1)
PY
