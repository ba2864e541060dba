"""Writes a model of column reductions (ReduceMean of x [2, 6, 5, 16] over
axes 1, 2 with keepdims, ReduceSum over axis 0 without) into a file:

  python3 make_reduce_model.py OUT.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper

axes = helper.make_tensor("axes", TensorProto.INT64, [2], [1, 2])
first = helper.make_tensor("first", TensorProto.INT64, [1], [0])
graph = helper.make_graph(
    [helper.make_node("ReduceMean", ["x", "axes"], ["mean"], name="mean", keepdims=1),
     helper.make_node("ReduceSum", ["x", "first"], ["sum"], name="sum", keepdims=0)],
    "reduce_model",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 5, 16])],
    [helper.make_tensor_value_info("mean", TensorProto.FLOAT, [2, 1, 1, 16]),
     helper.make_tensor_value_info("sum", TensorProto.FLOAT, [6, 5, 16])],
    initializer=[axes, first])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
onnx.save(model, sys.argv[1])
