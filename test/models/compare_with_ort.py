#!/usr/bin/env python3
"""Runs PyTorch-exported models through `kiln run` and ONNX Runtime and compares.

For each model graph (exported by PyTorch's ONNX exporter, weights as ONNX
external data that is not shipped), this script writes random weights for the
external initializers (inline constants keep their values) into a data file, random inputs as .npy files, runs the
model with `kiln run` (reference runtime) and with ONNX Runtime on the CPU,
and compares every output (float32: rtol 1e-3, atol 1e-5 on top of a scale
term for large reductions, see --atol).

  compare_with_ort.py --kiln build/bin/kiln [--compiled] MODEL.onnx [MODEL.onnx ...]

With --compiled, each model is also compiled (`kiln compile --weights
external`: the random weights are bound when the package loads) and the
package's outputs are compared too.

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


def compare(name, label, outdir, sess, expected, rtol, atol):
    """Compares the .npy files in outdir with ONNX Runtime's outputs."""
    ok = True
    for out, want in zip(sess.get_outputs(), expected):
        fname = "".join(c if c.isalnum() or c in "_-." else "_" for c in out.name)
        got = np.load(os.path.join(outdir, fname + ".npy"))
        if got.shape != want.shape or got.dtype != want.dtype:
            print(f"FAIL {name} ({label}): output {out.name}: {got.dtype}{got.shape} "
                  f"vs ORT {want.dtype}{want.shape}")
            ok = False
            continue
        err = np.abs(got.astype(np.float64) - want)
        # NaN must meet NaN; any other NaN is a mismatch.
        bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        if np.isnan(want).any():
            print(f"{name} ({label}): warning: ONNX Runtime's output {out.name} "
                  f"has {int(np.isnan(want).sum())} NaNs")
        print(f"{name} ({label}): output {out.name} {want.dtype}{list(want.shape)}: "
              f"max abs err {np.nanmax(err):.3g}, mismatches {int(bad.sum())}")
        ok = ok and not bad.any()
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--compiled", action="store_true",
                    help="also `kiln compile --weights external` the model (weights "
                         "bound at load time) and compare the package's outputs")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    failures = 0
    for model_path in args.models:
        name = os.path.basename(model_path)
        with tempfile.TemporaryDirectory() as work:
            path = materialize(model_path, work, rng)
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            feeds = random_inputs(sess, rng, path)
            inputs = []
            for input_name, x in feeds.items():
                f = os.path.join(work, "in_" + input_name + ".npy")
                np.save(f, x)
                inputs += ["--input", f"{input_name}={f}"]
            expected = sess.run(None, feeds)
            runs = [("reference", [args.kiln, "run", path])]
            if args.compiled:
                pkg = os.path.join(work, "pkg")
                proc = subprocess.run([args.kiln, "compile", path, "-o", pkg,
                                       "--weights", "external"],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"FAIL {name}: kiln compile exited {proc.returncode}: "
                          f"{proc.stderr.strip()}")
                    failures += 1
                    continue
                print(f"{name}: {proc.stdout.strip()}")
                runs.append(("compiled", [args.kiln, "run", pkg, "--weights-dir", work]))
            ok = True
            for label, cmd in runs:
                outdir = os.path.join(work, "out-" + label)
                proc = subprocess.run(cmd + ["-o", outdir] + inputs,
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"FAIL {name} ({label}): kiln run exited {proc.returncode}: "
                          f"{proc.stderr.strip()}")
                    ok = False
                    continue
                ok = compare(name, label, outdir, sess, expected, args.rtol, args.atol) and ok
            if ok:
                print(f"PASS {name}: {' and '.join(l for l, _ in runs)} match "
                      f"ONNX Runtime {ort.__version__}")
            else:
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
