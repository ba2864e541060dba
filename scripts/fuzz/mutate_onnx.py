#!/usr/bin/env python3
#===- scripts/fuzz/mutate_onnx.py - Structured mutation campaign ----------===#
#
# This file implements the structured half of Kiln's fuzzing: it takes ONNX
# models (the node tests, the bench graphs), writes mutants of them that a
# hostile or broken exporter could produce (dims set to 0, -1 or huge,
# attributes out of range, dtypes swapped, references left dangling,
# initializers whose data does not match their dims), and runs each through
# `kiln dump` and `kiln compile --cxx /bin/true` (everything up to the host
# compiler). A run that ends in a signal, an abort, a sanitizer report or a
# timeout is a crash; a clean error message or a compiled package is fine.
# With --differential, a mutant that compiles is also built with the host
# compiler and run on random inputs, as a package and on the reference
# runtime: a crash in either or outputs that differ are findings too.
#
#   scripts/fuzz/mutate_onnx.py --kiln build/bin/kiln --models DIR... \
#       --out crashes/ [--limit N] [--seed S] [-j 2]
#
# Crashing mutants are copied to --out with the command and its stderr; the
# minimised ones become regression files under test/fuzz/regressions/.
# docs/reliability.md describes the campaign and its last results.
#
#===----------------------------------------------------------------------===#
import argparse
import concurrent.futures
import copy
import os
import random
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto

HUGE = [2**31, 2**40, 2**62, 2**63 - 1]
EDGE_INTS = [0, -1, -2, 1, 3, 2**31 - 1, 2**32, -(2**31)] + HUGE


def value_infos(g):
    return list(g.input) + list(g.output) + list(g.value_info)


def mutate_dim(model, rng):
    infos = [vi for vi in value_infos(model.graph)
             if vi.type.HasField("tensor_type") and
             vi.type.tensor_type.HasField("shape") and
             len(vi.type.tensor_type.shape.dim) > 0]
    if not infos:
        return None
    vi = rng.choice(infos)
    dims = vi.type.tensor_type.shape.dim
    d = dims[rng.randrange(len(dims))]
    d.Clear()
    d.dim_value = rng.choice([0, 0, 0, -1, 1, 2**31, 2**40, 2**62])
    return f"dim of '{vi.name}' = {d.dim_value}"


def mutate_attr(model, rng):
    attrs = [(n, a) for n in model.graph.node for a in n.attribute
             if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS)]
    if not attrs:
        return None
    node, a = rng.choice(attrs)
    v = rng.choice(EDGE_INTS)
    if a.type == onnx.AttributeProto.INT:
        a.i = v
    elif a.ints:
        a.ints[rng.randrange(len(a.ints))] = v
    else:
        a.ints.append(v)
    return f"attribute {a.name} of '{node.name or node.op_type}' = {v}"


def mutate_dtype(model, rng):
    infos = [vi for vi in value_infos(model.graph)
             if vi.type.HasField("tensor_type")]
    if not infos:
        return None
    vi = rng.choice(infos)
    t = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL,
                    TensorProto.FLOAT16, TensorProto.STRING,
                    TensorProto.UINT8, 0, 17, 999])
    vi.type.tensor_type.elem_type = t
    return f"dtype of '{vi.name}' = {t}"


def mutate_reference(model, rng):
    nodes = [n for n in model.graph.node if n.input]
    if not nodes:
        return None
    n = rng.choice(nodes)
    i = rng.randrange(len(n.input))
    n.input[i] = rng.choice(["dangling_ref", n.output[0] if n.output else "",
                             "", model.graph.node[-1].output[0]
                             if model.graph.node[-1].output else "x"])
    return f"input {i} of '{n.name or n.op_type}' = '{n.input[i]}'"


def mutate_initializer(model, rng):
    inits = list(model.graph.initializer)
    if not inits:
        return None
    t = rng.choice(inits)
    choice = rng.randrange(3)
    if choice == 0 and t.dims:
        t.dims[rng.randrange(len(t.dims))] = rng.choice([0, -1, 2**40, 7])
        return f"initializer '{t.name}' dims changed"
    if choice == 1:
        if t.raw_data:
            t.raw_data = t.raw_data[:len(t.raw_data) // 2]
        else:
            t.dims.append(rng.choice([2, 2**33]))
        return f"initializer '{t.name}' data truncated"
    t.data_type = rng.choice([TensorProto.INT64, TensorProto.DOUBLE,
                              TensorProto.BOOL, 0, 999])
    return f"initializer '{t.name}' dtype = {t.data_type}"


def mutate_bytes(data, rng):
    b = bytearray(data)
    kind = rng.randrange(3)
    if kind == 0 and b:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return bytes(b), "bits flipped"
    if kind == 1:
        return bytes(b[:rng.randrange(len(b) + 1)]), "truncated"
    pos = rng.randrange(len(b) + 1)
    return bytes(b[:pos] + bytes([0xff] * rng.randint(1, 10)) + b[pos:]), \
        "bytes inserted"


STRUCTURED = [mutate_dim, mutate_dim, mutate_attr, mutate_attr, mutate_dtype,
              mutate_reference, mutate_initializer]


def make_mutant(path, rng):
    """Returns (bytes, description) of one mutant of the model at path."""
    model = onnx.load(path, load_external_data=False)
    if rng.random() < 0.15:
        return mutate_bytes(model.SerializeToString(), rng)
    desc = None
    for _ in range(10):
        desc = rng.choice(STRUCTURED)(model, rng)
        if desc:
            break
    if desc is None:
        return None
    return model.SerializeToString(), desc


def is_crash(rc, stderr):
    if rc is None:
        return "timeout"
    if rc < 0 or rc >= 128:
        return f"signal/exit {rc}"
    for marker in ("AddressSanitizer", "runtime error:", "LeakSanitizer",
                   "terminate called", "Assertion", "Stack dump", "PLEASE submit"):
        if marker in stderr:
            return marker
    return None


def run_step(label, cmd, timeout):
    """Runs one command: (label, exit status or None on timeout, why it is a
    crash or None, the end of its stderr)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           errors="replace", timeout=timeout)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, ""
    return (label, rc, is_crash(rc, err), err[-2000:])


def random_feeds(model_bytes, rng):
    """Random .npy-able inputs for the graph inputs of a model, or None when
    an input's shape or dtype is not fully known."""
    import numpy as np
    m = onnx.ModelProto()
    m.ParseFromString(model_bytes)
    inits = {t.name for t in m.graph.initializer}
    feeds = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else -1
                for d in tt.shape.dim]
        if any(d < 0 or d > 4096 for d in dims) or np.prod(dims) > 1 << 20:
            return None
        kind = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
                TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
                TensorProto.BOOL: np.bool_, TensorProto.UINT8: np.uint8,
                TensorProto.INT8: np.int8}.get(tt.elem_type)
        if kind is None:
            return None
        if kind in (np.float32, np.float64):
            v = np.asarray(rng.standard_normal(dims), kind)
        elif kind == np.bool_:
            v = rng.random(dims) < 0.5
        else:
            v = rng.integers(0, 3, dims).astype(kind)
        feeds[vi.name] = v
    return feeds


def run_differential(kiln, tmp, model, data, timeout):
    """Compiles the mutant with the host compiler and runs it on the
    reference runtime and as a package: a signal in either, or outputs that
    differ, is a finding."""
    import numpy as np
    feeds = random_feeds(data, np.random.default_rng(0))
    if feeds is None:
        return []
    args = []
    for name, v in feeds.items():
        path = os.path.join(tmp, f"in{len(args)}.npy")
        np.save(path, v)
        args += ["--input", f"{name}={path}"]
    results = []
    for label, cmd in (
            ("compile (host compiler)",
             [kiln, "compile", model, "-o", os.path.join(tmp, "full")]),
            ("run reference", [kiln, "run", model, "-o",
                               os.path.join(tmp, "ref")] + args),
            ("run package", [kiln, "run", os.path.join(tmp, "full"), "-o",
                             os.path.join(tmp, "pkg-out")] + args)):
        step = run_step(label, cmd, timeout)
        results.append(step)
        if step[2] or step[1] != 0:
            return results
    ref, out = os.path.join(tmp, "ref"), os.path.join(tmp, "pkg-out")
    for f in sorted(os.listdir(ref)):
        a, b = np.load(os.path.join(ref, f)), np.load(os.path.join(out, f))
        same = a.shape == b.shape and a.dtype == b.dtype and (
            np.allclose(a, b, rtol=1e-3, atol=1e-4, equal_nan=True)
            if a.dtype.kind == "f" else np.array_equal(a, b))
        if not same:
            results.append(("compare", 0, f"output {f} differs between the "
                            "reference runtime and the package", ""))
    return results


def run_one(kiln, data, timeout, differential=False):
    with tempfile.TemporaryDirectory(prefix="kiln-mut-") as tmp:
        model = os.path.join(tmp, "m.onnx")
        with open(model, "wb") as f:
            f.write(data)
        results = []
        for cmd in ([kiln, "dump", model],
                    [kiln, "compile", model, "-o", os.path.join(tmp, "pkg"),
                     "--cxx", "/bin/true"]):
            results.append(run_step(cmd[1], cmd, timeout))
            if results[-1][2]:
                return results
        if differential and results[-1][1] == 0:
            results += run_differential(kiln, tmp, model, data, timeout)
        return results


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--models", nargs="+", required=True,
                    help="ONNX files or folders searched for model.onnx/*.onnx")
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--per-model", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--differential", action="store_true",
                    help="also compile the mutants that compile with the "
                    "host compiler and compare the package's outputs with "
                    "the reference runtime's on random inputs")
    args = ap.parse_args()

    files = []
    for m in args.models:
        if os.path.isdir(m):
            for root, _, names in os.walk(m):
                files += [os.path.join(root, n) for n in names
                          if n.endswith(".onnx")]
        else:
            files.append(m)
    files.sort()
    rng = random.Random(args.seed)
    rng.shuffle(files)
    os.makedirs(args.out, exist_ok=True)

    jobs = []
    for path in files:
        for k in range(args.per_model):
            if len(jobs) >= args.limit:
                break
            try:
                mutant = make_mutant(path, random.Random(rng.random()))
            except Exception:  # an unreadable seed: not Kiln's business
                mutant = None
            if mutant:
                jobs.append((path, k) + mutant)
    crashes = clean = 0
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        futs = {pool.submit(run_one, args.kiln, data, args.timeout,
                            args.differential):
                (path, k, data, desc) for path, k, data, desc in jobs}
        for i, fut in enumerate(concurrent.futures.as_completed(futs)):
            path, k, data, desc = futs[fut]
            res = fut.result()
            crashed = [r for r in res if r[2]]
            if not crashed:
                clean += 1
                continue
            crashes += 1
            stage, rc, why, err = crashed[0]
            name = (os.path.basename(os.path.dirname(path)) + "-" +
                    os.path.basename(path)[:-5] + f"-{k}")
            with open(os.path.join(args.out, name + ".onnx"), "wb") as f:
                f.write(data)
            with open(os.path.join(args.out, name + ".txt"), "w") as f:
                f.write(f"seed: {path}\nmutation: {desc}\nkiln {stage}: {why}"
                        f" (rc {rc})\n\n{err}\n")
            print(f"CRASH {name}: {desc}: kiln {stage}: {why}", flush=True)
    print(f"{len(jobs)} mutants: {clean} without a crash, {crashes} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
