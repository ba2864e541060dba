#!/usr/bin/env python3
"""ONNX Runtime's MLAS on the shapes of bench/cpu_gemm_libs.cpp.

One-op ONNX models (MatMul with a constant B plus a bias Add, which ORT
fuses into a Gemm/FusedMatMul; Conv with constant weights), timed in this
process like bench/cpu_gemm_libs.cpp times OpenBLAS and oneDNN: 3 warm-up
runs, the median of the timed runs, in ms.

  bench/cpu_gemm_ort.py --threads 1
"""
import argparse
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def median_ms(sess, feeds, iterations):
    for _ in range(3):
        sess.run(None, feeds)
    t = []
    for _ in range(iterations):
        s = time.perf_counter()
        sess.run(None, feeds)
        t.append((time.perf_counter() - s) * 1e3)
    return float(np.median(t))


def session(nodes, inputs, outputs, inits, threads):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    return ort.InferenceSession(m.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    f = TensorProto.FLOAT
    for m, k, n in [(8, 1024, 4096), (8, 4096, 1024), (128, 768, 2304),
                    (128, 768, 768), (128, 768, 3072), (128, 3072, 768),
                    (128, 64, 128), (1, 2048, 1000)]:
        w = numpy_helper.from_array(np.full((k, n), 0.25, np.float32), "w")
        b = numpy_helper.from_array(np.ones((n,), np.float32), "b")
        sess = session([helper.make_node("MatMul", ["x", "w"], ["t"]),
                        helper.make_node("Add", ["t", "b"], ["y"])],
                       [helper.make_tensor_value_info("x", f, [m, k])],
                       [helper.make_tensor_value_info("y", f, [m, n])],
                       [w, b], args.threads)
        ms = median_ms(sess, {"x": np.full((m, k), 0.5, np.float32)}, 30)
        print(f"gemm {m:5d} x {k:5d} x {n:5d}  onnxruntime {ms:8.3f} ms")
    for c, hw, oc, kernel, stride in [(64, 56, 64, 3, 1), (256, 56, 64, 1, 1),
                                      (256, 14, 256, 3, 1),
                                      (1024, 14, 256, 1, 1),
                                      (3, 224, 64, 7, 2)]:
        pad = kernel // 2
        ohw = (hw + 2 * pad - kernel) // stride + 1
        w = numpy_helper.from_array(
            np.full((oc, c, kernel, kernel), 0.25, np.float32), "w")
        sess = session([helper.make_node("Conv", ["x", "w"], ["y"],
                                         pads=[pad] * 4,
                                         strides=[stride] * 2)],
                       [helper.make_tensor_value_info("x", f, [1, c, hw, hw])],
                       [helper.make_tensor_value_info("y", f,
                                                      [1, oc, ohw, ohw])],
                       [w], args.threads)
        ms = median_ms(sess, {"x": np.full((1, c, hw, hw), 0.5, np.float32)},
                       20)
        print(f"conv {c:4d}x{hw:3d}x{hw:3d} k{kernel} s{stride} -> {oc:4d}  "
              f"onnxruntime {ms:7.3f} ms")


if __name__ == "__main__":
    main()
