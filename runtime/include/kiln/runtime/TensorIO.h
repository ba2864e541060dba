//===- TensorIO.h - Reading and writing .npy files -------------*- C++ -*-===//
//
// This file declares the NumPy .npy reader and writer of the runtime (format
// versions 1.0-3.0, little-endian, C order; Fortran order is transposed on
// read). Errors name the file and what is wrong with it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TENSORIO_H
#define KILN_RUNTIME_TENSORIO_H

#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <string>

namespace kiln {

/// Reads a .npy file.
Expected<Tensor> readNpy(const std::string &path);
/// Parses .npy bytes; `what` names the source in messages.
Expected<Tensor> parseNpy(const std::string &bytes, const std::string &what);
/// Writes a .npy file (written to a temporary name, then renamed).
Status writeNpy(const std::string &path, const Tensor &tensor);

} // namespace kiln

#endif // KILN_RUNTIME_TENSORIO_H
