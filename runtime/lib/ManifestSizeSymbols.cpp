//===- ManifestSizeSymbols.cpp - The manifest's size symbols -------------===//
//
// This file implements the reader of a manifest's "size_symbols": each
// symbol's name and range, checked as untrusted input, and the check that
// the signature's "dims" use declared symbols only.
//
//===----------------------------------------------------------------------===//

#include "ManifestSizeSymbols.h"

#include "kiln/runtime/SymbolicDim.h"

namespace kiln {

using namespace manifest_json;

Status parseSizeSymbols(const Fields &fields, PackageManifest &m) {
  const Json *list = fields.find("size_symbols");
  if (list) {
    if (!list->is_array() || list->size() > 64)
      return Status::error("'size_symbols' must be an array of at most 64 "
                           "objects with name, min and max");
    for (const Json &e : *list) {
      if (!e.is_object())
        return Status::error("'size_symbols' must hold objects");
      SizeSymbol s;
      Fields f(e);
      const Json *name = f.find("name");
      if (!name || !name->is_string() ||
          !SymbolicDim::parse(name->get<std::string>()) ||
          SymbolicDim::parse(name->get<std::string>())->factors.size() != 1)
        return Status::error("'size_symbols': each needs a 'name' that is "
                             "an identifier");
      s.name = name->get<std::string>();
      KILN_RETURN_IF_ERROR(f.integer("min", s.min));
      KILN_RETURN_IF_ERROR(f.integer("max", s.max));
      if (s.min < 1 || s.min > s.max || s.max > (int64_t(1) << 40))
        return Status::error(strCat("'size_symbols': '", s.name,
                                    "' has the range ", s.min, "..", s.max,
                                    "; expected 1 <= min <= max <= 2^40"));
      for (const SizeSymbol &other : m.sizeSymbols)
        if (other.name == s.name)
          return Status::error("'size_symbols': '" + s.name +
                               "' appears twice");
      m.sizeSymbols.push_back(s);
    }
  }
  auto known = [&](const std::string &name) {
    for (const SizeSymbol &s : m.sizeSymbols)
      if (s.name == name)
        return true;
    return false;
  };
  for (const auto *values : {&m.inputs, &m.outputs})
    for (const ManifestValue &v : *values)
      for (const std::string &text : v.dims) {
        SymbolicDim dim = *SymbolicDim::parse(text); // parseValue checked it
        for (const auto &factor : dim.factors)
          if (!known(factor.first))
            return Status::error("signature value '" + v.name +
                                 "': its dims use '" + factor.first +
                                 "', which 'size_symbols' does not declare");
      }
  return Status::ok();
}

} // namespace kiln
