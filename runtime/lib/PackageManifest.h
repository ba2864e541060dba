//===- PackageManifest.h - The manifest.json of a Kiln package -*- C++ -*-===//
//
// This file declares the part of a package's manifest.json that the loader
// reads: the optional ABI version, the signature (inputs and outputs) and
// the weights with where their bytes live. Everything else in the manifest
// (kernels, memory plan, options, versions) is for people and tools.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_PACKAGEMANIFEST_H
#define KILN_RUNTIME_LIB_PACKAGEMANIFEST_H

#include "kiln/runtime/DType.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// An input or output as the manifest declares it.
struct ManifestValue {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
};

/// A weight and the location of its bytes.
struct ManifestWeight {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  /// File holding the bytes ("weights.bin", an ONNX external-data file, or
  /// an absolute path); empty when the package carries no data for it (the
  /// caller must bind it through LoadOptions::weights).
  std::string file;
  /// True for data outside the package proper (ONNX external data): looked
  /// up in LoadOptions::weightsDir, the package folder, then the folder of
  /// the source model.
  bool external = false;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// What the loader needs from manifest.json.
struct PackageManifest {
  /// "program" for a package with graph breaks (program.json, graphs/);
  /// empty for one graph (model.so).
  std::string kind;
  std::optional<int64_t> abiVersion;
  /// The model the package was compiled from ("source"), or empty.
  std::string source;
  /// The instruction-set level model.so was compiled for ("isa", e.g.
  /// "x86-64-v3"), or empty.
  std::string isa;
  /// The code target ("target": "cpu" or "cuda"), or empty (a CPU package
  /// unless model.so's kiln_model_target says otherwise).
  std::string target;
  /// The package's library and fallback steps ("counts"), when given: the
  /// steps that call the runtime (OpenBLAS GEMMs, reference kernels) rather
  /// than generated kernels.
  std::optional<int64_t> libraryOrFallbackSteps;
  bool hasSignature = false;
  std::vector<ManifestValue> inputs;
  std::vector<ManifestValue> outputs;
  std::vector<ManifestWeight> weights;
};

/// Reads and checks `path` (a manifest.json). Errors name the file and the
/// entry ("weights[3] ('conv1.weight'): ...").
Expected<PackageManifest> readManifest(const std::string &path);

} // namespace kiln

#endif // KILN_RUNTIME_LIB_PACKAGEMANIFEST_H
