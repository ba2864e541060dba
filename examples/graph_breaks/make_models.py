#!/usr/bin/env python3
"""Writes three small ONNX models that do not compile into one graph.

  cond_model.onnx     an If on a data-dependent condition (what torch.cond on
                      `x.sum() > 0` exports): x f32[4, 8] -> y f32[4, 8]
  nonzero_model.onnx  NonZero in the middle: x f32[16] -> y f32[16]
  det_model.onnx      an operator no Kiln code generator supports (Det):
                      x f32[2, 3, 3] -> y f32[2]
  masked_model.onnx   nonzero_model without its break: the same y, with the
                      sum over a mask (Where) instead of NonZero + Gather

and, for each, inputs that take every path (cond_pos.npy / cond_neg.npy take
the then / else branch). docs/graph-breaks.md walks through them; the lit
test test/lit/cli/graph-breaks.test and scripts/gpu/pack.sh use them.

Usage: make_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def save(model, path):
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def cond_model():
    """h = relu(x @ w + b); y = (cond ? 2h + 1 : tanh(h) - 1) * 0.5 + x."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((8, 8)).astype(np.float32) * 0.5
    b = rng.standard_normal((8,)).astype(np.float32) * 0.1
    then_branch = helper.make_graph(
        [helper.make_node("Mul", ["h", "two"], ["h2"], name="then_mul"),
         helper.make_node("Add", ["h2", "one"], ["then_out"], name="then_add")],
        "then_branch", [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [4, 8])])
    else_branch = helper.make_graph(
        [helper.make_node("Tanh", ["h"], ["th"], name="else_tanh"),
         helper.make_node("Sub", ["th", "one"], ["else_out"], name="else_sub")],
        "else_branch", [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [4, 8])])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="linear"),
        helper.make_node("Add", ["xw", "b"], ["xwb"], name="bias"),
        helper.make_node("Relu", ["xwb"], ["h"], name="relu"),
        helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="positive"),
        helper.make_node("If", ["c"], ["branch"], name="cond",
                         then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Mul", ["branch", "half"], ["scaled"], name="scale"),
        helper.make_node("Add", ["scaled", "x"], ["y"], name="residual"),
    ]
    graph = helper.make_graph(
        nodes, "cond_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [const("w", w), const("b", b), const("zero", np.float32(0)),
         const("one", np.float32(1)), const("two", np.float32(2)),
         const("half", np.float32(0.5))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def nonzero_model():
    """idx = nonzero(2x > 0.5); y = x * sum(x[idx]) + 1."""
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["x2"], name="double"),
        helper.make_node("Greater", ["x2", "threshold"], ["mask"], name="mask"),
        helper.make_node("NonZero", ["mask"], ["nz"], name="nonzero"),
        helper.make_node("Squeeze", ["nz", "axis0"], ["idx"], name="indices"),
        helper.make_node("Gather", ["x", "idx"], ["picked"], name="pick", axis=0),
        helper.make_node("ReduceSum", ["picked", "axis0"], ["total"],
                         name="total", keepdims=1),
        helper.make_node("Mul", ["x", "total"], ["xt"], name="times_total"),
        helper.make_node("Add", ["xt", "one"], ["y"], name="plus_one"),
    ]
    graph = helper.make_graph(
        nodes, "nonzero_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])],
        [const("two", np.float32(2)), const("threshold", np.float32(0.5)),
         const("axis0", np.array([0], np.int64)),
         const("one", np.float32(1))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def masked_model():
    """y = x * sum(where(2x > 0.5, x, 0)) + 1: nonzero_model's result."""
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["x2"], name="double"),
        helper.make_node("Greater", ["x2", "threshold"], ["mask"], name="mask"),
        helper.make_node("Where", ["mask", "x", "zero"], ["picked"],
                         name="pick"),
        helper.make_node("ReduceSum", ["picked", "axis0"], ["total"],
                         name="total", keepdims=1),
        helper.make_node("Mul", ["x", "total"], ["xt"], name="times_total"),
        helper.make_node("Add", ["xt", "one"], ["y"], name="plus_one"),
    ]
    graph = helper.make_graph(
        nodes, "masked_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])],
        [const("two", np.float32(2)), const("threshold", np.float32(0.5)),
         const("zero", np.float32(0)),
         const("axis0", np.array([0], np.int64)),
         const("one", np.float32(1))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def det_model():
    """y = det(x + 3 I) * 0.5 + tanh(sum(x, axes [1, 2]))."""
    nodes = [
        helper.make_node("Add", ["x", "eye3"], ["a"], name="shift"),
        helper.make_node("Det", ["a"], ["d"], name="det"),
        helper.make_node("Mul", ["d", "half"], ["dh"], name="half_det"),
        helper.make_node("ReduceSum", ["x", "axes12"], ["s"], name="sum",
                         keepdims=0),
        helper.make_node("Tanh", ["s"], ["ts"], name="tanh"),
        helper.make_node("Add", ["dh", "ts"], ["y"], name="combine"),
    ]
    graph = helper.make_graph(
        nodes, "det_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [const("eye3", (3 * np.eye(3)).astype(np.float32)),
         const("half", np.float32(0.5)),
         const("axes12", np.array([1, 2], np.int64))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    save(cond_model(), os.path.join(out, "cond_model.onnx"))
    save(nonzero_model(), os.path.join(out, "nonzero_model.onnx"))
    save(det_model(), os.path.join(out, "det_model.onnx"))
    save(masked_model(), os.path.join(out, "masked_model.onnx"))
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    np.save(os.path.join(out, "cond_pos.npy"), np.abs(x))   # sum > 0: then
    np.save(os.path.join(out, "cond_neg.npy"), -np.abs(x))  # sum < 0: else
    np.save(os.path.join(out, "nonzero_x.npy"),
            rng.standard_normal(16).astype(np.float32))
    np.save(os.path.join(out, "det_x.npy"),
            rng.standard_normal((2, 3, 3)).astype(np.float32))


if __name__ == "__main__":
    main()
