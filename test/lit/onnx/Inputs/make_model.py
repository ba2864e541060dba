#!/usr/bin/env python3
#===- make_model.py - Small ONNX models for the tracer's lit tests -------===#
#
# Writes one small ONNX model, chosen by name, for the lit tests of the ONNX
# tracer (test/lit/onnx). Usage: make_model.py NAME OUTPUT.onnx. Models with
# external data write OUTPUT.data next to the model.
#
#===----------------------------------------------------------------------===#

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=(), opset=17, domain_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, v) for d, v in domain_opsets]
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="kiln-test", producer_version="1.0")
    m.ir_version = 8
    return m


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


F = TensorProto.FLOAT


def basic():
    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    c = numpy_helper.from_array(np.arange(3, dtype=np.float32), "c")
    return model([
        helper.make_node("Add", ["x", "b"], ["s"], name="add_0"),
        helper.make_node("Gemm", ["s", "w", "c"], ["y"], transB=0, alpha=2.0),
        helper.make_node("Relu", ["y"], ["z"]),
    ], [vi("x", F, ["batch", 4]), vi("b", F, [4])], [vi("z", F, ["batch", 3])],
        [w, c])


def fold_shapes():
    # x: [2, 3, 4] -> Reshape(x, Concat(Gather(Shape(x), 0), [-1])).
    idx = numpy_helper.from_array(np.array(0, np.int64), "idx")
    minus1 = numpy_helper.from_array(np.array([-1], np.int64), "minus1")
    return model([
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "idx"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ], [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 12])],
        [idx, minus1, numpy_helper.from_array(np.array([0], np.int64), "axes")])


def external(variant):
    # A 2x2 weight stored in OUTPUT.data (absent for variant "missing",
    # with an offset past its end for "bad-offset").
    out = sys.argv[2]
    data_name = os.path.basename(out) + ".data"
    w = TensorProto(name="w", data_type=F, dims=[2, 2])
    w.data_location = TensorProto.EXTERNAL
    offset = 4096 if variant == "bad-offset" else 0
    for k, v in [("location", data_name), ("offset", str(offset)),
                 ("length", "16")]:
        entry = w.external_data.add()
        entry.key, entry.value = k, v
    if variant != "missing":
        with open(out + ".data", "wb") as f:
            f.write(np.array([1, 2, 3, 4], np.float32).tobytes())
    elif os.path.exists(out + ".data"):
        os.remove(out + ".data")
    return model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [vi("x", F, [3, 2])], [vi("y", F, [3, 2])], [w])


def unsupported_op():
    return model([helper.make_node("NonZero", ["x"], ["y"], name="nz")],
                 [vi("x", F, [3])], [vi("y", TensorProto.INT64, [1, None])])


def old_opset():
    return model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [3])],
                 [vi("y", F, [3])], opset=6)


def other_domain():
    return model([helper.make_node("Binarizer", ["x"], ["y"], name="bin",
                                   domain="ai.onnx.ml")],
                 [vi("x", F, [3])], [vi("y", F, [3])],
                 domain_opsets=[("ai.onnx.ml", 3)])


def string_input():
    return model([helper.make_node("Identity", ["x"], ["y"])],
                 [vi("x", TensorProto.STRING, [3])],
                 [vi("y", TensorProto.STRING, [3])])


def old_forms():
    # Opset-10 forms whose parameters were attributes, and pre-13 softmax.
    return model([
        helper.make_node("Slice", ["x", "st", "en"], ["s"], name="slice"),
        helper.make_node("Unsqueeze", ["s"], ["u"], axes=[0], name="unsq"),
        helper.make_node("Softmax", ["u"], ["y"], axis=1, name="softmax"),
        helper.make_node("Clip", ["y"], ["z"], min=0.0, max=0.5, name="clip"),
    ], [vi("x", F, [2, 6])], [vi("z", F, [1, 2, 3])],
        [numpy_helper.from_array(np.array([1], np.int64), "st"),
         numpy_helper.from_array(np.array([4], np.int64), "en")], opset=10)


def dropout_mask():
    return model([helper.make_node("Dropout", ["x"], ["y", "mask"],
                                   name="drop")],
                 [vi("x", F, [2, 3])],
                 [vi("y", F, [2, 3]), vi("mask", TensorProto.BOOL, [2, 3])])


def training_dropout():
    t = numpy_helper.from_array(np.array(True), "t")
    r = numpy_helper.from_array(np.array(0.5, np.float32), "r")
    return model([helper.make_node("Dropout", ["x", "r", "t"], ["y"],
                                   name="drop")],
                 [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [r, t])


MODELS = {
    "basic": basic,
    "fold-shapes": fold_shapes,
    "external": lambda: external("present"),
    "external-missing": lambda: external("missing"),
    "external-bad-offset": lambda: external("bad-offset"),
    "unsupported-op": unsupported_op,
    "old-opset": old_opset,
    "other-domain": other_domain,
    "string-input": string_input,
    "old-forms": old_forms,
    "dropout-mask": dropout_mask,
    "training-dropout": training_dropout,
}

if __name__ == "__main__":
    onnx.save(MODELS[sys.argv[1]](), sys.argv[2])
