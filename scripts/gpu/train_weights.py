#!/usr/bin/env python3
# ===- train_weights.py - A models.py model's initial weights as safetensors -=== #
#
# Runs on the GPU machine (PyTorch there): writes the parameters of
# models.py's NAME (torch.manual_seed(0), as `models.py export` and
# `train-ref` make them) to OUT.safetensors under the ONNX initializer names
# ("model.fc1.weight"), for a training package compiled from the graph
# alone (`kiln compile --train` of ../shared/bench/train/NAME.onnx, whose
# weights are not in the repository): kiln-runner --load-weights OUT.
#
# Usage: train_weights.py MODELS_PY_DIR NAME OUT.safetensors
# ===------------------------------------------------------------------------=== #
import json
import struct
import sys

sys.path.insert(0, sys.argv[1])
import models  # noqa: E402

model, _ = models.build(sys.argv[2])
tensors = {"model." + n: p.detach().float().cpu().contiguous().numpy()
           for n, p in model.named_parameters()}
header, offset, blobs = {}, 0, []
for name, a in tensors.items():
    blob = a.tobytes()
    header[name] = {"dtype": "F32", "shape": list(a.shape),
                    "data_offsets": [offset, offset + len(blob)]}
    offset += len(blob)
    blobs.append(blob)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(sys.argv[3], "wb") as f:
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for blob in blobs:
        f.write(blob)
print(json.dumps({"model": sys.argv[2], "parameters": len(tensors),
                  "bytes": offset}))
