#!/usr/bin/env python3
"""The CPU target's kernels of single ops against the reference runtime.

This script implements the numeric test of the C++ kernels that kiln-lower-cpu
gives single top-level ops instead of reference steps
(targets/cpu/CppOpKernels.cpp): CumSum and CumProd along a constant axis
(plain, exclusive + reverse; f32 and int8, whose sums wrap), ArgMax and ArgMin
(ties, NaN, select_last_index), and GatherElements (negative indices). The
ONNX node tests cover ArgMax, ArgMin and GatherElements too, but give CumSum's
axis as a graph input, which keeps it a reference step.

  cpu_op_kernels.py --kiln build/bin/kiln --work DIR

The model runs on the reference runtime (`kiln run MODEL`) and compiled
(`kiln compile`, then `kiln run PKG`); every output must be bit-identical, and
the compiled package must report no fallback op. Exit status 1 otherwise.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build_model():
    nodes = [
        helper.make_node("CumSum", ["x", "axis1"], ["cumsum"], name="cumsum"),
        helper.make_node("CumSum", ["x", "axis1"], ["cumsum_excl_rev"],
                         exclusive=1, reverse=1, name="cumsum_excl_rev"),
        helper.make_node("CumSum", ["q", "axis_first"], ["cumsum_int8"],
                         name="cumsum_int8"),
        helper.make_node("CumProd", ["x", "axis_first"], ["cumprod_rev"],
                         reverse=1, name="cumprod_rev"),
        helper.make_node("ArgMax", ["x"], ["argmax"], axis=2, keepdims=0,
                         name="argmax"),
        helper.make_node("ArgMin", ["x"], ["argmin_last"], axis=1,
                         select_last_index=1, name="argmin_last"),
        helper.make_node("GatherElements", ["x", "picks"], ["picked"], axis=2,
                         name="picked"),
    ]
    inits = [numpy_helper.from_array(np.array(1, np.int64), "axis1"),
             numpy_helper.from_array(np.array([-3], np.int32), "axis_first")]
    outputs = ["cumsum", "cumsum_excl_rev", "cumsum_int8", "cumprod_rev",
               "argmax", "argmin_last", "picked"]
    graph = helper.make_graph(
        nodes, "cpu_op_kernels",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5]),
         helper.make_tensor_value_info("q", TensorProto.INT8, [3, 4, 5]),
         helper.make_tensor_value_info("picks", TensorProto.INT64, [3, 4, 2])],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
         for o in outputs], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    m.ir_version = 11
    return onnx.shape_inference.infer_shapes(m, strict_mode=True), outputs


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    model, outputs = build_model()
    path = os.path.join(args.work, "model.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(20)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x[0, 1, :] = 0.5          # ties for argmax/argmin
    x[2, 3, 2] = np.nan       # NaN wins argmax, and argmin
    feeds = {"x": x, "q": rng.integers(-128, 128, (3, 4, 5)).astype(np.int8),
             "picks": rng.integers(-5, 5, (3, 4, 2)).astype(np.int64)}
    inputs = []
    for name, value in feeds.items():
        f = os.path.join(args.work, name + ".npy")
        np.save(f, value)
        inputs += ["-i", f"{name}={f}"]
    pkg = os.path.join(args.work, "pkg")
    log = run([args.kiln, "compile", path, "--target", "cpu", "-o", pkg])
    if "0 fallback ops" not in log:
        sys.exit(f"FAIL: the package calls reference kernels:\n{log}")
    ref, got = os.path.join(args.work, "ref"), os.path.join(args.work, "out")
    run([args.kiln, "run", path, "-o", ref] + inputs)
    run([args.kiln, "run", pkg, "-o", got] + inputs)
    bad = []
    for o in outputs:
        want = np.load(os.path.join(ref, o + ".npy"))
        have = np.load(os.path.join(got, o + ".npy"))
        if want.dtype != have.dtype or want.shape != have.shape or \
                not np.array_equal(want, have, equal_nan=want.dtype.kind == "f"):
            bad.append(f"{o}: compiled {have.ravel()[:6]} vs reference "
                       f"{want.ravel()[:6]}")
    # The reference itself against NumPy, for the plain sums.
    if not np.allclose(np.load(os.path.join(ref, "cumsum.npy")),
                       np.cumsum(x, axis=1), equal_nan=True, atol=1e-6):
        bad.append("cumsum: the reference differs from numpy.cumsum")
    for b in bad:
        print("FAIL " + b)
    print(f"cpu op kernels: {len(outputs) - len(bad)} of {len(outputs)} "
          f"outputs bit-identical to the reference runtime")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
