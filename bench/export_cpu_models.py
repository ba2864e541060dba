#!/usr/bin/env python3
"""Exports CPU-sized versions of the bench models (../shared/bench/models.py).

The bench models are defined once, in PyTorch, in ../shared/bench/models.py,
at GPU sizes. This script imports that file, keeps each model's definition
and seed, and exports it with CPU-sized inputs (opset 18, the dynamo
exporter, weights as external data, which are not kept: the CPU benchmark
binds seeded random weights, identical for Kiln and ONNX Runtime).

  python3 export_cpu_models.py --models-py ../shared/bench/models.py OUTDIR

Needs PyTorch (and torchvision for resnet50); run it where they are installed.
The graphs it wrote are checked in under bench/cpu-graphs/.
"""
import argparse
import importlib.util
import json
import os

CPU_SHAPES = {
    "mlp": [(8, 1024)],
    "ln_gelu": [(1024, 4096), (1024, 4096)],
    "softmax": [(1024, 4096)],
    "gpt2_block": [(1, 128, 768)],
    "resnet50": [(1, 3, 224, 224)],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models-py", required=True)
    ap.add_argument("outdir")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("bench_models", args.models_py)
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    import torch

    os.makedirs(args.outdir, exist_ok=True)
    for name, shapes in CPU_SHAPES.items():
        ctor, _, desc = models.MODELS[name]
        torch.manual_seed(0)
        model = ctor().eval()
        gen = torch.Generator().manual_seed(1)
        inputs = tuple(torch.randn(*s, generator=gen) for s in shapes)
        path = os.path.join(args.outdir, name + ".onnx")
        torch.onnx.export(model, inputs, path, opset_version=18, dynamo=True,
                          external_data=True)
        data = path + ".data"
        if os.path.exists(data):
            os.remove(data)  # weights are bound at benchmark time
        print(json.dumps({"model": name, "shapes": shapes, "onnx": path,
                          "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
