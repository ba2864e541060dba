"""Writes a model of in-place.test into a file:

  python3 make_in_place_model.py OUT.onnx [pointwise|row_reduction]

pointwise: y = sin(x @ W1 * x @ W1) @ W2: the pointwise kernel sin(h * h)
reads the first product, which dies there, so it writes its result over it
(the memory plan's "(in place)" buffer); the second product reads it.

row_reduction: y = sin(h - mean(h, -1)) @ W2 with h = x @ W1: a row-reduction
kernel whose result reads the reduction, stored over h by its epilogue.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w1 = (rng.standard_normal((256, 512)) * 0.05).astype(np.float32)
w2 = (rng.standard_normal((512, 128)) * 0.05).astype(np.float32)
kind = sys.argv[2] if len(sys.argv) > 2 else "pointwise"
if kind == "pointwise":
    middle = [helper.make_node("Mul", ["h", "h"], ["sq"], name="square")]
else:
    middle = [
        helper.make_node("ReduceMean", ["h"], ["mean"], axes=[-1], keepdims=1, name="mean"),
        helper.make_node("Sub", ["h", "mean"], ["sq"], name="center"),
    ]
nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
    *middle,
    helper.make_node("Sin", ["sq"], ["s"], name="sin"),
    helper.make_node("MatMul", ["s", "w2"], ["y"], name="mm2"),
]
graph = helper.make_graph(
    nodes, "in_place",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 128])],
    [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, sys.argv[1])
