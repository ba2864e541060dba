//===- ManifestFields.h - Typed reads of JSON objects -------*- C++ -*-===//
//
// This file declares the typed access to JSON objects that the manifest
// reader (PackageManifestReader.cpp) is built on: Fields reads one object's
// keys (an absent key leaves the destination alone, a present key of the
// wrong type is an error naming it), parseList and parseObject read arrays
// and nested objects with a parse function, naming the element in errors.
// Header-only, internal to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_MANIFESTFIELDS_H
#define KILN_RUNTIME_LIB_MANIFESTFIELDS_H

#include "kiln/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace manifest_json {

using Json = nlohmann::ordered_json;

inline bool isCount(const Json &j) {
  return j.is_number_unsigned() ||
         (j.is_number_integer() && j.get<int64_t>() >= 0);
}

/// The members of one JSON object, read by key. An absent key leaves the
/// destination alone; a present key of the wrong type is an error naming
/// the key.
class Fields {
public:
  explicit Fields(const Json &object) : object_(object) {}

  const Json *find(const char *key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  Status string(const char *key, std::string &out) const {
    const Json *j = find(key);
    if (!j)
      return Status::ok();
    if (!j->is_string())
      return Status::error(strCat("'", key, "' must be a string"));
    out = j->get<std::string>();
    return Status::ok();
  }

  Status integer(const char *key, int64_t &out) const {
    const Json *j = find(key);
    if (!j)
      return Status::ok();
    if (!j->is_number_integer())
      return Status::error(strCat("'", key, "' must be an integer"));
    out = j->get<int64_t>();
    return Status::ok();
  }

  Status integer(const char *key, std::optional<int64_t> &out) const {
    if (!find(key))
      return Status::ok();
    int64_t value = 0;
    KILN_RETURN_IF_ERROR(integer(key, value));
    out = value;
    return Status::ok();
  }

  /// A non-negative integer.
  template <typename T> Status count(const char *key, T &out) const {
    const Json *j = find(key);
    if (!j)
      return Status::ok();
    if (!isCount(*j))
      return Status::error(
          strCat("'", key, "' must be a non-negative integer"));
    out = static_cast<T>(j->get<uint64_t>());
    return Status::ok();
  }

  Status count(const char *key, std::optional<int64_t> &out) const {
    if (!find(key))
      return Status::ok();
    int64_t value = 0;
    KILN_RETURN_IF_ERROR(count(key, value));
    out = value;
    return Status::ok();
  }

  Status number(const char *key, double &out) const {
    const Json *j = find(key);
    if (!j)
      return Status::ok();
    if (!j->is_number())
      return Status::error(strCat("'", key, "' must be a number"));
    out = j->get<double>();
    return Status::ok();
  }

  Status strings(const char *key, std::vector<std::string> &out) const {
    const Json *j = find(key);
    if (!j)
      return Status::ok();
    bool ok = j->is_array();
    for (size_t i = 0; ok && i < j->size(); ++i)
      ok = (*j)[i].is_string();
    if (!ok)
      return Status::error(strCat("'", key, "' must be an array of strings"));
    out = j->get<std::vector<std::string>>();
    return Status::ok();
  }

  /// An object-valued key: nullptr when absent, an error when not an
  /// object.
  Expected<const Json *> object(const char *key) const {
    const Json *j = find(key);
    if (j && !j->is_object())
      return Status::error(strCat("'", key, "' must be an object"));
    return j;
  }

private:
  const Json &object_;
};

/// Reads the array `key` of `fields`, each element with `parse(element,
/// item)` into `out`; an element's error names it as "KEY[i] ('name')"
/// (`prefix` + key, the name when `nameOf` gives one); an element that is
/// not an object is "expected `expected`".
template <typename T, typename Parse, typename NameOf>
Status parseList(const Fields &fields, const char *key,
                 const std::string &prefix, std::vector<T> &out, Parse parse,
                 NameOf nameOf, const char *expected = "an object") {
  const Json *list = fields.find(key);
  if (!list)
    return Status::ok();
  if (!list->is_array())
    return Status::error(strCat("'", prefix, key, "' must be an array"));
  out.clear();
  for (size_t i = 0; i < list->size(); ++i) {
    T item;
    const Json &element = (*list)[i];
    Status s = element.is_object()
                   ? parse(element, item)
                   : Status::error(strCat("expected ", expected));
    if (!s) {
      std::string label = strCat(prefix, key, "[", i, "]");
      if (!nameOf(item).empty())
        label += strCat(" ('", nameOf(item), "')");
      return s.withContext(label);
    }
    out.push_back(std::move(item));
  }
  return Status::ok();
}

/// Reads the object-valued `key` of `fields` with `parse`; errors start
/// with the key.
template <typename T, typename Parse>
Status parseObject(const Fields &fields, const char *key, T &out, Parse parse) {
  Expected<const Json *> j = fields.object(key);
  if (!j)
    return j.status();
  if (*j)
    return parse(**j, out).withContext(key);
  return Status::ok();
}

} // namespace manifest_json
} // namespace kiln

#endif // KILN_RUNTIME_LIB_MANIFESTFIELDS_H
