#!/usr/bin/env python3
"""Reads a safetensors file into {name: numpy array} without the
safetensors package (the lit helpers' shared reader)."""
import json
import struct

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
