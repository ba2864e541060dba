"""Writes a token tagger's first layer as kiln-fold-embedding-projection
finds it: an embedding lookup (Gather of a [50, 8] table by [2, 6] int64 ids
`x`), batch first to step order (Transpose), a projection to 24 values
(MatMul) and its bias (Add, the sum of two initializers as in an LSTM's
W and R biases) into `y`:

  python3 make_embedding_projection_model.py OUT.onnx [external]

With `external`, the initializers go to OUT.onnx.data (ONNX external data,
for `kiln compile --weights external`).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
table = rng.standard_normal((50, 8)).astype(np.float32)
w = rng.standard_normal((8, 24)).astype(np.float32)
b1 = rng.standard_normal(24).astype(np.float32)
b2 = rng.standard_normal(24).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("Gather", ["table", "x"], ["e"], name="embed", axis=0),
     helper.make_node("Transpose", ["e"], ["steps"], name="to_steps",
                      perm=[1, 0, 2]),
     helper.make_node("MatMul", ["steps", "w"], ["p"], name="project"),
     helper.make_node("Add", ["b1", "b2"], ["b"], name="bias_sum"),
     helper.make_node("Add", ["p", "b"], ["y"], name="bias")],
    "embedding_projection",
    [helper.make_tensor_value_info("x", TensorProto.INT64, [2, 6])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 2, 24])],
    initializer=[numpy_helper.from_array(table, "table"),
                 numpy_helper.from_array(w, "w"),
                 numpy_helper.from_array(b1, "b1"),
                 numpy_helper.from_array(b2, "b2")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
if len(sys.argv) > 2 and sys.argv[2] == "external":
    onnx.save(model, sys.argv[1], save_as_external_data=True,
              all_tensors_to_one_file=True,
              location=sys.argv[1].split("/")[-1] + ".data", size_threshold=0)
else:
    onnx.save(model, sys.argv[1])
