//===- SignatureCheck.h - Checking named tensors against a signature -*- C++
//-*-//
//
// This file declares the checks shared by the reference executor and the
// package loader when a caller hands tensors by name: finding a tensor by
// name, listing the expected names, and rejecting unknown, repeated and
// (optionally) missing names with messages that list what is expected.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_SIGNATURECHECK_H
#define KILN_RUNTIME_LIB_SIGNATURECHECK_H

#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"

#include <string>
#include <vector>

namespace kiln {

/// The tensor named `name` in `given`, or nullptr.
const Tensor *findNamed(const NamedTensors &given, const std::string &name);

/// "'x', 'y'" (or "none").
std::string joinNames(const std::vector<ValueSignature> &sigs);

/// "f32[batch, 3]": the signature's type, dynamic dims by name ("?" when
/// unnamed).
std::string signatureTypeString(const ValueSignature &sig);

/// Checks the names of `given` against `sigs`: none unknown, none repeated
/// and, with `requireAll`, none missing (all missing ones are listed).
/// `kind` is "input" or "weight"; `owner` is "model" or "program".
Status checkNames(const std::vector<ValueSignature> &sigs,
                  const NamedTensors &given, const char *kind,
                  const char *owner, bool requireAll);

} // namespace kiln

#endif // KILN_RUNTIME_LIB_SIGNATURECHECK_H
