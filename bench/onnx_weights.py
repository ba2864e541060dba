"""Binds seeded random weights to ONNX graphs whose weights are absent.

The bench graphs (exported by PyTorch, weights as ONNX external data) ship
without their data files. materialize() copies a graph into a folder with
random weights for its external initializers (inline constants such as
shapes keep their values), saved as external data next to it, so Kiln and
ONNX Runtime run the very same model.
"""
import os

import numpy as np
import onnx
from onnx import numpy_helper


def materialize(model_path, workdir, rng):
    """Writes workdir/<name>.onnx (+ .data) with random weights; returns its path."""
    model = onnx.load(model_path, load_external_data=False)
    for init in model.graph.initializer:
        if init.data_location != onnx.TensorProto.EXTERNAL:
            continue  # inline constants (shapes, scalars) keep their values
        dtype = onnx.helper.tensor_dtype_to_np_dtype(init.data_type)
        shape = tuple(init.dims)
        if np.issubdtype(dtype, np.floating):
            fan_in = shape[-1] if len(shape) > 1 else max(shape[0] if shape else 1, 1)
            if len(shape) == 4:
                fan_in = shape[1] * shape[2] * shape[3]
            data = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(dtype)
        elif dtype == np.bool_:
            # Boolean initializers of the exported models are masks built from
            # torch.ones (e.g. the causal mask's `ones`); random masks would
            # mask whole attention rows and make them NaN.
            data = np.ones(shape, np.bool_)
        else:
            data = rng.integers(0, 4, shape).astype(dtype)
        init.CopyFrom(numpy_helper.from_array(data, init.name))
    out = os.path.join(workdir, os.path.basename(model_path))
    onnx.save_model(model, out, save_as_external_data=True,
                    location=os.path.basename(model_path) + ".data",
                    size_threshold=1024)
    return out


def vocabulary_size(model_path, input_name):
    """The rows of the table an integer input indexes (token ids: the data of
    the Gather that reads it, an embedding's weight), or None."""
    model = onnx.load(model_path, load_external_data=False)
    rows = {i.name: i.dims[0] for i in model.graph.initializer if i.dims}
    for node in model.graph.node:
        if node.op_type == "Gather" and node.input[1] == input_name:
            return rows.get(node.input[0])
    return None


def random_inputs(session, rng, model_path=None):
    """Seeded inputs for every input of an ONNX Runtime session: float32 for
    float inputs; for integer inputs (token ids) integers below the size of
    the table they index (found in `model_path`'s graph; else 0 and 1)."""
    feeds = {}
    for inp in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in inp.shape]
        if inp.type in ("tensor(int64)", "tensor(int32)"):
            rows = (vocabulary_size(model_path, inp.name) if model_path
                    else None) or 2
            dtype = np.int64 if inp.type == "tensor(int64)" else np.int32
            feeds[inp.name] = rng.integers(0, rows, shape).astype(dtype)
        else:
            feeds[inp.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds
