//===- PackageManifestSamples.h - Manifests kiln compile wrote -*- C++ -*-===//
//
// This file holds two manifest.json files as `kiln compile` wrote them with
// the hand-written writers that came before the manifest schema
// (kiln/runtime/PackageManifest.h), for PackageManifestTest.cpp:
//
//   kTinyMlpCpuManifest   `kiln compile examples/tiny_mlp.onnx --dim
//                         batch=4` (codegen/Packager.cpp; the checkout's
//                         path in the host compiler command shortened to
//                         /src/kiln/), byte for byte
//   kNonzeroProgramManifest  `kiln compile nonzero_model.onnx`
//                         (examples/graph_breaks/make_models.py) as
//                         compiler/ProgramPackager.cpp wrote it with
//                         nlohmann::json, keys sorted; "source" shortened
//
// They are strings rather than files so the test needs no path to the
// source tree.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_RUNTIME_PACKAGEMANIFESTSAMPLES_H
#define KILN_TEST_UNIT_RUNTIME_PACKAGEMANIFESTSAMPLES_H

namespace kiln::test {

/// A cpu graph package's manifest.json.
inline constexpr const char *kTinyMlpCpuManifest = R"json({
  "format": "kiln-package",
  "format_version": 1,
  "abi_version": 1,
  "model": "tiny_mlp",
  "source": "examples/tiny_mlp.onnx",
  "target": "cpu",
  "library": "model.so",
  "signature": {
    "inputs": [
      {
        "name": "x",
        "dtype": "f32",
        "shape": [
          4,
          16
        ],
        "bytes": 256
      }
    ],
    "outputs": [
      {
        "name": "y",
        "dtype": "f32",
        "shape": [
          4,
          16
        ],
        "bytes": 256
      }
    ]
  },
  "weights_file": "weights.bin",
  "weights": [
    {
      "name": "ln.weight",
      "dtype": "f32",
      "shape": [
        16
      ],
      "bytes": 64,
      "index": 0,
      "kind": "constant",
      "file": "weights.bin",
      "offset": 0
    },
    {
      "name": "ln.bias",
      "dtype": "f32",
      "shape": [
        16
      ],
      "bytes": 64,
      "index": 1,
      "kind": "constant",
      "file": "weights.bin",
      "offset": 64
    },
    {
      "name": "fc1.weight",
      "dtype": "f32",
      "shape": [
        16,
        32
      ],
      "bytes": 2048,
      "index": 2,
      "kind": "constant",
      "file": "weights.bin",
      "offset": 128
    },
    {
      "name": "fc1.bias",
      "dtype": "f32",
      "shape": [
        32
      ],
      "bytes": 128,
      "index": 3,
      "kind": "constant",
      "file": "weights.bin",
      "offset": 2176
    },
    {
      "name": "fc2.weight",
      "dtype": "f32",
      "shape": [
        32,
        16
      ],
      "bytes": 2048,
      "index": 4,
      "kind": "constant",
      "file": "weights.bin",
      "offset": 2304
    },
    {
      "name": "fc2.bias",
      "dtype": "f32",
      "shape": [
        16
      ],
      "bytes": 64,
      "index": 5,
      "kind": "constant",
      "file": "weights.bin",
      "offset": 4352
    }
  ],
  "kernels": [
    {
      "name": "k0_layer_normalization",
      "kind": "reduction",
      "nodes": [
        "/ln/LayerNormalization"
      ],
      "when": "run"
    },
    {
      "name": "k1_add",
      "kind": "pointwise",
      "nodes": [
        "/fc1/Add",
        "/act/Div",
        "/act/Erf",
        "/act/Add",
        "/act/Mul",
        "/act/Mul_1",
        "sqrt2",
        "one",
        "half"
      ],
      "when": "run"
    },
    {
      "name": "k2_softmax",
      "kind": "reduction",
      "nodes": [
        "/fc2/Add",
        "/Add",
        "/Softmax",
        "/ln/LayerNormalization"
      ],
      "when": "run"
    }
  ],
  "reference_ops": [
    {
      "op": "kiln.matmul",
      "kind": "library",
      "nodes": [
        "/fc1/MatMul"
      ],
      "when": "run"
    },
    {
      "op": "kiln.matmul",
      "kind": "library",
      "nodes": [
        "/fc2/MatMul"
      ],
      "when": "run"
    }
  ],
  "counts": {
    "fused": 3,
    "library": 2,
    "fallback": 0
  },
  "memory_plan": {
    "arena_bytes": 1280,
    "library_workspace": {
      "offset": 0,
      "bytes": 0
    },
    "buffers": [
      {
        "name": "%k0_layer_normalization@6#0",
        "offset": 1024,
        "bytes": 256,
        "first": 6,
        "last": 7
      },
      {
        "name": "%matmul@7#0",
        "offset": 0,
        "bytes": 512,
        "first": 7,
        "last": 8
      },
      {
        "name": "%k1_add@8#0",
        "offset": 512,
        "bytes": 512,
        "first": 7,
        "last": 9
      },
      {
        "name": "%matmul@9#0",
        "offset": 0,
        "bytes": 256,
        "first": 9,
        "last": 10
      }
    ]
  },
  "options": {
    "target": "cpu",
    "weights": "embed",
    "cpu_isa": "x86-64-v4",
    "dims": {
      "batch": 4
    },
    "cxx": "/usr/bin/c++"
  },
  "versions": {
    "kiln": "0.1.0",
    "abi": 1
  },
  "host_compiler": {
    "command": "/usr/bin/c++ -std=c++17 -O3 -march=x86-64-v4 -fno-tree-slp-vectorize -fno-trapping-math -fno-math-errno -fPIC -shared -fvisibility=hidden -Wl,-soname,model.so -I/src/kiln/runtime/include -fopenmp kernels.cpp wrapper.cpp -o model.so",
    "warnings": ""
  },
  "isa": "x86-64-v4",
  "compile_times_s": {
    "trace": 0.001769383,
    "kiln_passes": 0.001314668,
    "codegen": 0.002300541,
    "host_compiler": 1.694356843,
    "nvrtc": 0.0
  }
}
)json";

/// A program package's manifest.json.
inline constexpr const char *kNonzeroProgramManifest = R"json({
  "compile_times_s": {
    "graphs": 2.344732275,
    "trace": 0.001063933
  },
  "counts": {
    "fallback": 0,
    "fused": 2,
    "graph_breaks": 1,
    "graphs": 2,
    "library": 0
  },
  "format": "kiln-package",
  "format_version": 1,
  "graph_breaks": [
    {
      "detail": "output #0 is i64[1, ?]: its size depends on the values of the data",
      "hint": "the size is only known after the op runs (like torch.nonzero); where a fixed size suffices, use a mask with Where, or TopK with a constant k",
      "kiln_op": "kiln.non_zero",
      "kind": "eager",
      "node": "nonzero",
      "op_type": "NonZero",
      "ops": [
        {
          "kiln_op": "kiln.non_zero",
          "node": "nonzero",
          "op_type": "NonZero"
        },
        {
          "kiln_op": "kiln.squeeze",
          "node": "indices",
          "op_type": "Squeeze"
        },
        {
          "kiln_op": "kiln.gather",
          "node": "pick",
          "op_type": "Gather"
        },
        {
          "kiln_op": "kiln.reduce_sum",
          "node": "total",
          "op_type": "ReduceSum"
        }
      ],
      "reason": "data-dependent-shape",
      "where": "main"
    }
  ],
  "graphs": [
    {
      "name": "graph_0",
      "ops": 2,
      "package": "graphs/graph_0",
      "where": "main"
    },
    {
      "name": "graph_1",
      "ops": 2,
      "package": "graphs/graph_1",
      "where": "main"
    }
  ],
  "kind": "program",
  "memory_plan": {
    "arena_bytes": 0
  },
  "program": {
    "data": "program.bin",
    "json": "program.json"
  },
  "signature": {
    "inputs": [
      {
        "dtype": "f32",
        "name": "x",
        "shape": [
          16
        ]
      }
    ],
    "outputs": [
      {
        "dtype": "f32",
        "name": "y",
        "shape": [
          16
        ]
      }
    ]
  },
  "source": "examples/graph_breaks/nonzero_model.onnx",
  "target": "cpu"
}
)json";

} // namespace kiln::test

#endif // KILN_TEST_UNIT_RUNTIME_PACKAGEMANIFESTSAMPLES_H
