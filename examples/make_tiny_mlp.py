#!/usr/bin/env python3
"""Writes the bundled example model, examples/tiny_mlp.onnx, and an input.

The model is what PyTorch's exporter writes for
    y = softmax(fc2(gelu(fc1(layer_norm(x)))) + x)
with a dynamic batch dimension named "batch" (opset 18, erf-form GELU, as
torch.onnx exports it). Weights are embedded (seeded, so the file is stable).

  python3 examples/make_tiny_mlp.py examples/
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(outdir):
    rng = np.random.default_rng(42)
    d, h = 16, 32

    def init(name, shape, scale=1.0):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        init("ln.weight", [d], 0.1), init("ln.bias", [d], 0.1),
        init("fc1.weight", [d, h], 1 / np.sqrt(d)), init("fc1.bias", [h], 0.1),
        init("fc2.weight", [h, d], 1 / np.sqrt(h)), init("fc2.bias", [d], 0.1),
        numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln.weight", "ln.bias"],
                         ["ln_out"], name="/ln/LayerNormalization", axis=-1,
                         epsilon=1e-5),
        helper.make_node("MatMul", ["ln_out", "fc1.weight"], ["fc1_mm"],
                         name="/fc1/MatMul"),
        helper.make_node("Add", ["fc1_mm", "fc1.bias"], ["fc1_out"],
                         name="/fc1/Add"),
        helper.make_node("Div", ["fc1_out", "sqrt2"], ["g_div"], name="/act/Div"),
        helper.make_node("Erf", ["g_div"], ["g_erf"], name="/act/Erf"),
        helper.make_node("Add", ["g_erf", "one"], ["g_add"], name="/act/Add"),
        helper.make_node("Mul", ["fc1_out", "g_add"], ["g_mul"], name="/act/Mul"),
        helper.make_node("Mul", ["g_mul", "half"], ["gelu_out"],
                         name="/act/Mul_1"),
        helper.make_node("MatMul", ["gelu_out", "fc2.weight"], ["fc2_mm"],
                         name="/fc2/MatMul"),
        helper.make_node("Add", ["fc2_mm", "fc2.bias"], ["fc2_out"],
                         name="/fc2/Add"),
        helper.make_node("Add", ["fc2_out", "x"], ["res"], name="/Add"),
        helper.make_node("Softmax", ["res"], ["y"], name="/Softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", d])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="kiln-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(outdir, "tiny_mlp.onnx"))
    x = rng.standard_normal([4, d]).astype(np.float32)
    np.save(os.path.join(outdir, "tiny_mlp_x.npy"), x)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
