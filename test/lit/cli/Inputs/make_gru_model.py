"""Writes a model with one GRU in float64 (whose recurrence the CUDA target
has no kernel for) into a file:

  python3 make_gru_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((1, 15, 2)).astype(np.float64), "W")
r = numpy_helper.from_array(rng.standard_normal((1, 15, 5)).astype(np.float64), "R")
gru = helper.make_node("GRU", ["x", "W", "R"], ["y", "y_h"], name="gru",
                       hidden_size=5, linear_before_reset=0)
graph = helper.make_graph(
    [gru], "gru_model",
    [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [4, 3, 2])],
    [helper.make_tensor_value_info("y_h", TensorProto.DOUBLE, [1, 3, 5])],
    initializer=[w, r])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, sys.argv[1])
