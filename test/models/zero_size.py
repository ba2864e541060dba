#!/usr/bin/env python3
"""Zero-size dimensions: graphs with an empty tensor compile, run, and agree
with ONNX Runtime.

A dimension of 0 is legal ONNX (an empty batch, an empty sequence, a reduced
axis of length 0). Each case here is a small graph with such a dimension;
the script runs it on the reference runtime (`kiln run MODEL`), compiles it
for the CPU (`kiln compile`) and runs the package (`kiln run PKG`), and
compares both with ONNX Runtime: shapes and dtypes must match exactly, values
with NaN equal to NaN (the mean of nothing is NaN, the max of nothing -inf).

  zero_size.py --kiln build/bin/kiln --work DIR [--target cpu]

Exit status 1 when a case fails; each failure is printed with its command.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(array, name)


rng = np.random.default_rng(3)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def model(name, nodes, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def cases():
    """(name, model, {input: array})."""
    yield ("matmul_bias_relu_batch0",
           model("mlp", [helper.make_node("MatMul", ["x", "w"], ["h"]),
                         helper.make_node("Add", ["h", "b"], ["a"]),
                         helper.make_node("Relu", ["a"], ["y"])],
                 [vi("x", F, [0, 16])], [vi("y", F, [0, 8])],
                 [init("w", rand(16, 8)), init("b", rand(8))]),
           {"x": rand(0, 16)})
    yield ("softmax_rows0",
           model("softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
                 [vi("x", F, [0, 10])], [vi("y", F, [0, 10])]),
           {"x": rand(0, 10)})
    for op in ("ReduceSum", "ReduceMax", "ReduceMean"):
        axes = [helper.make_node("Constant", [], ["axes"],
                                 value=init("v", np.array([1], np.int64)))]
        yield (f"{op.lower()}_over_empty_axis",
               model(op, axes + [helper.make_node(op, ["x", "axes"], ["y"],
                                                  keepdims=0)],
                     [vi("x", F, [3, 0])], [vi("y", F, [3])]),
               {"x": rand(3, 0)})
    yield ("conv_batch0",
           model("conv", [helper.make_node("Conv", ["x", "w", "b"], ["y"],
                                           pads=[1, 1, 1, 1])],
                 [vi("x", F, [0, 3, 8, 8])], [vi("y", F, [0, 4, 8, 8])],
                 [init("w", rand(4, 3, 3, 3)), init("b", rand(4))]),
           {"x": rand(0, 3, 8, 8)})
    yield ("concat_with_empty_part",
           model("concat", [helper.make_node("Concat", ["a", "b"], ["y"],
                                             axis=1),
                            helper.make_node("Relu", ["y"], ["z"])],
                 [vi("a", F, [2, 0]), vi("b", F, [2, 3])], [vi("z", F, [2, 3])]),
           {"a": rand(2, 0), "b": rand(2, 3)})
    yield ("gather_empty_indices",
           model("gather", [helper.make_node("Gather", ["d", "i"], ["y"],
                                             axis=0)],
                 [vi("i", I64, [0])], [vi("y", F, [0, 4])],
                 [init("d", rand(5, 4))]),
           {"i": np.zeros([0], np.int64)})
    yield ("layernorm_batch0",
           model("ln", [helper.make_node("LayerNormalization",
                                         ["x", "s", "b"], ["y"], axis=-1)],
                 [vi("x", F, [0, 8])], [vi("y", F, [0, 8])],
                 [init("s", rand(8)), init("b", rand(8))]),
           {"x": rand(0, 8)})
    yield ("transpose_add_empty",
           model("tr", [helper.make_node("Transpose", ["x"], ["t"],
                                         perm=[1, 0, 2]),
                        helper.make_node("Add", ["t", "t"], ["y"])],
                 [vi("x", F, [0, 3, 4])], [vi("y", F, [3, 0, 4])]),
           {"x": rand(0, 3, 4)})


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def check(name, label, outdir, expected, names):
    ok = True
    for out, want in zip(names, expected):
        path = os.path.join(outdir, out + ".npy")
        got = np.load(path)
        same = (got.shape == want.shape and got.dtype == want.dtype and
                np.allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True))
        print(f"{name} ({label}): {out} {got.dtype}{list(got.shape)} vs ORT "
              f"{want.dtype}{list(want.shape)}: {'ok' if same else 'MISMATCH'}")
        if not same:
            print(f"  kiln: {got.ravel()[:8]}\n  ort:  {want.ravel()[:8]}")
        ok = ok and same
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target", default="cpu")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = []
    for name, m, feeds in cases():
        d = os.path.join(args.work, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
        inputs = []
        for k, v in feeds.items():
            np.save(os.path.join(d, k + ".npy"), v)
            inputs += ["--input", f"{k}={os.path.join(d, k + '.npy')}"]
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        expected = sess.run(None, feeds)
        if name == "reducemean_over_empty_axis":
            # ONNX leaves the mean of nothing undefined (ONNX Runtime gives
            # 0); Kiln gives NaN, as NumPy and PyTorch do.
            expected = [np.full(e.shape, np.nan, e.dtype) for e in expected]
        steps = [("reference", [args.kiln, "run", path] + inputs +
                  ["-o", os.path.join(d, "ref")], os.path.join(d, "ref")),
                 ("compile", [args.kiln, "compile", path, "--target",
                              args.target, "-o", os.path.join(d, "pkg")], None),
                 ("compiled", [args.kiln, "run", os.path.join(d, "pkg")] +
                  inputs + ["-o", os.path.join(d, "out")],
                  os.path.join(d, "out"))]
        for label, cmd, outdir in steps:
            rc, log = run(cmd)
            if rc != 0:
                print(f"FAIL {name} ({label}): exit {rc}: {' '.join(cmd)}\n{log}")
                failures.append(f"{name} ({label})")
                break
            if outdir and not check(name, label, outdir, expected, names):
                failures.append(f"{name} ({label})")
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    print("all zero-size cases agree with ONNX Runtime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
