#!/usr/bin/env python3
"""Checks one SGD step with gradient accumulation: the parameters after it
(CKPT) equal INITIAL - lr * mean of the micro-batches' gradients (folders of
PARAMETER.npy, from `kiln train --gradients`), within float32 rounding.

  check_accumulation.py INITIAL.safetensors CKPT.safetensors LR GRADS_DIR...
"""
import json
import os
import struct
import sys

import numpy as np


def read(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F32": np.float32, "F16": np.float16, "I64": np.int64}[v["dtype"]]
        start, end = v["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + start:8 + n + end], dtype).reshape(v["shape"])
    return out


initial, after, lr = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
worst = 0.0
for name, w0 in initial.items():
    grads = [np.load(os.path.join(d, name + ".npy")) for d in sys.argv[4:]]
    want = w0 - lr * sum(grads) / len(grads)
    worst = max(worst, float(np.max(np.abs(after[name] - want))))
print(len(initial), "parameters, mean of", len(sys.argv) - 4, "micro-batches:",
      "ok" if worst < 1e-6 else f"off by {worst:.3g}")
