#!/usr/bin/env python3
"""The custom-op example: a model with ops of domain com.example, against
NumPy.

This script implements the custom-op check of issue 19. It builds
examples/custom_ops/myops.c into libmyops.so with the host C compiler, writes
a model y = RowL2Norm(Swish(x @ w, beta=1.5)) + 1 whose Swish and RowL2Norm
are of domain com.example, and checks that
  1. without --custom-ops, `kiln dump` fails naming the op and the docs,
  2. `kiln run MODEL --custom-ops libmyops.so` (reference runtime) and
  3. `kiln compile MODEL --custom-ops libmyops.so --fullgraph` (one graph:
     the custom ops are steps of the compiled graph, no graph break), then
     `kiln run PKG` with no flag (the package carries and loads the library)
match the NumPy reference (rtol 1e-4).
With --nvcc (the CUDA toolkit's), it also builds libmyops_cuda.so (myops.c
with the CUDA kernels of myops_cuda.cu) and
  4. `kiln compile MODEL --target cuda --custom-ops libmyops_cuda.so` gives a
     package whose two custom-op steps run their CUDA kernels on the device
     (manifest kind "custom", no host step: kiln.reference = "device");
     --cuda-out DIR keeps that package with x.npy and NumPy's y.npy for the
     GPU machine (scripts/gpu/pack.sh; gpu-pack/run.sh custom-ops runs it).

  check_custom_ops.py --kiln build/bin/kiln --cc cc --include runtime/include
                      --work DIR [--nvcc nvcc [--cuda-out DIR]]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def build_model(w):
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"),
        helper.make_node("Swish", ["h"], ["s"], name="swish",
                         domain="com.example", beta=1.5),
        helper.make_node("RowL2Norm", ["s"], ["n"], name="rownorm",
                         domain="com.example"),
        helper.make_node("Add", ["n", "one"], ["y"], name="add_one"),
    ]
    graph = helper.make_graph(
        nodes, "custom_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 18), helper.make_opsetid("com.example", 1)])
    m.ir_version = 8
    return m


def numpy_reference(x, w):
    h = x @ w
    s = h / (1 + np.exp(-1.5 * h))
    return np.sqrt((s.astype(np.float64) ** 2).sum(axis=1)).astype(
        np.float32) + 1


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def check_cuda_package(args, model, x, want, step, failures):
    """Builds libmyops_cuda.so and compiles a CUDA package calling it."""
    lib = os.path.join(args.work, "libmyops_cuda.so")
    if not step("build libmyops_cuda.so (nvcc)",
                [args.nvcc, "-shared", "-Xcompiler", "-fPIC", "-O2",
                 "-arch=sm_90", "-cudart", "static", "-DKILN_MYOPS_CUDA",
                 "-I", args.include, os.path.join(HERE, "myops_cuda.cu"),
                 os.path.join(HERE, "myops.c"), "-o", lib]):
        return
    out = args.cuda_out or os.path.join(args.work, "cuda")
    pkg = os.path.join(out, "pkg")
    if not step("compile for cuda (one graph)",
                [args.kiln, "compile", model, "--target", "cuda",
                 "--custom-ops", lib, "--fullgraph", "-o", pkg]):
        return
    with open(os.path.join(pkg, "manifest.json")) as f:
        manifest = json.load(f)
    kinds = sorted((r["op"], r["kind"])
                   for r in manifest.get("reference_ops", [])
                   if r["op"] == "kiln.custom_call" or r["kind"] != "library")
    want_kinds = [("kiln.custom_call", "custom")] * 2
    ok = kinds == want_kinds
    print(f"cuda package: the custom ops run on the device: "
          f"{'ok' if ok else 'FAILED'}")
    if not ok:
        failures.append(f"cuda package steps: {kinds}, want {want_kinds}")
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y.npy"), want)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--include", required=True,
                    help="the folder holding kiln/custom_op.h")
    ap.add_argument("--work", required=True)
    ap.add_argument("--nvcc", help="also build the CUDA kernels and compile "
                    "a CUDA package that calls them")
    ap.add_argument("--cuda-out", help="with --nvcc: keep the CUDA package, "
                    "x.npy and the expected y.npy in this folder")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = []

    def step(label, cmd, want_rc=0, want_text=None):
        rc, log = run(cmd)
        ok = rc == want_rc and (want_text is None or want_text in log)
        print(f"{label}: {'ok' if ok else 'FAILED'}")
        if not ok:
            failures.append(f"{label}: exit {rc}: {' '.join(cmd)}\n{log}")
        return ok

    lib = os.path.join(args.work, "libmyops.so")
    if not step("build libmyops.so",
                [args.cc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror",
                 "-I", args.include, os.path.join(HERE, "myops.c"), "-o",
                 lib, "-lm"]):
        print("\n".join(failures))
        return 1
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 5)).astype(np.float32)
    model = os.path.join(args.work, "custom_ops.onnx")
    onnx.save(build_model(w), model)
    xpath = os.path.join(args.work, "x.npy")
    np.save(xpath, x)
    want = numpy_reference(x, w)

    step("without --custom-ops: an error naming every unknown op",
         [args.kiln, "dump", model], 1,
         "2 nodes use 2 operators that Kiln does not support and no "
         "custom-op library provides:\n  RowL2Norm (com.example): 1 node "
         "('rownorm')\n  Swish (com.example): 1 node ('swish')\nprovide "
         "them in a custom-op library loaded with --custom-ops libNAME.so "
         "(docs/custom-ops.md)")

    def check(label, outdir):
        got = np.load(os.path.join(outdir, "y.npy"))
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4,
                                                     atol=1e-5)
        print(f"{label}: y {list(got.shape)} vs NumPy: "
              f"{'ok' if ok else 'MISMATCH'}")
        if not ok:
            failures.append(f"{label}: {got} vs {want}")

    ref = os.path.join(args.work, "ref")
    if step("reference runtime",
            [args.kiln, "run", model, "--custom-ops", lib, "-i",
             f"x={xpath}", "-o", ref]):
        check("reference runtime", ref)
    pkg = os.path.join(args.work, "pkg")
    if step("compile (one graph)",
            [args.kiln, "compile", model, "--custom-ops", lib, "--fullgraph",
             "-o", pkg]):
        with open(os.path.join(pkg, "manifest.json")) as f:
            manifest = json.load(f)
        libs = manifest.get("custom_op_libraries")
        if libs != ["custom_ops/libmyops.so"]:
            failures.append(f"manifest custom_op_libraries: {libs}")
        out = os.path.join(args.work, "out")
        if step("compiled package (loads its library)",
                [args.kiln, "run", pkg, "-i", f"x={xpath}", "-o", out]):
            check("compiled package", out)
    if args.nvcc:
        check_cuda_package(args, model, x, want, step, failures)
    for f in failures:
        print("FAIL " + f)
    print(f"custom ops: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
