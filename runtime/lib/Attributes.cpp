//===- Attributes.cpp - Op attributes seen by runtime kernels -------------===//
//
// This file implements the typed getters of Attributes. Integer attributes
// also answer float queries (and integer lists float-list queries), and
// floats answer integer queries by truncation, so kernels need not care
// whether the compiler chose I64Attr or F32Attr for a number.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Attributes.h"

namespace kiln {

int64_t Attributes::getInt(const std::string &name, int64_t dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return *i;
  if (auto *f = std::get_if<double>(&it->second))
    return static_cast<int64_t>(*f);
  if (auto *t = std::get_if<Tensor>(&it->second))
    if (t->defined() && t->numel() == 1)
      return t->getInt(0);
  return dflt;
}

double Attributes::getFloat(const std::string &name, double dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *f = std::get_if<double>(&it->second))
    return *f;
  if (auto *i = std::get_if<int64_t>(&it->second))
    return static_cast<double>(*i);
  if (auto *t = std::get_if<Tensor>(&it->second))
    if (t->defined() && t->numel() == 1)
      return t->getDouble(0);
  return dflt;
}

std::string Attributes::getString(const std::string &name,
                                  const std::string &dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *s = std::get_if<std::string>(&it->second))
    return *s;
  return dflt;
}

std::vector<int64_t> Attributes::getInts(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return {};
  if (auto *v = std::get_if<std::vector<int64_t>>(&it->second))
    return *v;
  if (auto *v = std::get_if<std::vector<double>>(&it->second))
    return std::vector<int64_t>(v->begin(), v->end());
  if (auto *i = std::get_if<int64_t>(&it->second))
    return {*i};
  if (auto *t = std::get_if<Tensor>(&it->second))
    if (t->defined())
      return t->toIntVector();
  return {};
}

std::vector<double> Attributes::getFloats(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return {};
  if (auto *v = std::get_if<std::vector<double>>(&it->second))
    return *v;
  if (auto *v = std::get_if<std::vector<int64_t>>(&it->second))
    return std::vector<double>(v->begin(), v->end());
  if (auto *f = std::get_if<double>(&it->second))
    return {*f};
  if (auto *t = std::get_if<Tensor>(&it->second))
    if (t->defined())
      return t->toDoubleVector();
  return {};
}

DType Attributes::getDType(const std::string &name, DType dflt) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return dflt;
  if (auto *d = std::get_if<DType>(&it->second))
    return *d;
  if (auto *s = std::get_if<std::string>(&it->second))
    if (auto parsed = parseDType(*s))
      return *parsed;
  return dflt;
}

Tensor Attributes::getTensor(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return Tensor();
  if (auto *t = std::get_if<Tensor>(&it->second))
    return *t;
  return Tensor();
}

} // namespace kiln
