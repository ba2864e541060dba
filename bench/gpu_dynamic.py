"""Kiln's CUDA packages for a range of batch sizes (docs/dynamic-shapes.md)
on the GPU: correct at several sizes against PyTorch, and as fast as the
packages compiled for one size, side by side in one run.

Runs on the GPU machine from the gpu-pack/ folder (gpu-pack/run.sh dynamic):

  python3 gpu_dynamic.py --pack gpu-pack [--rounds 3] [--iterations 50]

scripts/gpu/pack.sh writes gpu-pack/dynamic/cases.txt ("NAME MODEL AXES MAX
SMALL" per line, AXES and sizes comma-separated: "gpt2_seq gpt2_block
batch,seq 16,1024 1,128") and, for each case, three packages of the bench
graph with those axes named (bench/dynamic_dims.py): NAME-dyn (--dim
AXIS=1..MAX for each, one package for every size), NAME-at-MAX and
NAME-at-SMALL (fixed sizes; "16x1024"). For each case this script
  1. regenerates the weights with `models.py export` (the packages take them
     from the ONNX file's external data, kiln-runner --weights-dir);
  2. runs NAME-dyn at every size 1, at 3 (77 for a sequence) and at MAX on
     random inputs and compares each output with PyTorch's (float32, TF32
     off) on the same inputs;
  3. times NAME-dyn against the fixed-size packages at MAX and at SMALL, in
     alternating rounds of kiln-runner --iterations (the median of the
     rounds' CUDA-event medians, device_median_ms; both replay a CUDA
     graph), and prints dynamic / fixed.
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
    for name, model_name, axes, top, small in cases:
        if args.models and name not in args.models:
            continue
        axes = axes.split(",")
        top = tuple(int(v) for v in top.split(","))
        small = tuple(int(v) for v in small.split(","))
        run([sys.executable, os.path.join(args.pack, "models.py"), "export", onnx_dir, model_name])
        model, example = models.build(model_name)
        model = model.cuda().float().eval()
        names = input_names(onnx_dir, model_name)
        dyn = os.path.join(base, name + "-dyn")
        label = lambda sizes: "x".join(str(v) for v in sizes)
        row = {"case": name, "axes": ",".join(axes), "range": "1..%s" % label(top),
               "matches_pytorch": True}
        checked = [tuple(1 for _ in axes), tuple(min(3 if a == "batch" else 77, t) for a, t in zip(axes, top)),
                   top]
        flags_at = {}
        for sizes in sorted(set(checked) | {small}):
            gen = torch.Generator().manual_seed(sum(sizes))
            inputs = [torch.randn(sizes + tuple(e.shape[len(sizes):]), generator=gen) for e in example]
            flags = ["--weights-dir", onnx_dir]
            for k, t in enumerate(inputs):
                path = os.path.join(work, "%s-%s-in%d.npy" % (name, label(sizes), k))
                np.save(path, t.numpy())
                flags += ["--input", "%s=%s" % (names[k], path)]
            flags_at[sizes] = flags
            if sizes not in checked:
                continue
            out = os.path.join(work, "%s-%s-out" % (name, label(sizes)))
            os.makedirs(out, exist_ok=True)
            run([runner, dyn, *flags, "--output-dir", out])
            with torch.no_grad():
                want = model(*[t.cuda() for t in inputs]).float().cpu().numpy()
            got = np.load(os.path.join(out, os.listdir(out)[0]))
            scale = min(1.0, float(np.max(np.abs(want)))) or 1.0
            ok = got.shape == want.shape and bool(
                np.allclose(got, want, rtol=TOLERANCE[0], atol=TOLERANCE[1] * scale))
            diff = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
            row["max_abs_diff_" + label(sizes)] = diff
            row["matches_pytorch"] &= ok
            failed |= not ok
            print("%s at %s: %s (max |diff| %.3g)" % (name, label(sizes),
                  "matches PyTorch" if ok else "DIFFERS", diff), flush=True)
        for key, sizes in (("max", top), ("small", small)):
            fixed = os.path.join(base, "%s-at-%s" % (name, label(sizes)))
            times = {"dyn": [], "fixed": []}
            for _ in range(args.rounds):
                times["dyn"].append(median_ms(runner, dyn, flags_at[sizes], args.iterations))
                times["fixed"].append(median_ms(runner, fixed, flags_at[sizes], args.iterations))
            d, f = float(np.median(times["dyn"])), float(np.median(times["fixed"]))
            row[key] = {"at": label(sizes), "dynamic_ms": d, "fixed_ms": f, "ratio": d / f}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| case | range | matches PyTorch | at max: dynamic / fixed ms | ratio "
          "| small: dynamic / fixed ms | ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        m, s = r["max"], r["small"]
        print("| %s | %s %s | %s | %s: %.4f / %.4f | %.3f | %s: %.4f / %.4f | %.3f |" % (
            r["case"], r["axes"], r["range"], "yes" if r["matches_pytorch"] else "NO",
            m["at"], m["dynamic_ms"], m["fixed_ms"], m["ratio"],
            s["at"], s["dynamic_ms"], s["fixed_ms"], s["ratio"]))
    sys.exit(1 if failed else 0)


def input_names(onnx_dir, name):
    import onnx
    g = onnx.load(os.path.join(onnx_dir, name + ".onnx"), load_external_data=False).graph
    inits = {t.name for t in g.initializer}
    return [i.name for i in g.input if i.name not in inits]


if __name__ == "__main__":
    main()
