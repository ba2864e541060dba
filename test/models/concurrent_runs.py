#!/usr/bin/env python3
"""One CPU package run from 8 threads x 1,000 runs: bit-identical outputs.

Builds a model with the op families whose kernels parallelise (a GEMM through
the library, a fused bias + GELU, a LayerNorm and a softmax reduction),
compiles it for the CPU, checks one run against ONNX Runtime, then runs
`kiln-runner --threads 8 --iterations 1000`: every output of every run must
equal the first run's byte for byte (docs/reliability.md).

  concurrent_runs.py --kiln build/bin/kiln --runner build/bin/kiln-runner \
      --work DIR [--threads 8] [--runs 1000]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def build(path):
    rng = np.random.default_rng(0)
    w = lambda *s: numpy_helper.from_array(  # noqa: E731
        (rng.standard_normal(s) * 0.1).astype(np.float32))
    inits = [w(256, 512), w(512), w(512), w(512), w(512, 128)]
    for t, name in zip(inits, ["w1", "b1", "g", "beta", "w2"]):
        t.name = name
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Gelu", ["hb"], ["a"]),
             helper.make_node("LayerNormalization", ["a", "g", "beta"], ["n"],
                              axis=-1),
             helper.make_node("MatMul", ["n", "w2"], ["o"]),
             helper.make_node("Softmax", ["o"], ["y"], axis=-1)]
    g = helper.make_graph(
        nodes, "concurrent",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 128])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 9
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--runner", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    model = os.path.join(args.work, "model.onnx")
    build(model)
    x = np.random.default_rng(1).standard_normal((64, 256)).astype(np.float32)
    xfile = os.path.join(args.work, "x.npy")
    np.save(xfile, x)
    want = ort.InferenceSession(model).run(None, {"x": x})[0]
    np.save(os.path.join(args.work, "want.npy"), want)
    pkg = os.path.join(args.work, "pkg")
    subprocess.run([args.kiln, "compile", model, "-o", pkg], check=True)
    p = subprocess.run([args.runner, pkg, "--input", f"x={xfile}",
                        "--expect", f"y={os.path.join(args.work, 'want.npy')}",
                        "--threads", str(args.threads),
                        "--iterations", str(args.runs)],
                       capture_output=True, text=True)
    print(p.stdout + p.stderr, end="")
    if p.returncode != 0:
        print(f"FAIL: kiln-runner exited with {p.returncode}")
        return 1
    result = json.loads(p.stdout.strip().splitlines()[-1])
    if not result["identical"] or result["runs_per_thread"] != args.runs:
        print("FAIL: outputs differ between runs")
        return 1
    print(f"{args.threads} threads x {args.runs} runs: bit-identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
