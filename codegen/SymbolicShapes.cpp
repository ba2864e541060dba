//===- SymbolicShapes.cpp - Symbolic sizes in lowered graphs --------------===//
//
// This file implements the accessors of SymbolicShapes.h: reading
// kiln.size_symbols, kiln.sym_dims and kiln.sym_loops back from a lowered
// graph.
//
//===----------------------------------------------------------------------===//

#include "codegen/SymbolicShapes.h"
#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cassert>
#include <set>

using namespace mlir;

namespace kiln {

namespace {
std::vector<std::string> strings(ArrayAttr array) {
  std::vector<std::string> out;
  bool any = false;
  for (Attribute a : array) {
    auto s = dyn_cast<StringAttr>(a);
    out.push_back(s ? s.getValue().str() : "");
    any |= !out.back().empty();
  }
  return any ? out : std::vector<std::string>{};
}

} // namespace

SymbolicDim parseSizeExpr(const std::string &text) {
  Expected<SymbolicDim> d = SymbolicDim::parse(text);
  assert(d && "a kiln.sym_* attribute holds a malformed size expression");
  return d ? d.take() : SymbolicDim{};
}

std::vector<SizeSymbol> sizeSymbolsOf(func::FuncOp graph) {
  std::vector<SizeSymbol> symbols;
  auto array = graph->getAttrOfType<ArrayAttr>(kSizeSymbolsAttr);
  if (!array)
    return symbols;
  for (Attribute a : array) {
    auto dict = dyn_cast<DictionaryAttr>(a);
    if (!dict)
      continue;
    SizeSymbol s;
    if (auto name = dict.getAs<StringAttr>("name"))
      s.name = name.getValue().str();
    if (auto min = dict.getAs<IntegerAttr>("min"))
      s.min = min.getInt();
    if (auto max = dict.getAs<IntegerAttr>("max"))
      s.max = max.getInt();
    symbols.push_back(std::move(s));
  }
  return symbols;
}

std::vector<std::string> symbolicDimsOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func || arg.getOwner() != &func.getBody().front())
      return {};
    auto dims =
        func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), kSymDimsAttr);
    return dims ? strings(dims) : std::vector<std::string>{};
  }
  auto result = cast<OpResult>(v);
  auto perResult = result.getOwner()->getAttrOfType<ArrayAttr>(kSymDimsAttr);
  if (!perResult || result.getResultNumber() >= perResult.size())
    return {};
  auto dims = dyn_cast<ArrayAttr>(perResult[result.getResultNumber()]);
  return dims ? strings(dims) : std::vector<std::string>{};
}

std::vector<std::string> dimCExprs(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  std::vector<std::string> symbolic = symbolicDimsOf(v);
  std::vector<std::string> out;
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    out.push_back(d < symbolic.size() && !symbolic[d].empty()
                      ? parseSizeExpr(symbolic[d]).cExpr()
                      : std::to_string(size));
  return out;
}

std::vector<std::string> symbolicNumbersOf(Operation *op, StringRef attr) {
  auto numbers = op->getAttrOfType<ArrayAttr>(attr);
  return numbers ? strings(numbers) : std::vector<std::string>{};
}

std::string paramCExpr(Operation *call, StringRef name) {
  if (auto symbolic = call->getAttrOfType<DictionaryAttr>(kSymParamsAttr))
    if (auto text = symbolic.getAs<StringAttr>(name))
      return parseSizeExpr(text.getValue().str()).cExpr();
  auto params = call->getAttrOfType<DictionaryAttr>("params");
  assert(params && params.getAs<IntegerAttr>(name) &&
         "a library call without that integer param");
  return std::to_string(params.getAs<IntegerAttr>(name).getInt());
}

bool hasRunTimeSizes(Operation *op) {
  for (StringRef attr :
       {kSymDimsAttr, kSymLoopsAttr, kSymIndexAttr, kSymCountsAttr,
        kSymParamsAttr})
    if (op->hasAttr(attr))
      return true;
  for (Value v : op->getOperands())
    for (const std::string &d : symbolicDimsOf(v))
      if (!d.empty())
        return true;
  return false;
}

std::vector<std::string> kernelSizeSymbols(Operation *op) {
  std::set<std::string> names;
  // A kernel printed for a single op (not from kernel IR) takes the symbols
  // of its operands' and results' dims.
  if (!isa<FusionOp>(op) && op->hasAttr(kKernelAttr)) {
    auto add = [&](Value v) {
      for (const std::string &text : symbolicDimsOf(v))
        if (!text.empty())
          for (const auto &factor : parseSizeExpr(text).factors)
            names.insert(factor.first);
    };
    llvm::for_each(op->getOperands(), add);
    llvm::for_each(op->getResults(), add);
  }
  for (StringRef attr : {kSymLoopsAttr, kSymIndexAttr, kSymCountsAttr})
    for (const std::string &text : symbolicNumbersOf(op, attr))
      if (!text.empty()) {
        SymbolicDim dim = parseSizeExpr(text);
        for (const auto &factor : dim.factors)
          names.insert(factor.first);
      }
  return {names.begin(), names.end()};
}

void applySymbolicNumbers(Operation *op, codegen::Kernel &kernel) {
  std::vector<std::string> loops = symbolicNumbersOf(op, kSymLoopsAttr);
  for (size_t v = 0; v < loops.size() && v < kernel.vars.size(); ++v)
    if (!loops[v].empty())
      kernel.vars[v].symbolicExtent = parseSizeExpr(loops[v]).cExpr();
  std::vector<std::string> index = symbolicNumbersOf(op, kSymIndexAttr);
  size_t slot = 0;
  if (!index.empty())
    codegen::visitIndexNumbers(kernel, [&](int64_t, std::string &text) {
      assert(slot < index.size() && "kiln.sym_index is out of step");
      if (slot < index.size() && !index[slot].empty())
        text = parseSizeExpr(index[slot]).cExpr();
      ++slot;
    });
  std::vector<std::string> counts = symbolicNumbersOf(op, kSymCountsAttr);
  size_t r = 0;
  if (!counts.empty())
    codegen::visitReductions(kernel, [&](codegen::Reduction &red) {
      if (r < counts.size() && !counts[r].empty())
        red.symbolicCount = parseSizeExpr(counts[r]).cExpr();
      ++r;
    });
  for (const std::string &symbol : kernelSizeSymbols(op))
    kernel.sizeParams.push_back(sizeSymbolCName(symbol));
}

} // namespace kiln
