#!/usr/bin/env python3
"""Exports CPU-sized versions of the bench models (../shared/bench/models.py).

The bench models are defined once, in PyTorch, in ../shared/bench/models.py,
at GPU sizes. This script imports that file, keeps each model's definition
and seed, and exports it with CPU-sized inputs (opset 18, the dynamo
exporter, weights as external data, which are not kept: the CPU benchmark
binds seeded random weights, identical for Kiln and ONNX Runtime).

  python3 export_cpu_models.py --models-py ../shared/bench/models.py OUTDIR [NAME...]

Besides the five bench graphs it exports the model families users bring, at
sizes for two cores: mobilenet_v2 and efficientnet_b0 (depthwise
convolutions, SiLU, squeeze-excite), vit_small (a transformer) and
gru_tagger (embedding + 2-layer GRU + classifier, integer token inputs), and
lstm_tagger, defined here (below), since only the CPU benchmark runs it.

Needs PyTorch (and torchvision for resnet50, the CNNs and vit_small); run it
where they are installed (a venv outside the repository will do). The
graphs it wrote are checked in under bench/cpu-graphs/.
"""
import argparse
import importlib.util
import json
import os

# A shape, or ("tokens", shape, vocabulary size) for integer token ids (as
# models.py's MODELS).
CPU_SHAPES = {
    "mlp": [(8, 1024)],
    "ln_gelu": [(1024, 4096), (1024, 4096)],
    "softmax": [(1024, 4096)],
    "gpt2_block": [(1, 128, 768)],
    "resnet50": [(1, 3, 224, 224)],
    "mobilenet_v2": [(2, 3, 224, 224)],
    "efficientnet_b0": [(1, 3, 224, 224)],
    "vit_small": [(1, 3, 224, 224)],
    "gru_tagger": [("tokens", (4, 32), 1000)],
    "lstm_tagger": [("tokens", (4, 32), 1000)],
}


def lstm_tagger_class():
    """The LSTM tagger: models.py's GRUTagger with nn.LSTM in place of nn.GRU.

    Defined here, not in ../shared/bench/models.py, because only the CPU
    benchmark runs it (the CPU's LSTM path next to gru_tagger's GRU).
    """
    import torch.nn as nn

    class LSTMTagger(nn.Module):
        """Token tagger: embedding, 2-layer LSTM, per-token classifier."""

        def __init__(self, vocab=1000, d=128, h=256, tags=50):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.lstm = nn.LSTM(d, h, num_layers=2, batch_first=True)
            self.out = nn.Linear(h, tags)

        def forward(self, tokens):
            y, _ = self.lstm(self.emb(tokens))
            return self.out(y)

    return LSTMTagger


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models-py", required=True)
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*", help="models to export (default: all)")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("bench_models", args.models_py)
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    import torch

    os.makedirs(args.outdir, exist_ok=True)
    for name in args.names or list(CPU_SHAPES):
        shapes = CPU_SHAPES[name]
        ctor = (lstm_tagger_class() if name == "lstm_tagger"
                else models.MODELS[name][0])
        torch.manual_seed(0)
        model = ctor().eval()
        gen = torch.Generator().manual_seed(1)
        inputs = tuple(torch.randint(0, s[2], s[1], generator=gen)
                       if s[0] == "tokens" else torch.randn(*s, generator=gen)
                       for s in shapes)
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
