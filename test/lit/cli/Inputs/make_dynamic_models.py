"""Writes the models of dynamic-shapes.test into a folder:

  python3 make_dynamic_models.py OUT_DIR

two_inputs.onnx: y = softmax(x + r) @ W, x and r both [batch, 16] (one size
symbol read from two inputs: they must agree).
halves.onnx: y = reshape(x * 2, [-1, 32]) for x of [batch, 16], so y is
[batch/2, 32]: the package serves even batches only (a divisibility guard).
seq.onnx: y = softmax(x) over the last axis of x [batch, seq]: the inner dim
is a symbol, so the kernel's strides and row length are run-time sizes.
concat.onnx: y = relu(concat(x, r)) of x [batch, 4] and r [seq, 4]: a size
batch + seq, not a product of the symbols (not compiled for ranges yet: the
eager plan, with a warning).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)


def write(name, nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    save(model, os.path.join(out, name + ".onnx"))


f = TensorProto.FLOAT
w = (rng.standard_normal((16, 8)) * 0.1).astype(np.float32)
write("two_inputs",
      [helper.make_node("Add", ["x", "r"], ["s"], name="add"),
       helper.make_node("Softmax", ["s"], ["p"], axis=-1, name="softmax"),
       helper.make_node("MatMul", ["p", "w"], ["y"], name="proj")],
      [helper.make_tensor_value_info("x", f, ["batch", 16]),
       helper.make_tensor_value_info("r", f, ["batch", 16])],
      [helper.make_tensor_value_info("y", f, ["batch", 8])],
      [numpy_helper.from_array(w, "w")])
write("halves",
      [helper.make_node("Mul", ["x", "two"], ["d"], name="double"),
       helper.make_node("Reshape", ["d", "shape"], ["y"], name="pairs")],
      [helper.make_tensor_value_info("x", f, ["batch", 16])],
      [helper.make_tensor_value_info("y", f, ["half", 32])],
      [numpy_helper.from_array(np.array([2], np.float32), "two"),
       numpy_helper.from_array(np.array([-1, 32], np.int64), "shape")])
write("seq",
      [helper.make_node("Softmax", ["x"], ["y"], axis=-1, name="softmax")],
      [helper.make_tensor_value_info("x", f, ["batch", "seq"])],
      [helper.make_tensor_value_info("y", f, ["batch", "seq"])])
write("concat",
      [helper.make_node("Concat", ["x", "r"], ["c"], axis=0, name="join"),
       helper.make_node("Relu", ["c"], ["y"], name="relu")],
      [helper.make_tensor_value_info("x", f, ["batch", 4]),
       helper.make_tensor_value_info("r", f, ["seq", 4])],
      [helper.make_tensor_value_info("y", f, ["total", 4])])
for b in (1, 7, 64):
    np.save(os.path.join(out, "x%d.npy" % b),
            rng.standard_normal((b, 16)).astype(np.float32))
    np.save(os.path.join(out, "r%d.npy" % b),
            rng.standard_normal((b, 16)).astype(np.float32))
np.save(os.path.join(out, "x65.npy"), rng.standard_normal((65, 16)).astype(np.float32))
np.save(os.path.join(out, "x8.npy"), rng.standard_normal((8, 16)).astype(np.float32))
for s in ((3, 5), (1, 64), (7, 33)):
    np.save(os.path.join(out, "s%dx%d.npy" % s),
            rng.standard_normal(s).astype(np.float32))
np.save(os.path.join(out, "c3.npy"), rng.standard_normal((3, 4)).astype(np.float32))
np.save(os.path.join(out, "c5.npy"), rng.standard_normal((5, 4)).astype(np.float32))
