//===- SymbolicDim.h - Sizes of packages compiled for ranges ----*- C++ -*-===//
//
// This file declares the size symbols of a package compiled for a range of
// sizes (`kiln compile --dim batch=1..64`, docs/dynamic-shapes.md) and
// SymbolicDim, a dimension written as a product of them: "batch",
// "4*batch", "batch*seq", "batch/2". The compiler writes them into the
// manifest and the generated code; the runtime reads them back to bind the
// symbols from the inputs' shapes and to size the outputs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SYMBOLICDIM_H
#define KILN_RUNTIME_SYMBOLICDIM_H

#include "kiln/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// A size symbol of a package (an ONNX dim_param such as "batch") and the
/// range of sizes the package serves.
struct SizeSymbol {
  std::string name;
  int64_t min = 1;
  int64_t max = 1;
};

/// A dimension as `num / den * s1^e1 * s2^e2 ...`: a positive rational
/// coefficient times powers (non-zero, possibly negative) of size symbols,
/// kept sorted by name. A dimension without factors is the constant
/// num / den (den 1 for real sizes).
struct SymbolicDim {
  int64_t num = 1;
  int64_t den = 1;
  std::vector<std::pair<std::string, int>> factors;

  /// The dimension that is the symbol `name`.
  static SymbolicDim symbol(const std::string &name);
  /// The constant `size`.
  static SymbolicDim constant(int64_t size);
  /// Reads the text form of str(); an error names what is wrong.
  static Expected<SymbolicDim> parse(const std::string &text);

  bool isConstant() const { return factors.empty(); }
  /// "batch", "4*batch", "batch*seq/2", "64".
  std::string str() const;
  /// The C++ expression of the size, with `cName(symbol)` for each symbol
  /// (int64_t arithmetic: the products first, then the divisions), e.g.
  /// "(4 * kiln_s_batch)".
  std::string cExpr() const;
  /// The size at `values` (one per symbol); an error when a symbol has no
  /// value or the size is not a whole positive number (a divisibility guard:
  /// "batch/2" needs an even batch).
  Expected<int64_t>
  evaluate(const std::map<std::string, int64_t> &values) const;

  bool operator==(const SymbolicDim &o) const {
    return num == o.num && den == o.den && factors == o.factors;
  }
};

/// The C identifier of a size symbol in generated code: "kiln_s_" and the
/// name with every character outside [A-Za-z0-9_] replaced by '_'.
std::string sizeSymbolCName(const std::string &name);

} // namespace kiln

#endif // KILN_RUNTIME_SYMBOLICDIM_H
