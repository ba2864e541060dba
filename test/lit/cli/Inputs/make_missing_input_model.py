"""Writes a model whose one node (ReverseSequence) lacks the input its
operator requires (sequence_lens) into a file:

  python3 make_missing_input_model.py OUT.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper

node = helper.make_node("ReverseSequence", ["x"], ["y"], name="rev")
graph = helper.make_graph(
    [node], "missing_input",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, sys.argv[1])
