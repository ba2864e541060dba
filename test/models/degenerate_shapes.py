#!/usr/bin/env python3
"""Degenerate shapes: every fusion kind over size-1 and size-0 dims and rank 0.

This script implements the generated test family of issue 19 (item 4). For
each input shape of SHAPES (rank 0, dims of extent 1, dims of extent 0, and
their mixes) it writes one small ONNX model whose outputs cover every kind
of fusion region the code generators print:

  elementwise   unary and binary chains, a broadcast operand, compare + cast
  reductions    ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSumExp over the
                last axis (without keepdims), the first axis (with keepdims)
                and all axes; ArgMax where the axis is not empty
  norms         LayerNormalization, an RMS norm written out (its ONNX form),
                BatchNormalization (inference), InstanceNormalization
  softmax       Softmax and LogSoftmax over the last axis, Softmax over the
                first
  views         Reshape, Transpose, Unsqueeze, Squeeze, Slice, Expand and
                Flatten, each followed by an elementwise op so that the view
                becomes index arithmetic inside a kernel

With --target cpu (the default) each model runs on the reference runtime
(`kiln run MODEL`), is compiled (`kiln compile`), and the package's outputs
(`kiln run PKG`) must match the reference's: same dtype and shape, values
within rtol 1e-4 / atol 1e-5, NaN equal to NaN. With --target cuda the models
are compiled only (NVRTC and the host compiler; no GPU is needed), unless
--run is given (on a machine with a GPU: then the outputs are compared as
for the CPU).

  degenerate_shapes.py --kiln build/bin/kiln --work DIR [--target cpu|cuda]
                       [--run] [--filter SUBSTRING] [--export-node-tests DIR]

--export-node-tests DIR also writes each model as an ONNX node test
(DIR/test_degenerate_LABEL/model.onnx, test_data_set_0/input_0.pb and the
reference runtime's outputs as output_N.pb), so that kiln-conformance can
compile the family for CUDA and scripts/gpu/pack.sh can carry it to a GPU:

  degenerate_shapes.py --kiln build/bin/kiln --work /tmp/dg \
      --export-node-tests /tmp/dg-tests
  kiln-conformance --node-dir /tmp/dg-tests --mode compile-cuda \
      --keep-packages /tmp/dg-keep
  KILN_PACK_MODELS=none KILN_CONFORMANCE_KEEP=/tmp/dg-keep scripts/gpu/pack.sh
  gpu-pack/run.sh conformance            # on the GPU machine

Exit status 1 when a case fails; each failure is printed with its command and
its log. The shapes and the ops are listed once, below.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


# Input shapes: rank 0, extent-1 dims, extent-0 dims, and mixes of them with
# ordinary sizes.
SHAPES = [
    [], [1], [0], [5],
    [1, 1], [1, 0], [0, 1], [0, 3], [3, 1], [1, 3],
    [2, 1, 3], [2, 0, 3], [1, 1, 1], [1, 3, 1], [2, 3, 1, 1],
    # Large enough that the printers parallelise, vectorise and pipeline
    # rows, next to extent-1 dims.
    [1, 4096], [4096, 1], [64, 1, 65],
]
# Shapes also run in float16 (storage type, f32 arithmetic).
F16_SHAPES = [[], [1, 1], [0, 3], [2, 1, 3], [64, 1, 65]]

REDUCTIONS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
              "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2",
              "ReduceLogSumExp"]


class ModelBuilder:
    """Collects the nodes, initializers and outputs of one model."""

    def __init__(self, shape, np_type):
        self.np_type = np_type
        self.elem = helper.np_dtype_to_tensor_dtype(np.dtype(np_type))
        self.shape = shape
        self.rank = len(shape)
        self.nodes = []
        self.inits = []
        self.outputs = []
        self.count = 0

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, array, prefix="c"):
        name = self.fresh(prefix)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def values(self, array):
        """A constant of the model's element type."""
        return self.const(np.asarray(array).astype(self.np_type))

    def node(self, op, inputs, prefix=None, **attrs):
        out = self.fresh(prefix or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out,
                                           **attrs))
        return out

    def output(self, name, label):
        """Makes `name` a graph output named after the case `label`."""
        out = f"{label}"
        self.nodes.append(helper.make_node("Identity", [name], [out],
                                           name=f"out_{label}"))
        self.outputs.append(out)


def add_elementwise(b):
    x = "x"
    two = b.values(2.0)
    sq = b.node("Mul", [x, x])
    r = b.node("Relu", [x])
    b.output(b.node("Sigmoid", [b.node("Add", [sq, b.node("Mul", [r, two])])]),
             "ew_chain")
    b.output(b.node("Exp", [b.node("Neg", [b.node("Abs", [x])])]), "ew_unary")
    gt = b.node("Greater", [x, b.values(0.0)])
    b.output(b.node("Add", [b.node("Cast", [gt], to=b.elem), x]), "ew_compare")
    b.output(b.node("Where", [gt, x, b.node("Neg", [x])]), "ew_where")
    if b.rank:
        bias = b.values(np.linspace(-1, 1, b.shape[-1]))
        b.output(b.node("Add", [x, bias]), "ew_broadcast")


def add_reductions(b):
    x = "x"
    last_empty = b.rank > 0 and b.shape[-1] == 0
    for op in REDUCTIONS:
        short = op[len("Reduce"):].lower()
        if b.rank:
            axes = b.const(np.array([-1], np.int64), "axes")
            b.output(b.node(op, [x, axes], keepdims=0), f"{short}_last")
            axes0 = b.const(np.array([0], np.int64), "axes")
            b.output(b.node(op, [x, axes0], keepdims=1), f"{short}_first_keep")
        # No axes: all of them (a rank-0 input reduces over nothing).
        b.output(b.node(op, [x], keepdims=0), f"{short}_all")
        # A pointwise epilogue after the reduction.
        if b.rank:
            axes = b.const(np.array([-1], np.int64), "axes")
            red = b.node(op, [x, axes], keepdims=1)
            b.output(b.node("Sub", [x, red]), f"{short}_epilogue")
    if b.rank and not last_empty:
        b.output(b.node("ArgMax", [x], axis=-1, keepdims=0), "argmax_last")


def add_norms(b):
    if not b.rank:
        return
    x = "x"
    n = b.shape[-1]
    scale = b.values(np.linspace(0.5, 1.5, n))
    bias = b.values(np.linspace(-0.5, 0.5, n))
    b.output(b.node("LayerNormalization", [x, scale, bias], axis=-1,
                    epsilon=1e-5), "layer_norm")
    # RMS norm as exported (x * rsqrt(mean(x^2) + eps) * scale).
    axes = b.const(np.array([-1], np.int64), "axes")
    ms = b.node("ReduceMean", [b.node("Mul", [x, x]), axes], keepdims=1)
    eps = b.values(1e-5)
    inv = b.node("Reciprocal", [b.node("Sqrt", [b.node("Add", [ms, eps])])])
    b.output(b.node("Mul", [b.node("Mul", [x, inv]), scale]), "rms_norm")
    if b.rank >= 2:
        c = b.shape[1]
        vals = [b.values(np.linspace(lo, hi, c))
                for lo, hi in ((0.5, 1.5), (-0.5, 0.5), (-0.1, 0.1),
                               (0.5, 2.0))]
        b.output(b.node("BatchNormalization", ["x"] + vals, epsilon=1e-5),
                 "batch_norm")
    if b.rank >= 3:
        c = b.shape[1]
        s = b.values(np.linspace(0.5, 1.5, c))
        t = b.values(np.linspace(-0.5, 0.5, c))
        b.output(b.node("InstanceNormalization", [x, s, t], epsilon=1e-5),
                 "instance_norm")


def add_softmax(b):
    if not b.rank:
        return
    b.output(b.node("Softmax", ["x"], axis=-1), "softmax_last")
    b.output(b.node("LogSoftmax", ["x"], axis=-1), "log_softmax_last")
    b.output(b.node("Softmax", ["x"], axis=0), "softmax_first")


def add_views(b):
    x = "x"
    one = b.values(1.0)
    flat = b.node("Reshape", [x, b.const(np.array([-1], np.int64), "shape")])
    b.output(b.node("Add", [flat, one]), "view_reshape_flat")
    b.output(b.node("Add", [b.node("Unsqueeze",
                                   [x, b.const(np.array([0], np.int64))]),
                            one]), "view_unsqueeze")
    expanded = b.node("Expand", [x, b.const(np.array([2] + b.shape, np.int64),
                                            "shape")])
    b.output(b.node("Mul", [expanded, one]), "view_expand")
    if b.rank >= 2:
        perm = list(reversed(range(b.rank)))
        b.output(b.node("Mul", [b.node("Transpose", [x], perm=perm), one]),
                 "view_transpose")
        b.output(b.node("Add", [b.node("Flatten", [x], axis=1), one]),
                 "view_flatten")
    if b.rank:
        sl = b.node("Slice", [x, b.const(np.array([0], np.int64)),
                              b.const(np.array([1], np.int64)),
                              b.const(np.array([-1], np.int64))])
        b.output(b.node("Add", [sl, one]), "view_slice")
        rev = b.node("Slice", [x, b.const(np.array([-1], np.int64)),
                               b.const(np.array([-(2**62)], np.int64)),
                               b.const(np.array([-1], np.int64)),
                               b.const(np.array([-1], np.int64))])
        b.output(b.node("Add", [rev, one]), "view_reverse")
    ones = [i for i, d in enumerate(b.shape) if d == 1]
    if ones:
        sq = b.node("Squeeze", [x, b.const(np.array(ones, np.int64))])
        b.output(b.node("Add", [sq, one]), "view_squeeze")


def case_label(shape, np_type):
    label = "rank0" if not shape else "x".join(str(d) for d in shape)
    return label if np_type == np.float32 else f"{label}_{np.dtype(np_type)}"


def build_model(shape, np_type):
    b = ModelBuilder(shape, np_type)
    for add in (add_elementwise, add_reductions, add_norms, add_softmax,
                add_views):
        add(b)
    graph = helper.make_graph(
        b.nodes, f"degenerate_{case_label(shape, np_type)}",
        [helper.make_tensor_value_info("x", b.elem, shape)],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
         for o in b.outputs], b.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    return m, b.outputs


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def compare(label, outputs, ref_dir, got_dir):
    """Compares every output of `got_dir` with `ref_dir`; returns failures.
    Float16 outputs may differ by a rounding of the f32 result (the printers
    and the reference kernels accumulate in different orders)."""
    bad = []
    for out in outputs:
        want = np.load(os.path.join(ref_dir, out + ".npy"))
        got = np.load(os.path.join(got_dir, out + ".npy"))
        same = got.shape == want.shape and got.dtype == want.dtype
        if same and want.dtype.kind == "f":
            tol = 2e-3 if want.dtype == np.float16 else 1e-4
            same = np.allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=tol, atol=tol / 10, equal_nan=True)
        elif same:
            same = np.array_equal(got, want)
        if not same:
            bad.append(f"{label}: {out}: compiled {got.dtype}{list(got.shape)} "
                       f"{got.ravel()[:6]} vs reference {want.dtype}"
                       f"{list(want.shape)} {want.ravel()[:6]}")
    return bad


def export_node_test(root, label, model_path, x, outputs, ref_dir):
    """Writes one case as an ONNX node test: the model, its input and the
    reference runtime's outputs, as TensorProto files."""
    d = os.path.join(root, f"test_degenerate_{label}")
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with open(model_path, "rb") as src, open(os.path.join(d, "model.onnx"),
                                             "wb") as dst:
        dst.write(src.read())
    tensors = [("input_0.pb", np.load(x), "x")]
    tensors += [(f"output_{i}.pb", np.load(os.path.join(ref_dir, o + ".npy")), o)
                for i, o in enumerate(outputs)]
    for name, value, tensor_name in tensors:
        with open(os.path.join(data, name), "wb") as f:
            f.write(numpy_helper.from_array(value, tensor_name)
                    .SerializeToString())


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--run", action="store_true",
                    help="run cuda packages too (needs a GPU)")
    ap.add_argument("--export-node-tests", default="",
                    help="also write each model and its reference outputs "
                         "as an ONNX node test under this folder")
    ap.add_argument("--filter", default="",
                    help="only the shapes whose label holds this")
    args = ap.parse_args()
    run_compiled = args.target == "cpu" or args.run
    run_reference = run_compiled or bool(args.export_node_tests)
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(19)
    failures, outputs_checked, models = [], 0, 0
    cases = [(s, np.float32) for s in SHAPES]
    cases += [(s, np.float16) for s in F16_SHAPES]
    for shape, np_type in cases:
        label = case_label(shape, np_type)
        if args.filter not in label:
            continue
        models += 1
        d = os.path.join(args.work, label)
        os.makedirs(d, exist_ok=True)
        m, outputs = build_model(shape, np_type)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
        x = os.path.join(d, "x.npy")
        np.save(x, rng.standard_normal(shape).astype(np_type))
        steps = [("compile", [args.kiln, "compile", path, "--target",
                              args.target, "--fullgraph", "-o",
                              os.path.join(d, "pkg")])]
        if run_reference:
            steps = [("reference", [args.kiln, "run", path, "-i", f"x={x}",
                                    "-o", os.path.join(d, "ref")])] + steps
        if run_compiled:
            steps.append(("compiled", [args.kiln, "run",
                                       os.path.join(d, "pkg"), "-i",
                                       f"x={x}", "-o",
                                       os.path.join(d, "out")]))
        ok = True
        for step, cmd in steps:
            rc, log = run(cmd)
            if rc != 0:
                failures.append(f"{label} ({step}): exit {rc}: "
                                f"{' '.join(cmd)}\n{log}")
                ok = False
                break
        if ok and args.export_node_tests:
            export_node_test(args.export_node_tests, label, path, x, outputs,
                             os.path.join(d, "ref"))
        if ok and run_compiled:
            bad = compare(label, outputs, os.path.join(d, "ref"),
                          os.path.join(d, "out"))
            failures += bad
            outputs_checked += len(outputs) - len(bad)
        what = "compiled and matched" if run_compiled else "compiled"
        print(f"{label}: {len(outputs)} outputs: "
              f"{what if ok else 'FAILED'}", flush=True)
    for f in failures:
        print("FAIL " + f)
    print(f"degenerate shapes ({args.target}): {models} models, "
          f"{outputs_checked} outputs matched the reference, "
          f"{len(failures)} failures")
    return 1 if failures or not models else 0


if __name__ == "__main__":
    sys.exit(main())
