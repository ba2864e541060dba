#!/usr/bin/env python3
#===- test/fuzz/make_regressions.py - Hand-made hostile model files -------===#
#
# This file writes the regression files of test/fuzz/regressions/ that were
# not taken from a mutation campaign but built to reproduce a crash class the
# campaign's report named (issue 17): zero strides with auto_pad SAME, a
# Split with num_outputs = 2^62 inside a subgraph, an initializer whose raw_data is shorter than its dims. Run
# it again after changing a case; the files are checked in so that CI needs
# no generator.
#
#===----------------------------------------------------------------------===#
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regressions")


def save(name, graph, expect, opset=18):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())
    with open(os.path.join(out, name + ".expect"), "w") as f:
        f.write(expect + "\n")


x4 = helper.make_tensor_value_info("x", F, [1, 2, 8, 8])
y = helper.make_tensor_value_info("y", F, None)
w = numpy_helper.from_array(np.ones([2, 2, 3, 3], np.float32), "w")
for op, extra, inputs, inits in [
        ("Conv", {}, ["x", "w"], [w]),
        ("AveragePool", {"kernel_shape": [3, 3]}, ["x"], []),
        ("MaxPool", {"kernel_shape": [3, 3]}, ["x"], [])]:
    save(f"{op.lower()}_same_zero_stride",
         helper.make_graph([helper.make_node(op, inputs, ["y"],
                                             auto_pad="SAME_UPPER",
                                             strides=[0, 1], **extra)],
                           "g", [x4], [y], inits),
         "error: attribute 'strides' has value 0")

# Split with num_outputs = 2^62 in the then-branch of an If.
x1 = helper.make_tensor_value_info("x", F, [4])
cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
then_g = helper.make_graph(
    [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2**62)], "then",
    [], [helper.make_tensor_value_info("a", F, None)])
else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["a2"])],
                           "else", [],
                           [helper.make_tensor_value_info("a2", F, None)])
save("split_huge_num_outputs_in_subgraph",
     helper.make_graph([helper.make_node("If", ["c"], ["y"],
                                         then_branch=then_g,
                                         else_branch=else_g)],
                       "g", [x1, cond], [y]),
     "error: attribute 'num_outputs' = 4611686018427387904 is out of range")

# An initializer claiming 2^40 floats with 16 bytes of data.
big = onnx.TensorProto(name="w", data_type=F, dims=[2**20, 2**20],
                       raw_data=b"\0" * 16)
save("initializer_dims_larger_than_data",
     helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                       [helper.make_tensor_value_info("x", F, [1])], [y],
                       [big]),
     "error: tensor 'w' holds 16 bytes of data")
