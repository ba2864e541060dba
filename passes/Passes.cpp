//===- Passes.cpp - Registration of Kiln's graph passes -------------------===//
//
// This file implements registerKilnPasses(): one registration per pass, so
// kiln-opt can run each by name.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/FusionPasses.h"
#include "passes/GraphBreaks.h"
#include "passes/LoweringPasses.h"
#include "passes/TrainingPasses.h"

namespace kiln {

void registerKilnPasses() {
  mlir::registerPass(createFoldConstantsPass);
  mlir::registerPass(createSimplifyPass);
  mlir::registerPass(createDecomposePass);
  mlir::registerPass(createLayoutCleanupPass);
  mlir::registerPass(createSplitReductionsPass);
  mlir::registerPass([] { return createSplitRecurrentPass(); });
  mlir::registerPass(createFoldEmbeddingProjectionPass);
  mlir::registerPass([] { return createChannelsLastPass(); });
  mlir::registerPass([] { return createAutocastPass(); });
  mlir::registerPass([] { return createFuseOpsPass(); });
  mlir::registerPass(createMarkLoadTimeStepsPass);
  mlir::registerPass([] { return createMarkInPlacePass(); });
  registerGraphBreakPasses();
  registerTrainingPasses();
}

} // namespace kiln
