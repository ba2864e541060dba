#!/usr/bin/env python3
"""RoiAlign, DeformConv, STFT and Unique on random inputs agree with ONNX's
reference implementation (onnx.reference.ReferenceEvaluator).

The ONNX node tests of these operators use few shapes and attribute values;
each case here is one node with attributes the node tests leave out (both
RoiAlign modes with and without adaptive sampling and a spatial scale,
regions partly outside the image; DeformConv with groups, offset groups,
strides, dilations and asymmetric pads; a complex two-sided STFT with
frame_length and a real one with a Hann window; Unique along an axis of a
3-D tensor, sorted and not). Kiln runs it on the reference runtime
(`kiln run MODEL`); outputs must have the reference's shape and agree within
rtol 1e-4, atol 1e-5. RoiAlign-10 has no coordinate_transformation_mode: its
regions are ONNX's legacy "output_half_pixel" ones, so it is compared with
the reference evaluated with that mode (the evaluator applies RoiAlign-16's
default to every version).

  new_ops_vs_onnx_reference.py --kiln build/bin/kiln --work DIR

Exit status 1 when a case fails; each failure is printed.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator


def make_model(node, inputs, opset):
    ins = [helper.make_tensor_value_info(
        k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for k, v in inputs.items()]
    outs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
            for o in node.output]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m


def run_case(args, name, node, inputs, opset, reference_model=None):
    """Runs one node on Kiln's reference runtime and on ONNX's reference;
    returns an error message, or None."""
    model = make_model(node, inputs, opset)
    path = os.path.join(args.work, name + ".onnx")
    onnx.save(model, path)
    cmd = [args.kiln, "run", path, "-o", os.path.join(args.work, name)]
    for k, v in inputs.items():
        npy = os.path.join(args.work, f"{name}_{k}.npy")
        np.save(npy, v)
        cmd += ["-i", f"{k}={npy}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return f"{' '.join(cmd)}: {r.stderr.strip()}"
    want = ReferenceEvaluator(reference_model or model).run(None, inputs)
    for out, w in zip(node.output, want):
        got = np.load(os.path.join(args.work, name, out + ".npy"))
        if got.shape != w.shape or got.dtype != w.dtype:
            return f"{out}: {got.dtype}{list(got.shape)}, want " \
                   f"{w.dtype}{list(w.shape)}"
        if not np.allclose(got, w, rtol=1e-4, atol=1e-5):
            return f"{out}: max difference {np.abs(got - w).max()}"
    return None


def cases(rng):
    """(name, node, inputs, opset, reference model or None) of every case."""
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    rois = np.array([[0.5, 1, 6, 7], [2, 2, 3, 3.5], [-1, -2, 20, 15],
                     [4, 4, 4.2, 4.1]], np.float32)
    roi_in = dict(x=x, rois=rois, bi=np.array([0, 1, 1, 0], np.int64))
    for opset in (10, 16):
        for mode in ("avg", "max"):
            for ratio in (0, 2):
                attrs = dict(mode=mode, output_height=3, output_width=4,
                             sampling_ratio=ratio, spatial_scale=0.8)
                node = helper.make_node("RoiAlign", ["x", "rois", "bi"],
                                        ["y"], **attrs)
                ref = None
                if opset == 10:
                    ref = make_model(helper.make_node(
                        "RoiAlign", ["x", "rois", "bi"], ["y"], **attrs,
                        coordinate_transformation_mode="output_half_pixel"),
                        roi_in, 16)
                yield f"roi_align{opset}_{mode}_{ratio}", node, roi_in, \
                    opset, ref
    n, c, h, w, m, kh, kw = 2, 4, 7, 8, 6, 3, 2
    strides, dil, pads = [2, 1], [2, 1], [1, 0, 2, 1]
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) // strides[1] + 1
    dc_in = dict(
        X=rng.standard_normal((n, c, h, w)).astype(np.float32),
        W=rng.standard_normal((m, c // 2, kh, kw)).astype(np.float32),
        off=(rng.standard_normal((n, 2 * kh * kw * 2, oh, ow)) * 1.5)
        .astype(np.float32),
        B=rng.standard_normal(m).astype(np.float32),
        mask=rng.uniform(size=(n, 2 * kh * kw, oh, ow)).astype(np.float32))
    yield "deform_conv", helper.make_node(
        "DeformConv", ["X", "W", "off", "B", "mask"], ["y"], group=2,
        offset_group=2, strides=strides, dilations=dil, pads=pads), \
        dc_in, 19, None
    yield "stft_complex", helper.make_node(
        "STFT", ["sig", "step", "", "fl"], ["y"], onesided=0), dict(
        sig=rng.standard_normal((2, 40, 2)).astype(np.float32),
        step=np.array(5, np.int64), fl=np.array(12, np.int64)), 17, None
    yield "stft_window", helper.make_node(
        "STFT", ["sig", "step", "win"], ["y"]), dict(
        sig=rng.standard_normal((1, 33, 1)).astype(np.float32),
        step=np.array(3, np.int64),
        win=np.hanning(10).astype(np.float32)), 17, None
    u = rng.integers(0, 2, (2, 5, 3)).astype(np.int64)
    yield "unique_axis", helper.make_node(
        "Unique", ["u"], ["y", "i", "inv", "c"], axis=1, sorted=1), \
        dict(u=u), 11, None
    yield "unique_unsorted", helper.make_node(
        "Unique", ["u"], ["y", "i", "inv", "c"], sorted=0), \
        dict(u=rng.integers(0, 5, 12).astype(np.int64)), 11, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    for name, node, inputs, opset, ref in cases(np.random.default_rng(0)):
        error = run_case(args, name, node, inputs, opset, ref)
        print(f"{name}: {'ok' if error is None else 'FAILED: ' + error}")
        failures += error is not None
    print(f"{failures} of the cases failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
