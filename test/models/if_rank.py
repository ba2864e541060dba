#!/usr/bin/env python3
"""An If whose branches give its output different ranks, against ONNX Runtime.

This script implements the control-flow check of issue 19: models whose If
is driven by a graph input (`flag`) and whose then branch returns a rank-3
tensor where the else branch returns a rank-2 one (what PyTorch exports for
an `if` on a run-time value in front of an unsqueeze).

  if_rank     the If's output `y` only leaves the graph. Around the If, a
              Relu feeds both branches and an independent Sigmoid is a
              second output, so that the program has compiled graphs before
              and beside the If.
  if_rank_tail  later nodes read `y` (ReduceSum over all axes, Reshape to a
              fixed rank, an Add with an outer value, a Relu, a Mul): the
              tracer traces them once per branch (tail sinking). A second,
              ranked If output is read by a Neg that stays outside, and a
              Tanh that does not depend on the If is an output too.

For both models and both values of `flag` the script runs
  1. the reference runtime (`kiln run model.onnx`),
  2. the compiled package (`kiln compile model.onnx`, then `kiln run PKG`):
     the If stays in the program's glue, its branches compiled, and `y` gets
     its rank when a branch runs,
  3. a package compiled with the condition bound (`--input-value flag=...`):
     only the taken branch is traced, and the package is one graph,
and compares every output with ONNX Runtime's (shape, dtype, values within
rtol 1e-5). It also checks what `kiln explain` reports for the first and
third forms.

  if_rank.py --kiln build/bin/kiln --work DIR

Exit status 1 when a check fails.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def build_model():
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    then_graph = helper.make_graph(
        [helper.make_node("Unsqueeze", ["h", "axes"], ["u"], name="unsqueeze"),
         helper.make_node("Mul", ["u", "two"], ["t"], name="double")],
        "then_branch", [], [helper.make_tensor_value_info("t", F, [1, 2, 3])],
        [two, axes])
    else_graph = helper.make_graph(
        [helper.make_node("Add", ["h", "one"], ["e"], name="add_one")],
        "else_branch", [], [helper.make_tensor_value_info("e", F, [2, 3])],
        [one])
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("If", ["flag"], ["y"], name="cond",
                         then_branch=then_graph, else_branch=else_graph),
        helper.make_node("Sigmoid", ["x"], ["z"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "if_rank",
        [helper.make_tensor_value_info("x", F, [2, 3]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", F, None),
         helper.make_tensor_value_info("z", F, [2, 3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    # Not onnx.checker: it wants a shape on every graph output, and y has
    # no rank to declare (ONNX Runtime loads the model).
    return m


def build_tail_model():
    """The If's rank-disagreeing output `y` is read by later nodes."""
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    shape = numpy_helper.from_array(np.array([-1, 3], np.int64), "shape")
    then_graph = helper.make_graph(
        [helper.make_node("Unsqueeze", ["h", "axes"], ["u"], name="unsqueeze"),
         helper.make_node("Mul", ["u", "two"], ["t"], name="double"),
         helper.make_node("Mul", ["h", "two"], ["tk"], name="double_k")],
        "then_branch", [],
        [helper.make_tensor_value_info("t", F, [1, 2, 3]),
         helper.make_tensor_value_info("tk", F, [2, 3])], [two, axes])
    else_graph = helper.make_graph(
        [helper.make_node("Add", ["h", "one"], ["e"], name="add_one"),
         helper.make_node("Sub", ["h", "one"], ["ek"], name="sub_one")],
        "else_branch", [],
        [helper.make_tensor_value_info("e", F, [2, 3]),
         helper.make_tensor_value_info("ek", F, [2, 3])], [one])
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("Sigmoid", ["x"], ["sg"], name="sigmoid"),
        helper.make_node("If", ["flag"], ["y", "k"], name="cond",
                         then_branch=then_graph, else_branch=else_graph),
        helper.make_node("ReduceSum", ["y"], ["total"], keepdims=0,
                         name="total"),
        helper.make_node("Reshape", ["y", "shape"], ["flat"], name="flat"),
        helper.make_node("Add", ["flat", "sg"], ["a"], name="add_outer"),
        helper.make_node("Relu", ["a"], ["out"], name="relu_out"),
        helper.make_node("Mul", ["out", "total"], ["w"], name="scale"),
        helper.make_node("Neg", ["k"], ["kn"], name="neg_k"),
        helper.make_node("Tanh", ["x"], ["z"], name="tanh"),
    ]
    graph = helper.make_graph(
        nodes, "if_rank_tail",
        [helper.make_tensor_value_info("x", F, [2, 3]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info(n, F, [2, 3])
         for n in ("out", "w", "kn", "z")], [shape])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


# name -> (builder, outputs, patterns `kiln explain` must print for it: the
# If stays a branch; in if_rank_tail the nodes after it are in both branches)
MODELS = {
    "if_rank": (build_model, ["y", "z"],
                [r"node 'cond' \(If\) -> kiln\.if"]),
    "if_rank_tail": (build_tail_model, ["out", "w", "kn", "z"],
                     [r"node 'cond' \(If\) -> kiln\.if",
                      r"\(then branch of 'cond'\): .*reduce_sum.*reshape",
                      r"\(else branch of 'cond'\): .*reduce_sum.*reshape"]),
}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def check_model(kiln, work, name, failures):
    """Runs the three forms of model `name` for both flags; adds failures."""
    build, outputs, explained = MODELS[name]
    work = os.path.join(work, name)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, name + ".onnx")
    onnx.save(build(), path)
    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)
    xpath = os.path.join(work, "x.npy")
    np.save(xpath, x)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])

    def step(label, cmd, expect=None):
        rc, log = run(cmd)
        if rc != 0:
            failures.append(f"{name}: {label}: exit {rc}: {' '.join(cmd)}\n"
                            f"{log}")
            return False
        for pattern in expect or []:
            if not re.search(pattern, log):
                failures.append(f"{name}: {label}: expected /{pattern}/ in "
                                f"the output of {' '.join(cmd)}:\n{log}")
                return False
        return True

    def compare(label, outdir, expected):
        for out, want in zip(outputs, expected):
            got = np.load(os.path.join(outdir, out + ".npy"))
            ok = (got.shape == want.shape and got.dtype == want.dtype and
                  np.allclose(got, want, rtol=1e-5, atol=1e-6))
            print(f"{name}: {label}: {out} {got.dtype}{list(got.shape)} vs "
                  f"ORT {want.dtype}{list(want.shape)}: "
                  f"{'ok' if ok else 'MISMATCH'}")
            if not ok:
                failures.append(f"{name}: {label}: {out}: {got} vs {want}")

    pkg = os.path.join(work, "pkg")
    if step("compile", [kiln, "compile", path, "-o", pkg]):
        step("explain", [kiln, "explain", path], explained)
    for flag in (True, False):
        fpath = os.path.join(work, f"flag_{flag}.npy")
        np.save(fpath, np.array(flag))
        expected = sess.run(outputs, {"x": x, "flag": np.array(flag)})
        inputs = ["-i", f"x={xpath}", "-i", f"flag={fpath}"]
        ref = os.path.join(work, f"ref_{flag}")
        if step(f"reference flag={flag}",
                [kiln, "run", path] + inputs + ["-o", ref]):
            compare(f"reference flag={flag}", ref, expected)
        out = os.path.join(work, f"out_{flag}")
        if os.path.isdir(pkg) and step(
                f"compiled flag={flag}",
                [kiln, "run", pkg] + inputs + ["-o", out]):
            compare(f"compiled flag={flag}", out, expected)
        # The condition bound at compile time: one branch, one graph.
        bound = os.path.join(work, f"pkg_bound_{flag}")
        value = ["--input-value", f"flag={fpath}"]
        if (step(f"explain bound flag={flag}",
                 [kiln, "explain", path] + value,
                 [r"1 graph, 0 graph breaks"]) and
                step(f"compile bound flag={flag}",
                     [kiln, "compile", path, "--fullgraph", "-o",
                      bound] + value)):
            outb = os.path.join(work, f"out_bound_{flag}")
            if step(f"compiled bound flag={flag}",
                    [kiln, "run", bound, "-i", f"x={xpath}", "-o", outb]):
                compare(f"compiled, flag bound to {flag}", outb, expected)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    failures = []
    for name in MODELS:
        check_model(args.kiln, args.work, name, failures)
    for f in failures:
        print("FAIL " + f)
    print(f"if_rank: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
