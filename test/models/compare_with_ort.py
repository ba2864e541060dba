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
import onnx
from onnx import numpy_helper
import onnxruntime as ort


def materialize(model_path, workdir, rng):
    """Copies the graph into workdir with random weights as external data."""
    model = onnx.load(model_path, load_external_data=False)
    for init in model.graph.initializer:
        if init.data_location != onnx.TensorProto.EXTERNAL:
            continue  # inline constants (shapes, scalars) keep their values
        dtype = onnx.helper.tensor_dtype_to_np_dtype(init.data_type)
        shape = tuple(init.dims)
        if np.issubdtype(dtype, np.floating):
            fan_in = shape[-1] if len(shape) > 1 else max(shape[0] if shape else 1, 1)
            if len(shape) == 4:
                fan_in = shape[1] * shape[2] * shape[3]
            data = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(dtype)
        elif dtype == np.bool_:
            data = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            data = rng.integers(0, 4, shape).astype(dtype)
        new = numpy_helper.from_array(data, init.name)
        init.CopyFrom(new)
    out = os.path.join(workdir, os.path.basename(model_path))
    onnx.save_model(model, out, save_as_external_data=True,
                    location=os.path.basename(model_path) + ".data",
                    size_threshold=1024)
    return out


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
            feeds, cmd = {}, [args.kiln, "run", path, "-o", os.path.join(work, "out")]
            for inp in sess.get_inputs():
                shape = [d if isinstance(d, int) else 1 for d in inp.shape]
                x = rng.standard_normal(shape).astype(np.float32)
                feeds[inp.name] = x
                f = os.path.join(work, "in_" + inp.name + ".npy")
                np.save(f, x)
                cmd += ["--input", f"{inp.name}={f}"]
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
