//===- CustomOpLibraries.cpp - Custom-op libraries of a package -----------===//
//
// This file implements the copy of the custom-op libraries a package needs
// into its custom_ops/ folder, so that the package carries them to the
// machine that runs it (the manifest lists them; kiln::Model loads them).
//
//===----------------------------------------------------------------------===//

#include "codegen/CustomOpLibraries.h"

#include "ir/KilnOps.h"

#include <filesystem>
#include <map>

namespace kiln {

mlir::LogicalResult packageCustomOpLibraries(mlir::Location loc,
                                             mlir::Operation *root,
                                             const std::string &dir,
                                             std::vector<std::string> &recorded) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> byName; // file name -> source path
  mlir::LogicalResult result = mlir::success();
  root->walk([&](CustomCallOp op) {
    std::string source = op.getLibrary().str();
    std::string name = fs::path(source).filename().string();
    auto [it, inserted] = byName.emplace(name, source);
    if (!inserted) {
      if (fs::equivalent(it->second, source))
        return;
      result = mlir::emitError(loc)
               << "custom-op libraries '" << it->second << "' and '" << source
               << "' have the same file name; rename one";
      return;
    }
    std::error_code ec;
    fs::create_directories(fs::path(dir) / "custom_ops", ec);
    if (!ec)
      fs::copy_file(source, fs::path(dir) / "custom_ops" / name,
                    fs::copy_options::overwrite_existing, ec);
    if (ec) {
      result = mlir::emitError(loc) << "cannot copy custom-op library '"
                                    << source << "' into the package: "
                                    << ec.message();
      return;
    }
    recorded.push_back("custom_ops/" + name);
  });
  return result;
}

} // namespace kiln
