//===- kiln-opt.cpp - Run passes on kiln IR -------------------------------===//
//
// This file implements kiln-opt, MLIR's opt driver with the kiln, func and
// arith dialects and the generic passes Kiln relies on (canonicalize, cse,
// symbol-dce, inline). It reads and writes the textual IR, so lit tests can
// check parsing, printing, verification and passes. It also registers
// -test-kiln-infer, which re-creates every kiln op through createKilnOp (the
// tracer's entry point) and reports the inferred result types as remarks.
// LLVM's code-generation options are hidden from --help.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOpBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#ifdef KILN_HAVE_PASSES
#include "passes/Passes.h"
#include "targets/TargetRegistry.h"
#endif

namespace {
/// Re-creates each non-constant kiln op (and each op of an unregistered
/// dialect) through createKilnOp from its name, operands and attributes,
/// reports the inferred result types as a remark at the op and erases the
/// copy. Failures show the diagnostics createKilnOp emits.
struct TestKilnInferPass
    : public mlir::PassWrapper<TestKilnInferPass,
                               mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestKilnInferPass)

  llvm::StringRef getArgument() const final { return "test-kiln-infer"; }
  llvm::StringRef getDescription() const final {
    return "Report the result types createKilnOp infers for each kiln op";
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::Operation *> ops;
    getOperation().walk([&](mlir::Operation *op) {
      llvm::StringRef dialect = op->getName().getDialectNamespace();
      if ((dialect == "kiln" || !op->isRegistered()) &&
          !op->hasTrait<mlir::OpTrait::ConstantLike>())
        ops.push_back(op);
    });
    for (mlir::Operation *op : ops) {
      mlir::OpBuilder builder(op);
      mlir::FailureOr<mlir::Operation *> copy = kiln::createKilnOp(
          builder, op->getLoc(), op->getName().getStringRef(),
          op->getOperands(), op->getAttrs());
      if (failed(copy))
        continue;
      std::string types;
      llvm::raw_string_ostream os(types);
      llvm::interleaveComma((*copy)->getResultTypes(), os);
      op->emitRemark("inferred: ") << types;
      (*copy)->erase();
    }
  }
};
} // namespace

int main(int argc, char **argv) {
  // LLVM's own command-line options (code generation for AArch64, AMDGPU,
  // ...: hundreds of lines of --help that kiln-opt never uses) are
  // registered by static initializers before main. Hide them, so --help
  // shows the passes and MLIR's options; --help-hidden still lists them.
  for (auto &option : llvm::cl::getRegisteredOptions())
    if (option.getKey() != "help" && option.getKey() != "version")
      option.getValue()->setHiddenFlag(llvm::cl::Hidden);

  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  mlir::func::registerInlinerExtension(registry);

  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::registerInlinerPass();
  mlir::PassRegistration<TestKilnInferPass>();
#ifdef KILN_HAVE_PASSES
  kiln::registerKilnPasses();
  kiln::registerTargetPasses();
#endif

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv,
      "Kiln optimizer driver: reads, verifies, transforms and "
      "prints kiln IR\n",
      registry));
}
