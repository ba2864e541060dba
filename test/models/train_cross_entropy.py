#!/usr/bin/env python3
# ===- train_cross_entropy.py - A classifier's training vs NumPy -------=== #
#
# Builds a small classifier in ONNX (Gemm -> Relu -> Gemm ->
# SoftmaxCrossEntropyLoss, mean over the batch), compiles it with
# `kiln compile --train --optimizer momentum`, takes three steps with
# `kiln train --gradients`, and checks against NumPy's own forward and
# backward pass of the same model: the first step's gradients (rtol 1e-4,
# atol 1e-6) and the three losses of SGD with momentum 0.9 (PyTorch's
# update rule, 1e-5 relative). The reference is written out here by hand,
# so the loss ops' gradients are checked independently of Kiln's rules.
#
# Usage: train_cross_entropy.py --kiln KILN --work DIR
# ===------------------------------------------------------------------=== #
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(path, params):
    inits = [numpy_helper.from_array(v, k) for k, v in params.items()]
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["a"], name="relu"),
        helper.make_node("Gemm", ["a", "w2", "b2"], ["logits"], name="fc2",
                         transB=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"],
                         ["loss"], name="ce", reduction="mean"),
    ]
    graph = helper.make_graph(
        nodes, "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 12]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [16])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 18)]), path)


def reference(p, x, y):
    """The loss and the gradients of every parameter, by hand."""
    h = x @ p["w1"] + p["b1"]
    a = np.maximum(h, 0)
    z = a @ p["w2"].T + p["b2"]
    e = np.exp(z - z.max(1, keepdims=True))
    s = e / e.sum(1, keepdims=True)
    n = len(y)
    loss = -np.log(s[np.arange(n), y]).mean()
    dz = s.copy()
    dz[np.arange(n), y] -= 1
    dz /= n
    da = dz @ p["w2"]
    dh = da * (h > 0)
    return loss, {"w2": dz.T @ a, "b2": dz.sum(0), "w1": x.T @ dh,
                  "b1": dh.sum(0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    r = np.random.RandomState(0)
    params = {"w1": (r.randn(12, 32) * 0.3).astype(np.float32),
              "b1": (r.randn(32) * 0.1).astype(np.float32),
              "w2": (r.randn(5, 32) * 0.3).astype(np.float32),
              "b2": np.zeros(5, np.float32)}
    x = r.randn(16, 12).astype(np.float32)
    y = r.randint(0, 5, 16).astype(np.int64)
    model = os.path.join(args.work, "classifier.onnx")
    build(model, params)
    np.save(os.path.join(args.work, "x.npy"), x)
    np.save(os.path.join(args.work, "labels.npy"), y)
    pkg = os.path.join(args.work, "pkg")
    lr, mu = 0.1, 0.9
    subprocess.run([args.kiln, "compile", model, "--train", "--optimizer",
                    "momentum", "--momentum", str(mu), "--lr", str(lr), "-o",
                    pkg], check=True)
    grads_dir = os.path.join(args.work, "grads")
    losses_file = os.path.join(args.work, "losses.json")
    subprocess.run([args.kiln, "train", pkg, "--input",
                    "x=" + os.path.join(args.work, "x.npy"), "--input",
                    "labels=" + os.path.join(args.work, "labels.npy"),
                    "--steps", "3", "--gradients", grads_dir, "--losses",
                    losses_file], check=True)
    ok = True
    p = {k: v.astype(np.float64) for k, v in params.items()}
    loss0, g0 = reference(p, x.astype(np.float64), y)
    for name, ref in g0.items():
        got = np.load(os.path.join(grads_dir, name + ".npy"))
        err = float(np.max(np.abs(got - ref) / (1e-6 + 1e-4 * np.abs(ref))))
        print(f"gradient {name}: {err:.3g} of the tolerance")
        ok &= err <= 1
    # SGD with momentum, PyTorch's rule: b = mu b + g; p -= lr b.
    buf = {k: np.zeros_like(v) for k, v in p.items()}
    expected = []
    for _ in range(3):
        loss, g = reference(p, x.astype(np.float64), y)
        expected.append(loss)
        for k in p:
            buf[k] = mu * buf[k] + g[k]
            p[k] = p[k] - lr * buf[k]
    with open(losses_file) as f:
        losses = json.load(f)
    for i, (got, ref) in enumerate(zip(losses, expected)):
        rel = abs(got - ref) / abs(ref)
        print(f"step {i + 1}: loss {got:.9g}, NumPy {ref:.9g} ({rel:.2e})")
        ok &= rel <= 1e-5
    ok &= len(losses) == 3
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
