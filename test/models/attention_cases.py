#!/usr/bin/env python3
"""Written-out attention models for the CUDA flash-attention kernel.

Each case is an ONNX graph that computes attention the way exporters write
it (Transpose, MatMul, Mul by the scale, an optional causal Where with -inf,
Softmax, MatMul) over f16 (or f32: the CUDA-core kernel) inputs q, k, v of
[B, H, T, D], or, for the packed cases, over one input qkv of [B, T, 3 * H * D]
split, reshaped into heads
and transposed the way GPT-2 writes it, the result transposed back and
reshaped to [B, T, H * D], or, for the seq-first packed cases ("seq"), over
one qkv of [T, B, 3 * H * D] split the way nn.MultiheadAttention's export
does (reshape to [1, T, B, 3, H * D], transpose to [3, T, B, 1, H * D],
squeeze, a Gather each of q, k and v, reshape to [T, B * H, D], transpose,
reshape to [B, H, T, D]), the result transposed to [T, B, H, D] and reshaped
to [T, B, H * D]; plus one set of random inputs. scripts/gpu/pack.sh
compiles each for --target cuda (where kiln-cuda-attention makes it one
kiln.attention or kiln.packed_attention, run by a0_attention) and
takes the expected output from `kiln run` (the reference executor on the
written-out ops); gpu-pack/run.sh's `attention` step compares them on the
GPU.

The exact result (float64 from the same f16 inputs) goes to
<case>.exact.npy: the GPU step reports the kernel's and the reference
executor's distance from it (both compute in f16 with different roundings:
the written-out ops round the scores to f16, the kernel rounds the
probabilities) and passes when the kernel is no further from it than the
reference executor (plus half an f16 ulp of 1; for f32, plus 1e-5).

Usage: attention_cases.py OUTDIR   (writes OUTDIR/<case>.onnx,
OUTDIR/<case>.{q,k,v,exact}.npy or OUTDIR/<case>.{qkv,exact}.npy, and prints
one case name per line)
   or: attention_cases.py --compare GOT.npy REF.npy EXACT.npy
   or: attention_cases.py --bench-model OUT.onnx   (GPT-2's attention at the
       bench size, packed: qkv f16 [16, 1024, 2304], 12 heads, causal)
   or: attention_cases.py --bench-input OUT.npy    (random qkv for it)
   or: attention_cases.py --time-torch             (PyTorch's SDPA backends on
       the same problem, CUDA-event medians; needs torch and a GPU)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: (B, H, T, D, causal, packed[, dtype]) (packed: False, True (batch-first)
# or "seq" (seq-first); dtype: np.float16 unless named)
CASES = {
    "attn_causal_d64": (2, 3, 128, 64, True, False),
    "attn_full_d128": (1, 2, 192, 128, False, False),
    "attn_causal_d32": (1, 4, 256, 32, True, False),
    "attn_packed_causal_d64": (2, 3, 128, 64, True, True),
    "attn_packed_full_d32": (1, 4, 192, 32, False, True),
    # Lengths that are not a multiple of the kernel's 64-row tiles (ViT's
    # 197 tokens): the last query tile and key tile are partial.
    "attn_full_d64_t197": (2, 3, 197, 64, False, False),
    "attn_causal_d32_t40": (1, 2, 40, 32, True, False),
    "attn_packed_full_d64_t100": (1, 2, 100, 64, False, True),
    # f32 (CudaAttentionF32Kernel.cpp: 32-query blocks, 64-key tiles).
    "attn_f32_full_d64_t197": (2, 3, 197, 64, False, False, np.float32),
    "attn_f32_causal_d32_t300": (1, 2, 300, 32, True, False, np.float32),
    "attn_f32_packed_causal_d64": (2, 3, 128, 64, True, True, np.float32),
    "attn_f32_packed_full_d16_t100": (1, 2, 100, 16, False, True, np.float32),
    # Seq-first packed (nn.MultiheadAttention, ViT: kiln.packed_attention
    # {layout = "seq_first"}), f32 at ViT's size per head and f16.
    "attn_f32_seq_packed_full_d64_t197": (2, 3, 197, 64, False, "seq", np.float32),
    "attn_seq_packed_causal_d32_t100": (3, 2, 100, 32, True, "seq"),
}


def build(path, b, h, t, d, causal, packed, dtype=np.float16):
    f16 = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    shape = [b, h, t, d]
    inits, nodes = [], []
    if packed == "seq":
        c = h * d
        inputs = [helper.make_tensor_value_info("qkv", f16, [t, b, 3 * c])]
        out = helper.make_tensor_value_info("y", f16, [t, b, c])
        inits += [numpy_helper.from_array(np.array([1, t, b, 3, c], np.int64), "five"),
                  numpy_helper.from_array(np.array([-2], np.int64), "sq"),
                  numpy_helper.from_array(np.array([t, b * h, d], np.int64), "rows"),
                  numpy_helper.from_array(np.array([b, h, t, d], np.int64), "heads"),
                  numpy_helper.from_array(np.array([t, b, c], np.int64), "merged")]
        nodes += [helper.make_node("Reshape", ["qkv", "five"], ["q5"]),
                  helper.make_node("Transpose", ["q5"], ["q5t"], perm=[3, 1, 2, 0, 4]),
                  helper.make_node("Squeeze", ["q5t", "sq"], ["parts"])]
        for i, n in enumerate("qkv"):
            inits.append(numpy_helper.from_array(np.array(i, np.int64), "i" + n))
            nodes += [helper.make_node("Gather", ["parts", "i" + n], [n + "_s"], axis=0),
                      helper.make_node("Reshape", [n + "_s", "rows"], [n + "_r"]),
                      helper.make_node("Transpose", [n + "_r"], [n + "_t"], perm=[1, 0, 2]),
                      helper.make_node("Reshape", [n + "_t", "heads"], [n])]
        result = "o"
    elif packed:
        c = h * d
        inputs = [helper.make_tensor_value_info("qkv", f16, [b, t, 3 * c])]
        out = helper.make_tensor_value_info("y", f16, [b, t, c])
        inits += [numpy_helper.from_array(np.array([c, c, c], np.int64), "sizes"),
                  numpy_helper.from_array(np.array([b, t, h, d], np.int64), "heads"),
                  numpy_helper.from_array(np.array([b, t, c], np.int64), "merged")]
        nodes.append(helper.make_node("Split", ["qkv", "sizes"], ["qs", "ks", "vs"], axis=2))
        for n in "qkv":
            nodes += [helper.make_node("Reshape", [n + "s", "heads"], [n + "h"]),
                      helper.make_node("Transpose", [n + "h"], [n], perm=[0, 2, 1, 3])]
        result = "o"
    else:
        inputs = [helper.make_tensor_value_info(n, f16, shape) for n in "qkv"]
        out = helper.make_tensor_value_info("y", f16, shape)
        result = "y"
    inits.append(numpy_helper.from_array(np.array(1.0 / np.sqrt(d), dtype), "scale"))
    nodes += [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["z"]),
    ]
    logits = "z"
    if causal:
        mask = np.triu(np.ones((t, t), dtype=bool), k=1)
        inits += [numpy_helper.from_array(mask, "mask"),
                  numpy_helper.from_array(np.array(-np.inf, dtype), "ninf")]
        nodes.append(helper.make_node("Where", ["mask", "ninf", "z"], ["masked"]))
        logits = "masked"
    nodes += [
        helper.make_node("Softmax", [logits], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], [result]),
    ]
    if packed:
        perm = [2, 0, 1, 3] if packed == "seq" else [0, 2, 1, 3]
        nodes += [helper.make_node("Transpose", ["o"], ["ob"], perm=perm),
                  helper.make_node("Reshape", ["ob", "merged"], ["y"])]
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
    got, ref, want = (np.load(f) for f in (got, ref, want))
    slack = 2.0 ** -11 if got.dtype == np.float16 else 1e-5
    got, ref, want = (x.astype(np.float64) for x in (got, ref, want))
    kiln_err = float(np.max(np.abs(got - want)))
    ref_err = float(np.max(np.abs(ref - want)))
    ok = kiln_err <= ref_err + slack
    print(f"max |error| vs float64: flash kernel {kiln_err:.3g}, reference executor "
          f"{ref_err:.3g} -> {'ok' if ok else 'TOO FAR'}")
    return 0 if ok else 1


# GPT-2 small's attention in the gpt2_block benchmark: B, H, T, D.
BENCH = (16, 12, 1024, 64)


def time_torch():
    """PyTorch's fused attention backends on BENCH, reading q, k, v as views
    of one packed [B, T, 3 * H * D] tensor (as Kiln's kernel does)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b, h, t, d = BENCH
    x = torch.randn(b, t, 3 * h * d, device="cuda", dtype=torch.float16)
    q, k, v = x.view(b, t, 3, h, d).permute(2, 0, 3, 1, 4)
    for name in ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION", "MATH"):
        try:
            with sdpa_kernel(getattr(SDPBackend, name)):
                run = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)
                for _ in range(3):
                    run()
                times = []
                for _ in range(20):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    run()
                    end.record()
                    torch.cuda.synchronize()
                    times.append(start.elapsed_time(end))
            print(f"torch SDPA {name}: {sorted(times)[len(times) // 2]:.4f} ms")
        except Exception as e:  # a backend this build or GPU lacks
            print(f"torch SDPA {name}: unavailable ({str(e).splitlines()[0][:120]})")
    return 0


def main():
    if sys.argv[1] == "--compare":
        return compare(*sys.argv[2:5])
    b, h, t, d = BENCH
    if sys.argv[1] == "--bench-model":
        build(sys.argv[2], b, h, t, d, True, True)
        return 0
    if sys.argv[1] == "--bench-input":
        x = np.random.default_rng(7).standard_normal((b, t, 3 * h * d)).astype(np.float16)
        np.save(sys.argv[2], x)
        return 0
    if sys.argv[1] == "--time-torch":
        return time_torch()
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(5)
    for name, (b, h, t, d, causal, packed, *dtype) in CASES.items():
        dtype = dtype[0] if dtype else np.float16
        build(os.path.join(out, name + ".onnx"), b, h, t, d, causal, packed, dtype)
        if packed == "seq":
            x = rng.standard_normal((t, b, 3 * h * d)).astype(dtype)
            np.save(os.path.join(out, f"{name}.qkv.npy"), x)
            # [T, B, 3, H, D] -> q, k, v of [B, H, T, D]; the result to
            # [T, B, H * D].
            q, k, v = x.reshape(t, b, 3, h, d).transpose(2, 1, 3, 0, 4)
            want = exact(q, k, v, causal).transpose(2, 0, 1, 3).reshape(t, b, h * d)
        elif packed:
            x = rng.standard_normal((b, t, 3 * h * d)).astype(dtype)
            np.save(os.path.join(out, f"{name}.qkv.npy"), x)
            # [B, T, 3, H, D] -> q, k, v of [B, H, T, D]; the result back.
            q, k, v = x.reshape(b, t, 3, h, d).transpose(2, 0, 3, 1, 4)
            want = exact(q, k, v, causal).transpose(0, 2, 1, 3).reshape(b, t, h * d)
        else:
            q, k, v = (rng.standard_normal((b, h, t, d)).astype(dtype) for _ in "qkv")
            for n, value in zip("qkv", (q, k, v)):
                np.save(os.path.join(out, f"{name}.{n}.npy"), value)
            want = exact(q, k, v, causal)
        np.save(os.path.join(out, f"{name}.exact.npy"), want)
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
