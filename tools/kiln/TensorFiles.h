//===- TensorFiles.h - Tensor files the CLI reads and writes ---*- C++ -*-===//
//
// This file declares how `kiln run` reads input tensors and writes outputs:
// NumPy .npy files and serialized ONNX TensorProto .pb files, chosen by the
// file extension.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_TENSORFILES_H
#define KILN_TOOLS_TENSORFILES_H

#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <string>

namespace kiln {

/// Reads a .npy or .pb tensor file.
Expected<Tensor> readTensorFile(const std::string &path);
/// Writes a .npy or .pb tensor file (to a temporary name, then renamed).
Status writeTensorFile(const std::string &path, const Tensor &tensor,
                       const std::string &name);

} // namespace kiln

#endif // KILN_TOOLS_TENSORFILES_H
