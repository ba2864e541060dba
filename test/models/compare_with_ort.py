#!/usr/bin/env python3
"""Runs PyTorch-exported models through `kiln run` and ONNX Runtime and compares.

For each model graph (exported by PyTorch's ONNX exporter, weights as ONNX
external data that is not shipped), this script writes random weights for the
external initializers (inline constants keep their values) into a data file, random inputs as .npy files, runs the
model with `kiln run` (reference runtime) and with ONNX Runtime on the CPU,
and compares every output (float32: rtol 1e-3, atol 1e-5 on top of a scale
term for large reductions, see --atol).

  compare_with_ort.py --kiln build/bin/kiln MODEL.onnx [MODEL.onnx ...]

Exit status 1 when any output differs or either side fails.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from onnx_weights import materialize, random_inputs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    failures = 0
    for model_path in args.models:
        name = os.path.basename(model_path)
        with tempfile.TemporaryDirectory() as work:
            path = materialize(model_path, work, rng)
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            feeds = random_inputs(sess, rng)
            cmd = [args.kiln, "run", path, "-o", os.path.join(work, "out")]
            for input_name, x in feeds.items():
                f = os.path.join(work, "in_" + input_name + ".npy")
                np.save(f, x)
                cmd += ["--input", f"{input_name}={f}"]
            expected = sess.run(None, feeds)
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"FAIL {name}: kiln run exited {proc.returncode}: {proc.stderr.strip()}")
                failures += 1
                continue
            ok = True
            for out, want in zip(sess.get_outputs(), expected):
                fname = "".join(c if c.isalnum() or c in "_-." else "_" for c in out.name)
                got = np.load(os.path.join(work, "out", fname + ".npy"))
                if got.shape != want.shape or got.dtype != want.dtype:
                    print(f"FAIL {name}: output {out.name}: {got.dtype}{got.shape} vs ORT {want.dtype}{want.shape}")
                    ok = False
                    continue
                err = np.abs(got.astype(np.float64) - want)
                bad = err > args.atol + args.rtol * np.abs(want)
                print(f"{name}: output {out.name} {want.dtype}{list(want.shape)}: "
                      f"max abs err {err.max():.3g}, mismatches {int(bad.sum())}")
                if bad.any():
                    ok = False
            if ok:
                print(f"PASS {name}: kiln run matches ONNX Runtime {ort.__version__}")
            else:
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
