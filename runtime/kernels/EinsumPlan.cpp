//===- EinsumPlan.cpp - The contraction plan of kiln.einsum ---------------===//
//
// This file implements the parsing of an einsum equation against its
// operands' shapes (EinsumPlan.h): terms of letters with at most one `...`,
// implicit outputs (the ellipsis, then the letters used once, in ASCII
// order), broadcasting of size-1 dims, and errors naming the term.
//
//===----------------------------------------------------------------------===//

#include "EinsumPlan.h"

#include "KernelUtils.h"

#include <algorithm>

namespace kiln {
namespace einsum {

namespace {

/// A parsed einsum term: letters and at most one ellipsis position.
struct Term {
  std::vector<int> letters;
  int ellipsisAt = -1; // Index into letters where `...` stands, or -1.
};

Expected<Term> parseTerm(const std::string &s, const std::string &what) {
  Term t;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.letters.push_back(c);
      ++i;
    } else if (s.compare(i, 3, "...") == 0) {
      if (t.ellipsisAt >= 0)
        return Status::error(
            strCat("einsum: ", what, " '", s, "' has more than one '...'"));
      t.ellipsisAt = static_cast<int>(t.letters.size());
      i += 3;
    } else {
      return Status::error(strCat("einsum: unexpected character '", c, "' in ",
                                  what, " '", s, "'"));
    }
  }
  return t;
}

} // namespace

Expected<EinsumPlan> planEinsum(std::string eq,
                                const std::vector<Shape> &inputs) {
  eq.erase(std::remove_if(eq.begin(), eq.end(),
                          [](char c) { return c == ' ' || c == '\t'; }),
           eq.end());
  std::string lhs = eq, rhs;
  size_t arrow = eq.find("->");
  bool explicitOut = arrow != std::string::npos;
  if (explicitOut) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
  }
  std::vector<std::string> termStrs;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    termStrs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (termStrs.size() != inputs.size())
    return Status::error(strCat("einsum: equation '", eq, "' has ",
                                termStrs.size(), " input terms but ",
                                inputs.size(), " operands were given"));
  EinsumPlan p;
  std::vector<Term> terms;
  int maxEll = 0;
  for (size_t i = 0; i < termStrs.size(); ++i) {
    auto t = parseTerm(termStrs[i], strCat("input term ", i));
    if (!t)
      return t.status();
    int64_t rank = static_cast<int64_t>(inputs[i].size()),
            nl = t->letters.size();
    if (t->ellipsisAt < 0 ? rank != nl : rank < nl)
      return Status::error(strCat("einsum: term '", termStrs[i],
                                  "' does not match operand ", i, " of shape ",
                                  shapeToString(inputs[i])));
    maxEll = std::max<int>(maxEll, static_cast<int>(rank - nl));
    terms.push_back(t.take());
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term &t = terms[i];
    int ell = static_cast<int>(static_cast<int64_t>(inputs[i].size()) -
                               t.letters.size());
    std::vector<int> labels;
    for (size_t j = 0; j <= t.letters.size(); ++j) {
      if (static_cast<int>(j) == t.ellipsisAt)
        for (int e = 0; e < ell; ++e)
          labels.push_back(kEllipsisBase + maxEll - ell + e);
      if (j < t.letters.size())
        labels.push_back(t.letters[j]);
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      int64_t size = inputs[i][d];
      auto it = p.sizes.find(labels[d]);
      if (it == p.sizes.end() || it->second == 1)
        p.sizes[labels[d]] = size;
      else if (size != it->second && size != 1)
        return Status::error(strCat("einsum: dimension ", d, " of operand ", i,
                                    " has size ", size, " but its label has ",
                                    "size ", it->second, " elsewhere"));
    }
    p.inputLabels.push_back(std::move(labels));
  }
  if (explicitOut) {
    auto t = parseTerm(rhs, "output term");
    if (!t)
      return t.status();
    for (size_t j = 0; j <= t->letters.size(); ++j) {
      if (static_cast<int>(j) == t->ellipsisAt)
        for (int e = 0; e < maxEll; ++e)
          p.outLabels.push_back(kEllipsisBase + e);
      if (j < t->letters.size()) {
        int l = t->letters[j];
        if (!p.sizes.count(l))
          return Status::error(strCat("einsum: output label '", char(l),
                                      "' appears in no input term"));
        if (std::count(p.outLabels.begin(), p.outLabels.end(), l))
          return Status::error(
              strCat("einsum: output label '", char(l), "' appears twice"));
        p.outLabels.push_back(l);
      }
    }
  } else {
    for (int e = 0; e < maxEll; ++e)
      p.outLabels.push_back(kEllipsisBase + e);
    std::map<int, int> counts;
    for (const Term &t : terms)
      for (int l : t.letters)
        ++counts[l];
    for (auto &[l, c] : counts)
      if (c == 1)
        p.outLabels.push_back(l);
  }
  return p;
}

EinsumLoops planLoops(const EinsumPlan &p, const std::vector<Shape> &inputs) {
  EinsumLoops loops;
  loops.order = p.outLabels;
  for (const auto &[label, size] : p.sizes)
    if (std::find(loops.order.begin(), loops.order.end(), label) ==
        loops.order.end())
      loops.order.push_back(label);
  loops.numOutput = p.outLabels.size();
  for (int label : loops.order)
    loops.sizes.push_back(p.sizes.at(label));
  loops.strides.assign(inputs.size(),
                       std::vector<int64_t>(loops.order.size(), 0));
  for (size_t i = 0; i < inputs.size(); ++i) {
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(inputs[i].size()) - 1; d >= 0;
         --d) {
      if (inputs[i][d] != 1) { // A size-1 dim broadcasts.
        size_t pos = std::find(loops.order.begin(), loops.order.end(),
                               p.inputLabels[i][d]) -
                     loops.order.begin();
        loops.strides[i][pos] += stride;
      }
      stride *= inputs[i][d];
    }
  }
  return loops;
}

} // namespace einsum
} // namespace kiln
