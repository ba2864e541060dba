//===- SignatureCheck.cpp - Checking named tensors against a signature ----===//
//
// This file implements the name checks shared by the reference executor and
// the package loader.
//
//===----------------------------------------------------------------------===//

#include "SignatureCheck.h"

#include <set>

namespace kiln {

const Tensor *findNamed(const NamedTensors &given, const std::string &name) {
  for (const auto &entry : given)
    if (entry.first == name)
      return &entry.second;
  return nullptr;
}

std::string joinNames(const std::vector<ValueSignature> &sigs) {
  std::string s;
  for (const auto &sig : sigs)
    s += strCat(s.empty() ? "" : ", ", "'", sig.name, "'");
  return s.empty() ? std::string("none") : s;
}

std::string signatureTypeString(const ValueSignature &sig) {
  if (sig.anyRank)
    return std::string(dtypeName(sig.dtype)) + "[...] (its rank is known at "
                                                "run time)";
  std::string s = std::string(dtypeName(sig.dtype)) + "[";
  for (size_t i = 0; i < sig.shape.size(); ++i) {
    if (i)
      s += ", ";
    if (sig.shape[i] >= 0)
      s += std::to_string(sig.shape[i]);
    else if (i < sig.dimNames.size() && !sig.dimNames[i].empty())
      s += sig.dimNames[i];
    else
      s += "?";
  }
  return s + "]";
}

Status checkNames(const std::vector<ValueSignature> &sigs,
                  const NamedTensors &given, const char *kind,
                  const char *owner, bool requireAll) {
  std::set<std::string> seen;
  for (const auto &entry : given) {
    bool known = false;
    for (const auto &sig : sigs)
      known |= sig.name == entry.first;
    if (!known)
      return Status::error(strCat("unknown ", kind, " '", entry.first,
                                  "' (the ", owner, "'s ", kind, "s are ",
                                  joinNames(sigs), ")"));
    if (!seen.insert(entry.first).second)
      return Status::error(
          strCat(kind, " '", entry.first, "' is given more than once"));
  }
  if (!requireAll)
    return Status::ok();
  std::string missing;
  int numMissing = 0;
  for (const auto &sig : sigs) {
    if (seen.count(sig.name))
      continue;
    missing += strCat(numMissing++ ? ", " : "", "'", sig.name, "' ",
                      signatureTypeString(sig));
  }
  if (numMissing)
    return Status::error(strCat("missing ", kind, numMissing > 1 ? "s " : " ",
                                missing, " (the ", owner, "'s ", kind, "s are ",
                                joinNames(sigs), ")"));
  return Status::ok();
}

} // namespace kiln
