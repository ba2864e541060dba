//===- SymbolicDim.cpp - Sizes of packages compiled for ranges ------------===//
//
// This file implements SymbolicDim: its text form ("4*batch/2" style: a
// coefficient and symbols joined by '*' and '/'), its parser, which treats
// the text as untrusted manifest input, its C++ expression and its
// evaluation with the divisibility guard.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/SymbolicDim.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <numeric>

namespace kiln {

namespace {
/// Multiplies into `acc`; false on overflow.
bool mulChecked(int64_t &acc, int64_t by) {
  return !__builtin_mul_overflow(acc, by, &acc);
}

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
} // namespace

SymbolicDim SymbolicDim::symbol(const std::string &name) {
  SymbolicDim d;
  d.factors.push_back({name, 1});
  return d;
}

SymbolicDim SymbolicDim::constant(int64_t size) {
  SymbolicDim d;
  d.num = size;
  return d;
}

std::string SymbolicDim::str() const {
  std::string s;
  if (num != 1 || factors.empty())
    s = std::to_string(num);
  for (const auto &[name, e] : factors)
    for (int i = 0; i < e; ++i)
      s += (s.empty() ? "" : "*") + name;
  if (s.empty())
    s = "1";
  if (den != 1)
    s += "/" + std::to_string(den);
  for (const auto &[name, e] : factors)
    for (int i = 0; i < -e; ++i)
      s += "/" + name;
  return s;
}

std::string SymbolicDim::cExpr() const {
  std::string s;
  int terms = 0;
  auto term = [&](const std::string &t) { s += (terms++ ? " * " : "") + t; };
  if (num != 1 || factors.empty())
    term(std::to_string(num));
  for (const auto &[name, e] : factors)
    for (int i = 0; i < e; ++i)
      term(sizeSymbolCName(name));
  if (!terms)
    term("1");
  if (den != 1)
    s += " / " + std::to_string(den), ++terms;
  for (const auto &[name, e] : factors)
    for (int i = 0; i < -e; ++i)
      s += " / " + sizeSymbolCName(name), ++terms;
  return terms > 1 ? "(" + s + ")" : s;
}

Expected<SymbolicDim> SymbolicDim::parse(const std::string &text) {
  auto bad = [&](const std::string &why) {
    return Status::error("size expression '" + text + "': " + why +
                         " (expected a product such as 4*batch or "
                         "batch*seq/2)");
  };
  if (text.empty() || text.size() > 256)
    return bad(text.empty() ? "empty" : "too long");
  SymbolicDim d;
  std::map<std::string, int> exps;
  size_t i = 0;
  bool divide = false;
  while (true) {
    if (i >= text.size())
      return bad("a term is missing");
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      int64_t v = 0;
      while (i < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[i])))
        if (!mulChecked(v, 10) ||
            __builtin_add_overflow(v, text[i++] - '0', &v))
          return bad("a number is too large");
      if (v == 0)
        return bad("a factor is 0");
      if (!mulChecked(divide ? d.den : d.num, v))
        return bad("the coefficient is too large");
    } else if (isIdentStart(text[i])) {
      size_t start = i;
      while (i < text.size() &&
             (isIdentStart(text[i]) ||
              std::isdigit(static_cast<unsigned char>(text[i]))))
        ++i;
      int &e = exps[text.substr(start, i - start)];
      e += divide ? -1 : 1;
      if (e > 8 || e < -8)
        return bad("a symbol's power is too large");
    } else {
      return bad(std::string("unexpected character '") + text[i] + "'");
    }
    if (i == text.size())
      break;
    if (text[i] != '*' && text[i] != '/')
      return bad(std::string("unexpected character '") + text[i] + "'");
    divide = text[i++] == '/';
  }
  int64_t g = std::gcd(d.num, d.den);
  d.num /= g;
  d.den /= g;
  for (const auto &[name, e] : exps)
    if (e != 0)
      d.factors.push_back({name, e});
  return d;
}

Expected<int64_t>
SymbolicDim::evaluate(const std::map<std::string, int64_t> &values) const {
  int64_t top = num, bottom = den;
  for (const auto &[name, e] : factors) {
    auto it = values.find(name);
    if (it == values.end())
      return Status::error("size symbol '" + name + "' has no value");
    if (it->second <= 0)
      return Status::error("size symbol '" + name + "' is " +
                           std::to_string(it->second) +
                           "; sizes must be positive");
    for (int i = 0; i < (e > 0 ? e : -e); ++i)
      if (!mulChecked(e > 0 ? top : bottom, it->second))
        return Status::error("the size " + str() + " overflows");
  }
  if (top % bottom != 0)
    return Status::error("the size " + str() + " is not a whole number (" +
                         std::to_string(top) + "/" + std::to_string(bottom) +
                         "): the sizes break a divisibility the package "
                         "assumes");
  return top / bottom;
}

std::string sizeSymbolCName(const std::string &name) {
  std::string s = "kiln_s_";
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return s;
}

} // namespace kiln
