//===- TensorFiles.h - Tensor files the CLI reads and writes ---*- C++ -*-===//
//
// This file declares how `kiln run` reads input tensors and writes outputs:
// NumPy .npy files and serialized ONNX TensorProto .pb files, chosen by the
// file extension.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_TENSORFILES_H
#define KILN_TOOLS_TENSORFILES_H

#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <string>
#include <vector>

namespace kiln {

/// Reads a .npy or .pb tensor file.
Expected<Tensor> readTensorFile(const std::string &path);
/// Writes a .npy or .pb tensor file (to a temporary name, then renamed).
Status writeTensorFile(const std::string &path, const Tensor &tensor,
                       const std::string &name);

/// Reads the `--input` arguments of a command: NAME=FILE binds an input by
/// name, a bare FILE binds the next input of `signature` in order.
Expected<NamedTensors>
readInputArguments(const std::vector<ValueSignature> &signature,
                   const std::vector<std::string> &args);

} // namespace kiln

#endif // KILN_TOOLS_TENSORFILES_H
