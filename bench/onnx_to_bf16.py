"""Makes the bfloat16 variant of a float32 benchmark graph, for the GPU benchmark.

  python3 onnx_to_bf16.py IN.onnx OUT.onnx

The graph's float inputs, outputs, Cast targets, Constant and ConstantOfShape
values become bfloat16. Initializers keep their float32 external data (so the
package binds the same NAME.onnx.data that `models.py export` writes) and are
cast to bfloat16 by a Cast node (`W__f32` -> `W`), which Kiln runs once, when
the package loads (kiln-mark-load-time: a step that reads only weights), so a
run reads the bf16 weights only, as PyTorch's bf16 model does. Only the graph
is read and written (external data is not loaded).
"""
import sys

import onnx
from onnx import TensorProto, helper, numpy_helper


def to_bf16_tensor(t):
    arr = numpy_helper.to_array(t).astype("float32")
    return helper.make_tensor(t.name, TensorProto.BFLOAT16, arr.shape, arr.flatten().tolist())


def convert(model):
    g = model.graph
    FLOAT, BF16 = TensorProto.FLOAT, TensorProto.BFLOAT16
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == FLOAT:
            v.type.tensor_type.elem_type = BF16
    del g.value_info[:]
    casts = []
    for t in g.initializer:
        if t.data_type == FLOAT:
            name = t.name
            t.name = name + "__f32"
            casts.append(helper.make_node("Cast", [t.name], [name], name="to_bf16_" + name, to=BF16))
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == FLOAT:
                a.i = BF16
            if n.op_type in ("Constant", "ConstantOfShape") and a.name == "value" and a.t.data_type == FLOAT:
                a.t.CopyFrom(to_bf16_tensor(a.t))
            if n.op_type == "Constant" and a.name == "value_float":
                a.CopyFrom(helper.make_attribute("value", helper.make_tensor("", BF16, [], [a.f])))
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1], load_external_data=False)
    onnx.save(convert(model), sys.argv[2])


if __name__ == "__main__":
    main()
