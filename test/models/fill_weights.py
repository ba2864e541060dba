#!/usr/bin/env python3
"""Fill weights: a model whose weights are constant fills stays small.

Builds a small VGG-like ONNX model whose convolution and classifier weights
come from ConstantOfShape nodes and a splat Constant (the ONNX file is about
150 KB, the Constant's elements written out; the dense weights 4.7 MB), compiles it (`kiln compile`) and checks
that the package stores those weights as fills: manifest.json records each
one's element ("fill"), weights.bin stays under 64 KB. Then:

  * `kiln run PKG` agrees with ONNX Runtime (the loader materialises the
    fills);
  * with --runtime-lib, a C++ program built against the package's header
    creates the model with createFromWeightsFileAndFills and agrees too;
  * a manifest whose fill is damaged (too short, not hex) is refused with a
    message naming the manifest, the weight and what is wrong.

With --target cuda only the compile and the manifest are checked (no GPU
needed; run the package on a GPU with `kiln run PKG`).

  fill_weights.py --kiln build/bin/kiln --work DIR [--target cpu|cuda]
                  [--runtime-lib DIR --runtime-include DIR [--cxx c++]]

Exit status 1 when a check fails; each failure is printed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def fill(name, shape, value):
    """ConstantOfShape(shape) with `value`: (nodes, initializers)."""
    shape_name = name + "_shape"
    return ([helper.make_node(
        "ConstantOfShape", [shape_name], [name],
        value=helper.make_tensor("v", F, [1], [value]))],
        [numpy_helper.from_array(np.array(shape, np.int64), shape_name)])


def build_model():
    """A VGG-like network: 3 blocks of 3x3 convolutions (ReLU, max pool),
    then a classifier; every convolution and classifier weight a fill."""
    nodes, inits = [], []
    x, channels = "x", 3
    layer = 0
    for block, (width, convs) in enumerate([(64, 2), (128, 2), (256, 2)]):
        for _ in range(convs):
            w, b = f"conv{layer}.weight", f"conv{layer}.bias"
            if layer == 1:
                # A splat Constant node (every element written out in the
                # ONNX file) instead of ConstantOfShape.
                value = np.full((width, channels, 3, 3),
                                1.0 / (channels * 9), np.float32)
                nodes.append(helper.make_node(
                    "Constant", [], [w],
                    value=numpy_helper.from_array(value, w + "_value")))
            else:
                n, i = fill(w, [width, channels, 3, 3], 1.0 / (channels * 9))
                nodes += n
                inits += i
            n, i = fill(b, [width], 0.01 * (layer + 1))
            nodes += n
            inits += i
            nodes.append(helper.make_node("Conv", [x, w, b], [f"c{layer}"],
                                          pads=[1, 1, 1, 1]))
            nodes.append(helper.make_node("Relu", [f"c{layer}"],
                                          [f"r{layer}"]))
            x, channels = f"r{layer}", width
            layer += 1
        nodes.append(helper.make_node("MaxPool", [x], [f"p{block}"],
                                      kernel_shape=[2, 2], strides=[2, 2]))
        x = f"p{block}"
    nodes.append(helper.make_node("Flatten", [x], ["flat"], axis=1))
    n, i = fill("fc.weight", [256 * 4 * 4, 10], 1.0 / 4096)
    nodes += n
    inits += i
    # A small real weight: stays in weights.bin.
    rng = np.random.default_rng(7)
    inits.append(numpy_helper.from_array(
        rng.standard_normal(10).astype(np.float32), "fc.bias"))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"],
                                  ["y"]))
    g = helper.make_graph(
        nodes, "fill_vgg",
        [helper.make_tensor_value_info("x", F, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", F, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


CPP_MAIN = r"""
// Creates the model from weights.bin with createFromWeightsFileAndFills and
// runs it once: argv = PKG input.bin output.bin.
#include "PACKAGE.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  std::string pkg = argv[1];
  std::ifstream in(pkg + "/weights.bin", std::ios::binary);
  std::vector<char> file((std::istreambuf_iterator<char>(in)), {});
  size_t fileBytes = (file.size() + 63) / 64 * 64 + 64;
  void *weights = std::aligned_alloc(64, fileBytes);
  std::copy(file.begin(), file.end(), static_cast<char *>(weights));
  void *fills = std::aligned_alloc(64, NS::kFillStorageBytes + 64);
  char err[1024] = {0};
  kiln_model *model = nullptr;
  // Without the fills the model cannot be created: the create entry names
  // an unbound weight.
  if (NS::kNumFillWeights > 0 &&
      NS::createFromWeightsFile(weights, &model, err, sizeof err) == 0) {
    std::fprintf(stderr, "createFromWeightsFile bound fill weights\n");
    return 1;
  }
  std::printf("createFromWeightsFile: %s\n", err);
  if (NS::createFromWeightsFileAndFills(weights, fills, &model, err,
                                        sizeof err)) {
    std::fprintf(stderr, "create: %s\n", err);
    return 1;
  }
  std::vector<float> x(NS::kInputNumel_x), y(NS::kOutputNumel_y);
  std::ifstream xin(argv[2], std::ios::binary);
  xin.read(reinterpret_cast<char *>(x.data()), x.size() * sizeof(float));
  void *arena = std::aligned_alloc(64, NS::kArenaBytes + 64);
  NS::Inputs inputs;
  inputs.x = x.data();
  NS::Outputs outputs;
  outputs.y = y.data();
  if (NS::run(model, inputs, outputs, arena, err, sizeof err)) {
    std::fprintf(stderr, "run: %s\n", err);
    return 1;
  }
  std::ofstream(argv[3], std::ios::binary)
      .write(reinterpret_cast<const char *>(y.data()), y.size() * sizeof(float));
  PACKAGE_destroy(model);
  std::free(arena);
  std::free(fills);
  std::free(weights);
  return 0;
}
"""


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--runtime-lib", help="folder of libkiln_runtime.so")
    ap.add_argument("--runtime-include", help="the runtime's include folder")
    ap.add_argument("--cxx", default="c++")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    failures = []

    def expect(ok, what):
        print(f"{'ok' if ok else 'FAIL'}: {what}")
        if not ok:
            failures.append(what)
        return ok

    path = os.path.join(args.work, "fill_vgg.onnx")
    onnx.save(build_model(), path)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(
        np.float32)
    x_path = os.path.join(args.work, "x.npy")
    np.save(x_path, x)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})[0]

    pkg = os.path.join(args.work, "pkg")
    rc, log = run([args.kiln, "compile", path, "--target", args.target,
                   "-o", pkg])
    if not expect(rc == 0, f"kiln compile --target {args.target}"):
        print(log)
        return 1
    with open(os.path.join(pkg, "manifest.json")) as f:
        manifest = json.load(f)
    fills = [w for w in manifest["weights"] if "fill" in w]
    fill_bytes = sum(w["bytes"] for w in fills)
    bin_bytes = os.path.getsize(os.path.join(pkg, "weights.bin"))
    print(f"{len(fills)} fill weights ({fill_bytes} bytes dense), "
          f"weights.bin {bin_bytes} bytes, "
          f"model {os.path.getsize(path)} bytes")
    expect(fill_bytes > 4_000_000, "the fills hold the dense weights (> 4 MB)")
    expect(bin_bytes < 64 * 1024, "weights.bin is under 64 KB")
    expect(manifest.get("format_version") == 2,
           "a manifest with fills says format_version 2")
    expect(all("file" not in w and "external" not in w and
               re.fullmatch(r"[0-9a-f]{8}", w["fill"]) for w in fills),
           "each fill is one f32 element in hex, without a file")
    name = manifest["symbol_prefix"]
    header = open(os.path.join(pkg, name + ".h")).read()
    expect(f"constexpr int kNumFillWeights = {len(fills)};" in header,
           "the package header lists the fill weights")
    if args.target != "cpu":
        return report(failures)

    out = os.path.join(args.work, "out")
    rc, log = run([args.kiln, "run", pkg, "--input", f"x={x_path}",
                   "-o", out])
    if expect(rc == 0, "kiln run PKG"):
        got = np.load(os.path.join(out, "y.npy"))
        ok = np.allclose(got, want, rtol=1e-4, atol=1e-5)
        expect(ok, "kiln run PKG agrees with ONNX Runtime")
        if not ok:
            print(f"  kiln: {got.ravel()}\n  ort:  {want.ravel()}")
    else:
        print(log)

    if args.runtime_lib:
        main_cpp = os.path.join(args.work, "main.cpp")
        with open(main_cpp, "w") as f:
            f.write(CPP_MAIN.replace("NS::", name + "::")
                    .replace("PACKAGE", name))
        exe = os.path.join(args.work, "from_header")
        rc, log = run([args.cxx, "-std=c++17", "-O2", "-I", pkg, "-I",
                       args.runtime_include, main_cpp,
                       "-L", pkg, "-l" + name, "-L", args.runtime_lib,
                       "-lkiln_runtime", "-Wl,-rpath," + args.runtime_lib,
                       "-Wl,-rpath," + pkg, "-o", exe])
        if expect(rc == 0, "a program using the package header builds"):
            x.tofile(os.path.join(args.work, "x.bin"))
            y_bin = os.path.join(args.work, "y.bin")
            rc, log = run([exe, pkg, os.path.join(args.work, "x.bin"), y_bin])
            print(log.strip())
            if expect(rc == 0, "createFromWeightsFileAndFills and run"):
                got = np.fromfile(y_bin, np.float32).reshape(want.shape)
                expect(np.allclose(got, want, rtol=1e-4, atol=1e-5),
                       "the header's fills agree with ONNX Runtime")
        else:
            print(log)

    # A damaged fill is refused, naming the manifest and the weight.
    name = fills[0]["name"]
    for bad, message in [
            ("0000", f"'fill' must be the bytes of one f32 element as 8 hex "
                     f"digits, not \"0000\""),
            ("0000zz3f", "as 8 hex digits, not \"0000zz3f\""),
            (1.5, "'fill' must be the bytes of one f32 element")]:
        bad_pkg = os.path.join(args.work, "bad")
        shutil.rmtree(bad_pkg, ignore_errors=True)
        shutil.copytree(pkg, bad_pkg)
        damaged = json.loads(json.dumps(manifest))
        for w in damaged["weights"]:
            if w["name"] == name:
                w["fill"] = bad
        with open(os.path.join(bad_pkg, "manifest.json"), "w") as f:
            json.dump(damaged, f, indent=2)
        rc, log = run([args.kiln, "run", bad_pkg, "--input", f"x={x_path}",
                       "-o", os.path.join(args.work, "bad_out")])
        ok = (rc != 0 and message in log and "manifest.json" in log and
              f"'{name}'" in log)
        expect(ok, f"a fill of {bad!r} is refused with a clear message")
        if not ok:
            print(log)
    return report(failures)


def report(failures):
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    print("fill weights: all checks pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
