#!/usr/bin/env python3
"""Prints a training checkpoint's dynamic loss-scaling state and whether its
parameters equal those of another safetensors file (the package's initial
weights): `loss_scale_state.py CKPT INITIAL`."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_read import read  # noqa: E402


ckpt, initial = read(sys.argv[1]), read(sys.argv[2])
params = [k for k in initial if not k.startswith("kiln.")]
print("exponent", float(ckpt["kiln.loss_scale_exponent"]),
      "good_steps", float(ckpt["kiln.loss_scale_good_steps"]),
      "parameters", "unchanged" if all(np.array_equal(ckpt[k], initial[k]) for k in params) else "changed")
