#!/usr/bin/env python3
"""Written-out attention models for the CUDA flash-attention kernel.

Each case is an ONNX graph that computes attention the way exporters write
it (Transpose, MatMul, Mul by the scale, an optional causal Where with -inf,
Softmax, MatMul) over f16 inputs q, k, v of [B, H, T, D], plus one set of
random inputs. scripts/gpu/pack.sh compiles each for --target cuda (where
kiln-cuda-attention makes it one kiln.attention, run by a0_attention) and
takes the expected output from `kiln run` (the reference executor on the
written-out ops); gpu-pack/run.sh's `attention` step compares them on the
GPU.

The exact result (float64 from the same f16 inputs) goes to
<case>.exact.npy: the GPU step reports the kernel's and the reference
executor's distance from it (both compute in f16 with different roundings:
the written-out ops round the scores to f16, the kernel rounds the
probabilities) and passes when the kernel is no further from it than the
reference executor (plus half an f16 ulp of 1).

Usage: attention_cases.py OUTDIR   (writes OUTDIR/<case>.onnx,
OUTDIR/<case>.{q,k,v,exact}.npy, and prints one case name per line)
   or: attention_cases.py --compare GOT.npy REF.npy EXACT.npy
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: (B, H, T, D, causal)
CASES = {
    "attn_causal_d64": (2, 3, 128, 64, True),
    "attn_full_d128": (1, 2, 192, 128, False),
    "attn_causal_d32": (1, 4, 256, 32, True),
}


def build(path, b, h, t, d, causal):
    f16 = TensorProto.FLOAT16
    shape = [b, h, t, d]
    inputs = [helper.make_tensor_value_info(n, f16, shape) for n in "qkv"]
    out = helper.make_tensor_value_info("y", f16, shape)
    scale = numpy_helper.from_array(np.array(1.0 / np.sqrt(d), np.float16), "scale")
    inits = [scale]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["z"]),
    ]
    logits = "z"
    if causal:
        mask = np.triu(np.ones((t, t), dtype=bool), k=1)
        inits += [numpy_helper.from_array(mask, "mask"),
                  numpy_helper.from_array(np.array(-np.inf, np.float16), "ninf")]
        nodes.append(helper.make_node("Where", ["mask", "ninf", "z"], ["masked"]))
        logits = "masked"
    nodes += [
        helper.make_node("Softmax", [logits], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5], inputs, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def exact(q, k, v, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        t = s.shape[-1]
        s = np.where(np.triu(np.ones((t, t), dtype=bool), k=1), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def compare(got, ref, want):
    got, ref, want = (np.load(f).astype(np.float64) for f in (got, ref, want))
    kiln_err = float(np.max(np.abs(got - want)))
    ref_err = float(np.max(np.abs(ref - want)))
    ok = kiln_err <= ref_err + 2.0 ** -11
    print(f"max |error| vs float64: flash kernel {kiln_err:.3g}, reference executor "
          f"{ref_err:.3g} -> {'ok' if ok else 'TOO FAR'}")
    return 0 if ok else 1


def main():
    if sys.argv[1] == "--compare":
        return compare(*sys.argv[2:5])
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(5)
    for name, (b, h, t, d, causal) in CASES.items():
        build(os.path.join(out, name + ".onnx"), b, h, t, d, causal)
        qkv = {}
        for n in "qkv":
            qkv[n] = rng.standard_normal((b, h, t, d)).astype(np.float16)
            np.save(os.path.join(out, f"{name}.{n}.npy"), qkv[n])
        np.save(os.path.join(out, f"{name}.exact.npy"),
                exact(qkv["q"], qkv["k"], qkv["v"], causal))
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
