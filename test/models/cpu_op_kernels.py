#!/usr/bin/env python3
"""The CPU target's kernels of single ops against the reference runtime.

This script implements the numeric test of the C++ kernels that kiln-lower-cpu
gives single top-level ops instead of reference steps
(targets/cpu/CppOpKernels.cpp): CumSum and CumProd along a constant axis
(plain, exclusive + reverse; f32 and int8, whose sums wrap) and along an
axis read at run time (int64 and int32 [1], negative; an axis out of range
fails the run naming the node), BitCast (f32 to int32, int8 to uint8, uint8 to
bool), ArgMax and ArgMin
(ties, NaN, select_last_index), and GatherElements (negative indices); and
those of CppIndexKernels.cpp: Trilu (upper and lower, k negative and
positive), Hardmax (ties, NaN), ScatterElements and ScatterND (every
reduction: none, add, mul, max, min; duplicate and negative indices, NaN
elements and updates, int8 sums that wrap), GatherND (batch_dims 0 and 1,
negative indices) and GridSample (nearest, linear and cubic; zeros, border and
reflection padding; align_corners; points outside the image, a NaN coordinate,
nearest's ties; a volume); and those of CppWindowKernels.cpp: Pad (constant,
reflect, edge and wrap; negative pads), MaxPool and AveragePool where oneDNN
does not take them (f64 with a NaN, f16, int8; ceil_mode with the pads
counted); and Einsum (CppEinsumKernel.cpp: a reduction, int8 products,
three operands, a diagonal); DFT (CppSignalKernels.cpp: forward and inverse,
real and complex input, one-sided, cut and zero-padded, an axis other than the
last, f64) and RoiAlign and DeformConv (CppImageKernels.cpp: avg and max, both
coordinate modes, sampling_ratio 0 and 2, regions partly outside the image;
with and without mask and bias, group and offset_group 2, offsets far outside
the image and a NaN one). The ONNX node tests cover ArgMax, ArgMin,
GatherElements, BitCast and CumSum along a run-time axis too.
An index out of range must fail the compiled run with an error naming the node,
as it fails the reference run, and so must a region of interest that is not
finite.

  cpu_op_kernels.py --kiln build/bin/kiln --work DIR

The model runs on the reference runtime (`kiln run MODEL`) and compiled
(`kiln compile`, then `kiln run PKG`); every output must be bit-identical, and
the compiled package must report no fallback op. Exit status 1 otherwise.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def signal_image_nodes():
    """DFT, RoiAlign and DeformConv nodes: (nodes, outputs, initializers,
    graph inputs)."""
    nodes = [
        helper.make_node("DFT", ["sr", "", "axis_1"], ["dft_real_axis1"],
                         name="dft_real_axis1"),
        helper.make_node("DFT", ["sc", "len8"], ["dft_inverse_padded"],
                         inverse=1, name="dft_inverse_padded"),
        helper.make_node("DFT", ["sr", "len2"], ["dft_rfft_cut"], onesided=1,
                         name="dft_rfft_cut"),
        helper.make_node("DFT", ["sr", "len8", "axis_1"], ["dft_rfft_axis1"],
                         onesided=1, name="dft_rfft_axis1"),
        helper.make_node("DFT", ["sc", "len8"], ["dft_irfft"], inverse=1,
                         onesided=1, name="dft_irfft"),
        helper.make_node("DFT", ["sc"], ["dft_complex"], name="dft_complex"),
        helper.make_node("Cast", ["sr"], ["sr_f64"], to=TensorProto.DOUBLE,
                         name="sr_f64"),
        helper.make_node("DFT", ["sr_f64", "", "axis_1"], ["dft_f64"],
                         inverse=1, name="dft_f64"),
    ]
    for mode, coords, ratio, scale in [("avg", "half_pixel", 0, 1.0),
                                       ("max", "output_half_pixel", 2, 1.0),
                                       ("avg", "output_half_pixel", 2, 0.5),
                                       ("max", "half_pixel", 0, 0.75)]:
        out = f"roi_{mode}_{coords}_{ratio}"
        nodes.append(helper.make_node(
            "RoiAlign", ["img", "rois", "roi_batch"], [out], mode=mode,
            coordinate_transformation_mode=coords, sampling_ratio=ratio,
            spatial_scale=scale, output_height=2, output_width=3, name=out))
    nodes += [
        helper.make_node("DeformConv", ["dimg", "dw", "doff"], ["deform_plain"],
                         pads=[1, 1, 1, 1], name="deform_plain"),
        helper.make_node("DeformConv", ["dimg", "dw2", "doff2", "db2", "dmask2"],
                         ["deform_mask_groups"], group=2, offset_group=2,
                         strides=[2, 1], dilations=[2, 1], pads=[1, 0, 1, 1],
                         name="deform_mask_groups"),
    ]
    outputs = [n.output[0] for n in nodes if n.op_type != "Cast"]
    inits = [numpy_helper.from_array(np.array(1, np.int64), "axis_1"),
             numpy_helper.from_array(np.array(8, np.int64), "len8"),
             numpy_helper.from_array(np.array(2, np.int64), "len2")]
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("sr", f, [2, 6, 3, 1]),
              helper.make_tensor_value_info("sc", f, [2, 5, 2]),
              helper.make_tensor_value_info("rois", f, [4, 4]),
              helper.make_tensor_value_info("roi_batch", TensorProto.INT64,
                                            [4]),
              helper.make_tensor_value_info("dimg", f, [1, 4, 5, 5]),
              helper.make_tensor_value_info("dw", f, [2, 4, 3, 3]),
              helper.make_tensor_value_info("doff", f, [1, 18, 5, 5]),
              helper.make_tensor_value_info("dw2", f, [4, 2, 2, 2]),
              helper.make_tensor_value_info("doff2", f, [1, 16, 3, 5]),
              helper.make_tensor_value_info("db2", f, [4]),
              helper.make_tensor_value_info("dmask2", f, [1, 8, 3, 5])]
    return nodes, outputs, inits, inputs


def build_model():
    nodes = [
        helper.make_node("CumSum", ["x", "axis1"], ["cumsum"], name="cumsum"),
        helper.make_node("CumSum", ["x", "axis1"], ["cumsum_excl_rev"],
                         exclusive=1, reverse=1, name="cumsum_excl_rev"),
        helper.make_node("CumSum", ["q", "axis_first"], ["cumsum_int8"],
                         name="cumsum_int8"),
        helper.make_node("CumProd", ["x", "axis_first"], ["cumprod_rev"],
                         reverse=1, name="cumprod_rev"),
        # Along an axis read at run time (a graph input, negative here).
        helper.make_node("CumSum", ["x", "axis_rt"], ["cumsum_rt"],
                         name="cumsum_rt"),
        helper.make_node("CumSum", ["x", "axis_rt"], ["cumsum_rt_excl_rev"],
                         exclusive=1, reverse=1, name="cumsum_rt_excl_rev"),
        helper.make_node("CumSum", ["q", "axis_rt32"], ["cumsum_rt_int8"],
                         exclusive=1, name="cumsum_rt_int8"),
        helper.make_node("CumProd", ["x", "axis_rt32"], ["cumprod_rt_rev"],
                         reverse=1, name="cumprod_rt_rev"),
        helper.make_node("BitCast", ["x"], ["bitcast_i32"], to=TensorProto.INT32,
                         name="bitcast_i32"),
        helper.make_node("BitCast", ["q"], ["bitcast_u8"], to=TensorProto.UINT8,
                         name="bitcast_u8"),
        helper.make_node("BitCast", ["qu"], ["bitcast_bool"], to=TensorProto.BOOL,
                         name="bitcast_bool"),
        helper.make_node("ArgMax", ["x"], ["argmax"], axis=2, keepdims=0,
                         name="argmax"),
        helper.make_node("ArgMin", ["x"], ["argmin_last"], axis=1,
                         select_last_index=1, name="argmin_last"),
        helper.make_node("GatherElements", ["x", "picks"], ["picked"], axis=2,
                         name="picked"),
        helper.make_node("Trilu", ["x", "k_neg"], ["triu"], name="triu"),
        helper.make_node("Trilu", ["q", "k"], ["tril_int8"], upper=0,
                         name="tril_int8"),
        helper.make_node("Hardmax", ["x"], ["hardmax"], axis=1,
                         name="hardmax"),
        helper.make_node("Hardmax", ["x"], ["hardmax_last"], name="hardmax_last"),
        helper.make_node("ScatterElements", ["q", "sidx", "qupd"],
                         ["scatter_int8_add"], axis=2, reduction="add",
                         name="scatter_int8_add"),
        helper.make_node("GatherND", ["x", "gidx"], ["gather_nd_b1"],
                         batch_dims=1, name="gather_nd_b1"),
        helper.make_node("GatherND", ["x", "nidx"], ["gather_nd"],
                         name="gather_nd"),
    ]
    samplings = [("linear", "zeros", 0), ("cubic", "reflection", 1),
                 ("nearest", "border", 0), ("cubic", "border", 0),
                 ("nearest", "reflection", 1), ("linear", "reflection", 0)]
    for mode, padding, align in samplings:
        out = f"grid_{mode}_{padding}_{align}"
        nodes.append(helper.make_node(
            "GridSample", ["img", "grid"], [out], mode=mode,
            padding_mode=padding, align_corners=align, name=out))
    nodes.append(helper.make_node(
        "GridSample", ["vol", "vgrid"], ["grid_volume"], mode="linear",
        padding_mode="border", name="grid_volume"))
    grids = [n.output[0] for n in nodes[-len(samplings) - 1:]]
    # Pads of every mode (negative pads crop first) and the poolings oneDNN
    # does not take (f64, f16, integers, an average counting the pads past
    # which ceil_mode's last window reaches).
    windows = []
    for mode, pads in [("constant", [0, 1, -1, 1, 0, 2]),
                       ("reflect", [1, 0, 2, 0, 2, -1]),
                       ("edge", [0, 2, 1, 1, -2, 3]),
                       ("wrap", [2, 0, 0, 0, 1, 6])]:
        windows.append(helper.make_node(
            "Pad", ["x", "pads_" + mode] + (["padv"] if mode == "constant"
                                            else []),
            ["pad_" + mode], mode=mode, name="pad_" + mode))
        windows.append((mode, pads))
    pad_inits = [numpy_helper.from_array(np.array(p, np.int64), "pads_" + m)
                 for m, p in windows[1::2]]
    windows = windows[0::2]
    windows += [
        helper.make_node("MaxPool", ["xd"], ["max_pool_f64"],
                         kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1], name="max_pool_f64"),
        helper.make_node("MaxPool", ["q"], ["max_pool_int8"],
                         kernel_shape=[2], strides=[2], pads=[1, 1],
                         ceil_mode=1, name="max_pool_int8"),
        helper.make_node("Cast", ["img"], ["img_f16"], to=TensorProto.FLOAT16,
                         name="img_f16"),
        helper.make_node("MaxPool", ["img_f16"], ["max_pool_f16"],
                         kernel_shape=[2, 2], dilations=[2, 1],
                         name="max_pool_f16"),
        helper.make_node("AveragePool", ["img_f16"], ["avg_pool_f16"],
                         kernel_shape=[3, 2], pads=[1, 0, 1, 1],
                         name="avg_pool_f16"),
        helper.make_node("AveragePool", ["img"], ["avg_pool_ceil_pads"],
                         kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                         count_include_pad=1, name="avg_pool_ceil_pads"),
        helper.make_node("AveragePool", ["xd"], ["avg_pool_f64"],
                         kernel_shape=[2, 3], strides=[1, 2],
                         pads=[1, 1, 0, 1], count_include_pad=1,
                         name="avg_pool_f64"),
    ]
    # Einsums the reference sums in a loop: a reduction, int8 products that
    # wrap, three operands, a diagonal of f64.
    windows += [
        helper.make_node("Einsum", ["x"], ["einsum_sum"], equation="ijk->ik",
                         name="einsum_sum"),
        helper.make_node("Einsum", ["q", "q"], ["einsum_int8"],
                         equation="ijk,ilk->ijl", name="einsum_int8"),
        helper.make_node("Einsum", ["x", "x", "x"], ["einsum_three"],
                         equation="ijk,ijk,ijk->i", name="einsum_three"),
        helper.make_node("Einsum", ["xd"], ["einsum_diag"],
                         equation="bcii->bci", name="einsum_diag"),
    ]
    nodes += windows
    window_outputs = [n.output[0] for n in windows if n.op_type != "Cast"]
    for red in ["none", "add", "mul", "max", "min"]:
        nodes.append(helper.make_node(
            "ScatterElements", ["x", "sidx", "upd"], ["scatter_" + red],
            axis=-1, reduction=red, name="scatter_" + red))
        nodes.append(helper.make_node(
            "ScatterND", ["x", "nidx", "nupd"], ["scatter_nd_" + red],
            reduction=red, name="scatter_nd_" + red))
    inits = [numpy_helper.from_array(np.array(1, np.int64), "axis1"),
             numpy_helper.from_array(np.array([-3], np.int32), "axis_first"),
             numpy_helper.from_array(np.array(-1, np.int64), "k_neg"),
             numpy_helper.from_array(np.array(2.5, np.float32), "padv")]
    inits += pad_inits
    outputs = ["cumsum", "cumsum_excl_rev", "cumsum_int8", "cumprod_rev",
               "cumsum_rt", "cumsum_rt_excl_rev", "cumsum_rt_int8",
               "cumprod_rt_rev", "bitcast_i32", "bitcast_u8", "bitcast_bool",
               "argmax", "argmin_last", "picked", "triu", "tril_int8",
               "hardmax", "hardmax_last", "scatter_int8_add", "gather_nd_b1",
               "gather_nd"] + grids + [n.output[0] for n in nodes[-10:]] + \
        window_outputs
    extra_nodes, extra_outputs, extra_inits, extra_inputs = signal_image_nodes()
    nodes += extra_nodes
    outputs += extra_outputs
    inits += extra_inits
    graph = helper.make_graph(
        nodes, "cpu_op_kernels",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5]),
         helper.make_tensor_value_info("q", TensorProto.INT8, [3, 4, 5]),
         helper.make_tensor_value_info("picks", TensorProto.INT64, [3, 4, 2]),
         helper.make_tensor_value_info("k", TensorProto.INT64, []),
         helper.make_tensor_value_info("axis_rt", TensorProto.INT64, []),
         helper.make_tensor_value_info("axis_rt32", TensorProto.INT32, [1]),
         helper.make_tensor_value_info("qu", TensorProto.UINT8, [3, 4, 5]),
         helper.make_tensor_value_info("sidx", TensorProto.INT64, [3, 4, 2]),
         helper.make_tensor_value_info("upd", TensorProto.FLOAT, [3, 4, 2]),
         helper.make_tensor_value_info("qupd", TensorProto.INT8, [3, 4, 2]),
         helper.make_tensor_value_info("nidx", TensorProto.INT64, [3, 2]),
         helper.make_tensor_value_info("nupd", TensorProto.FLOAT, [3, 5]),
         helper.make_tensor_value_info("gidx", TensorProto.INT32, [3, 2, 1]),
         helper.make_tensor_value_info("img", TensorProto.FLOAT, [2, 3, 4, 5]),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, [2, 3, 4, 2]),
         helper.make_tensor_value_info("vol", TensorProto.FLOAT, [1, 2, 3, 4, 5]),
         helper.make_tensor_value_info("xd", TensorProto.DOUBLE, [1, 2, 5, 5]),
         helper.make_tensor_value_info("vgrid", TensorProto.FLOAT,
                                       [1, 2, 3, 2, 3])] + extra_inputs,
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
         for o in outputs], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    m.ir_version = 11
    return onnx.shape_inference.infer_shapes(m, strict_mode=True), outputs


def signal_image_feeds(rng):
    """The inputs of signal_image_nodes' nodes."""
    # Regions inside, partly outside and past the image (5 wide, 4 high),
    # some wide enough that sampling_ratio 0 takes several samples per bin.
    rois = np.array([[0.5, 0.2, 4.1, 3.3], [-1.5, -0.7, 2.2, 5.6],
                     [3.0, 1.0, 3.4, 1.2], [1.0, 2.5, 7.9, 9.0]], np.float32)
    doff = rng.normal(0, 1.5, (1, 18, 5, 5)).astype(np.float32)
    doff[0, 3, 2, 2] = np.nan  # reads a zero
    doff[0, 4, 1, 1] = 40.0    # far outside the image
    doff2 = rng.normal(0, 1.5, (1, 16, 3, 5)).astype(np.float32)
    return {"sr": rng.standard_normal((2, 6, 3, 1)).astype(np.float32),
            "sc": rng.standard_normal((2, 5, 2)).astype(np.float32),
            "rois": rois,
            "roi_batch": np.array([0, 1, 1, 0], np.int64),
            "dimg": rng.standard_normal((1, 4, 5, 5)).astype(np.float32),
            "dw": rng.standard_normal((2, 4, 3, 3)).astype(np.float32),
            "doff": doff,
            "dw2": rng.standard_normal((4, 2, 2, 2)).astype(np.float32),
            "doff2": doff2,
            "db2": rng.standard_normal(4).astype(np.float32),
            "dmask2": rng.uniform(0, 1, (1, 8, 3, 5)).astype(np.float32)}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout + p.stderr


def check_bad_index(args, path, pkg, inputs, feeds):
    """A gather_nd index out of range fails both runs; the compiled one names
    the node. Returns the failures."""
    gidx = feeds["gidx"].copy()
    gidx[1, 0, 0] = 4  # the axis has 4 positions
    f = os.path.join(args.work, "gidx_bad.npy")
    np.save(f, gidx)
    bad_inputs = [a.replace(os.path.join(args.work, "gidx.npy"), f)
                  for a in inputs]
    failures = []
    for what, target in [("reference", path), ("compiled", pkg)]:
        p = subprocess.run([args.kiln, "run", target, "-o",
                            os.path.join(args.work, "bad_" + what)] + bad_inputs,
                           capture_output=True, text=True)
        if p.returncode == 0:
            failures.append(f"{what}: an index out of range did not fail the run")
        elif what == "compiled" and "node 'gather_nd_b1'" not in p.stdout + p.stderr:
            failures.append(f"compiled: the error does not name the node: "
                            f"{p.stdout}{p.stderr}")
    return failures


def check_bad_axis(args, path, pkg, inputs):
    """A run-time axis out of range (3 of a rank-3 x) fails both runs; the
    compiled one names the node. Returns the failures."""
    f = os.path.join(args.work, "axis_rt_bad.npy")
    np.save(f, np.array(3, np.int64))
    bad_inputs = [a.replace(os.path.join(args.work, "axis_rt.npy"), f)
                  for a in inputs]
    failures = []
    for what, target in [("reference", path), ("compiled", pkg)]:
        p = subprocess.run([args.kiln, "run", target, "-o",
                            os.path.join(args.work, "bad_axis_" + what)] +
                           bad_inputs, capture_output=True, text=True)
        out = p.stdout + p.stderr
        if p.returncode == 0:
            failures.append(f"{what}: an axis out of range did not fail the run")
        elif "node 'cumsum_rt" not in out or "axis" not in out:
            failures.append(f"{what}: the error does not name the node and "
                            f"the axis: {out}")
    return failures


def check_bad_region(args, path, pkg, inputs, feeds):
    """A region of interest that is not finite fails both runs; the compiled
    one names a roi_align node. Returns the failures."""
    rois = feeds["rois"].copy()
    rois[2, 1] = np.inf
    f = os.path.join(args.work, "rois_bad.npy")
    np.save(f, rois)
    bad_inputs = [a.replace(os.path.join(args.work, "rois.npy"), f)
                  for a in inputs]
    failures = []
    for what, target in [("reference", path), ("compiled", pkg)]:
        p = subprocess.run([args.kiln, "run", target, "-o",
                            os.path.join(args.work, "bad_roi_" + what)] +
                           bad_inputs, capture_output=True, text=True)
        out = p.stdout + p.stderr
        if p.returncode == 0:
            failures.append(f"{what}: a region that is not finite did not "
                            f"fail the run")
        elif what == "compiled" and ("node 'roi_" not in out or
                                     "region of interest" not in out):
            failures.append(f"compiled: the error does not name the node "
                            f"and the region: {out}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    model, outputs = build_model()
    path = os.path.join(args.work, "model.onnx")
    onnx.save(model, path)
    rng = np.random.default_rng(20)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x[0, 1, :] = 0.5          # ties for argmax/argmin
    x[2, 3, 2] = np.nan       # NaN wins argmax, and argmin
    # Scatter indices along the last axis: duplicates (1 and -4 are one
    # position), negative ones, and one landing on x's NaN.
    sidx = rng.integers(-5, 5, (3, 4, 2)).astype(np.int64)
    sidx[0, 0, :] = [1, -4]
    sidx[2, 3, 0] = 2
    upd = rng.standard_normal((3, 4, 2)).astype(np.float32)
    upd[1, 2, 1] = np.nan
    # Sampling points inside and outside the image, a NaN coordinate, and
    # ties for nearest: x = 0.2 is pixel 2.5 of 5 (align_corners 0).
    grid = rng.uniform(-1.6, 1.6, (2, 3, 4, 2)).astype(np.float32)
    grid[0, 0, 0] = [0.2, 0.0]
    grid[0, 0, 1] = [np.nan, 0.5]
    grid[1, 2, 3] = [-1.0, 1.0]
    xd = rng.standard_normal((1, 2, 5, 5))
    xd[0, 1, 2, 2] = np.nan   # a NaN wins the max pooling of its windows
    feeds = {"x": x, "q": rng.integers(-128, 128, (3, 4, 5)).astype(np.int8),
             "picks": rng.integers(-5, 5, (3, 4, 2)).astype(np.int64),
             "k": np.array(2, np.int64), "sidx": sidx, "upd": upd,
             "axis_rt": np.array(-2, np.int64),
             "axis_rt32": np.array([2], np.int32),
             "qu": rng.choice(np.array([0, 1, 2, 255], np.uint8), (3, 4, 5)),
             "qupd": rng.integers(-128, 128, (3, 4, 2)).astype(np.int8),
             # Tuples of (row, column) with a duplicate: (0, 1) twice.
             "nidx": np.array([[0, 1], [-3, 1], [2, -1]], np.int64),
             "nupd": rng.standard_normal((3, 5)).astype(np.float32),
             "gidx": np.array([[[3], [-4]], [[0], [-1]], [[2], [2]]], np.int32),
             "img": rng.standard_normal((2, 3, 4, 5)).astype(np.float32),
             "grid": grid,
             "vol": rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32),
             "xd": xd,
             "vgrid": rng.uniform(-1.3, 1.3, (1, 2, 3, 2, 3)).astype(np.float32)}
    feeds.update(signal_image_feeds(rng))
    inputs = []
    for name, value in feeds.items():
        f = os.path.join(args.work, name + ".npy")
        np.save(f, value)
        inputs += ["-i", f"{name}={f}"]
    pkg = os.path.join(args.work, "pkg")
    log = run([args.kiln, "compile", path, "--target", "cpu", "-o", pkg])
    if "0 fallback ops" not in log:
        sys.exit(f"FAIL: the package calls reference kernels:\n{log}")
    ref, got = os.path.join(args.work, "ref"), os.path.join(args.work, "out")
    run([args.kiln, "run", path, "-o", ref] + inputs)
    run([args.kiln, "run", pkg, "-o", got] + inputs)
    bad = []
    for o in outputs:
        want = np.load(os.path.join(ref, o + ".npy"))
        have = np.load(os.path.join(got, o + ".npy"))
        if want.dtype != have.dtype or want.shape != have.shape or \
                not np.array_equal(want, have, equal_nan=want.dtype.kind == "f"):
            bad.append(f"{o}: compiled {have.ravel()[:6]} vs reference "
                       f"{want.ravel()[:6]}")
    # The reference itself against NumPy, for the plain sums.
    if not np.allclose(np.load(os.path.join(ref, "cumsum.npy")),
                       np.cumsum(x, axis=1), equal_nan=True, atol=1e-6):
        bad.append("cumsum: the reference differs from numpy.cumsum")
    bad += check_bad_index(args, path, pkg, inputs, feeds)
    bad += check_bad_axis(args, path, pkg, inputs)
    bad += check_bad_region(args, path, pkg, inputs, feeds)
    for b in bad:
        print("FAIL " + b)
    print(f"cpu op kernels: {len(outputs) - len(bad)} of {len(outputs)} "
          f"outputs bit-identical to the reference runtime")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
