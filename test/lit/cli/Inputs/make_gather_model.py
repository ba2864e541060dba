"""Writes an embedding lookup (Gather of a [10, 4] table by [2, 3] int64
tokens, then Concat of the result with itself along the last axis) into a
file, and its table as .npy next to it:

  python3 make_gather_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

table = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)
np.save(sys.argv[1] + ".table.npy", table)
graph = helper.make_graph(
    [helper.make_node("Gather", ["table", "tokens"], ["e"], name="embed", axis=0),
     helper.make_node("Concat", ["e", "e"], ["y"], name="join", axis=-1)],
    "gather_model",
    [helper.make_tensor_value_info("tokens", TensorProto.INT64, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 8])],
    initializer=[numpy_helper.from_array(table, "table")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, sys.argv[1])
