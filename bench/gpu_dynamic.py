"""Kiln's CUDA packages for a range of batch sizes (docs/dynamic-shapes.md)
on the GPU: correct at several sizes against PyTorch, and as fast as the
packages compiled for one size, side by side in one run.

Runs on the GPU machine from the gpu-pack/ folder (gpu-pack/run.sh dynamic):

  python3 gpu_dynamic.py --pack gpu-pack [--rounds 3] [--iterations 50]

scripts/gpu/pack.sh writes gpu-pack/dynamic/cases.txt ("MODEL MAX" per
line) and, for each model, three packages of the bench graph with a named
batch dim (bench/dynamic_dims.py): MODEL-dyn (--dim batch=1..MAX, one
package for every batch), MODEL-b1 (--dim batch=1) and MODEL-bMAX
(--dim batch=MAX). For each model this script
  1. regenerates the weights with `models.py export` (the packages take them
     from the ONNX file's external data, kiln-runner --weights-dir);
  2. runs MODEL-dyn at batch 1, 3 and MAX on random inputs and compares
     each output with PyTorch's (float32, TF32 off) on the same inputs;
  3. times MODEL-dyn against the fixed-size package at batch MAX and at 1,
     in alternating rounds of kiln-runner --iterations (the median of the
     rounds' CUDA-event medians, device_median_ms; both replay a CUDA
     graph), and prints dynamic / static.
Exits 1 when an output differs.
"""
import argparse, json, os, subprocess, sys, tempfile

import numpy as np

TOLERANCE = (1e-3, 1e-4)  # rtol, atol (scaled by the output's magnitude)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def median_ms(runner, pkg, flags, iterations):
    out = run([runner, pkg, *flags, "--warmup", "5", "--iterations", str(iterations)])
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    return json.loads(line)["device_median_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--models", nargs="*")
    args = ap.parse_args()
    sys.path.insert(0, args.pack)
    import torch
    import models
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    runner = os.path.join(args.pack, "bin", "kiln-runner")
    base = os.path.join(args.pack, "dynamic")
    cases = [l.split() for l in open(os.path.join(base, "cases.txt")) if l.strip()]
    work = tempfile.mkdtemp(prefix="kiln-dynamic-")
    onnx_dir = os.path.join(work, "onnx")
    failed = False
    rows = []
    for name, top in cases:
        if args.models and name not in args.models:
            continue
        top = int(top)
        run([sys.executable, os.path.join(args.pack, "models.py"), "export", onnx_dir, name])
        model, example = models.build(name)
        model = model.cuda().float().eval()
        dyn = os.path.join(base, name + "-dyn")
        flags_at = {}
        row = {"model": name, "range": "1..%d" % top, "matches_pytorch": True}
        for b in sorted({1, 3, top}):
            gen = torch.Generator().manual_seed(b)
            inputs = [torch.randn((b,) + tuple(e.shape[1:]), generator=gen) for e in example]
            flags = ["--weights-dir", onnx_dir]
            for k, t in enumerate(inputs):
                path = os.path.join(work, "%s-%d-in%d.npy" % (name, b, k))
                np.save(path, t.numpy())
                flags += ["--input", "%s=%s" % (input_names(onnx_dir, name)[k], path)]
            flags_at[b] = flags
            out = os.path.join(work, "%s-%d-out" % (name, b))
            os.makedirs(out, exist_ok=True)
            run([runner, dyn, *flags, "--output-dir", out])
            with torch.no_grad():
                want = model(*[t.cuda() for t in inputs]).float().cpu().numpy()
            got = np.load(os.path.join(out, os.listdir(out)[0]))
            scale = min(1.0, float(np.max(np.abs(want)))) or 1.0
            ok = got.shape == want.shape and bool(
                np.allclose(got, want, rtol=TOLERANCE[0], atol=TOLERANCE[1] * scale))
            diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
            row["max_abs_diff_b%d" % b] = diff
            row["matches_pytorch"] &= ok
            failed |= not ok
            print("%s batch %d: %s (max |diff| %.3g)" % (name, b, "matches PyTorch" if ok else "DIFFERS", diff),
                  flush=True)
        for b in (top, 1):
            static = os.path.join(base, "%s-b%d" % (name, b))
            times = {"dyn": [], "static": []}
            for _ in range(args.rounds):
                times["dyn"].append(median_ms(runner, dyn, flags_at[b], args.iterations))
                times["static"].append(median_ms(runner, static, flags_at[b], args.iterations))
            d, s = float(np.median(times["dyn"])), float(np.median(times["static"]))
            row["b%d_dynamic_ms" % b], row["b%d_static_ms" % b] = d, s
            row["b%d_ratio" % b] = d / s
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| model | range | matches PyTorch (1, 3, max) | batch max: dynamic / static ms | ratio "
          "| batch 1: dynamic / static ms | ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        top = int(r["range"].split("..")[1])
        print("| %s | %s | %s | %.3f / %.3f | %.3f | %.4f / %.4f | %.3f |" % (
            r["model"], r["range"], "yes" if r["matches_pytorch"] else "NO",
            r["b%d_dynamic_ms" % top], r["b%d_static_ms" % top], r["b%d_ratio" % top],
            r["b1_dynamic_ms"], r["b1_static_ms"], r["b1_ratio"]))
    sys.exit(1 if failed else 0)


def input_names(onnx_dir, name):
    import onnx
    g = onnx.load(os.path.join(onnx_dir, name + ".onnx"), load_external_data=False).graph
    inits = {t.name for t in g.initializer}
    return [i.name for i in g.input if i.name not in inits]


if __name__ == "__main__":
    main()
