//===- TargetRegistry.cpp - The code generation backends, by name ---------===//
//
// This file implements the registry's one list: each backend is one line of
// allTargets() (a new backend is a new folder under targets/ plus one line
// there), looked up by name; registerTargetPasses makes each target's
// lowering passes available to kiln-opt.
//
//===----------------------------------------------------------------------===//

#include "targets/TargetRegistry.h"
#include "targets/cpu/CpuTarget.h"
#include "targets/cuda/CudaTarget.h"

#include <memory>

namespace kiln {

/// Every backend, built once.
static const std::vector<std::unique_ptr<Target>> &allTargets() {
  static const std::vector<std::unique_ptr<Target>> targets = [] {
    std::vector<std::unique_ptr<Target>> list;
    list.push_back(createCpuTarget());
    list.push_back(createCudaTarget());
    return list;
  }();
  return targets;
}

const Target *lookupTarget(llvm::StringRef name) {
  for (const std::unique_ptr<Target> &t : allTargets())
    if (t->name() == name)
      return t.get();
  return nullptr;
}

std::vector<std::string> targetNames() {
  std::vector<std::string> names;
  for (const std::unique_ptr<Target> &t : allTargets())
    names.push_back(t->name().str());
  return names;
}

std::string targetNameList() {
  std::string list;
  for (const std::string &name : targetNames())
    list += (list.empty() ? "" : ", ") + name;
  return list;
}

void registerTargetPasses() {
  mlir::registerPass(createLowerCpuPass);
  mlir::registerPass(createColumnReduceAsMatmulPass);
  mlir::registerPass(createLowerCudaPass);
  mlir::registerPass([] { return createFuseAttentionPass(); });
  mlir::registerPass(createFuseDepthwisePass);
  mlir::registerPass(createConvTransposeAsMatmulPass);
}

} // namespace kiln
