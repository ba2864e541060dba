"""Writes damaged copies of a model: corrupt.py MODEL KIND OUT.

KIND is truncated (first half of the bytes), flipped (bytes in the middle
overwritten with 0xFF), random (random bytes of the same length), or empty.
"""
import random
import sys

model, kind, out = sys.argv[1:]
data = bytearray(open(model, "rb").read())
if kind == "truncated":
    data = data[: len(data) // 2]
elif kind == "flipped":
    mid = len(data) // 3
    data[mid : mid + 64] = b"\xff" * 64
elif kind == "random":
    rng = random.Random(1234)
    data = bytearray(rng.getrandbits(8) for _ in range(len(data)))
elif kind == "empty":
    data = bytearray()
open(out, "wb").write(data)
