#!/usr/bin/env python3
# ===- make_small_cnn.py - A small CNN for the package API tests -----------===#
#
# Writes small_cnn.onnx (Conv -> Relu -> GlobalAveragePool -> Flatten ->
# Gemm, seeded random weights) and an input x.npy of its shape [2, 3, 8, 8]
# into the folder given: a second model, different from the tiny MLP, that
# test/models/package_api links next to it into one program.
#
#   usage: make_small_cnn.py OUT_DIR
#
# ===----------------------------------------------------------------------===#
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)
weights = {
    "conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3,
    "conv.bias": rng.standard_normal(4).astype(np.float32) * 0.1,
    "fc.weight": rng.standard_normal((5, 4)).astype(np.float32) * 0.5,
    "fc.bias": rng.standard_normal(5).astype(np.float32) * 0.1,
}
nodes = [
    helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"],
                     name="/conv/Conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], name="/relu/Relu"),
    helper.make_node("GlobalAveragePool", ["r"], ["p"], name="/pool/Pool"),
    helper.make_node("Flatten", ["p"], ["f"], name="/flatten/Flatten"),
    helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"],
                     name="/fc/Gemm", transB=1),
]
graph = helper.make_graph(
    nodes, "small_cnn",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [2, 5])],
    [numpy_helper.from_array(v, k) for k, v in weights.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, f"{out}/small_cnn.onnx")
np.save(f"{out}/x.npy", rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
