#!/usr/bin/env python3
# ===- check_training.py - Kiln's training results vs PyTorch's ---------=== #
#
# Compares what a Kiln training package computed (kiln train / kiln-runner
# --losses FILE --gradients DIR, 20 steps) with PyTorch's references of the
# same graph (PREFIX.grad/ and PREFIX.losses.json) by train_vs_pytorch.py's
# compare(): every gradient within rtol 1e-4, atol 1e-6, each loss within
# 1e-4 relative. Exits 1 on a mismatch. Needs numpy only (the GPU machine
# runs it next to a copy of train_vs_pytorch.py).
#
# Usage: check_training.py --losses L.json --gradients DIR --reference PREFIX
# ===------------------------------------------------------------------=== #
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_vs_pytorch import compare  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--losses", required=True)
    p.add_argument("--gradients", required=True)
    p.add_argument("--reference", required=True)
    a = p.parse_args()
    ok = compare(a.reference, a.losses, a.gradients)
    print(f"{os.path.basename(a.reference)}: {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
