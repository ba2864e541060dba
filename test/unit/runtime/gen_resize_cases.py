#!/usr/bin/env python3
# ===- gen_resize_cases.py - Test data for the resize and rnn kernels ------=== #
#
# This script converts a handful of ONNX backend node tests (test_resize_*,
# test_lstm_*, test_gru_*) and a few extra cases (computed by the ONNX
# reference evaluator for resize, by onnxruntime for lstm/gru features the
# ONNX reference does not implement) into small .npy files under data/, as
# the runtime reads no protobuf. Each case is a folder with operands
# in_<k>.npy (already in kiln's operand order, optional ONNX inputs
# materialized the way the tracer does it), expected results out_<k>.npy (missing for a
# result slot the node test leaves unused) and
# attrs.txt (one attribute a line: `name kind values...`, kind s = string,
# i = int, f = float, I = int list, F = float list). data/<op>_cases.txt lists
# the case folders. Run it from anywhere; it rewrites data/ in place.
#
# ===-----------------------------------------------------------------------=== #

import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
NODE = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")

RESIZE_NODE_CASES = [
    "test_resize_downsample_scales_cubic",
    "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside",
    "test_resize_downsample_scales_cubic_antialias",
    "test_resize_downsample_scales_linear",
    "test_resize_downsample_scales_linear_antialias",
    "test_resize_downsample_scales_linear_half_pixel_symmetric",
    "test_resize_downsample_scales_nearest",
    "test_resize_downsample_sizes_cubic_antialias",
    "test_resize_downsample_sizes_linear_pytorch_half_pixel",
    "test_resize_downsample_sizes_nearest_not_larger",
    "test_resize_downsample_sizes_nearest_not_smaller",
    "test_resize_tf_crop_and_resize_axes_3_2",
    "test_resize_tf_crop_and_resize_extrapolation_value",
    "test_resize_upsample_scales_cubic_asymmetric",
    "test_resize_upsample_scales_linear_half_pixel_symmetric",
    "test_resize_upsample_scales_nearest",
    "test_resize_upsample_scales_nearest_axes_3_2",
    "test_resize_upsample_sizes_nearest_ceil_half_pixel",
    "test_resize_upsample_sizes_nearest_floor_align_corners",
    "test_resize_upsample_sizes_nearest_not_larger",
    "test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric",
]

RNN_NODE_CASES = [
    "test_lstm_defaults",
    "test_lstm_with_peepholes",
    "test_lstm_batchwise",
    "test_gru_defaults",
    "test_gru_seq_length",
    "test_gru_batchwise",
]


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def node_case(name):
    d = os.path.join(NODE, name)
    model = onnx.load(os.path.join(d, "model.onnx"))
    node = model.graph.node[-1]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    graph_inputs = [i.name for i in model.graph.input]
    feeds = {}
    for k, gi in enumerate(graph_inputs):
        feeds[gi] = load_pb(os.path.join(d, "test_data_set_0", f"input_{k}.pb"))
    ins = [feeds.get(n) if n else None for n in node.input]
    # Results by the node's output slot (None for an unused slot).
    graph_outputs = [o.name for o in model.graph.output]
    outs = []
    for name in node.output:
        if name and name in graph_outputs:
            k = graph_outputs.index(name)
            outs.append(load_pb(os.path.join(d, "test_data_set_0", f"output_{k}.pb")))
        else:
            outs.append(None)
    return node, attrs, ins, outs


def fmt_attr(name, v):
    if isinstance(v, bytes):
        return f"{name} s {v.decode()}"
    if isinstance(v, str):
        return f"{name} s {v}"
    if isinstance(v, (int, np.integer)):
        return f"{name} i {int(v)}"
    if isinstance(v, (float, np.floating)):
        return f"{name} f {float(v)!r}"
    if isinstance(v, (list, tuple, np.ndarray)):
        vals = list(v)
        if vals and all(isinstance(x, (int, np.integer)) for x in vals):
            return f"{name} I " + " ".join(str(int(x)) for x in vals)
        return f"{name} F " + " ".join(repr(float(x)) for x in vals)
    raise TypeError(f"attribute {name}: {v!r}")


def write_case(op, case, ins, outs, attrs):
    d = os.path.join(DATA, op, case)
    os.makedirs(d, exist_ok=True)
    for k, a in enumerate(ins):
        np.save(os.path.join(d, f"in_{k}.npy"), np.ascontiguousarray(a))
    for k, a in enumerate(outs):
        if a is None:
            continue
        np.save(os.path.join(d, f"out_{k}.npy"), np.ascontiguousarray(a))
    with open(os.path.join(d, "attrs.txt"), "w") as f:
        for name, v in attrs.items():
            f.write(fmt_attr(name, v) + "\n")


def resize_operands(x, roi, scales, sizes, attrs):
    """Expands `axes` and `roi` to full rank, as the tracer does."""
    r = x.ndim
    axes = attrs.pop("axes", None)
    kattrs = {k: v for k, v in attrs.items()}
    if axes is not None:
        axes = [a + r if a < 0 else a for a in axes]
        if scales is not None and scales.size:
            full = np.ones(r, np.float32)
            full[axes] = scales
            scales = full
        if sizes is not None and sizes.size:
            full = np.array(x.shape, np.int64)
            full[axes] = sizes
            sizes = full
        if roi is not None and roi.size:
            full = np.array([0.0] * r + [1.0] * r, np.float32)
            for i, a in enumerate(axes):
                full[a] = roi[i]
                full[r + a] = roi[len(axes) + i]
            roi = full
        if kattrs.get("keep_aspect_ratio_policy", b"stretch") != b"stretch":
            kattrs["axes"] = list(axes)
    if roi is not None and roi.size:
        kattrs["roi"] = [float(v) for v in roi.astype(np.float32)]
    if scales is None:
        scales = np.zeros([0], np.float32)
    if sizes is None:
        sizes = np.zeros([0], np.int64)
    return [x, scales.astype(np.float32), sizes.astype(np.int64)], kattrs


def gen_resize():
    names = []
    for name in RESIZE_NODE_CASES:
        node, attrs, ins, outs = node_case(name)
        ins += [None] * (4 - len(ins))
        x, roi, scales, sizes = ins
        operands, kattrs = resize_operands(x, roi, scales, sizes, attrs)
        case = name[len("test_resize_"):]
        write_case("resize", case, operands, outs, kattrs)
        names.append(case)

    # Extra dtypes / rank: computed by the ONNX reference evaluator.
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(0)
    extras = [
        ("f16_linear_align_corners", rng.standard_normal((1, 2, 3, 3)).astype(np.float16),
         np.array([1, 1, 1.5, 2], np.float32), None,
         {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
        ("u8_nearest_round_prefer_ceil", rng.integers(0, 255, (2, 3, 4)).astype(np.uint8),
         None, np.array([2, 5, 3], np.int64),
         {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}),
        ("u8_linear_saturate", np.array([[0, 255, 10, 200]], np.uint8),
         None, np.array([1, 7], np.int64),
         {"mode": "cubic", "cubic_coeff_a": -0.75}),
        ("f64_cubic_3d_exclude_outside", rng.standard_normal((2, 3, 5)),
         np.array([1, 1.7, 0.5], np.float32), None,
         {"mode": "cubic", "exclude_outside": 1, "cubic_coeff_a": -0.5}),
        ("f32_linear_antialias_1d", rng.standard_normal((10,)).astype(np.float32),
         None, np.array([3], np.int64), {"mode": "linear", "antialias": 1}),
    ]
    np_to_onnx = {np.float16: TensorProto.FLOAT16, np.uint8: TensorProto.UINT8,
                  np.float64: TensorProto.DOUBLE, np.float32: TensorProto.FLOAT}
    for case, x, scales, sizes, attrs in extras:
        et = np_to_onnx[x.dtype.type]
        inputs = ["x", "", "scales" if scales is not None else "",
                  "sizes" if sizes is not None else ""]
        while inputs[-1] == "":
            inputs.pop()
        node = helper.make_node("Resize", inputs, ["y"], **attrs)
        ginputs = [helper.make_tensor_value_info("x", et, list(x.shape))]
        feeds = {"x": x}
        if scales is not None:
            ginputs.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT, [len(scales)]))
            feeds["scales"] = scales
        if sizes is not None:
            ginputs.append(helper.make_tensor_value_info("sizes", TensorProto.INT64, [len(sizes)]))
            feeds["sizes"] = sizes
        graph = helper.make_graph([node], "g", ginputs,
                                  [helper.make_tensor_value_info("y", et, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        y = ReferenceEvaluator(model).run(None, feeds)[0]
        operands, kattrs = resize_operands(x, None, scales, sizes,
                                           {k: v.encode() if isinstance(v, str) else v
                                            for k, v in attrs.items()})
        write_case("resize", case, operands, [y], kattrs)
        names.append(case)
    return names


def rnn_operands(op, ins, attrs, x_layout_batch_first):
    """Materializes the optional operands of lstm/gru as the tracer does."""
    n_in = 8 if op == "lstm" else 6
    ins = list(ins) + [None] * (n_in - len(ins))
    x, w = ins[0], ins[1]
    nd, gh, _ = w.shape
    gates = 4 if op == "lstm" else 3
    h = gh // gates
    if x_layout_batch_first:
        batch, seq = x.shape[0], x.shape[1]
        state = (batch, nd, h)
    else:
        seq, batch = x.shape[0], x.shape[1]
        state = (nd, batch, h)
    dt = x.dtype
    if ins[3] is None:
        ins[3] = np.zeros((nd, 2 * gates * h), dt)
    if ins[4] is None:
        ins[4] = np.full((batch,), seq, np.int32)
    ins[4] = ins[4].astype(np.int32)
    if ins[5] is None:
        ins[5] = np.zeros(state, dt)
    if op == "lstm":
        if ins[6] is None:
            ins[6] = np.zeros(state, dt)
        if ins[7] is None:
            ins[7] = np.zeros((nd, 3 * h), dt)
    kattrs = {"direction": attrs.get("direction", b"forward"),
              "hidden_size": int(attrs.get("hidden_size", h)),
              "clip": float(attrs.get("clip", 0.0)),
              "layout": int(attrs.get("layout", 0))}
    if op == "lstm":
        kattrs["input_forget"] = int(attrs.get("input_forget", 0))
    else:
        kattrs["linear_before_reset"] = int(attrs.get("linear_before_reset", 0))
    return ins, kattrs


def gen_rnn():
    names = {"lstm": [], "gru": []}
    for name in RNN_NODE_CASES:
        node, attrs, ins, outs = node_case(name)
        op = node.op_type.lower()
        ins, kattrs = rnn_operands(op, ins, attrs, int(attrs.get("layout", 0)) == 1)
        case = name[len("test_"):]
        write_case(op, case, ins, outs, kattrs)
        names[op].append(case)

    # Features the ONNX reference does not implement: onnxruntime computes.
    import onnxruntime as ort

    rng = np.random.default_rng(1)
    extras = [
        ("lstm", "lstm_bidirectional_seqlens_clip", dict(direction="bidirectional", clip=0.7), 0, [3, 1, 0]),
        ("lstm", "lstm_reverse_input_forget_peep", dict(direction="reverse", input_forget=1), 0, [4, 2, 3]),
        ("lstm", "lstm_layout1_bidirectional", dict(direction="bidirectional", layout=1), 1, [4, 4, 2]),
        ("gru", "gru_bidirectional_seqlens_lbr", dict(direction="bidirectional", linear_before_reset=1), 0, [3, 1, 4]),
        ("gru", "gru_reverse_clip_layout1", dict(direction="reverse", clip=0.5, layout=1), 1, [2, 4, 1]),
    ]
    seq, batch, inp, hid = 4, 3, 2, 3
    for op, case, attrs, layout, lens in extras:
        nd = 2 if attrs["direction"] == "bidirectional" else 1
        gates = 4 if op == "lstm" else 3
        xs = (batch, seq, inp) if layout else (seq, batch, inp)
        st = (batch, nd, hid) if layout else (nd, batch, hid)
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal((nd, gates * hid, inp)) * 0.8).astype(np.float32)
        r = (rng.standard_normal((nd, gates * hid, hid)) * 0.8).astype(np.float32)
        b = (rng.standard_normal((nd, 2 * gates * hid)) * 0.5).astype(np.float32)
        sl = np.array(lens, np.int32)
        h0 = rng.standard_normal(st).astype(np.float32)
        feeds = [x, w, r, b, sl, h0]
        names_in = ["x", "w", "r", "b", "sl", "h0"]
        if op == "lstm":
            feeds += [rng.standard_normal(st).astype(np.float32),
                      (rng.standard_normal((nd, 3 * hid)) * 0.5).astype(np.float32)]
            names_in += ["c0", "p"]
        outs_names = ["y", "yh", "yc"] if op == "lstm" else ["y", "yh"]
        # onnxruntime has no layout 1: run layout 0 on transposed operands.
        ort_attrs = {k: v for k, v in attrs.items() if k != "layout"}
        ort_feeds = list(feeds)
        if layout:
            for k in [0, 5, 6][: 3 if op == "lstm" else 2]:
                ort_feeds[k] = np.ascontiguousarray(np.swapaxes(feeds[k], 0, 1))
        node = helper.make_node(op.upper(), names_in, outs_names, hidden_size=hid, **ort_attrs)
        ginputs = [helper.make_tensor_value_info(n, TensorProto.INT32 if n == "sl" else TensorProto.FLOAT,
                                                 list(a.shape)) for n, a in zip(names_in, ort_feeds)]
        goutputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outs_names]
        model = helper.make_model(helper.make_graph([node], "g", ginputs, goutputs),
                                  opset_imports=[helper.make_opsetid("", 14)])
        model.ir_version = 8
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        outs = sess.run(None, dict(zip(names_in, ort_feeds)))
        if layout:
            outs = [np.transpose(outs[0], (2, 0, 1, 3))] + [
                np.swapaxes(o, 0, 1) for o in outs[1:]]
        kattrs = {k: (v.encode() if isinstance(v, str) else v) for k, v in attrs.items()}
        ins, kattrs = rnn_operands(op, feeds, kattrs, layout == 1)
        write_case(op, case, ins, outs, kattrs)
        names[op].append(case)
    return names


def main():
    for sub in ("resize", "lstm", "gru"):
        shutil.rmtree(os.path.join(DATA, sub), ignore_errors=True)
    os.makedirs(DATA, exist_ok=True)
    resize = gen_resize()
    rnn = gen_rnn()
    for op, names in [("resize", resize), ("lstm", rnn["lstm"]), ("gru", rnn["gru"])]:
        with open(os.path.join(DATA, f"{op}_cases.txt"), "w") as f:
            f.write("\n".join(names) + "\n")


if __name__ == "__main__":
    main()
