//===- HostCompiler.h - Builds a package's library -------------*- C++ -*-===//
//
// This file declares the one host-compiler run that builds a package's
// library (lib<name>.so), shared by every target: the flags every package
// needs, the target's own (sources, -fopenmp), the log kept as the manifest's
// warnings, and on failure a diagnostic with the log's head and the generated
// source line of the first error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HOSTCOMPILER_H
#define KILN_CODEGEN_HOSTCOMPILER_H

#include "codegen/Target.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

/// Compiles `sources` (file names in build.dir, with their text for error
/// reports) and build.dir/wrapper.cpp into build.dir/<build.library> with
/// build.cxx, adding `extraFlags`, exporting only build.symbolPrefix's
/// symbols; fills build.command, build.warnings and
/// build.hostSeconds. A diagnostic at `loc` on failure.
mlir::LogicalResult
runHostCompiler(mlir::Location loc, PackageBuild &build,
                const std::map<std::string, std::string> &sources,
                const std::vector<std::string> &extraFlags);

} // namespace kiln

#endif // KILN_CODEGEN_HOSTCOMPILER_H
