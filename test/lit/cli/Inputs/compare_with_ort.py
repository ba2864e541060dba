#!/usr/bin/env python3
"""Compares the outputs `kiln run` wrote for a package (DIR/out/CASE) and for
the model on the reference runtime (DIR/ref/CASE) with ONNX Runtime's, for
each MODEL:CASE argument (the model DIR/MODEL.onnx, the input DIR/CASE.npy or
DIR/CASE_x.npy). Float32 tolerances of docs/conformance.md."""
import os
import sys

import numpy as np
import onnxruntime as ort


def main():
    root = sys.argv[1]
    for spec in sys.argv[2:]:
        model, case = spec.split(":")
        x_path = os.path.join(root, case + ".npy")
        if not os.path.exists(x_path):
            x_path = os.path.join(root, case + "_x.npy")
        x = np.load(x_path)
        session = ort.InferenceSession(os.path.join(root, model + ".onnx"),
                                       providers=["CPUExecutionProvider"])
        want = session.run(None, {"x": x})[0]
        got = np.load(os.path.join(root, "out", case, "y.npy"))
        ref = np.load(os.path.join(root, "ref", case, "y.npy"))
        for name, value in (("compiled", got), ("reference", ref)):
            if value.shape != want.shape or not np.allclose(
                    value, want, rtol=1e-3, atol=1e-5):
                print(f"{case}: {name} differs from onnxruntime: "
                      f"max |diff| {np.abs(value - want).max()}")
                return 1
        print(f"{case}: compiled == reference == onnxruntime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
