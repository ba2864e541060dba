"""Rewrites an ONNX model's input dims into named dynamic dims, for
compiling one package for a range of sizes (docs/dynamic-shapes.md):

  python3 bench/dynamic_dims.py IN.onnx OUT.onnx [--dim AXIS=NAME]...

Each --dim (default 0=batch) names that axis of every graph input and
output whose size there equals the first input's; intermediate shapes
(value_info) are dropped so that the tracer infers them. A Reshape whose
constant target shape has the traced size at that axis (an exporter baked
the batch in) gets 0 there instead ("copy the input's size"; allowzero is
dropped where the target has no zeros, else -1 infers it), so the graph
reshapes any batch; an Expand target with a named non-batch size baked in
(a causal mask for the traced sequence length) takes it from the first
input's shape. This holds for the axes before any reshape that moves
them (the bench graphs' leading batch and sequence axes). Weights stay where they are (external data is
referenced, not copied). The result is checked by running it: compare the
package at several sizes with the reference runtime.
"""
import argparse

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--dim", action="append", default=[],
                   help="AXIS=NAME, e.g. 0=batch (default) or 1=seq")
    args = p.parse_args()
    dims = [d.split("=", 1) for d in (args.dim or ["0=batch"])]
    model = onnx.load(args.model, load_external_data=False)
    g = model.graph
    inits = {i.name for i in g.initializer}
    inputs = [i for i in g.input if i.name not in inits]
    first = inputs[0].type.tensor_type.shape.dim
    first_sizes = [d.dim_value for d in first]
    for axis, name in dims:
        axis = int(axis)
        size = first[axis].dim_value
        for v in list(inputs) + list(g.output):
            shape = v.type.tensor_type.shape.dim
            if axis < len(shape) and shape[axis].dim_value == size:
                shape[axis].Clear()
                shape[axis].dim_param = name
    del g.value_info[:]
    # Reshape targets with the traced size baked in: 0 copies the input's.
    shapes = {i.name: i for i in g.initializer}
    for node in g.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    shapes[node.output[0]] = a.t
    reshapes = [n for n in g.node
                if n.op_type == "Reshape" and n.input[1] in shapes]

    def allowzero(node):
        return any(a.name == "allowzero" and a.i for a in node.attribute)

    # Without literal zeros in its target allowzero changes nothing: drop
    # it, so that 0 can copy sizes.
    for node in reshapes:
        if allowzero(node) and 0 not in numpy_helper.to_array(shapes[node.input[1]]):
            for a in node.attribute:
                if a.name == "allowzero":
                    a.i = 0
    # Each target once (Reshapes may share one): 0 where every user copies
    # zeros, else -1 (inferred) when the target has none.
    done = set()
    for node in reshapes:
        name = node.input[1]
        if name in done:
            continue
        done.add(name)
        users = [n for n in reshapes if n.input[1] == name]
        literal_zeros = any(allowzero(n) for n in users)
        t = shapes[name]
        target = numpy_helper.to_array(t).copy()
        for axis, _ in dims:
            axis = int(axis)
            if axis < len(target) and target[axis] == first_sizes[axis]:
                if not literal_zeros:
                    target[axis] = 0
                elif -1 not in target:
                    target[axis] = -1
        t.CopyFrom(numpy_helper.from_array(target, t.name))
    expand_to_input_sizes(g, shapes, inputs[0].name,
                          {int(a): first_sizes[int(a)] for a, _ in dims if int(a) != 0})
    onnx.save(model, args.out)


def expand_to_input_sizes(g, shapes, first, sizes):
    """Expand targets with a named non-batch size baked in (a causal mask
    built as Trilu(Expand(true, [T, T])) for the traced T) take that size
    from the first input's shape instead, as an export with a dynamic
    sequence length has it: Concat of Shape(first)[axis:axis+1] and the
    target's other entries."""
    if not sizes:
        return
    pieces = {}
    for node in list(g.node):
        if node.op_type != "Expand" or node.input[1] not in shapes:
            continue
        target = numpy_helper.to_array(shapes[node.input[1]])
        if not any(v in sizes.values() for v in target):
            continue
        parts = []
        for k, v in enumerate(target):
            axis = next((a for a, size in sizes.items() if size == v), None)
            if axis is None:
                name = "%s_dyn_%d" % (node.name, k)
                g.initializer.append(numpy_helper.from_array(
                    np.array([v], dtype=np.int64), name))
                parts.append(name)
                continue
            if axis not in pieces:
                pieces[axis] = "dyn_size_%d" % axis
                g.node.insert(0, helper.make_node(
                    "Shape", [first], [pieces[axis]], start=axis, end=axis + 1,
                    name="dyn_size_%d" % axis))
            parts.append(pieces[axis])
        shape_name = node.name + "_dyn_shape"
        g.node.insert(list(g.node).index(node), helper.make_node(
            "Concat", parts, [shape_name], axis=0, name=shape_name))
        node.input[1] = shape_name


if __name__ == "__main__":
    main()
