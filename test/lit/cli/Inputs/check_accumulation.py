#!/usr/bin/env python3
"""Checks one SGD step with gradient accumulation: the parameters after it
(CKPT) equal INITIAL - lr * mean of the micro-batches' gradients (folders of
PARAMETER.npy, from `kiln train --gradients`), within float32 rounding.

  check_accumulation.py INITIAL.safetensors CKPT.safetensors LR GRADS_DIR...
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_read import read  # noqa: E402


initial, after, lr = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
worst = 0.0
for name, w0 in initial.items():
    grads = [np.load(os.path.join(d, name + ".npy")) for d in sys.argv[4:]]
    want = w0 - lr * sum(grads) / len(grads)
    worst = max(worst, float(np.max(np.abs(after[name] - want))))
print(len(initial), "parameters, mean of", len(sys.argv) - 4, "micro-batches:",
      "ok" if worst < 1e-6 else f"off by {worst:.3g}")
