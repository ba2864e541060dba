#!/usr/bin/env python3
"""Checks the bench models compiled once for a range of batch sizes
(docs/dynamic-shapes.md) on the CPU: correct at several sizes, and as fast
as the package compiled for the size itself.

  python3 bench/check_dynamic.py [--kiln build/bin/kiln] [--work DIR]
      [--models mlp softmax ...] [--max 8] [--sizes 1 3 8] [--rounds 3]

For each CPU-sized bench graph (bench/cpu-graphs/, seeded random weights as
cpu_bench.py binds them): bench/dynamic_dims.py names the batch dim, `kiln
compile --dim batch=1..MAX` writes one package; at each size it runs with
random inputs and is compared with the reference runtime (`kiln run` on the
ONNX file); then `kiln bench` times it against a package compiled with
`--dim batch=SIZE` at the smallest and largest size, in alternating rounds
(median of the rounds' medians). Exits 1 when an output differs.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from onnx_weights import materialize  # noqa: E402

TOLERANCE = {"gpt2_block": 1e-4, "resnet50": 1e-3}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout + r.stderr


def median_ms(kiln, package, size, iterations):
    """`kiln bench`'s median; `size` sizes a range package's random inputs."""
    dims = ["--dim", "batch=%d" % size] if size else []
    out = run([kiln, "bench", package, *dims,
               "--iterations", str(iterations), "--warmup", "3"])
    m = re.search(r"median ([0-9.]+) (ms|us|s)\b", out)
    if not m:
        sys.exit("kiln bench %s: no median in its output:\n%s" % (package, out))
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    return float(m.group(1)) * scale


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", default=os.path.join(HERE, "..", "build", "bin", "kiln"))
    ap.add_argument("--work", default="/tmp/kiln-check-dynamic")
    ap.add_argument("--models", nargs="+",
                    default=["mlp", "softmax", "ln_gelu", "gpt2_block", "resnet50"])
    ap.add_argument("--max", type=int, default=8)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 3, 8])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ok = True
    rows = []
    for name in args.models:
        rng = np.random.default_rng(0)
        dyn = os.path.join(args.work, name + "_dyn.onnx")
        run([sys.executable, os.path.join(HERE, "dynamic_dims.py"),
             os.path.join(HERE, "cpu-graphs", name + ".onnx"), dyn])
        os.makedirs(os.path.join(args.work, "w"), exist_ok=True)
        model = materialize(dyn, os.path.join(args.work, "w"), rng)
        package = os.path.join(args.work, name + "_range")
        report = run([args.kiln, "compile", model, "--dim",
                      "batch=1..%d" % args.max, "-o", package])
        if "sizes batch in" not in report:
            print("%s: not compiled for a range of sizes:\n%s" % (name, report))
            ok = False
            continue
        import onnx
        g = onnx.load(model, load_external_data=False).graph
        inits = {i.name for i in g.initializer}
        inputs = [i for i in g.input if i.name not in inits]
        errors = []
        for size in args.sizes:
            flags = []
            for i in inputs:
                shape = [size if d.dim_param == "batch" else d.dim_value
                         for d in i.type.tensor_type.shape.dim]
                path = os.path.join(args.work, "%s_%s_%d.npy" % (name, i.name, size))
                np.save(path, rng.standard_normal(shape).astype(np.float32))
                flags += ["-i", "%s=%s" % (i.name, path)]
            outs = {}
            for what, target in (("kiln", package), ("ref", model)):
                d = os.path.join(args.work, "%s_%s_%d" % (name, what, size))
                os.makedirs(d, exist_ok=True)
                run([args.kiln, "run", target, *flags, "-o", d])
                outs[what] = d
            worst = 0.0
            for f in os.listdir(outs["ref"]):
                a = np.load(os.path.join(outs["kiln"], f))
                b = np.load(os.path.join(outs["ref"], f))
                if a.shape != b.shape:
                    sys.exit("%s batch %d: %s has shape %s, the reference %s"
                             % (name, size, f, a.shape, b.shape))
                worst = max(worst, float(np.max(np.abs(a - b))))
            errors.append(worst)
            if worst > TOLERANCE.get(name, 1e-5):
                ok = False
        times = []
        for size in (min(args.sizes), max(args.sizes)):
            static = os.path.join(args.work, "%s_b%d" % (name, size))
            run([args.kiln, "compile", model, "--dim", "batch=%d" % size, "-o", static])
            t_dyn, t_static = [], []
            for _ in range(args.rounds):
                t_static.append(median_ms(args.kiln, static, None, args.iterations))
                t_dyn.append(median_ms(args.kiln, package, size, args.iterations))
            times.append((size, float(np.median(t_dyn)), float(np.median(t_static))))
        rows.append((name, errors, times))
    print("| model | max abs error vs reference at batch %s | %s |" % (
        ", ".join(map(str, args.sizes)),
        " | ".join("batch %d: range / fixed ms (ratio)" % s
                   for s in (min(args.sizes), max(args.sizes)))))
    print("|---|---|" + "---|" * 2)
    for name, errors, times in rows:
        print("| %s | %s | %s |" % (
            name, ", ".join("%.1e" % e for e in errors),
            " | ".join("%.3f / %.3f (%.2f)" % (d, s, d / s) for _, d, s in times)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
