#!/usr/bin/env python3
"""Prints a training checkpoint's dynamic loss-scaling state and whether its
parameters equal those of another safetensors file (the package's initial
weights): `loss_scale_state.py CKPT INITIAL`."""
import json
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


ckpt, initial = read(sys.argv[1]), read(sys.argv[2])
params = [k for k in initial if not k.startswith("kiln.")]
print("exponent", float(ckpt["kiln.loss_scale_exponent"]),
      "good_steps", float(ckpt["kiln.loss_scale_good_steps"]),
      "parameters", "unchanged" if all(np.array_equal(ckpt[k], initial[k]) for k in params) else "changed")
