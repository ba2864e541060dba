#!/usr/bin/env python3
# ===- check_training.py - Kiln's training results vs PyTorch's ---------=== #
#
# Compares what a Kiln training package computed (kiln train / kiln-runner
# --losses FILE --gradients DIR) with PyTorch's references of the same
# graph (../shared/bench/train/NAME.grad/ and NAME.losses.json): every
# gradient within rtol 1e-4, atol 1e-6 (float32), and each loss within 1e-4
# relative of PyTorch's loss at the same step. Prints the worst errors;
# exits 1 on a mismatch. Needs numpy only (it runs on the GPU machine too).
#
# Usage: check_training.py --losses L.json --gradients DIR --reference PREFIX
#   (PREFIX.grad/ and PREFIX.losses.json; PREFIX is e.g.
#    ../shared/bench/train/mlp_small_train)
# ===------------------------------------------------------------------=== #
import argparse
import json
import os
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--losses", required=True)
    p.add_argument("--gradients", required=True)
    p.add_argument("--reference", required=True)
    a = p.parse_args()
    ok = True
    ref_dir = a.reference + ".grad"
    worst = 0.0
    names = sorted(f for f in os.listdir(ref_dir) if f.endswith(".npy"))
    for f in names:
        mine = os.path.join(a.gradients, f)
        if not os.path.exists(mine):
            print(f"gradient {f[:-4]}: missing from {a.gradients}")
            ok = False
            continue
        g, r = np.load(mine), np.load(os.path.join(ref_dir, f))
        if g.shape != r.shape:
            print(f"gradient {f[:-4]}: shape {g.shape}, PyTorch {r.shape}")
            ok = False
            continue
        ratio = float(np.max(np.abs(g - r) / (1e-6 + 1e-4 * np.abs(r))))
        worst = max(worst, ratio)
        if ratio > 1:
            print(f"gradient {f[:-4]}: off by {ratio:.3g}x the tolerance")
            ok = False
    with open(a.losses) as fh:
        losses = json.load(fh)
    with open(a.reference + ".losses.json") as fh:
        ref = json.load(fh)["losses"]
    worst_loss = 0.0
    for i, (l, r) in enumerate(zip(losses, ref)):
        rel = abs(l - r) / abs(r)
        worst_loss = max(worst_loss, rel)
        if rel > 1e-4:
            print(f"step {i + 1}: loss {l:.9g}, PyTorch {r:.9g} ({rel:.2e} relative)")
            ok = False
    if len(losses) > len(ref):
        print(f"{len(losses)} losses but PyTorch's reference has {len(ref)}")
        ok = False
    print(f"{os.path.basename(a.reference)}: {len(names)} gradients, worst "
          f"{worst:.3g} of the tolerance (rtol 1e-4, atol 1e-6); "
          f"{len(losses)} losses, worst {worst_loss:.2e} relative "
          f"({'OK' if ok else 'MISMATCH'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
