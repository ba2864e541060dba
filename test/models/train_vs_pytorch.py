#!/usr/bin/env python3
#===- train_vs_pytorch.py - Kiln's training against PyTorch's references --===#
#
# Compiles a training fixture (../shared/bench/train/NAME.onnx, README.md
# there) with `kiln compile --train --lr 0.05`, runs `kiln train --steps 20
# --losses L --gradients G` on NAME.inputs_0.npy and compares
#
#   * every gradient of the first batch (G/<param>.npy) with PyTorch's
#     (NAME.grad/<param>.npy): |kiln - torch| <= atol + rtol |torch|,
#     rtol 1e-4, atol 1e-6 (as numpy.allclose);
#   * each of the 20 losses (before each SGD update) with the first 20 of
#     NAME.losses.json's "losses": relative error <= 1e-4.
#
# Prints the worst error of each parameter and of the losses (as a fraction
# of its tolerance); exits 1 on any mismatch or missing gradient.
#
#   usage: train_vs_pytorch.py --kiln KILN --fixtures DIR NAME
#                              [--work DIR] [--target cpu]
#
#===----------------------------------------------------------------------===#

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

RTOL, ATOL = 1e-4, 1e-6
LOSS_RTOL = 1e-4
STEPS, LR = 20, 0.05


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if result.returncode != 0:
        sys.stdout.write(result.stdout)
        sys.exit(f"error: exit status {result.returncode}")
    return result.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--work", help="folder for the package (default: a "
                    "temporary one, removed afterwards)")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("name")
    args = ap.parse_args()

    base = os.path.join(args.fixtures, args.name)
    for suffix in (".onnx", ".inputs_0.npy", ".losses.json", ".grad"):
        if not os.path.exists(base + suffix):
            sys.exit(f"error: fixture {base + suffix} not found")
    work = args.work or tempfile.mkdtemp(prefix="kiln-train-")
    os.makedirs(work, exist_ok=True)
    package = os.path.join(work, "package")
    losses_file = os.path.join(work, "losses.json")
    grads_dir = os.path.join(work, "gradients")
    shutil.rmtree(grads_dir, ignore_errors=True)
    try:
        print(run([args.kiln, "compile", base + ".onnx", "--train",
                   "--lr", str(LR), "--target", args.target, "-o", package]),
              end="")
        run([args.kiln, "train", package,
             "--input", "inputs_0=" + base + ".inputs_0.npy",
             "--steps", str(STEPS), "--losses", losses_file,
             "--gradients", grads_dir])
        ok = compare(base, losses_file, grads_dir)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{args.name}: {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def compare(base, losses_file, grads_dir):
    ok = True
    # Gradients: one file per initializer in NAME.grad/.
    ref_dir = base + ".grad"
    refs = sorted(f for f in os.listdir(ref_dir) if f.endswith(".npy"))
    got_files = sorted(f for f in os.listdir(grads_dir) if f.endswith(".npy"))
    extra = sorted(set(got_files) - set(refs))
    if extra:
        print(f"gradients kiln wrote without a reference: {extra}")
        ok = False
    worst_grad = 0.0
    print(f"gradients (rtol {RTOL:g}, atol {ATOL:g}); error as a fraction of "
          f"the tolerance, max |diff|, max |torch|:")
    for f in refs:
        param = f[:-len(".npy")]
        path = os.path.join(grads_dir, f)
        if not os.path.exists(path):
            print(f"  {param}: MISSING from kiln's gradients")
            ok = False
            continue
        want = np.load(os.path.join(ref_dir, f)).astype(np.float64)
        got = np.load(path).astype(np.float64)
        if got.shape != want.shape:
            print(f"  {param}: shape {got.shape}, PyTorch's {want.shape}")
            ok = False
            continue
        diff = np.abs(got - want)
        frac = diff / (ATOL + RTOL * np.abs(want))
        i = np.unravel_index(np.argmax(frac), frac.shape)
        worst = float(frac[i])
        worst_grad = max(worst_grad, worst)
        bad = worst > 1.0 or not np.all(np.isfinite(got))
        ok &= not bad
        print(f"  {param:28s} {str(tuple(want.shape)):14s} {worst:8.4f}  "
              f"{diff.max():.3e}  {np.abs(want).max():.3e}"
              f"{'  MISMATCH at ' + str(tuple(int(k) for k in i)) if bad else ''}")
    print(f"worst gradient error: {worst_grad:.4f} of the tolerance")

    # Losses: the loss before each of the 20 updates.
    got = json.load(open(losses_file))
    want = json.load(open(base + ".losses.json"))["losses"][:STEPS]
    if len(got) != STEPS:
        print(f"kiln train wrote {len(got)} losses, expected {STEPS}")
        return False
    rel = [abs(g - w) / abs(w) for g, w in zip(got, want)]
    worst_step = int(np.argmax(rel))
    print(f"losses: step 1 {got[0]:.8f} (PyTorch {want[0]:.8f}), step {STEPS} "
          f"{got[-1]:.8f} (PyTorch {want[-1]:.8f})")
    print(f"worst loss error: {rel[worst_step]:.3e} relative at step "
          f"{worst_step + 1} (tolerance {LOSS_RTOL:g})")
    for step, (g, w, r) in enumerate(zip(got, want, rel), 1):
        if r > LOSS_RTOL:
            print(f"  step {step}: kiln {g:.8f}, PyTorch {w:.8f}: MISMATCH")
            ok = False
    return ok


if __name__ == "__main__":
    sys.exit(main())
