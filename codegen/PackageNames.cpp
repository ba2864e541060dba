//===- PackageNames.cpp - The names a package exports ---------------------===//
//
// This file implements the checks and the default of package names
// (PackageNames.h).
//
//===----------------------------------------------------------------------===//

#include "codegen/PackageNames.h"

#include "llvm/Support/Path.h"

#include <cctype>

namespace kiln {

/// True for names the runtime's own symbols use.
static bool isReservedName(llvm::StringRef name) {
  return name == "kiln" || name.starts_with("kiln_");
}

std::optional<std::string> invalidPackageName(llvm::StringRef name) {
  if (name.empty())
    return std::string("it is empty");
  if (name.size() > 64)
    return std::string("it is longer than 64 characters");
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_')
    return std::string("it does not start with a letter or '_'");
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return std::string("it holds '") + c +
             "' (a C identifier has letters, digits and '_')";
  if (isReservedName(name))
    return std::string("'kiln' and names starting with 'kiln_' are the "
                       "runtime's");
  return std::nullopt;
}

PackageNames PackageNames::forGraph(llvm::StringRef graph) const {
  std::string suffix;
  for (char c : graph)
    suffix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return PackageNames{symbol(suffix)};
}

std::string defaultPackageName(llvm::StringRef modelPath) {
  std::string name;
  for (char c : llvm::sys::path::stem(modelPath))
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty())
    return "model";
  if (!std::isalpha(static_cast<unsigned char>(name[0])) ||
      isReservedName(name))
    name = "m_" + name;
  if (name.size() > 64)
    name.resize(64);
  return name;
}

} // namespace kiln
