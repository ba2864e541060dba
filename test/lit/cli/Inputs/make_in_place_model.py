"""Writes the model of in-place.test into a file:

  python3 make_in_place_model.py OUT.onnx

y = sin(x @ W1 * x @ W1) @ W2: the pointwise kernel sin(h * h) reads the
first product, which dies there, so it writes its result over it (the
memory plan's "(in place)" buffer); the second product reads it.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w1 = (rng.standard_normal((256, 512)) * 0.05).astype(np.float32)
w2 = (rng.standard_normal((512, 128)) * 0.05).astype(np.float32)
nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
    helper.make_node("Mul", ["h", "h"], ["sq"], name="square"),
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
