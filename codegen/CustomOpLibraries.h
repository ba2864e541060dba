//===- CustomOpLibraries.h - Custom-op libraries of a package --*- C++ -*-===//
//
// This file declares how a package records the custom-op libraries
// (kiln/custom_op.h) its kiln.custom_call ops need: each is copied into the
// package's custom_ops/ folder and listed in manifest.json
// ("custom_op_libraries"), which the runtime loads with the package.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUSTOMOPLIBRARIES_H
#define KILN_CODEGEN_CUSTOMOPLIBRARIES_H

#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace kiln {

/// Copies the library of every kiln.custom_call under `root` (each file
/// once) into `dir`/custom_ops/ and appends its path relative to `dir` to
/// `recorded`. Fails with a diagnostic at `loc` when a file cannot be
/// copied, or when two different libraries have the same file name.
mlir::LogicalResult packageCustomOpLibraries(mlir::Location loc,
                                             mlir::Operation *root,
                                             const std::string &dir,
                                             std::vector<std::string> &recorded);

} // namespace kiln

#endif // KILN_CODEGEN_CUSTOMOPLIBRARIES_H
