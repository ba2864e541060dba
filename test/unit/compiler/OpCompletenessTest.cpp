//===- OpCompletenessTest.cpp - Every kiln op is complete -----------------===//
//
// This file implements the completeness test of the kiln dialect: it walks
// every registered kiln op and fails, naming the op and what it lacks, when
//   * an op that can appear in a graph has no reference kernel in
//     kiln::Dispatcher (runtime/kernels/, keyed by the op name without
//     "kiln."): the structural ops below are run by the executor or the
//     code generators themselves and are exempt;
//   * an op of the elementwise family (trait Kiln_Elementwise) has no entry
//     in the scalar expression printer (codegen/ExprPrinter.cpp), so it
//     could not be printed inside a fused kernel;
//   * an op has no row in docs/op-semantics.md (a table row, or a list item
//     or line naming it in backquotes before its " — " description).
// It also checks that the op families are disjoint. Nothing here counts
// the ops: adding one is adding it everywhere this test looks (see
// "Adding an op" in docs/architecture.md).
//
//===----------------------------------------------------------------------===//

#include "codegen/ExprPrinter.h"
#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"
#include "kiln/runtime/Dispatcher.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#ifndef KILN_OP_SEMANTICS_MD
#error "KILN_OP_SEMANTICS_MD must name docs/op-semantics.md"
#endif

using namespace mlir;

namespace {

/// Ops that are structure rather than computation: regions, their
/// terminator, constants the executor materializes, and library calls that
/// a target's lowering creates. The executor (if, loop, eager, constant) or
/// the code generators (fusion, yield, library_call) run them, so they have
/// no reference kernel; they still need a row in docs/op-semantics.md.
const llvm::StringSet<> &structuralOps() {
  static const llvm::StringSet<> ops = {
      "kiln.fusion", "kiln.yield",    "kiln.eager",       "kiln.if",
      "kiln.loop",   "kiln.constant", "kiln.library_call"};
  return ops;
}

/// The op names (without "kiln.") that docs/op-semantics.md documents: the
/// backquoted names in the first cell of a table row, and in a list item or
/// line that starts with a backquoted name, before its " — " description.
llvm::StringSet<> documentedOps(const std::string &path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  llvm::StringSet<> names;
  std::string line;
  while (std::getline(in, line)) {
    llvm::StringRef head(line);
    if (head.consume_front("|")) {
      head = head.split('|').first;
    } else if (head.consume_front("- `") || head.consume_front("`")) {
      head = llvm::StringRef(line).split(" — ").first;
    } else {
      continue;
    }
    // Each `name...` span: the identifier that opens it.
    while (true) {
      size_t open = head.find('`');
      if (open == llvm::StringRef::npos)
        break;
      head = head.drop_front(open + 1);
      size_t close = head.find('`');
      llvm::StringRef span = head.take_front(close);
      llvm::StringRef name = span.take_while([](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      });
      if (!name.empty())
        names.insert(name);
      if (close == llvm::StringRef::npos)
        break;
      head = head.drop_front(close + 1);
    }
  }
  return names;
}

} // namespace

TEST_CASE("every registered kiln op is complete", "[ir][ops]") {
  MLIRContext context;
  context.loadDialect<kiln::KilnDialect>();
  const llvm::StringSet<> documented = documentedOps(KILN_OP_SEMANTICS_MD);
  const kiln::Dispatcher &dispatcher = kiln::Dispatcher::global();

  size_t checked = 0;
  for (RegisteredOperationName op : context.getRegisteredOperations()) {
    if (op.getDialectNamespace() != "kiln")
      continue;
    ++checked;
    const std::string name = op.getStringRef().str();
    const std::string key = op.stripDialect().str();
    INFO(name);

    if (!structuralOps().contains(name) &&
        !dispatcher.hasOp(key, kiln::Device::CPU))
      FAIL_CHECK(name << " has no reference kernel: register \"" << key
                      << "\" in kiln::Dispatcher (runtime/kernels/)");

    if (op.hasTrait<kiln::OpTrait::Elementwise>() &&
        !kiln::codegen::hasScalarPrinterEntry(op))
      FAIL_CHECK(name << " is elementwise but has no scalar printer entry: "
                         "add a branch for it to printExpr in "
                         "codegen/ExprPrinter.cpp");

    if (!documented.contains(key))
      FAIL_CHECK(name << " has no row in docs/op-semantics.md: document `"
                      << key << "` there");

    int families = op.hasTrait<kiln::OpTrait::Elementwise>() +
                   op.hasTrait<kiln::OpTrait::Reduction>() +
                   op.hasTrait<kiln::OpTrait::View>() +
                   op.hasTrait<kiln::OpTrait::Library>();
    if (families > 1)
      FAIL_CHECK(name << " is in " << families
                      << " op families; an op is in at most one");
  }
  CHECK(checked > 0);
}

TEST_CASE("the op families are the traits of the ops", "[ir][ops]") {
  MLIRContext context;
  context.loadDialect<kiln::KilnDialect>();
  auto has = [&](StringRef name, auto trait) {
    std::optional<RegisteredOperationName> op =
        RegisteredOperationName::lookup(name, &context);
    REQUIRE(op.has_value());
    return op->hasTrait(trait);
  };
  TypeID elementwise = TypeID::get<kiln::OpTrait::Elementwise>();
  TypeID reduction = TypeID::get<kiln::OpTrait::Reduction>();
  TypeID view = TypeID::get<kiln::OpTrait::View>();
  TypeID library = TypeID::get<kiln::OpTrait::Library>();
  CHECK(has("kiln.add", elementwise));
  CHECK(has("kiln.equal", elementwise));
  CHECK(has("kiln.gelu", elementwise));
  CHECK(has("kiln.cast", elementwise));
  CHECK(has("kiln.where", elementwise));
  CHECK(has("kiln.reduce_sum", reduction));
  CHECK_FALSE(has("kiln.argmax", reduction));
  CHECK(has("kiln.reshape", view));
  CHECK(has("kiln.slice", view));
  CHECK_FALSE(has("kiln.concat", view));
  CHECK(has("kiln.matmul", library));
  CHECK(has("kiln.conv_transpose", library));
  CHECK_FALSE(has("kiln.softmax", elementwise));
}
