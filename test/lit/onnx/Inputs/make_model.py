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
    return model([helper.make_node("MaxUnpool", ["x", "i"], ["y"], name="mu",
                                   kernel_shape=[2])],
                 [vi("x", F, [1, 1, 3]), vi("i", TensorProto.INT64, [1, 1, 3])],
                 [vi("y", F, [None])])


def old_opset():
    return model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [3])],
                 [vi("y", F, [3])], opset=6)


def other_domain():
    return model([helper.make_node("Binarizer", ["x"], ["y"], name="bin",
                                   domain="ai.onnx.ml")],
                 [vi("x", F, [3])], [vi("y", F, [3])],
                 domain_opsets=[("ai.onnx.ml", 3)])


def unknown_ops():
    """Three nodes of two operators Kiln lacks, one inside an If branch."""
    foo = helper.make_node("Foo", ["x"], ["f"], name="foo_in_branch",
                           domain="com.example")
    branch = helper.make_graph([foo], "then", [], [vi("f", F, [3])])
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["g"])], "else", [],
        [vi("g", F, [3])])
    nodes = [
        helper.make_node("Binarizer", ["x"], ["b1"], name="bin1",
                         domain="ai.onnx.ml"),
        helper.make_node("Binarizer", ["b1"], ["b2"], name="bin2",
                         domain="ai.onnx.ml"),
        helper.make_node("If", ["c"], ["y"], name="choose",
                         then_branch=branch, else_branch=other),
    ]
    return model(nodes, [vi("x", F, [3]), vi("c", TensorProto.BOOL, [])],
                 [vi("y", F, [3]), vi("b2", F, [3])],
                 domain_opsets=[("ai.onnx.ml", 3), ("com.example", 1)])


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


I64 = TensorProto.INT64
B = TensorProto.BOOL


def const(name, value):
    return numpy_helper.from_array(np.array(value), name)


def if_folded():
    # The condition folds (Shape(x)[0] == 2): only then_branch is traced.
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"],
                                                 name="relu")],
                               "then", [], [vi("r", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["n"],
                                                 name="neg")],
                               "else", [], [vi("n", F, [2, 3])])
    return model([
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["d0"], axis=0),
        helper.make_node("Equal", ["d0", "two"], ["c"]),
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                         else_branch=else_g),
    ], [vi("x", F, [2, 3])], [vi("y", F, [2, 3])],
        [const("zero", np.int64(0)), const("two", np.int64(2))])


def if_kept(variant):
    # A run-time condition: kiln.if. The branches give [2, 3] and [4, 3]
    # (result [?, 3]); both define "t", which must not leak out. Variant
    # "mismatch": else_branch gives int64 (an error). Variants "rank" and
    # "rank-out": else_branch gives [1, 2, 3] (result tensor<*xf32>), read by
    # the Relu (an error) or only a graph output.
    then_g = helper.make_graph([
        helper.make_node("Add", ["x", "one"], ["t"], name="then_add"),
    ], "then", [], [vi("t", F, [2, 3])], [const("one", np.float32(1))])
    if variant == "mismatch":
        else_nodes = [helper.make_node("Shape", ["x"], ["t"], name="shape")]
        else_out = [vi("t", I64, [2])]
    elif variant in ("rank", "rank-out"):
        else_nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["t"],
                                       name="else_unsqueeze")]
        else_out = [vi("t", F, [1, 2, 3])]
    else:
        else_nodes = [helper.make_node("Concat", ["x", "x"], ["t"], axis=0,
                                       name="else_concat")]
        else_out = [vi("t", F, [4, 3])]
    else_g = helper.make_graph(
        else_nodes, "else", [], else_out,
        [const("axes", np.array([0], np.int64))] if variant.startswith("rank")
        else [])
    if variant == "rank-out":
        return model([helper.make_node("If", ["c"], ["y"], name="if",
                                       then_branch=then_g,
                                       else_branch=else_g)],
                     [vi("c", B, []), vi("x", F, [2, 3])], [vi("y", F, None)])
    return model([
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                         else_branch=else_g),
        helper.make_node("Relu", ["y"], ["z"], name="after"),
    ], [vi("c", B, []), vi("x", F, [2, 3])], [vi("z", F, [None, 3])])


def rank_branches(out, src="x"):
    """Branches giving `out` [2, 3] (src + 1) and [1, 2, 3] (unsqueezed)."""
    then_g = helper.make_graph([
        helper.make_node("Add", [src, "one"], [out + "_t"], name="then_add"),
    ], "then", [], [vi(out + "_t", F, None)], [const("one", np.float32(1))])
    else_g = helper.make_graph([
        helper.make_node("Unsqueeze", [src, "axes"], [out + "_e"],
                         name="else_unsqueeze"),
    ], "else", [], [vi(out + "_e", F, None)],
        [const("axes", np.array([0], np.int64))])
    return then_g, else_g


def if_rank_tail():
    # Tail sinking: the If's output y has no fixed rank and later nodes read
    # it (ReduceSum over all axes, Add with an outer value, Relu); they are
    # traced in both branches. The Sigmoid does not depend on the If and
    # stays outside.
    then_g, else_g = rank_branches("y")
    return model([
        helper.make_node("Neg", ["x"], ["n"], name="outer_neg"),
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                         else_branch=else_g),
        helper.make_node("ReduceSum", ["y"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Add", ["s", "n"], ["a"], name="add_outer"),
        helper.make_node("Relu", ["a"], ["z"], name="relu"),
        helper.make_node("Sigmoid", ["x"], ["g"], name="independent"),
    ], [vi("c", B, []), vi("x", F, [2, 3])],
        [vi("z", F, [2, 3]), vi("g", F, [2, 3])])


def if_rank_chain():
    # A second If among the moved nodes whose branches capture y (so it
    # depends on the first If) and disagree on the rank again: inside each
    # branch of the first If it sinks the ReduceSum after it, which is
    # traced four times.
    then_g, else_g = rank_branches("y")
    then2, else2 = rank_branches("v", src="y")
    return model([
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                         else_branch=else_g),
        helper.make_node("If", ["d"], ["v"], name="if2", then_branch=then2,
                         else_branch=else2),
        helper.make_node("ReduceSum", ["v"], ["z"], keepdims=0, name="sum"),
    ], [vi("c", B, []), vi("d", B, []), vi("x", F, [2, 3])],
        [vi("z", F, [])])


def if_rank_nested():
    # The then branch returns an inner If's output of unknown rank: inside
    # it the Relu after the outer If still has no rank (an error).
    inner_then, inner_else = rank_branches("w")
    then_g = helper.make_graph([
        helper.make_node("If", ["d"], ["w"], name="inner",
                         then_branch=inner_then, else_branch=inner_else),
    ], "then", [], [vi("w", F, None)])
    else_g = helper.make_graph([
        helper.make_node("Identity", ["x"], ["e"], name="same"),
    ], "else", [], [vi("e", F, [2, 3])])
    return model([
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                         else_branch=else_g),
        helper.make_node("Relu", ["y"], ["z"], name="after"),
    ], [vi("c", B, []), vi("d", B, []), vi("x", F, [2, 3])],
        [vi("z", F, None)])


def if_rank_loop():
    # An If inside a Loop body (a run-time trip count) whose output has no
    # fixed rank: the ReduceSum after it in the body is traced in both
    # branches, and the carried sum keeps its rank.
    then_g, else_g = rank_branches("y")
    body = helper.make_graph([
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
        helper.make_node("If", ["c"], ["y"], name="body_if",
                         then_branch=then_g, else_branch=else_g),
        helper.make_node("ReduceSum", ["y"], ["s"], keepdims=0, name="sum"),
        helper.make_node("Add", ["acc", "s"], ["acc_out"], name="acc_add"),
    ], "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc", F, [])],
        [vi("cond_out", B, []), vi("acc_out", F, [])])
    return model([
        helper.make_node("Loop", ["n", "", "a0"], ["acc"], name="loop",
                         body=body),
    ], [vi("n", I64, []), vi("c", B, []), vi("x", F, [2, 3])],
        [vi("acc", F, [])], [const("a0", np.float32(0))])


def loop_body(grow):
    # body(i, cond, acc): acc' = acc + x, scan = acc' * float(i) (with
    # grow: acc' = Concat(acc, x), scan = x * float(i)), cond' = cond.
    nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
        helper.make_node("Concat" if grow else "Add", ["acc", "x"],
                         ["acc_out"], name="step", **({"axis": 0} if grow
                                                      else {})),
        helper.make_node("Cast", ["i"], ["fi"], to=F, name="fi"),
        helper.make_node("Mul", ["x" if grow else "acc_out", "fi"], ["scan"],
                         name="scale"),
    ]
    return helper.make_graph(
        nodes, "body",
        [vi("i", I64, []), vi("cond_in", B, []), vi("acc", F, [None])],
        [vi("cond_out", B, []), vi("acc_out", F, [None]),
         vi("scan", F, [None])])


def loop_unrolled():
    # Trip count 3 and a condition that stays a constant: unrolled.
    return model([
        helper.make_node("Loop", ["m", "t", "a0"], ["acc", "scans"],
                         name="loop", body=loop_body(False)),
    ], [vi("x", F, [2])], [vi("acc", F, [2]), vi("scans", F, [3, 2])],
        [const("m", np.int64(3)), const("t", np.array(True)),
         const("a0", np.zeros(2, np.float32))])


def loop_kept():
    # A run-time trip count, and a body that grows the carried value: the
    # carried value becomes [?] (traced twice).
    return model([
        helper.make_node("Loop", ["n", "", "x"], ["acc", "scans"],
                         name="loop", body=loop_body(True)),
    ], [vi("n", I64, []), vi("x", F, [2])],
        [vi("acc", F, [None]), vi("scans", F, [None, 2])])


def loop_run_time_cond():
    # A constant trip count, but the body's condition depends on an input
    # (acc' < lim): kiln.loop, its trip count a constant.
    body = helper.make_graph([
        helper.make_node("Add", ["acc", "x"], ["acc_out"], name="step"),
        helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0,
                         name="total"),
        helper.make_node("Less", ["total", "lim"], ["cond_out"], name="more"),
    ], "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc", F, [2])],
        [vi("cond_out", B, []), vi("acc_out", F, [2])])
    return model([
        helper.make_node("Loop", ["m", "", "x"], ["acc"], name="loop",
                         body=body),
    ], [vi("x", F, [2]), vi("lim", F, [])], [vi("acc", F, [2])],
        [const("m", np.int64(5))])


def scan_sum():
    # Scan-9 over 3 rows, reversed: unrolled into gathers and a concat.
    body = helper.make_graph([
        helper.make_node("Add", ["s", "row"], ["s_out"], name="acc"),
        helper.make_node("Identity", ["s_out"], ["out"], name="copy"),
    ], "body", [vi("s", F, [2]), vi("row", F, [2])],
        [vi("s_out", F, [2]), vi("out", F, [2])])
    return model([
        helper.make_node("Scan", ["s0", "x"], ["s", "ys"], name="scan",
                         num_scan_inputs=1, body=body,
                         scan_input_directions=[1]),
    ], [vi("s0", F, [2]), vi("x", F, [3, 2])],
        [vi("s", F, [2]), vi("ys", F, [3, 2])])


def nonzero_det():
    return model([
        helper.make_node("NonZero", ["m"], ["nz"], name="nz"),
        helper.make_node("Det", ["x"], ["d"], name="det"),
    ], [vi("m", B, [2, 3]), vi("x", F, [4, 3, 3])],
        [vi("nz", I64, [2, None]), vi("d", F, [4])])


def det_not_square():
    return model([helper.make_node("Det", ["x"], ["d"], name="det")],
                 [vi("x", F, [2, 3])], [vi("d", F, [])])


def image_ops(variant):
    """GridSample, Col2Im, NonMaxSuppression and DFT; variants break one."""
    mode = "bogus" if variant == "grid-mode" else "bilinear"
    axis = 2 if variant == "dft-axis" else 1
    shape = ["shape_in"] if variant == "col2im-run-time" else ["image"]
    boxes = [1, 6, 3] if variant == "nms-boxes" else [1, 6, 4]
    nodes = [
        helper.make_node("GridSample", ["x", "grid"], ["gs"], name="gs",
                         mode=mode),
        helper.make_node("Col2Im", ["cols"] + shape + ["block"], ["im"],
                         name="c2i"),
        helper.make_node("NonMaxSuppression",
                         ["boxes", "scores", "max_out"], ["sel"], name="nms"),
        helper.make_node("DFT", ["sig"], ["spec"], name="dft", axis=axis),
    ]
    inputs = [vi("x", F, [1, 1, 4, 4]), vi("grid", F, [1, 6, 6, 2]),
              vi("cols", F, [1, 5, 5]), vi("boxes", F, boxes),
              vi("scores", F, [1, 1, 6]), vi("sig", F, [1, 10, 1])]
    if variant == "col2im-run-time":
        inputs.append(vi("shape_in", I64, [2]))
    inits = [numpy_helper.from_array(np.array([5, 5], np.int64), "image"),
             numpy_helper.from_array(np.array([1, 5], np.int64), "block"),
             numpy_helper.from_array(np.array([3], np.int64), "max_out")]
    return model(nodes, inputs,
                 [vi("gs", F, None), vi("im", F, None), vi("sel", I64, None),
                  vi("spec", F, None)], inits, opset=18)


def new_ops(variant):
    """RoiAlign, DeformConv, STFT, Unique and the random generators;
    variants break one."""
    roi_mode = "median" if variant == "roi-mode" else "max"
    kernel = [3, 3] if variant == "deform-kernel" else [2, 2]
    offset = [1, 6, 2, 2] if variant == "deform-offset" else [1, 8, 2, 2]
    unique_axis = 2 if variant == "unique-axis" else 0
    roi_height = 0 if variant == "roi-height" else 2
    window = [128] if variant == "stft-window" else [16]
    rn_shape = [-2, 3] if variant == "random-shape" else [2, 3]
    nodes = [
        helper.make_node("RoiAlign", ["x", "rois", "bi"], ["ra"], name="ra",
                         mode=roi_mode, output_height=roi_height,
                         output_width=3,
                         sampling_ratio=2,
                         coordinate_transformation_mode="output_half_pixel"),
        helper.make_node("DeformConv", ["dx", "dw", "doff"], ["dc"],
                         name="dc", kernel_shape=kernel),
        helper.make_node("STFT", ["sig", "step", "win"], ["st"], name="st"),
        helper.make_node("Unique", ["u"], ["uy", "ui", "uinv", "uc"],
                         name="uq", axis=unique_axis, sorted=1),
        helper.make_node("RandomNormal", [], ["rn"], name="rn",
                         shape=rn_shape, seed=3.0),
        helper.make_node("RandomUniformLike", ["ud"], ["ru"], name="ru",
                         dtype=TensorProto.DOUBLE),
        helper.make_node("Bernoulli", ["p"], ["bern"], name="bern", seed=1.0),
        helper.make_node("Multinomial", ["logits"], ["mn"], name="mn",
                         sample_size=4),
    ]
    inputs = [vi("x", F, [1, 2, 6, 6]), vi("rois", F, [3, 4]),
              vi("bi", I64, [3]), vi("dx", F, [1, 1, 3, 3]),
              vi("dw", F, [1, 1, 2, 2]), vi("doff", F, offset),
              vi("sig", F, [1, 64, 1]), vi("step", I64, []),
              vi("win", F, window), vi("u", F, [3, 4]), vi("p", F, [5]),
              vi("logits", F, [2, 3]), vi("ud", F, ["n", 4])]
    outs = ["ra", "dc", "st", "uy", "ui", "uinv", "uc", "rn", "ru", "bern",
            "mn"]
    return model(nodes, inputs, [vi(o, F, None) for o in outs], opset=19)


def roi_align_default(opset):
    """RoiAlign without coordinate_transformation_mode: RoiAlign-10's
    output_half_pixel, RoiAlign-16's half_pixel."""
    return model([helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"],
                                   name="ra")],
                 [vi("x", F, [1, 1, 4, 4]), vi("rois", F, [2, 4]),
                  vi("bi", I64, [2])], [vi("y", F, None)], opset=opset)


def bitcast(to):
    """BitCast-26 of a float tensor (to a 16-bit type: a width error)."""
    return model([helper.make_node("BitCast", ["x"], ["y"], name="bc", to=to)],
                 [vi("x", F, [2, 3])], [vi("y", to, None)], opset=26)


def quantized_linear():
    """MatMulInteger and QLinearMatMul over uint8 operands."""
    u8 = TensorProto.UINT8
    inits = [numpy_helper.from_array(np.array(v, dt), n) for n, v, dt in [
        ("zp", 3, np.uint8), ("sa", 0.5, np.float32), ("sb", 0.25, np.float32),
        ("sy", 2.0, np.float32), ("zy", 10, np.uint8)]]
    return model([
        helper.make_node("MatMulInteger", ["a", "b", "zp", "zp"], ["mi"],
                         name="mmi"),
        helper.make_node("QLinearMatMul",
                         ["a", "sa", "zp", "b", "sb", "zp", "sy", "zy"],
                         ["q"], name="qmm"),
    ], [vi("a", u8, [2, 3]), vi("b", u8, [3, 4])],
        [vi("mi", TensorProto.INT32, [2, 4]), vi("q", u8, [2, 4])], inits)


MODELS = {
    "basic": basic,
    "fold-shapes": fold_shapes,
    "external": lambda: external("present"),
    "external-missing": lambda: external("missing"),
    "external-bad-offset": lambda: external("bad-offset"),
    "unsupported-op": unsupported_op,
    "old-opset": old_opset,
    "other-domain": other_domain,
    "unknown-ops": unknown_ops,
    "string-input": string_input,
    "old-forms": old_forms,
    "dropout-mask": dropout_mask,
    "training-dropout": training_dropout,
    "if-folded": if_folded,
    "if-kept": lambda: if_kept("kept"),
    "if-mismatch": lambda: if_kept("mismatch"),
    "if-rank": lambda: if_kept("rank"),
    "if-rank-out": lambda: if_kept("rank-out"),
    "if-rank-tail": if_rank_tail,
    "if-rank-chain": if_rank_chain,
    "if-rank-nested": if_rank_nested,
    "if-rank-loop": if_rank_loop,
    "loop-unrolled": loop_unrolled,
    "loop-kept": loop_kept,
    "loop-run-time-cond": loop_run_time_cond,
    "scan": scan_sum,
    "nonzero-det": nonzero_det,
    "det-not-square": det_not_square,
    "image-ops": lambda: image_ops("ok"),
    "grid-mode": lambda: image_ops("grid-mode"),
    "dft-axis": lambda: image_ops("dft-axis"),
    "col2im-run-time": lambda: image_ops("col2im-run-time"),
    "nms-boxes": lambda: image_ops("nms-boxes"),
    "new-ops": lambda: new_ops("ok"),
    "bitcast": lambda: bitcast(TensorProto.INT32),
    "roi-align-10": lambda: roi_align_default(10),
    "roi-align-16": lambda: roi_align_default(16),
    "bitcast-width": lambda: bitcast(TensorProto.INT16),
    "roi-mode": lambda: new_ops("roi-mode"),
    "deform-kernel": lambda: new_ops("deform-kernel"),
    "deform-offset": lambda: new_ops("deform-offset"),
    "unique-axis": lambda: new_ops("unique-axis"),
    "roi-height": lambda: new_ops("roi-height"),
    "stft-window": lambda: new_ops("stft-window"),
    "random-shape": lambda: new_ops("random-shape"),
    "quantized-linear": quantized_linear,
}

if __name__ == "__main__":
    onnx.save(MODELS[sys.argv[1]](), sys.argv[2])
