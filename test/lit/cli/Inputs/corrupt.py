"""Writes damaged copies of a model: corrupt.py MODEL KIND OUT.

KIND is truncated (first half of the bytes), flipped (16 header bytes
overwritten with 0xFF), flipped-data (64 bytes in the middle, inside the
weights, overwritten: still a valid protobuf), random (random bytes of the same length), or empty.
"""
import random
import sys

model, kind, out = sys.argv[1:]
data = bytearray(open(model, "rb").read())
if kind == "truncated":
    data = data[: len(data) // 2]
elif kind == "flipped":
    data[8:24] = b"\xff" * 16
elif kind == "flipped-data":
    mid = len(data) // 3
    data[mid : mid + 64] = b"\xff" * 64
elif kind == "random":
    rng = random.Random(1234)
    data = bytearray(rng.getrandbits(8) for _ in range(len(data)))
elif kind == "empty":
    data = bytearray()
open(out, "wb").write(data)
