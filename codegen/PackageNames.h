//===- PackageNames.h - The names a package exports -------------*- C++ -*-===//
//
// This file declares the names of one compiled package: its library
// (lib<name>.so), its header (<name>.h) and the prefix of every C symbol it
// exports (<name>_create, <name>_run, <name>_<kernel>, ...). The name comes
// from `kiln compile --name` or the model file's stem, so any number of
// packages link into one program without their symbols colliding.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_PACKAGENAMES_H
#define KILN_CODEGEN_PACKAGENAMES_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kiln {

/// The names of one package's library, header and exported symbols.
struct PackageNames {
  /// A C identifier, unique per package in a program ("tiny_mlp").
  std::string name;

  /// "libtiny_mlp.so".
  std::string library() const { return "lib" + name + ".so"; }
  /// "tiny_mlp.h".
  std::string header() const { return name + ".h"; }
  /// The exported C symbol of `entry`: "tiny_mlp_run".
  std::string symbol(llvm::StringRef entry) const {
    return name + "_" + entry.str();
  }
  /// The names of the package of one graph of a program or training
  /// package: "tiny_mlp_graph_0" (unique per graph, so the graphs' libraries
  /// could share a process image).
  PackageNames forGraph(llvm::StringRef graph) const;
};

/// Why `name` cannot name a package (a C identifier of at most 64
/// characters, not "kiln" nor starting with "kiln_", which the runtime
/// uses), or nothing when it can.
std::optional<std::string> invalidPackageName(llvm::StringRef name);

/// The default package name of a model file: its stem made an identifier
/// ("resnet-50.onnx" -> "resnet_50"), "m_"-prefixed when the stem is
/// reserved or does not start with a letter, "model" when empty.
std::string defaultPackageName(llvm::StringRef modelPath);

} // namespace kiln

#endif // KILN_CODEGEN_PACKAGENAMES_H
