#!/usr/bin/env python3
"""Kiln vs ONNX Runtime on this machine's CPU, side by side in one run.

For each CPU-sized bench graph (bench/cpu-graphs/, PyTorch exports of the
models of ../shared/bench/models.py) this script binds seeded random weights,
compiles the model with `kiln compile`, checks that the package's outputs
match ONNX Runtime's, then times both on the same inputs (warm-up runs, then
the median of timed runs; Kiln through `kiln bench`, ONNX Runtime in this
process with as many intra-op threads as the machine has cores; --rounds
alternating rounds of both, the median of each side's round medians) and prints
the ratio Kiln/ORT (below 1: Kiln is faster) and Kiln's compile time split
into its own passes and the host compiler.

  bench/cpu_bench.py --kiln build/bin/kiln [--iterations N] [MODEL ...]

With --passive neither side spins while it waits for work (OMP_WAIT_POLICY
for Kiln, ORT's allow_spinning session option): the fair setting on a machine
other processes keep busy, where a spinning thread takes the core its peer
needs.

With --baseline OTHER_KILN (another build, e.g. of main) each round also
times the package that build compiles, so a change is measured against its
baseline and ORT in the same alternating rounds.

Run it on an otherwise idle machine; BENCHMARKS.md records a run.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_weights import materialize, random_inputs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["ln_gelu", "softmax", "mlp", "gpt2_block", "resnet50", "mobilenet_v2",
          "efficientnet_b0", "vit_small", "gru_tagger", "lstm_tagger"]


def time_ort(sess, feeds, warmup, iterations):
    for _ in range(warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating Kiln/ORT timing rounds (median of the rounds' medians)")
    ap.add_argument("--threads", type=int, default=0,
                    help="threads of both sides (kiln bench --threads, ORT's intra-op "
                         "threads); 0: as many as the machine has cores")
    ap.add_argument("--passive", action="store_true",
                    help="both sides wait for work without spinning: Kiln's runs with "
                         "OMP_WAIT_POLICY=passive, ORT with session.intra_op.allow_spinning "
                         "= 0 (for a machine that other processes keep busy)")
    ap.add_argument("--baseline",
                    help="another kiln binary whose packages are timed in the same rounds")
    ap.add_argument("models", nargs="*", default=MODELS)
    args = ap.parse_args()
    threads = args.threads or os.cpu_count()
    if args.passive:
        # Read by libgomp when `kiln` starts (the runtime sets nothing).
        os.environ["OMP_WAIT_POLICY"] = "passive"
    rows = []
    for name in args.models:
        graph = os.path.join(HERE, "cpu-graphs", name + ".onnx")
        rng = np.random.default_rng(0)
        with tempfile.TemporaryDirectory() as work:
            path = materialize(graph, work, rng)
            so = ort.SessionOptions()
            so.intra_op_num_threads = threads
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            if args.passive:
                so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            feeds = random_inputs(sess, rng, path)
            inputs = []
            for input_name, x in feeds.items():
                f = os.path.join(work, "in_" + input_name + ".npy")
                np.save(f, x)
                inputs += ["--input", f"{input_name}={f}"]

            pkg = os.path.join(work, "pkg")
            subprocess.run([args.kiln, "compile", path, "-o", pkg], check=True,
                           capture_output=True, text=True)
            base_pkg = os.path.join(work, "base_pkg")
            if args.baseline:
                subprocess.run([args.baseline, "compile", path, "-o", base_pkg],
                               check=True, capture_output=True, text=True)
            manifest = json.load(open(os.path.join(pkg, "manifest.json")))
            times = manifest["compile_times_s"]
            counts = manifest["counts"]

            # Correctness first: the package against ONNX Runtime.
            out = os.path.join(work, "out")
            subprocess.run([args.kiln, "run", pkg, "-o", out] + inputs, check=True,
                           capture_output=True, text=True)
            want = sess.run(None, feeds)
            for o, w in zip(sess.get_outputs(), want):
                fname = "".join(c if c.isalnum() or c in "_-." else "_" for c in o.name)
                got = np.load(os.path.join(out, fname + ".npy"))
                if not np.allclose(got, w, rtol=1e-3, atol=1e-4, equal_nan=True):
                    sys.exit(f"{name}: output {o.name} differs from ONNX Runtime "
                             f"(max abs err {np.abs(got - w).max():.3g})")

            # Timing: rounds alternate Kiln and ORT, so that a drift of the
            # machine's speed during the run weighs on both alike; each
            # side's figure is the median of its rounds' medians.
            def time_kiln(binary, package):
                out = subprocess.run(
                    [binary, "bench", package, "--warmup", str(args.warmup),
                     "--iterations", str(args.iterations)] +
                    (["--threads", str(args.threads)] if args.threads else []) + inputs,
                    check=True, capture_output=True, text=True).stdout
                return float(re.search(r"median ([0-9.eE+-]+) ms", out).group(1))

            kiln_rounds, ort_rounds, base_rounds = [], [], []
            for _ in range(args.rounds):
                kiln_rounds.append(time_kiln(args.kiln, pkg))
                ort_rounds.append(time_ort(sess, feeds, args.warmup, args.iterations))
                if args.baseline:
                    base_rounds.append(time_kiln(args.baseline, base_pkg))
            kiln_ms = float(np.median(kiln_rounds))
            ort_ms = float(np.median(ort_rounds))
            base_ms = float(np.median(base_rounds)) if base_rounds else None
            rows.append((name, kiln_ms, ort_ms, times, counts, base_ms))
            print(f"{name}: kiln {kiln_ms:.3f} ms, onnxruntime {ort_ms:.3f} ms, "
                  f"ratio {kiln_ms / ort_ms:.2f}"
                  + (f"; baseline {base_ms:.3f} ms, ratio {base_ms / ort_ms:.2f}"
                     if base_ms else ""), flush=True)

    print()
    print(f"CPU: {os.cpu_count()} cores, {threads} threads each"
          f"{' (passive waits on both sides)' if args.passive else ''}; "
          f"onnxruntime {ort.__version__}; {args.rounds} "
          f"alternating rounds of {args.iterations} timed runs after {args.warmup} "
          f"warm-up runs each; median of the rounds' medians")
    base = " baseline ms | baseline/ORT |" if args.baseline else ""
    print("| model | Kiln ms | ORT ms | Kiln/ORT |" + base +
          " kernels (fused/library/fallback) "
          "| compile: Kiln passes+codegen s | host compiler s |")
    print("|---|---:|---:|---:|" + ("---:|---:|" if args.baseline else "") +
          "---|---:|---:|")
    for name, k, o, t, c, b in rows:
        print(f"| {name} | {k:.3f} | {o:.3f} | {k / o:.2f} | " +
              (f"{b:.3f} | {b / o:.2f} | " if b else "") +
              f"{c['fused']}/{c['library']}/{c['fallback']} | "
              f"{t['kiln_passes'] + t['codegen']:.3f} | {t['host_compiler']:.2f} |")


if __name__ == "__main__":
    main()
