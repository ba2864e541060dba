"""Writes the small models of compile-cuda.test whose epilogues the CUDA
wrapper folds into library calls, into a folder.

  python3 make_epilogue_models.py DIR

conv_bias_add_relu.onnx: Conv (with bias) + Add (a residual input) + Relu,
which cuDNN computes in one call; conv_relu_shared.onnx: a Conv whose result
is also an output, so its Relu cannot be folded into the convolution;
linear_relu.onnx: MatMul + Add (bias) + Relu, which cuBLASLt's epilogue
computes; two_matmuls.onnx: Relu(x @ W + h @ U) of one row, where each
product could pass for the other's bias: only the call just before the fusion folds it.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv_model(path, bias, residual, shared):
    rng = np.random.default_rng(0)
    shape = [2, 8, 10, 10]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)]
    inits = [numpy_helper.from_array(
        (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32), "w")]
    conv_in = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(
            rng.standard_normal(8).astype(np.float32), "b"))
        conv_in.append("b")
    nodes = [helper.make_node("Conv", conv_in, ["c"], pads=[1, 1, 1, 1],
                              name="conv")]
    last = "c"
    if residual:
        inputs.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, shape))
        nodes.append(helper.make_node("Add", ["c", "r"], ["s"], name="add"))
        last = "s"
    nodes.append(helper.make_node("Relu", [last], ["y"], name="relu"))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)]
    if shared:
        outputs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, shape))
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5], inputs,
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def linear_model(path):
    rng = np.random.default_rng(1)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32])
    inits = [numpy_helper.from_array(rng.standard_normal((16, 32)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
             helper.make_node("Add", ["m", "b"], ["s"], name="bias"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5], [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def two_matmuls(path):
    rng = np.random.default_rng(2)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    h = helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])
    inits = [numpy_helper.from_array(rng.standard_normal((16, 32)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal((8, 32)).astype(np.float32), "u")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm_x"),
             helper.make_node("MatMul", ["h", "u"], ["b"], name="mm_h"),
             helper.make_node("Add", ["b", "a"], ["s"], name="sum"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "two_matmuls", [x, h], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    conv_model(os.path.join(out, "conv_bias_add_relu.onnx"), True, True, False)
    conv_model(os.path.join(out, "conv_relu_shared.onnx"), False, False, True)
    linear_model(os.path.join(out, "linear_relu.onnx"))
    two_matmuls(os.path.join(out, "two_matmuls.onnx"))


if __name__ == "__main__":
    main()
